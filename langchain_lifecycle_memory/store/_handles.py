"""Collection handles that outlive their collection, and the guard on a new collection's first query.

The store caches one Chroma collection object per namespace; that object names the
collection by a fixed id. When the collection is deleted behind this process's back
(``lifecycle-memory purge`` from another process or client, a ``chroma run`` server
restarted on an empty directory), every call on the cached object raises
``NotFoundError`` until the app restarts. A ``Handle`` catches that once per call, asks
the store to resolve the namespace again (recreating the collection for a write) and
re-runs the call; a read of a collection that is gone answers as an empty collection.

Chroma's embedded HNSW segment can also be missing on disk for a moment right after a
collection's first writes ("Error creating hnsw segment reader: Nothing found on disk")
when a query races them: the query is retried briefly, then answered by an exact scan.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

__all__ = ["Collections", "Handle", "cosines", "empty_result"]

_WRITES = frozenset({"add", "upsert"})
_RETRIES = 5


def empty_result(method: str, kwargs: dict[str, Any]) -> Any:
    """What ``method`` answers on an empty collection (a vanished one reads as empty)."""
    if method == "count":
        return 0
    if method in ("get", "peek"):
        return {"ids": [], "documents": [], "metadatas": [], "embeddings": [], "uris": None, "data": None}
    if method == "query":
        n = len(kwargs.get("query_embeddings") or [None])
        return {k: [[] for _ in range(n)] for k in ("ids", "documents", "metadatas", "distances", "embeddings")}
    return None  # update / delete / modify: nothing left to change


def _hnsw_not_ready(error: Exception) -> bool:
    text = str(error).lower()
    return "hnsw" in text and ("nothing found on disk" in text or "segment reader" in text)


def cosines(vectors: Any, query: Any) -> np.ndarray:
    """Cosine similarity of each row of ``vectors`` to ``query`` (float64; a zero vector scores 0)."""
    matrix = np.asarray(vectors, dtype=np.float64)
    if not len(matrix):
        return np.zeros(0)
    q = np.asarray(query, dtype=np.float64)
    return matrix @ q / np.maximum(np.linalg.norm(matrix, axis=1) * np.linalg.norm(q), 1e-12)


def _exact_query(col: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``col.query`` answered by a scan (cosine distance), for when the HNSW reader is not ready."""
    include = list(kwargs.get("include") or ["documents", "metadatas", "distances"])
    got = col.get(where=kwargs.get("where"), include=["embeddings", "documents", "metadatas"])
    n = int(kwargs.get("n_results", 10))
    out: dict[str, list[Any]] = {k: [] for k in ("ids", "documents", "metadatas", "distances", "embeddings")}
    matrix = np.asarray(got["embeddings"] if len(got["ids"]) else np.zeros((0, 1)), dtype=np.float64)
    for query in kwargs.get("query_embeddings") or []:
        sims = cosines(matrix, query)
        order = np.argsort(-sims, kind="stable")[:n]
        out["ids"].append([got["ids"][i] for i in order])
        out["documents"].append([got["documents"][i] for i in order])
        out["metadatas"].append([got["metadatas"][i] for i in order])
        out["distances"].append([float(1.0 - sims[i]) for i in order])
        out["embeddings"].append([matrix[i].tolist() for i in order])
    for key in ("documents", "metadatas", "distances", "embeddings"):
        if key not in include:
            out[key] = None  # type: ignore[assignment]
    return out


def _query(col: Any, kwargs: dict[str, Any]) -> Any:
    from chromadb.errors import InternalError

    for attempt in range(_RETRIES + 1):
        try:
            return col.query(**kwargs)
        except InternalError as e:
            if not _hnsw_not_ready(e):
                raise
            if attempt == _RETRIES:
                return _exact_query(col, kwargs)
            time.sleep(0.01 * 2**attempt)
    raise AssertionError("unreachable")  # pragma: no cover


