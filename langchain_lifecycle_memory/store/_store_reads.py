"""The store's reads as LangGraph ``BaseStore`` ops: get by id, search, list namespaces, nearest rows.

A mixin of :class:`~langchain_lifecycle_memory.store.chroma_store.ChromaMemoryStore`
(collections, guard, TTL refresh and embeddings come from the store).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langgraph.store.base import GetOp, Item, ListNamespacesOp, SearchItem, SearchOp

from langchain_lifecycle_memory.store import chroma as C
from langchain_lifecycle_memory.store._bucket_query import rows_in_bucket
from langchain_lifecycle_memory.store._vectors import best_items, has_live_items, unindexed_items

__all__ = ["StoreReads"]


class StoreReads:
    """``_get``, ``_search``, ``_list_namespaces`` and ``query_rows`` of the store."""

    if TYPE_CHECKING:  # what the store provides
        embeddings: Any
        index_enabled: bool
        ttl_config: Any

        def _col(self, namespace: tuple[str, ...]) -> Any: ...
        def _guard(self, fn: Callable[[], Any]) -> Any: ...
        def _refresh(self, col: Any, rows: list[tuple[str, dict[str, Any]]], refresh: bool | None) -> None: ...
        def _namespaces(self, generation: int | None = None, prefix: tuple[str, ...] = ()) -> list[tuple[Any, Any]]: ...

    def _omit_expired(self) -> bool:
        return bool((self.ttl_config or {}).get("omit_expired", False))

    def _get(self, op: GetOp) -> Item | None:
        col = self._col(tuple(op.namespace))
        if col is None:
            return None
        got = self._guard(lambda: col.get(ids=[op.key], include=["documents", "metadatas"]))
        if not got["ids"]:
            return None
        meta = got["metadatas"][0]
        if self._omit_expired() and C.is_expired(meta, time.time()):
            return None
        self._refresh(col, [(op.key, meta)], op.refresh_ttl)
        return C.row_to_item(tuple(op.namespace), got["documents"][0], meta)

    def _rows(self, col: Any) -> list[tuple[str, dict[str, Any]]]:
        got = self._guard(lambda: col.get(include=["documents", "metadatas"]))
        return [(d, m) for d, m in zip(got["documents"], got["metadatas"]) if C.SYS_PART_OF not in m]

    def query_rows(
        self,
        col: Any,
        vector: list[float],
        need: int,
        accept: Callable[[dict[str, Any], str | None], bool],
        where: dict[str, Any] | None = None,
        *,
        with_documents: bool = True,
    ) -> list[tuple[str, str | None, dict[str, Any], float]]:
        """Nearest rows ``(id, document, metadata, similarity)`` of ``col`` that pass ``accept``.

        Over-fetches until ``need`` rows pass. No ``where`` on the first try (filters cost
        4-17x a plain query); the pre-filter ``where`` is used once over-fetching shows
        that most candidates are being rejected. ``with_documents=False`` leaves the JSON
        bodies out (``accept`` then sees ``None``): fetching them is most of a query's cost.
        """
        if need <= 0:
            return []
        fetch = max(need * 2, 20)
        use_where = None
        include = ["documents", "metadatas", "distances"] if with_documents else ["metadatas", "distances"]
        # A namespace that fills most of a shared bucket: one unfiltered bucket query, when it holds enough.
        first = rows_in_bucket(self, col, vector, fetch, include)
        while True:
            if first is not None:
                res, exhausted = first
                first = None
            else:
                res = self._guard(
                    lambda n=fetch, w=use_where: col.query(
                        query_embeddings=[vector], n_results=n, where=w, include=include
                    )
                )
                exhausted = len(res["ids"][0]) < fetch
            ids, metas, dists = res["ids"][0], res["metadatas"][0], res["distances"][0]
            docs = res["documents"][0] if with_documents else [None] * len(ids)
            rows = [
                (i, doc, meta, 1.0 - float(dist))
                for i, doc, meta, dist in zip(ids, docs, metas, dists)
                if accept(meta, doc)
            ]
            if len(rows) >= need or exhausted:
                return rows
            if where is not None and use_where is None:
                use_where = where
            else:
                fetch *= 4

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        cols = self._namespaces(prefix=prefix)
        now = time.time()
        omit = self._omit_expired()
        need = op.offset + op.limit
        scored: list[tuple[float | None, float, tuple[str, ...], str, dict[str, Any]]] = []
        vector = self.embeddings.embed_query(op.query) if (op.query and self.index_enabled) else None

        def accept(meta: dict[str, Any], doc: str | None) -> bool:
            if omit and C.is_expired(meta, now):
                return False
            return not op.filter or C.matches_filter(json.loads(doc or "{}"), op.filter)

        for ns, col in cols:
            if vector is not None:
                best = best_items(self, col, vector, need, accept)
                scored.extend((s, m[C.SYS_UPDATED], ns, d, m) for s, d, m in best)
            else:
                scored.extend((None, m[C.SYS_UPDATED], ns, d, m) for d, m in self._rows(col) if accept(m, d))
        if vector is not None:
            scored.sort(key=lambda r: r[0] or 0.0, reverse=True)
            if len(scored) < need:  # as InMemoryStore: items without a vector fill the page, unscored
                rest = [(None, m[C.SYS_UPDATED], n, d, m) for n, c in cols for d, m in unindexed_items(self, c, accept)]
                scored.extend(sorted(rest, key=lambda r: r[1], reverse=True))
        else:
            scored.sort(key=lambda r: r[1], reverse=True)
        page = scored[op.offset : op.offset + op.limit]
        for ns, col in cols:
            self._refresh(col, [(m[C.SYS_KEY], m) for _, _, n, _, m in page if n == ns], op.refresh_ttl)
        return [C.row_to_search_item(ns, d, m, s) for s, _, ns, d, m in page]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found: set[tuple[str, ...]] = set()
        omit, now = self._omit_expired(), time.time()
        for ns, col in self._namespaces():
            if C.namespace_matches(op.match_conditions, ns) and has_live_items(self, col, omit, now):
                found.add(ns[: op.max_depth] if op.max_depth is not None else ns)
        return sorted(found)[op.offset : op.offset + op.limit]
