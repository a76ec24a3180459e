"""Stored record documents to the snapshot's per-record fields, without a model per record (pure).

A full read of a 50k-record namespace spent about half its time validating every
document into a ``MemoryRecord`` (pydantic, five timestamp validators per record) only
to read a dozen fields into columns. ``decode`` reads those fields from the parsed JSON
instead, for documents in the exact form ``MemoryRecord.to_value`` writes, after
checking what validation would check (types, the content rules, the kind, status,
confidence range, source, validity interval; timestamps as pydantic writes them,
``...Z`` UTC, parsed together by numpy). A document it cannot vouch for (another
writer's form, a value validation would change or refuse) goes through
``MemoryRecord.from_value`` as before, and a document that is not a record is left out.
Either way the fields equal those of the validated record (tested on both paths).
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import ValidationError

from langchain_lifecycle_memory.read._splice import OPEN, micros
from langchain_lifecycle_memory.read.cues import CUES_KEY, record_cues
from langchain_lifecycle_memory.schema import MAX_CONTENT_CHARS, MemoryRecord, MemoryStatus

try:  # a dependency of langsmith (langchain-core's); the same values as ``json.loads``, faster
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover
    _fast_loads = json.loads

__all__ = ["Fields", "decode", "fields_of_records", "loads"]

_FIELDS = frozenset(MemoryRecord.model_fields)
_REQUIRED = frozenset({"id", "content", "created_at", "updated_at", "valid_from"})
"""Fields a document must hold for the fast path (the rest have constant defaults)."""
_STATUS = {s.value: s for s in MemoryStatus}
_SOURCE = frozenset({"extractor", "thread_id", "message_ids"})
_OPTIONAL_TEXT = ("entity", "attribute", "value", "supersedes", "superseded_by")
_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(document: str) -> Any:
    """``json.loads`` (orjson where it can; Python's parser for what orjson refuses, e.g. ``NaN``).

    orjson reads integers past 64 bits as floats: no field ``decode`` takes from a
    document it vouches for can hold one (``confidence`` is checked to be in [0, 1]).
    """
    try:
        return _fast_loads(document)
    except ValueError:
        return json.loads(document)


@dataclass
class Fields:
    """What the snapshot reads of each record, one list per field, in record order."""

    ids: list[str]
    contents: list[str]
    entities: list[str | None]
    attributes: list[str | None]
    values: list[str | None]
    kinds: list[str]
    statuses: list[MemoryStatus]
    confidence: list[float]
    created: np.ndarray
    updated: np.ndarray
    valid_from: np.ndarray
    valid_to: np.ndarray
    """``OPEN`` for none, as ``expires_at``."""
    expires_at: np.ndarray
    supersedes: list[str | None]
    superseded_by: list[str | None]
    cardinality: list[Any]
    metadata: list[Any]
    cues: list[list[str]]

    def __len__(self) -> int:
        return len(self.ids)

    def set_record(self, i: int, r: MemoryRecord) -> None:
        """Replace position ``i``'s fields with ``r``'s."""
        one = fields_of_records([r])
        for name, value in one.__dict__.items():
            getattr(self, name)[i] = value[0]


_INSTANTS = ("created", "updated", "valid_from", "valid_to", "expires_at")


def _times(r: MemoryRecord) -> tuple[int, ...]:
    """``_INSTANTS`` of a record, in microseconds (``OPEN``: none)."""
    return tuple(micros(t) for t in (r.created_at, r.updated_at, r.valid_from, r.valid_to, r.expires_at))


def fields_of_records(records: Sequence[MemoryRecord]) -> Fields:
    """``Fields`` of record objects."""
    return _fields_of_values(list(records), [_times(r) for r in records])


def _vouched(d: Any) -> bool:
    """Whether validating ``d`` would accept it as is (every check of ``MemoryRecord`` but the instants')."""
    if type(d) is not dict or not d.keys() <= _FIELDS or not _REQUIRED <= d.keys():
        return False
    content, kind = d["content"], d.get("kind", "fact")
    if type(d["id"]) is not str or type(content) is not str or type(kind) is not str:
        return False
    if not content.strip() or "\x00" in content or len(content) > MAX_CONTENT_CHARS or _SURROGATE.search(content):
        return False
    if not kind or kind.strip() != kind or d.get("status", "active") not in _STATUS:
        return False
    for name in _OPTIONAL_TEXT:
        v = d.get(name)
        if v is not None and type(v) is not str:
            return False
    confidence = d.get("confidence", 0.8)
    if type(confidence) not in (float, int) or not 0.0 <= confidence <= 1.0:
        return False
    if d.get("cardinality", "single") not in ("single", "set") or type(d.get("metadata", {})) is not dict:
        return False
    source = d.get("source")
    if source is not None:
        if type(source) is not dict or not source.keys() <= _SOURCE:
            return False
        thread, messages = source.get("thread_id"), source.get("message_ids", [])
        if type(source.get("extractor", "")) is not str or (thread is not None and type(thread) is not str):
            return False
        if type(messages) is not list or not all(type(m) is str for m in messages):
            return False
    for name in ("valid_to", "expires_at"):
        v = d.get(name)
        if v is not None and type(v) is not str:
            return False
    return type(d["created_at"]) is str and type(d["updated_at"]) is str and type(d["valid_from"]) is str


_LAYOUT = "0000-00-00T00:00:00"
_DIGITS = np.array([i for i, c in enumerate(_LAYOUT) if c == "0"])
_SEPARATORS = np.array([i for i, c in enumerate(_LAYOUT) if c != "0"])
_SEPARATOR_CODES = np.array([ord(_LAYOUT[i]) for i in _SEPARATORS], dtype=np.uint32)
_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)


def _instants(stamps: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Microseconds since the epoch of timestamps in pydantic's aware-UTC form, and which are in it.

    ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z`` with a real date and time (year 1-9999): exactly
    the instants ``ensure_aware`` reads from them, computed on all at once. Any other
    string is marked ``False`` (its record goes through ``MemoryRecord``).
    """
    n = len(stamps)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    lengths = np.fromiter(map(len, stamps), dtype=np.int64, count=n)
    codes = np.array(stamps, dtype="<U27").view(np.uint32).reshape(n, 27).astype(np.int64)
    long = lengths == 27
    ok = (lengths == 20) | long
    ok &= np.all(codes[:, _SEPARATORS] == _SEPARATOR_CODES, axis=1)
    ok &= np.where(long, codes[:, 26], codes[:, 19]) == ord("Z")
    ok &= ~long | (codes[:, 19] == ord("."))
    digits = codes - ord("0")
    frac_digits = digits[:, 20:26]
    ok &= np.all((digits[:, _DIGITS] >= 0) & (digits[:, _DIGITS] <= 9), axis=1)
    ok &= ~long | np.all((frac_digits >= 0) & (frac_digits <= 9), axis=1)
    d = np.where(ok[:, None], digits, 0)

    def number(a: int, b: int) -> np.ndarray:
        out = np.zeros(n, dtype=np.int64)
        for i in range(a, b):
            out = out * 10 + d[:, i]
        return out

    year, month, day = number(0, 4), number(5, 7), number(8, 10)
    hour, minute, second = number(11, 13), number(14, 16), number(17, 19)
    micro = np.where(long, number(20, 26), 0)
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    ok &= (year >= 1) & (month >= 1) & (month <= 12) & (hour <= 23) & (minute <= 59) & (second <= 59)
    month_days = _MONTH_DAYS[np.clip(month, 0, 12)] + ((month == 2) & leap)
    ok &= (day >= 1) & (day <= month_days)
    # Days since 1970-01-01 of the proleptic Gregorian date (H. Hinnant's ``days_from_civil``).
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    out = ((days * 86400 + hour * 3600 + minute * 60 + second) * 1_000_000 + micro).astype(np.int64)
    return np.where(ok, out, 0), ok


def decode(namespace: tuple[str, ...], documents: Sequence[str]) -> tuple[list[str], Fields, dict[int, MemoryRecord]]:
    """The record documents among ``documents``, sorted as ``list_records``, and their fields.

    Returns ``(documents, fields, parsed)``: the documents of records (others dropped),
    their ``Fields``, and the records parsed on the way (position -> record: those the
    fast path could not vouch for, validated by ``MemoryRecord``).
    """
    values = [loads(doc) for doc in documents]
    cols = _columns(values)
    if cols is not None and values and _all_vouched(cols):  # the usual case: checked a field at a time
        fast = [True] * len(values)
        times, good = _times_of(cols, range(len(values)))
    else:
        cols = None
        fast = [_vouched(v) for v in values]
        picked = [i for i, ok in enumerate(fast) if ok]
        times = np.full((len(values), 5), OPEN, dtype=np.int64)
        good = np.ones(len(values), dtype=bool)
        if picked:
            picked_cols = _columns([values[i] for i in picked])
            assert picked_cols is not None  # _vouched: every field present or defaulted
            times[picked], good[picked] = _times_of(picked_cols, range(len(picked)))
    kept: list[int] = []
    parsed: dict[int, MemoryRecord] = {}
    for i, ok in enumerate((good & fast).tolist()):
        if not ok:  # another writer's form, or something validation changes or refuses: the model decides
            try:
                record = MemoryRecord.from_value(namespace, json.loads(documents[i]))  # as ``Rows`` parses it
            except (ValidationError, ValueError, TypeError):
                continue  # not a memory record (a plain BaseStore item): list_records skips it too
            parsed[i], values[i], times[i] = record, _as_value(record), _times(record)
        kept.append(i)
    kept_times = times[kept]
    order = np.lexsort((kept_times[:, 2], kept_times[:, 0]))  # list_records' (created_at, valid_from, id)
    key = kept_times[order][:, [0, 2]]
    if len(order) > 1 and bool(np.all(key[1:] == key[:-1], axis=1).any()):  # equal instants: by id too
        created, start, ids = kept_times[:, 0].tolist(), kept_times[:, 2].tolist(), [values[i]["id"] for i in kept]
        order = np.array(sorted(range(len(kept)), key=lambda j: (created[j], start[j], ids[j])), dtype=np.int64)
    rows = [kept[j] for j in order.tolist()]
    if cols is None or parsed or len(rows) < len(values):
        cols = _columns([values[i] for i in rows])
        assert cols is not None
        rows_in_cols: Sequence[int] = range(len(rows))
    else:
        rows_in_cols = rows
    fields = _fields(cols, rows_in_cols, times[rows])
    return [documents[i] for i in rows], fields, {p: parsed[i] for p, i in enumerate(rows) if i in parsed}


_KEYS = ("id", "content", "created_at", "updated_at", "valid_from")
_DEFAULTS = {
    "entity": None,
    "attribute": None,
    "value": None,
    "kind": "fact",
    "status": "active",
    "confidence": 0.8,
    "source": None,
    "valid_to": None,
    "supersedes": None,
    "superseded_by": None,
    "expires_at": None,
    "metadata": {},
    "cardinality": "single",
}
_MISSING = object()
_ALL_KEYS = (*_KEYS, *sorted(_DEFAULTS.keys() - {"cardinality"}))
_GET_ALL = operator.itemgetter(*_ALL_KEYS)


def _columns(values: list[Any]) -> dict[str, Sequence[Any]] | None:
    """Each field of every document: a sequence per field, defaults filled in.

    ``None`` when some document is not an object of record fields holding the required ones.
    """
    if not values:
        return {k: () for k in (*_KEYS, *_DEFAULTS)}
    if set(map(type, values)) != {dict}:
        return None
    cardinality = [v.get("cardinality", _MISSING) for v in values]
    try:  # to_value's form: every field present (``cardinality`` on slot records): one C pass
        cols: dict[str, Sequence[Any]] = dict(zip(_ALL_KEYS, zip(*map(_GET_ALL, values))))
        # ...and no other key (a count per document is cheaper than comparing key sets)
        exact = list(map(len, values)) == [len(_ALL_KEYS) + (c is not _MISSING) for c in cardinality]
    except KeyError:
        exact = False
        try:
            cols = {k: [v[k] for v in values] for k in _KEYS}
        except KeyError:
            return None
        cols |= {k: [v.get(k, d) for v in values] for k, d in _DEFAULTS.items() if k != "cardinality"}
    if not exact and not all(map(_FIELDS.issuperset, values)):
        return None
    cols["cardinality"] = [c if c is not _MISSING else "single" for c in cardinality]
    return cols


def _all_vouched(col: dict[str, Sequence[Any]]) -> bool:
    """``_vouched`` of every document, checked a field at a time (``col``: ``_columns``)."""
    text, maybe = {str}, {str, type(None)}
    if not all(set(map(type, col[name])) <= text for name in ("id", "content", "kind", *_TIMES[:3])):
        return False
    if not all(set(map(type, col[name])) <= maybe for name in (*_OPTIONAL_TEXT, *_TIMES[3:])):
        return False
    contents, kinds = col["content"], col["kind"]
    joined = "".join(contents)
    if "\x00" in joined or _SURROGATE.search(joined) or not all(map(str.strip, contents)):
        return False
    if max(map(len, contents)) > MAX_CONTENT_CHARS or not all(kinds) or tuple(map(str.strip, kinds)) != tuple(kinds):
        return False
    try:
        if not set(col["status"]) <= _STATUS.keys() or not set(col["cardinality"]) <= {"single", "set"}:
            return False
    except TypeError:  # an unhashable value
        return False
    confidence = col["confidence"]
    if not set(map(type, confidence)) <= {float, int} or set(map(type, col["metadata"])) != {dict}:
        return False
    numbers = np.array(confidence, dtype=np.float64)
    if not bool(np.all((numbers >= 0.0) & (numbers <= 1.0))):
        return False
    sources = [s for s in col["source"] if s is not None]
    if not set(map(type, sources)) <= {dict} or not all(map(_SOURCE.issuperset, sources)):
        return False
    if (
        not {type(s.get("extractor", "")) for s in sources} <= text
        or not {type(s.get("thread_id")) for s in sources} <= maybe
    ):
        return False
    messages = [m for s in sources if (m := s.get("message_ids", [])) != []]
    return set(map(type, messages)) <= {list} and set(map(type, itertools.chain.from_iterable(messages))) <= text


_TIMES = ("created_at", "updated_at", "valid_from", "valid_to", "expires_at")


def _times_of(col: dict[str, Sequence[Any]], rows: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """``_INSTANTS`` of the documents (``OPEN``: none), and which ones validation would accept so."""
    m = len(rows)
    out = np.full((m, 5), OPEN, dtype=np.int64)
    good = np.ones(m, dtype=bool)
    for j, name in enumerate(_TIMES):
        stamps = col[name]
        if j < 3:
            at = np.arange(m)
        else:
            at = np.array([i for i, s in enumerate(stamps) if s is not None], dtype=np.int64)
            stamps = [stamps[i] for i in at.tolist()]
        instants, ok = _instants(stamps)
        out[at, j] = instants
        good[at] &= ok
    return out, good & (out[:, 3] >= out[:, 2])  # valid_to before valid_from: refused by validation


def _fields(col: dict[str, Sequence[Any]], rows: Sequence[int], times: np.ndarray) -> Fields:
    """``Fields`` of the documents ``rows`` of ``col`` (``_columns``), with their ``times``."""

    def take(name: str) -> list[Any]:
        return list(map(col[name].__getitem__, rows))

    metadata = take("metadata")
    return Fields(
        ids=take("id"),
        contents=take("content"),
        entities=take("entity"),
        attributes=take("attribute"),
        values=take("value"),
        kinds=take("kind"),
        statuses=list(map(_STATUS.__getitem__, take("status"))),
        confidence=list(map(float, take("confidence"))),
        supersedes=take("supersedes"),
        superseded_by=take("superseded_by"),
        cardinality=take("cardinality"),
        metadata=metadata,
        cues=[_cues(m) if CUES_KEY in m else [] for m in metadata],
        **{n: np.ascontiguousarray(times[:, i]) for i, n in enumerate(_INSTANTS)},
    )


def _fields_of_values(values: list[Any], times: Any) -> Fields:
    cols = _columns([v if type(v) is dict else _as_value(v) for v in values])
    assert cols is not None
    return _fields(cols, range(len(values)), np.array(times, dtype=np.int64).reshape(-1, 5))


def _as_value(r: MemoryRecord) -> dict[str, Any]:
    """The fields ``_fields`` reads, of a validated record."""
    value = {k: getattr(r, k) for k in (*_KEYS[:2], "entity", "attribute", "value", "kind", "confidence")}
    value |= {"supersedes": r.supersedes, "superseded_by": r.superseded_by, "cardinality": r.cardinality}
    return value | {"status": r.status.value, "metadata": r.metadata} | dict.fromkeys(_KEYS[2:])


def _cues(metadata: dict[str, Any]) -> list[str]:
    return record_cues(_Meta(metadata))  # type: ignore[arg-type]


class _Meta:
    __slots__ = ("metadata",)

    def __init__(self, metadata: dict[str, Any]) -> None:
        self.metadata = metadata
