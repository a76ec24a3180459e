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

import bisect
import functools
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
from pydantic import ValidationError

from langchain_lifecycle_memory._lexical import LexicalIndex
from langchain_lifecycle_memory._routing import entity_aliases, is_other_person, is_self_entity, value_in
from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus, ensure_aware, normalize_value

__all__ = ["MAX_DELTAS", "Snapshot", "build_snapshot", "micros"]

MAX_DELTAS = 4096
"""After this many journal deltas a snapshot is read again in full. ``apply`` is exact
(it equals a fresh build over the same records), so this only bounds how long a
snapshot lives without a full read."""

_SCAN_NEEDLES = 256
"""Up to this many distinct slot values, ``value_mentions`` tests each against the query."""
_SHORT = 48
"""Values up to this length are found by looking up the query's substrings."""
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
    needles: list[str]
    """Distinct normalised slot values (2+ characters); ``needle_code`` indexes it (-1: none)."""
    needle_code: np.ndarray
    namespace: tuple[str, ...] = ()
    token: Any = None
    """The store revision the snapshot reflects."""
    deltas: int = 0
    """Journal deltas applied since the last full read (bounded: see ``MAX_DELTAS``)."""
    cache: dict[str, tuple[list[str], list[str]]] | None = None
    """Lexical analysis per text, carried from snapshot to snapshot."""
    ids: list[str] = field(default_factory=list)
    """``records``' ids, in order."""

    def apply(self, changes: Sequence[tuple[str, dict[str, Any] | None]], token: Any) -> Snapshot:
        """A new snapshot with a store journal's ``(key, value or None)`` changes applied.

        Costs time in the number of changes plus a few array passes: changed records are
        spliced into the columns at their sorted place and the lexical index is updated
        (not rebuilt), so a search right after a write stays cheap in a large namespace.
        The result equals ``build_snapshot`` over the same records.
        """
        removed: set[int] = set()
        added: dict[str, MemoryRecord] = {}
        for key, value in changes:
            if (pos := self.position.get(key)) is not None:
                removed.add(pos)
            added.pop(key, None)
            if value is None:
                continue
            try:
                record = MemoryRecord.from_value(self.namespace, value)
            except (ValidationError, ValueError, TypeError):
                continue  # not a memory record (a plain BaseStore item): list_records skips it too
            if (pos := self.position.get(record.id)) is not None:
                removed.add(pos)
            added[record.id] = record
        mask = np.ones(len(self.records), dtype=bool)
        mask[list(removed)] = False
        keep = np.flatnonzero(mask)
        new = sorted(added.values(), key=_order_key)
        # Where each new record goes among the kept ones (both sorted as list_records):
        # its place in the full sorted list, counted in kept records only.
        at = [bisect.bisect_left(self.records, _order_key(r), key=_order_key) for r in new]
        at = np.searchsorted(keep, at).tolist()
        order = None  # new records after every kept one (the usual case): no permutation
        if any(a < len(keep) for a in at):
            order = np.insert(np.arange(len(keep)), at, np.arange(len(keep), len(keep) + len(new)))
        snap = _assemble(self, keep, new, order, token)
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
        elif statuses is not None:
            wanted = {MemoryStatus(s) for s in statuses}
            mask &= np.array([s in wanted for s in _STATUSES])[self.status_code]
        if not include_expired:
            mask &= ~(self.expires_at <= micros(now))
        return mask

    def entity_mask(self, entities: Iterable[str]) -> np.ndarray:
        """Records whose entity is one of ``entities``."""
        wanted = set(entities)
        codes = [i for i, e in enumerate(self.entities) if e in wanted]
        return np.isin(self.entity_code, codes)

    def value_mentions(self, queries: Sequence[str]) -> np.ndarray:
        """Records whose slot value a query contains (``value_mentioned``, per distinct value)."""
        if not self.needles:
            return np.zeros(len(self.records), dtype=bool)
        haystacks = [normalize_value(q) for q in queries]
        if len(self.needles) < _SCAN_NEEDLES:
            candidates: Iterable[int] = range(len(self.needles))
        else:  # many distinct values: look the query's substrings up instead of scanning them all
            where, long = self._needle_lookup
            found_at = {
                where.get(h[i:j]) for h in haystacks for i in range(len(h)) for j in range(i + 2, i + _SHORT + 1)
            }
            candidates = sorted((found_at - {None}) | set(long))  # type: ignore[operator]
        found = [j for j in candidates if any(value_in(self.needles[j], h) for h in haystacks)]
        return np.isin(self.needle_code, found)

    @functools.cached_property
    def _needle_lookup(self) -> tuple[dict[str, int], list[int]]:
        where = {n: j for j, n in enumerate(self.needles) if len(n) <= _SHORT}
        return where, [j for j, n in enumerate(self.needles) if len(n) > _SHORT]

    def recency(self, now: datetime, half_life_days: float, positions: np.ndarray) -> np.ndarray:
        """1 for a fact that became true at ``now``, 0.5 after ``half_life_days``, towards 0 after."""
        if half_life_days <= 0:
            return np.zeros(len(positions))
        age_days = np.maximum(0, micros(now) - self.fresh_at[positions]) / 86_400e6
        return np.power(0.5, age_days / half_life_days)


