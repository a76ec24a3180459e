"""Where a search's snapshot of a namespace comes from: held, updated, loaded or read.

In order of cost: the snapshot this process holds (unchanged since, by the database stamp or
the revision token), that snapshot brought up to date from the store's journal of this
process's writes, the sidecar file saved at this revision (``_sidecar``), an older sidecar
plus the documents that changed since, one ``get`` of a small namespace with its vectors
(``_small``), and last a full read. A generator of the retriever's pipeline: it yields
``request(target, sync, async, args[, kwargs])`` I/O requests and returns the snapshot.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from typing import Any

from langchain_lifecycle_memory.read._sidecar import SIDECARS
from langchain_lifecycle_memory.read._small import read_small
from langchain_lifecycle_memory.read._snapshot import MAX_DELTAS, Snapshot, build_snapshot, snapshot_of_documents

__all__ = ["current_snapshot"]

# The latest records + BM25 snapshot per (store, namespace), tagged with the store revision
# it reflects. Every write, by any process or server client, stamps a new revision, so a
# stale snapshot is never used: it is brought up to date from the store's journal of this
# process's writes, or read again in full when the journal cannot tell.
_SNAPSHOTS: dict[tuple[int, tuple[str, ...]], Snapshot] = {}
_SNAPSHOTS_LOCK = threading.Lock()
HELD = 64
"""Snapshots held per process (the oldest is dropped first)."""


def current_snapshot(
    store: Any, ns: tuple[str, ...], *, small_limit: int, request: Callable[..., Any]
) -> Generator[Any, Any, Snapshot]:
    """The namespace's snapshot at the store's current state (see the module docstring)."""
    snapshot, token = None, None
    cached = _SNAPSHOTS.get((id(store), ns))
    if cached is not None and cached.store is not store:  # a dead store's id, reused
        cached = None
    cache = cached.cache if cached is not None else None
    small, stamp = hasattr(store, "read_small_namespace"), getattr(store, "database_stamp", lambda: None)()
    if stamp is not None and cached is not None and cached.stamp == stamp:
        snapshot, token = cached, cached.token  # nothing committed to the database since its read
    elif stamp is not None and cached is None and small:  # a first read: the stamp dates it, no token
        small = not _big(store, ns, small_limit, cached)
        if small:
            snapshot = yield from read_small(
                store, ns, small_limit, token=None, stamp=stamp, cache=cache, request=request
            )
            small = snapshot is not None
    if snapshot is None and hasattr(store, "revision"):
        # The token read under this very stamp is still the namespace's (no I/O); else ask.
        token = store.revision_at(ns, stamp) if stamp is not None and hasattr(store, "revision_at") else None
        if token is None:
            token = yield request(store, "revision", "arevision", (ns,))
        if cached is not None and cached.token == token:
            snapshot = cached
        elif (
            cached is not None
            and cached.dense is None
            and cached.deltas < MAX_DELTAS
            and hasattr(store, "changes_between")
        ):
            changes = store.changes_between(ns, cached.token, token)  # in memory: no I/O
            if changes is not None:
                snapshot = cached.apply(changes, token)
                if snapshot.saved is not None:  # the next fresh worker: the sidecar plus these changes
                    yield request(SIDECARS, "save_delta", "asave_delta", (snapshot,))
    if snapshot is None and token is not None:  # a fresh process: the sidecar saved at this revision
        snapshot = yield request(SIDECARS, "load", "aload", (store, ns, token))
    if snapshot is None and token is not None:  # an older sidecar plus the documents that changed since
        snapshot = yield request(SIDECARS, "refresh", "arefresh", (store, ns, token))
    if snapshot is None and small and not _big(store, ns, small_limit, cached):  # one get: records and vectors
        snapshot = yield from read_small(store, ns, small_limit, token=token, stamp=stamp, cache=cache, request=request)
    if snapshot is None:
        if hasattr(store, "namespace_documents"):  # keeps the stored documents, not 1 object per record
            documents = yield request(store, "namespace_documents", "anamespace_documents", (ns,))
            snapshot = snapshot_of_documents(store, documents, namespace=ns, token=token, cache=cache)
            if token is not None:
                yield request(SIDECARS, "save", "asave", (snapshot,))
        else:
            records = yield request(store, "list_records", "alist_records", (ns,), {"resolve": False})
            snapshot = build_snapshot(store, records, namespace=ns, token=token, cache=cache)
    if (token is not None or snapshot.stamp is not None) and snapshot is not cached:
        evicted = None
        with _SNAPSHOTS_LOCK:
            _SNAPSHOTS.pop((id(store), ns), None)
            if len(_SNAPSHOTS) >= HELD:
                evicted = _SNAPSHOTS.pop(next(iter(_SNAPSHOTS)))
            _SNAPSHOTS[(id(store), ns)] = snapshot
        # The store journals its writes only for snapshots held here that a delta can update.
        _follow(store, ns, snapshot.dense is None)
        if evicted is not None and evicted.store is not None:
            _follow(evicted.store, evicted.namespace, False)
    return snapshot


def _big(store: Any, ns: tuple[str, ...], limit: int, cached: Snapshot | None) -> bool:
    """Whether the database file shows more than ``limit`` rows of the namespace (``store.rows_over``).

    Such a namespace is not asked for its rows and vectors first (Chroma's filtered ``get``
    cost 0.1-0.4 s at 50k rows, only to learn it is too big). Not asked for a namespace
    that was small when last read: that ``get`` is its read.
    """
    if cached is not None and cached.dense is not None:
        return False
    over = getattr(store, "rows_over", None)
    return over is not None and bool(over(ns, limit))


def _follow(store: Any, namespace: tuple[str, ...], on: bool) -> None:
    if hasattr(store, "follow"):
        store.follow(namespace, on)
