"""The store's reads as LangGraph ``BaseStore`` ops (get, search, list namespaces) and LangGraph TTL.

``search`` hides archived, pending and expired records unless the filter asks for a ``status``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langgraph.store.base import GetOp, Item, ListNamespacesOp, SearchItem, SearchOp

from langchain_lifecycle_memory.store import chroma as C

if TYPE_CHECKING:
    from langchain_lifecycle_memory.store._buckets import Buckets, Scoped
    from langchain_lifecycle_memory.store._client import StoreClient

__all__ = ["ItemReads", "item_of", "item_value", "lifecycle_hidden"]

logger = logging.getLogger(__name__)
_LIVE = ("active",)


def item_value(value: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    """The value a row reads back as: what was put (a record made from another tool's item keeps it)."""
    if metadata.get(C.SYS_RECORD):
        original = (value.get("metadata") or {}).get("item")
        if isinstance(original, dict):
            return original
    return value


def lifecycle_hidden(value: dict[str, Any], metadata: dict[str, Any], now: float) -> bool:
    """Whether a memory record is not current: archived, pending, or past its deadline."""
    if not metadata.get(C.SYS_RECORD):
        return False
    if value.get("status", "active") not in _LIVE:
        return True
    deadline = metadata.get(C.TIME_PREFIX + "expires_at")
    return deadline is not None and float(deadline) <= now


def item_of(
    ns: tuple[str, ...], document: str, metadata: dict[str, Any], score: float | None = None, *, search: bool = False
) -> Item:
    """A stored row as a LangGraph ``Item`` (a ``SearchItem`` for a search, with its score or ``None``)."""
    value = item_value(json.loads(document), metadata)
    created, updated = C.from_ts(metadata[C.SYS_CREATED]), C.from_ts(metadata[C.SYS_UPDATED])
    key = str(metadata[C.SYS_KEY])
    if not search:
        return Item(value=value, key=key, namespace=ns, created_at=created, updated_at=updated)
    return SearchItem(namespace=ns, key=key, value=value, created_at=created, updated_at=updated, score=score)


Accept = Callable[[str, dict[str, Any]], bool]


class ItemReads:
    """``_get``, ``_search``, ``_list_namespaces`` and LangGraph TTL of the store."""

    if TYPE_CHECKING:
        embeddings: Any
        index_enabled: bool
        ttl_config: Any
        _client: StoreClient
        _buckets: Buckets
        _sweeper: threading.Thread | None
        _sweeper_stop: threading.Event

        def _view(self, namespace: tuple[str, ...], *, create: bool = False) -> Scoped | None: ...

    def _omit_expired(self) -> bool:
        return bool((self.ttl_config or {}).get("omit_expired", False))

    def _get(self, op: GetOp) -> Item | None:
        ns = tuple(op.namespace)
        view = self._view(ns)
        if view is None:
            return None
        got = self._client(lambda: view.get(ids=[op.key], include=["documents", "metadatas"]))
        if not got["ids"]:
            return None
        meta = got["metadatas"][0]
        if self._omit_expired() and C.is_expired(meta, time.time()):
            return None
        self._refresh(view, [meta], op.refresh_ttl)
        return item_of(ns, got["documents"][0], meta)

    def _accept(self, op: SearchOp) -> Accept:
        now, omit = time.time(), self._omit_expired()
        wants_status = "status" in (op.filter or {})

        def accept(document: str, meta: dict[str, Any]) -> bool:
            if omit and C.is_expired(meta, now):
                return False
            value = json.loads(document)
            if not wants_status and lifecycle_hidden(value, meta, now):
                return False
            if not op.filter:
                return True
            # An item that became a record reads back as it was put, and filters on its record's fields too
            # ({"status": "archived"}: what replaced it) where it has no field of that name itself.
            original = item_value(value, meta)
            return C.matches_filter(original if original is value else {**value, **original}, op.filter)

        return accept

    def _search(self, op: SearchOp) -> list[SearchItem]:
        accept, need = self._accept(op), op.offset + op.limit
        vector = self.embeddings.embed_query(op.query) if (op.query and self.index_enabled) else None
        views = [(ns, v) for ns in self._buckets.namespaces(tuple(op.namespace_prefix)) if (v := self._view(ns))]
        scored: list[tuple[float | None, float, tuple[str, ...], str, dict[str, Any]]] = []
        if vector is not None:
            for ns, view in views:
                scored.extend((s, m[C.SYS_UPDATED], ns, d, m) for s, d, m in self._best(view, vector, need, accept))
            scored.sort(key=lambda r: -(r[0] or 0.0))
        if vector is None or len(scored) < need:  # unscored items fill the page, newest first (InMemoryStore: as put)
            seen = {(r[2], r[4][C.SYS_KEY]) for r in scored}
            rest = [
                (None, m[C.SYS_UPDATED], ns, d, m)
                for ns, view in views
                for d, m in self._unscored(view, accept, indexed_too=vector is None)
                if (ns, m[C.SYS_KEY]) not in seen
            ]
            scored.extend(sorted(rest, key=lambda r: r[1], reverse=True))
        page = scored[op.offset : op.offset + op.limit]
        for ns, view in views:
            self._refresh(view, [m for _, _, n, _, m in page if n == ns], op.refresh_ttl)
        return [item_of(ns, d, m, s, search=True) for s, _, ns, d, m in page]  # type: ignore[misc]

    def _best(
        self, view: Scoped, vector: list[float], need: int, accept: Accept
    ) -> list[tuple[float, str, dict[str, Any]]]:
        """``need`` (or every) accepted items of the view, by their best row's similarity, best first."""
        fetch = max(need * 2, 20)
        while True:
            res = self._client(
                lambda n=fetch: view.query(
                    query_embeddings=[vector],
                    n_results=n,
                    where={C.SYS_INDEXED: True},
                    include=["metadatas", "distances"],
                )
            )
            ids, metas, dists = res["ids"][0], res["metadatas"][0], res["distances"][0]
            best: dict[str, float] = {}
            for meta, dist in zip(metas, dists):  # nearest first: an item's first row is its best
                best.setdefault(str(meta.get(C.SYS_PART_OF) or meta[C.SYS_KEY]), 1.0 - float(dist))
            if not best:  # nothing of the namespace has a vector (every item put with ``index=False``)
                return []
            got = self._client(lambda keys=list(best): view.get(ids=keys, include=["documents", "metadatas"]))
            items = [
                (best[m[C.SYS_KEY]], d, m)
                for d, m in zip(got["documents"], got["metadatas"])
                if d is not None and m is not None and accept(d, m)
            ]
            if len(items) >= need or len(ids) < fetch:
                return sorted(items, key=lambda r: -r[0])
            fetch *= 4

    def _unscored(self, view: Scoped, accept: Accept, *, indexed_too: bool) -> list[tuple[str, dict[str, Any]]]:
        """Accepted items with no vector (every item when ``indexed_too``)."""
        where = None if indexed_too else {C.SYS_INDEXED: False}
        got = self._client(lambda: view.get(where=where, include=["documents", "metadatas"]))
        return [
            (d, m)
            for d, m in zip(got["documents"], got["metadatas"])
            if d is not None and C.SYS_PART_OF not in m and accept(d, m)
        ]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found: set[tuple[str, ...]] = set()
        now = time.time()
        for ns in self._buckets.namespaces():
            if not C.namespace_matches(op.match_conditions, ns):
                continue
            if self._omit_expired():  # only namespaces with a live item
                view = self._view(ns)
                metas = self._client(lambda v=view: v.get(include=["metadatas"]))["metadatas"] if view else []
                if not any(C.SYS_PART_OF not in m and not C.is_expired(m, now) for m in metas or []):
                    continue
            found.add(ns[: op.max_depth] if op.max_depth is not None else ns)
        return sorted(found)[op.offset : op.offset + op.limit]

    # ------------------------------------------------------------------ LangGraph TTL
    def _refresh(self, view: Scoped, metas: list[dict[str, Any]], refresh: bool | None) -> None:
        wanted = (self.ttl_config or {}).get("refresh_on_read", True) if refresh is None else refresh
        if not wanted:
            return
        live = [m for m in metas if m.get(C.SYS_TTL) is not None]
        if live:
            now = time.time()
            ids = [str(m[C.SYS_KEY]) for m in live]
            new = [{C.SYS_EXPIRES: now + float(m[C.SYS_TTL]) * 60} for m in live]
            with self._client.writing():
                self._client(lambda: view.update(ids=ids, metadatas=new))

    def sweep_ttl(self) -> int:
        """Delete every item whose LangGraph TTL has passed; returns how many."""
        now, removed = time.time(), 0
        with self._client.session():
            namespaces = self._buckets.namespaces()
        for ns in namespaces:
            with self._client.session():
                view = self._view(ns)
                got = view and self._client(
                    lambda v=view: v.get(where={C.SYS_EXPIRES: {"$lte": now}}, include=["metadatas"])
                )
            if got and got["ids"]:
                self.delete_keys(ns, got["ids"])  # type: ignore[attr-defined]
                removed += len(got["ids"])
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
