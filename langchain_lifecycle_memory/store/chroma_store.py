"""``ChromaMemoryStore``: a LangGraph ``BaseStore`` over Chroma, plus the record API.

Why ``chromadb`` directly rather than ``langchain_chroma.Chroma``: a LangGraph store
needs exact ids, upserts that merge metadata, ``get`` by id, metadata-only filters and
per-collection configuration (cosine space, embedding fingerprint); ``Chroma`` the
vector store wraps these with a document API that hides them, and we still hand it
any LangChain ``Embeddings``. ``langchain-chroma`` stays the baseline in benchmarks.

Layout (``layout=``, recorded in the store; see ``_layout``): ``"bucketed"`` (the
default for new stores) hashes namespaces into a fixed number of shared collections,
every call scoped by a literal tenant clause, so memory stays bounded in the number of
users; ``"collection"`` keeps one collection per namespace (stores made before layouts).

* statuses and expiry are checked on an over-fetched candidate list, with a ``where``
  only as a fallback when most candidates are filtered out;
* a small ``<prefix>.meta`` collection holds the embedding fingerprint and the current
  *generation*; a reindex writes a new generation and switches by updating that one
  record, so an interrupted reindex leaves the old generation in use.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
)

from langchain_lifecycle_memory.errors import EmbeddingMismatchError, StoreUnavailableError
from langchain_lifecycle_memory.store import _layout, memtrim
from langchain_lifecycle_memory.store import chroma as C
from langchain_lifecycle_memory.store._handles import Collections, Handle
from langchain_lifecycle_memory.store._records import RecordAPI
from langchain_lifecycle_memory.store._revisions import RevisionJournal, local_database
from langchain_lifecycle_memory.store._store_reads import StoreReads
from langchain_lifecycle_memory.store._ttl import TTLSweeper
from langchain_lifecycle_memory.store.embeddings import UniversalSentenceEncoderEmbeddings, embedding_fingerprint
from langchain_lifecycle_memory.store.lru import LRUCache
from langchain_lifecycle_memory.store.write_hooks import notify_write

__all__ = ["ChromaMemoryStore"]

logger = logging.getLogger(__name__)

DEFAULT_PATH_ENV = "LIFECYCLE_MEMORY_PATH"
CACHED_NAMESPACES = 1024
"""Namespaces whose collection handle, revision token and write journal stay cached (LRU)."""


def _client_settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False)


class ChromaMemoryStore(Collections, RecordAPI, StoreReads, RevisionJournal, TTLSweeper, BaseStore):
    """A LangGraph store backed by Chroma, aware of memory-record lifecycles.

    Setup:
        ``pip install langchain-lifecycle-memory`` (brings ``chromadb`` and the offline
        default embedder).

    Instantiate:
        .. code-block:: python

            from langchain_lifecycle_memory import ChromaMemoryStore

            store = ChromaMemoryStore(persist_directory="./memory")  # embedded, persistent
            # ChromaMemoryStore(client=chromadb.EphemeralClient())   # in memory
            # ChromaMemoryStore(host="127.0.0.1", port=8000)         # `chroma run` server
            # ChromaMemoryStore(client=chromadb.CloudClient(...))    # Chroma Cloud

    Use with LangGraph:
        .. code-block:: python

            graph = builder.compile(store=store)
            store.put(("memories", "u1"), "k1", {"content": "I like Vim"})
            store.search(("memories", "u1"), query="editor")

    Args:
        persist_directory: Folder of an embedded ``PersistentClient`` (the default; falls
            back to ``$LIFECYCLE_MEMORY_PATH`` or ``./.lifecycle_memory``).
        client: Any chromadb client (ephemeral, persistent, HTTP, cloud). Wins over the rest.
        host: Chroma server host (``chroma run``); with ``port``, ``ssl`` and ``headers``.
        embeddings: Any LangChain ``Embeddings``; default: offline USE multilingual.
        collection_prefix: Prefix of every collection this store owns (3+ chars of
            ``[a-zA-Z0-9_-]``); two stores with different prefixes are independent. Every
            ``chromadb.EphemeralClient()`` of a process is one in-memory database (Chroma's
            design): two in-memory stores with the same prefix share their data.
        index: LangGraph ``IndexConfig`` (``fields`` default ``["$"]``); ``False`` disables
            semantic search. ``embed`` in it overrides ``embeddings``.
        ttl: LangGraph ``TTLConfig`` (minutes).
        verify_fingerprint: Raise ``EmbeddingMismatchError`` when the collections were
            written with another embedder (set ``False`` only to run a reindex).
        layout: ``"bucketed"`` (default for new stores: ``buckets`` shared collections, 16 by
            default, read with a tenant filter) or ``"collection"`` (one per namespace).
            Recorded in the store; ``store.migrate_layout(...)`` moves a store.
    """

    supports_ttl: bool = True
    trim_memory: bool = True
    """After a write batch, have glibc return the heap memory it keeps free, at most once a
    second (``store/memtrim.py``; ``False`` or ``LIFECYCLE_MEMORY_TRIM=0`` turns it off)."""

    def __init__(
        self,
        persist_directory: str | os.PathLike[str] | None = None,
        *,
        client: Any | None = None,
        host: str | None = None,
        port: int = 8000,
        ssl: bool = False,
        headers: dict[str, str] | None = None,
        embeddings: Embeddings | None = None,
        collection_prefix: str = "lifecycle_memory",
        index: IndexConfig | bool | None = None,
        ttl: TTLConfig | None = None,
        verify_fingerprint: bool = True,
        layout: str | None = None,
        buckets: int | None = None,
    ) -> None:
        if (
            not isinstance(collection_prefix, str)
            or len(collection_prefix) < 3
            or not all(ch.isascii() and (ch.isalnum() or ch in "_-") for ch in collection_prefix)
        ):
            msg = f"collection_prefix must be 3+ characters of [a-zA-Z0-9_-], got {collection_prefix!r}."
            raise ValueError(msg)
        self.prefix = collection_prefix
        self._where = "embedded client"
        self.client = client if client is not None else self._make_client(persist_directory, host, port, ssl, headers)
        index_cfg: dict[str, Any] = {} if index in (None, True) else dict(index or {})
        self.index_enabled = index is not False
        embed = index_cfg.get("embed") if index_cfg else None
        if embed is not None:
            embeddings = ensure_embeddings(embed)
        self.embeddings: Embeddings = embeddings or UniversalSentenceEncoderEmbeddings()
        self.index_fields: list[str] = list(index_cfg.get("fields") or ["$"])
        self.ttl_config: TTLConfig | None = ttl
        self._lock = threading.RLock()
        # Bounded: one entry per namespace touched would otherwise grow with the users served.
        self._cols: LRUCache[tuple[str, ...], Any] = LRUCache(CACHED_NAMESPACES)
        self._journal: LRUCache[tuple[str, ...], collections.deque[tuple[str, str, Any]]] = LRUCache(CACHED_NAMESPACES)
        self._tokens: LRUCache[tuple[str, ...], tuple[Any, str]] = LRUCache(CACHED_NAMESPACES)
        self._followed: LRUCache[tuple[str, ...], bool] = LRUCache(CACHED_NAMESPACES)  # journaled (``follow``)
        self._created_now: tuple[str, ...] | None = None  # set by the layout while a write opens (``_col_for_write``)
        self._sweeper: threading.Thread | None = None
        self._sweeper_stop = threading.Event()
        self.fingerprint = embedding_fingerprint(self.embeddings, index_cfg.get("dims"))
        self.dims = int(self.fingerprint["dims"])
        self._layout = _layout.make_layout(layout, buckets)
        self.generation = self._open_meta(verify_fingerprint, requested=(layout, buckets))
        self._local_db = local_database(self.client)

    # ------------------------------------------------------------------ setup
    def _make_client(self, path: Any, host: str | None, port: int, ssl: bool, headers: dict[str, str] | None) -> Any:
        import chromadb

        if host:
            self._where = f"Chroma server {host}:{port}"
            try:
                return chromadb.HttpClient(host=host, port=port, ssl=ssl, headers=headers, settings=_client_settings())
            except Exception as e:
                msg = (
                    f"Cannot reach the {self._where} ({type(e).__name__}: {e}). Start one with "
                    f"`chroma run --path DIR --host {host} --port {port}`, or fix --host/--port."
                )
                raise StoreUnavailableError(msg) from e
        path = os.fspath(path) if path is not None else os.environ.get(DEFAULT_PATH_ENV, ".lifecycle_memory")
        # Chroma caches clients by path string: "./memory" from two working directories
        # would otherwise share one (stale) client.
        path = os.path.abspath(os.path.expanduser(path))
        self._where = f"embedded Chroma at {path}"
        return chromadb.PersistentClient(path=path, settings=_client_settings())

    @property
    def meta_name(self) -> str:
        """Name of the collection that holds the fingerprint and generation."""
        return f"{self.prefix}.meta"

    def _meta(self) -> Any:
        return self._guard(lambda: self.client.get_collection(self.meta_name))

    @property
    def layout(self) -> str:
        """The storage layout in use (``"bucketed"`` or ``"collection"``)."""
        return str(self._layout.name)

    def _open_meta(self, verify: bool, generation: int = 0, requested: tuple[Any, Any] = (None, None)) -> int:
        from chromadb.errors import NotFoundError

        try:
            meta = self._guard(lambda: self.client.get_collection(self.meta_name))
        except NotFoundError:
            fingerprint = json.dumps(self.fingerprint, sort_keys=True)
            metadata = {"fingerprint": fingerprint, "generation": generation, **self._layout.record()}
            try:
                self._guard(
                    lambda: self.client.create_collection(self.meta_name, metadata=metadata, embedding_function=None)
                )
            except Exception:  # created concurrently by another process
                self._guard(lambda: self.client.get_collection(self.meta_name))
            return generation
        stored = json.loads((meta.metadata or {}).get("fingerprint", "{}"))
        if verify and stored and stored != self.fingerprint:
            msg = (
                f"The collections '{self.prefix}.*' were embedded with {stored}, but this store was "
                f"opened with {self.fingerprint}; their scores are not comparable. Open the store with "
                "the original embedder, or migrate with `store.reindex(new_embeddings)` "
                "(CLI: `lifecycle-memory reindex`)."
            )
            raise EmbeddingMismatchError(msg)
        self._layout = _layout.recorded(meta.metadata, requested, self.prefix)
        return int((meta.metadata or {}).get("generation", 0))

    def _guard(self, fn: Callable[[], Any]) -> Any:
        """Run a Chroma call; a dead server becomes ``StoreUnavailableError``."""
        try:
            return fn()
        except Exception as e:
            name = type(e).__module__ + "." + type(e).__name__
            if isinstance(e, (ConnectionError, OSError)) or name.startswith(("httpx.", "httpcore.")):
                msg = f"Cannot reach the {self._where} ({type(e).__name__}: {e}). Is `chroma run` up?"
                raise StoreUnavailableError(msg) from e
            raise

    def _namespaces(self, generation: int | None = None, prefix: tuple[str, ...] = ()) -> list[tuple[Any, Any]]:
        """Every (namespace, collection) of a generation under ``prefix`` (literal), read fresh from Chroma.

        The current generation's collections come as ``Handle`` s (they survive a purge elsewhere).
        """
        current = generation is None or generation == self.generation
        found = self._layout.namespaces(self, self.generation if generation is None else generation, tuple(prefix))
        return [(ns, Handle(self, ns, col) if current else col) for ns, col in found]

    # ------------------------------------------------------------------ embedding
    def _index_texts(self, value: dict[str, Any], fields: list[str]) -> list[str]:
        """One text per indexed path and list element (LangGraph embeds each; the best one scores)."""
        texts: list[str] = []
        for field in fields:
            texts.extend(t for t in get_text_at_path(value, tokenize_path(field) if field != "$" else "$") if t)
        return texts

    def _embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self.embeddings.embed_documents(texts)
        if len(vectors) != len(texts) or any(len(v) != self.dims for v in vectors):
            msg = f"The embedder returned vectors of the wrong size (expected {len(texts)} x {self.dims})."
            raise ValueError(msg)
        return [list(map(float, v)) for v in vectors]

    def _placeholder_vector(self) -> list[float]:
        return [1.0] + [0.0] * (self.dims - 1)

    # ------------------------------------------------------------------ batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute ops: all are validated first, then puts, then reads in input order."""
        ops = list(ops)
        for op in ops:
            self._validate_op(op)
        results: list[Result] = [None] * len(ops)
        puts = [op for op in ops if isinstance(op, PutOp)]
        if puts:
            try:
                self._apply_puts(puts)
            finally:
                if self.trim_memory:
                    memtrim.maybe_release()
        for i, op in enumerate(ops):
            if isinstance(op, GetOp):
                results[i] = self._get(op)
            elif isinstance(op, SearchOp):
                results[i] = self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[i] = self._list_namespaces(op)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async ``batch``: Chroma's client is synchronous, so it runs in a worker thread."""
        ops = list(ops)
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, ops)

    def _validate_op(self, op: Op) -> None:
        if isinstance(op, (GetOp, PutOp)):
            C.validate_namespace(op.namespace)
            C.validate_key(op.key)
            if isinstance(op, PutOp) and op.value is not None:
                C.dumps_value(op.value)
                if op.index not in (None, False) and not isinstance(op.index, list):
                    msg = f"PutOp.index must be None, False or a list of field paths, got {op.index!r}."
                    raise TypeError(msg)
        elif isinstance(op, SearchOp):
            C.validate_namespace(op.namespace_prefix, allow_empty=True, what="namespace prefix")
            C.check_filter(op.filter)
            if op.limit < 0 or op.offset < 0:
                msg = "Search limit and offset must be >= 0."
                raise ValueError(msg)
        elif isinstance(op, ListNamespacesOp):
            for cond in op.match_conditions or ():
                C.validate_namespace(cond.path, allow_empty=True, what="namespace pattern")
        else:
            msg = f"Unknown store operation {type(op).__name__}."
            raise TypeError(msg)

    def _apply_puts(self, ops: list[PutOp]) -> None:
        latest: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            latest[(tuple(op.namespace), op.key)] = op
        by_ns: dict[tuple[str, ...], list[PutOp]] = {}
        for (ns, _), op in latest.items():
            by_ns.setdefault(ns, []).append(op)
        prepared = []
        for ns, group in by_ns.items():
            upserts = [op for op in group if op.value is not None]
            texts = []
            for op in upserts:
                fields = self.index_fields if op.index is None else (op.index or [])
                texts.append(self._index_texts(dict(op.value or {}), fields) if self.index_enabled and fields else [])
            flat = self._embed([t for item in texts for t in item])
            vectors: dict[int, list[list[float]]] = {}
            for i, item in enumerate(texts):
                if item:
                    vectors[i], flat = flat[: len(item)], flat[len(item) :]
            prepared.append((ns, group, upserts, vectors))
        for ns, group, upserts, vectors in prepared:
            self._write_namespace(ns, group, upserts, vectors)

    def _write_namespace(
        self,
        ns: tuple[str, ...],
        group: list[PutOp],
        upserts: list[PutOp],
        vectors: dict[int, list[list[float]]],
    ) -> None:
        deletes = [op.key for op in group if op.value is None]
        if deletes:
            col: Any = self._col(ns)
            if col is not None:
                old = self._guard(lambda: col.get(ids=deletes, include=["metadatas"]))
                extra = [p for k, m in zip(old["ids"], old["metadatas"] or []) for p in C.part_ids(k, m)]
                self._guard(lambda: col.delete(ids=deletes + extra))
        changes = [(op.key, op.value) for op in group]
        if not upserts:
            self._bump(ns, changes)
            notify_write(self, ns, changes)
            return
        col, created = self._col_for_write(ns)
        keys = [op.key for op in upserts]
        old_meta: dict[str, Any] = {}
        if not created:  # a namespace created by this write has no rows to replace
            existing = self._guard(lambda: col.get(ids=keys, include=["metadatas"]))
            old_meta = {i: m for i, m in zip(existing["ids"], existing["metadatas"] or [])}
        now = time.time()
        default_ttl = (self.ttl_config or {}).get("default_ttl")
        metadatas, documents, embeddings = [], [], []
        part_rows: tuple[list[str], list[list[float]], list[dict[str, Any]]] = ([], [], [])
        stale_parts: list[str] = []
        for i, op in enumerate(upserts):
            value = dict(op.value or {})
            previous = old_meta.get(op.key) or {}
            meta: dict[str, Any] = {
                C.SYS_NS: ".".join(ns),
                C.SYS_KEY: op.key,
                C.SYS_CREATED: float(previous.get(C.SYS_CREATED, now)),
                C.SYS_UPDATED: now,
                C.SYS_INDEXED: i in vectors,
                C.SYS_FIELDS: json.dumps(self.index_fields if op.index is None else (op.index or [])),
            }
            ttl = op.ttl if op.ttl is not None else default_ttl
            if ttl is not None:
                meta[C.SYS_TTL] = float(ttl)
                meta[C.SYS_EXPIRES] = now + float(ttl) * 60
            item_vectors = vectors.get(i) or [self._placeholder_vector()]
            if len(item_vectors) > 1:
                meta[C.SYS_PARTS] = len(item_vectors) - 1
                for n, vector in enumerate(item_vectors[1:], 1):
                    part_rows[0].append(C.part_id(op.key, n))
                    part_rows[1].append(vector)
                    part_rows[2].append({C.SYS_PART_OF: op.key, C.SYS_INDEXED: True, C.SYS_NS: meta[C.SYS_NS]})
            stale_parts.extend(C.part_ids(op.key, previous)[len(item_vectors) - 1 :])
            meta.update(C.flat_metadata(value))
            for stale in set(previous) - set(meta):
                meta[stale] = None
            metadatas.append(meta)
            documents.append(C.dumps_value(value))
            embeddings.append(item_vectors[0])
        step = max(1, int(self._guard(self.client.get_max_batch_size)))
        for s in range(0, len(keys), step):
            self._guard(
                lambda s=s: col.upsert(
                    ids=keys[s : s + step],
                    embeddings=embeddings[s : s + step],
                    documents=documents[s : s + step],
                    metadatas=metadatas[s : s + step],
                )
            )
        ids, vecs, metas = part_rows
        for s in range(0, len(ids), step):
            w = slice(s, s + step)
            self._guard(functools.partial(col.upsert, ids=ids[w], embeddings=vecs[w], metadatas=metas[w]))
        if stale_parts:
            self._guard(lambda: col.delete(ids=stale_parts))
        self._bump(ns, changes)
        notify_write(self, ns, changes)

    # ------------------------------------------------------------------ reads
    def _refresh(self, col: Any, rows: list[tuple[str, dict[str, Any]]], refresh: bool | None) -> None:
        default = (self.ttl_config or {}).get("refresh_on_read", True)
        if not (default if refresh is None else refresh):
            return
        now = time.time()
        ids = [i for i, m in rows if m.get(C.SYS_TTL) is not None]
        if ids:
            metas = [{C.SYS_EXPIRES: now + float(m[C.SYS_TTL]) * 60} for i, m in rows if m.get(C.SYS_TTL) is not None]
            self._guard(lambda: col.update(ids=ids, metadatas=metas))

    # ------------------------------------------------------------------ maintenance
    def reindex(self, new_embeddings: Embeddings, **kwargs: Any) -> Any:
        """Re-embed everything with ``new_embeddings`` and switch atomically (version drift).

        See :func:`langchain_lifecycle_memory.lifecycle.operations.reindex`; an interrupted reindex
        leaves the current generation in use.
        """
        from langchain_lifecycle_memory.store.maintenance import reindex

        return reindex(self, new_embeddings, **kwargs)

    def migrate_layout(self, layout: str, **kwargs: Any) -> Any:
        """Move the store into another layout, switching atomically (see ``maintenance.migrate_layout``)."""
        from langchain_lifecycle_memory.store.maintenance import migrate_layout

        return migrate_layout(self, layout, **kwargs)

    def compact(self, **kwargs: Any) -> Any:
        """Make deleted data unrecoverable from an embedded Chroma directory."""
        from langchain_lifecycle_memory.store.maintenance import compact

        return compact(self, **kwargs)
