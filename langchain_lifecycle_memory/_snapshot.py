"""A namespace's records as columns, built once per store revision (pure).

The retriever scores every record of a namespace on every query; done record by record
in Python that was ~100 ms at 10k records. A ``Snapshot`` keeps what scoring needs as
numpy columns (attribute, entity, status, kind, validity and expiry instants,
confidence) plus the BM25 index, so a query costs a few vector operations, and only
the records that are returned (or explained) become Python objects.

Instants are integer microseconds since the epoch, so comparisons are exact and
mirror ``MemoryRecord.is_valid_at`` / ``is_expired`` and ``lifecycle_decision``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
from pydantic import ValidationError

from langchain_lifecycle_memory._lexical import LexicalIndex
from langchain_lifecycle_memory._routing import entity_aliases, is_other_person, is_self_entity, value_in
from langchain_lifecycle_memory._slots import resolve_current, slot_key
from langchain_lifecycle_memory.cues import record_cues
from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus, ensure_aware, normalize_value

__all__ = ["MAX_DELTAS", "Snapshot", "build_snapshot", "micros"]

MAX_DELTAS = 64
"""After this many journal deltas a snapshot is read again in full (bounds any drift)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_US = timedelta(microseconds=1)
_OPEN = np.iinfo(np.int64).max
_STATUSES = tuple(MemoryStatus)


def micros(t: datetime | None, default: int = _OPEN) -> int:
    """Exact integer microseconds since the epoch (``default`` for ``None``)."""
    if t is None:
        return default
    if t.tzinfo is None:
        t = ensure_aware(t)
    return (t - _EPOCH) // _US  # type: ignore[operator]


@dataclass
class Snapshot:
    """Columns of one namespace's records, in ``records`` order."""

    store: Any
    records: list[MemoryRecord]
    """The records as readers see them (:func:`~._slots.resolve_current`: one current value per slot)."""
    stored: list[MemoryRecord]
    """The records as stored (journal deltas apply to these)."""
    index: LexicalIndex
    entity_alias: dict[str, tuple[set[str], set[str]]]
    """``entity_aliases`` of every non-self entity (for ``query_entities``), computed once."""
    position: dict[str, int]
    attributes: list[str]
    """Sorted distinct attributes; ``attribute_code`` indexes it (-1: none)."""
    attribute_code: np.ndarray
    entities: list[str | None]
    entity_code: np.ndarray
    other_entities: set[str | None]
    """Entities that are another person (a relative, a named friend...)."""
    status_code: np.ndarray
    kinds: list[str]
    kind_code: np.ndarray
    valid_from: np.ndarray
    valid_to: np.ndarray
    expires_at: np.ndarray
    fresh_at: np.ndarray
    """``max(valid_from, updated_at)``: what recency decays from."""
    confidence: np.ndarray
    slot_code: np.ndarray
    """Single-valued slot of each record (-1: none, set-valued or pending)."""
    rank: np.ndarray
    """Each record's place in version precedence (``_slots.precedence``)."""
    value_needles: list[tuple[str, np.ndarray]]
    """Normalised slot value -> positions of the records that hold it."""
    namespace: tuple[str, ...] = ()
    token: Any = None
    """The store revision the snapshot reflects."""
    deltas: int = 0
    """Journal deltas applied since the last full read (bounded: see ``MAX_DELTAS``)."""
    cache: dict[str, tuple[list[str], list[str]]] | None = None
    """Lexical analysis per text, carried from snapshot to snapshot."""
    cues: dict[int, list[str]] = field(default_factory=dict)
    """Write-time cues (``cues``) per record position, for records that have any."""

    def apply(self, changes: Sequence[tuple[str, dict[str, Any] | None]], token: Any) -> Snapshot:
        """A new snapshot with a store journal's ``(key, value or None)`` changes applied."""
        by_id = {r.id: r for r in self.stored}
        for key, value in changes:
            by_id.pop(key, None)
            if value is None:
                continue
            try:
                record = MemoryRecord.from_value(self.namespace, value)
            except (ValidationError, ValueError, TypeError):
                continue  # not a memory record (a plain BaseStore item): list_records skips it too
            by_id[record.id] = record
        records = sorted(by_id.values(), key=lambda r: (r.created_at, r.valid_from, r.id))  # as list_records
        snap = build_snapshot(self.store, records, namespace=self.namespace, token=token, cache=self.cache)
        snap.deltas = self.deltas + 1
        return snap

    def __len__(self) -> int:
        return len(self.records)

    def eligible(
        self,
        *,
        statuses: tuple[MemoryStatus, ...] | None,
        kinds: tuple[str, ...] | None,
        as_of: datetime | None,
        now: datetime,
        include_expired: bool,
    ) -> np.ndarray:
        """Boolean mask of records ``lifecycle_decision`` lets through (vectorised twin)."""
        mask = np.ones(len(self.records), dtype=bool)
        if kinds is not None:
            allowed = np.array([k in kinds for k in self.kinds] + [False])
            mask &= allowed[self.kind_code]
        if as_of is not None:
            t = micros(as_of)
            mask &= self.status_code != _STATUSES.index(MemoryStatus.PENDING)
            mask &= (self.valid_from <= t) & (t < self.valid_to)
            mask &= ~self._outranked(mask)
        elif statuses is not None:
            wanted = {MemoryStatus(s) for s in statuses}
            mask &= np.array([s in wanted for s in _STATUSES])[self.status_code]
        if not include_expired:
            mask &= ~(self.expires_at <= micros(now))
        return mask

    def _outranked(self, mask: np.ndarray) -> np.ndarray:
        """Records of ``mask`` that another record of ``mask`` in the same slot outranks."""
        out = np.zeros(len(self.records), dtype=bool)
        chosen = np.flatnonzero(mask & (self.slot_code >= 0))
        if len(chosen) < 2:
            return out
        order = np.lexsort((self.rank[chosen], self.slot_code[chosen]))
        codes = self.slot_code[chosen][order]
        last_of_slot = np.append(codes[1:] != codes[:-1], True)
        out[chosen[order[~last_of_slot]]] = True
        return out

    def entity_mask(self, entities: Iterable[str]) -> np.ndarray:
        """Records whose entity is one of ``entities``."""
        wanted = set(entities)
        codes = [i for i, e in enumerate(self.entities) if e in wanted]
        return np.isin(self.entity_code, codes)

    def value_mentions(self, queries: Sequence[str]) -> np.ndarray:
        """Records whose slot value a query contains (``value_mentioned``, per distinct value)."""
        hits = np.zeros(len(self.records), dtype=bool)
        if not self.value_needles:
            return hits
        haystacks = [normalize_value(q) for q in queries]
        for needle, rows in self.value_needles:
            if any(value_in(needle, haystack) for haystack in haystacks):
                hits[rows] = True
        return hits

    def recency(self, now: datetime, half_life_days: float, positions: np.ndarray) -> np.ndarray:
        """1 for a fact that became true at ``now``, 0.5 after ``half_life_days``, towards 0 after."""
        if half_life_days <= 0:
            return np.zeros(len(positions))
        age_days = np.maximum(0, micros(now) - self.fresh_at[positions]) / 86_400e6
        return np.power(0.5, age_days / half_life_days)