class Handle:
    """A namespace's collection that re-resolves itself when it vanished (see the module docstring)."""

    __slots__ = ("_col", "_namespace", "_store")

    def __init__(self, store: Any, namespace: tuple[str, ...], col: Any) -> None:
        self._store = store
        self._namespace = namespace
        self._col = col

    @property
    def name(self) -> str:
        return str(self._col.name)

    @property
    def metadata(self) -> Any:
        return self._col.metadata

    @property
    def id(self) -> Any:
        return self._col.id

    def __getattr__(self, attr: str) -> Any:
        target = getattr(self._col, attr)
        if not callable(target):
            return target
        return lambda *args, **kwargs: self._call(attr, args, kwargs)

    def _call(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        from chromadb.errors import NotFoundError

        col = self._col
        try:
            return _query(col, kwargs) if method == "query" and not args else getattr(col, method)(*args, **kwargs)
        except NotFoundError:
            pass
        fresh = self._store._reopen(self._namespace, create=method in _WRITES)
        if fresh is None:
            return empty_result(method, kwargs)
        self._col = fresh
        return _query(fresh, kwargs) if method == "query" and not args else getattr(fresh, method)(*args, **kwargs)


class Collections:
    """Resolving a namespace to its collection handle; mixed into ``ChromaMemoryStore``."""

    if TYPE_CHECKING:
        client: Any
        prefix: str
        generation: int
        fingerprint: dict[str, Any]
        _lock: threading.RLock
        _cols: dict[tuple[str, ...], Any]
        _journal: dict[tuple[str, ...], Any]
        _tokens: dict[tuple[str, ...], Any]
        _created_now: tuple[str, ...] | None

        @property
        def meta_name(self) -> str: ...
        def _guard(self, fn: Callable[[], Any]) -> Any: ...
        def _open_meta(self, verify: bool, generation: int = 0, requested: tuple[Any, Any] = ...) -> int: ...

    def _col(self, namespace: tuple[str, ...], *, create: bool = False) -> Any | None:
        """The namespace's collection (a ``Handle``), or ``None`` when it has none (``create=False``)."""
        with self._lock:
            col = self._cols.get(namespace)
            if col is not None:
                return col
            raw = self._open_collection(namespace, create=create)
            if raw is None:
                return None
            col = self._cols[namespace] = Handle(self, namespace, raw)
            return col

    def _col_for_write(self, namespace: tuple[str, ...]) -> tuple[Any, bool]:
        """The namespace's handle for a write, and whether this call created the namespace.

        A namespace the layout had to create (no collection; bucketed: no registry row) has
        no rows yet, so its first write skips reading the rows it would replace.
        """
        with self._lock:
            col = self._cols.get(namespace)
            if col is not None:
                return col, False
            self._created_now = None
            raw = self._open_collection(namespace, create=True)
            created, self._created_now = self._created_now == namespace, None
            col = self._cols[namespace] = Handle(self, namespace, raw)
            return col, created

    def _opened_new(self, namespace: tuple[str, ...]) -> None:
        """Called by the layout when it creates ``namespace`` (see ``_col_for_write``)."""
        self._created_now = namespace

    def _reader(self, namespace: tuple[str, ...]) -> Any | None:
        """The namespace's handle for a read: the cached one, or the layout's read view (not cached)."""
        with self._lock:
            col = self._cols.get(namespace)
            if col is not None:
                return col
            raw = self._layout.reader(self, namespace)  # type: ignore[attr-defined]
            return None if raw is None else Handle(self, namespace, raw)

    def _open_collection(self, namespace: tuple[str, ...], *, create: bool) -> Any | None:
        return self._layout.open(self, namespace, create=create)  # type: ignore[attr-defined]

    def _reopen(self, namespace: tuple[str, ...], *, create: bool) -> Any | None:
        """Resolve a namespace whose cached collection vanished (purged elsewhere, server reset)."""
        from chromadb.errors import NotFoundError

        with self._lock:
            self._tokens.pop(namespace, None)
            self._journal.pop(namespace, None)
            self._layout.forget()  # type: ignore[attr-defined]
            if create:
                try:
                    self._guard(lambda: self.client.get_collection(self.meta_name))
                except NotFoundError:  # the whole store was wiped: put the meta record back first
                    self._open_meta(False, generation=self.generation)
            raw = self._open_collection(namespace, create=create)
            if raw is None:
                self._cols.pop(namespace, None)
            return raw
