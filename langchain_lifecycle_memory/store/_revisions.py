"""Namespace revisions and this process's write journal; mixed into ``ChromaMemoryStore``.

Every write stamps a new revision token (a uuid) in the namespace collection's
metadata (bucketed layout: the namespace's registry row, see ``_layout``), so any
process or server client can tell that a namespace changed: the retriever keys its
records + BM25 snapshot by it. The writes this process made are also kept in a short
journal of ``(token before, token after, changes)``, from which a retriever brings an
older snapshot up to date without reading the namespace again. Only namespaces a reader
*follows* (``follow``: the retriever follows each namespace whose snapshot it holds and
could update) are journaled: an entry is only ever read to update a snapshot this process
holds, and each one keeps the written values (10k users x 20 records written by one
process: ~20 MB of journal nobody would read).

Reading the token is a Chroma call (~1 ms embedded). On an embedded persistent client,
``revision`` first looks at the SQLite file (size, mtime and SQLite's own file change
counter, a few microseconds): if nothing wrote to the database since the last call, the
token read then is still the token.
"""

from __future__ import annotations

import asyncio
import collections
import os
import threading
from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from langchain_lifecycle_memory.errors import StoreUnavailableError
from langchain_lifecycle_memory.store import chroma as C

__all__ = ["JOURNAL_LENGTH", "REVISION_KEY", "RevisionJournal", "local_database"]

REVISION_KEY = "revision"
"""Collection metadata key of the namespace's revision token (a new uuid on every write)."""
JOURNAL_LENGTH = 256
"""Writes per namespace this process remembers for incremental snapshot updates."""
_SQLITE = "chroma.sqlite3"


def local_database(client: Any) -> str | None:
    """The SQLite file behind an embedded persistent client (``None`` for other clients)."""
    try:
        settings = client.get_settings()
    except Exception:
        return None
    impl = str(getattr(settings, "chroma_api_impl", ""))
    if not getattr(settings, "is_persistent", False) or "rust" not in impl.lower():
        return None
    return os.path.join(os.path.abspath(str(settings.persist_directory)), _SQLITE)


def _file_stamp(path: str) -> tuple[Any, ...]:
    """What changes when any process commits to the SQLite file (or its WAL)."""
    out: list[Any] = []
    for name in (path, path + "-wal"):
        try:
            st = os.stat(name)
        except FileNotFoundError:
            out.append(None)
            continue
        out.append((st.st_mtime_ns, st.st_size))
    try:
        fd = os.open(path, os.O_RDONLY)  # (half the cost of a file object: this runs once per search)
        try:
            out.append(os.pread(fd, 4, 24))  # SQLite header: file change counter, bumped by every commit
        finally:
            os.close(fd)
    except OSError:
        out.append(None)
    return tuple(out)


