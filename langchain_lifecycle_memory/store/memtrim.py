"""Give the heap memory the C allocator keeps free back to the OS after writes (glibc ``malloc_trim``).

Chroma's Rust core allocates through the C allocator from several threads, and glibc keeps
what they free in its per-thread arenas instead of returning it: a process that wrote many
small batches holds tens of MB of freed memory in its RSS (``benchmarks/users_memory.py``,
2,000 users x 20 records in 16 shared collections: 159 MB of RSS growth after the load, 116 MB
once ``malloc_trim(0)`` ran; plain ``langchain-chroma`` 118 and 89 MB). So after a write
batch the store asks glibc to return it, at most once per :data:`INTERVAL` seconds, so a
stream of small writes pays for one trim a second (a trim walks the free lists: 14 ms
measured on a fragmented ~200 MB heap). At 10k users x 20 records the process's RSS growth
was 294.5 MB with it and 320.8 MB without (``benchmarks/scale.py --parts users``).

Reads churn the heap too: a process serving many users reads each one's namespace once
(documents, vectors, the snapshot built from them) and keeps only the last few snapshots.
So every :data:`READS_PER_TRIM` namespace reads from Chroma also ask for a trim (the same
once-a-second limit): 10k users' first searches left 27 MB freed but kept
(``rss_growth_mb`` 316.0 vs ``rss_growth_trimmed_mb`` 289.2, ``benchmarks/scale.py --parts
users --users 10000 --tag users-10k-s7``). A search that is not a namespace's first read
never counts.

Only memory already freed is returned; nothing is dropped and no cache shrinks. Where the
C library is not glibc (macOS, Windows, musl) it does nothing. Opt out per store with
``store.trim_memory = False``, or for the process with ``LIFECYCLE_MEMORY_TRIM=0``.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

__all__ = ["ENV", "INTERVAL", "READS_PER_TRIM", "maybe_release", "note_read", "release_free_memory"]

INTERVAL = 1.0
"""Seconds between two trims after writes (the first write trims at once)."""
READS_PER_TRIM = 256
"""Namespace reads from Chroma between two trims asked for by reads (:func:`note_read`)."""
ENV = "LIFECYCLE_MEMORY_TRIM"
"""Set to ``0`` (or ``false``/``no``/``off``) to never trim in this process."""

_lock = threading.Lock()
_last: float | None = None
_trim: Any = None  # the C function once resolved, ``False`` where there is none
_reads = 0


def _function() -> Any:
    global _trim
    if _trim is None:
        try:
            import ctypes

            fn = ctypes.CDLL(None).malloc_trim  # the process's own C library
            fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
            _trim = fn
        except (OSError, AttributeError, TypeError):  # not glibc (or no shared C library)
            _trim = False
    return _trim


def enabled() -> bool:
    """Whether the environment allows trimming (``LIFECYCLE_MEMORY_TRIM``; default on)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def release_free_memory() -> bool:
    """Ask the C allocator to return the heap memory it holds free; ``False`` where it can't."""
    fn = _function()
    if not fn:
        return False
    fn(0)
    return True


def maybe_release(interval: float = INTERVAL) -> bool:
    """:func:`release_free_memory`, unless one ran less than ``interval`` seconds ago or ``LIFECYCLE_MEMORY_TRIM=0``."""
    global _last
    if not enabled():
        return False
    now = time.monotonic()
    with _lock:
        if _last is not None and now - _last < interval:
            return False
        _last = now
    return release_free_memory()


def note_read(every: int | None = None) -> bool:
    """Count one namespace read from Chroma; every ``every`` (:data:`READS_PER_TRIM`) reads, :func:`maybe_release`.

    Returns whether it trimmed.
    """
    global _reads
    with _lock:
        _reads += 1
        if _reads < (READS_PER_TRIM if every is None else every):
            return False
        _reads = 0
    return maybe_release()
