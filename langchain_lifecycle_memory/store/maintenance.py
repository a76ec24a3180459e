"""Store maintenance through Chroma's public API: :func:`compact` (rebuild + ``chroma vacuum``) and :func:`reindex`.

A reindex writes the next *generation* of collections and switches with one update of ``<prefix>.meta``.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings
from pydantic import BaseModel

from langchain_lifecycle_memory.errors import ReindexError
from langchain_lifecycle_memory.store import chroma as C
from langchain_lifecycle_memory.store._buckets import Buckets
from langchain_lifecycle_memory.store.embeddings import embed_texts, embedding_fingerprint

if TYPE_CHECKING:
    from langchain_lifecycle_memory.store.chroma_store import ChromaRecordStore

__all__ = ["CompactReport", "ReindexReport", "compact", "reindex"]

logger = logging.getLogger(__name__)


class CompactReport(BaseModel):
    """What :func:`compact` did to an embedded Chroma directory."""

    supported: bool
    """``False`` for in-memory clients (nothing on disk) and Chroma servers (the operator's job)."""
    reason: str = ""
    path: str | None = None
    method: str = "none"
    bytes_before: int = 0
    bytes_after: int = 0


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


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _chroma_command() -> list[str]:
    exe = Path(sys.executable).with_name("chroma")
    found = str(exe) if exe.exists() else shutil.which("chroma")
    cli = "import sys, chromadb_rust_bindings as b; b.cli(['chroma', *sys.argv[1:]])"
    return [found] if found else [sys.executable, "-c", cli]


def compact(store: ChromaRecordStore, *, timeout: float = 600.0) -> CompactReport:
    """Make deleted and edited text unrecoverable from an embedded Chroma directory (costly: for purges, redactions).

    Every collection is rebuilt from its live rows in a fresh process (old index files can hold
    deleted text), then ``chroma vacuum`` prunes the log and rewrites the SQLite file.
    """
    if store.persist_directory is None:
        return CompactReport(
            supported=False,
            reason="compacting a Chroma server's files is the server operator's job (`chroma vacuum --path "
            "<server dir>` while it is stopped); an in-memory client writes nothing to disk.",
        )
    path = Path(store.persist_directory)
    before = _dir_bytes(path)
    sc = store._client
    names = sorted(c.name for c in sc(sc.client.list_collections) if c.name.startswith(f"{store.prefix}."))
    with sc.maintenance():  # no write of any process meanwhile; this client reloads the rebuilt files after
        if names:
            _run([sys.executable, "-c", _REBUILD, str(path), json.dumps(names)], timeout)
        _run([*_chroma_command(), "vacuum", "--path", str(path), "--force"], timeout)
    store._buckets.forget()
    return CompactReport(
        supported=True, path=str(path), method="chroma vacuum", bytes_before=before, bytes_after=_dir_bytes(path)
    )


def _run(command: list[str], timeout: float) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        msg = f"`{' '.join(command[:3])}` failed (exit {done.returncode}): {done.stderr[-500:] or done.stdout[-500:]}"
        raise RuntimeError(msg)


_REBUILD = """
import json, os, re, shutil, sys
import chromadb
from langchain_lifecycle_memory.store._buckets import BUCKET_CONFIGURATION
from langchain_lifecycle_memory.store._client import StoreClient

root = sys.argv[1]
client = chromadb.PersistentClient(path=root)
calls = StoreClient(client, "Chroma being compacted")


def index_folders():  # Chroma's index folders (named by UUID), with their latest write
    found = [os.path.join(root, d) for d in os.listdir(root) if re.fullmatch("[0-9a-f-]{36}", d)]
    return {os.path.basename(d): max((os.stat(os.path.join(d, f)).st_mtime_ns for f in os.listdir(d)), default=0)
            for d in found if os.path.isdir(d)}


def take(name):  # the live rows, then the collection deleted; returns what writes it anew
    old = client.get_collection(name, embedding_function=None)
    got = old.get(include=["documents", "metadatas", "embeddings"])
    rows = list(zip(got["ids"], got["embeddings"], got["metadatas"], got["documents"]))
    config = BUCKET_CONFIGURATION if ".b" in name.rsplit(".g", 1)[-1] else None
    metadata = old.metadata
    client.delete_collection(name)
    return lambda: fill(client.create_collection(name, embedding_function=None, configuration=config,
                                                 metadata=metadata), rows)


def fill(new, rows):  # rows with a document, then those without (Chroma wants one shape per call)
    for with_text in (True, False):
        calls.batched(new.add, [r if with_text else r[:3] for r in rows if (r[3] is not None) == with_text])


names = json.loads(sys.argv[2])
if set(names) == {c.name for c in client.list_collections()}:
    # All of the folder is rebuilt: once every collection is deleted, every index folder left is old (or
    # one Chroma left behind before). Index files can hold bytes of deleted text (Chroma writes buffers it
    # did not clear), so all of them go before the new collections are written.
    writes = [take(name) for name in names]
    for folder in index_folders():
        shutil.rmtree(os.path.join(root, folder), ignore_errors=True)
    for write in writes:
        write()
    sys.exit(0)
for name in names:  # other collections share the folder: find this one's index folder by rewriting a row
    old = client.get_collection(name, embedding_function=None)
    got = old.get(limit=1, include=["documents", "metadatas", "embeddings"])
    before = index_folders()
    for _ in range(2 if got["ids"] else 0):  # Chroma persists the index, so its folder shows itself
        old.upsert(ids=got["ids"], embeddings=got["embeddings"], metadatas=got["metadatas"],
                   documents=None if got["documents"][0] is None else got["documents"])
    folders = [d for d, t in index_folders().items() if d in before and t != before[d]]
    take(name)()
    if len(folders) == 1:
        shutil.rmtree(os.path.join(root, folders[0]), ignore_errors=True)
"""
"""Run in a fresh process: its memory never held the deleted text, so the new index files cannot either."""


def _drop_generation(store: ChromaRecordStore, generation: int) -> None:
    sc = store._client
    for col in sc(sc.client.list_collections):
        if col.name.startswith(f"{store.prefix}.g{generation}."):
            sc(lambda name=col.name: sc.client.delete_collection(name))
    store._buckets.forget()


def _copy_namespace(
    store: ChromaRecordStore, ns: tuple[str, ...], target: Buckets, generation: int, embeddings: Embeddings, dims: int
) -> tuple[int, int]:
    """Re-embed one namespace's items into ``generation``; returns ``(items, embedded)``."""
    sc = store._client
    source, new = store._buckets.view(ns), target.view(ns, create=True, generation=generation)
    if source is None or new is None:
        return 0, 0
    got = sc(lambda: source.get(include=["documents", "metadatas"]))
    rows = [
        (i, d, dict(m)) for i, d, m in zip(got["ids"], got["documents"], got["metadatas"]) if C.SYS_PART_OF not in m
    ]
    fields = [json.loads(m.get(C.SYS_FIELDS) or "[]") if store.index_enabled else [] for _, _, m in rows]
    texts = [store._index_texts(json.loads(d), f) if f else [] for (_, d, _), f in zip(rows, fields)]
    vectors = embed_texts(embeddings, [t for item in texts for t in item], dims, "The new embedder", ReindexError)
    main: list[tuple[Any, ...]] = []  # (id, vector, metadata, document)
    extra: list[tuple[Any, ...]] = []  # (id, vector, metadata): an item's further texts, no document
    for (key, document, meta), item in zip(rows, texts):
        mine, vectors = vectors[: len(item)], vectors[len(item) :]
        meta[C.SYS_INDEXED] = bool(mine)
        meta[C.SYS_PARTS] = len(mine) - 1 if len(mine) > 1 else None
        main.append((key, mine[0] if mine else [1.0] + [0.0] * (dims - 1), meta, document))
        extra.extend(C.part_rows(key, mine))
    for batch in (main, extra):
        sc.batched(new.upsert, batch)
    target.record_write(ns, store._buckets.revision(ns), deleted=True, generation=generation)
    return len(rows), sum(1 for item in texts if item)


def reindex(store: ChromaRecordStore, new_embeddings: Embeddings, *, progress: bool = True) -> ReindexReport:
    """Re-embed every item into generation ``g+1`` and switch to it in one update of ``<prefix>.meta``.

    Writers wait meanwhile; on any error the new generation is dropped and :class:`ReindexError` raised.
    """
    sc = store._client
    old_generation, new_generation = store.generation, store.generation + 1
    fingerprint = embedding_fingerprint(new_embeddings)
    meta = sc(lambda: sc.client.get_collection(store.meta_name))
    old_fingerprint = json.loads((meta.metadata or {}).get("fingerprint") or "{}")
    target = Buckets(store, store._buckets.count)
    items = embedded = 0
    with sc.writing():
        namespaces = store._buckets.namespaces()
        _drop_generation(store, new_generation)  # leftovers of an earlier interrupted run
        try:
            for n, ns in enumerate(namespaces, 1):
                copied, indexed = _copy_namespace(
                    store, ns, target, new_generation, new_embeddings, int(fingerprint["dims"])
                )
                items, embedded = items + copied, embedded + indexed
                if progress:
                    logger.info("reindex: %d/%d namespaces", n, len(namespaces))
            merged = {**(meta.metadata or {}), "generation": new_generation}
            merged["fingerprint"] = json.dumps(fingerprint, sort_keys=True)
            sc(lambda: meta.modify(metadata=merged))
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
        store.embeddings, store.fingerprint = new_embeddings, fingerprint
        store.dims, store.generation = int(fingerprint["dims"]), new_generation
        store._buckets.forget()
        sc.invalidate()  # other stores sharing this client see the switch before their next call
        try:
            _drop_generation(store, old_generation)
        except Exception:  # readers already use the new generation; stale collections are harmless
            logger.exception("Reindex done, but generation %s could not be dropped", old_generation)
    for ns in namespaces:  # the old generation's snapshot files: no reader opens them again
        store.remove_snapshot_files(ns, old_generation)
    return ReindexReport(
        old_generation=old_generation,
        new_generation=new_generation,
        namespaces=len(namespaces),
        items=items,
        embedded=embedded,
        old_fingerprint=old_fingerprint,
        new_fingerprint=fingerprint,
    )
