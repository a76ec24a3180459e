"""A big namespace in a shared bucket, searched without Chroma's tenant filter.

Chroma's ``where``-filtered query costs time in the bucket's and the matching rows: one
50k-record namespace in a bucket took ~180-290 ms per dense query, against ~0.5 ms for
the same query unfiltered, and a 6k-row namespace of a 60k-row bucket 20-35 ms against
3-5 ms. ``nearest_in_bucket`` asks the bucket unfiltered for enough neighbours to hold
``n`` of the namespace's rows (``n`` x bucket rows / namespace rows, plus a margin) and
keeps only those (``Scoped.nearest_own`` drops other namespaces' rows by their id prefix),
when that fetch is small enough to beat the filter (``MAX_UNFILTERED_FETCH``); the
filtered query stays the answer whenever the unfiltered one falls short.

The row counts come from an embedded store's SQLite file, or from Chroma's API on any
other client (a ``chroma run`` server, Chroma Cloud), where they are reused longer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from langchain_lifecycle_memory.store._handles import Handle
from langchain_lifecycle_memory.store._scoped import Scoped
from langchain_lifecycle_memory.store._sqlite_read import count_rows

__all__ = [
    "BUCKET_NAMESPACE_ROWS",
    "BUCKET_RECOUNT_S",
    "MAX_UNFILTERED_FETCH",
    "SERVER_RECOUNT_S",
    "nearest_in_bucket",
    "rows_in_bucket",
]

MAX_UNFILTERED_FETCH = 1500
"""The most rows an unfiltered bucket query fetches instead of the tenant-filtered one.

Measured on a 60k-row bucket (``python benchmarks/bucket_filter.py``, 60 neighbours, p50 ms),
embedded: unfiltered 766 rows 2.7, 1,516 rows 4.9, 2,516 rows 7.9, 7,516 rows 21.0, against
15-56 filtered; a ``chroma run`` server (``--server``): 6.8, 7.5, 10.5, 28.7 against 16-55.
So a namespace that wants 60 neighbours is searched unfiltered from about 5 % of its bucket."""
BUCKET_NAMESPACE_ROWS = 1000
"""...and only a namespace of at least this many rows (a small namespace's filtered query is fast)."""
BUCKET_RECOUNT_S = 5.0
"""How long the row counts that choose between the two queries are reused (embedded: a file read)."""
SERVER_RECOUNT_S = 30.0
"""The same on other clients, where counting a namespace is a Chroma call as dear as a filtered query."""


def _counts(store: Any, view: Scoped) -> tuple[int, int] | None:
    """``(rows of the namespace, rows of its bucket)``, or ``None`` (unknown)."""
    path = getattr(store, "_local_db", None)
    if path:
        return count_rows(path, str(view.id), view.tenant)
    try:  # a server or cloud client: the bucket's count is cheap, the namespace's a filtered ``get``
        total = int(store._guard(view._col.count))
        if total < BUCKET_NAMESPACE_ROWS:
            return (0, total)
        # A small namespace is found small by one bounded id lookup; only a big one is counted in full.
        some = store._guard(lambda: view.get(include=[], limit=BUCKET_NAMESPACE_ROWS))["ids"]
        return (len(some) if len(some) < BUCKET_NAMESPACE_ROWS else int(store._guard(view.count))), total
    except Exception:  # the counts only steer the choice; unknown means the filtered query
        return None


def _shared_bucket(store: Any, col: Any, n: int) -> tuple[Scoped, int] | None:
    """``(view, rows to fetch unfiltered)`` when an unfiltered bucket query pays, else ``None``."""
    while isinstance(col, Handle):
        col = col._col
    if not isinstance(col, Scoped):
        return None
    # The counts only steer the choice (an unfiltered answer is used only when it holds
    # enough rows of the namespace or the whole bucket), so they are recounted every few
    # seconds and after an unfiltered query fell short, not on every write.
    cache: dict[Any, Any] = store.__dict__.setdefault("_bucket_shares", {})
    key, now = (col.tenant, str(col.id)), time.monotonic()
    hit = cache.get(key)
    ttl = BUCKET_RECOUNT_S if getattr(store, "_local_db", None) else SERVER_RECOUNT_S
    if hit is None or now - hit[0] > ttl:
        if len(cache) >= 1024:
            cache.pop(next(iter(cache)))
        hit = cache[key] = (now, _counts(store, col))
    counts = hit[1]
    if counts is None or counts[0] < BUCKET_NAMESPACE_ROWS:
        return None
    fetch = _fetch(n, counts[0], counts[1])
    return (col, fetch) if fetch <= max(MAX_UNFILTERED_FETCH, n) else None


def _fetch(n: int, own_rows: int, total: int) -> int:
    return n if own_rows >= total else min(total, int(n * total / own_rows * 1.25) + 16)


def _recount(store: Any, view: Scoped) -> None:
    store.__dict__.get("_bucket_shares", {}).pop((view.tenant, str(view.id)), None)


def nearest_in_bucket(store: Any, col: Any, embedding: Sequence[float], n: int) -> list[tuple[str, float]] | None:
    """A big namespace's nearest rows from an unfiltered query of its bucket (``None``: use the filter).

    Chroma's tenant-filtered query costs time in the rows that match (at 50k rows:
    ~270 ms, against ~0.5 ms unfiltered). When the namespace's share of its bucket is
    large enough that its ``n`` nearest lie among the bucket's nearest ``n / share`` rows
    (plus a margin) and that fetch is at most ``MAX_UNFILTERED_FETCH``, those are fetched
    unfiltered and the namespace's own kept; too few of them and the filtered query runs
    after all.
    """
    shared = _shared_bucket(store, col, n)
    if shared is None:
        return None
    view, fetch = shared
    try:
        found, exhausted = store._guard(lambda: view.nearest_own(embedding, fetch))
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
    shared = _shared_bucket(store, col, need)
    if shared is None:
        return None
    view, fetch = shared
    try:
        return store._guard(lambda: view.query_own(vector, fetch, include))
    except Exception:  # the filtered query is always right
        _recount(store, view)
        return None
