"""Retention (pure, no I/O): when a new record expires, and what a sweep at ``now`` archives or deletes."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus, ensure_aware

__all__ = ["DEFAULT_TTLS", "RetentionPolicy", "SweepAction", "SweepPlan"]

DEFAULT_TTLS: dict[str, timedelta | None] = {
    "preference": None,
    "profile": None,
    "fact": None,
    "event": timedelta(days=90),
    "episode": timedelta(days=30),
    "sensitive": timedelta(days=30),
}
"""Default lifetime per built-in kind (``None``: never by age); a ``ttl_days`` hint overrides any kind."""

_TIMEDELTA: TypeAdapter[timedelta] = TypeAdapter(timedelta)


def _as_ttl(value: Any, field: str) -> timedelta | None:
    if value is None:
        return None
    # Pydantic reads a bare number as *seconds*; for retention a number of days is what
    # anyone writing `{"event": 7}` means.
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = timedelta(days=value)
    elif isinstance(value, str):
        value = _TIMEDELTA.validate_python(value)  # ISO 8601 durations such as "P7D"
    if not isinstance(value, timedelta):
        msg = f"`{field}` must be a timedelta, a number of days or None, got {value!r}."
        raise TypeError(msg)
    if value <= timedelta(0):
        msg = f"`{field}` must be positive, got {value}; use None to keep records forever."
        raise ValueError(msg)
    return value


class SweepAction(BaseModel):
    """One thing a sweep should do to one record."""

    model_config = ConfigDict(frozen=True)

    id: str
    action: Literal["archive", "delete"]
    reason: Literal["expired", "archived_retention"]
    since: datetime
    """``archive``: when the record expired (a good ``valid_to``); ``delete``: when it was archived."""


class SweepPlan(BaseModel):
    """What a sweep at :attr:`now` should do; computed without touching the store."""

    now: datetime
    archive: list[SweepAction] = Field(default_factory=list)
    """Active or pending records whose TTL deadline has passed."""
    delete: list[SweepAction] = Field(default_factory=list)
    """Archived records kept longer than the archived-retention window (hard delete)."""

    @property
    def archive_ids(self) -> list[str]:
        """Ids to archive, in input order."""
        return [a.id for a in self.archive]

    @property
    def delete_ids(self) -> list[str]:
        """Ids to hard-delete, in input order."""
        return [a.id for a in self.delete]

    @property
    def empty(self) -> bool:
        """Whether the sweep has nothing to do."""
        return not self.archive and not self.delete


class RetentionPolicy(BaseModel):
    """How long memories live, per ``kind``: ``ttl`` overrides :data:`DEFAULT_TTLS` (numbers are days).

    Example:
        >>> from datetime import datetime, timezone
        >>> policy = RetentionPolicy(ttl={"event": 7})
        >>> t0 = datetime(2024, 3, 1, tzinfo=timezone.utc)
        >>> policy.expires_at_for("event", t0).date().isoformat()
        '2024-03-08'
        >>> policy.expires_at_for("preference", t0, ttl_days=7).date().isoformat()
        '2024-03-08'
        >>> policy.expires_at_for("profile", t0) is None
        True
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    ttl: dict[str, timedelta | None] = Field(default_factory=lambda: dict(DEFAULT_TTLS))
    """Lifetime per kind, counted from the record's ``valid_from``."""
    default_ttl: timedelta | None = None
    """Lifetime of kinds missing from :attr:`ttl`; ``None``: never expire."""
    archived_retention: timedelta | None = timedelta(days=365)
    """How long archived records (history) are kept before a sweep hard-deletes them; ``None``: forever."""
    stamp_missing: bool = True
    """In :meth:`sweep_plan`, give records without ``expires_at`` their kind's default deadline."""

    @field_validator("ttl", mode="before")
    @classmethod
    def _merge_ttl(cls, v: Any) -> dict[str, Any]:
        if not isinstance(v, dict):
            msg = f"`ttl` must map kind -> timedelta/days/None, e.g. {{'event': 7}}; got {type(v).__name__}."
            raise TypeError(msg)
        merged: dict[str, Any] = dict(DEFAULT_TTLS)
        for kind, value in v.items():
            name = str(kind).strip().lower()
            if not name:
                msg = "`ttl` has an empty kind name; use e.g. 'preference'."
                raise ValueError(msg)
            merged[name] = _as_ttl(value, f"ttl[{name!r}]")
        return merged

    @field_validator("default_ttl", "archived_retention", mode="before")
    @classmethod
    def _ttl_ok(cls, v: Any) -> Any:
        return _as_ttl(v, "default_ttl / archived_retention")

    def ttl_for(self, kind: str) -> timedelta | None:
        """The default lifetime of ``kind`` (case-insensitive); unknown kinds get :attr:`default_ttl`."""
        name = kind.strip().lower()
        return self.ttl[name] if name in self.ttl else self.default_ttl

    def expires_at_for(
        self,
        kind: str,
        valid_from: datetime,
        *,
        ttl_days: float | None = None,
        explicit: datetime | None = None,
    ) -> datetime | None:
        """A new record's deadline (``None``: never): ``explicit``, else ``valid_from`` + ``ttl_days`` or kind TTL."""
        if explicit is not None:
            return ensure_aware(explicit)
        start = ensure_aware(valid_from)
        if start is None:
            msg = "`valid_from` is required to compute an expiry; pass the record's valid_from."
            raise ValueError(msg)
        if ttl_days is not None:
            if isinstance(ttl_days, bool) or ttl_days <= 0:
                msg = f"`ttl_days` must be a positive number of days, got {ttl_days!r}; pass None for the kind default."
                raise ValueError(msg)
            return start + timedelta(days=ttl_days)
        ttl = self.ttl_for(kind)
        return None if ttl is None else start + ttl

    def effective_expiry(self, record: MemoryRecord) -> datetime | None:
        """The record's ``expires_at``, or (with :attr:`stamp_missing`) its kind's default deadline."""
        if record.expires_at is not None or not self.stamp_missing:
            return record.expires_at
        return self.expires_at_for(record.kind, record.valid_from)

    def stamp(self, record: MemoryRecord, *, ttl_days: float | None = None) -> MemoryRecord:
        """A copy of ``record`` with ``expires_at`` filled in, unless it already has one."""
        if record.expires_at is not None:
            return record
        deadline = self.expires_at_for(record.kind, record.valid_from, ttl_days=ttl_days)
        return record if deadline is None else record.model_copy(update={"expires_at": deadline})

    def archived_since(self, record: MemoryRecord) -> datetime:
        """When an archived record left the active set: the later of ``valid_to`` and ``updated_at``."""
        if record.valid_to is None:
            return record.updated_at
        return max(record.valid_to, record.updated_at)

    def sweep_plan(self, records: Iterable[MemoryRecord], now: datetime) -> SweepPlan:
        """What a sweep at ``now`` does: archive live records past their deadline, delete old archived ones."""
        at = ensure_aware(now)
        if at is None:
            msg = "`now` is required; pass the sweep time (e.g. schema.utcnow())."
            raise ValueError(msg)
        archive: list[SweepAction] = []
        delete: list[SweepAction] = []
        for record in records:
            if record.status is MemoryStatus.ARCHIVED:
                since = self.archived_since(record)
                if self.archived_retention is not None and since + self.archived_retention <= at:
                    delete.append(SweepAction(id=record.id, action="delete", reason="archived_retention", since=since))
                continue
            deadline = self.effective_expiry(record)
            if deadline is not None and deadline <= at:
                # Suggest valid_to = the deadline, clamped so the interval stays valid.
                since = max(deadline, record.valid_from)
                archive.append(SweepAction(id=record.id, action="archive", reason="expired", since=since))
        return SweepPlan(now=at, archive=archive, delete=delete)