class RevisionJournal:
    """Revision tokens and the write journal (see the module docstring)."""

    if TYPE_CHECKING:
        client: Any
        prefix: str
        generation: int
        _lock: threading.RLock
        _cols: MutableMapping[tuple[str, ...], Any]
        _journal: MutableMapping[tuple[str, ...], collections.deque[tuple[str, str, Any]]]
        _tokens: MutableMapping[tuple[str, ...], tuple[Any, str]]
        _followed: MutableMapping[tuple[str, ...], bool]
        _local_db: str | None
        _layout: Any

        def _guard(self, fn: Callable[[], Any]) -> Any: ...
        def _col(self, namespace: tuple[str, ...], *, create: bool = False) -> Any | None: ...

    def _bump(self, namespace: tuple[str, ...], changes: list[tuple[str, Any]] | None = None) -> None:
        """Stamp a new revision token on the namespace's collection (seen by every process).

        ``changes`` (``(key, value or None)`` per written item) go to this process's
        journal; ``None`` means "not recorded" and makes a retriever read in full.
        """
        from chromadb.errors import NotFoundError

        with self._lock:
            self._tokens.pop(namespace, None)
            col = self._cols.get(namespace)
            if col is None:  # the handle cache is an LRU: look the collection up again
                col = self._col(namespace)
            if col is None:  # purged (or never created): ``revision`` reads the collection as absent
                self._journal.pop(namespace, None)
                return
            try:
                # The token before ours, read fresh when the write is journaled: if another process
                # wrote since our last write, a reader's chain through the journal breaks and it
                # reads in full. Unjournaled, nothing reads it (one Chroma call less per write).
                followed = namespace in self._followed
                before, token = self._layout.stamp(self, namespace, col, before=followed)
            except NotFoundError:  # dropped meanwhile by another process
                self._cols.pop(namespace, None)
                self._journal.pop(namespace, None)
                return
            except StoreUnavailableError as e:
                self._journal.pop(namespace, None)  # this process's readers will read in full
                msg = (
                    f"The write to {namespace} reached Chroma, but stamping the namespace's new revision "
                    f"failed ({e}); other workers may answer from a stale snapshot until the next write. "
                    "Retry the write once the server is reachable (writes are idempotent upserts)."
                )
                raise StoreUnavailableError(msg) from e
            if not followed:  # no snapshot here to update: nothing to keep
                self._journal.pop(namespace, None)
                return
            log = self._journal.setdefault(namespace, collections.deque(maxlen=JOURNAL_LENGTH))
            log.append((before, token, changes))

    def follow(self, namespace: tuple[str, ...], on: bool = True) -> None:
        """Journal this process's writes to ``namespace`` (``on=False``: stop, and drop its journal).

        A reader that holds a snapshot of ``namespace`` and would bring it up to date with
        :meth:`changes_between` follows it; writes made before it did are not in the journal,
        so a snapshot older than them is read again in full.
        """
        ns = tuple(namespace)
        with self._lock:
            if on:
                self._followed[ns] = True
            else:
                self._followed.pop(ns, None)
                self._journal.pop(ns, None)

    def changes_between(self, namespace: tuple[str, ...], start: Any, end: Any) -> list[tuple[str, Any]] | None:
        """This process's writes leading from revision ``start`` to ``end``, in order.

        ``None`` when the journal cannot tell: another process wrote in between, the
        entries were trimmed, or a write did not record its changes.
        """
        with self._lock:
            log = list(self._journal.get(tuple(namespace), ()))
        starts = [i for i, (before, _, _) in enumerate(log) if before == start]
        if not starts:
            return None
        out: list[tuple[str, Any]] = []
        current = start
        for before, token, changes in log[starts[-1] :]:
            if before != current or changes is None:
                return None
            out.extend(changes)
            current = token
            if current == end:
                return out
        return None

    def revision(self, namespace: tuple[str, ...]) -> str:
        """A token that changes whenever any process (or server client) changes ``namespace``."""
        ns = C.validate_namespace(tuple(namespace))
        stamp = _file_stamp(self._local_db) if self._local_db is not None else None
        if stamp is not None:
            with self._lock:
                hit = self._tokens.get(ns)
            if hit is not None and hit[0] == stamp:
                return hit[1]
        token = self._read_token(ns)
        if stamp is not None:
            with self._lock:
                self._tokens[ns] = (stamp, token)
        return token

    def revision_at(self, namespace: tuple[str, ...], stamp: Any) -> str | None:
        """The token :meth:`revision` would return while the database stamp is ``stamp``, if known (no I/O).

        Known when the last token read for ``namespace`` was read under that same stamp
        (nothing committed since); ``None`` otherwise, and for stores without a stamp.
        """
        if stamp is None:
            return None
        with self._lock:
            hit = self._tokens.get(tuple(namespace))
        return hit[1] if hit is not None and hit[0] == stamp else None

    def database_stamp(self) -> Any:
        """What changes whenever any process commits to an embedded store's database file.

        ``None`` for other clients (a server, in memory). A snapshot read after a stamp was
        taken is current for as long as the stamp stays the same.
        """
        return _file_stamp(self._local_db) if self._local_db is not None else None

    async def arevision(self, namespace: tuple[str, ...]) -> str:
        """Async :meth:`revision`."""
        return await asyncio.to_thread(self.revision, namespace)

    def _read_token(self, ns: tuple[str, ...]) -> str:
        return str(self._layout.read_token(self, ns))
