"""``doctor``: the seed article's checklist (stored? status? recalled? injected?) for one memory, with causes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from langchain_lifecycle_memory.cli.demo import _day, memory_lines
from langchain_lifecycle_memory.lifecycle.operations import FORGOTTEN
from langchain_lifecycle_memory.read.routing import value_mentioned
from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus, ensure_aware, normalize_value, utcnow
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES, AttributeSpec
from langchain_lifecycle_memory.write.update import repair_slots

__all__ = ["DoctorReport", "Finding", "QueryCheck", "doctor", "generate_paraphrases"]

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_ID_PREFIX = re.compile(r"^[0-9a-f-]{6,36}$")
MIN_SIMILARITY = 0.35
"""Cosine a text must reach to name a memory when neither its content nor its value matches."""

Verdict = Literal["healthy", "hard to recall", "archived", "expired", "pending", "not stored"]


class QueryCheck(BaseModel):
    """One query of the checklist and what it did to the target memory."""

    query: str
    origin: Literal["own text", "given", "generated"]
    decision: str | None = None
    """The retriever's verdict on the target record (``kept``, ``below_threshold``, ``archived``...)."""
    reason: str = ""
    rank: int | None = None
    fused: float | None = None
    channels: dict[str, float] = Field(default_factory=dict)
    injected: bool = False
    """Whether the target's line is in the block; ``injected_lines``: every statement the block carried."""
    injected_lines: list[str] = Field(default_factory=list)
    block: str = ""


class Finding(BaseModel):
    """One line of the checklist."""

    step: Literal["stored", "chain", "status", "own text", "paraphrases", "injected"]
    ok: bool
    message: str


class DoctorReport(BaseModel):
    """Result of :func:`doctor`."""

    user_id: str
    namespace: tuple[str, ...]
    target: str
    now: datetime
    found_by: Literal["id", "content", "value", "similarity"] | None = None
    similarity: float | None = None
    record: MemoryRecord | None = None
    successor: MemoryRecord | None = None
    """The version that superseded an archived record, if any."""
    checks: list[QueryCheck] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    verdict: Verdict = "not stored"

    @property
    def ok(self) -> bool:
        """Stored, active and recalled by every query."""
        return self.verdict == "healthy"


def _is_zh(text: str) -> bool:
    return len(_HAN.findall(text)) >= max(1, len(re.findall(r"[A-Za-z]+", text)))


def generate_paraphrases(
    record: MemoryRecord, *, vocabulary: Sequence[AttributeSpec] = DEFAULT_ATTRIBUTES, limit: int = 4
) -> list[str]:
    """Offline paraphrases for a slot record (its own language first): the attribute's names and topic hints.

    Example:
        >>> r = MemoryRecord(namespace=("memories", "u1"), content="用户喜欢使用 Vim 编辑器",
        ...                  entity="user", attribute="editor", value="Vim")
        >>> generate_paraphrases(r)[:2]
        ['我的编辑器是什么？', '写代码用什么工具']
    """
    if not record.attribute:
        return []
    spec = next((s for s in vocabulary if s.name == record.attribute), None)
    words = record.attribute.replace("_", " ")
    zh_name = spec.zh if spec is not None and spec.zh else words
    own = record.entity is None or normalize_value(record.entity) in {"user", "用户", "我", "me", "self"}
    zh = [f"我的{zh_name}是什么？" if own else f"{record.entity}的{zh_name}是什么？"]
    en = [f"What is my {words}?" if own else f"What is {record.entity}'s {words}?"]
    for topic in spec.topics if spec is not None else ():
        (zh if _HAN.search(topic) else en).append(topic)
    first, second = (zh, en) if _is_zh(record.content) else (en, zh)
    ordered = [first[0], *first[1:2], second[0], *second[1:2], *first[2:], *second[2:]]
    return list(dict.fromkeys(ordered))[:limit]


