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

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import ValidationError

from langchain_lifecycle_memory.read._splice import OPEN, micros
from langchain_lifecycle_memory.read.cues import record_cues
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
_STAMP = re.compile(
    r"(?:(?!0000)\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{6})?Z\n)*"
)
"""Timestamps as pydantic writes aware UTC datetimes, one per line (anything else: the slow path)."""
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

    def take(self, order: Sequence[int]) -> Fields:
        """The fields of the records at ``order``."""
        idx = np.asarray(order, dtype=np.int64)
        out = {}
        for name, value in self.__dict__.items():
            out[name] = value[idx] if isinstance(value, np.ndarray) else [value[i] for i in order]
        return Fields(**out)

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


def _instants(stamps: list[str]) -> np.ndarray | None:
    """Microseconds since the epoch of canonical ``...Z`` timestamps (``None``: not all are)."""
    if not stamps:
        return np.zeros(0, dtype=np.int64)
    joined = "\n".join(stamps) + "\n"
    if joined.count("\n") != len(stamps) or _STAMP.fullmatch(joined) is None:
        return None
    try:
        return np.array([s[:-1] for s in stamps], dtype="datetime64[us]").astype(np.int64)
    except ValueError:  # a day the month does not have
        return None


def _instant(stamp: str) -> int | None:
    got = _instants([stamp])
    return None if got is None else int(got[0])


def decode(namespace: tuple[str, ...], documents: Sequence[str]) -> tuple[list[str], Fields, dict[int, MemoryRecord]]:
    """The record documents among ``documents``, sorted as ``list_records``, and their fields.

    Returns ``(documents, fields, parsed)``: the documents of records (others dropped),
    their ``Fields``, and the records parsed on the way (position -> record: those the
    fast path could not vouch for, validated by ``MemoryRecord``).
    """
    values = [loads(doc) for doc in documents]
    fast = [_vouched(v) for v in values]
    stamps: list[str] = []
    for v, ok in zip(values, fast):
        if ok:
            stamps += (v["created_at"], v["updated_at"], v["valid_from"], v.get("valid_to") or v["valid_from"])
            stamps.append(v.get("expires_at") or v["valid_from"])
    instants = _instants(stamps)
    if instants is None:  # one odd timestamp: each checked on its own
        each = [_instant(s) for s in stamps]
        per_doc = [each[i : i + 5] for i in range(0, len(each), 5)]
    else:
        per_doc = instants.reshape(-1, 5).tolist()
    kept: list[str] = []
    rows: list[tuple[Any, ...]] = []
    parsed: dict[int, MemoryRecord] = {}
    at = 0
    for doc, v, ok in zip(documents, values, fast):
        if ok:
            created, updated, start, end, expires = per_doc[at]
            at += 1
            if v.get("valid_to") is None:
                end = OPEN
            if v.get("expires_at") is None:
                expires = OPEN
            if None not in (created, updated, start, end, expires) and end >= start:
                rows.append((created, start, v["id"], len(kept), v, (created, updated, start, end, expires)))
                kept.append(doc)
                continue
        try:  # the model decides: another writer's form, or something validation changes or refuses
            record = MemoryRecord.from_value(namespace, json.loads(doc))  # as ``Rows`` parses it
        except (ValidationError, ValueError, TypeError):
            continue  # not a memory record (a plain BaseStore item): list_records skips it too
        times = _times(record)
        rows.append((times[0], times[2], record.id, len(kept), record, times))
        kept.append(doc)
    rows.sort(key=lambda row: row[:3])
    documents_out = [kept[row[3]] for row in rows]
    for i, row in enumerate(rows):
        if isinstance(row[4], MemoryRecord):
            parsed[i] = row[4]
    return documents_out, _fields_of_values([row[4] for row in rows], [row[5] for row in rows]), parsed


def _fields_of_values(values: list[Any], times: list[tuple[int, ...]]) -> Fields:
    instants = np.array(times, dtype=np.int64).reshape(-1, 5)
    out: dict[str, Any] = {n: instants[:, i].copy() for i, n in enumerate(_INSTANTS)}
    values = [v if type(v) is dict else _as_value(v) for v in values]
    out |= {
        "ids": [v["id"] for v in values],
        "contents": [v["content"] for v in values],
        "entities": [v.get("entity") for v in values],
        "attributes": [v.get("attribute") for v in values],
        "values": [v.get("value") for v in values],
        "kinds": [v.get("kind", "fact") for v in values],
        "statuses": [_STATUS[v.get("status", "active")] for v in values],
        "confidence": [float(v.get("confidence", 0.8)) for v in values],
        "supersedes": [v.get("supersedes") for v in values],
        "superseded_by": [v.get("superseded_by") for v in values],
        "cardinality": [v.get("cardinality", "single") for v in values],
        "metadata": [v.get("metadata", {}) for v in values],
    }
    out["cues"] = [_cues(m) for m in out["metadata"]]
    return Fields(**out)


def _as_value(r: MemoryRecord) -> dict[str, Any]:
    """The fields ``_fields_of_values`` reads, of a validated record."""
    value = {k: getattr(r, k) for k in ("id", "content", "entity", "attribute", "value", "kind", "confidence")}
    value |= {"supersedes": r.supersedes, "superseded_by": r.superseded_by, "cardinality": r.cardinality}
    return value | {"status": r.status.value, "metadata": r.metadata}


def _cues(metadata: dict[str, Any]) -> list[str]:
    return record_cues(_Meta(metadata))  # type: ignore[arg-type]


class _Meta:
    __slots__ = ("metadata",)

    def __init__(self, metadata: dict[str, Any]) -> None:
        self.metadata = metadata
