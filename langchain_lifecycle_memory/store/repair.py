"""Write side of "never two current values": serialise writers, check and repair slots.

* **Threads** (and async tasks, whose writes run in threads) of one process take a
  per-namespace lock around plan-then-apply: two updates of the same namespace never
  plan from the same state. The lock is shared by every ``ChromaMemoryStore`` of the
  process that opens the same database (same folder, same server, or the in-process
  ephemeral system) with the same collection prefix.
* **Processes** (several workers on a ``chroma run`` server, or a CLI beside an app) can
  not share that lock, and Chroma has no compare-and-set. So every write is followed by a
  check: it re-reads the heads of the slots it touched (their active records, and the
  records that claim to supersede what it archived) and, if two writers forked a slot,
  stores the linear chain of ``slots.resolve_current`` (older active archived,
  ``superseded_by``/``valid_to`` set, nothing deleted), then reads again until a read
  finds the slots clean. The writer whose check comes last has seen every write,
  repairs included, so when all writers are done no slot is left forked.

Readers never wait for any of this: they resolve the same view on the fly.
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


def _read(store: Any, namespace: tuple[str, ...], where: dict[str, Any] | None) -> list[MemoryRecord]:
    return list(store.find_records(namespace, where))


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
    """After a write to ``slots``: repair any fork, until a read finds them clean.

    ``parents`` are the ids the write archived or superseded (a fork shows as two records
    claiming one of them). Returns the records it rewrote.
    """
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
        out_of_line = repairs(_read(store, ns, where), at=utcnow())
        if not out_of_line:
            return fixed
        full = _read(store, ns, slot_where(r.slot for r in out_of_line if r.slot is not None))
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
    records = _read(store, ns, where)
    when = ensure_aware(at) or utcnow()
    if dry_run:
        return repairs(records, at=when)
    with writer_lock(store, ns):
        return _store_fixes(store, records, when)


def doubled_slots(store: Any, namespace: tuple[str, ...]) -> list[tuple[str, str]]:
    """Slots with more than one active record (metadata only: the cheap check of ``sweep``).

    Set-valued slots show up here too; :func:`repair_namespace` leaves them as they are.
    """
    seen: dict[tuple[str, str], int] = {}
    for row in store.slot_catalogue(tuple(namespace)):
        if row["status"] == MemoryStatus.ACTIVE.value:
            slot = (row["entity"], row["attribute"])
            seen[slot] = seen.get(slot, 0) + 1
    return sorted(slot for slot, n in seen.items() if n > 1)
