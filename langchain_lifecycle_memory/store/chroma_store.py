"""``ChromaRecordStore``: a LangGraph ``BaseStore`` over ``chromadb`` (exact ids, merging upserts), plus records.

``<prefix>.meta`` holds the embedding fingerprint and the current *generation* (switched by a reindex).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from collections.abc import Iterable
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
from langchain_lifecycle_memory.store import chroma as C
from langchain_lifecycle_memory.store._buckets import ABSENT, Buckets, Scoped
from langchain_lifecycle_memory.store._client import StoreClient, open_client
from langchain_lifecycle_memory.store._items import ItemReads
from langchain_lifecycle_memory.store.embeddings import (
    UniversalSentenceEncoderEmbeddings,
    embed_texts,
    embedding_fingerprint,
)
from langchain_lifecycle_memory.store.records import RecordAPI

__all__ = ["ChromaRecordStore"]

logger = logging.getLogger(__name__)

DEFAULT_PATH_ENV = "LIFECYCLE_MEMORY_PATH"
DEFAULT_BUCKETS = 16
META_RECHECK_SECONDS = 2.0
"""How old a server store's view of ``<prefix>.meta`` may be before it reads it again (a reindex elsewhere)."""


class ChromaRecordStore(RecordAPI, ItemReads, BaseStore):
    """A LangGraph store backed by Chroma, aware of memory-record lifecycles.

    Args:
        persist_directory: Embedded folder (default ``$LIFECYCLE_MEMORY_PATH`` or ``./.lifecycle_memory``).
        client: Any chromadb client; wins over the rest.
        host: A ``chroma run`` server's host (with ``port``, ``ssl``, ``headers``).
        embeddings: Any LangChain ``Embeddings``; default: offline USE multilingual.
        collection_prefix: Prefix of every collection this store owns (3+ chars of ``[a-zA-Z0-9_-]``).
        index: LangGraph ``IndexConfig`` (``fields`` default ``["$"]``); ``False`` disables semantic search.
        ttl: LangGraph ``TTLConfig`` (minutes).
        verify_fingerprint: Raise ``EmbeddingMismatchError`` if another embedder wrote the collections.
        buckets: Shared collections namespaces are hashed into (a new store records it).
    """

    supports_ttl: bool = True

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
        path = persist_directory if persist_directory is not None else os.environ.get(DEFAULT_PATH_ENV)
        self._client: StoreClient = open_client(
            client=client, path=path or ".lifecycle_memory", host=host, port=port, ssl=ssl, headers=headers
        )
        index_cfg: dict[str, Any] = {} if index in (None, True) else dict(index or {})
        self.index_enabled = index is not False
        if index_cfg.get("embed") is not None:
            embeddings = ensure_embeddings(index_cfg["embed"])
        self.embeddings: Embeddings = embeddings or UniversalSentenceEncoderEmbeddings()
        self.index_fields: list[str] = list(index_cfg.get("fields") or ["$"])
        self.ttl_config: TTLConfig | None = ttl
        self._sweeper: threading.Thread | None = None
        self._sweeper_stop = threading.Event()
        self.fingerprint = embedding_fingerprint(self.embeddings, index_cfg.get("dims"))
        self.dims = int(self.fingerprint["dims"])
        self.generation, stored_buckets = self._open_meta(verify_fingerprint, buckets)
        self._meta_seen = (self._client.epoch, time.monotonic())
        self._buckets = Buckets(self, stored_buckets)

    # ------------------------------------------------------------------ setup
    @property
    def client(self) -> Any:
        """The chromadb client in use."""
        return self._client.client

    @property
    def persist_directory(self) -> str | None:
        """The folder of an embedded store opened by path (``None`` for other clients)."""
        return self._client.path

    @property
    def meta_name(self) -> str:
        """Name of the collection that holds the fingerprint and generation."""
        return f"{self.prefix}.meta"

    def _open_meta(self, verify: bool, buckets: int | None) -> tuple[int, int]:
        from chromadb.errors import NotFoundError

        sc = self._client
        try:
            meta = sc(lambda: sc.client.get_collection(self.meta_name))
        except NotFoundError:
            metadata = {
                "fingerprint": json.dumps(self.fingerprint, sort_keys=True),
                "generation": 0,
                "buckets": buckets or DEFAULT_BUCKETS,
            }
            meta = sc(lambda: sc.client.get_or_create_collection(self.meta_name, metadata=metadata))
        stored = json.loads((meta.metadata or {}).get("fingerprint", "{}"))
        if verify and stored and stored != self.fingerprint:
            msg = (
                f"The collections '{self.prefix}.*' were embedded with {stored}, but this store was "
                f"opened with {self.fingerprint}; their scores are not comparable. Open the store with "
                "the original embedder, or migrate with `store.reindex(new_embeddings)` "
                "(CLI: `lifecycle-memory reindex`)."
            )
            raise EmbeddingMismatchError(msg)
        recorded = int((meta.metadata or {}).get("buckets") or DEFAULT_BUCKETS)
        if buckets is not None and buckets != recorded:
            msg = f"The store '{self.prefix}' was created with buckets={recorded}; open it without `buckets=`."
            raise ValueError(msg)
        return int((meta.metadata or {}).get("generation", 0)), recorded

    def current_generation(self) -> int:
        """:attr:`generation`, read again from ``<prefix>.meta`` once another process may have changed it.

        Embedded: after this process reopened its client for another's write; server: every few seconds. A
        reindex elsewhere to another embedder raises ``EmbeddingMismatchError`` (this process would write and read
        a dropped generation); a server that lost the meta (reset, or back on an empty folder) gets it again,
        with a warning that what it held is gone.
        """
        sc, (epoch, when) = self._client, self._meta_seen
        if sc.epoch == epoch and (sc.path is not None or time.monotonic() - when < META_RECHECK_SECONDS):
            return self.generation
        seen = (sc.epoch, time.monotonic())
        from chromadb.errors import NotFoundError

        try:
            meta = sc(lambda: sc.client.get_collection(self.meta_name)).metadata or {}
        except NotFoundError:
            logger.warning(
                "The %s has no '%s': it was reset or is empty; the memories it held are gone. Starting anew.",
                sc.where,
                self.meta_name,
            )
            self.generation, self._meta_seen = self._open_meta(False, self._buckets.count)[0], seen
            self._buckets.forget()
            return self.generation
        generation = int(meta.get("generation", 0))
        if generation != self.generation:
            stored = json.loads(meta.get("fingerprint") or "{}")
            if stored != self.fingerprint:
                msg = (
                    f"'{self.prefix}.*' was reindexed elsewhere (another process or store) to {stored}, generation "
                    f"{generation}; this store still embeds with {self.fingerprint}. Open the store again with the "
                    "new embedder."
                )
                raise EmbeddingMismatchError(msg)  # every call, until the store is opened again
            self.generation = generation
            self._buckets.forget()
        self._meta_seen = seen
        return self.generation

    def _view(self, namespace: tuple[str, ...], *, create: bool = False) -> Scoped | None:
        """The namespace's view of its bucket (call it inside a ``self._client.session()``)."""
        return self._buckets.view(tuple(namespace), create=create)

    # ------------------------------------------------------------------ embedding
    def _index_texts(self, value: dict[str, Any], fields: list[str]) -> list[str]:
        """One text per indexed path and list element (LangGraph embeds each; the best one scores)."""
        texts: list[str] = []
        for field in fields:
            texts.extend(t for t in get_text_at_path(value, tokenize_path(field) if field != "$" else "$") if t)
        return texts

    # ------------------------------------------------------------------ batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute ops: all are validated first, then puts, then reads in input order."""
        ops = list(ops)
        for op in ops:
            self._validate_op(op)
        results: list[Result] = [None] * len(ops)
        puts = [op for op in ops if isinstance(op, PutOp)]
        if puts:
            self._apply_puts(puts)
        for i, op in enumerate(ops):
            if not isinstance(op, PutOp):
                with self._client.session():
                    results[i] = self._buckets.retrying(lambda op=op: self._read(op))
        return results

    def _read(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        return self._list_namespaces(op)  # type: ignore[arg-type]

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

    def _apply_puts(self, ops: list[PutOp], *, records: bool = False) -> None:
        """Write ``ops`` (the last op per key wins); ``records``: they are memory records (``put_records``)."""
        latest: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            latest[(tuple(op.namespace), op.key)] = op
        by_ns: dict[tuple[str, ...], list[PutOp]] = {}
        for (ns, _), op in latest.items():
            by_ns.setdefault(ns, []).append(op)
        prepared = [(ns, group, self._vectors(group)) for ns, group in by_ns.items()]  # embedded before the lock
        with self._client.writing():
            self.current_generation()  # never a write into a generation another process retired
            for ns, group, vectors in prepared:
                self._buckets.retrying(
                    lambda ns=ns, group=group, vectors=vectors: self._write_namespace(ns, group, vectors, records)
                )

    def _vectors(self, group: list[PutOp]) -> dict[str, list[list[float]]]:
        texts: dict[str, list[str]] = {}
        for op in group:
            fields = self.index_fields if op.index is None else (op.index or [])
            if op.value is not None and self.index_enabled and fields:
                texts[op.key] = self._index_texts(dict(op.value), fields)
        flat = embed_texts(self.embeddings, [t for item in texts.values() for t in item], self.dims)
        out: dict[str, list[list[float]]] = {}
        for key, item in texts.items():
            if item:
                out[key], flat = flat[: len(item)], flat[len(item) :]
        return out

    def _write_namespace(
        self, ns: tuple[str, ...], group: list[PutOp], vectors: dict[str, list[list[float]]], records: bool
    ) -> None:
        sc = self._client
        before = self._buckets.revision(ns)
        upserts = [op for op in group if op.value is not None]
        if not upserts and before.token == ABSENT:  # deletes in a namespace never written: nothing to do
            return
        view = self._buckets.view(ns, create=True)
        assert view is not None
        keys = [op.key for op in group]
        old: dict[str, dict[str, Any]] = {}
        texts: dict[str, str] = {}
        if before.token != ABSENT:
            got = sc(lambda: view.get(ids=keys, include=["metadatas", "documents"]))
            old = dict(zip(got["ids"], got["metadatas"] or []))
            texts = dict(zip(got["ids"], got["documents"] or []))
        doomed = [k for op in group if op.value is None and (k := op.key) in old]
        if not doomed and not upserts:  # deletes of keys it does not hold: no new revision
            return
        if doomed:
            sc(lambda: view.delete(ids=doomed + [p for k in doomed for p in C.part_ids(k, old[k])]))
        rows = [self._row(op, old.get(op.key) or {}, vectors.get(op.key), before.seq + 1, records) for op in upserts]
        stale = [p for op, row in zip(upserts, rows) for p in C.part_ids(op.key, old.get(op.key))[len(row[3]) :]]
        sc.batched(view.upsert, [(*row[:3], C.dumps_value(dict(op.value or {}))) for op, row in zip(upserts, rows)])
        sc.batched(view.upsert, [part for row in rows for part in row[3]])
        if stale:
            sc(lambda: view.delete(ids=stale))
        if doomed or any(_text_changed(texts.get(op.key), op.value) for op in upserts):
            self.remove_snapshot_files(ns)  # they hold copies of texts that are gone now
        if doomed and not upserts and not sc(view.count):  # its last item went: the namespace is gone
            self._buckets.unregister(ns)
            return
        try:
            self._buckets.record_write(ns, before, deleted=bool(doomed))
        except StoreUnavailableError as e:
            msg = (
                f"{e} The items of {ns} reached Chroma, but not the namespace's new revision, so searches "
                "may not show them yet. Retry the write: it is idempotent, and the next write's revision covers both."
            )
            raise StoreUnavailableError(msg) from e
        self._after_write(ns, [op.key for op in group])

    def _row(
        self, op: PutOp, previous: dict[str, Any], vecs: list[list[float]] | None, seq: int, record: bool
    ) -> tuple[str, list[float], dict[str, Any], list[tuple[str, list[float], dict[str, Any]]]]:
        """``(key, vector, metadata, extra vector rows)`` of one upsert."""
        now = time.time()
        meta: dict[str, Any] = {
            C.SYS_KEY: op.key,
            C.SYS_CREATED: float(previous.get(C.SYS_CREATED, now)),
            C.SYS_UPDATED: now,
            C.SYS_SEQ: seq,
            C.SYS_INDEXED: bool(vecs),
            C.SYS_RECORD: record,
            C.SYS_FIELDS: json.dumps(self.index_fields if op.index is None else (op.index or [])),
        }
        if op.ttl is not None:  # ``BaseStore.put`` has applied the default; ``None`` never expires
            meta[C.SYS_TTL] = float(op.ttl)
            meta[C.SYS_EXPIRES] = now + float(op.ttl) * 60
        meta.update(C.flat_metadata(dict(op.value or {})))
        for gone in set(previous) - set(meta) - {C.SYS_NS}:
            meta[gone] = None  # Chroma merges metadata on upsert
        vecs = vecs or [[1.0] + [0.0] * (self.dims - 1)]
        parts = C.part_rows(op.key, vecs)
        if parts:
            meta[C.SYS_PARTS] = len(parts)
        return op.key, vecs[0], meta, parts

    def _after_write(self, ns: tuple[str, ...], keys: list[str]) -> None:
        """Hook for subclasses, after a namespace's rows were written."""

    # ------------------------------------------------------------------ maintenance
    def reindex(self, new_embeddings: Embeddings, **kwargs: Any) -> Any:
        """Re-embed everything with ``new_embeddings`` and switch atomically (see ``maintenance.reindex``)."""
        from langchain_lifecycle_memory.store.maintenance import reindex

        return reindex(self, new_embeddings, **kwargs)

    def compact(self, **kwargs: Any) -> Any:
        """Make deleted data unrecoverable from an embedded Chroma directory (``chroma vacuum``)."""
        from langchain_lifecycle_memory.store.maintenance import compact

        return compact(self, **kwargs)


def _text_changed(before: str | None, value: Any) -> bool:
    """Whether an upsert replaces an item's text (a record's content or value; any field of another item)."""
    if before is None:
        return False
    old = json.loads(before)
    if "content" in old and "content" in (value or {}):
        return any(old.get(f) != value.get(f) for f in ("content", "value"))
    return bool(old != value)
