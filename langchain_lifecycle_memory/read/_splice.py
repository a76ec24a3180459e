"""``Snapshot.apply``'s splice: changed records into a snapshot's columns, in time in the number of changes."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from langchain_lifecycle_memory.read._rows import Rows, raw_items
from langchain_lifecycle_memory.read.cues import record_cues
from langchain_lifecycle_memory.read.routing import entity_aliases, is_other_person, is_self_entity
from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus, ensure_aware, normalize_value
from langchain_lifecycle_memory.store.slots import resolve_current, slot_key

__all__ = ["OPEN", "STATUSES", "lexical_text", "micros", "needle_of", "order_key", "splice"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_US = timedelta(microseconds=1)
OPEN = np.iinfo(np.int64).max
STATUSES = tuple(MemoryStatus)


def micros(t: datetime | None, default: int = OPEN) -> int:
    """Exact integer microseconds since the epoch (``default`` for ``None``)."""
    if t is None:
        return default
    if t.tzinfo is None:
        t = ensure_aware(t)
    return (t - _EPOCH) // _US  # type: ignore[operator]


def lexical_text(record: MemoryRecord, cues: list[str] | None) -> str:
    """What BM25 indexes for a record: its content, and its write-time cues if any."""
    return record.content if not cues else "\n".join([record.content, *cues])


def order_key(r: MemoryRecord) -> tuple[Any, ...]:
    return (r.created_at, r.valid_from, r.id)  # as list_records


def needle_of(r: MemoryRecord) -> str | None:
    needle = normalize_value(r.value) if r.value else ""
    return needle if len(needle) >= 2 else None


def splice(base: Any, removed: set[int], new: list[MemoryRecord], token: Any) -> Any:
    """``base`` without the rows ``removed``, with the ``new`` records (sorted) at their sorted places."""
    mask = np.ones(len(base.records), dtype=bool)
    mask[list(removed)] = False
    keep = np.flatnonzero(mask)
    # Where each new record goes among the kept ones (both sorted as list_records):
    # its place in the full sorted list, counted in kept records only.
    at = [bisect.bisect_left(base.stored, order_key(r), key=order_key) for r in new]
    at = np.searchsorted(keep, at).tolist()
    order = None  # new records after every kept one (the usual case): no permutation
    if any(a < len(keep) for a in at):
        order = np.insert(np.arange(len(keep)), at, np.arange(len(keep), len(keep) + len(new)))

    # The same splice for the row lists, by slices: removals, and each new row before the
    # kept row it precedes (``len(base)``: at the end).
    before = [int(keep[a]) if a < len(keep) else len(base.records) for a in at]
    cuts = sorted([(p, 1, 0) for p in removed] + [(b, 0, j) for j, b in enumerate(before)])

    def rows(items: Sequence[Any], extra: list[Any]) -> Any:
        raw = raw_items(items) if isinstance(items, Rows) else items  # documents stay unparsed
        out: list[Any] = []
        done = 0
        for p, gone, j in cuts:
            out += raw[done:p]
            if gone:
                done = p + 1
            else:
                done = p
                out.append(extra[j])
        out += raw[done:]
        return Rows(out, base.namespace) if isinstance(items, Rows) else out

    def column(old: np.ndarray, extra: np.ndarray) -> np.ndarray:
        out = np.concatenate([old[keep], extra])
        return out[order] if order is not None else out

    stored, records, ids = rows(base.stored, new), rows(base.records, new), rows(base.ids, [r.id for r in new])
    cols = {k: column(getattr(base, k), v) for k, v in _columns(new).items()}
    attributes, attribute_code = _coded(base.attributes, base.attribute_code[keep], [r.attribute for r in new])
    entities, entity_code = _coded(
        base.entities, base.entity_code[keep], [r.entity for r in new], none=False, key=_entity_key
    )
    kinds, kind_code = _coded(base.kinds, base.kind_code[keep], [r.kind for r in new], none=False)
    needles, needle_code = _coded(base.needles, base.needle_code[keep], [needle_of(r) for r in new])
    slotted = column(base.slot_code >= 0, np.array([_slotted(r) for r in new], dtype=bool))
    if order is not None:
        attribute_code, entity_code = attribute_code[order], entity_code[order]
        kind_code, needle_code = kind_code[order], needle_code[order]
    gone = [base.stored[i] for i in sorted(removed)]
    # Slot resolution is per (entity, attribute): redo it for the slots the changes touch.
    touched = {(r.entity, r.attribute) for r in [*gone, *new] if r.entity and r.attribute}
    redo = np.zeros(len(records), dtype=bool)
    for entity, attribute in touched:
        e, a = _find(entities, entity, _entity_key), _find(attributes, attribute, None)
        if e is not None and a is not None:
            redo |= (entity_code == e) & (attribute_code == a)
    if redo.any():
        positions = np.flatnonzero(redo).tolist()
        views = resolve_current([stored[p] for p in positions])
        for p, view in zip(positions, views):
            records[p] = view
        for k, v in _columns(views).items():
            cols[k][positions] = v
    # Write-time cues move with their rows.
    size = len(records)
    inverse = np.arange(size) if order is None else np.empty(size, dtype=np.int64)
    if order is not None:
        inverse[order] = np.arange(size)
    moved = np.full(len(base.records), -1, dtype=np.int64)
    moved[keep] = inverse[: len(keep)]
    moved_list = moved.tolist()
    cues = {moved_list[p]: c for p, c in base.cues.items() if moved_list[p] >= 0}
    new_cues = [record_cues(r) for r in new]
    cues.update((int(p), c) for p, c in zip(inverse[len(keep) :].tolist(), new_cues) if c)
    if order is not None and any(new_cues):  # kept rows keep their relative order: only then unsorted
        cues = dict(sorted(cues.items()))
    index = base.index.updated(keep, [lexical_text(r, c) for r, c in zip(new, new_cues)], order)
    # Entity aliases of the entities whose records changed.
    entity_set = set(entities)
    changed = {r.entity for r in gone} | {r.entity for r in new}
    aliases = {e: v for e, v in base.entity_alias.items() if e not in changed and e in entity_set}
    changed = {e for e in changed if not is_self_entity(e) and e in entity_set}
    contents: dict[str, list[str]] = {str(e): [] for e in changed}
    if changed:
        mine = np.flatnonzero(np.isin(entity_code, [i for i, e in enumerate(entities) if e in changed]))
        for i in mine.tolist():
            contents[str(records[i].entity)].append(records[i].content)
    aliases.update({e: entity_aliases(e, c) for e, c in contents.items()})
    snap = type(base)(  # a Snapshot
        store=base.store,
        records=records,
        stored=stored,
        index=index,
        entity_alias=aliases,
        position=_positions(base, ids),
        attributes=attributes,
        attribute_code=attribute_code,
        entities=entities,
        entity_code=entity_code,
        other_entities={e for e in entities if is_other_person(e)},
        kinds=kinds,
        kind_code=kind_code,
        slot_code=_slot_codes(slotted, entity_code, attribute_code, len(attributes)),
        rank=_rank(cols["valid_from"], cols["created"]),
        needles=needles,
        needle_code=needle_code,
        namespace=base.namespace,
        token=token,
        cache=base.cache,
        cues=cues,
        ids=ids,
        **cols,
    )
    if needles is base.needles and "_needle_lookup" in base.__dict__:
        snap.__dict__["_needle_lookup"] = base.__dict__["_needle_lookup"]  # same values: same lookup
    return snap


def _slotted(r: MemoryRecord) -> bool:
    return r.status is not MemoryStatus.PENDING and slot_key(r) is not None


def _entity_key(e: str | None) -> tuple[bool, str]:
    return (e is not None, e or "")


def _positions(base: Any, ids: list[str]) -> dict[str, int]:
    """Id -> position; a copy of ``base``'s when its records kept their places."""
    if len(ids) >= len(base.ids) and ids[: len(base.ids)] == base.ids:
        position = base.position.copy()
        position.update(zip(ids[len(base.ids) :], range(len(base.ids), len(ids))))
        return position
    return dict(zip(ids, range(len(ids))))


