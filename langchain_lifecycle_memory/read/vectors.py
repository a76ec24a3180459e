"""Embedded texts the retriever reuses (routing cards, cues, episodes), cached per embedder; the centring background.

A query's centring offset is its mean cosine to ``BACKGROUND`` (the vocabulary's descriptions, en and zh).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from cachetools import LRUCache

from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES

__all__ = ["BACKGROUND", "TextVectors", "unit"]

BACKGROUND: tuple[str, ...] = tuple(s.description for s in DEFAULT_ATTRIBUTES) + tuple(
    s.zh for s in DEFAULT_ATTRIBUTES if s.zh
)
"""Background texts (embedded as stored texts) that a query's centring offset is measured on."""


def unit(matrix: Any) -> np.ndarray:
    """Rows scaled to length 1 (zero rows stay zero), as ``float32``."""
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim == 1:
        return m / (float(np.linalg.norm(m)) or 1.0)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1.0, norms)


class TextVectors:
    """Unit vectors of texts for one embedder, embedded on first use (``embed_documents``) and cached."""

    max_texts = 200_000
    _lock = threading.Lock()
    _shared: LRUCache[str, tuple[Any, TextVectors]] = LRUCache(16)

    def __init__(self, embeddings: Any) -> None:
        self.embeddings = embeddings
        self._vectors: LRUCache[str, np.ndarray] = LRUCache(self.max_texts)
        self._background: np.ndarray | None = None

    @classmethod
    def of(cls, embeddings: Any) -> TextVectors:
        """The shared cache of this embedder (by fingerprint, else by object)."""
        fp = getattr(embeddings, "fingerprint", None)
        key = json.dumps(fp, sort_keys=True, default=str) if isinstance(fp, dict) else f"id:{id(embeddings)}"
        with cls._lock:
            hit = cls._shared.get(key)
            if hit is None or (key.startswith("id:") and hit[0] is not embeddings):
                hit = cls._shared[key] = (embeddings, cls(embeddings))
            return hit[1]

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        """Unit rows of ``texts`` in order, embedding the ones not cached yet in one call."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            vectors = unit(self.embeddings.embed_documents(missing))
            with self._lock:
                self._vectors.update(zip(missing, vectors, strict=True))
        with self._lock:
            found = [self._vectors.get(t) for t in texts]
        if any(v is None for v in found):  # evicted meanwhile (a huge batch): embed those again
            return unit(self.embeddings.embed_documents(list(texts)))
        return np.stack(found) if found else np.zeros((0, 1), dtype=np.float32)

    def offset(self, query_vector: Any) -> float:
        """Mean cosine of a query vector to the background (``QueryCentering``)."""
        if self._background is None:
            self._background = self.matrix(BACKGROUND)
        return float(np.mean(self._background @ unit(query_vector)))
