"""Small namespaces: the dense channel scored in-process (pure).

A namespace of a few records (one user's memories, the common case with many users) is
read with its vectors in the same ``get`` that reads its records
(``store.read_small_namespace``), and a query's nearest rows are then an exact cosine over
that matrix: one Chroma call per first search instead of two (the records, then a
filtered nearest-neighbour query), and none on a warm search. The result is what
``store.nearest_ids`` returns: every row of the namespace (extra vector rows included),
by cosine similarity, best first, cut at ``n``; Chroma's index is exact at this size.

Only a snapshot read this way carries the vectors; a journal delta cannot (the journal
holds values, not vectors), so such a snapshot is read again when its namespace moves:
one ``get`` of at most ``SMALL_NAMESPACE`` rows.

On an embedded store the first read of a namespace needs no revision token either: the
snapshot is dated by the database file's stamp taken before the read
(``store.database_stamp``, the same stamp ``store.revision`` trusts), and stays in use
while nothing has committed to the file since. Once the file moved, the namespace's token
is read and the snapshot is read again under it (as on a server, where there is no file).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from langchain_lifecycle_memory.read._snapshot import Snapshot, build_snapshot

__all__ = ["SMALL_NAMESPACE", "DenseRows", "dense_rows", "read_small"]

SMALL_NAMESPACE = 256
"""Namespaces of at most this many rows are read with their vectors and scored in-process."""


@dataclass(frozen=True)
class DenseRows:
    """Every row of a small namespace: its id and unit vector."""

    ids: list[str]
    unit: np.ndarray
    """``len(ids) x dims`` float32, each row scaled to length 1 (a zero vector stays 0)."""

    def nearest(self, vector: Sequence[float], n: int) -> list[tuple[str, float]]:
        """The ``n`` rows nearest ``vector``: ``(id, cosine similarity)``, best first."""
        if n <= 0 or not self.ids:
            return []
        q = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        sims = self.unit @ (q / norm if norm > 0 else q)
        order = np.argsort(-sims, kind="stable")[:n]
        return [(self.ids[i], float(sims[i])) for i in order]


def dense_rows(ids: Sequence[str], vectors: np.ndarray) -> DenseRows:
    """``DenseRows`` of the rows ``ids`` with (not necessarily unit) ``vectors``."""
    matrix = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1) if len(ids) else np.zeros((0, 1), np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return DenseRows(list(ids), matrix / np.where(norms > 0, norms, 1.0))


def read_small(
    store: Any,
    namespace: tuple[str, ...],
    limit: int,
    *,
    token: Any,
    stamp: Any,
    cache: dict[str, tuple[list[str], list[str]]] | None,
    request: Callable[..., Any],
) -> Generator[Any, Any, Snapshot | None]:
    """The namespace as a snapshot carrying its vectors (one ``get``); ``None`` past ``limit`` rows.

    ``token``: the revision read before (``None``: none, ``stamp`` dates the snapshot).
    """
    small = yield request(store, "read_small_namespace", "aread_small_namespace", (namespace, limit))
    if small is None:
        return None
    records, _, (ids, matrix) = small  # the records were parsed to be sorted: kept as objects, not documents
    snapshot = build_snapshot(store, records, namespace=namespace, token=token, cache=cache)
    snapshot.dense, snapshot.stamp = dense_rows(ids, matrix), stamp
    return snapshot
