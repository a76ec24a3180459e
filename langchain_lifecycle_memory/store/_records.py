"""The lifecycle-aware record API of ``ChromaMemoryStore`` (a mixin).

Records are ordinary LangGraph items (key = record id, value = ``record.to_value()``,
indexed on ``content``), so a graph that uses the plain ``BaseStore`` API sees them too.
This layer adds what LangGraph filters can't say: active-only by default, point-in-time
(``as_of``) validity, record-level expiry and slot history.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from langgraph.store.base import GetOp, PutOp
from pydantic import ValidationError

from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus, ensure_aware, utcnow
from langchain_lifecycle_memory.store import chroma as C
from langchain_lifecycle_memory.store._namespace_reads import LIST_PAGE, NamespaceReads, parse_record
from langchain_lifecycle_memory.store.slots import resolve_at, resolve_current, slot_key

if TYPE_CHECKING:
    from collections.abc import Callable

RECORD_INDEX = ["content"]
SNAPSHOT_FOLDER = "lifecycle-snapshots"
"""Folder next to an embedded store's database that holds the retriever's snapshot sidecars."""
StatusArg = str | MemoryStatus | Iterable[str | MemoryStatus] | None


def _statuses(statuses: StatusArg) -> list[str] | None:
    if statuses is None:
        return None
    if isinstance(statuses, (str, MemoryStatus)):
        statuses = [statuses]
    return [MemoryStatus(s).value for s in statuses]


def _kinds(kinds: str | Iterable[str] | None) -> list[str] | None:
    if kinds is None:
        return None
    return [kinds] if isinstance(kinds, str) else list(kinds)


class RecordAPI(NamespaceReads):
    """Record-level operations; mixed into ``ChromaMemoryStore``."""

    if TYPE_CHECKING:
        embeddings: Any
        client: Any
        _layout: Any

        def batch(self, ops: Iterable[Any]) -> list[Any]: ...
        def _col(self, namespace: tuple[str, ...], *, create: bool = False) -> Any | None: ...
        def _reader(self, namespace: tuple[str, ...]) -> Any | None: ...
        def _namespaces(
            self, generation: int | None = None, prefix: tuple[str, ...] = ()
        ) -> list[tuple[tuple[str, ...], Any]]: ...
        def _guard(self, fn: Callable[[], Any]) -> Any: ...
        def _bump(self, namespace: tuple[str, ...], changes: list[tuple[str, Any]] | None = None) -> None: ...
        def query_rows(
            self,
            col: Any,
            vector: list[float],
            need: int,
            accept: Callable[[dict[str, Any], str | None], bool],
            where: dict[str, Any] | None = None,
            *,
            with_documents: bool = True,
        ) -> list[tuple[str, str | None, dict[str, Any], float]]: ...

        _cols: dict[tuple[str, ...], Any]
        _local_db: str | None
        prefix: str
        generation: int

    direct_reads: bool = True
    """Read a namespace in full from an embedded store's SQLite file (see ``_sqlite_read``)."""
    snapshot_dir: str | None = None
    """Folder for the retriever's snapshot sidecars; default: next to an embedded persistent
    store's database, none for other clients (set a local folder to opt in)."""

    def snapshot_path(self, namespace: tuple[str, ...], generation: int | None = None) -> str | None:
        """Where the retriever may keep ``namespace``'s snapshot sidecar (``None``: nowhere).

        ``generation``: the file of another generation than the current one (a reindex
        removes the old generation's files).
        """
        folder = self.snapshot_dir
        if folder is None and getattr(self, "_local_db", None):
            folder = os.path.join(os.path.dirname(str(self._local_db)), SNAPSHOT_FOLDER)
        if folder is None:
            return None
        key = json.dumps([self.prefix, self.generation if generation is None else generation, list(namespace)])
        return os.path.join(folder, hashlib.sha256(key.encode("utf-8")).hexdigest()[:40] + ".npz")

    def remove_snapshot_files(self, namespace: tuple[str, ...], generation: int | None = None) -> int:
        """Remove ``namespace``'s sidecar files (snapshot, delta, episode vectors); returns how many."""
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
        self.batch([PutOp(r.namespace, r.id, r.to_value(), index=RECORD_INDEX) for r in records])
        return records

    def put_record(self, record: MemoryRecord) -> MemoryRecord:
        """Upsert one record."""
        return self.put_records([record])[0]

    def delete_records(self, namespace: tuple[str, ...], ids: Sequence[str]) -> int:
        """Hard-delete records by id; returns how many existed."""
        namespace = C.validate_namespace(namespace)
        col = self._col(namespace)
        if col is None or not ids:
            return 0
        found = self._guard(lambda: col.get(ids=list(ids), include=[]))["ids"]
        if found:
            self.batch([PutOp(namespace, i, None) for i in found])
        return len(found)

    def purge(self, namespace_prefix: tuple[str, ...]) -> int:
        """Hard-delete every item under ``namespace_prefix`` (all statuses, all history)."""
        prefix = C.validate_namespace(namespace_prefix, what="namespace prefix")
        removed = 0
        for ns, col in self._namespaces(prefix=prefix):
            removed += self._layout.drop(self, ns, col)
            self._cols.pop(ns, None)
            self._bump(ns)
            self.remove_snapshot_files(ns)  # the purged records leave no copy behind
        return removed

    # ------------------------------------------------------------------ reads
    def get_record(self, namespace: tuple[str, ...], record_id: str) -> MemoryRecord | None:
        """One record by id, or ``None``."""
        item = self.batch([GetOp(tuple(namespace), record_id, refresh_ttl=False)])[0]
        if item is None:
            return None
        try:
            return MemoryRecord.from_value(item.namespace, item.value)
        except ValidationError:
            return None

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
    ) -> list[MemoryRecord]:
        """Records of exactly ``namespace`` (all statuses by default), oldest first.

        A single-valued slot shows one current value even while a write is half done or
        after two writers raced (``slots.resolve_current``); ``resolve=False`` returns the
        records exactly as stored (for repair and diagnostics). Read in pages.
        """
        wanted = _statuses(statuses)
        st = wanted
        if resolve and wanted is not None and MemoryStatus.ARCHIVED.value in wanted:
            st = sorted({*wanted, MemoryStatus.ACTIVE.value})  # an outranked active record reads as archived
        pages = self.iter_records(
            namespace, statuses=st, entity=entity, attribute=attribute, kinds=kinds, page_size=LIST_PAGE
        )
        records = list(pages)
        if resolve:
            records = resolve_current(records)
            if wanted is not None:
                records = [r for r in records if r.status.value in wanted]
        records.sort(key=lambda r: (r.created_at, r.valid_from, r.id))
        return records[:limit] if limit is not None else records

    def iter_records(
        self,
        namespace: tuple[str, ...],
        *,
        statuses: StatusArg = None,
        entity: str | None = None,
        attribute: str | None = None,
        kinds: str | Iterable[str] | None = None,
        page_size: int = 1000,
    ) -> Iterator[MemoryRecord]:
        """Records of exactly ``namespace`` as stored (no slot resolution), read ``page_size`` at a time.

        Memory stays constant in the number of records (``export`` streams through
        this). Pages are ``limit``/``offset`` reads, so records written or deleted while
        iterating may be skipped or seen twice; ``list_records`` sorts a complete read.
        """
        namespace = C.validate_namespace(namespace)
        if page_size < 1:
            msg = f"page_size must be >= 1, got {page_size}."
            raise ValueError(msg)
        clauses: list[dict[str, Any]] = []
        if (st := _statuses(statuses)) is not None:
            clauses.append({C.FLAT_PREFIX + "status": {"$in": st}})
        if entity is not None:
            clauses.append({C.FLAT_PREFIX + "entity": entity})
        if attribute is not None:
            clauses.append({C.FLAT_PREFIX + "attribute": attribute})
        if (kd := _kinds(kinds)) is not None:
            clauses.append({C.FLAT_PREFIX + "kind": {"$in": kd}})
        return self._pages(namespace, C.where_and(clauses), page_size)

    def _pages(self, namespace: tuple[str, ...], where: dict[str, Any] | None, size: int) -> Iterator[MemoryRecord]:
        return (record for record, _ in self._documents(namespace, where, size))

    def _raw_documents(self, namespace: tuple[str, ...], where: dict[str, Any] | None, size: int) -> Iterator[str]:
        col = self._col(namespace)
        offset = 0
        while col is not None:
            got = self._guard(
                lambda o=offset: col.get(where=where, include=["documents"], limit=size, offset=o)  # type: ignore[misc]
            )
            yield from (document for document in got["documents"] if document is not None)
            if len(got["ids"]) < size:
                return
            offset += size

    def _documents(
        self, namespace: tuple[str, ...], where: dict[str, Any] | None, size: int
    ) -> Iterator[tuple[MemoryRecord, str]]:
        for document in self._raw_documents(namespace, where, size):
            if (record := parse_record(namespace, document)) is not None:
                yield record, document

    def slot_catalogue(self, namespace: tuple[str, ...]) -> list[dict[str, Any]]:
        """The live slots of ``namespace`` from the index alone (no record is parsed).

        One row per active/pending slot record: ``entity``, ``attribute``, ``value``,
        ``cardinality``, ``status``. Only records that carry ``cardinality`` (every slot
        record written by the update step) are listed.
        """
        col = self._col(C.validate_namespace(namespace))
        if col is None:
            return []
        where = C.where_and(
            [
                {C.FLAT_PREFIX + "cardinality": {"$in": ["single", "set"]}},
                {C.FLAT_PREFIX + "status": {"$ne": MemoryStatus.ARCHIVED.value}},
            ]
        )
        got = self._guard(lambda: col.get(where=where, include=["metadatas"]))
        fields = ("entity", "attribute", "value", "cardinality", "status")
        rows = [{f: (m or {}).get(C.FLAT_PREFIX + f) for f in fields} for m in got["metadatas"]]
        return [r for r in rows if r["entity"] and r["attribute"]]

    def history(self, namespace: tuple[str, ...], entity: str, attribute: str) -> list[MemoryRecord]:
        """Every version of the slot ``(entity, attribute)``, oldest first."""
        records = self.list_records(namespace, entity=entity, attribute=attribute)
        return sorted(records, key=lambda r: (r.valid_from, r.created_at))

    def count_records(self, namespace: tuple[str, ...], *, statuses: StatusArg = None) -> int:
        """How many records a namespace holds (optionally of some statuses)."""
        if statuses is None:
            col = self._col(C.validate_namespace(namespace))
            return 0 if col is None else int(self._guard(col.count))
        return len(self.list_records(namespace, statuses=statuses))

    def search_records(
        self,
        namespace: tuple[str, ...],
        query: str | None = None,
        *,
        embedding: Sequence[float] | None = None,
        k: int = 10,
        statuses: StatusArg = (MemoryStatus.ACTIVE,),
        kinds: str | Iterable[str] | None = None,
        as_of: datetime | str | None = None,
        now: datetime | str | None = None,
        include_expired: bool = False,
        resolve: bool = True,
    ) -> list[tuple[MemoryRecord, float]]:
        """Dense search in ``namespace``: ``(record, cosine similarity)`` best first.

        By default only ``active``, unexpired records. ``as_of=t`` answers "what was true
        at t": active or archived records with ``valid_from <= t < valid_to``. A slot's
        outranked version is never returned beside its current one (``resolve=False``:
        as stored).
        """
        namespace = C.validate_namespace(namespace)
        if query is None and embedding is None:
            msg = "search_records needs a `query` string or a precomputed `embedding`."
            raise ValueError(msg)
        if k <= 0:
            return []
        col = self._col(namespace)
        if col is None:
            return []
        vector = list(embedding) if embedding is not None else self.embeddings.embed_query(query)
        at = ensure_aware(as_of)
        when = (ensure_aware(now) or utcnow()).timestamp()
        wanted = [MemoryStatus.ACTIVE.value, MemoryStatus.ARCHIVED.value] if at is not None else _statuses(statuses)
        kind_list = _kinds(kinds)
        at_s = at.timestamp() if at is not None else None

        def accept(meta: dict[str, Any], _doc: str | None) -> bool:
            # Decided on metadata alone: parsing a record costs more than the query.
            status = meta.get(C.FLAT_PREFIX + "status")
            if status is None or (wanted is not None and status not in wanted):
                return False
            if kind_list is not None and meta.get(C.FLAT_PREFIX + "kind") not in kind_list:
                return False
            if at_s is not None:
                start, end = meta.get(C.TIME_PREFIX + "valid_from"), meta.get(C.TIME_PREFIX + "valid_to")
                if start is None or start > at_s or (end is not None and at_s >= end):
                    return False
            expires = meta.get(C.TIME_PREFIX + "expires_at")
            return include_expired or expires is None or expires > when

        clauses: list[dict[str, Any]] = []
        if wanted is not None:
            clauses.append({C.FLAT_PREFIX + "status": {"$in": wanted}})
        if kind_list is not None:
            clauses.append({C.FLAT_PREFIX + "kind": {"$in": kind_list}})
        rows = self.query_rows(col, vector, k, accept, where=C.where_and(clauses), with_documents=False)[:k]
        if not rows:
            return []
        got = self._guard(lambda: col.get(ids=[r[0] for r in rows], include=["documents"]))
        by_id = dict(zip(got["ids"], got["documents"]))
        out = []
        for rid, _, _, score in rows:
            record = parse_record(namespace, by_id.get(rid) or "")
            if record is not None:
                out.append((record, score))
        return self._resolve_hits(col, namespace, out, at) if resolve else out

    def _resolve_hits(
        self, col: Any, namespace: tuple[str, ...], hits: list[tuple[MemoryRecord, float]], at: datetime | None
    ) -> list[tuple[MemoryRecord, float]]:
        """Drop hits that another version of their slot outranks (read with one ``get``)."""
        live = (MemoryStatus.ACTIVE,) if at is None else (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED)
        slots = sorted({key[1:] for r, _ in hits if r.status in live and (key := slot_key(r)) is not None})
        if not slots:
            return hits
        by_slot = [{"$and": [{C.FLAT_PREFIX + "entity": e}, {C.FLAT_PREFIX + "attribute": a}]} for e, a in slots]
        clauses: list[dict[str, Any]] = [by_slot[0] if len(by_slot) == 1 else {"$or": by_slot}]
        if at is None:
            clauses.append({C.FLAT_PREFIX + "status": MemoryStatus.ACTIVE.value})
        got = self._guard(lambda: col.get(where=C.where_and(clauses), include=["documents"]))
        versions = [r for d in got["documents"] if (r := parse_record(namespace, d)) is not None]
        view = {r.id: r for r in (resolve_current(versions) if at is None else resolve_at(versions, at))}
        out = []
        for record, score in hits:
            if slot_key(record) is None or record.status not in live:
                out.append((record, score))
            elif record.id in view and (at is not None or view[record.id].status is MemoryStatus.ACTIVE):
                out.append((view[record.id], score))
        return out

    # ------------------------------------------------------------------ async twins
    async def aput_records(self, records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
        """Async :meth:`put_records`."""
        return await asyncio.to_thread(self.put_records, records)

    async def aput_record(self, record: MemoryRecord) -> MemoryRecord:
        """Async :meth:`put_record`."""
        return await asyncio.to_thread(self.put_record, record)

    async def aget_record(self, namespace: tuple[str, ...], record_id: str) -> MemoryRecord | None:
        """Async :meth:`get_record`."""
        return await asyncio.to_thread(self.get_record, namespace, record_id)

    async def alist_records(self, namespace: tuple[str, ...], **kwargs: Any) -> list[MemoryRecord]:
        """Async :meth:`list_records`."""
        return await asyncio.to_thread(lambda: self.list_records(namespace, **kwargs))

    async def asearch_records(
        self, namespace: tuple[str, ...], query: str | None = None, **kwargs: Any
    ) -> list[tuple[MemoryRecord, float]]:
        """Async :meth:`search_records`."""
        return await asyncio.to_thread(lambda: self.search_records(namespace, query, **kwargs))

    async def ahistory(self, namespace: tuple[str, ...], entity: str, attribute: str) -> list[MemoryRecord]:
        """Async :meth:`history`."""
        return await asyncio.to_thread(self.history, namespace, entity, attribute)

    async def apurge(self, namespace_prefix: tuple[str, ...]) -> int:
        """Async :meth:`purge`."""
        return await asyncio.to_thread(self.purge, namespace_prefix)
