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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["SMALL_NAMESPACE", "DenseRows", "dense_rows"]

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
