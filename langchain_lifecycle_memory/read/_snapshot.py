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
import copy
import functools
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
from pydantic import ValidationError

from langchain_lifecycle_memory.read._rows import Rows, raw_items
from langchain_lifecycle_memory.read.cues import record_cues
from langchain_lifecycle_memory.read.lexical import LexicalIndex
from langchain_lifecycle_memory.read.routing import entity_aliases, is_other_person, is_self_entity, value_in
from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus, ensure_aware, normalize_value
from langchain_lifecycle_memory.store.slots import resolve_current, slot_key

__all__ = ["MAX_DELTAS", "Snapshot", "build_snapshot", "local_positions", "micros"]

MAX_DELTAS = 4096
"""After this many journal deltas a snapshot is read again in full. ``apply`` is exact
(it equals a fresh build over the same records), so this only bounds how long a
snapshot lives without a full read."""

_SPLICE_SHARE = 0.25
"""``apply`` rebuilds instead of splicing when a delta touches more than this share of the rows."""
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
    records: Sequence[MemoryRecord]
    """The records as readers see them (``store.slots.resolve_current``: one current value per slot).

    A ``Rows`` when built from stored documents: a record is parsed when first read."""
    stored: Sequence[MemoryRecord]
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
    created: np.ndarray
    """``created_at`` instants (``rank``'s second key)."""
    slot_code: np.ndarray
    """Single-valued slot of each record, numbered by first appearance (-1: none, set-valued or pending)."""
    rank: np.ndarray
    """Each record's place in version precedence (``store.slots.precedence``)."""
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
    cues: dict[int, list[str]] = field(default_factory=dict)
    """Write-time cues (``cues``) per record position, for records that have any."""
    ids: list[str] = field(default_factory=list)
    """``records``' ids, in order."""
    texts: list[str] | None = None
    """What BM25 indexed per record, when built in full (a sidecar saves it); ``None`` after ``apply``."""
    saved: Any = None
    """Revision of the sidecar file this snapshot descends from (``None``: none)."""
    since_saved: list[tuple[str, Any]] = field(default_factory=list)
    """Journal changes applied since that file was saved (a sidecar delta records them)."""
    _masks: dict[Any, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    """``eligible``'s status/kind masks per filter (the snapshot never changes: ``apply`` makes a new one)."""

    def apply(self, changes: Sequence[tuple[str, dict[str, Any] | None]], token: Any) -> Snapshot:
        """A new snapshot with a store journal's ``(key, value or None)`` changes applied.

        Costs time in the number of changes plus a few array passes: changed records are
        spliced into the columns at their sorted place, the lexical index is updated (not
        rebuilt) and slot resolution is redone only for the slots the changes touch, so a
        search right after a write stays cheap in a large namespace. A delta touching more
        than ``_SPLICE_SHARE`` of the rows is built afresh instead. Either way the result
        equals ``build_snapshot`` over the same records.
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
        if len(removed) + len(added) > max(64, _SPLICE_SHARE * len(self.stored)):
            kept = [r for i, r in enumerate(self.stored) if i not in removed]
            records = sorted([*kept, *added.values()], key=_order_key)  # as list_records
            snap = build_snapshot(self.store, records, namespace=self.namespace, token=token, cache=self.cache)
        else:
            snap = _splice(self, removed, sorted(added.values(), key=_order_key), token)
        snap.deltas = self.deltas + 1
        if self.saved is not None and len(self.since_saved) + len(changes) <= max(1024, 0.05 * len(snap)):
            snap.saved, snap.since_saved = self.saved, [*self.since_saved, *changes]
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
        key = (None if statuses is None else tuple(statuses), None if kinds is None else tuple(kinds))
        cached = self._masks.get(key) if as_of is None else None
        if cached is not None:  # the status and kind part depends on the snapshot alone
            mask = cached.copy()
        else:
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
            if as_of is None and len(self._masks) < 16:
                self._masks[key] = mask.copy()
        if not include_expired:  # only records with a deadline can have passed it
            expiring = self._expiring
            mask[expiring[self.expires_at[expiring] <= micros(now)]] = False
        return mask

    @functools.cached_property
    def _expiring(self) -> np.ndarray:
        return np.flatnonzero(self.expires_at != _OPEN)

    @functools.cached_property
    def _attributed(self) -> np.ndarray:
        return np.flatnonzero(self.attribute_code >= 0)

    def scoring_rows(
        self, queries: Sequence[str], eligible: np.ndarray, extra: Iterable[int]
    ) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, float]]]:
        """Eligible positions some channel can score above 0, and each query's BM25 scores.

        A record outside them has no dense hit (``extra``: the dense and cue hits), no
        BM25 match, no attribute (no slot route) and no value the queries mention, so
        every channel is 0 and so is its fused score: below any positive ``min_score``.
        """
        scores = {q: self.index.raw_scores(q) for q in dict.fromkeys(queries)}
        mask = np.zeros(len(self.records), dtype=bool)
        for raw, _ in scores.values():
            mask |= raw > 0
        mask[self._attributed] = True
        if self.needles:
            mask |= self.value_mentions(queries)
        mask[np.fromiter(extra, dtype=np.int64)] = True
        return np.flatnonzero(mask & eligible), scores

    def restricted(self, rows: np.ndarray, scores: dict[str, tuple[np.ndarray, float]]) -> Snapshot:
        """The rows ``rows`` (sorted positions) as a snapshot of their own, for scoring only.

        Columns, records and BM25 scores (``scores``: per query, over the whole
        namespace, so corpus statistics stay the namespace's) of those rows, in order;
        what scoring reads of the namespace as a whole (attributes, entities, aliases,
        values) is shared.
        """
        snap = copy.copy(self)  # a shallow copy (``dataclasses.replace`` costs more than the scoring saves)
        for k in ("_expiring", "_attributed"):
            snap.__dict__.pop(k, None)
        snap.__dict__.update({k: getattr(self, k)[rows] for k in _ROW_COLUMNS})
        snap.records = _Picked(self.records, rows)
        snap.stored, snap.position, snap.cues, snap.ids, snap.texts = [], {}, {}, [], None
        snap.index = _PickedIndex(self.index, rows, scores)  # type: ignore[assignment]
        snap._masks, snap.saved, snap.since_saved = {}, None, []
        return snap

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


_ROW_COLUMNS = (
    "attribute_code",
    "entity_code",
    "status_code",
    "kind_code",
    "valid_from",
    "valid_to",
    "expires_at",
    "fresh_at",
    "confidence",
    "created",
    "slot_code",
    "rank",
    "needle_code",
)


class _Picked(Sequence[MemoryRecord]):
    """Some rows of a record list, parsed only when read."""

    def __init__(self, base: Sequence[MemoryRecord], rows: np.ndarray) -> None:
        self._base, self._rows = base, rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._base[int(p)] for p in self._rows[i]]
        return self._base[int(self._rows[i])]


class _PickedIndex:
    """The BM25 scores of some rows (computed over the whole namespace) and its known names."""

    def __init__(self, index: LexicalIndex, rows: np.ndarray, scores: dict[str, tuple[np.ndarray, float]]) -> None:
        self._index, self._rows, self._scores = index, rows, scores

    def scores(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        raw, ideal = self._scores.get(query) or self._index.raw_scores(query)
        return LexicalIndex.coverage(raw[self._rows], ideal)

    def mentions_known_name(self, query: str) -> bool:
        return self._index.mentions_known_name(query)


def local_positions(rows: np.ndarray, positions: list[int]) -> dict[int, int]:
    """Each of ``positions`` that is in the sorted ``rows`` -> its index there."""
    if not positions or not len(rows):
        return {}
    at = np.searchsorted(rows, positions)
    found = (at < len(rows)) & (rows[np.minimum(at, len(rows) - 1)] == positions)
    return {p: int(i) for p, i, ok in zip(positions, at.tolist(), found.tolist()) if ok}


def build_snapshot(
    store: Any,
    records: Sequence[MemoryRecord],
    *,
    namespace: tuple[str, ...] = (),
    token: Any = None,
    cache: dict[str, tuple[list[str], list[str]]] | None = None,
    documents: Sequence[str] | None = None,
) -> Snapshot:
    """Columns for ``records`` (one pass; reused until the namespace's revision moves).

    With ``documents`` (each record's stored JSON, in order) the snapshot keeps those
    instead of the record objects (``Rows``): a fraction of the memory, and a record is
    parsed again only when a search returns it.
    """
    stored = list(records)
    records = resolve_current(stored)
    kept_stored: Sequence[MemoryRecord] = stored
    kept_records: Sequence[MemoryRecord] = records
    if documents is not None:
        if len(documents) != len(stored):
            msg = f"{len(documents)} documents for {len(stored)} records."
            raise ValueError(msg)
        docs = list(documents)
        kept_stored = Rows(list(docs), namespace)
        kept_records = Rows([d if v is r else v for d, v, r in zip(docs, records, stored)], namespace)
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
    slots: dict[Any, int] = {}
    slot_code = np.full(len(records), -1, dtype=np.int64)
    for i, r in enumerate(records):
        if r.status is not MemoryStatus.PENDING and (key := slot_key(r)) is not None:
            slot_code[i] = slots.setdefault(key, len(slots))
    valid_from = np.array([micros(r.valid_from) for r in records], dtype=np.int64)
    created = np.array([micros(r.created_at) for r in records], dtype=np.int64)
    rank = np.empty(len(records), dtype=np.int64)  # the order of ``store.slots.precedence``, vectorised
    rank[np.lexsort((np.array([r.id for r in records], dtype=str), created, valid_from))] = np.arange(len(records))
    needles = sorted({n for r in records if (n := _needle(r))})
    needle_pos = {n: i for i, n in enumerate(needles)}
    texts = [_lexical_text(r, cues.get(i)) for i, r in enumerate(records)]
    return Snapshot(
        store=store,
        records=kept_records,
        stored=kept_stored,
        index=LexicalIndex(texts, cache=cache),
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
        created=created,
        slot_code=slot_code,
        rank=rank,
        needles=needles,
        needle_code=np.array([needle_pos.get(_needle(r) or "", -1) for r in records], dtype=np.int64),
        namespace=tuple(namespace),
        token=token,
        cache=cache,
        cues=cues,
        ids=[r.id for r in records],
        texts=texts,
    )


def _lexical_text(record: MemoryRecord, cues: list[str] | None) -> str:
    """What BM25 indexes for a record: its content, and its write-time cues if any."""
    return record.content if not cues else "\n".join([record.content, *cues])


# ---------------------------------------------------------------- splicing (``apply``)
def _splice(base: Snapshot, removed: set[int], new: list[MemoryRecord], token: Any) -> Snapshot:
    """``base`` without the rows ``removed``, with the ``new`` records (sorted) at their sorted places."""
    mask = np.ones(len(base.records), dtype=bool)
    mask[list(removed)] = False
    keep = np.flatnonzero(mask)
    # Where each new record goes among the kept ones (both sorted as list_records):
    # its place in the full sorted list, counted in kept records only.
    at = [bisect.bisect_left(base.stored, _order_key(r), key=_order_key) for r in new]
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
    needles, needle_code = _coded(base.needles, base.needle_code[keep], [_needle(r) for r in new])
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
    index = base.index.updated(keep, [_lexical_text(r, c) for r, c in zip(new, new_cues)], order)
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
    snap = Snapshot(
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


def _order_key(r: MemoryRecord) -> tuple[Any, ...]:
    return (r.created_at, r.valid_from, r.id)  # as list_records


def _slotted(r: MemoryRecord) -> bool:
    return r.status is not MemoryStatus.PENDING and slot_key(r) is not None


def _needle(r: MemoryRecord) -> str | None:
    needle = normalize_value(r.value) if r.value else ""
    return needle if len(needle) >= 2 else None


def _entity_key(e: str | None) -> tuple[bool, str]:
    return (e is not None, e or "")


def _positions(base: Snapshot, ids: list[str]) -> dict[str, int]:
    """Id -> position; a copy of ``base``'s when its records kept their places."""
    if len(ids) >= len(base.ids) and ids[: len(base.ids)] == base.ids:
        position = base.position.copy()
        position.update(zip(ids[len(base.ids) :], range(len(base.ids), len(ids))))
        return position
    return dict(zip(ids, range(len(ids))))


def _columns(records: Sequence[MemoryRecord]) -> dict[str, np.ndarray]:
    """Per-record columns of ``records`` (codes are filled in by ``_coded``)."""
    return {
        "status_code": np.array([_STATUSES.index(r.status) for r in records], dtype=np.int8),
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