def _columns(records: Sequence[MemoryRecord]) -> dict[str, np.ndarray]:
    """Per-record columns of ``records`` (codes are filled in by ``_coded``)."""
    return {
        "status_code": np.array([STATUSES.index(r.status) for r in records], dtype=np.int8),
        "valid_from": np.array([micros(r.valid_from) for r in records], dtype=np.int64),
        "valid_to": np.array([micros(r.valid_to) for r in records], dtype=np.int64),
        "expires_at": np.array([micros(r.expires_at) for r in records], dtype=np.int64),
        "fresh_at": np.array([micros(max(r.valid_from, r.updated_at)) for r in records], dtype=np.int64),
        "confidence": np.array([r.confidence for r in records], dtype=np.float64),
        "created": np.array([micros(r.created_at) for r in records], dtype=np.int64),
    }


def _find(names: list[Any], value: Any, key: Any) -> int | None:
    """Position of ``value`` in the sorted ``names`` (``None``: absent)."""
    i = bisect.bisect_left(names, key(value), key=key) if key else bisect.bisect_left(names, value)
    return i if i < len(names) and names[i] == value else None


def _coded(
    names: list[Any], codes: np.ndarray, added: list[Any], *, none: bool = True, key: Any = None
) -> tuple[list[Any], np.ndarray]:
    """Distinct values (sorted) and codes of ``codes``' rows followed by ``added`` values.

    Values no row uses any more are dropped; with ``none``, ``None`` (and "") is code -1.
    New values are inserted at their sorted places (no re-sort of the known ones).
    """
    used = np.bincount(codes[codes >= 0], minlength=len(names)) > 0
    found = [-1 if (none and not v) else _find(names, v, key) for v in added]
    used[[i for i in found if i is not None and i >= 0]] = True
    fresh = sorted({v for v, i in zip(added, found) if i is None}, key=key)
    if used.all() and not fresh:  # nothing moves
        return names, np.concatenate([codes.astype(np.int64), np.array(found, dtype=np.int64)])
    at = np.array([bisect.bisect_left(names, key(v) if key else v, key=key) for v in fresh], dtype=np.int64)
    before = np.concatenate([[0], np.cumsum(used)])  # used values ahead of each position
    remap = np.where(used, before[:-1] + np.searchsorted(at, np.arange(len(names)), side="right"), -1)
    ordered = list(itertools.compress(names, used.tolist()))
    slots = (before[at] + np.arange(len(fresh))).tolist()
    for slot, value in zip(slots, fresh):
        ordered.insert(slot, value)
    place = dict(zip(fresh, slots))
    extra = [place[v] if i is None else (-1 if i < 0 else int(remap[i])) for v, i in zip(added, found)]
    return ordered, np.concatenate([np.append(remap, -1)[codes], np.array(extra, dtype=np.int64)])


def _slot_codes(slotted: np.ndarray, entity_code: np.ndarray, attribute_code: np.ndarray, n: int) -> np.ndarray:
    """``build_snapshot``'s slot numbers: one per (entity, attribute), in order of first appearance."""
    out = np.full(len(slotted), -1, dtype=np.int64)
    rows = np.flatnonzero(slotted)
    if len(rows):
        pairs = entity_code[rows] * (n + 1) + attribute_code[rows]
        _, first, inverse = np.unique(pairs, return_index=True, return_inverse=True)
        label = np.empty(len(first), dtype=np.int64)
        label[np.argsort(first)] = np.arange(len(first))
        out[rows] = label[inverse.ravel()]
    return out


def _rank(valid_from: np.ndarray, created: np.ndarray) -> np.ndarray:
    """Each row's place in ``(valid_from, created_at, id)`` order (``build_snapshot``'s ``rank``).

    Rows are in ``(created_at, valid_from, id)`` order and ``lexsort`` is stable, so rows
    with equal instants stay in id order: the id needs no sorting of its own.
    """
    order = np.lexsort((created, valid_from))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank
