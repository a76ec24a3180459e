"""Which version of a slot is current: one rule for every reader and for repair (pure).

:func:`resolve_current` turns a forked single-valued slot into one chain by :func:`precedence`;
:func:`repairs` stores exactly that view. Set-valued slots and pending records take no part.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus

__all__ = [
    "SET",
    "SINGLE",
    "cardinality",
    "current_losers",
    "out_of_line_groups",
    "precedence",
    "repairs",
    "resolve_at",
    "resolve_current",
    "slot_key",
]

SINGLE = "single"
SET = "set"

SlotKey = tuple[tuple[str, ...], str, str]


def cardinality(record: Any) -> str:
    """``"set"`` if the ``cardinality`` field or ``metadata["cardinality"]`` says so, else ``"single"``."""
    if isinstance(record, MemoryRecord):  # its fields live in __dict__ (a missing one via getattr is slow)
        field, meta = record.__dict__.get("cardinality"), record.metadata
    elif isinstance(record, Mapping):
        field, meta = record.get("cardinality"), record.get("metadata")
    else:
        field, meta = getattr(record, "cardinality", None), getattr(record, "metadata", None)
    tagged = meta.get("cardinality") if isinstance(meta, Mapping) else None
    for said in (field, tagged):
        if said is not None and said != SINGLE and str(getattr(said, "value", said) or "").strip().lower() == SET:
            return SET
    return SINGLE


def precedence(record: MemoryRecord) -> tuple[datetime, datetime, str]:
    """Order of versions: newest ``valid_from``, then newest write, then id (last wins)."""
    return (record.valid_from, record.created_at, record.id)


def slot_key(record: MemoryRecord) -> SlotKey | None:
    """The single-valued slot a record versions, or ``None`` (free text, set-valued)."""
    if not record.entity or not record.attribute or cardinality(record) == SET:
        return None
    return (tuple(record.namespace), record.entity, record.attribute)


def _overlap(before: MemoryRecord, after: MemoryRecord) -> bool:
    """Whether ``before`` still holds when ``after`` starts: not when it lapses by then (a change dated ahead)."""
    ends = [t for t in (before.valid_to, before.expires_at) if t is not None]
    return not ends or min(ends) > after.valid_from


def _out_of_line(records: list[MemoryRecord]) -> bool:
    """Two active records true at once, two records superseding the same one, or a link that points elsewhere."""
    active = sorted((r for r in records if r.status is MemoryStatus.ACTIVE), key=precedence)
    claimed = [r.supersedes for r in records if r.supersedes]
    if any(_overlap(a, b) for a, b in zip(active, active[1:])) or len(claimed) != len(set(claimed)):
        return True
    by_id = {r.id: r for r in records}
    return any(
        r.supersedes in by_id and by_id[r.supersedes].superseded_by not in (None, r.id)  # type: ignore[index]
        for r in records
    )


def out_of_line_groups(records: Sequence[MemoryRecord]) -> list[list[int]]:
    """Positions of each single-valued slot that is out of line (the rest need no work)."""
    by_slot: dict[SlotKey, list[int]] = {}
    for i, r in enumerate(records):
        if r.entity and r.attribute and r.status is not MemoryStatus.PENDING:
            by_slot.setdefault((tuple(r.namespace), r.entity, r.attribute), []).append(i)
    out = []
    for positions in by_slot.values():
        if len(positions) > 1 and _out_of_line([records[i] for i in positions]):
            single = [i for i in positions if cardinality(records[i]) == SINGLE]
            if len(single) > 1 and _out_of_line([records[i] for i in single]):
                out.append(single)
    return out


class _Chain:
    """One slot's records and the changes that make them a linear chain."""

    def __init__(self, records: list[MemoryRecord]) -> None:
        self.order = sorted(records, key=precedence)
        self.now: dict[str, MemoryRecord] = {r.id: r for r in self.order}

    def _set(self, rid: str, **changes: Any) -> None:
        record = self.now[rid]
        if any(getattr(record, k) != v for k, v in changes.items()):
            self.now[rid] = record.model_copy(update=changes)

    def _close(self, rid: str, successor: str) -> None:
        """``rid`` is followed by ``successor``: archived, linked, its validity ending there."""
        record, start = self.now[rid], self.now[successor].valid_from
        valid_to = record.valid_to
        if valid_to is None or valid_to > start:
            valid_to = max(start, record.valid_from)
        self._set(rid, status=MemoryStatus.ARCHIVED, superseded_by=successor, valid_to=valid_to)

    def linearize(self) -> dict[str, MemoryRecord]:
        children: dict[str, list[str]] = {}
        for r in self.order:
            if r.supersedes:
                children.setdefault(r.supersedes, []).append(r.id)
        for parent, kids in children.items():
            if len(kids) < 2:
                continue
            if parent in self.now:
                self._close(parent, kids[0])
            for before, kid in zip(kids, kids[1:]):
                self._set(kid, supersedes=before)
                self._close(before, kid)
        for r in self.order:  # the one record claiming a version is the one it names as successor
            parent = self.now[r.id].supersedes
            if parent in self.now and self.now[parent].superseded_by not in (None, r.id):  # type: ignore[index]
                self._close(parent, r.id)  # type: ignore[arg-type]
        active = [r.id for r in self.order if self.now[r.id].status is MemoryStatus.ACTIVE]
        for before, after in zip(active, active[1:]):
            if not _overlap(self.now[before], self.now[after]):  # one lapses as the other starts: both hold in turn
                continue
            self._close(before, after)
            successor = self.now[after]
            if successor.supersedes is None or successor.supersedes == self.now[before].supersedes:
                self._set(after, supersedes=before)
        return self.now


def resolve_current(records: Iterable[MemoryRecord]) -> list[MemoryRecord]:
    """The records as readers see them (same order; unchanged ones as is): one current value per single-valued slot."""
    out = list(records)
    for positions in out_of_line_groups(out):
        fixed = _Chain([out[i] for i in positions]).linearize()
        for i in positions:
            out[i] = fixed[out[i].id]
    return out


def repairs(records: Iterable[MemoryRecord], *, at: datetime) -> list[MemoryRecord]:
    """The records whose stored form differs from :func:`resolve_current`'s view, with ``updated_at`` = ``at``."""
    stored = list(records)
    return [
        view.model_copy(update={"updated_at": max(at, view.updated_at)})
        for before, view in zip(stored, resolve_current(stored))
        if view is not before
    ]


def current_losers(entries: Iterable[tuple[str, SlotKey | None, Any]]) -> set[str]:
    """Ids that lose to another entry of the same slot: ``(id, slot key, precedence)`` triples."""
    best: dict[SlotKey, tuple[Any, str]] = {}
    losers: set[str] = set()
    for rid, key, order in entries:
        if key is None:
            continue
        held = best.get(key)
        if held is None:
            best[key] = (order, rid)
        elif order > held[0]:
            losers.add(held[1])
            best[key] = (order, rid)
        else:
            losers.add(rid)
    return losers


def resolve_at(records: Iterable[MemoryRecord], t: datetime) -> list[MemoryRecord]:
    """Records valid at ``t`` (``as_of``), one per single-valued slot: the highest precedence."""
    valid = [r for r in resolve_current(records) if r.status is not MemoryStatus.PENDING and r.is_valid_at(t)]
    losers = current_losers((r.id, slot_key(r), precedence(r)) for r in valid)
    return [r for r in valid if r.id not in losers]
