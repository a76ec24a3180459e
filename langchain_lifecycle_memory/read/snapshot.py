"""A namespace's records as numpy columns for scoring, per store revision (``_source.current`` keeps them current).

Only the records shown become ``MemoryRecord`` objects. Instants are integer microseconds since the
epoch, so comparisons are exact and mirror ``MemoryRecord.is_valid_at`` / ``is_expired``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import numpy as np

from langchain_lifecycle_memory.read.lexical import LexicalIndex
from langchain_lifecycle_memory.read.people import entity_aliases, is_other_person
from langchain_lifecycle_memory.read.routing import is_self_entity, value_in
from langchain_lifecycle_memory.read.vectors import unit
from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus, ensure_aware, normalize_value
from langchain_lifecycle_memory.store.slots import SET, cardinality, out_of_line_groups, resolve_current
from langchain_lifecycle_memory.vocabulary import weekdays

__all__ = ["OPEN", "Row", "Snapshot", "build", "micros", "parse_row"]

OPEN = np.iinfo(np.int64).max
"""An open interval end, or no deadline."""
STATUSES = (MemoryStatus.PENDING, MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED)


def micros(value: datetime | str | None) -> int:
    """An instant as integer microseconds since the epoch (``OPEN`` for ``None``)."""
    dt = ensure_aware(value)
    return int(OPEN) if dt is None else int(dt.timestamp() * 1_000_000)


@dataclass(frozen=True)
class Row:
    """What scoring needs of one stored record, parsed once from its document."""

    id: str
    document: str
    content: str
    entity: str | None
    attribute: str | None
    value: str | None
    kind: str
    status: MemoryStatus
    confidence: float
    is_set: bool
    valid_from: int
    valid_to: int
    expires_at: int
    created: int
    updated: int
    supersedes: str | None
    superseded_by: str | None
    cues: tuple[str, ...]
    needle: str | None
    days: int = 0
    """The days of the week the content says something recurs on, one bit each (Monday: 1)."""

    @property
    def order_key(self) -> tuple[int, int, str, str]:
        """``list_records``' order: created, then valid from, then statement and id (the same on every run)."""
        return (self.created, self.valid_from, self.content, self.id)

    @property
    def slot(self) -> tuple[str, str] | None:
        """The single-valued slot ``(entity, attribute)`` of a non-pending record, else ``None``."""
        if self.entity and self.attribute and not self.is_set and self.status is not MemoryStatus.PENDING:
            return (self.entity, self.attribute)
        return None

    @property
    def text(self) -> str:
        """What BM25 indexes: the content and any write-time cues."""
        return "\n".join([self.content, *self.cues]) if self.cues else self.content


