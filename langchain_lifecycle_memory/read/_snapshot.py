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

import functools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import SimpleNamespace
from typing import Any

import numpy as np
from pydantic import ValidationError

from langchain_lifecycle_memory.read._decode import Fields, decode, fields_of_records
from langchain_lifecycle_memory.read._mentions import needles_of
from langchain_lifecycle_memory.read._rows import Picked, PickedIndex, Rows, local_positions
from langchain_lifecycle_memory.read._splice import OPEN, STATUSES, _rank, _slot_codes, micros, order_key, splice
from langchain_lifecycle_memory.read.lexical import LexicalIndex
from langchain_lifecycle_memory.read.routing import entity_aliases, is_other_person, is_self_entity, value_in
from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus, normalize_value
from langchain_lifecycle_memory.store.gcpause import paused_gc
from langchain_lifecycle_memory.store.slots import SET, SINGLE, cardinality, resolve_current
from langchain_lifecycle_memory.store.slots import _groups as out_of_line

__all__ = ["MAX_DELTAS", "Snapshot", "build_snapshot", "local_positions", "micros", "snapshot_of_documents"]

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
    dense: Any = None
    """A small namespace's rows and vectors (``_small.DenseRows``): its dense channel is scored
    in-process. ``None`` otherwise, and after ``apply`` (a delta carries no vectors)."""
    stamp: Any = None
    """A small namespace's snapshot on an embedded store: the database stamp taken before its read."""
    background: Any = field(default=None, repr=False, compare=False)  # ``restricted``'s rows left out
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
            records = sorted([*kept, *added.values()], key=order_key)  # as list_records
            snap = build_snapshot(self.store, records, namespace=self.namespace, token=token, cache=self.cache)
        else:
            snap = splice(self, removed, sorted(added.values(), key=order_key), token)
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
                mask &= self.status_code != STATUSES.index(MemoryStatus.PENDING)
                mask &= (self.valid_from <= t) & (t < self.valid_to)
                mask &= ~self._outranked(mask)
            elif statuses is not None:
                wanted = {MemoryStatus(s) for s in statuses}
                mask &= np.array([s in wanted for s in STATUSES])[self.status_code]
            if as_of is None and len(self._masks) < 16:
                self._masks[key] = mask.copy()
        if not include_expired:  # only records with a deadline can have passed it
            expiring = self._expiring
            mask[expiring[self.expires_at[expiring] <= micros(now)]] = False
        return mask

    @functools.cached_property
    def _expiring(self) -> np.ndarray:
        return np.flatnonzero(self.expires_at != OPEN)

    @functools.cached_property
    def kind_counts(self) -> np.ndarray:
        """Records of each kind (indexed like ``kinds``)."""
        return np.bincount(self.kind_code, minlength=len(self.kinds))

    @functools.cached_property
    def _attributed(self) -> np.ndarray:
        return np.flatnonzero(self.attribute_code >= 0)

    def scoring_rows(
        self, queries: Sequence[str], eligible: np.ndarray, extra: Iterable[int]
    ) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, float]], np.ndarray]:
        """Eligible positions some channel can score above 0, each query's BM25 scores, and which rows are lexical only.

        A record outside them has no dense hit (``extra``: the dense and cue hits), no
        BM25 match, no attribute (no slot route) and no value the queries mention, so
        every channel is 0 and so is its fused score: below any positive ``min_score``.
        The third array marks the rows (of the first) that only a BM25 match brought in.
        """
        scores = {q: self.index.raw_scores(q) for q in dict.fromkeys(queries)}
        raws = [raw for raw, _ in scores.values()]  # the query first, then any paraphrases
        mask = raws[0] > 0
        for raw in raws[1:]:
            mask |= raw > 0
        other = np.zeros(len(mask), dtype=bool)
        other[self._attributed] = True
        if self.needles:
            other |= self.value_mentions(queries)
        other[np.fromiter(extra, dtype=np.int64)] = True
        mask |= other
        mask &= eligible
        rows = np.flatnonzero(mask)
        return rows, scores, ~other[rows]

    def restricted(
        self,
        rows: np.ndarray,
        scores: dict[str, tuple[np.ndarray, float]],
        background: np.ndarray | None = None,
    ) -> Snapshot:
        """The rows ``rows`` (sorted positions) as a snapshot of their own, for scoring only.

        Columns, records and BM25 scores (``scores``: per query, over the whole
        namespace, so corpus statistics stay the namespace's) of those rows, in order;
        what scoring reads of the namespace as a whole (attributes, entities, aliases,
        values) is shared. ``background``: eligible positions left out whose only evidence, a
        weak BM25 match, cannot reach ``min_score``; they count in the lexical RRF (``_live``).
        """
        state = {k: v for k, v in self.__dict__.items() if k not in ROW_COLUMNS and k not in _DERIVED}
        state |= {"records": Picked(self.records, rows), "stored": [], "position": {}, "cues": {}, "ids": []}
        state |= {"texts": None, "index": PickedIndex(self.index, rows, scores), "_masks": {}, "saved": None}
        state |= {"since_saved": [], "_source": self, "_rows": rows}
        if background is not None and len(background):
            state["background"] = (rows, background, PickedIndex(self.index, background, scores))
        snap = object.__new__(_Restricted)  # columns are gathered when scoring reads them
        snap.__dict__.update(state)
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

    def entity_mask(self, entities: Iterable[str], rows: np.ndarray | None = None) -> np.ndarray:
        """Records (of ``rows``, or all) whose entity is one of ``entities``."""
        wanted = set(entities)
        codes = [i for i, e in enumerate(self.entities) if e in wanted]
        of = self.entity_code if rows is None else self.entity_code[rows]
        return np.isin(of, codes) if codes else np.zeros(len(of), dtype=bool)

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


