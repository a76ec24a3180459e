"""The dense channel of a search: hit positions and their best cosines (pure but for the I/O it asks for)."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np

__all__ = ["dense_hits", "neighbours_to_ask"]


def neighbours_to_ask(store: Any, snapshot: Any, eligible: np.ndarray, *, dense_k: int, full: bool) -> int | None:
    """Neighbours per query vector that a plain search asks the store's id-only query for.

    Over-fetched so that archived/expired neighbours don't crowd the top: enough for
    ``dense_k`` eligible ones (up to twice as many). ``None`` where no such query runs:
    ``explain`` (``full``), a small namespace (its vectors are in the snapshot), a store
    without ``nearest_ids``.
    """
    if full or snapshot.dense is not None or not hasattr(store, "nearest_ids"):
        return None
    return _asked(snapshot, eligible, dense_k)


def _asked(snapshot: Any, eligible: np.ndarray, dense_k: int) -> int:
    ineligible = len(eligible) - int(np.count_nonzero(eligible))
    return min(len(snapshot.position), dense_k + min(dense_k, ineligible)) or 1


def dense_hits(
    store: Any,
    ns: tuple[str, ...],
    snapshot: Any,
    eligible: np.ndarray,
    vectors: list[list[float]],
    offsets: list[float],
    search: dict[str, Any],
    *,
    dense_k: int,
    full: bool,
    request: Any,
    started: list[Any] | None = None,
    join: Callable[[Any], Any] | None = None,
) -> Generator[Any, Any, tuple[dict[int, float], list[int]]]:
    """``(position -> best cosine over the query vectors, the dense_k best eligible positions)``.

    A generator of the retriever's pipeline: it yields ``request(target, sync, async, args[,
    kwargs])`` for the store's dense queries. A plain search asks for ids and cosines only
    (the snapshot holds every record and its eligibility); ``explain`` (``full``) asks
    ``search_records`` with ``search``'s filters. ``started``: the id-only queries the
    caller already began, one per vector (``neighbours_to_ask`` neighbours each), collected
    with ``join(handle)``.
    """
    position = snapshot.position
    cosines: dict[int, float] = {}  # record position -> best cosine over the queries
    for i, (vector, offset) in enumerate(zip(vectors, offsets, strict=True)):
        if full and snapshot.dense is not None:
            # explain of a small namespace: every record's cosine from the vectors the plain search
            # scores, not from Chroma's index (which can leave a row out; see complete_nearest)
            for pos, score in _eligible(snapshot.dense.nearest(vector, len(snapshot.dense.ids)), position, None):
                cosines[pos] = max(score - offset, cosines.get(pos, -1.0))
            continue
        if not full and (snapshot.dense is not None or hasattr(store, "nearest_ids")):
            # Ids and cosines suffice (the snapshot holds the records); see neighbours_to_ask.
            n = _asked(snapshot, eligible, dense_k)
            if snapshot.dense is not None:  # a small namespace: its vectors are in the snapshot
                near = snapshot.dense.nearest(vector, n)
            elif started is not None and join is not None:
                near = yield join(started[i])
            else:
                near = yield request(store, "nearest_ids", "anearest_ids", (ns, vector, n))
            if len(near) < n and snapshot.dense is None and hasattr(store, "complete_nearest"):
                # n is at most the records the snapshot holds, all rows of the namespace: a short
                # answer means the index could not reach some of them (see complete_nearest).
                near = yield request(store, "complete_nearest", "acomplete_nearest", (ns, vector, n, near))
            ranked = _eligible(near, position, eligible)[:dense_k]
            if cosines:
                for pos, score in ranked:
                    cosines[pos] = max(score - offset, cosines.get(pos, -1.0))
            else:  # the first vector: no earlier cosine to keep (ids are distinct); max(c, -1.0) inlined
                cosines = {pos: -1.0 if -1.0 > (c := score - offset) else c for pos, score in ranked}
                if len(vectors) == 1 and _descending(list(cosines.values())):  # the store's order: nearest first
                    return cosines, list(cosines)[:dense_k]  # what the stable sort below returns
            continue
        hits = yield request(store, "search_records", "asearch_records", (ns,), {"embedding": vector, **search})
        for record, score in hits:
            pos = position.get(record.id)
            if pos is not None:
                cosines[pos] = max(score - offset, cosines.get(pos, -1.0))
    eligible_ranked = sorted((p for p in cosines if eligible[p]), key=lambda p: -cosines[p])
    return cosines, eligible_ranked[:dense_k]


def _eligible(
    near: list[tuple[str, float]], position: dict[str, int], eligible: np.ndarray | None
) -> list[tuple[int, float]]:
    """``near``'s (id, cosine) pairs as (position, cosine), in order, for eligible records of the snapshot.

    ``eligible=None``: for every record of the snapshot.
    """
    found = [position.get(i) for i, _ in near]
    if eligible is None:
        return [(p, sc) for p, (_, sc) in zip(found, near) if p is not None]
    if None in found:  # ids the snapshot does not hold (written since it was read): skipped
        return [(p, sc) for p, (_, sc) in zip(found, near) if p is not None and eligible[p]]
    ok = eligible[found].tolist() if found else []
    return [(p, sc) for p, (_, sc), keep in zip(found, near, ok) if keep]


def _descending(values: list[float]) -> bool:
    """Whether ``values`` never rise (a NaN makes it ``False``)."""
    return all(a >= b for a, b in zip(values, values[1:]))
