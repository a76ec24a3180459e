"""The lifecycle-aware record API of the store (a mixin of ``ChromaRecordStore``).

Records are ordinary LangGraph items (value = ``record.to_value()``, indexed on ``content``); this
layer adds active-only reads, ``as_of`` validity, expiry, slot history and the snapshot rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import glob
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from langgraph.store.base import PutOp
from pydantic import ValidationError

from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus, ensure_aware, is_self_entity, utcnow
from langchain_lifecycle_memory.store import chroma as C
from langchain_lifecycle_memory.store._buckets import ABSENT, Revision
from langchain_lifecycle_memory.store.repair import slot_where
from langchain_lifecycle_memory.store.slots import resolve_at, resolve_current, slot_key

if TYPE_CHECKING:
    from langchain_lifecycle_memory.store._buckets import Buckets, Scoped
    from langchain_lifecycle_memory.store._client import StoreClient

__all__ = ["NamespaceRows", "RecordAPI", "parse_record"]

RECORD_INDEX = ["content"]
SNAPSHOT_FOLDER = "lifecycle-snapshots"
"""Folder next to an embedded store's database where the retriever keeps its snapshot files."""
PAGE = 1000
StatusArg = str | MemoryStatus | Iterable[str | MemoryStatus] | None
T = TypeVar("T")


def parse_record(namespace: tuple[str, ...], document: str | None) -> MemoryRecord | None:
    """A stored item → record, or ``None`` for items that are not records."""
    try:
        return MemoryRecord.from_value(namespace, json.loads(document or ""))
    except (ValidationError, ValueError, TypeError):
        return None


def synced(method: Callable[..., T]) -> Callable[..., T]:
    """A store read as one session: synced with other processes' writes, never cut by a reopen."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> T:
        with self._client.session():
            return self._buckets.retrying(lambda: method(self, *args, **kwargs))

    return wrapper


def _statuses(statuses: StatusArg) -> list[str] | None:
    if statuses is None:
        return None
    if isinstance(statuses, (str, MemoryStatus)):
        statuses = [statuses]
    try:
        return [MemoryStatus(s).value for s in statuses]
    except ValueError:
        known = ", ".join(repr(s.value) for s in MemoryStatus)
        msg = f"Unknown status in {statuses!r}; a record's status is one of {known} (None: all of them)."
        raise ValueError(msg) from None


def _expired_view(record: MemoryRecord, now: datetime) -> MemoryRecord:
    """A live record past its deadline, as a sweep would store it: archived, true until the deadline."""
    if record.status is MemoryStatus.ARCHIVED or record.expires_at is None or record.expires_at > now:
        return record
    end = max(record.valid_from, min(record.expires_at, record.valid_to or record.expires_at))
    return record.transition(MemoryStatus.ARCHIVED, at=record.expires_at, valid_to=end)


@dataclass
class NamespaceRows:
    """A namespace's record rows as stored: ids, documents, vectors, and the revision they reflect."""

    revision: Revision
    ids: list[str]
    documents: list[str]
    vectors: np.ndarray
    """One row per record, ``float32``."""


