"""Topic cards of newly written attributes, embedded in the background after the writes.

A namespace that gains thousands of distinct attributes makes its next search embed one
card phrase per new attribute (``routing``): 0.4-0.8 s for 50k attributes with the cheap
hashing embedder of ``benchmarks/scale.py``, about a minute with the offline default encoder.
The search needs every one of those cards (``best_route`` compares all of them), so the
work cannot be skipped, only done earlier: the store tells this warmer of each write
(``store.write_hooks``), and one background thread embeds the new attributes' cards
through the router's own ``missing``/``install`` path, so the in-process cards and the
card files (``_card_vectors``) are the ones the search would have made. A search that
finds the warmer busy with its embedder waits for it instead of embedding the same
phrases a second time.

Writes that bring only a few new attributes are left to the search, which embeds them in
one call as before: names are gathered per embedder and handed over ``min_batch`` at a time.
Off with ``$LIFECYCLE_MEMORY_WARM_CARDS=0`` or ``CardWarmer.enabled = False``.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["CardWarmer"]

_log = logging.getLogger(__name__)


class CardWarmer:
    """Embeds routing cards of written attributes in one background thread (``warm(embeddings, names)``)."""

    enabled: bool = True
    min_batch: int = 256
    """New attribute names gathered per embedder before they are embedded in the background."""
    max_embedders: int = 16
    """Embedders whose gathered names are kept (the oldest are dropped)."""

    def __init__(self, warm: Callable[[Any, list[str]], None]) -> None:
        self._warm = warm
        self._cond = threading.Condition()
        self._pending: dict[int, tuple[Any, dict[str, None]]] = {}
        self._jobs: collections.deque[tuple[Any, list[str]]] = collections.deque()
        self._busy: dict[int, int] = {}
        """Jobs queued or running per embedder (by ``id``; the job holds the embedder alive)."""
        self._thread: threading.Thread | None = None

    def active(self) -> bool:
        """Whether writes are warmed (the class switch and ``$LIFECYCLE_MEMORY_WARM_CARDS``)."""
        flag = os.environ.get("LIFECYCLE_MEMORY_WARM_CARDS", "1").strip().lower()
        return self.enabled and flag not in ("0", "off", "false", "no")

    def on_write(self, store: Any, namespace: tuple[str, ...], changes: Sequence[tuple[str, Any]]) -> None:
        """The store's write listener: gather the written attribute names; queue them by ``min_batch``."""
        embeddings = getattr(store, "embeddings", None)
        if embeddings is None or not self.active():
            return
        names = [a for _, v in changes if isinstance(v, dict) and isinstance(a := v.get("attribute"), str) and a]
        if not names:
            return
        with self._cond:
            key = id(embeddings)
            held = self._pending.pop(key, None)
            if held is None or held[0] is not embeddings:
                held = (embeddings, {})
            held[1].update(dict.fromkeys(names))
            if len(held[1]) >= self.min_batch:
                self._queue(embeddings, list(held[1]))
                return
            self._pending[key] = held  # re-inserted: the most recent embedder last
            while len(self._pending) > self.max_embedders:
                self._pending.pop(next(iter(self._pending)))

    def flush(self, embeddings: Any = None) -> None:
        """Queue the names gathered so far (of ``embeddings``, or of every embedder), however few."""
        with self._cond:
            keys = list(self._pending) if embeddings is None else [id(embeddings)]
            for key in keys:
                held = self._pending.pop(key, None)
                if held is not None and held[1]:
                    self._queue(held[0], list(held[1]))

    def _queue(self, embeddings: Any, names: list[str]) -> None:  # the lock is held
        self._jobs.append((embeddings, names))
        self._busy[id(embeddings)] = self._busy.get(id(embeddings), 0) + 1
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="lifecycle-card-warmer", daemon=True)
            self._thread.start()
        self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._jobs:
                    self._thread = None  # the next job starts a new thread
                    return
                embeddings, names = self._jobs.popleft()
            try:
                self._warm(embeddings, names)
            except Exception:  # the search embeds what is still missing: nothing is lost
                _log.debug("warming %d routing cards failed", len(names), exc_info=True)
            finally:
                with self._cond:
                    key = id(embeddings)
                    self._busy[key] -= 1
                    if not self._busy[key]:
                        del self._busy[key]
                    self._cond.notify_all()

    def busy(self, embeddings: Any) -> bool:
        """Whether cards of ``embeddings`` are queued or being embedded."""
        return bool(self._busy.get(id(embeddings)))

    def wait(self, embeddings: Any = None, timeout: float | None = None) -> bool:
        """Block until no cards of ``embeddings`` (default: of any embedder) are queued or being embedded.

        Returns ``False`` if ``timeout`` (seconds) passed first.
        """
        if threading.current_thread() is self._thread:
            return not self.busy(embeddings)  # the warmer never waits for itself
        with self._cond:
            if embeddings is None:
                return self._cond.wait_for(lambda: not self._busy, timeout)
            return self._cond.wait_for(lambda: not self._busy.get(id(embeddings)), timeout)

    async def await_idle(self, embeddings: Any = None, timeout: float | None = None) -> bool:
        """Async :meth:`wait` (in a worker thread: the event loop keeps running)."""
        return await asyncio.to_thread(self.wait, embeddings, timeout)
