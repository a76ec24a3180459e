"""The Chroma client behind a store: how it opens, what an outage looks like, several processes on one folder.

Embedded: a writer of any process holds ``lifecycle-memory.lock`` alone and rewrites ``lifecycle-memory.stamp``;
readers share the lock, and one that finds another writer's stamp reopens its client (Chroma's remedy for a stale
index) before it takes the lock.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from langchain_lifecycle_memory.errors import StoreUnavailableError

__all__ = ["StoreClient", "open_client"]

T = TypeVar("T")
STAMP_FILE = "lifecycle-memory.stamp"
LOCK_FILE = "lifecycle-memory.lock"
_RACE_TRIES = 4
_OUTAGE_MODULES = ("httpx.", "httpcore.", "urllib3.", "requests.")


class _SharedExclusive:
    """Many holders of the shared side at once, or one of the exclusive side (a reopen)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._shared = 0
        self._exclusive = False

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            while self._exclusive:
                self._cond.wait()
            self._shared += 1
        try:
            yield
        finally:
            with self._cond:
                self._shared -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            while self._exclusive or self._shared:
                self._cond.wait()
            self._exclusive = True
        try:
            yield
        finally:
            with self._cond:
                self._exclusive = False
                self._cond.notify_all()


class StoreClient:
    """A chromadb client, the description used in errors, and (embedded) the cross-process sync."""

    def __init__(self, client: Any, where: str, path: str | None = None) -> None:
        self._client = client
        self.where = where
        self.path = path
        """Folder of an embedded client this package opened (``None``: no cross-process sync)."""
        self.epoch = 0
        """Bumped on every reopen: collection handles of an older epoch are stale."""
        self._gate = _SharedExclusive()
        self._local = threading.local()
        self._reopen_lock = threading.Lock()
        self._write_lock = threading.RLock()
        self._writer = uuid.uuid4().hex
        self._writes = 0
        self._seen = self._read_stamp()

    @property
    def client(self) -> Any:
        """The chromadb client in use."""
        return self._client

    # ------------------------------------------------------------------ calls
    def __call__(self, fn: Callable[[], T]) -> T:
        """Run a Chroma call; an unreachable server becomes ``StoreUnavailableError``.

        Embedded Chroma can fail a read racing a write to the same collection with "Error finding id";
        such a call is tried again (every call here is idempotent: reads, upserts and deletes by id).
        """
        for attempt in range(1, _RACE_TRIES + 1):
            try:
                return fn()
            except StoreUnavailableError:
                raise
            except Exception as e:
                if _is_outage(e):
                    msg = (
                        f"Cannot reach the {self.where} ({type(e).__name__}: {e}). "
                        "Is `chroma run` up, and are --host/--port right?"
                    )
                    raise StoreUnavailableError(msg) from e
                if attempt == _RACE_TRIES or "Error finding id" not in str(e):
                    raise
                time.sleep(0.01 * attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def batched(self, write: Callable[..., Any], rows: Sequence[tuple[Any, ...]]) -> None:
        """``write(ids=, embeddings=, metadatas=[, documents=])`` over ``rows`` of those columns, batch by batch."""
        step = max(1, int(self(self.client.get_max_batch_size)))
        for s in range(0, len(rows), step):
            columns = zip(("ids", "embeddings", "metadatas", "documents"), zip(*rows[s : s + step]))
            chunk = {k: list(v) for k, v in columns}
            self(lambda c=chunk: write(**c))

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        """One store operation: synced with other processes first, never cut short by a reopen."""
        if getattr(self._local, "depth", 0):
            self._local.depth += 1
            try:
                yield
            finally:
                self._local.depth -= 1
            return
        with self._synced_read_lock(), self._gate.shared():
            self._local.depth = 1
            try:
                yield
            finally:
                self._local.depth = 0

    def _synced_read_lock(self) -> contextlib.ExitStack:
        """Embedded: the folder held shared (no other process writes it meanwhile), with no write unseen.

        When another process wrote since, the lock is let go while the client reopens (never reopened while held: a
        write of this process may be waiting for the lock), then taken again.
        """
        stack = contextlib.ExitStack()
        if self.path is None:
            return stack
        for attempt in range(1, _RACE_TRIES + 1):
            stack.enter_context(self._folder_lock(shared=True))
            if attempt == _RACE_TRIES or self._fresh(self._read_stamp()):
                break
            stack.close()
            self.sync()
        return stack

    def _fresh(self, stamp: str | None) -> bool:
        """Whether ``stamp`` shows no write of another process since this one last looked."""
        return stamp == self._seen or (stamp or "").startswith(self._writer + ":")

    # ------------------------------------------------------------------ several processes
    def _stamp_path(self, name: str) -> str | None:
        return None if self.path is None else os.path.join(self.path, name)

    def _read_stamp(self) -> str | None:
        path = self._stamp_path(STAMP_FILE)
        if path is None:
            return None
        try:
            with open(path, encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def sync(self) -> bool:
        """Reopen the client if another process wrote since this one last looked; returns whether it did."""
        if self.path is None or getattr(self._local, "depth", 0):
            return False
        stamp = self._read_stamp()
        if self._fresh(stamp):
            return False
        with self._reopen_lock:
            if stamp == self._seen:
                return False
            with self._gate.exclusive():
                with contextlib.suppress(Exception):
                    self._client.close()
                self._reopen()
            self._seen = stamp
        return True

    def invalidate(self) -> None:
        """Make every store on this client read ``<prefix>.meta`` again (a reindex switched its generation)."""
        self.epoch += 1

    def _reopen(self) -> None:
        import chromadb

        self._client = chromadb.PersistentClient(path=self.path)
        self.epoch += 1

    @contextlib.contextmanager
    def _folder_lock(self, *, shared: bool = False) -> Iterator[None]:
        """Every process's lock on the folder: shared by readers, exclusive for a writer or maintenance.

        A thread that holds it keeps it for nested calls; a write inside a read (a TTL refresh) turns its shared
        lock exclusive for the write.
        """
        import fcntl

        held = getattr(self._local, "lock", None)
        if held is not None:
            file, mode = held
            if shared or mode == fcntl.LOCK_EX:
                yield
                return
            fcntl.flock(file, fcntl.LOCK_EX)
            self._local.lock = (file, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(file, fcntl.LOCK_SH)
                self._local.lock = (file, fcntl.LOCK_SH)
            return
        file = getattr(self._local, "file", None)  # one per thread, kept open: no open() on every read
        if file is None:
            try:
                file = self._local.file = open(str(self._stamp_path(LOCK_FILE)), "a+")
            except OSError:
                if not shared:
                    raise
                yield  # a folder this process cannot write to: it only reads
                return
        mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        fcntl.flock(file, mode)
        self._local.lock = (file, mode)
        try:
            yield
        finally:
            self._local.lock = None
            fcntl.flock(file, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the write lock of every process (embedded folder) and of this process around a write."""
        with self._write_lock:
            if self.path is None:
                with self.session():
                    yield
                return
            with self._folder_lock():
                try:
                    with self.session():  # synced after the lock: no other process writes now
                        yield
                finally:
                    self._writes += 1
                    stamp = f"{self._writer}:{self._writes}"
                    tmp = f"{self._stamp_path(STAMP_FILE)}.{self._writer}"
                    with open(tmp, "w", encoding="utf-8") as f:
                        f.write(stamp)
                    os.replace(tmp, str(self._stamp_path(STAMP_FILE)))
                    self._seen = stamp

    @contextlib.contextmanager
    def maintenance(self) -> Iterator[Any]:
        """Hold off every process's writers and this process's calls; yields the folder, reopens the client after."""
        with self._write_lock, self._reopen_lock:
            if self.path is None:
                yield None
                return
            with self._gate.exclusive(), self._folder_lock():
                try:
                    with contextlib.suppress(Exception):
                        self._client.close()  # the other process's changes are read back on reopen
                    yield self.path
                finally:
                    self._reopen()
                    self._seen = self._read_stamp()


def _is_outage(e: BaseException) -> bool:
    """Whether ``e`` means the backend cannot be reached (as opposed to a bad request)."""
    name = type(e).__module__ + "." + type(e).__name__
    if isinstance(e, (ConnectionError, TimeoutError)) or name.startswith(_OUTAGE_MODULES):
        return True
    if isinstance(e, OSError) and not isinstance(e, (FileNotFoundError, PermissionError)):
        return True
    cause = e.__cause__ or e.__context__
    return cause is not None and cause is not e and _is_outage(cause)


_EMBEDDED: weakref.WeakValueDictionary[str, StoreClient] = weakref.WeakValueDictionary()
_EMBEDDED_LOCK = threading.Lock()


def open_client(
    *,
    client: Any = None,
    path: str | os.PathLike[str] | None = None,
    host: str | None = None,
    port: int = 8000,
    ssl: bool = False,
    headers: dict[str, str] | None = None,
) -> StoreClient:
    """The ``StoreClient`` for a client, a ``chroma run`` server, or an embedded folder (shared per folder)."""
    import chromadb

    if client is not None:
        return StoreClient(client, "Chroma client")
    if host:
        where = f"Chroma server {host}:{port}"
        try:
            made = chromadb.HttpClient(host=host, port=port, ssl=ssl, headers=headers)
        except Exception as e:
            msg = (
                f"Cannot reach the {where} ({type(e).__name__}: {e}). Start one with "
                f"`chroma run --path DIR --host {host} --port {port}`, or fix --host/--port."
            )
            raise StoreUnavailableError(msg) from e
        return StoreClient(made, where)
    # Chroma caches clients by path string: "./memory" from two working directories must not share one.
    folder = os.path.abspath(os.path.expanduser(os.fspath(path)))  # type: ignore[arg-type]
    with _EMBEDDED_LOCK:
        shared = _EMBEDDED.get(folder)
        if shared is None:
            os.makedirs(folder, exist_ok=True)
            made = chromadb.PersistentClient(path=folder)
            shared = _EMBEDDED[folder] = StoreClient(made, f"embedded Chroma at {folder}", folder)
    return shared
