"""Query-centred cosines for encoders whose cosines sit on a high, query-dependent floor.

multilingual-e5 gives unrelated texts cosines of 0.7-0.85, and how high depends on the
query more than on the record: a fixed threshold then lets "Will it snow tomorrow?"
through and stops a real match. Centring removes the query's part: a record's cosine
minus the query's mean cosine to a fixed background of short personal-fact
descriptions (the vocabulary's, en and zh). The background is the same for every
namespace, so a centred score keeps a fixed meaning (no per-namespace min-max); a
query close to *everything* personal gains nothing from it, one close to a single
record stands out.

The embedded background is kept on disk like the routing cards (``PersistedCards``,
folder ``background``, keyed by the encoder's fingerprint), so only the first process
on a machine embeds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from langchain_lifecycle_memory.read._card_vectors import PersistedCards
from langchain_lifecycle_memory.read._per_embedder import PerEmbedder
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES

__all__ = ["BACKGROUND", "QueryCentering"]

BACKGROUND: tuple[str, ...] = tuple(s.description for s in DEFAULT_ATTRIBUTES) + tuple(
    s.zh for s in DEFAULT_ATTRIBUTES if s.zh
)
"""Background texts (embedded as stored texts) that a query's offset is measured on."""


class QueryCentering(PerEmbedder):
    """The background matrix per embedder (embedded once per process) and the offsets.

    Example:
        .. code-block:: python

            centering = QueryCentering.for_embeddings(emb)
            if centering.missing():
                centering.install(emb.embed_documents(list(BACKGROUND)))
            offset = centering.offset(emb.embed_query("Will it snow tomorrow?"))
    """

    def __init__(self) -> None:
        self._matrix: np.ndarray | None = None
        self._disk: PersistedCards | None = None

    @classmethod
    def for_embeddings(cls, embeddings: Any) -> QueryCentering:
        """The shared instance for this embedder object (with its on-disk background, if any)."""
        centering = super().for_embeddings(embeddings)
        if centering._matrix is None and centering._disk is None:
            centering._disk = PersistedCards.for_embeddings(embeddings, "background")
        return centering

    def missing(self) -> list[str]:
        """The background texts to embed (empty once installed, or when found on disk)."""
        if self._matrix is not None:
            return []
        if self._disk is not None:
            stored = self._disk.load(BACKGROUND)
            if len(stored) == len(set(BACKGROUND)):
                self._set(np.stack([stored[t] for t in BACKGROUND]))
                return []
        return list(BACKGROUND)

    def install(self, vectors: Sequence[Sequence[float]]) -> None:
        """Store the embedded background (and keep it on disk for the next process)."""
        matrix = np.asarray(vectors, dtype=np.float32)
        if self._disk is not None and len(matrix) == len(BACKGROUND):
            self._disk.save(list(BACKGROUND), matrix)
        self._set(matrix)

    def _set(self, matrix: np.ndarray) -> None:
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self._matrix = matrix / np.where(norms == 0, 1.0, norms)

    def offset(self, vector: Sequence[float]) -> float:
        """Mean cosine of ``vector`` to the background (0 before ``install``)."""
        if self._matrix is None:
            return 0.0
        v = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(v)) or 1.0
        return float(np.mean(self._matrix @ (v / norm)))
