"""The memory record, the extracted fact, and the status state machine (every stage speaks these types)."""

from __future__ import annotations

import re
import unicodedata
import uuid
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from langchain_lifecycle_memory.errors import InvalidTransitionError

__all__ = [
    "KINDS",
    "Fact",
    "MemoryRecord",
    "MemorySource",
    "MemoryStatus",
    "PERSON",
    "SELF_ENTITIES",
    "ensure_aware",
    "is_self_entity",
    "local_time",
    "normalize_value",
    "said_at",
    "utcnow",
]

KINDS: tuple[str, ...] = ("preference", "profile", "fact", "event", "episode", "sensitive")
"""Built-in kinds; they drive retention. Any other non-empty name is allowed too."""

MAX_CONTENT_CHARS = 1_000_000


class MemoryStatus(str, Enum):
    """Lifecycle state of a record: ``pending -> active -> archived``."""

    PENDING = "pending"
    ACTIVE = "active"
    ARCHIVED = "archived"

    def __str__(self) -> str:
        return self.value


_ALLOWED: dict[MemoryStatus, frozenset[MemoryStatus]] = {
    MemoryStatus.PENDING: frozenset({MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED}),
    MemoryStatus.ACTIVE: frozenset({MemoryStatus.ARCHIVED}),
    MemoryStatus.ARCHIVED: frozenset(),
}


def utcnow() -> datetime:
    """The current time, timezone-aware (UTC)."""
    return datetime.now(timezone.utc)


def ensure_aware(value: datetime | str | float | int | None) -> datetime | None:
    """Coerce a datetime, ISO-8601 string or POSIX timestamp to an aware UTC datetime (naive is taken as UTC)."""
    parsed = _parsed(value)
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


SKEW = timedelta(days=1)
"""How far ahead of this machine's clock a write's ``at`` may be (another machine's clock, a time zone mix-up)."""


def said_at(value: datetime | str | float | int | None) -> datetime:
    """When something was said (``at=`` of a write), as :func:`ensure_aware`; now when not given; never the future.

    A future date would make its value current today and end the one it replaces at that date: a timestamp
    mistaken for another is refused rather than written.
    """
    when = ensure_aware(value) or utcnow()
    if when > utcnow() + SKEW:
        msg = f"`at` is {when.isoformat()}, in the future: it is when the words were said (leave it out for now)."
        raise ValueError(msg)
    return when


def local_time(value: datetime | str | float | int | None) -> datetime | None:
    """``value`` as an aware datetime in the zone it was given in (naive: UTC), where its user's "today" is.

    >>> local_time("2025-03-03T07:30:00+08:00").date(), ensure_aware("2025-03-03T07:30:00+08:00").date()
    (datetime.date(2025, 3, 3), datetime.date(2025, 3, 2))
    """
    parsed = _parsed(value)
    if parsed is None:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)


def _parsed(value: datetime | str | float | int | None) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, bool):
        msg = f"Expected a datetime, ISO string or timestamp, got bool {value!r}."
        raise TypeError(msg)
    if isinstance(value, (int, float)):
        if abs(value) >= 1e11:  # year 5138 in seconds: a timestamp in milliseconds (JavaScript's Date.now())
            msg = f"Timestamp {value!r} looks like milliseconds; pass seconds ({value / 1000!r}) or an ISO string."
            raise ValueError(msg)
        return datetime.fromtimestamp(float(value), tz=timezone.utc)
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            value = datetime.fromisoformat(text)
        except ValueError as e:
            msg = f"Cannot parse {value!r} as an ISO-8601 datetime (e.g. '2024-03-01T10:00:00Z')."
            raise ValueError(msg) from e
    if not isinstance(value, datetime):
        msg = f"Expected a datetime, ISO string or timestamp, got {type(value).__name__}."
        raise TypeError(msg)
    return value


def normalize_value(value: str | None) -> str:
    """Normalise a slot value for comparison: full/half width, case, whitespace."""
    if value is None:
        return ""
    text = unicodedata.normalize("NFKC", str(value)).casefold()
    return " ".join(text.split())


SELF_ENTITIES = frozenset({"user", "self", "me", "i", "myself", "用户", "我", "本人"})
"""Entity ids that name the user (the speaker)."""
PERSON = "person"
"""First part of the id of someone known only by name ("Kevin wears Le Labo" -> ``person_kevin``): a person
whose relation to the user was not said; a later "my husband Kevin" is the same man."""


def is_self_entity(entity: str | None) -> bool:
    """Whether a record's or fact's entity is the user (or unset)."""
    return entity is None or normalize_value(entity) in SELF_ENTITIES


