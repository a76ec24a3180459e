"""What an update is told (``UpdateConfig``), what it will write (``UpdatePlan``), writing it, and what it did."""

from __future__ import annotations

from langchain_core.runnables import Runnable
from pydantic import BaseModel, ConfigDict, Field

from langchain_lifecycle_memory.errors import StoreUnavailableError
from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus
from langchain_lifecycle_memory.store.chroma_store import ChromaRecordStore
from langchain_lifecycle_memory.store.embeddings import UniversalSentenceEncoderEmbeddings
from langchain_lifecycle_memory.store.repair import check_slots, writer_lock
from langchain_lifecycle_memory.store.retention import RetentionPolicy
from langchain_lifecycle_memory.write.redaction import Redactor

__all__ = ["UpdateConfig", "UpdatePlan", "UpdateResult", "apply_plan", "calibrated"]


class UpdateConfig(BaseModel):
    """How facts become records."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    pending_below: float = Field(default=0.5, ge=0.0, le=1.0)
    """Facts with lower confidence are stored ``pending`` (not injected)."""
    reinforce_step: float = Field(default=0.1, ge=0.0, le=1.0)
    """Confidence added each time a fact in a slot is restated (words kept without one are only refreshed)."""
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
    free-text statement it is about (``_replaced.py``); ``None`` as ``slot_threshold``; above 1 turns it off.
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


def apply_plan(store: ChromaRecordStore, plan: UpdatePlan) -> UpdateResult:
    """Write a plan under the writer lock: new and refreshed records first, archivals last; then repair forks."""
    first = [*plan.added, *plan.refreshed]
    second = [*plan.archived, *plan.repaired]
    slots = {r.slot for r in [*first, *second] if r.slot is not None}
    parents = {r.id for r in second} | {r.supersedes for r in [*first, *second] if r.supersedes}
    written: list[MemoryRecord] = []
    with writer_lock(store, plan.namespace):
        try:
            if first:
                store.put_records(first)
                written = first
            if second:
                store.put_records(second)
        except StoreUnavailableError as e:
            raise StoreUnavailableError(_partial_write(plan, written, e)) from e
        repaired = check_slots(store, plan.namespace, slots, parents=parents) if slots else []
    return UpdateResult(
        added=plan.added, refreshed=plan.refreshed, archived=plan.archived, repaired=[*plan.repaired, *repaired]
    )


def _partial_write(plan: UpdatePlan, written: list[MemoryRecord], error: Exception) -> str:
    """Say exactly which part of a plan reached the store before ``error``."""
    if not written:
        first = ", ".join(r.id[:8] for r in [*plan.added, *plan.refreshed])
        return (
            f"{error} The update stopped at its first write: whether its new or refreshed record(s) ({first}) "
            "landed is unknown, nothing was archived. Check `history` and send the update again."
        )
    ids = ", ".join(r.id[:8] for r in written)
    old = ", ".join(r.id[:8] for r in plan.archived)
    return (
        f"{error} Written before the failure: {len(written)} new or refreshed record(s) ({ids}). Not written: "
        f"archiving the {len(plan.archived)} version(s) they replace ({old}), so those still read as current "
        f"until `repair_slots(store, {plan.namespace!r})` or the next write to the slot archives them."
    )


def calibrated(threshold: float | None, store: ChromaRecordStore, default: float) -> float | None:
    """A configured threshold, else ``default`` for the bundled encoder (``None`` for other encoders)."""
    bundled = isinstance(store.embeddings, UniversalSentenceEncoderEmbeddings)
    return default if threshold is None and bundled else threshold
