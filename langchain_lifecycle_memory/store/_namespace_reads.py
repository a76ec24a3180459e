"""How the retriever reads a whole namespace: stored documents, small namespaces with vectors, nearest ids.

A mixin of the record API (:class:`~langchain_lifecycle_memory.store._records.RecordAPI`):
the full read comes from an embedded store's SQLite file when it can vouch for it
(``_sqlite_read``), else through Chroma's API in pages; a small namespace is read with its
vectors in one ``get``; nearest ids take the unfiltered bucket query when it pays.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import ValidationError

from langchain_lifecycle_memory.schema import MemoryRecord
from langchain_lifecycle_memory.store import chroma as C
from langchain_lifecycle_memory.store import memtrim
from langchain_lifecycle_memory.store._bucket_query import nearest_in_bucket
from langchain_lifecycle_memory.store._handles import Handle, cosines
from langchain_lifecycle_memory.store._scoped import Scoped
from langchain_lifecycle_memory.store._sqlite_read import file_stamp, read_documents, rows_over
from langchain_lifecycle_memory.store.gcpause import paused_gc

__all__ = ["EXACT_SCAN_ROWS", "LIST_PAGE", "NamespaceReads", "SmallRead", "parse_record"]

LIST_PAGE = 1000
"""Records per Chroma read when listing. Chroma keeps memory in proportion to its largest
response: reading 50k records in pages of 1,000 grew the process by 112 MB, in pages of
5,000 by 201 MB and of 25,000 by 649 MB, in about the same time."""
EXACT_SCAN_ROWS = 4096
"""The most rows ``complete_nearest`` scans to find what Chroma's index could not reach."""
SmallRead = tuple[list[MemoryRecord], list[str], tuple[list[str], np.ndarray]]
"""``read_small_namespace``: records, their documents, and ``(ids, vectors)`` of every row."""


def parse_record(namespace: tuple[str, ...], document: str) -> MemoryRecord | None:
    """A stored item → record, or ``None`` for items that are not records."""
    try:
        return MemoryRecord.from_value(namespace, json.loads(document))
    except (ValidationError, ValueError, TypeError):
        return None