def _take(items: Sequence[Any], positions: np.ndarray) -> list[Any]:
    """``[items[i] for i in positions]``, in C (an object array would probe every item)."""
    if len(positions) == 0:
        return []
    if len(positions) == 1:
        return [items[int(positions[0])]]
    return list(operator.itemgetter(*positions.tolist())(items))


def _positions(base: Snapshot | None, ids: list[str]) -> dict[str, int]:
    """Id -> position; a copy of ``base``'s when its records kept their places."""
    if base is not None and len(ids) >= len(base.ids) and ids[: len(base.ids)] == base.ids:
        position = base.position.copy()
        position.update(zip(ids[len(base.ids) :], range(len(base.ids), len(ids))))
        return position
    return dict(zip(ids, range(len(ids))))


def _order_key(r: MemoryRecord) -> tuple[Any, ...]:
    return (r.created_at, r.valid_from, r.id)  # as list_records


def _columns(records: Sequence[MemoryRecord]) -> dict[str, Any]:
    """Per-record columns of ``records`` (codes are filled in by ``_coded``)."""
    return {
        "status_code": np.array([_STATUSES.index(r.status) for r in records], dtype=np.int8),
        "valid_from": np.array([micros(r.valid_from) for r in records], dtype=np.int64),
        "valid_to": np.array([micros(r.valid_to) for r in records], dtype=np.int64),
        "expires_at": np.array([micros(r.expires_at) for r in records], dtype=np.int64),
        "fresh_at": np.array([micros(max(r.valid_from, r.updated_at)) for r in records], dtype=np.int64),
        "confidence": np.array([r.confidence for r in records], dtype=np.float64),
    }


def _needle(r: MemoryRecord) -> str | None:
    needle = normalize_value(r.value) if r.value else ""
    return needle if len(needle) >= 2 else None


def _entity_key(e: str | None) -> tuple[bool, str]:
    return (e is not None, e or "")


def _find(names: list[Any], value: Any, key: Any) -> int | None:
    """Position of ``value`` in the sorted ``names`` (``None``: absent)."""
    i = bisect.bisect_left(names, key(value), key=key) if key else bisect.bisect_left(names, value)
    return i if i < len(names) and names[i] == value else None


def _coded(
    names: list[Any], codes: np.ndarray, added: list[Any], *, none: bool, key: Any = None
) -> tuple[list[Any], np.ndarray]:
    """Distinct values (sorted) and codes of ``codes``' rows followed by ``added`` values.

    Values no row uses any more are dropped; with ``none``, ``None`` (and "") is code -1.
    """
    counts = np.bincount(codes[codes >= 0], minlength=len(names))
    if counts.all():  # every value still used: when the added ones are known too, nothing moves
        found = [-1 if (none and not v) else _find(names, v, key) for v in added]
        if all(i is not None for i in found):
            return names, np.concatenate([codes.astype(np.int64), np.array(found, dtype=np.int64)])
    used = np.flatnonzero(counts).tolist()
    values = {names[c] for c in used} | {v for v in added if not (none and not v)}
    ordered = sorted(values, key=key)
    if ordered == names:
        pos = {v: i for i, v in enumerate(names)}
        new_codes = codes
    else:
        pos = {v: i for i, v in enumerate(ordered)}
        remap = np.array([pos.get(v, -1) for v in names] + [-1], dtype=np.int64)
        new_codes = remap[codes]
    extra = np.array([-1 if (none and not v) else pos[v] for v in added], dtype=np.int64)
    return ordered, np.concatenate([new_codes.astype(np.int64), extra])


