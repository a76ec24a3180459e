"""Pure helpers of the Chroma store (no I/O): names, validation, metadata, filters."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import InvalidNamespaceError, MatchCondition

MAX_KEY_CHARS = 1024
MAX_VALUE_BYTES = 4_000_000
"""An item's value as stored JSON: beyond this it is refused (a memory is not a file store)."""
MAX_FLAT_STR = 4096
"""Strings longer than this are not mirrored into Chroma metadata (filters run in Python)."""

SYS_NS = "_ns"
SYS_KEY = "_key"
SYS_CREATED = "_created"
SYS_UPDATED = "_updated"
SYS_EXPIRES = "_expires"
SYS_TTL = "_ttl"
SYS_INDEXED = "_idx"
SYS_FIELDS = "_fields"
SYS_PARTS = "_parts"
"""On an item indexed by several texts (paths, list elements): how many extra vector rows it has."""
SYS_PART_OF = "_of"
"""On an extra vector row: the key of its item (the row has no document)."""
SYS_SEQ = "_seq"
"""The namespace's write sequence number of the write that stored the row (see ``_buckets``)."""
SYS_RECORD = "_rec"
"""True on a row written as a memory record (``put_records``)."""
FLAT_PREFIX = "v."
FILTERED_FIELDS = frozenset({"status", "kind", "entity", "attribute", "value", "cardinality", "supersedes"})
"""The record fields mirrored as ``v.<field>``: what the record API, repair and retention filter on."""
TIME_PREFIX = "t."
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


def validate_namespace(namespace: Any, *, allow_empty: bool = False, what: str = "namespace") -> tuple[str, ...]:
    """Check a namespace tuple; raise ``InvalidNamespaceError`` naming the fix."""
    if isinstance(namespace, str) or not isinstance(namespace, (tuple, list)):
        msg = f"The {what} must be a tuple of strings such as ('memories', 'u1'), got {namespace!r}."
        raise InvalidNamespaceError(msg)
    namespace = tuple(namespace)
    if not namespace and not allow_empty:
        msg = f"The {what} cannot be empty; use e.g. ('memories', user_id)."
        raise InvalidNamespaceError(msg)
    for label in namespace:
        if not isinstance(label, str):
            msg = f"Namespace labels must be strings, got {type(label).__name__} {label!r} in {namespace!r}."
            raise InvalidNamespaceError(msg)
        if not label:
            msg = f"Namespace labels cannot be empty strings (in {namespace!r})."
            raise InvalidNamespaceError(msg)
        if "." in label:
            msg = f"Namespace label {label!r} contains '.', which separates labels; use '_' or '-' instead."
            raise InvalidNamespaceError(msg)
        if "\x00" in label:
            msg = f"Namespace label {label!r} contains a NUL byte; remove it."
            raise InvalidNamespaceError(msg)
    if namespace and namespace[0] == "langgraph" and what == "namespace":
        msg = f"The root label 'langgraph' is reserved by LangGraph, got {namespace!r}."
        raise InvalidNamespaceError(msg)
    return namespace


def validate_key(key: Any) -> str:
    """Keys are non-empty strings without NUL bytes, at most 1024 characters."""
    if not isinstance(key, str) or not key:
        msg = f"Item keys must be non-empty strings, got {key!r}."
        raise ValueError(msg)
    if "\x00" in key:
        msg = f"Item key {key!r} contains a NUL byte; remove it."
        raise ValueError(msg)
    if len(key) > MAX_KEY_CHARS:
        msg = f"Item key has {len(key)} characters; the limit is {MAX_KEY_CHARS}."
        raise ValueError(msg)
    return key


def dumps_value(value: Mapping[str, Any]) -> str:
    """Serialise an item value to JSON; a clear ``TypeError`` for what JSON can't hold."""
    if not isinstance(value, Mapping):
        msg = f"Item values must be dicts, got {type(value).__name__}."
        raise TypeError(msg)
    for k in value:
        if not isinstance(k, str):
            msg = f"Item value keys must be strings, got {k!r}."
            raise TypeError(msg)
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        msg = (
            f"Item value is not JSON-serialisable ({e}). Convert datetimes to ISO strings, "
            "sets to lists, and objects to dicts (e.g. `model.model_dump(mode='json')`)."
        )
        raise TypeError(msg) from e
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_VALUE_BYTES:
        msg = (
            f"Item value is {size:,} bytes as JSON; the limit is {MAX_VALUE_BYTES:,}. Store a summary or a "
            "reference to the document instead of the document itself."
        )
        raise ValueError(msg)
    return text


def part_id(key: str, n: int) -> str:
    """Id of an item's ``n``-th extra vector row (keys cannot hold NUL, so it never clashes)."""
    return f"{key}\x00{n}"


