"""Maintenance stage: sweep expired memories, forget (archive) on request, purge a tenant, reindex."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from langchain_lifecycle_memory.errors import ReindexError
from langchain_lifecycle_memory.read.routing import attribute_mentioned, value_mentioned
from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus, ensure_aware, utcnow
from langchain_lifecycle_memory.store import chroma as C
from langchain_lifecycle_memory.store.maintenance import CompactReport, ReindexReport, compact, reindex
from langchain_lifecycle_memory.store.repair import doubled_slots, repair_namespace
from langchain_lifecycle_memory.store.retention import RetentionPolicy
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES
from langchain_lifecycle_memory.write.redaction import Redactor
from langchain_lifecycle_memory.write.update import is_about, named_person

if TYPE_CHECKING:
    from langchain_lifecycle_memory.lifecycle.observability import RetrievalLog
    from langchain_lifecycle_memory.store.chroma_store import ChromaRecordStore as ChromaMemoryStore

__all__ = [
    "FORGOTTEN",
    "CompactReport",
    "ForgetMatch",
    "NamespaceSweep",
    "PurgeReport",
    "ReindexError",
    "ReindexReport",
    "SweepReport",
    "compact",
    "forget",
    "forget_query_text",
    "preview_forget",
    "purge",
    "redact_record",
    "reindex",
    "restore",
    "sweep",
    "sweep_where",
]

_LIVE = [MemoryStatus.ACTIVE.value, MemoryStatus.PENDING.value]
_SPECS = {spec.name: spec for spec in DEFAULT_ATTRIBUTES}
_CLEAR_BELOW = 0.15
_CLEAR_MARGIN = 0.25
_FORGET_WORDS = re.compile(
    r"(请|麻烦|帮我|给我|把|将|彻底|永远|全部|忘掉|忘记|忘了|删掉|删除|清除|别再记|不要记|别记|不用记|记忆|吧|了"
    r"|\b(?:please|can you|could you|forget|forget about|delete|remove|erase|stop remembering|don'?t remember"
    r"|that|about|the fact)\b)",
    re.IGNORECASE,
)


# ---------------------------------------------------------------------- sweep
class NamespaceSweep(BaseModel):
    """What a sweep did (or would do) in one namespace."""

    namespace: tuple[str, ...]
    archived: list[str] = Field(default_factory=list)
    """Ids archived because their TTL passed."""
    deleted: list[str] = Field(default_factory=list)
    """Ids of archived records hard-deleted after the archived-retention window."""
    repaired: list[str] = Field(default_factory=list)
    """Ids rewritten into one chain: a slot a crash or racing writers left with two current values."""


class SweepReport(BaseModel):
    """Counts of a :func:`sweep`; ``namespaces`` lists only namespaces where something happened."""

    now: datetime
    dry_run: bool = False
    scanned_namespaces: int = 0
    namespaces: list[NamespaceSweep] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def archived(self) -> int:
        """Records archived, all namespaces."""
        return sum(len(n.archived) for n in self.namespaces)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def deleted(self) -> int:
        """Records hard-deleted, all namespaces."""
        return sum(len(n.deleted) for n in self.namespaces)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def repaired(self) -> int:
        """Records rewritten into a linear slot history, all namespaces."""
        return sum(len(n.repaired) for n in self.namespaces)


def sweep_where(policy: RetentionPolicy, now: datetime) -> dict[str, Any]:
    """The Chroma ``where`` finding every record a sweep at ``now`` might touch (a superset: ``sweep_plan`` decides)."""
    at = C.ts(now)
    status, kind = C.FLAT_PREFIX + "status", C.FLAT_PREFIX + "kind"
    # "$ne archived" rather than "$in [active, pending]": measured 2 ms vs 46 ms per 1k-record
    # namespace, since Chroma can then lead with the selective time range.
    live = {status: {"$ne": MemoryStatus.ARCHIVED.value}}
    clauses: list[dict[str, Any]] = [{"$and": [{C.TIME_PREFIX + "expires_at": {"$lte": at}}, live]}]
    if policy.stamp_missing:
        by_ttl: dict[float, list[str]] = {}
        for name, ttl in policy.ttl.items():
            if ttl is not None:
                by_ttl.setdefault(ttl.total_seconds(), []).append(name)
        # Kinds are matched case-insensitively by the policy; cover the usual spellings.
        groups = [("$in", kinds, seconds) for seconds, kinds in sorted(by_ttl.items())]
        if policy.default_ttl is not None:
            groups.append(("$nin", list(policy.ttl), policy.default_ttl.total_seconds()))
        for op, kinds, seconds in groups:
            spellings = sorted({k for name in kinds for k in (name, name.capitalize(), name.upper())})
            due = {C.TIME_PREFIX + "valid_from": {"$lte": at - seconds}}
            clauses.append({"$and": [due, live, {kind: {op: spellings}}]})
    if policy.archived_retention is not None:
        cutoff = at - policy.archived_retention.total_seconds()
        archived = {status: MemoryStatus.ARCHIVED.value}
        clauses.append({"$and": [{C.TIME_PREFIX + "updated_at": {"$lte": cutoff}}, archived]})
    return clauses[0] if len(clauses) == 1 else {"$or": clauses}


def sweep(
    store: ChromaMemoryStore,
    *,
    now: datetime | str | None = None,
    policy: RetentionPolicy | None = None,
    namespace_prefix: Sequence[str] | None = None,
    dry_run: bool = False,
    repair: bool = True,
) -> SweepReport:
    """Archive expired records and hard-delete history past its retention window (idempotent).

    ``repair`` also mends slots a crash or racing writers left with two active records.
    """
    at = ensure_aware(now) or utcnow()
    policy = policy or RetentionPolicy()
    where = sweep_where(policy, at)
    targets = store.namespaces(tuple(namespace_prefix or ()))
    report = SweepReport(now=at, dry_run=dry_run, scanned_namespaces=len(targets))
    for ns in targets:
        repaired: list[str] = []
        if repair and (doubled := doubled_slots(store, ns)):
            repaired = [r.id for r in repair_namespace(store, ns, slots=doubled, at=at, dry_run=dry_run)]
        candidates = store.find_records(ns, where)
        plan = policy.sweep_plan(candidates, at)
        by_id = {r.id: r for r in candidates}
        archived = [
            by_id[a.id].transition(MemoryStatus.ARCHIVED, at=at, valid_to=min(by_id[a.id].valid_to or a.since, a.since))
            for a in plan.archive
        ]
        if archived and not dry_run:
            store.put_records(archived)
        if plan.delete_ids and not dry_run:
            store.delete_records(ns, plan.delete_ids)
        if repaired or not plan.empty:
            report.namespaces.append(
                NamespaceSweep(namespace=ns, archived=plan.archive_ids, deleted=plan.delete_ids, repaired=repaired)
            )
    return report


# ---------------------------------------------------------------------- forget
FORGOTTEN = "forgotten_at"
"""Metadata key of a record the user asked to forget: when they did."""


class ForgetMatch(BaseModel):
    """A record that :func:`forget` would archive, and why it matched."""

    model_config = ConfigDict(frozen=True)

    record: MemoryRecord
    reason: Literal["id", "slot", "value", "attribute", "person", "dense", "recall"]
    score: float | None = None
    """Cosine similarity of the cleaned query (``dense`` matches and any scored record)."""


def forget_query_text(query: str) -> str:
    """Strip the request words ("忘掉", "please forget", "删除"...) so only the topic is matched.

    Example:
        >>> forget_query_text("忘掉我喝黑咖啡的习惯")
        '我喝黑咖啡的习惯'
    """
    return " ".join(_FORGET_WORDS.sub(" ", query).split())


def preview_forget(
    store: ChromaMemoryStore,
    namespace: Sequence[str],
    *,
    record_id: str | None = None,
    entity: str | None = None,
    attribute: str | None = None,
    query: str | None = None,
    min_score: float = 0.5,
    k: int = 20,
    now: datetime | str | None = None,
    retriever: Any = None,
) -> list[ForgetMatch]:
    """What :func:`forget` would archive, without writing: live records matching exactly one selector.

    A ``query`` matches records whose value or attribute it names, or whose content is close to it (``min_score``);
    when none does, what ``retriever`` (a ``LifecycleRetriever``) finds first for the same words by their words or
    meaning, with the rest of its slot: "forget where I work" is the employer that "where I work" finds.
    """
    ns = C.validate_namespace(tuple(namespace))
    at = ensure_aware(now) or utcnow()
    given = sum(x is not None for x in (record_id, query)) + (entity is not None or attribute is not None)
    if given != 1:
        msg = "Give exactly one of `record_id`, a slot (`entity`/`attribute`) or `query` to forget."
        raise ValueError(msg)
    if record_id is not None:
        record = store.get_record(ns, record_id)
        if record is None:  # a mistyped id forgets nothing: say so rather than look done
            msg = f"No record {record_id!r} in {ns}; list them with `lifecycle-memory list`."
            raise KeyError(msg)
        return [ForgetMatch(record=record, reason="id")] if record.status.value in _LIVE else []
    if query is None:
        return [
            ForgetMatch(record=r, reason="slot")
            for r in store.list_records(ns, statuses=_LIVE, entity=entity, attribute=attribute, now=at)
        ]
    if not isinstance(query, str):
        msg = f"`query` is what to forget, as the user would say it (a string), not {type(query).__name__}."
        raise TypeError(msg)
    topic = forget_query_text(query)
    if not topic:
        return []
    scored = store.search_records(ns, topic, k=k, statuses=_LIVE, include_expired=True)
    scores = {r.id: s for r, s in scored}
    # One record far ahead of the rest is what the user meant ("forget about my dog"
    # -> the dog record at 0.39, the next at 0.07) even below the absolute bar.
    clear = (
        scored[0][0].id
        if scored
        and scored[0][1] >= min_score - _CLEAR_BELOW
        and scored[0][1] - (scored[1][1] if len(scored) > 1 else 0.0) >= _CLEAR_MARGIN
        else None
    )
    matches: dict[str, ForgetMatch] = {}
    person = named_person(topic)
    for r in store.list_records(ns, statuses=_LIVE, now=at):
        reason: Literal["value", "attribute", "person", "dense"] | None = None
        if person is not None and is_about(r.entity, r.content, person):
            reason = "person"
        elif value_mentioned(topic, r.value):
            reason = "value"
        elif r.attribute and attribute_mentioned(topic, r.attribute, _SPECS.get(r.attribute)):
            reason = "attribute"
        elif scores.get(r.id, -1.0) >= min_score or r.id == clear:
            reason = "dense"
        if reason is not None:
            matches[r.id] = ForgetMatch(record=r, reason=reason, score=scores.get(r.id))
    if not matches and retriever is not None:
        return _recalled(store, ns, topic, retriever, at)
    return sorted(_named_values_only(matches.values()), key=lambda m: -(m.score if m.score is not None else 2.0))


def _recalled(
    store: ChromaMemoryStore, ns: tuple[str, ...], topic: str, retriever: Any, at: datetime
) -> list[ForgetMatch]:
    """The live record ``retriever`` recalls first for ``topic``, and the other live values of its slot.

    Only a record the words themselves find, by meaning or by its words, above the retriever's threshold: never
    one shown as general context because nothing answered ("delete my wifi password" with no password stored
    forgets nothing, not the user's job), nor one the question's topic alone routed to ("forget my hobbies" is
    no request to forget the employer, whatever the routing makes of it).
    """
    docs = retriever.invoke(topic, namespace=ns, k=3, now=at)
    floor = float(getattr(retriever, "min_score", 0.0))
    answers = [d for d in docs if float(d.metadata.get("score", 0.0)) >= floor and _said(d.metadata)]
    best = store.get_record(ns, str(answers[0].id)) if answers else None
    if best is None or best.status.value not in _LIVE:
        return []
    score = float(answers[0].metadata.get("score", 0.0))
    if best.slot is None:
        return [ForgetMatch(record=best, reason="recall", score=score)]
    slot = store.list_records(ns, statuses=_LIVE, entity=best.entity, attribute=best.attribute, now=at)
    return [ForgetMatch(record=r, reason="recall", score=score) for r in slot]


def _named_values_only(matches: Iterable[ForgetMatch]) -> list[ForgetMatch]:
    """Where the query names a value of a slot, only that value of the slot is forgotten."""
    matches = list(matches)
    named = {m.record.slot for m in matches if m.reason == "value" and m.record.slot}
    return [m for m in matches if m.reason == "value" or m.record.slot not in named]


def _said(metadata: dict[str, Any]) -> bool:
    """Whether a recalled document matched the words (dense or lexical channel), not only a topic or the profile."""
    scores = metadata.get("scores") or {}
    return not metadata.get("profile") and (scores.get("dense", 0.0) > 0 or scores.get("lexical", 0.0) > 0)


def forget(
    store: ChromaMemoryStore, namespace: Sequence[str], *, now: datetime | str | None = None, **selectors: Any
) -> list[MemoryRecord]:
    """Archive (never delete) the live records the user asks to forget (selectors as in :func:`preview_forget`).

    A forgotten record was never true as far as reads go: its validity closes where it opened, so no ``as_of``
    question finds it again (:func:`restore` reopens it; :func:`purge` deletes it).
    """
    at = ensure_aware(now) or utcnow()
    archived = [
        m.record.transition(
            MemoryStatus.ARCHIVED,
            at=at,
            valid_to=m.record.valid_from,
            metadata={**m.record.metadata, FORGOTTEN: at.isoformat()},
        )
        for m in preview_forget(store, namespace, now=at, **selectors)
    ]
    if archived:
        store.put_records(archived)
    return archived


def restore(
    store: ChromaMemoryStore, namespace: Sequence[str], record_id: str, *, now: datetime | str | None = None
) -> MemoryRecord:
    """Return an archived record to ``active`` (noted in its metadata); a single slot's current value yields."""
    at = ensure_aware(now) or utcnow()
    ns = C.validate_namespace(tuple(namespace))
    record = store.get_record(ns, record_id)
    if record is None:
        msg = f"No record {record_id!r} in {ns}; list them with `lifecycle-memory list`."
        raise KeyError(msg)
    if record.status is not MemoryStatus.ARCHIVED:
        msg = f"Record {record_id} is {record.status.value}, not archived: there is nothing to restore."
        raise ValueError(msg)
    log = [*record.metadata.get("restored", []), {"at": at.isoformat(), "superseded_by": record.superseded_by}]
    back = record.model_copy(
        update={"status": MemoryStatus.ACTIVE, "valid_to": None, "superseded_by": None, "updated_at": at,
                "metadata": {**{k: v for k, v in record.metadata.items() if k != FORGOTTEN}, "restored": log}}
    )  # fmt: skip
    displaced = []
    if record.slot is not None and record.cardinality == "single":
        current = store.list_records(
            ns, statuses=MemoryStatus.ACTIVE, entity=record.entity, attribute=record.attribute, now=at
        )
        displaced = [
            c.transition(MemoryStatus.ARCHIVED, at=at, superseded_by=back.id) for c in current if c.id != back.id
        ]
    store.put_records([*displaced, back])
    return back


# ---------------------------------------------------------------------- purge
class PurgeReport(BaseModel):
    """What :func:`purge` removed."""

    namespace_prefix: tuple[str, ...]
    namespaces: list[tuple[str, ...]] = Field(default_factory=list)
    items_deleted: int = 0
    """Items (records of every status, and any plain LangGraph items) hard-deleted."""
    log_lines_removed: int = 0
    compaction: CompactReport | None = None


def purge(
    store: ChromaMemoryStore,
    namespace_prefix: Sequence[str],
    *,
    log: RetrievalLog | str | Path | None = None,
    compact_files: bool = True,
) -> PurgeReport:
    """Hard-delete everything of a tenant (never empty): all statuses, history, ``log`` lines, bytes on disk.

    ``compact_files=False`` batches several purges before one :func:`compact` (``chroma vacuum``).
    """
    prefix = C.validate_namespace(tuple(namespace_prefix), what="namespace prefix")
    report = PurgeReport(namespace_prefix=prefix)
    report.namespaces = store.namespaces(prefix)
    report.items_deleted = store.purge(prefix)
    if log is not None:
        from langchain_lifecycle_memory.lifecycle.observability import RetrievalLog

        target = log if isinstance(log, RetrievalLog) else RetrievalLog(log)
        report.log_lines_removed = target.purge(prefix)
    if compact_files:
        report.compaction = compact(store)
    return report


# ---------------------------------------------------------------------- PII
def redact_record(record: MemoryRecord, redactor: Redactor | None = None) -> MemoryRecord:
    """A copy of ``record`` with PII masked in ``content`` and ``value``, kinds noted in ``metadata``.

    Example:
        >>> r = MemoryRecord(namespace=("memories", "u1"), content="My email is dana@example.com",
        ...                  attribute="email", value="dana@example.com")
        >>> clean = redact_record(r)
        >>> clean.content, clean.value, clean.metadata["pii_redacted"]
        ('My email is [EMAIL]', '[EMAIL]', ['email'])
    """
    redactor = redactor or Redactor()
    content = redactor.redact(record.content)
    if content.has_pii and not content.text.strip():
        content = redactor.model_copy(update={"mode": "mask"}).redact(record.content)
    value = redactor.redact(record.value) if record.value else None
    kinds = content.kinds | (value.kinds if value is not None else set())
    if not kinds or redactor.mode == "keep":
        return record
    new_value = (value.text.strip() or None) if value is not None else None
    previous = record.metadata.get("pii_redacted") or []
    metadata = {**record.metadata, "pii_redacted": sorted(set(previous) | kinds)}
    return MemoryRecord.model_validate(
        {**record.model_dump(), "content": content.text, "value": new_value, "metadata": metadata}
    )