def _find(memory: Any, user_id: str, target: str) -> tuple[MemoryRecord | None, str | None, float | None]:
    ns = memory.namespace(user_id)
    text = target.strip()
    record = memory.store.get_record(ns, text) if text else None
    if record is not None:
        return record, "id", None
    records = memory.list(user_id)
    if _ID_PREFIX.match(text.lower()):
        by_prefix = [r for r in records if r.id.startswith(text.lower())]
        if len(by_prefix) == 1:
            return by_prefix[0], "id", None

    def newest(rs: list[MemoryRecord]) -> MemoryRecord:
        return max(rs, key=lambda r: (r.status is MemoryStatus.ACTIVE, r.valid_from, r.created_at))

    wanted = normalize_value(text)
    by_value = [r for r in records if value_mentioned(text, r.value)]
    longest = max((len(r.value or "") for r in by_value), default=0)
    for found_by, matches in (  # its exact text, the longest value it names, text that contains it
        ("content", [r for r in records if normalize_value(r.content) == wanted]),
        ("value", [r for r in by_value if len(r.value or "") == longest]),
        ("content", [r for r in records if wanted and wanted in normalize_value(r.content)]),
    ):
        if matches:
            return newest(matches), found_by, None
    hits = memory.store.search_records(ns, text, k=1, statuses=None, include_expired=True) if text else []
    if hits and hits[0][1] >= MIN_SIMILARITY:
        return hits[0][0], "similarity", round(float(hits[0][1]), 4)
    return None, None, None


def _check(memory: Any, user_id: str, record: MemoryRecord, query: str, origin: str, now: datetime) -> QueryCheck:
    explanation = memory.explain(query, user_id, now=now)
    candidate = next((c for c in explanation.candidates if c.record.id == record.id), None)
    block = memory.inject(query, user_id, now=now)
    lines = memory_lines(block.text)
    check = QueryCheck(query=query, origin=origin, injected=record.id in block.included, injected_lines=lines)  # type: ignore[arg-type]
    check.block = block.text
    if candidate is not None:
        check.decision, check.reason, check.rank = candidate.decision, candidate.reason, candidate.rank
        check.fused = round(candidate.fused, 4)
        check.channels = {k: round(v, 4) for k, v in candidate.channels.items()}
    return check


def _status_finding(report: DoctorReport, now: datetime) -> Finding:
    record, successor = report.record, report.successor
    assert record is not None
    if record.status is MemoryStatus.ARCHIVED and successor is not None:
        message = (
            f"archived on {_day(record.valid_to)}: superseded by '{successor.value or successor.content}' "
            f"({successor.id[:8]}, {successor.status.value}). Archived versions are history: they are never "
            "injected, and 'as_of' questions still find them."
        )
    elif record.status is MemoryStatus.ARCHIVED and record.metadata.get(FORGOTTEN):
        message = (
            f"forgotten on {record.metadata[FORGOTTEN][:10]}: never injected, not even for 'as_of' questions "
            "(`lifecycle-memory restore ID` brings it back)."
        )
    elif record.status is MemoryStatus.ARCHIVED:
        message = f"archived on {_day(record.valid_to)} (retracted or expired, no successor): it is no longer injected."
    elif record.is_expired(now):
        message = (
            f"expired at {record.expires_at}: retrieval skips it; `sweep` will archive it. Restate it to refresh it."
        )
    elif record.status is MemoryStatus.PENDING:
        message = (
            f"pending (confidence {record.confidence:.2f} below the bar): not injected until restated "
            "or edited (`lifecycle-memory edit ID --confidence 0.9`)."
        )
    else:
        expiry = f", expires {_day(record.expires_at)}" if record.expires_at else ", no expiry"
        return Finding(
            step="status",
            ok=True,
            message=f"active since {_day(record.valid_from)} (confidence {record.confidence:.2f}{expiry}).",
        )
    return Finding(step="status", ok=False, message=message)


def _recall_text(check: QueryCheck) -> str:
    if check.decision == "kept":
        return f"rank {check.rank}, score {check.fused}"
    return f"{check.decision} ({check.reason or 'not a candidate'})"


