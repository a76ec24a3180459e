"""A namespace's stored documents read straight from an embedded Chroma's SQLite file.

Chroma's ``get`` of a whole namespace costs ~0.1-0.4 ms per record (a 50k-record
namespace: 5-27 s), while SQLite hands back the same documents from the same file in
under a second. The retriever's full read (``RecordAPI.read_namespace``) uses this
reader on an embedded persistent store and Chroma's API everywhere else, or whenever
this reader cannot vouch for what it read (it then returns ``None``):

* **Only Chroma's own tables, read-only.** The documents are the ``chroma:document``
  rows of the collection's metadata segment; in a bucketed store only rows whose
  ``_ns`` is the namespace and whose id carries its prefix (as ``_scoped.Scoped``).
  Any other schema (another Chroma version) raises inside and reads through the API.
* **No locks, never closed.** This process's Chroma links its own copy of SQLite; two
  SQLite libraries in one process must not both lock one file, since POSIX locks are
  per process and either copy's unlock or close would drop the other's locks
  (sqlite.org/howtocorrupt.html, "multiple copies of SQLite"). So the connection uses
  the ``unix-none`` VFS (it takes no locks) and stays open for the process's life,
  one per database file (replaced when another file appears at the path).
* **A read that overlapped a write is not used.** Without locks, a read is accepted
  only if SQLite's file change counter (bumped by every commit) is the same before and
  after it, no rollback journal or WAL file was present, and the metadata segment has
  applied every write logged for the collection (``max_seq_id`` against the
  ``embeddings_queue``). Otherwise it is retried once, then left to the API.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import threading
from typing import Any

__all__ = ["count_rows", "file_stamp", "read_documents", "rows_over"]

_DOCUMENT = "chroma:document"
_NS_KEY = "_ns"
_SEP = "\x00"
_connections: dict[str, tuple[sqlite3.Connection, threading.Lock, tuple[int, int]]] = {}
_guard = threading.Lock()
_KEEP = 64
"""Past this many open connections, those of files gone from their paths are closed."""


def _stamp(path: str) -> tuple[Any, ...] | None:
    """The file change counter, or ``None`` while a write may be in progress (a journal or WAL file)."""
    for suffix in ("-journal", "-wal"):
        try:
            if os.stat(path + suffix).st_size > 0:
                return None
        except FileNotFoundError:
            pass
    with open(path, "rb") as f:
        f.seek(24)
        st = os.stat(path)
        return (f.read(4), st.st_size, st.st_ino)


def file_stamp(path: str) -> tuple[Any, ...] | None:
    """The database file's change stamp (``None`` while a write may be in progress, or no file).

    Equal stamps before and after two reads (one through Chroma, one from the file) mean
    no write committed between them.
    """
    try:
        return _stamp(path)
    except OSError:
        return None


def _connection(path: str) -> tuple[sqlite3.Connection, threading.Lock]:
    """The open connection to the file now at ``path`` (a file replaced at that path gets a new one)."""
    st = os.stat(path)
    with _guard:
        hit = _connections.get(path)
        if hit is not None and hit[2] != (st.st_dev, st.st_ino):
            hit[0].close()  # the old file is gone from the path: no Chroma client can lock it anymore
            hit = None
        if hit is None:
            if len(_connections) >= _KEEP:
                _forget_gone()
            uri = f"file:{path}?mode=ro&vfs=unix-none"
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA query_only = 1")
            hit = _connections[path] = (conn, threading.Lock(), (st.st_dev, st.st_ino))
        return hit[0], hit[1]


def _forget_gone() -> None:
    """Close the connections of database files that are gone from their paths (deleted or replaced)."""
    for name, (conn, _, inode) in list(_connections.items()):
        try:
            st = os.stat(name)
            gone = (st.st_dev, st.st_ino) != inode
        except FileNotFoundError:
            gone = True
        if gone:  # no Chroma client can open that file anymore: closing drops no lock anyone relies on
            conn.close()
            del _connections[name]


def _caught_up(conn: sqlite3.Connection, collection_id: str, segment: str) -> bool:
    """Whether the metadata segment has applied every write the log holds for the collection.

    The log (``embeddings_queue``) keeps every write to the database and has no index on
    its topic; SQLite answers the ``max`` by walking the primary key back from the newest
    entry to the collection's last one (~0.2 ms for a collection written lately, ~3 ms
    past 23k newer entries in ``benchmarks/small_read.py``).
    """
    applied = conn.execute("SELECT seq_id FROM max_seq_id WHERE segment_id = ?", (segment,)).fetchall()
    logged = conn.execute(
        "SELECT max(seq_id) FROM embeddings_queue WHERE topic LIKE ?", ("%/" + collection_id,)
    ).fetchone()[0]
    if logged is None:
        return True
    return bool(applied) and isinstance(applied[0][0], int) and applied[0][0] >= logged


def _select(
    conn: sqlite3.Connection, collection_id: str, tenant: str | None, check_log: bool = True
) -> dict[str, str] | None:
    """``{key: document}`` of the collection's rows (a bucket: the tenant's rows, keys without its prefix).

    ``check_log=False`` skips :func:`_caught_up` (a walk back through the write-ahead log,
    ms for a collection not written lately): for a caller that checks what it read against
    Chroma's own answer instead.
    """
    segments = conn.execute(
        "SELECT id FROM segments WHERE collection = ? AND scope = 'METADATA'", (collection_id,)
    ).fetchall()
    if len(segments) != 1:
        return None
    segment = segments[0][0]
    if check_log and not _caught_up(conn, collection_id, segment):
        return None
    if tenant is None:
        rows = conn.execute(
            "SELECT e.embedding_id, m.string_value FROM embeddings e "
            "JOIN embedding_metadata m ON m.id = e.id AND m.key = ? WHERE e.segment_id = ?",
            (_DOCUMENT, segment),
        ).fetchall()
        return {str(rid): doc for rid, doc in rows if isinstance(doc, str)}
    rows = conn.execute(
        "SELECT e.embedding_id, m.string_value FROM embedding_metadata n "
        "JOIN embeddings e ON e.id = n.id AND e.segment_id = ? "
        "JOIN embedding_metadata m ON m.id = e.id AND m.key = ? "
        "WHERE n.key = ? AND n.string_value = ?",
        (segment, _DOCUMENT, _NS_KEY, tenant),
    ).fetchall()
    prefix, n = tenant + _SEP, len(tenant) + 1
    keys = [rid for rid, _ in rows]
    if not all(map(str.startswith, keys, itertools.repeat(prefix))):  # never: every row of ours carries both
        return None
    return {rid[n:]: doc for rid, doc in rows if isinstance(doc, str)}


def _counts(conn: sqlite3.Connection, collection_id: str, tenant: str) -> tuple[int, int] | None:
    segments = conn.execute(
        "SELECT id FROM segments WHERE collection = ? AND scope = 'METADATA'", (collection_id,)
    ).fetchall()
    if len(segments) != 1 or not _caught_up(conn, collection_id, segments[0][0]):
        return None
    segment = segments[0][0]
    total = conn.execute("SELECT count(*) FROM embeddings WHERE segment_id = ?", (segment,)).fetchone()[0]
    own = conn.execute(
        "SELECT count(*) FROM embedding_metadata n JOIN embeddings e ON e.id = n.id AND e.segment_id = ? "
        "WHERE n.key = ? AND n.string_value = ?",
        (segment, _NS_KEY, tenant),
    ).fetchone()[0]
    return int(own), int(total)


def _over(conn: sqlite3.Connection, collection_id: str, tenant: str | None, limit: int) -> bool | None:
    segments = conn.execute(
        "SELECT id FROM segments WHERE collection = ? AND scope = 'METADATA'", (collection_id,)
    ).fetchall()
    if len(segments) != 1:
        return None
    if tenant is None:
        sql = "SELECT count(*) FROM (SELECT 1 FROM embeddings WHERE segment_id = ? LIMIT ?)"
        return bool(conn.execute(sql, (segments[0][0], limit + 1)).fetchone()[0] > limit)
    sql = (
        "SELECT count(*) FROM (SELECT 1 FROM embedding_metadata n JOIN embeddings e ON e.id = n.id "
        "AND e.segment_id = ? WHERE n.key = ? AND n.string_value = ? LIMIT ?)"
    )
    return bool(conn.execute(sql, (segments[0][0], _NS_KEY, tenant, limit + 1)).fetchone()[0] > limit)


def rows_over(path: str, collection_id: str, tenant: str | None, limit: int) -> bool | None:
    """Whether the collection (``tenant``: that namespace's rows of a bucket) has more than ``limit`` rows.

    Reads at most ``limit + 1`` index entries; ``None``: unknown. Only a hint (it picks
    which read to try first), so it is not checked against concurrent writes.
    """
    try:
        conn, lock = _connection(path)
        with lock:
            return _over(conn, str(collection_id), tenant, limit)
    except (sqlite3.Error, OSError):
        return None


def count_rows(path: str, collection_id: str, tenant: str) -> tuple[int, int] | None:
    """``(rows of tenant, rows of the whole collection)`` of a shared bucket, or ``None`` (unknown)."""
    return _consistent(path, lambda conn: _counts(conn, str(collection_id), tenant))


def _consistent(path: str, read: Any) -> Any:
    """``read(connection)`` when no write overlapped it (retried once), else ``None``."""
    try:
        conn, lock = _connection(path)
        for _ in range(2):
            before = _stamp(path)
            if before is None:
                continue
            with lock:
                out = read(conn)
            if out is None:
                return None
            if _stamp(path) == before:
                return out
    except (sqlite3.Error, OSError):
        return None
    return None


def read_documents(
    path: str, collection_id: str, tenant: str | None = None, *, check_log: bool = True
) -> dict[str, str] | None:
    """Every stored document of one collection by key (``tenant``: only that namespace's rows of a bucket).

    ``None`` when the file cannot be read this way or a write overlapped the read twice:
    the caller reads through Chroma's API instead. ``check_log=False``: the metadata
    segment is not checked against the write-ahead log (see ``_select``).
    """
    return _consistent(path, lambda conn: _select(conn, str(collection_id), tenant, check_log))  # type: ignore[no-any-return]
