"""Write side of "never two current values": serialise writers, check and repair slots.

A per-namespace writer lock, then a check that repairs any slot racing writers forked until it reads clean.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus, ensure_aware, utcnow
from langchain_lifecycle_memory.store import chroma as C
from langchain_lifecycle_memory.store.slots import repairs

__all__ = ["MAX_ROUNDS", "check_slots", "doubled_slots", "repair_namespace", "slot_where", "writer_lock"]

logger = logging.getLogger(__name__)

MAX_ROUNDS = 5
"""Check-and-repair rounds after one write before giving up (the next write or sweep goes on)."""

_STRIPES = tuple(threading.RLock() for _ in range(256))
"""Writer locks, by hash of (database, prefix, namespace): bounded however many users write."""


def _database(store: Any) -> tuple[Any, ...]:
    """What identifies the data behind a store, so that two handles share one lock."""
    local = getattr(store, "persist_directory", None)
    if local:
        return ("file", local)
    try:
        settings = store.client.get_settings()
    except Exception:
        return ("client", id(getattr(store, "client", store)))
    host = getattr(settings, "chroma_server_host", None)
    if host:
        return ("server", host, getattr(settings, "chroma_server_http_port", None))
    if not getattr(settings, "is_persistent", False):
        return ("memory",)
    return ("client", id(store.client))


@contextmanager
def writer_lock(store: Any, namespace: tuple[str, ...]) -> Iterator[None]:
    """Hold this process's write lock of ``namespace`` (re-entrant)."""
    key = (*_database(store), getattr(store, "prefix", ""), tuple(namespace))
    with _STRIPES[hash(key) % len(_STRIPES)]:
        yield


def slot_where(slots: Iterable[tuple[str, str]]) -> dict[str, Any] | None:
    """Chroma ``where`` matching the records of any of ``slots`` (``None``: no slot)."""
    clauses = [
        {"$and": [{C.FLAT_PREFIX + "entity": e}, {C.FLAT_PREFIX + "attribute": a}]} for e, a in sorted(set(slots))
    ]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$or": clauses}


def _store_fixes(store: Any, records: list[MemoryRecord], at: datetime) -> list[MemoryRecord]:
    fixes = repairs(records, at=at)
    if fixes:
        store.put_records(fixes)
    return fixes


def check_slots(
    store: Any,
    namespace: tuple[str, ...],
    slots: Iterable[tuple[str, str]],
    *,
    parents: Iterable[str] = (),
    at: datetime | None = None,
) -> list[MemoryRecord]:
    """After a write to ``slots`` (superseding ``parents``): repair forks until clean; returns the rewrites."""
    if not hasattr(store, "find_records"):
        return []
    by_slot = slot_where(slots)
    if by_slot is None:
        return []
    ns = tuple(namespace)
    watched = set(parents)
    fixed: list[MemoryRecord] = []
    for _ in range(MAX_ROUNDS):
        head: list[dict[str, Any]] = [{C.FLAT_PREFIX + "status": MemoryStatus.ACTIVE.value}]
        if watched:
            head.append({C.FLAT_PREFIX + "supersedes": {"$in": sorted(watched)}})
        where = {"$and": [by_slot, head[0] if len(head) == 1 else {"$or": head}]}
        out_of_line = repairs(store.find_records(ns, where), at=utcnow())
        if not out_of_line:
            return fixed
        full = store.find_records(ns, slot_where(r.slot for r in out_of_line if r.slot is not None))
        new = _store_fixes(store, full, ensure_aware(at) or utcnow())
        fixed.extend(new)
        watched |= {r.id for r in full}
    logger.warning("Slots of %s still forked after %d repair rounds; the next write or sweep goes on", ns, MAX_ROUNDS)
    return fixed


def repair_namespace(
    store: Any,
    namespace: tuple[str, ...],
    *,
    slots: Iterable[tuple[str, str]] | None = None,
    at: datetime | None = None,
    dry_run: bool = False,
) -> list[MemoryRecord]:
    """Store the linear chain of every forked slot of ``namespace`` (or of ``slots`` only)."""
    ns = tuple(namespace)
    where = None
    if slots is not None:
        where = slot_where(slots)
        if where is None:
            return []
    records = store.find_records(ns, where)
    when = ensure_aware(at) or utcnow()
    if dry_run:
        return repairs(records, at=when)
    with writer_lock(store, ns):
        return _store_fixes(store, records, when)


def doubled_slots(store: Any, namespace: tuple[str, ...]) -> list[tuple[str, str]]:
    """Slots with more than one active record, set-valued ones included (metadata only: ``sweep``'s cheap check)."""
    seen: dict[tuple[str, str], int] = {}
    for row in store.slot_catalogue(tuple(namespace)):
        if row["status"] == MemoryStatus.ACTIVE.value:
            slot = (row["entity"], row["attribute"])
            seen[slot] = seen.get(slot, 0) + 1
    return sorted(slot for slot, n in seen.items() if n > 1)
