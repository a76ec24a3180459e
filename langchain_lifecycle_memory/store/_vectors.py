"""Items with several vectors, as LangGraph's stores index them (pure of LangGraph ops; I/O via the store).

An item indexed by several texts (``IndexConfig(fields=["title", "body"])``, or every
element of ``messages[*].content``) keeps its first vector on its own row and one extra
row per further text (``chroma.part_id``; metadata ``_of`` = the item's key, no
document). A search ranks items by their best row, the way ``InMemoryStore`` max-pools,
so a long item whose one line answers the query is not diluted by its other lines.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from langchain_lifecycle_memory.store import chroma as C

if TYPE_CHECKING:
    from langchain_lifecycle_memory.store.chroma_store import ChromaMemoryStore

__all__ = ["best_items", "has_live_items", "unindexed_items"]

Accept = Callable[[dict[str, Any], "str | None"], bool]


def best_items(
    store: ChromaMemoryStore, col: Any, vector: list[float], need: int, accept: Accept
) -> list[tuple[float, str, dict[str, Any]]]:
    """``need`` (or every) accepted items of ``col`` as ``(best similarity, document, metadata)``, best first."""
    fetch = need

    def candidate(meta: dict[str, Any], doc: str | None) -> bool:
        return bool(meta.get(C.SYS_INDEXED)) and (C.SYS_PART_OF in meta or accept(meta, doc))

    while True:
        rows = store.query_rows(col, vector, fetch, candidate)
        best: dict[str, tuple[float, str | None, dict[str, Any] | None]] = {}
        for _, doc, meta, score in rows:  # nearest first: an item's first row is its best
            key = str(meta.get(C.SYS_PART_OF) or meta[C.SYS_KEY])
            if key not in best:
                best[key] = (score, None, None) if C.SYS_PART_OF in meta else (score, doc, meta)
        missing = [k for k, (_, _, m) in best.items() if m is None]
        if missing:  # matched by an extra row only: read the item itself
            got = store._guard(partial(col.get, ids=missing, include=["documents", "metadatas"]))
            found = dict(zip(got["ids"], zip(got["documents"], got["metadatas"])))
            for key in missing:
                doc, meta = found.get(key, (None, None))
                if meta is None or not accept(meta, doc):
                    del best[key]
                else:
                    best[key] = (best[key][0], doc, meta)
        if len(best) >= need or len(rows) < fetch:
            items = [(s, d, m) for s, d, m in best.values() if m is not None and d is not None]
            return sorted(items, key=lambda r: -r[0])
        fetch *= 2


def unindexed_items(store: ChromaMemoryStore, col: Any, accept: Accept) -> list[tuple[str, dict[str, Any]]]:
    """Accepted items stored without a vector (``index=False``, or no text at the indexed paths)."""
    got = store._guard(lambda: col.get(where={C.SYS_INDEXED: False}, include=["documents", "metadatas"]))
    return [(d, m) for d, m in zip(got["documents"], got["metadatas"]) if C.SYS_PART_OF not in m and accept(m, d)]


def has_live_items(store: ChromaMemoryStore, col: Any, omit_expired: bool, now: float) -> bool:
    """Whether ``col`` holds an item (an unexpired one when ``omit_expired``)."""
    total = int(store._guard(col.count))
    if total == 0 or not omit_expired:
        return total > 0
    expired = store._guard(lambda: col.get(where={C.SYS_EXPIRES: {"$lte": now}}, include=["metadatas"]))
    dead = sum(1 + len(C.part_ids(i, m)) for i, m in zip(expired["ids"], expired["metadatas"] or []))
    return total > dead
