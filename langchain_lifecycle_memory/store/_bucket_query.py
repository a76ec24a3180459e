"""A namespace that fills most of its shared bucket, searched without Chroma's tenant filter.

Chroma's ``where``-filtered query costs time in the rows that match the filter: one
50k-record namespace in a bucket took ~180-290 ms per dense query, against ~0.5 ms for
the same query unfiltered. ``nearest_in_bucket`` asks the bucket unfiltered for enough
neighbours to hold ``n`` of the namespace's rows and keeps only those (``Scoped.nearest_own``
drops other namespaces' rows by their id prefix); the filtered query stays the answer
whenever that falls short.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from langchain_lifecycle_memory.store._handles import Handle
from langchain_lifecycle_memory.store._layout import Scoped
from langchain_lifecycle_memory.store._sqlite_read import count_rows

__all__ = ["BUCKET_NAMESPACE_ROWS", "BUCKET_RECOUNT_S", "BUCKET_SHARE", "nearest_in_bucket", "rows_in_bucket"]

BUCKET_SHARE = 0.25
"""A namespace with at least this share of its bucket's rows is searched unfiltered (see ``nearest_in_bucket``)."""
BUCKET_NAMESPACE_ROWS = 1000
"""...and at least this many rows (a small namespace's filtered query is fast)."""
BUCKET_RECOUNT_S = 5.0
"""How long the row counts that choose between the two queries are reused."""


def _shared_bucket(store: Any, col: Any) -> tuple[Scoped, int, int] | None:
    """``(view, namespace rows, bucket rows)`` when an unfiltered bucket query pays, else ``None``."""
    path = getattr(store, "_local_db", None)
    while isinstance(col, Handle):
        col = col._col
    if not path or not isinstance(col, Scoped):
        return None
    # The counts only steer the choice (an unfiltered answer is used only when it holds
    # enough rows of the namespace or the whole bucket), so they are recounted every few
    # seconds and after an unfiltered query fell short, not on every write.
    cache: dict[Any, Any] = store.__dict__.setdefault("_bucket_shares", {})
    key, now = (col.tenant, str(col.id)), time.monotonic()
    hit = cache.get(key)
    if hit is None or now - hit[0] > BUCKET_RECOUNT_S:
        if len(cache) >= 1024:
            cache.pop(next(iter(cache)))
        hit = cache[key] = (now, count_rows(path, str(col.id), col.tenant))
    counts = hit[1]
    if counts is None or counts[0] < BUCKET_NAMESPACE_ROWS or counts[0] < BUCKET_SHARE * counts[1]:
        return None
    return col, counts[0], counts[1]


def _fetch(n: int, own_rows: int, total: int) -> int:
    return n if own_rows >= total else min(total, int(n * total / own_rows * 1.25) + 16)


def _recount(store: Any, view: Scoped) -> None:
    store.__dict__.get("_bucket_shares", {}).pop((view.tenant, str(view.id)), None)


def nearest_in_bucket(store: Any, col: Any, embedding: Sequence[float], n: int) -> list[tuple[str, float]] | None:
    """A big namespace's nearest rows from an unfiltered query of its bucket (``None``: use the filter).

    Chroma's tenant-filtered query costs time in the rows that match (at 50k rows:
    ~270 ms, against ~0.5 ms unfiltered). When the namespace holds at least
    ``BUCKET_SHARE`` of its bucket (counted in the embedded store's SQLite file), the
    bucket's nearest ``n / share`` rows (plus a margin) are fetched unfiltered and the
    namespace's own kept; too few of them and the filtered query runs after all.
    """
    shared = _shared_bucket(store, col)
    if shared is None:
        return None
    view, own_rows, total = shared
    try:
        found, exhausted = store._guard(lambda: view.nearest_own(embedding, _fetch(n, own_rows, total)))
    except Exception:  # the filtered query below is always right
        return None
    if len(found) >= n or exhausted:
        return found[:n]
    _recount(store, view)
    return None


def rows_in_bucket(
    store: Any, col: Any, vector: Sequence[float], need: int, include: list[str]
) -> tuple[dict[str, Any], bool] | None:
    """A big namespace's ``query`` results for one vector, from an unfiltered bucket query.

    Returns them with whether the bucket ran out, or ``None`` to use the tenant-filtered
    query (see :func:`nearest_in_bucket`).
    """
    shared = _shared_bucket(store, col)
    if shared is None:
        return None
    view, own_rows, total = shared
    try:
        return store._guard(lambda: view.query_own(vector, _fetch(need, own_rows, total), include))
    except Exception:  # the filtered query is always right
        _recount(store, view)
        return None
