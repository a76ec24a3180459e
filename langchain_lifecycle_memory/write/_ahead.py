"""Changes dated ahead: "I'm moving to Oslo next month" holds from the first of next month.

What such a change replaces is not archived when it is said: it lapses when the change starts (its
``expires_at``), so until then it is still the answer and ``as_of`` questions see both in turn. A change
called off before it starts gives the value it would have replaced its lifetime back.
"""

from __future__ import annotations

from datetime import datetime

from langchain_lifecycle_memory.schema import MemoryRecord

__all__ = ["LAPSES_FOR", "ahead", "lapsing", "restored"]

LAPSES_FOR = "lapses_for"
"""``metadata`` key: the id of the change dated ahead at whose start this record lapses."""
_EXPIRED_BEFORE = "expires_before"
"""``metadata`` key: the record's own deadline before a change dated ahead set one (ISO; empty: none)."""


def ahead(record: MemoryRecord, t: datetime) -> bool:
    """Whether ``record`` is a change said before it holds, still to start at ``t``."""
    return record.created_at < record.valid_from and t < record.valid_from


def lapsing(old: MemoryRecord, start: datetime, by: str | None, at: datetime) -> MemoryRecord:
    """``old``, still current, with its deadline at ``start``: the change ``by`` holds from then."""
    own = old.metadata.get(_EXPIRED_BEFORE, old.expires_at.isoformat() if old.expires_at else "")
    deadline = start if old.expires_at is None else min(old.expires_at, start)
    metadata = {**old.metadata, LAPSES_FOR: by or "", _EXPIRED_BEFORE: own}
    return old.model_copy(update={"expires_at": deadline, "metadata": metadata, "updated_at": at})


def restored(record: MemoryRecord, at: datetime) -> MemoryRecord:
    """``record`` with the deadline it had before a change dated ahead, now called off, set one."""
    metadata = {k: v for k, v in record.metadata.items() if k not in (LAPSES_FOR, _EXPIRED_BEFORE)}
    own = record.metadata.get(_EXPIRED_BEFORE) or None
    return record.model_copy(update={"expires_at": own, "metadata": metadata, "updated_at": at})