def part_rows(key: str, vectors: list[list[float]]) -> list[tuple[str, list[float], dict[str, Any]]]:
    """The extra vector rows of an item with several vectors (the first stays on the item's own row)."""
    return [(part_id(key, n), v, {SYS_PART_OF: key, SYS_INDEXED: True}) for n, v in enumerate(vectors[1:], 1)]


def part_ids(key: str, metadata: Mapping[str, Any] | None) -> list[str]:
    """Ids of every extra vector row of the item whose metadata this is."""
    return [part_id(key, n) for n in range(1, int((metadata or {}).get(SYS_PARTS) or 0) + 1)]


def ts(dt: datetime) -> float:
    """Datetime → POSIX seconds (metadata stores numbers)."""
    return dt.timestamp()


def from_ts(value: float) -> datetime:
    """POSIX seconds → aware UTC datetime."""
    return datetime.fromtimestamp(float(value), tz=timezone.utc)


def _iso_seconds(text: str) -> float | None:
    if not _ISO.match(text):
        return None
    try:
        dt = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        return None
    return dt.timestamp() if dt.tzinfo is not None else None


def flat_metadata(value: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata for Chroma ``where``: scalars of ``FILTERED_FIELDS`` as ``v.<field>``, aware ISO times as ``t.<field>``.

    Nothing else (each key costs Chroma storage and reads); other filters run in Python.
    """
    flat: dict[str, Any] = {}
    for k, v in value.items():
        if isinstance(v, str) and (seconds := _iso_seconds(v)) is not None:
            flat[TIME_PREFIX + k] = seconds
        if k not in FILTERED_FIELDS:
            continue
        elif isinstance(v, bool) or isinstance(v, int) or (isinstance(v, float) and math.isfinite(v)):
            flat[FLAT_PREFIX + k] = v
        elif isinstance(v, str) and len(v) <= MAX_FLAT_STR:
            flat[FLAT_PREFIX + k] = v
    return flat


def namespace_matches(conditions: tuple[MatchCondition, ...] | None, namespace: tuple[str, ...]) -> bool:
    """LangGraph prefix/suffix matching with ``*`` wildcards."""
    for cond in conditions or ():
        path = tuple(cond.path)
        if len(namespace) < len(path):
            return False
        pairs = zip(namespace, path) if cond.match_type == "prefix" else zip(reversed(namespace), reversed(path))
        if cond.match_type not in ("prefix", "suffix"):
            msg = f"Unsupported namespace match type {cond.match_type!r}; use 'prefix' or 'suffix'."
            raise ValueError(msg)
        if any(p != "*" and n != p for n, p in pairs):
            return False
    return True


def has_prefix(namespace: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    """Whether ``namespace`` starts with ``prefix``, label for label and literally (``*`` is a label, not a pattern)."""
    return tuple(namespace[: len(prefix)]) == tuple(prefix)


_OPS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def check_filter(filter: Mapping[str, Any] | None) -> None:
    """Reject operators LangGraph filters don't define, before any I/O."""
    for v in (filter or {}).values():
        if isinstance(v, Mapping):
            bad = [k for k in v if k.startswith("$") and k not in _OPS]
            if bad:
                msg = f"Unsupported filter operator(s) {bad}; use one of {list(_OPS)}."
                raise ValueError(msg)


def _compare(item_value: Any, cond: Any) -> bool:
    if isinstance(cond, Mapping):
        if any(k.startswith("$") for k in cond):
            return all(_apply(item_value, op, arg) for op, arg in cond.items())
        if not isinstance(item_value, Mapping):
            return False
        return all(_compare(item_value.get(k), v) for k, v in cond.items())
    if isinstance(cond, (list, tuple)):
        return (
            isinstance(item_value, (list, tuple))
            and len(item_value) == len(cond)
            and all(_compare(a, b) for a, b in zip(item_value, cond))
        )
    return bool(item_value == cond)


def _apply(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    try:
        left, right = float(value), float(arg)
    except (TypeError, ValueError):
        if isinstance(value, str) and isinstance(arg, str):
            left, right = value, arg  # type: ignore[assignment]
        else:
            return False
    return {"$gt": left > right, "$gte": left >= right, "$lt": left < right, "$lte": left <= right}[op]


def matches_filter(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """LangGraph filter semantics (same as ``InMemoryStore``), missing keys never match."""
    return all(_compare(value.get(k), cond) for k, cond in (filter or {}).items())


def is_expired(metadata: Mapping[str, Any], now: float) -> bool:
    """TTL deadline passed."""
    exp = metadata.get(SYS_EXPIRES)
    return exp is not None and float(exp) <= now