class NamespaceReads:
    """The whole-namespace reads (documents, small namespaces with vectors) and the nearest ids."""

    if TYPE_CHECKING:  # what the store provides
        direct_reads: bool
        trim_memory: bool
        _local_db: str | None

        def _col(self, namespace: tuple[str, ...], *, create: bool = False) -> Any | None: ...
        def _reader(self, namespace: tuple[str, ...]) -> Any | None: ...
        def _guard(self, fn: Callable[[], Any]) -> Any: ...
        def _raw_documents(
            self, namespace: tuple[str, ...], where: dict[str, Any] | None, size: int
        ) -> Iterator[str]: ...

    def namespace_documents(self, namespace: tuple[str, ...]) -> list[str]:
        """Every stored JSON document of exactly ``namespace`` (records and plain items), unparsed, in no order.

        From an embedded store's SQLite file when it can vouch for them (``stored_documents``),
        else through Chroma's API in pages. The retriever's full read: it decodes the
        records itself (``read._decode``) rather than validating a model per document.
        """
        namespace = C.validate_namespace(namespace)
        with paused_gc():  # a few objects per record, all kept: the collector's scans would only slow this
            documents = self.stored_documents(namespace)
            out = (
                list(documents.values())
                if documents is not None
                else list(self._raw_documents(namespace, None, LIST_PAGE))
            )
        if self.trim_memory:
            memtrim.note_read()
        return out

    async def anamespace_documents(self, namespace: tuple[str, ...]) -> list[str]:
        """Async :meth:`namespace_documents`."""
        return await asyncio.to_thread(self.namespace_documents, namespace)

    def read_namespace(self, namespace: tuple[str, ...]) -> tuple[list[MemoryRecord], list[str]]:
        """Every record of exactly ``namespace`` as stored, oldest first, and its stored JSON document.

        ``list_records(namespace, resolve=False)`` plus the documents (:meth:`namespace_documents`,
        each validated into a ``MemoryRecord``).
        """
        namespace = C.validate_namespace(namespace)
        with paused_gc():
            documents = self.namespace_documents(namespace)
            found = ((r, d) for d in documents if (r := parse_record(namespace, d)) is not None)
            pairs = sorted(found, key=lambda p: (p[0].created_at, p[0].valid_from, p[0].id))
            return [r for r, _ in pairs], [d for _, d in pairs]

    def stored_documents(self, namespace: tuple[str, ...]) -> dict[str, str] | None:
        """``{key: stored JSON document}`` of exactly ``namespace``, read from an embedded store's SQLite file.

        ``None`` where that cannot be done (another client, ``direct_reads = False``, a
        write overlapping the read): read through Chroma instead. Nothing is parsed.
        """
        namespace = C.validate_namespace(namespace)
        found = self._in_file(self._col(namespace))
        return found if found is None or found == {} else read_documents(*found)

    def rows_over(self, namespace: tuple[str, ...], limit: int) -> bool:
        """Whether an embedded store's SQLite file holds more than ``limit`` rows of ``namespace``.

        Reads at most ``limit + 1`` index entries (~0.1 ms). ``False`` also when that cannot
        be told (another client, a write in progress): the caller reads as if it might not.
        """
        found = self._in_file(self._reader(C.validate_namespace(namespace)))
        return bool(found) and bool(rows_over(*found, limit))  # type: ignore[misc]

    def _in_file(self, col: Any) -> tuple[str, str, str | None] | dict[str, str] | None:
        """``(database path, collection id, tenant or None)`` of a namespace's rows.

        ``{}``: the namespace has no rows; ``None``: they cannot be read from a file.
        """
        path = getattr(self, "_local_db", None)
        if not self.direct_reads or not path:
            return None
        if col is None:
            return {}
        from chromadb.api.models.Collection import Collection

        while isinstance(col, Handle):
            col = col._col
        if isinstance(col, Scoped):  # a shared bucket: only this namespace's rows
            return (path, str(col.id), col.tenant)
        if isinstance(col, Collection):  # the namespace's own collection
            return (path, str(col.id), None)
        return None

    async def aread_namespace(self, namespace: tuple[str, ...]) -> tuple[list[MemoryRecord], list[str]]:
        """Async :meth:`read_namespace`."""
        return await asyncio.to_thread(self.read_namespace, namespace)

    def read_small_namespace(self, namespace: tuple[str, ...], limit: int) -> SmallRead | None:
        """:meth:`read_namespace` plus every row's id and vector, in one ``get``; ``None`` past ``limit`` rows.

        For a reader that scores a small namespace's dense channel itself instead of
        querying Chroma for the nearest ids (a second call). The rows are the namespace's
        own, read through its scoped view like any other read; rows that are not records
        (extra vector rows, plain items) are kept in ``ids``/``vectors`` and left out of
        ``records``, as :meth:`nearest_ids` returns them too.
        """
        namespace = C.validate_namespace(namespace)
        col = self._reader(namespace)  # no registry lookup: an unregistered namespace reads as empty
        if col is None:
            return [], [], ([], np.zeros((0, 0), dtype=np.float32))
        got, documents = self._small_rows(col, limit)
        if self.trim_memory:
            memtrim.note_read()
        ids = list(got["ids"])
        if len(ids) > limit:
            return None
        pairs = sorted(
            ((r, d) for d in documents if d is not None and (r := parse_record(namespace, d)) is not None),
            key=lambda p: (p[0].created_at, p[0].valid_from, p[0].id),
        )
        embeddings = got["embeddings"]
        vectors = np.asarray(embeddings if len(ids) else np.zeros((0, 0)), dtype=np.float32)
        return [r for r, _ in pairs], [d for _, d in pairs], (ids, vectors)

    def _small_rows(self, col: Any, limit: int) -> tuple[dict[str, Any], list[str | None]]:
        """A small read's rows (ids and vectors) and their documents (``None`` for a row without one).

        On an embedded store whose file can vouch for it, the vectors come from Chroma
        (``get`` of embeddings only) and the documents from the SQLite file: Chroma's
        ``get`` assembles each row's ~12 metadata entries to hand back its document (20
        records: 1.45 ms, 0.74 ms for the vectors alone, 0.18 ms from the file;
        ``benchmarks/small_read.py``). The file's documents are used
        only when the file did not change from before the ``get`` to after the file read
        and they are for exactly the rows Chroma returned (every row but the extra vector
        rows, which have none); otherwise one ``get`` of both, as elsewhere. That check
        stands in for the full read's walk through the write-ahead log (``check_log``).
        """
        found = self._in_file(col)
        before = file_stamp(found[0]) if isinstance(found, tuple) else None  # None: a write in progress
        if isinstance(found, tuple) and before is not None:
            got = self._guard(lambda: col.get(include=["embeddings"], limit=limit + 1))
            ids = got["ids"]
            if not ids or len(ids) > limit:  # nothing to read, or not a small read
                return got, []
            docs = read_documents(*found, check_log=False)
            if (
                docs is not None
                and file_stamp(found[0]) == before
                and set(docs) == {i for i in ids if C.PART_SEP not in i}
            ):
                return got, [docs.get(i) for i in ids]
        got = self._guard(lambda: col.get(include=["documents", "embeddings"], limit=limit + 1))
        return got, list(got["documents"] or [])

    async def aread_small_namespace(self, namespace: tuple[str, ...], limit: int) -> SmallRead | None:
        """Async :meth:`read_small_namespace`."""
        return await asyncio.to_thread(self.read_small_namespace, namespace, limit)

    def nearest_ids(self, namespace: tuple[str, ...], embedding: Sequence[float], n: int) -> list[tuple[str, float]]:
        """The ``n`` nearest items' ids and cosine similarities, unfiltered (cheapest query).

        For callers that already hold the records (the retriever's snapshot) and apply the
        lifecycle filters themselves.
        """
        col = self._col(C.validate_namespace(namespace))
        if col is None or n <= 0:
            return []
        own = nearest_in_bucket(self, col, embedding, n)
        if own is not None:
            return own
        res = self._guard(lambda: col.query(query_embeddings=[list(embedding)], n_results=n, include=["distances"]))
        return [(i, 1.0 - float(d)) for i, d in zip(res["ids"][0], res["distances"][0])]

    async def anearest_ids(
        self, namespace: tuple[str, ...], embedding: Sequence[float], n: int
    ) -> list[tuple[str, float]]:
        """Async :meth:`nearest_ids`."""
        return await asyncio.to_thread(self.nearest_ids, namespace, embedding, n)

    def complete_nearest(
        self, namespace: tuple[str, ...], embedding: Sequence[float], n: int, found: list[tuple[str, float]]
    ) -> list[tuple[str, float]]:
        """:meth:`nearest_ids`'s answer ``found``, completed to the ``n`` nearest by an exact scan.

        For an answer shorter than asked although the namespace holds more rows: Chroma's
        HNSW graph can hold rows that no search reaches (chroma-core/chroma#455). The
        namespace's vectors are read and the rows ``found`` lacks are scored by cosine
        similarity; ``found``'s rows keep the index's similarity. Namespaces of more than
        ``EXACT_SCAN_ROWS`` rows are not scanned: ``found`` is returned, with a warning. An
        answer of ``n`` rows is returned as it is, without a read.
        """
        col = self._col(C.validate_namespace(namespace))
        if col is None or len(found) >= n:  # nothing to complete: not read
            return found[: max(n, 0)]
        got = self._guard(lambda: col.get(include=["embeddings"], limit=EXACT_SCAN_ROWS + 1))
        ids = list(got["ids"])
        if len(ids) > EXACT_SCAN_ROWS:
            warnings.warn(
                f"Chroma's index could not reach {n - len(found)} of the {n} nearest rows asked "
                f"for in namespace {namespace}, and it holds over {EXACT_SCAN_ROWS} rows to scan instead; "
                "the search goes on with the rows it found (the others still count by their words).",
                RuntimeWarning,
                stacklevel=2,
            )
            return found
        known = dict(found)
        missing = [j for j, i in enumerate(ids) if i not in known]
        if missing:
            sims = cosines([got["embeddings"][j] for j in missing], embedding)
            known.update(zip((ids[j] for j in missing), sims.tolist()))
        ranked = sorted(known.items(), key=lambda p: -p[1])  # stable: found's order among equal scores
        return ranked[:n]

    async def acomplete_nearest(
        self, namespace: tuple[str, ...], embedding: Sequence[float], n: int, found: list[tuple[str, float]]
    ) -> list[tuple[str, float]]:
        """Async :meth:`complete_nearest`."""
        return await asyncio.to_thread(self.complete_nearest, namespace, embedding, n, found)
