"""Plumbing shared by the notebooks: where things are, and an embedding cache. Nothing to learn here."""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

# bm25s imports tqdm.auto, which warns once in a kernel without ipywidgets: noise for a reader.
warnings.filterwarnings("ignore", message="IProgress not found")

from langchain_lifecycle_memory.embeddings import embedding_fingerprint

REPO = Path(__file__).resolve().parents[1]
"""The repository root (the notebooks run from ``notebooks/``)."""


def shared_dir() -> Path | None:
    """The project's ``shared/`` folder (scenarios, LoCoMo data) if this checkout has one."""
    return next((p for p in (REPO.parent / "shared", REPO / "shared") if p.is_dir()), None)


def scratch(name: str) -> Path:
    """A fresh temporary folder (embedded Chroma lives here, never under ``$HOME``)."""
    return Path(tempfile.mkdtemp(prefix=f"lifecycle-{name}-"))


class CachedEmbeddings(Embeddings):
    """Memoises another embedder by text; the store still sees the wrapped model's fingerprint.

    The notebooks embed the same few sentences many times (two engines, many replays);
    a sentence encoder is far cheaper per text in one batch, so :meth:`warm` embeds
    everything once up front.
    """

    def __init__(self, base: Embeddings, batch_size: int = 128) -> None:
        self.base = base
        self.batch_size = batch_size
        self.model_name = getattr(base, "model_name", None)
        self.dims = getattr(base, "dims", None)
        self._cache: dict[str, list[float]] = {}

    @property
    def fingerprint(self) -> dict[str, Any]:
        """The wrapped embedder's fingerprint: the vectors are its own."""
        return embedding_fingerprint(self.base)

    def warm(self, texts: Iterable[str]) -> None:
        """Embed, in batches, every text not cached yet."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        for i in range(0, len(missing), self.batch_size):
            chunk = missing[i : i + self.batch_size]
            self._cache.update(zip(chunk, self.base.embed_documents(chunk)))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Cached vectors (misses are embedded first)."""
        self.warm(texts)
        return [self._cache[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """The cached vector of one text."""
        return self.embed_documents([text])[0]