def _assemble(
    base: Snapshot | None,
    keep: np.ndarray,
    new: list[MemoryRecord],
    order: np.ndarray | None,
    token: Any,
    cache: dict[str, tuple[list[str], list[str]]] | None = None,
) -> Snapshot:
    """``base``'s rows at ``keep`` plus ``new`` rows, permuted by ``order`` (``None``: as is)."""
    cols = _columns(new)
    ids = [r.id for r in new]
    if base is None:
        records, index_cols = list(new), cols
        names: dict[str, tuple[list[Any], np.ndarray]] = {
            "attribute": ([], np.zeros(0, dtype=np.int64)),
            "entity": ([], np.zeros(0, dtype=np.int64)),
            "kind": ([], np.zeros(0, dtype=np.int64)),
            "needle": ([], np.zeros(0, dtype=np.int64)),
        }
    else:
        whole = len(keep) == len(base.records)
        records = (base.records if whole else _take(base.records, keep)) + list(new)
        ids = (base.ids if whole else _take(base.ids, keep)) + ids
        index_cols = {k: np.concatenate([getattr(base, k)[keep], v]) for k, v in cols.items()}
        names = {
            "attribute": (base.attributes, base.attribute_code[keep]),
            "entity": (base.entities, base.entity_code[keep]),
            "kind": (base.kinds, base.kind_code[keep]),
            "needle": (base.needles, base.needle_code[keep]),
        }
    attributes, attribute_code = _coded(*names["attribute"], [r.attribute for r in new], none=True)
    entities, entity_code = _coded(*names["entity"], [r.entity for r in new], none=False, key=_entity_key)
    kinds, kind_code = _coded(*names["kind"], [r.kind for r in new], none=False)
    needles, needle_code = _coded(*names["needle"], [_needle(r) for r in new], none=True)
    if order is not None:
        records, ids = _take(records, order), _take(ids, order)
        index_cols = {k: v[order] for k, v in index_cols.items()}
        attribute_code, entity_code = attribute_code[order], entity_code[order]
        kind_code, needle_code = kind_code[order], needle_code[order]
    entity_set = set(entities)
    if base is None:
        cache = {} if cache is None else cache
        index = LexicalIndex([r.content for r in records], cache=cache)
        touched = set(entities)
        aliases: dict[str, tuple[set[str], set[str]]] = {}
    else:
        cache = base.cache if base.cache is not None else {}
        index = base.index.updated(keep, [r.content for r in new], order)
        gone = np.ones(len(base.records), dtype=bool)
        gone[keep] = False
        touched = {base.records[i].entity for i in np.flatnonzero(gone).tolist()} | {r.entity for r in new}
        aliases = {e: v for e, v in base.entity_alias.items() if e not in touched and e in entity_set}
    touched = {e for e in touched if not is_self_entity(e) and e in entity_set}
    contents: dict[str, list[str]] = {str(e): [] for e in touched}
    if touched:
        rows = np.flatnonzero(np.isin(entity_code, [i for i, e in enumerate(entities) if e in touched]))
        for i in rows.tolist():
            contents[str(records[i].entity)].append(records[i].content)
    aliases.update({e: entity_aliases(e, c) for e, c in contents.items()})
    snap = Snapshot(
        store=base.store if base is not None else None,
        records=records,
        index=index,
        entity_alias=aliases,
        position=_positions(base, ids),
        ids=ids,
        attributes=attributes,
        attribute_code=attribute_code,
        entities=entities,
        entity_code=entity_code,
        other_entities={e for e in entities if is_other_person(e)},
        kinds=kinds,
        kind_code=kind_code,
        needles=needles,
        needle_code=needle_code,
        namespace=base.namespace if base is not None else (),
        token=token,
        cache=cache,
        **index_cols,
    )
    if base is not None and needles is base.needles and "_needle_lookup" in base.__dict__:
        snap.__dict__["_needle_lookup"] = base.__dict__["_needle_lookup"]  # same values: same lookup
    return snap


def build_snapshot(
    store: Any,
    records: Sequence[MemoryRecord],
    *,
    namespace: tuple[str, ...] = (),
    token: Any = None,
    cache: dict[str, tuple[list[str], list[str]]] | None = None,
) -> Snapshot:
    """Columns for ``records`` (one pass; reused until the namespace's revision moves)."""
    records = list(records)
    cache = {} if cache is None else cache
    if len(cache) > 4 * len(records) + 1024:  # texts of deleted or edited records pile up
        cache.clear()
    snap = _assemble(None, np.zeros(0, dtype=np.int64), records, None, token, cache)
    snap.store, snap.namespace, snap.cache = store, tuple(namespace), cache
    return snap
