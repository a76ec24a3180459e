"""LangGraph TTL for ``ChromaMemoryStore``: sweeping expired items, once or periodically."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_lifecycle_memory.store import chroma as C

logger = logging.getLogger(__name__)


class TTLSweeper:
    """Mixin: item-level TTL (``PutOp.ttl`` minutes, ``TTLConfig``)."""

    _sweeper: threading.Thread | None = None
    _sweeper_stop: threading.Event

    if TYPE_CHECKING:
        ttl_config: Any

        def _namespaces(self, generation: int | None = None) -> list[tuple[tuple[str, ...], Any]]: ...
        def _guard(self, fn: Callable[[], Any]) -> Any: ...
        def _bump(self, namespace: tuple[str, ...], changes: list[tuple[str, Any]] | None = None) -> None: ...

    def sweep_ttl(self) -> int:
        """Delete every item whose LangGraph TTL has passed; returns how many."""
        now = time.time()
        removed = 0
        for ns, col in self._namespaces():
            got = self._guard(lambda col=col: col.get(where={C.SYS_EXPIRES: {"$lte": now}}, include=["metadatas"]))
            if got["ids"]:
                extra = [p for i, m in zip(got["ids"], got["metadatas"] or []) for p in C.part_ids(i, m)]
                self._guard(lambda col=col, ids=got["ids"] + extra: col.delete(ids=ids))
                removed += len(got["ids"])
                self._bump(ns, [(i, None) for i in got["ids"]])
        return removed

    async def asweep_ttl(self) -> int:
        """Async :meth:`sweep_ttl`."""
        return await asyncio.to_thread(self.sweep_ttl)

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> threading.Thread:
        """Sweep expired items periodically in a daemon thread (``TTLConfig.sweep_interval_minutes``)."""
        interval = sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        if self._sweeper and self._sweeper.is_alive():
            return self._sweeper
        self._sweeper_stop.clear()

        def loop() -> None:
            while not self._sweeper_stop.wait(float(interval) * 60):
                try:
                    self.sweep_ttl()
                except Exception:
                    logger.exception("TTL sweep failed; will retry at the next interval")

        self._sweeper = threading.Thread(target=loop, name="lifecycle-memory-ttl-sweeper", daemon=True)
        self._sweeper.start()
        return self._sweeper

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; returns whether it stopped."""
        self._sweeper_stop.set()
        if self._sweeper is None:
            return True
        self._sweeper.join(timeout)
        return not self._sweeper.is_alive()