def _recall_findings(report: DoctorReport, own: QueryCheck, others: list[QueryCheck], live: bool) -> list[Finding]:
    """The findings: recalled by its own text, by the paraphrases, injected (none if no longer live)."""
    record, successor = report.record, report.successor
    assert record is not None

    def carried(checks: list[QueryCheck]) -> int:  # queries whose block carried the current version
        return sum(successor is not None and successor.content in c.injected_lines for c in checks)

    if live:
        findings = [Finding(step="own text", ok=own.decision == "kept", message=_recall_text(own))]
    else:
        message = f"{_recall_text(own)}: expected, it is no longer live"
        findings = [Finding(step="own text", ok=own.decision != "kept", message=message)]
    missed = [c for c in others if c.decision != "kept"]
    if others and not live:
        state = "an archived" if record.status is MemoryStatus.ARCHIVED else "an expired"
        message = f"{len(others)} paraphrase(s) tested; as expected for {state} memory, none recalls it"
        if successor is not None:
            message += f"; the current version was injected for {carried(others)} of them"
        findings.append(Finding(step="paraphrases", ok=len(missed) == len(others), message=message))
    elif others:
        message = f"recalled by {len(others) - len(missed)} of {len(others)} paraphrase(s)"
        if missed:
            message += "; missed: " + "; ".join(f"{c.query!r} → {_recall_text(c)}" for c in missed)
            message += ". Fixes: a query model for expansion (LifecycleRetriever(query_model=...)), topic hints "
            message += "for the attribute in the vocabulary, or a lower min_score (watch contamination)."
        findings.append(Finding(step="paraphrases", ok=not missed, message=message))
    else:
        findings.append(
            Finding(step="paraphrases", ok=True, message="no slot to generate paraphrases from; pass some to test.")
        )
    extra = max((len(c.injected_lines) - int(c.injected) for c in report.checks), default=0)
    injected = sum(c.injected for c in report.checks)
    message = f"its line was injected for {injected} of {len(report.checks)} query(ies)"
    if successor is not None:
        message += f"; the current version was injected for {carried(report.checks)}"
    if extra:
        message += f"; up to {extra} other line(s) shared a block (see the blocks for pollution)"
    ok = injected == len(report.checks) if live else injected == 0
    return [*findings, Finding(step="injected", ok=ok, message=message)]


def doctor(
    memory: Any,
    user_id: str,
    target: str,
    *,
    paraphrases: Sequence[str] | None = None,
    now: datetime | str | None = None,
) -> DoctorReport:
    """Run the seed article's checklist on the memory of ``user_id`` that ``target`` (an id or text) names."""
    when = ensure_aware(now) or utcnow()
    report = DoctorReport(user_id=str(user_id), namespace=memory.namespace(user_id), target=target, now=when)
    record, found_by, similarity = _find(memory, user_id, target)
    if record is None:
        message = (
            f"no memory of user {user_id!r} matches {target!r} (by id, content, value or similarity "
            f"≥ {MIN_SIMILARITY}). Either extraction kept nothing from that message (try "
            "`lifecycle-memory add` and read what it prints) or it was purged."
        )
        report.findings.append(Finding(step="stored", ok=False, message=message))
        return report
    report.record, report.found_by, report.similarity = record, found_by, similarity  # type: ignore[assignment]
    how = {"id": "by id", "content": "by its text", "value": f"by its value {record.value!r}"}
    message = (
        f"stored as {record.id[:8]} ({how.get(found_by or '', f'by similarity {similarity}')}): {record.content!r}"
    )
    report.findings.append(Finding(step="stored", ok=True, message=message))
    if record.slot is not None and (
        fixed := repair_slots(memory.store, report.namespace, slots=[record.slot], at=when)
    ):
        report.record = record = memory.store.get_record(report.namespace, record.id) or record
        message = (
            f"slot {record.entity}.{record.attribute} held {len(fixed)} version(s) out of line (two current values "
            "or a forked history, left by a crash or by concurrent writers); repaired into one chain, the newest "
            "valid_from current, nothing deleted."
        )
        report.findings.append(Finding(step="chain", ok=False, message=message))
    if record.superseded_by:
        report.successor = memory.store.get_record(report.namespace, record.superseded_by)
    report.findings.append(_status_finding(report, when))
    origin = "generated" if paraphrases is None else "given"
    queries = generate_paraphrases(record) if paraphrases is None else paraphrases
    own = _check(memory, user_id, record, record.content, "own text", when)
    others = [_check(memory, user_id, record, q, origin, when) for q in queries]
    report.checks = [own, *others]
    live = record.status is not MemoryStatus.ARCHIVED and not record.is_expired(when)
    report.findings += _recall_findings(report, own, others, live)
    if record.status is MemoryStatus.ARCHIVED:
        report.verdict = "archived"
    elif record.is_expired(when):
        report.verdict = "expired"
    elif record.status is MemoryStatus.PENDING:
        report.verdict = "pending"
    else:
        report.verdict = (
            "healthy" if all(c.decision == "kept" and c.injected for c in report.checks) else "hard to recall"
        )
    return report