ROW_COLUMNS = (
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


_DERIVED = ("_expiring", "_attributed", "kind_counts")


class _Restricted(Snapshot):
    """``Snapshot.restricted``'s result: a column is gathered from the source rows when first read."""

    def __getattr__(self, name: str) -> Any:
        if name in ROW_COLUMNS:
            state = self.__dict__
            value = state[name] = getattr(state["_source"], name)[state["_rows"]]
            return value
        raise AttributeError(name)


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
    with paused_gc():  # many long-lived objects at once (see ``store.gcpause``)
        stored = list(records)
        if documents is not None and len(documents) != len(stored):
            msg = f"{len(documents)} documents for {len(stored)} records."
            raise ValueError(msg)
        items: list[Any] = list(documents) if documents is not None else stored
        parsed = dict(enumerate(stored))
        return _build(store, fields_of_records(stored), items, parsed, namespace, token, cache, documents is not None)


def snapshot_of_documents(
    store: Any,
    documents: Sequence[str],
    *,
    namespace: tuple[str, ...],
    token: Any = None,
    cache: dict[str, tuple[list[str], list[str]]] | None = None,
) -> Snapshot:
    """``build_snapshot`` of a namespace's stored documents, in any order, non-records among them.

    Equals ``build_snapshot(store, *store.read_namespace(namespace), ...)`` over the same
    documents, without a ``MemoryRecord`` per document (``_decode``).
    """
    with paused_gc():
        kept, fields, parsed = decode(tuple(namespace), documents)
        return _build(store, fields, kept, parsed, namespace, token, cache, True)


def _build(
    store: Any,
    fields: Fields,
    items: list[Any],
    parsed: dict[int, MemoryRecord],
    namespace: tuple[str, ...],
    token: Any,
    cache: dict[str, tuple[list[str], list[str]]] | None,
    as_rows: bool,
) -> Snapshot:
    """The snapshot of records whose fields are ``fields`` and stored forms ``items`` (documents or records).

    ``parsed``: records already validated, by position (others are parsed from their
    documents if slot resolution needs them).
    """
    ns = tuple(namespace)
    views = _resolved(fields, items, parsed, ns)  # position -> the record as readers see it, where it differs
    for i, view in views.items():
        fields.set_record(i, view)
    shown = list(items)
    for i, view in views.items():
        shown[i] = view
    kept_stored: Sequence[MemoryRecord] = Rows(list(items), ns) if as_rows else items
    kept_records: Sequence[MemoryRecord] = Rows(shown, ns) if as_rows else shown
    n = len(fields)
    cache = {} if cache is None else cache
    if len(cache) > 4 * n + 1024:  # texts of deleted or edited records pile up
        cache.clear()
    self_entity = {e: is_self_entity(e) for e in set(fields.entities)}
    contents: dict[str, list[str]] = {}
    for e, c in zip(fields.entities, fields.contents):
        if not self_entity[e]:
            contents.setdefault(str(e), []).append(c)
    attributes = sorted({a for a in fields.attributes if a})
    attr_pos = {a: i for i, a in enumerate(attributes)}
    entities = sorted(self_entity, key=lambda e: (e is not None, e or ""))
    ent_pos = {e: i for i, e in enumerate(entities)}
    kinds = sorted(set(fields.kinds))
    kind_pos = {k: i for i, k in enumerate(kinds)}
    pending = MemoryStatus.PENDING
    slots = zip(fields.statuses, fields.entities, fields.attributes, fields.cardinality, fields.metadata)
    slotted = [s is not pending and bool(e) and bool(a) and not _is_set(c, m) for s, e, a, c, m in slots]
    attribute_code = np.array([attr_pos[a] if a else -1 for a in fields.attributes], dtype=np.int64)
    entity_code = np.array([ent_pos[e] for e in fields.entities], dtype=np.int64)
    needle_of_row = needles_of(fields.values)
    needles = sorted({x for x in needle_of_row if x})
    needle_pos = {x: i for i, x in enumerate(needles)}
    texts = [c if not q else "\n".join([c, *q]) for c, q in zip(fields.contents, fields.cues)]  # ``lexical_text``
    return Snapshot(
        store=store,
        records=kept_records,
        stored=kept_stored,
        index=LexicalIndex(texts, cache=cache),
        entity_alias={e: entity_aliases(e, c) for e, c in contents.items()},
        position=dict(zip(fields.ids, range(n))),
        attributes=attributes,
        attribute_code=attribute_code,
        entities=entities,
        entity_code=entity_code,
        other_entities={e for e in entities if is_other_person(e)},
        status_code=np.array([STATUSES.index(s) for s in fields.statuses], dtype=np.int8),
        kinds=kinds,
        kind_code=np.array([kind_pos[k] for k in fields.kinds], dtype=np.int64),
        valid_from=fields.valid_from,
        valid_to=fields.valid_to,
        expires_at=fields.expires_at,
        fresh_at=np.maximum(fields.valid_from, fields.updated),
        confidence=np.array(fields.confidence, dtype=np.float64),
        created=fields.created,
        slot_code=_slot_codes(np.array(slotted, dtype=bool), entity_code, attribute_code, len(attributes)),
        rank=_rank(fields.valid_from, fields.created),
        needles=needles,
        needle_code=np.array([needle_pos.get(x or "", -1) for x in needle_of_row], dtype=np.int64),
        namespace=ns,
        token=token,
        cache=cache,
        cues={i: c for i, c in enumerate(fields.cues) if c},
        ids=list(fields.ids),
        texts=texts,
    )


def _is_set(field: Any, metadata: Any) -> bool:
    """``store.slots.cardinality(record) == SET`` from the two fields it reads."""
    if (field is None or field == SINGLE) and not (isinstance(metadata, dict) and "cardinality" in metadata):
        return False
    return cardinality({"cardinality": field, "metadata": metadata}) == SET


def _resolved(
    fields: Fields, items: list[Any], parsed: dict[int, MemoryRecord], namespace: tuple[str, ...]
) -> dict[int, MemoryRecord]:
    """``store.slots.resolve_current``'s changes, by position: only slots of 2+ records can need any."""
    by_slot: dict[tuple[str, str], list[int]] = {}
    pending = MemoryStatus.PENDING
    for i, (e, a, s) in enumerate(zip(fields.entities, fields.attributes, fields.statuses)):
        if e and a and s is not pending:
            by_slot.setdefault((e, a), []).append(i)
    multi = [i for group in by_slot.values() if len(group) > 1 for i in group]
    if not multi:
        return {}
    light = [
        SimpleNamespace(
            id=fields.ids[i],
            namespace=namespace,
            entity=fields.entities[i],
            attribute=fields.attributes[i],
            status=fields.statuses[i],
            supersedes=fields.supersedes[i],
            superseded_by=fields.superseded_by[i],
            cardinality=fields.cardinality[i],
            metadata=fields.metadata[i],
        )
        for i in multi
    ]
    need = sorted({multi[j] for group in out_of_line(light) for j in group})  # type: ignore[arg-type]
    if not need:
        return {}
    real = [parsed[i] if i in parsed else MemoryRecord.from_value(namespace, json.loads(items[i])) for i in need]
    return {i: view for i, r, view in zip(need, real, resolve_current(real)) if view is not r}
