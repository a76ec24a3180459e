"""A deterministic embedder for tests that need meaningful but model-free similarities."""

from __future__ import annotations

import zlib

import numpy as np
from langchain_core.embeddings import Embeddings

__all__ = ["CharEmbeddings"]


class CharEmbeddings(Embeddings):
    """Normalised sum of one fixed random direction per character, weighted by frequency."""

    def __init__(self, dims: int = 64) -> None:
        self.dims = dims
        self._dirs: dict[str, np.ndarray] = {}

    def _direction(self, ch: str) -> np.ndarray:
        vec = self._dirs.get(ch)
        if vec is None:
            rng = np.random.default_rng(zlib.crc32(ch.encode("utf-8", "surrogatepass")))
            vec = self._dirs[ch] = rng.standard_normal(self.dims)
        return vec

    def _one(self, text: str) -> list[float]:
        out = np.zeros(self.dims)
        for ch in text:
            out += self._direction(ch)
        norm = float(np.linalg.norm(out))
        return (out / norm).tolist() if norm else out.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)