def build_snapshot(
    store: Any,
    records: Sequence[MemoryRecord],
    *,
    namespace: tuple[str, ...] = (),
    token: Any = None,
    cache: dict[str, tuple[list[str], list[str]]] | None = None,
) -> Snapshot:
    """Columns for ``records`` (one pass; reused until the namespace's revision moves)."""
    stored = list(records)
    records = resolve_current(stored)
    cache = {} if cache is None else cache
    if len(cache) > 4 * len(records) + 1024:  # texts of deleted or edited records pile up
        cache.clear()
    contents: dict[str, list[str]] = {}
    for r in records:
        if not is_self_entity(r.entity):
            contents.setdefault(str(r.entity), []).append(r.content)
    attributes = sorted({r.attribute for r in records if r.attribute})
    attr_pos = {a: i for i, a in enumerate(attributes)}
    entities = sorted({r.entity for r in records}, key=lambda e: (e is not None, e or ""))
    ent_pos = {e: i for i, e in enumerate(entities)}
    kinds = sorted({r.kind for r in records})
    kind_pos = {k: i for i, k in enumerate(kinds)}
    cues = {i: c for i, r in enumerate(records) if (c := record_cues(r))}
    needles: dict[str, list[int]] = {}
    slots: dict[Any, int] = {}
    slot_code = np.full(len(records), -1, dtype=np.int64)
    for i, r in enumerate(records):
        if r.status is not MemoryStatus.PENDING and (key := slot_key(r)) is not None:
            slot_code[i] = slots.setdefault(key, len(slots))
    valid_from = np.array([micros(r.valid_from) for r in records], dtype=np.int64)
    created = np.array([micros(r.created_at) for r in records], dtype=np.int64)
    rank = np.empty(len(records), dtype=np.int64)  # the order of ``_slots.precedence``, vectorised
    rank[np.lexsort((np.array([r.id for r in records], dtype=str), created, valid_from))] = np.arange(len(records))
    for i, r in enumerate(records):
        needle = normalize_value(r.value) if r.value else ""
        if len(needle) >= 2:
            needles.setdefault(needle, []).append(i)
    return Snapshot(
        store=store,
        records=records,
        stored=stored,
        index=LexicalIndex([_lexical_text(r, cues.get(i)) for i, r in enumerate(records)], cache=cache),
        entity_alias={e: entity_aliases(e, c) for e, c in contents.items()},
        position={r.id: i for i, r in enumerate(records)},
        attributes=attributes,
        attribute_code=np.array([attr_pos[r.attribute] if r.attribute else -1 for r in records], dtype=np.int64),
        entities=entities,
        entity_code=np.array([ent_pos[r.entity] for r in records], dtype=np.int64),
        other_entities={e for e in entities if is_other_person(e)},
        status_code=np.array([_STATUSES.index(r.status) for r in records], dtype=np.int8),
        kinds=kinds,
        kind_code=np.array([kind_pos[r.kind] for r in records], dtype=np.int64),
        valid_from=valid_from,
        valid_to=np.array([micros(r.valid_to) for r in records], dtype=np.int64),
        expires_at=np.array([micros(r.expires_at) for r in records], dtype=np.int64),
        fresh_at=np.array([micros(max(r.valid_from, r.updated_at)) for r in records], dtype=np.int64),
        confidence=np.array([r.confidence for r in records], dtype=np.float64),
        slot_code=slot_code,
        rank=rank,
        value_needles=[(n, np.asarray(rows, dtype=np.int64)) for n, rows in needles.items()],
        namespace=tuple(namespace),
        token=token,
        cache=cache,
        cues=cues,
    )


def _lexical_text(record: MemoryRecord, cues: list[str] | None) -> str:
    """What BM25 indexes for a record: its content, and its write-time cues if any."""
    return record.content if not cues else "\n".join([record.content, *cues])
