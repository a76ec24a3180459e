"""The drivers of the retriever's pipeline: one generator core, served sync or async.

The pipeline (``retrieval.LifecycleRetriever._pipeline``) yields ``IO`` requests and does
everything else; ``drive`` serves them with the sync methods, ``adrive`` with the async
twins. A request made with ``start=True`` is begun and handed back as a handle at once;
the pipeline goes on with work that does not need its answer and collects it later with
``Join(handle)``. The retriever starts its dense query this way: Chroma answers it with
the GIL released (~1 ms at 50k records), while the pipeline scores BM25 over the
namespace, routes the query and scores cues and episodes, which needs the GIL; the two
used to run one after the other.

Sync: a started call runs on a small process-wide pool of helper threads. When every
helper is busy (many threads searching at once) it runs in the caller at ``Join``, as
before, so a search never queues behind others'. Async: an asyncio task of the async
twin. Off with ``$LIFECYCLE_MEMORY_OVERLAP=0`` (every started call then runs at ``Join``).
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import time
from collections.abc import Callable, Generator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

__all__ = ["IO", "Join", "adrive", "drive", "overlap_enabled"]

WORKERS = 4
"""Helper threads of the sync driver (per process)."""


@dataclass
class IO:
    """One I/O request of the shared pipeline, served by the sync or the async driver.

    ``start``: begin it and reply with a handle at once (collect the answer with ``Join``).
    """

    target: Any
    sync: str
    async_: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    start: bool = False


@dataclass
class Join:
    """Wait for a started request's answer (or its exception)."""

    handle: Any


def overlap_enabled() -> bool:
    """Whether started requests run alongside the pipeline (``$LIFECYCLE_MEMORY_OVERLAP``, default on)."""
    flag = os.environ.get("LIFECYCLE_MEMORY_OVERLAP", "1").strip().lower()
    return flag not in ("0", "off", "false", "no")


class _Deferred:
    """A started call no helper took: it runs in the caller at ``Join``."""

    __slots__ = ("args", "fn", "kwargs")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs

    def result(self) -> Any:
        return self.fn(*self.args, **self.kwargs)


class _Helpers:
    """The sync driver's helper threads: a pool per process (a forked child makes its own)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._free: threading.Semaphore | None = None

    def start(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Future[Any] | _Deferred:
        free = self._slots()
        if free is None or not free.acquire(blocking=False):
            return _Deferred(fn, args, kwargs)
        try:
            fut = self._pool.submit(_released, free, contextvars.copy_context(), _Deferred(fn, args, kwargs))  # type: ignore[union-attr]
        except RuntimeError:  # the interpreter is shutting down: no new threads
            free.release()
            return _Deferred(fn, args, kwargs)
        time.sleep(0)  # let the helper take the GIL now: it gives it back as the call enters native code
        return fut

    def _slots(self) -> threading.Semaphore | None:
        if not overlap_enabled():
            return None
        pid = os.getpid()
        if self._pid != pid:
            with self._lock:
                if self._pid != pid:
                    self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="lifecycle-memory-overlap")
                    self._free = threading.Semaphore(self.workers)
                    self._pid = pid
        return self._free

    def _after_fork(self) -> None:
        """In a forked child: the parent's threads and lock state are not the child's."""
        self._lock = threading.Lock()
        self._pid = self._pool = self._free = None


def _released(free: threading.Semaphore, ctx: contextvars.Context, call: _Deferred) -> Any:
    """Run ``call`` in the caller's context on a helper; then free the helper's slot."""
    try:
        return ctx.run(call.result)
    finally:
        free.release()


HELPERS = _Helpers(WORKERS)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=HELPERS._after_fork)


def drive(gen: Generator[Any, Any, Any]) -> Any:
    """Run the pipeline ``gen`` to its return value with sync I/O."""
    reply: Any = None
    while True:
        try:
            req = gen.send(reply)
        except StopIteration as stop:
            return stop.value
        if isinstance(req, Join):
            reply = req.handle.result()
            continue
        method = getattr(req.target, req.sync)
        reply = HELPERS.start(method, req.args, req.kwargs) if req.start else method(*req.args, **req.kwargs)


async def adrive(gen: Generator[Any, Any, Any]) -> Any:
    """Run the pipeline ``gen`` to its return value with async I/O (sync methods where a target has no twin)."""
    reply: Any = None
    started: list[asyncio.Future[Any]] = []
    try:
        while True:
            try:
                req = gen.send(reply)
            except StopIteration as stop:
                return stop.value
            if isinstance(req, Join):
                reply = await req.handle
                continue
            method = getattr(req.target, req.async_, None)
            if method is None:  # a store without async twins: still correct, just blocking
                reply = getattr(req.target, req.sync)(*req.args, **req.kwargs)
                if req.start:
                    reply = _done(reply)
            elif req.start:
                reply = asyncio.ensure_future(method(*req.args, **req.kwargs))
                started.append(reply)
                await asyncio.sleep(0)  # the task runs up to its first await (a worker thread's call) now
            else:
                reply = await method(*req.args, **req.kwargs)
    finally:
        for task in started:  # left behind by an error or a cancellation: stop it, and mark it seen
            if not task.done():
                task.cancel()
            task.add_done_callback(_seen)


def _done(value: Any) -> asyncio.Future[Any]:
    fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    fut.set_result(value)
    return fut


def _seen(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: asyncio does not log it as never retrieved