class RecordAPI:
    """Record-level operations; mixed into ``ChromaRecordStore``."""

    if TYPE_CHECKING:
        embeddings: Any
        prefix: str
        generation: int
        dims: int
        _client: StoreClient
        _buckets: Buckets

        def _view(self, namespace: tuple[str, ...], *, create: bool = False) -> Scoped | None: ...
        def _apply_puts(self, ops: list[PutOp], *, records: bool = False) -> None: ...
        @property
        def persist_directory(self) -> str | None:  # noqa: D102
            ...

    snapshot_dir: str | None = None
    """Folder for the retriever's snapshot files; default: next to an embedded store's database, else none."""

    # ------------------------------------------------------------------ files the read side keeps
    def snapshot_path(self, namespace: tuple[str, ...], generation: int | None = None) -> str | None:
        """Where the retriever may keep ``namespace``'s snapshot file (``None``: nowhere)."""
        folder = self.snapshot_dir
        if folder is None and self.persist_directory:
            folder = os.path.join(self.persist_directory, SNAPSHOT_FOLDER)
        if folder is None:
            return None
        key = json.dumps([self.prefix, self.generation if generation is None else generation, list(namespace)])
        return os.path.join(folder, hashlib.sha256(key.encode("utf-8")).hexdigest()[:40] + ".npz")

    def remove_snapshot_files(self, namespace: tuple[str, ...], generation: int | None = None) -> int:
        """Remove ``namespace``'s snapshot files (they hold copies of its texts); returns how many."""
        path = self.snapshot_path(namespace, generation)
        removed = 0
        if path is not None:
            for name in glob.glob(glob.escape(os.path.splitext(path)[0]) + ".*"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(name)
                    removed += 1
        return removed

    # ------------------------------------------------------------------ writes
    def put_records(self, records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
        """Upsert records (by id) in one batch; every record is validated before any write."""
        records = list(records)
        for r in records:
            if not isinstance(r, MemoryRecord):
                msg = f"put_records takes MemoryRecord objects, got {type(r).__name__}."
                raise TypeError(msg)
        ops = [PutOp(C.validate_namespace(r.namespace), r.id, r.to_value(), index=RECORD_INDEX) for r in records]
        if ops:
            self._apply_puts(ops, records=True)
        return records

    def put_record(self, record: MemoryRecord) -> MemoryRecord:
        """Upsert one record."""
        return self.put_records([record])[0]

    def delete_keys(self, namespace: tuple[str, ...], keys: Sequence[str]) -> None:
        """Hard-delete items (records or not) by key."""
        if keys:
            self._apply_puts([PutOp(tuple(namespace), k, None) for k in keys])

    def delete_records(self, namespace: tuple[str, ...], ids: Sequence[str]) -> int:
        """Hard-delete records by id; returns how many existed."""
        namespace = C.validate_namespace(namespace)
        with self._client.session():
            view = self._view(namespace)
            found = self._client(lambda: view.get(ids=list(ids), include=[]))["ids"] if view and ids else []
        self.delete_keys(namespace, found)
        return len(found)

    def purge(self, namespace_prefix: tuple[str, ...]) -> int:
        """Hard-delete every item under ``namespace_prefix`` (all statuses, all history)."""
        prefix = C.validate_namespace(namespace_prefix, what="namespace prefix")
        removed = 0
        with self._client.writing():
            for ns in self._buckets.namespaces(prefix):
                view = self._buckets.view(ns)
                if view is not None:
                    removed += int(self._client(view.count))
                    self._client(view.delete)
                self._buckets.unregister(ns)
                self.remove_snapshot_files(ns)  # the purged records leave no copy behind
        return removed

    # ------------------------------------------------------------------ reads
    @synced
    def namespaces(self, prefix: Sequence[str] = ()) -> list[tuple[str, ...]]:
        """Every namespace under ``prefix`` (literal labels) that holds items, sorted."""
        return self._buckets.namespaces(C.validate_namespace(tuple(prefix), allow_empty=True, what="namespace prefix"))

    @synced
    def revision(self, namespace: tuple[str, ...]) -> Revision:
        """The namespace's revision: changes with every write, by any process or client."""
        return self._buckets.revision(tuple(namespace))

    @synced
    def namespace_rows(self, namespace: tuple[str, ...], since: int | None = None) -> NamespaceRows:
        """The namespace's rows (plain items too) with their vectors, only those written at or after ``since``.

        No record filter is asked of Chroma: a second ``where`` clause scans the whole bucket.
        """
        ns = C.validate_namespace(namespace)
        revision = self.revision(ns)
        view = None if revision.token == ABSENT else self._view(ns)
        if view is None:
            return NamespaceRows(revision, [], [], np.zeros((0, self.dims), dtype=np.float32))
        where = None if since is None else {C.SYS_SEQ: {"$gte": since}}
        got = self._client(lambda: view.get(where=where, include=["documents", "embeddings"]))
        docs = [d or "" for d in got["documents"]]
        vectors = np.asarray(got["embeddings"] if docs else np.zeros((0, self.dims)), dtype=np.float32)
        return NamespaceRows(revision, list(got["ids"]), docs, vectors.reshape(len(docs), -1))

    @synced
    def get_record(self, namespace: tuple[str, ...], record_id: str) -> MemoryRecord | None:
        """One record by id, or ``None``."""
        ns = C.validate_namespace(namespace)
        view = self._view(ns)
        if view is None:
            return None
        got = self._client(lambda: view.get(ids=[C.validate_key(record_id)], include=["documents"]))
        return parse_record(ns, got["documents"][0]) if got["ids"] else None

    def find_records(self, namespace: tuple[str, ...], where: dict[str, Any] | None = None) -> list[MemoryRecord]:
        """Records of ``namespace`` matching a Chroma ``where`` on the mirrored fields (``chroma.FLAT_PREFIX``)."""
        return list(self._pages(C.validate_namespace(namespace), where, PAGE))

    def list_records(
        self,
        namespace: tuple[str, ...],
        *,
        statuses: StatusArg = None,
        entity: str | None = None,
        attribute: str | None = None,
        kinds: str | Iterable[str] | None = None,
        limit: int | None = None,
        resolve: bool = True,
        now: datetime | str | None = None,
    ) -> list[MemoryRecord]:
        """Records of exactly ``namespace`` (all statuses by default), oldest first, as readers see them.

        Slots resolve to one current value and records past their deadline at ``now`` read as
        archived; ``resolve=False`` returns the records exactly as stored.
        """
        wanted = _statuses(statuses)
        st = wanted
        if resolve and wanted is not None and MemoryStatus.ARCHIVED.value in wanted:
            st = sorted({*wanted, MemoryStatus.ACTIVE.value, MemoryStatus.PENDING.value})  # may read as archived
        records = list(self.iter_records(namespace, statuses=st, entity=entity, attribute=attribute, kinds=kinds))
        if resolve:
            when = ensure_aware(now) or utcnow()
            records = [_expired_view(r, when) for r in resolve_current(records)]
            if wanted is not None:
                records = [r for r in records if r.status.value in wanted]
        records.sort(key=lambda r: (r.created_at, r.valid_from, r.content, r.id))  # a turn's records: by statement
        return records[:limit] if limit is not None else records

    def iter_records(
        self,
        namespace: tuple[str, ...],
        *,
        statuses: StatusArg = None,
        entity: str | None = None,
        attribute: str | None = None,
        kinds: str | Iterable[str] | None = None,
        page_size: int = PAGE,
    ) -> Iterator[MemoryRecord]:
        """Records of exactly ``namespace`` as stored (no slot resolution), read ``page_size`` at a time."""
        namespace = C.validate_namespace(namespace)
        if page_size < 1:
            msg = f"page_size must be >= 1, got {page_size}."
            raise ValueError(msg)
        st, kd = _statuses(statuses), [kinds] if isinstance(kinds, str) else None if kinds is None else list(kinds)
        records = self._pages(namespace, None, page_size)  # filtered here: see ``namespace_rows``
        return (
            r
            for r in records
            if (st is None or r.status.value in st)
            and (entity is None or r.entity == entity)
            and (attribute is None or r.attribute == attribute)
            and (kd is None or r.kind in kd)
        )

    def _pages(self, namespace: tuple[str, ...], where: dict[str, Any] | None, size: int) -> Iterator[MemoryRecord]:
        offset = 0
        while True:
            with self._client.session():  # a page at a time: the consumer may take its time in between
                got = self._buckets.retrying(lambda o=offset: self._page(namespace, where, size, o))  # type: ignore[misc]
            yield from (r for d in got["documents"] if (r := parse_record(namespace, d)) is not None)
            if len(got["ids"]) < size:
                return
            offset += size

    def _page(self, namespace: tuple[str, ...], where: dict[str, Any] | None, size: int, offset: int) -> Any:
        view = self._view(namespace)
        if view is None:
            return {"ids": [], "documents": []}
        return self._client(lambda: view.get(where=where, include=["documents"], limit=size, offset=offset))

    @synced
    def slot_catalogue(self, namespace: tuple[str, ...]) -> list[dict[str, Any]]:
        """One dict per active/pending slot record of ``namespace`` (entity, attribute, value, cardinality, status).

        Read from the mirrored fields alone: no record is parsed.
        """
        fields = ("entity", "attribute", "value", "cardinality", "status")
        live = self._live_fields(namespace, {C.FLAT_PREFIX + "cardinality": {"$in": ["single", "set"]}}, fields)
        return [r for r in live if r["entity"] and r["attribute"]]

    def people(self, namespace: tuple[str, ...]) -> list[str]:
        """The entities other than the user that live records of ``namespace`` are about (``sister_kasia``...)."""
        live = self._live_fields(namespace, {C.FLAT_PREFIX + "entity": {"$nin": ["user", ""]}}, ("entity",))
        return list(dict.fromkeys(str(r["entity"]) for r in live if not is_self_entity(r["entity"])))

    def _live_fields(
        self, namespace: tuple[str, ...], where: dict[str, Any], fields: tuple[str, ...]
    ) -> list[dict[str, Any]]:
        """``fields`` of the active/pending records of ``namespace`` that match ``where``, from mirrored metadata."""
        view = self._view(C.validate_namespace(namespace))
        if view is None:
            return []
        live = {"$and": [where, {C.FLAT_PREFIX + "status": {"$ne": MemoryStatus.ARCHIVED.value}}]}
        got = self._client(lambda: view.get(where=live, include=["metadatas"]))
        return [{f: (m or {}).get(C.FLAT_PREFIX + f) for f in fields} for m in got["metadatas"]]

    def history(
        self, namespace: tuple[str, ...], entity: str, attribute: str, *, now: datetime | str | None = None
    ) -> list[MemoryRecord]:
        """Every version of the slot ``(entity, attribute)``, oldest first, as of ``now`` (default: now)."""
        records = self.list_records(namespace, entity=entity, attribute=attribute, now=now)
        return sorted(records, key=lambda r: (r.valid_from, r.created_at))

    @synced
    def count_records(self, namespace: tuple[str, ...], *, statuses: StatusArg = None) -> int:
        """How many records a namespace holds (optionally of some statuses)."""
        if statuses is None:
            view = self._view(C.validate_namespace(namespace))
            if view is None:
                return 0
            return sum(
                bool((m or {}).get(C.SYS_RECORD))
                for m in self._client(lambda: view.get(include=["metadatas"]))["metadatas"]
            )
        return len(self.list_records(namespace, statuses=statuses))

    def search_records(
        self,
        namespace: tuple[str, ...],
        query: str | None = None,
        *,
        embedding: Sequence[float] | None = None,
        k: int = 10,
        statuses: StatusArg = (MemoryStatus.ACTIVE,),
        as_of: datetime | str | None = None,
        now: datetime | str | None = None,
        include_expired: bool = False,
    ) -> list[tuple[MemoryRecord, float]]:
        """Dense search in ``namespace`` alone: ``(record, cosine similarity)`` best first.

        Default: active, unexpired records; ``as_of=t``: records valid at ``t``. One version per slot.
        """
        namespace = C.validate_namespace(namespace)
        if query is None and embedding is None:
            msg = "search_records needs a `query` string or a precomputed `embedding`."
            raise ValueError(msg)
        if k <= 0:
            return []
        vector = list(embedding) if embedding is not None else self.embeddings.embed_query(query)  # not under the lock
        with self._client.session():  # synced with other processes' writes first, as every read
            view = self._view(namespace)
            if view is None:
                return []
            at, when = ensure_aware(as_of), ensure_aware(now) or utcnow()
            wanted = [MemoryStatus.ACTIVE.value, MemoryStatus.ARCHIVED.value] if at is not None else _statuses(statuses)
            where: dict[str, Any] = {C.SYS_RECORD: True}
            if wanted is not None:
                where = {"$and": [where, {C.FLAT_PREFIX + "status": {"$in": wanted}}]}
            n = max(1, min(4 * k + 10, self._client(view.count)))
            res = self._client(
                lambda: view.query(
                    query_embeddings=[vector], n_results=n, where=where, include=["documents", "distances"]
                )
            )
            hits = [
                (r, 1.0 - float(dist))
                for doc, dist in zip(res["documents"][0], res["distances"][0])
                if (r := parse_record(namespace, doc)) is not None
                and (include_expired or not r.is_expired(when))
                and (at is None or r.is_valid_at(at))
            ]
            view_of = {
                r.id: r for r in (resolve_at([r for r, _ in hits], at) if at else self._current(namespace, hits))
            }
            live = tuple(MemoryStatus(s) for s in wanted or ())  # as_of: active and archived
            out = [
                (view_of[r.id], s) for r, s in hits if r.id in view_of and (not live or view_of[r.id].status in live)
            ]
            return out[:k]

    def _current(self, namespace: tuple[str, ...], hits: list[tuple[MemoryRecord, float]]) -> list[MemoryRecord]:
        """The hits as readers see them, with the other active versions of their slots taken into account."""
        slots = sorted({key[1:] for r, _ in hits if (key := slot_key(r)) is not None})
        if not slots:
            return [r for r, _ in hits]
        where = {"$and": [slot_where(slots), {C.FLAT_PREFIX + "status": "active"}]}
        versions = {r.id: r for r in self.find_records(namespace, where)}
        versions.update({r.id: r for r, _ in hits if r.id not in versions})
        return resolve_current(list(versions.values()))

    # ------------------------------------------------------------------ async twins
    async def aput_records(self, records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
        """Async :meth:`put_records`."""
        return await asyncio.to_thread(self.put_records, records)

    async def alist_records(self, namespace: tuple[str, ...], **kwargs: Any) -> list[MemoryRecord]:
        """Async :meth:`list_records`."""
        return await asyncio.to_thread(lambda: self.list_records(namespace, **kwargs))

    async def apurge(self, namespace_prefix: tuple[str, ...]) -> int:
        """Async :meth:`purge`."""
        return await asyncio.to_thread(self.purge, namespace_prefix)
