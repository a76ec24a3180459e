"""Chroma-level maintenance behind ``lifecycle``: filtered reads, compaction, reindex.

The record API covers what the lifecycle stages need day to day; these helpers reach
below it where maintenance has to (``where`` filters on time twins, collection
generations, the embedded client's files) and stay private to the package.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.embeddings import Embeddings
from pydantic import BaseModel, Field

from langchain_lifecycle_memory.errors import ReindexError
from langchain_lifecycle_memory.schema import MemoryRecord
from langchain_lifecycle_memory.store import chroma as C
from langchain_lifecycle_memory.store._layout import drop_everywhere, make_layout, scrub_deleted_log_rows
from langchain_lifecycle_memory.store._records import parse_record
from langchain_lifecycle_memory.store.embeddings import embedding_fingerprint

if TYPE_CHECKING:
    from langchain_lifecycle_memory.store.chroma_store import ChromaMemoryStore

logger = logging.getLogger(__name__)

_UUID_DIR = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# hnswlib's header.bin as Chroma persists it: version, then the index header fields
# (offsetLevel0, max_elements, cur_element_count, size_data_per_element, ...).
_HNSW_HEADER = "<iQQQQQQiIQQQdQ"


class CompactReport(BaseModel):
    """What :func:`compact` did to an embedded Chroma directory."""

    supported: bool
    """``False`` for in-memory clients (nothing on disk) and Chroma servers (the operator's job)."""
    reason: str = ""
    path: str | None = None
    method: Literal["chroma vacuum", "sqlite3", "none"] = "none"
    bytes_before: int = 0
    bytes_after: int = 0
    removed_segment_dirs: list[str] = Field(default_factory=list)
    """HNSW folders of deleted collections (Chroma leaves them behind)."""
    scrubbed_files: int = 0
    """HNSW files whose unused tail was zeroed (it holds uninitialised process memory)."""


class ReindexReport(BaseModel):
    """Outcome of a successful :func:`reindex`."""

    old_generation: int
    new_generation: int
    namespaces: int
    items: int
    embedded: int
    """Items whose index text was re-embedded (the rest are stored but not searchable)."""
    old_fingerprint: dict[str, Any]
    new_fingerprint: dict[str, Any]


# ---------------------------------------------------------------------- reads
def namespaces(store: ChromaMemoryStore, prefix: Sequence[str] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every ``(namespace, collection)`` of the current generation under ``prefix``."""
    return store._namespaces(prefix=tuple(prefix))


def find_records(store: ChromaMemoryStore, namespace: tuple[str, ...], where: dict[str, Any]) -> list[MemoryRecord]:
    """Records of one namespace matching a Chroma ``where`` (no full scan, no vectors)."""
    col = store._col(namespace)
    if col is None:
        return []
    got = store._guard(lambda: col.get(where=where, include=["documents"]))
    return [r for d in got["documents"] or [] if (r := parse_record(namespace, d)) is not None]


def count_where(store: ChromaMemoryStore, namespace: tuple[str, ...], where: dict[str, Any] | None) -> int:
    """How many items of one namespace match a Chroma ``where`` (ids only, nothing parsed)."""
    col = store._col(namespace)
    if col is None:
        return 0
    return len(store._guard(lambda: col.get(where=where, include=[]))["ids"])


def drop_collections(store: ChromaMemoryStore, prefix: tuple[str, ...]) -> int:
    """Delete this store's collections under ``prefix`` in *every* generation; returns the item count.

    ``store.purge`` covers the current generation; this also catches the leftovers of
    an interrupted reindex (or layout migration), so a purge really leaves nothing of the tenant.
    """
    removed = drop_everywhere(store, prefix)
    for col in store._guard(store.client.list_collections):
        if not col.name.startswith(store.prefix + ".g") or not col.metadata or "namespace" not in col.metadata:
            continue
        ns = tuple(json.loads(col.metadata["namespace"]))
        if C.has_prefix(ns, prefix):
            removed += int(store._guard(col.count))
            store._guard(partial(store.client.delete_collection, col.name))
            store._cols.pop(ns, None)
    return removed


# ---------------------------------------------------------------------- compaction
def persist_path(store: ChromaMemoryStore) -> Path | None:
    """The folder of an embedded ``PersistentClient``, or ``None`` (in-memory client or server)."""
    try:
        settings = store.client.get_settings()
    except Exception:  # a client without settings (custom or cloud) is not ours to compact
        return None
    impl = str(getattr(settings, "chroma_api_impl", ""))
    if not getattr(settings, "is_persistent", False) or "fastapi" in impl.lower():
        return None
    return Path(settings.persist_directory).resolve()


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _vacuum_with_cli(path: Path, timeout: float) -> bool:
    # `chroma vacuum` (chromadb's Rust CLI) is the sanctioned way: it purges the
    # write-ahead log (embeddings_queue) and VACUUMs the sqlite file. A subprocess keeps
    # its console output and runtime out of ours.
    code = "import sys, chromadb_rust_bindings as b; b.cli(['chroma', 'vacuum', '--path', sys.argv[1], '--force'])"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        logger.warning("`chroma vacuum` did not run (%s); falling back to sqlite3", e)
        return False
    if done.returncode != 0 or "complete" not in done.stdout.lower():
        logger.warning("`chroma vacuum` failed (rc=%s): %s", done.returncode, done.stderr[-500:])
        return False
    return True


def vacuum_sqlite(db: Path) -> None:
    """Fallback compaction through ``sqlite3``: drop dead log rows, merge FTS segments, VACUUM.

    FTS5 keeps deleted terms in old index segments until they are merged, and sqlite
    keeps deleted rows in free pages until a VACUUM rewrites the file.
    """
    con = sqlite3.connect(db, timeout=30, isolation_level=None)
    try:
        con.execute("PRAGMA secure_delete=ON")
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if {"embeddings_queue", "collections"} <= tables:
            live = {r[0] for r in con.execute("SELECT id FROM collections")}
            topics = [r[0] for r in con.execute("SELECT DISTINCT topic FROM embeddings_queue")]
            for topic in topics:
                if topic.rsplit("/", 1)[-1] not in live:
                    con.execute("DELETE FROM embeddings_queue WHERE topic = ?", (topic,))
        if "embedding_fulltext_search" in tables:
            con.execute("INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES('optimize')")
        con.execute("VACUUM")
    finally:
        con.close()


def _live_segments(db: Path) -> set[str]:
    con = sqlite3.connect(db, timeout=30)
    try:
        return {str(r[0]) for r in con.execute("SELECT id FROM segments")}
    finally:
        con.close()


def scrub_hnsw_segment(folder: Path) -> int:
    """Zero the unused tail of an HNSW segment's files; returns how many files changed.

    hnswlib allocates room for ``max_elements`` without clearing it and Chroma writes
    the whole buffer, so the slots past ``cur_element_count`` hold whatever the process
    had in memory, including other tenants' documents. Used slots are cleared on insert.
    """
    import struct

    header = folder / "header.bin"
    layout = struct.Struct(_HNSW_HEADER)
    if not header.is_file() or header.stat().st_size < layout.size:
        return 0
    fields = layout.unpack(header.read_bytes()[: layout.size])
    current, per_element = int(fields[3]), int(fields[4])
    changed = 0
    for name, used in (("data_level0.bin", current * per_element), ("length.bin", current * 4)):
        path = folder / name
        if not path.is_file():
            continue
        size = path.stat().st_size
        if size > used:
            with open(path, "r+b") as f:
                f.seek(used)
                f.write(b"\0" * (size - used))
            changed += 1
    return changed


def compact(store: ChromaMemoryStore, *, timeout: float = 600.0) -> CompactReport:
    """Make deleted data unrecoverable from an embedded Chroma directory.

    Steps: ``chroma vacuum`` (fallback: :func:`vacuum_sqlite`), remove the HNSW folders
    of deleted collections, zero the unused tail of the remaining HNSW files.
    In-memory clients have nothing on disk; a Chroma server compacts its own files.
    """
    path = persist_path(store)
    if path is None:
        remote = "fastapi" in str(getattr(_settings(store), "chroma_api_impl", "")).lower()
        reason = (
            "Chroma server: compaction of the server's files is the server operator's job "
            "(`chroma vacuum --path <server dir>` while it is stopped)."
            if remote
            else "in-memory client: nothing is written to disk."
        )
        return CompactReport(supported=False, reason=reason)
    db = path / "chroma.sqlite3"
    before = _dir_bytes(path)
    method: Literal["chroma vacuum", "sqlite3"] = "chroma vacuum"
    if not _vacuum_with_cli(path, timeout):
        method = "sqlite3"
        vacuum_sqlite(db)
    scrub_deleted_log_rows(db)  # rows purged from shared buckets (the bucketed layout)
    live = _live_segments(db)
    removed: list[str] = []
    scrubbed = 0
    for folder in sorted(p for p in path.iterdir() if p.is_dir() and _UUID_DIR.match(p.name)):
        if folder.name not in live:
            shutil.rmtree(folder)
            removed.append(folder.name)
        else:
            scrubbed += scrub_hnsw_segment(folder)
    return CompactReport(
        supported=True,
        path=str(path),
        method=method,
        bytes_before=before,
        bytes_after=_dir_bytes(path),
        removed_segment_dirs=removed,
        scrubbed_files=scrubbed,
    )


def _settings(store: ChromaMemoryStore) -> Any:
    try:
        return store.client.get_settings()
    except Exception:
        return None


# ---------------------------------------------------------------------- reindex
def _drop_generation(store: ChromaMemoryStore, generation: int) -> int:
    start = C.generation_prefix(store.prefix, generation)
    dropped = 0
    for col in store._guard(store.client.list_collections):
        if col.name.startswith(start):
            store._guard(partial(store.client.delete_collection, col.name))
            dropped += 1
    return dropped


def _copy_namespace(
    store: ChromaMemoryStore,
    ns: tuple[str, ...],
    old: Any,
    generation: int,
    new_embeddings: Embeddings,
    fingerprint: dict[str, Any],
    batch_size: int,
    advance: Any,
    target: Any,
    copy_vectors: bool = False,
) -> tuple[int, int]:
    dims = int(fingerprint["dims"])
    placeholder = [1.0] + [0.0] * (dims - 1)
    new = target.open(store, ns, create=True, generation=generation, fingerprint=fingerprint)
    if copy_vectors:
        return _copy_rows(store, ns, old, new, batch_size, advance)
    got_all = store._guard(lambda: old.get(include=["metadatas"]))
    ids = [i for i, m in zip(got_all["ids"], got_all["metadatas"]) if C.SYS_PART_OF not in (m or {})]
    embedded = parts = 0
    for start in range(0, len(ids), batch_size):
        got = store._guard(partial(old.get, ids=ids[start : start + batch_size], include=["documents", "metadatas"]))
        metadatas = [dict(m or {}) for m in got["metadatas"]]
        texts: list[list[str]] = []
        for doc, meta in zip(got["documents"], metadatas, strict=True):
            fields = json.loads(meta.get(C.SYS_FIELDS) or "[]")
            value = json.loads(doc) if doc else {}
            texts.append(store._index_texts(value, fields) if store.index_enabled and fields else [])
        flat = [t for item in texts for t in item]
        vectors = new_embeddings.embed_documents(flat) if flat else []
        if len(vectors) != len(flat) or any(len(v) != dims for v in vectors):
            msg = f"The new embedder returned vectors of the wrong size (expected {len(flat)} x {dims})."
            raise ValueError(msg)
        embeddings, part_ids, part_vectors, part_metas = [], [], [], []
        position = 0
        for key, item, meta in zip(got["ids"], texts, metadatas, strict=True):
            mine = [list(map(float, v)) for v in vectors[position : position + len(item)]]
            position += len(item)
            embeddings.append(mine[0] if mine else placeholder)
            meta[C.SYS_INDEXED] = bool(mine)
            meta[C.SYS_PARTS] = len(mine) - 1 if len(mine) > 1 else None
            for n, vector in enumerate(mine[1:], 1):
                part_ids.append(C.part_id(key, n))
                part_vectors.append(vector)
                part_metas.append({C.SYS_PART_OF: key, C.SYS_INDEXED: True, C.SYS_NS: meta.get(C.SYS_NS, "")})
        for meta in metadatas:
            if meta.get(C.SYS_PARTS) is None:
                meta.pop(C.SYS_PARTS, None)
        store._guard(
            partial(new.add, ids=got["ids"], embeddings=embeddings, documents=got["documents"], metadatas=metadatas)
        )
        if part_ids:
            store._guard(partial(new.add, ids=part_ids, embeddings=part_vectors, metadatas=part_metas))
        embedded += sum(1 for item in texts if item)
        parts += len(part_ids)
        advance(len(got["ids"]))
    copied = int(store._guard(new.count)) - parts
    if copied != len(ids):
        msg = f"Namespace {ns}: copied {copied} items but the old generation has {len(ids)}."
        raise ReindexError(msg)
    return copied, embedded


def _copy_rows(
    store: ChromaMemoryStore, ns: tuple[str, ...], old: Any, new: Any, batch_size: int, advance: Any
) -> tuple[int, int]:
    """Copy every row of a namespace as stored (vectors included): a layout move, no embedding."""
    got_all = store._guard(lambda: old.get(include=["metadatas"]))
    ids = list(got_all["ids"])
    items = sum(1 for m in got_all["metadatas"] if C.SYS_PART_OF not in (m or {}))
    for start in range(0, len(ids), batch_size):
        got = store._guard(
            partial(old.get, ids=ids[start : start + batch_size], include=["embeddings", "documents", "metadatas"])
        )
        rows = list(zip(got["ids"], got["embeddings"], got["documents"], got["metadatas"], strict=True))
        for with_doc in (True, False):  # extra vector rows have no document
            part = [r for r in rows if (r[2] is not None) == with_doc]
            if part:
                store._guard(
                    partial(
                        new.add,
                        ids=[r[0] for r in part],
                        embeddings=[list(map(float, r[1])) for r in part],
                        metadatas=[dict(r[3] or {}) for r in part],
                        **({"documents": [r[2] for r in part]} if with_doc else {}),
                    )
                )
        advance(sum(1 for r in rows if C.SYS_PART_OF not in (r[3] or {})))
    if int(store._guard(new.count)) != len(ids):
        msg = f"Namespace {ns}: copied {int(store._guard(new.count))} rows but the old generation has {len(ids)}."
        raise ReindexError(msg)
    embedded = sum(1 for m in got_all["metadatas"] if C.SYS_PART_OF not in (m or {}) and m.get(C.SYS_INDEXED))
    return items, embedded


def migrate_layout(
    store: ChromaMemoryStore,
    layout: str,
    *,
    buckets: int | None = None,
    batch_size: int = 256,
    progress: bool = False,
) -> ReindexReport:
    """Move every namespace into ``layout`` (``"bucketed"`` or ``"collection"``) and switch atomically.

    The reindex path without re-embedding: rows are copied with their vectors into the next
    generation laid out the new way, then the generation and the layout flip in one update
    of the meta record; an interrupted migration leaves the old layout in use. Record ids,
    timestamps and revisions' meaning are unchanged. Stop writers while it runs.
    """
    return reindex(store, store.embeddings, batch_size=batch_size, progress=progress, layout=layout, buckets=buckets)


def reindex(
    store: ChromaMemoryStore,
    new_embeddings: Embeddings,
    *,
    batch_size: int = 256,
    progress: bool = True,
    layout: str | None = None,
    buckets: int | None = None,
) -> ReindexReport:
    """Re-embed every item into generation ``g+1`` and switch to it atomically.

    The switch is one metadata update of the ``<prefix>.meta`` collection (generation and
    fingerprint together); before it, readers keep using generation ``g``. On any error
    the new generation is dropped and :class:`ReindexError` is raised. Stop writers
    during a reindex: writes to ``g`` after a namespace was copied are not carried over
    (the count check catches inserts and deletes, not in-place updates).
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    if batch_size <= 0:
        msg = f"batch_size must be positive, got {batch_size}."
        raise ValueError(msg)
    old_generation, new_generation = store.generation, store.generation + 1
    target = store._layout if layout is None and buckets is None else make_layout(layout or store.layout, buckets)
    fingerprint = embedding_fingerprint(new_embeddings)
    # From the meta collection, not `store.fingerprint`: a store opened for the migration
    # (verify_fingerprint=False) may already carry the new embedder.
    old_fingerprint = json.loads((store._meta().metadata or {}).get("fingerprint") or "{}")
    copy_vectors = new_embeddings is store.embeddings and fingerprint == old_fingerprint
    batch_size = min(batch_size, max(1, int(store._guard(store.client.get_max_batch_size))))
    sources = store._namespaces(old_generation)
    counts = {ns: int(store._guard(col.count)) for ns, col in sources}
    _drop_generation(store, new_generation)  # leftovers of an earlier interrupted run
    target.forget()
    bar = Progress(
        TextColumn("reindex"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), disable=not progress
    )
    items = embedded = 0
    try:
        with bar:
            task = bar.add_task("reindex", total=sum(counts.values()))
            for ns, col in sources:
                n, e = _copy_namespace(
                    store,
                    ns,
                    col,
                    new_generation,
                    new_embeddings,
                    fingerprint,
                    batch_size,
                    lambda k: bar.advance(task, k),
                    target,
                    copy_vectors,
                )
                if int(store._guard(col.count)) != counts[ns]:
                    msg = f"Namespace {ns} changed during the reindex; stop writers and run it again."
                    raise ReindexError(msg)
                items += n
                embedded += e
        if {ns for ns, _ in store._namespaces(old_generation)} - set(counts):
            msg = "A namespace was created during the reindex; stop writers and run it again."
            raise ReindexError(msg)
        meta = store._meta()
        merged = {**(meta.metadata or {}), "generation": new_generation, **target.record()}
        merged["fingerprint"] = json.dumps(fingerprint, sort_keys=True)
        store._guard(lambda: meta.modify(metadata=merged))
    except Exception as e:
        try:
            _drop_generation(store, new_generation)
        except Exception:  # the old generation is untouched either way; the next run drops these
            logger.exception("Could not remove the half-built generation %s", new_generation)
        if isinstance(e, ReindexError):
            raise
        msg = (
            f"Reindex failed ({type(e).__name__}: {e}); generation {old_generation} is still in use "
            "and the half-built one was removed. Fix the cause and run reindex again."
        )
        raise ReindexError(msg) from e
    with store._lock:
        store.embeddings = new_embeddings
        store.fingerprint = fingerprint
        store.dims = int(fingerprint["dims"])
        store.generation = new_generation
        store._layout = target
        store._cols.clear()
        store._tokens.clear()
    for ns, _ in sources:
        store._bump(ns)
    try:
        _drop_generation(store, old_generation)
    except Exception:  # readers already use the new generation; stale collections are harmless
        logger.exception("Reindex done, but generation %s could not be dropped", old_generation)
    for ns, _ in sources:  # the old generation's snapshot sidecars: no reader opens them again
        try:
            store.remove_snapshot_files(ns, old_generation)
        except OSError:
            logger.exception("Reindex done, but the old snapshot files of %s could not be removed", ns)
    return ReindexReport(
        old_generation=old_generation,
        new_generation=new_generation,
        namespaces=len(sources),
        items=items,
        embedded=embedded,
        old_fingerprint=old_fingerprint,
        new_fingerprint=fingerprint,
    )
