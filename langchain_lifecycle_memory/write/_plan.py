"""What an update is told (``UpdateConfig``), what it will write (``UpdatePlan``) and what it did (``UpdateResult``)."""

from __future__ import annotations

from langchain_core.runnables import Runnable
from pydantic import BaseModel, ConfigDict, Field

from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus
from langchain_lifecycle_memory.store.retention import RetentionPolicy
from langchain_lifecycle_memory.write.redaction import Redactor

__all__ = ["UpdateConfig", "UpdatePlan", "UpdateResult"]


class UpdateConfig(BaseModel):
    """How facts become records."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    pending_below: float = Field(default=0.5, ge=0.0, le=1.0)
    """Facts with lower confidence are stored ``pending`` (not injected)."""
    reinforce_step: float = Field(default=0.1, ge=0.0, le=1.0)
    """Confidence added each time a fact is restated."""
    policy: RetentionPolicy = Field(default_factory=RetentionPolicy)
    redactor: Redactor | None = Field(default_factory=Redactor)
    """PII redaction before storage (default masks); ``None`` keeps text as is."""
    dedup_min_score: float = 0.97
    """Free-text facts this similar to an active one with the same text are refreshes."""
    judge: Runnable | None = None
    """Optional ``create_conflict_judge(model)`` for free-text facts."""
    resolve_slots: bool = True
    """Resolve each fact's slot against the stored ones by meaning (``_slot_identity.py``); off = exact names."""
    slot_threshold: float | None = None
    """Embedding cosine for "same attribute"; ``None``: calibrated for the bundled encoder, unused for others."""
    slot_judge: Runnable | None = None
    """Optional ``create_slot_judge(model)``: one call per turn for undecided slot names."""
    alike_threshold: float | None = None
    """Cosine of two values "of the same kind" (``AttributeSpec.replaces_alike``); ``None`` as ``slot_threshold``."""
    change_threshold: float | None = None
    """Cosine at which a statement worded as a change ("moved everything to Y", "改到周四了") archives the live
    free-text statement it is about (``_change.py``); ``None`` as ``slot_threshold``; above 1 turns it off.
    A ``judge`` decides instead when one is set."""
    said_threshold: float | None = None
    """Cosine of an extracted statement and the turn it came from below which, its value not said either,
    the fact is dropped: a small model's copy of the prompt's example; ``None`` as ``slot_threshold``."""


class UpdatePlan(BaseModel):
    """What an update will write: new/changed records, then archivals (in that order)."""

    namespace: tuple[str, ...]
    added: list[MemoryRecord] = Field(default_factory=list)
    refreshed: list[MemoryRecord] = Field(default_factory=list)
    archived: list[MemoryRecord] = Field(default_factory=list)
    repaired: list[MemoryRecord] = Field(default_factory=list)
    """Versions of a touched slot rewritten into one chain (a crash or a race had forked it)."""

    @property
    def empty(self) -> bool:
        """Nothing to write."""
        return not (self.added or self.refreshed or self.archived or self.repaired)


class UpdateResult(BaseModel):
    """What an update did, as a notebook user wants to see it."""

    added: list[MemoryRecord] = Field(default_factory=list)
    refreshed: list[MemoryRecord] = Field(default_factory=list)
    archived: list[MemoryRecord] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    """Extraction failures; the raw turn was kept as an ``episode`` record."""
    repaired: list[MemoryRecord] = Field(default_factory=list)
    """Versions rewritten into one chain because another writer forked a touched slot."""

    @property
    def pending(self) -> list[MemoryRecord]:
        """Added records waiting for confirmation."""
        return [r for r in self.added if r.status is MemoryStatus.PENDING]

    def summary(self) -> str:
        """One line: ``+2 added, 1 refreshed, 1 archived``."""
        text = f"+{len(self.added)} added, {len(self.refreshed)} refreshed, {len(self.archived)} archived"
        text += f", {len(self.repaired)} repaired" if self.repaired else ""
        return text + (f", {len(self.errors)} error(s)" if self.errors else "")