_SURROGATE = re.compile("[\ud800-\udfff]")


def check_text(value: str, field: str) -> str:
    """Refuse text no store can hold (NUL bytes, lone surrogates) with an error naming ``field``."""
    if "\x00" in value:
        msg = f"`{field}` contains a NUL byte ('\\x00'); remove it before storing."
        raise ValueError(msg)
    bad = _SURROGATE.search(value)
    if bad is not None:
        msg = f"`{field}` contains a lone surrogate (U+{ord(bad.group()):04X}), not valid Unicode; fix the text."
        raise ValueError(msg)
    return value


def _slot(self: Fact | MemoryRecord) -> tuple[str, str] | None:
    """``(entity, attribute)`` when both are set."""
    return (self.entity, self.attribute) if self.entity and self.attribute else None


class MemorySource(BaseModel):
    """Where a record came from."""

    model_config = ConfigDict(extra="forbid")

    extractor: str = "manual"
    """``llm``, ``rule``, ``gold``, ``manual``, ``import``..."""
    thread_id: str | None = None
    """The session / thread the statement was made in."""
    message_ids: list[str] = Field(default_factory=list)
    """Ids of the messages (or LoCoMo ``dia_id`` s) the record was derived from."""


class Fact(BaseModel):
    """One entity-keyed fact from an extractor; ``retract``: the slot's value stopped being true, with no successor."""

    model_config = ConfigDict(extra="ignore")

    entity: str | None = Field(default=None, description="Who/what the fact is about, e.g. 'user'.")
    attribute: str | None = Field(default=None, description="snake_case slot name, e.g. 'editor'.")
    value: str | None = Field(default=None, description="The slot value in its original spelling.")
    content: str = Field(description="A standalone statement of the fact, in the conversation's language.")
    kind: str = Field(default="fact", description="preference, profile, fact, event or sensitive.")
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    valid_from: datetime | None = Field(default=None, description="When the fact became true.")
    ttl_days: float | None = Field(default=None, gt=0, description="Lifetime hint, e.g. 7 for 'this week'.")
    operation: Literal["assert", "retract"] = "assert"
    cardinality: Literal["single", "set"] | None = Field(
        default=None,
        description="'set' when the slot holds several values at once (allergies, languages, pets); "
        "'single' when a new value replaces the old one; leave empty if unsure.",
    )
    cues: list[str] = Field(
        default_factory=list,
        description="2-4 short situations or requests where this fact matters, even ones that share no "
        "word with it (a fear of heights matters when booking a hotel room).",
    )
    evidence: str | None = Field(
        default=None,
        exclude=True,
        description="Set by the extractor, not the model: the words the fact was read from. A fact that "
        "would replace a stored value is checked against them first (``write._grounding``).",
    )
    switch: bool = Field(
        default=False,
        exclude=True,
        description="Set by the extractor, not the model: the words say the value replaced an earlier one "
        '("I\'ve switched to X", "我改用 X 了"). In a set it replaces the members of its kind.',
    )

    @field_validator("content")
    @classmethod
    def _content_ok(cls, v: str) -> str:
        v = check_text(v, "content").strip()
        if not v:
            msg = "A fact needs non-empty `content`."
            raise ValueError(msg)
        return v

    @field_validator("entity", "attribute", "value")
    @classmethod
    def _blank_to_none(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None:
            return None
        v = check_text(str(v), str(info.field_name)).strip()
        return v or None

    @field_validator("valid_from", mode="before")
    @classmethod
    def _aware(cls, v: Any) -> datetime | None:
        return ensure_aware(v)

    slot = property(_slot)


_EMPTY_BY_DEFAULT = ("entity", "attribute", "value", "valid_to", "supersedes", "superseded_by", "expires_at")
"""Record fields whose default is ``None``: ``to_value`` leaves them out while unset."""
_DEFAULT_SOURCE = {"extractor": "manual"}


class MemoryRecord(BaseModel):
    """A stored memory with its lifecycle metadata (bi-temporal)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    namespace: tuple[str, ...]
    content: str
    entity: str | None = None
    attribute: str | None = None
    value: str | None = None
    kind: str = "fact"
    status: MemoryStatus = MemoryStatus.ACTIVE
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    source: MemorySource = Field(default_factory=MemorySource)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    valid_from: datetime = Field(default_factory=utcnow)
    valid_to: datetime | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    expires_at: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    cardinality: Literal["single", "set"] = "single"
    """``set``: the slot holds several active values (a new value joins); ``single``: it supersedes."""

    @field_validator("namespace", mode="before")
    @classmethod
    def _namespace_ok(cls, v: Any) -> tuple[str, ...]:
        if isinstance(v, str) or not isinstance(v, (tuple, list)):
            msg = f"`namespace` must be a tuple of strings such as ('memories', 'u1'), got {v!r}."
            raise TypeError(msg)
        if not v:
            msg = "`namespace` cannot be empty; use e.g. ('memories', user_id)."
            raise ValueError(msg)
        for label in v:
            if not isinstance(label, str) or not label:
                msg = f"Namespace labels must be non-empty strings, got {label!r} in {tuple(v)!r}."
                raise ValueError(msg)
            if "." in label or "\x00" in label:
                msg = f"Namespace label {label!r} may not contain '.' or NUL bytes."
                raise ValueError(msg)
        return tuple(v)

    @field_validator("content")
    @classmethod
    def _content_ok(cls, v: str) -> str:
        v = check_text(v, "content")
        if not v.strip():
            msg = "A memory needs non-empty `content`."
            raise ValueError(msg)
        if len(v) > MAX_CONTENT_CHARS:
            msg = (
                f"`content` has {len(v)} characters; the limit is {MAX_CONTENT_CHARS}. Split it into smaller memories."
            )
            raise ValueError(msg)
        return v

    @field_validator("kind")
    @classmethod
    def _kind_ok(cls, v: str) -> str:
        v = v.strip()
        if not v:
            msg = f"`kind` cannot be empty; use one of {KINDS} or your own name."
            raise ValueError(msg)
        return v

    @field_validator("created_at", "updated_at", "valid_from", "valid_to", "expires_at", mode="before")
    @classmethod
    def _aware(cls, v: Any) -> datetime | None:
        return ensure_aware(v)

    @model_validator(mode="after")
    def _interval_ok(self) -> MemoryRecord:
        if self.valid_to is not None and self.valid_to < self.valid_from:
            msg = f"`valid_to` ({self.valid_to}) is before `valid_from` ({self.valid_from})."
            raise ValueError(msg)
        return self

    slot = property(_slot)

    def is_valid_at(self, t: datetime) -> bool:
        """World time: ``valid_from <= t < valid_to``."""
        t = ensure_aware(t)  # type: ignore[assignment]
        return self.valid_from <= t and (self.valid_to is None or t < self.valid_to)

    def is_expired(self, now: datetime) -> bool:
        """Whether the TTL deadline has passed at ``now``."""
        return self.expires_at is not None and self.expires_at <= ensure_aware(now)  # type: ignore[operator]

    def transition(self, status: MemoryStatus | str, *, at: datetime | None = None, **changes: Any) -> MemoryRecord:
        """Return a copy moved to ``status``, archiving closes ``valid_to``; ``InvalidTransitionError`` if barred."""
        target = MemoryStatus(status)
        if target != self.status and target not in _ALLOWED[self.status]:
            msg = (
                f"Record {self.id} cannot go from {self.status.value!r} to {target.value!r}; "
                "allowed: pending -> active -> archived (archived is final: store a new record instead)."
            )
            raise InvalidTransitionError(msg)
        when = ensure_aware(at) or utcnow()
        update: dict[str, Any] = {"status": target, "updated_at": when, **changes}
        if target is MemoryStatus.ARCHIVED and self.valid_to is None and "valid_to" not in changes:
            update["valid_to"] = max(when, self.valid_from)
        return self.model_validate({**self.model_dump(), **update})

    def to_value(self) -> dict[str, Any]:
        """The stored JSON-safe value: fields at their empty default are left out (:meth:`from_value` restores them)."""
        # Only slot records carry `cardinality`: its presence marks them in the index (the slot catalogue).
        exclude = {"namespace"} if self.slot is not None else {"namespace", "cardinality"}
        value = self.model_dump(mode="json", exclude=exclude)
        for name in _EMPTY_BY_DEFAULT:
            if value.get(name) is None:
                value.pop(name, None)
        if not value.get("metadata"):
            value.pop("metadata", None)
        source = value.get("source") or {}
        if source.get("thread_id") is None:
            source.pop("thread_id", None)
        if not source.get("message_ids"):
            source.pop("message_ids", None)
        if source == _DEFAULT_SOURCE:
            value.pop("source", None)
        return value

    @classmethod
    def from_value(cls, namespace: tuple[str, ...], value: dict[str, Any]) -> MemoryRecord:
        """Inverse of :meth:`to_value`."""
        return cls.model_validate({**value, "namespace": namespace})