def parse_row(record_id: str, document: str) -> Row | None:
    """A stored document as a ``Row`` (``None``: not a valid memory record)."""
    try:
        value = json.loads(document)
        status = MemoryStatus(value.get("status", "active"))
        content = value["content"]
        metadata = value.get("metadata") or {}
        if not isinstance(content, str) or not content.strip() or not isinstance(metadata, dict):
            return None
        cues = metadata.get("cues")
        cues = tuple(c for c in cues if isinstance(c, str) and c.strip()) if isinstance(cues, list) else ()
        raw_value = value.get("value")
        needle = normalize_value(str(raw_value)) if raw_value else None
        return Row(
            id=record_id,
            document=document,
            content=content,
            entity=value.get("entity"),
            attribute=value.get("attribute"),
            value=raw_value,
            kind=str(value.get("kind", "fact")),
            status=status,
            confidence=float(value.get("confidence", 0.8)),
            is_set=cardinality(value) == SET,
            valid_from=micros(value["valid_from"]),
            valid_to=micros(value.get("valid_to")),
            expires_at=micros(value.get("expires_at")),
            created=micros(value["created_at"]),
            updated=micros(value.get("updated_at") or value["created_at"]),
            supersedes=value.get("supersedes"),
            superseded_by=value.get("superseded_by"),
            cues=cues,
            needle=needle if needle and len(needle) >= 2 else None,
            days=sum(1 << d for d in weekdays(content)),
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _numbered(values: Sequence[str | None]) -> tuple[list[str], np.ndarray]:
    """Distinct non-empty values (sorted) and each row's index into them (-1: empty)."""
    distinct, code = np.unique(np.array([v or "" for v in values], dtype=str), return_inverse=True)
    names = distinct.tolist()
    return (names[1:], code.astype(np.int64) - 1) if names[:1] == [""] else (names, code.astype(np.int64))


def _codes(values: Sequence[Any]) -> tuple[list[Any], np.ndarray]:
    """Distinct values (``None`` first, then sorted) and each row's index into them."""
    names, code = _numbered(values)
    return ([None, *names], code + 1) if (code < 0).any() else (names, code)


@dataclass
class Snapshot:
    """Columns of one namespace's records, in ``list_records`` order."""

    namespace: tuple[str, ...]
    revision: Any
    rows: list[Row]
    vectors: np.ndarray
    """Unit vectors, one row per record (``float32``)."""
    index: LexicalIndex
    cache: dict[str, Any] = field(default_factory=dict, repr=False)
    """Lexical analyses by text, carried from snapshot to snapshot."""
    unsaved: int | None = None
    """Rows written since the snapshot file this one descends from (``None``: no file)."""

    def __post_init__(self) -> None:
        rows = self.rows
        self.ids = [r.id for r in rows]
        self.attributes, self.attribute_code = _numbered([r.attribute for r in rows])
        self.entities, self.entity_code = _codes([r.entity for r in rows])
        self.kinds, self.kind_code = _codes([r.kind for r in rows])
        self.needles, self.needle_code = _numbered([r.needle for r in rows])
        self._views = self._resolved()
        status_of = {s: i for i, s in enumerate(STATUSES)}
        self.status_code = np.array([status_of[r.status] for r in rows], np.int8)
        times = np.array([(r.valid_from, r.valid_to, r.expires_at, r.created, r.updated) for r in rows], dtype=np.int64)
        self.valid_from, self.valid_to, self.expires_at, self.created, self.updated = times.reshape(-1, 5).T.copy()
        for i, view in self._views.items():
            self.status_code[i], self.valid_to[i] = status_of[view.status], micros(view.valid_to)
        self.confidence = np.fromiter((r.confidence for r in rows), dtype=np.float64, count=len(rows))
        self.days = np.fromiter((r.days for r in rows), dtype=np.int64, count=len(rows))
        self.fresh_at = np.maximum(self.valid_from, self.updated)
        contents: dict[str, list[str]] = {}
        for r in rows:
            if not is_self_entity(r.entity):
                contents.setdefault(str(r.entity), []).append(r.content)
        self.entity_alias = {e: entity_aliases(e, c) for e, c in contents.items()}
        # someone by the id's words (``sister_maya``) or as the statements introduce a bare name ("roommate Jonas")
        introduced = {e for e, (_, relations) in self.entity_alias.items() if relations}
        self.other_entities = {e for e in self.entities if is_other_person(e) or e in introduced}
        self.cues = {i: list(r.cues) for i, r in enumerate(rows) if r.cues}
        self._records: dict[int, MemoryRecord] = {}

    def __len__(self) -> int:
        return len(self.rows)

    # ------------------------------------------------------------------ records
    def record(self, position: int) -> MemoryRecord:
        """The record at ``position`` as readers see it (one current value per single-valued slot)."""
        hit = self._records.get(position)
        if hit is None:
            hit = self._views.get(position) or MemoryRecord.from_value(
                self.namespace, json.loads(self.rows[position].document)
            )
            self._records[position] = hit
        return hit

    def _resolved(self) -> dict[int, MemoryRecord]:
        """``store.slots.resolve_current``'s changes by position (only forked or doubled slots need any)."""
        by_slot: dict[tuple[str, str], list[int]] = {}
        for i, r in enumerate(self.rows):
            if r.slot is not None:
                by_slot.setdefault(r.slot, []).append(i)
        shared = [i for group in by_slot.values() if len(group) > 1 for i in group]
        light = [
            SimpleNamespace(
                namespace=self.namespace, entity=r.entity, attribute=r.attribute, status=r.status, id=r.id,
                supersedes=r.supersedes, superseded_by=r.superseded_by, cardinality=None, metadata=None,
                valid_from=r.valid_from, created_at=r.created, valid_to=r.valid_to, expires_at=r.expires_at,
            )
            for r in (self.rows[i] for i in shared)
        ]  # fmt: skip
        need = sorted({shared[j] for group in out_of_line_groups(light) for j in group})  # type: ignore[arg-type]
        if not need:
            return {}
        real = [MemoryRecord.from_value(self.namespace, json.loads(self.rows[i].document)) for i in need]
        return {i: view for i, r, view in zip(need, real, resolve_current(real)) if view is not r}

    # ------------------------------------------------------------------ filters
    @functools.cached_property
    def slot_code(self) -> np.ndarray:
        """Each record's single-valued slot, numbered (-1: none, a set, or pending)."""
        numbered: dict[Any, int] = {}
        keys = [r.slot for r in self.rows]
        return np.fromiter(
            (-1 if k is None else numbered.setdefault(k, len(numbered)) for k in keys), dtype=np.int64, count=len(keys)
        )

    @functools.cached_property
    def set_code(self) -> np.ndarray:
        """Each record's set-valued slot, numbered (-1: none, a single-valued slot, or free text)."""
        numbered: dict[Any, int] = {}
        keys = [(r.entity, r.attribute) if r.is_set and r.attribute else None for r in self.rows]
        return np.fromiter(
            (-1 if k is None else numbered.setdefault(k, len(numbered)) for k in keys), dtype=np.int64, count=len(keys)
        )

    @functools.cached_property
    def replaced_by(self) -> np.ndarray:
        """Each record's ``superseded_by`` as a position (-1: none, or not in this namespace)."""
        position = {rid: p for p, rid in enumerate(self.ids)}
        found = (position.get(r.superseded_by or "", -1) for r in self.rows)
        return np.fromiter(found, dtype=np.int64, count=len(self.rows))

    @functools.cached_property
    def rank(self) -> np.ndarray:
        """Each record's place in version precedence (``valid_from``, then ``created_at``, then id)."""
        return np.argsort(np.lexsort((np.array(self.ids, dtype=str), self.created, self.valid_from)))

    def eligible(
        self,
        *,
        statuses: tuple[MemoryStatus, ...] | None,
        kinds: tuple[str, ...] | None,
        as_of: datetime | None,
        now: datetime,
        include_expired: bool,
    ) -> np.ndarray:
        """Boolean mask of records ``fusion.lifecycle_decision`` lets through (vectorised twin)."""
        mask = np.ones(len(self.rows), dtype=bool)
        if kinds is not None:
            mask &= self.kind_mask(kinds)
        if as_of is not None:
            t = micros(as_of)
            mask &= self.status_code != STATUSES.index(MemoryStatus.PENDING)
            mask &= (self.valid_from <= t) & (t < np.minimum(self.valid_to, self.expires_at))  # true until its deadline
            return mask & ~self._outranked(mask)
        if statuses is not None:
            mask &= np.isin(self.status_code, [STATUSES.index(MemoryStatus(s)) for s in statuses])
        if not include_expired:
            mask &= self.expires_at > micros(now)
        return mask

    def _outranked(self, mask: np.ndarray) -> np.ndarray:
        """Records of ``mask`` that another record of ``mask`` in the same slot outranks."""
        out = np.zeros(len(self.rows), dtype=bool)
        chosen = np.flatnonzero(mask & (self.slot_code >= 0))
        if len(chosen) < 2:
            return out
        order = np.lexsort((self.rank[chosen], self.slot_code[chosen]))
        codes = self.slot_code[chosen][order]
        last_of_slot = np.append(codes[1:] != codes[:-1], True)
        out[chosen[order[~last_of_slot]]] = True
        return out

    def expired(self, now: datetime) -> np.ndarray:
        """Records past their deadline at ``now``."""
        return self.expires_at <= micros(now)

    def entity_mask(self, entities: Iterable[str]) -> np.ndarray:
        """Records whose entity is one of ``entities``."""
        wanted = set(entities)
        return np.isin(self.entity_code, [i for i, e in enumerate(self.entities) if e in wanted])

    def kind_mask(self, kinds: Iterable[str]) -> np.ndarray:
        """Records whose kind is one of ``kinds``."""
        wanted = set(kinds)
        return np.isin(self.kind_code, [i for i, k in enumerate(self.kinds) if k in wanted])

    def value_mentions(self, queries: Sequence[str]) -> np.ndarray:
        """Records whose slot value a query contains (``routing.value_mentioned``)."""
        haystacks = [normalize_value(q) for q in queries]
        found = [j for j, n in enumerate(self.needles) if any(value_in(n, h) for h in haystacks)]
        return np.isin(self.needle_code, found) if found else np.zeros(len(self.rows), dtype=bool)

    def recency(self, now: datetime, half_life_days: float) -> np.ndarray:
        """1 for a fact that became true at ``now``, 0.5 after ``half_life_days``, towards 0 after."""
        age_days = np.maximum(0, micros(now) - self.fresh_at) / 86_400e6
        return np.power(0.5, age_days / half_life_days)

    # ------------------------------------------------------------------ changes
    def apply(self, rows: Any) -> Snapshot:
        """A new snapshot with ``rows`` (a ``NamespaceRows`` of rows written since) applied."""
        fresh = {r.id: (r, v) for i, d, v in zip(rows.ids, rows.documents, rows.vectors) if (r := parse_row(i, d))}
        changed = set(rows.ids)
        kept = [i for i, rid in enumerate(self.ids) if rid not in changed]
        added = sorted(fresh.values(), key=lambda pair: pair[0].order_key)
        merged = [self.rows[i] for i in kept] + [r for r, _ in added]
        vectors = self.vectors[kept]
        if added:
            vectors = np.concatenate([vectors, unit(np.array([v for _, v in added]).reshape(len(added), -1))])
        order = None  # new records usually come after the others: then they are in order already
        if kept and added and merged[len(kept) - 1].order_key > added[0][0].order_key:
            order = np.array(sorted(range(len(merged)), key=lambda i: merged[i].order_key), dtype=np.int64)
            merged, vectors = [merged[i] for i in order], vectors[order]
        index = self.index.updated(np.array(kept, dtype=np.int64), [r.text for r, _ in added], order=order)
        unsaved = None if self.unsaved is None else self.unsaved + len(rows.ids)
        return Snapshot(self.namespace, rows.revision, merged, vectors, index, self.cache, unsaved)


def build(namespace: tuple[str, ...], rows: Any, cache: dict[str, Any] | None = None) -> Snapshot:
    """The snapshot of a namespace's rows (a ``NamespaceRows`` read in full)."""
    parsed = [(r, v) for i, d, v in zip(rows.ids, rows.documents, rows.vectors) if (r := parse_row(i, d))]
    parsed.sort(key=lambda pair: pair[0].order_key)
    records = [r for r, _ in parsed]
    dims = rows.vectors.shape[1] if rows.vectors.ndim == 2 else 1
    vectors = unit(np.array([v for _, v in parsed])) if parsed else np.zeros((0, dims), dtype=np.float32)
    cache = {} if cache is None else cache
    return Snapshot(
        tuple(namespace), rows.revision, records, vectors, LexicalIndex([r.text for r in records], cache=cache), cache
    )
