"""``doctor``: the seed article's debugging checklist, run on one memory.

The article's advice when "the write succeeded but the answer is wrong":

1. is the memory really stored? (here: found by id, by its text or by its value, with its
   status, validity and expiry — and, if archived, which version superseded it);
2. is it recalled by its own text?
3. is it recalled by other wordings? (paraphrases you give, or ones generated offline from
   its slot: "我的编辑器是什么？", "What is my editor?" and the attribute's topic hints);
4. what was actually injected for each query?

Each query goes through ``LifecycleRetriever.explain`` (rank, fused score, channel scores,
decision and reason for *this* record) and the facade's ``inject`` (the block a model
would see), so the report shows the cause rather than a guess.

Example:
    .. code-block:: python

        from langchain_lifecycle_memory.cli.diagnostics import doctor

        report = doctor(memory, "u1", "Vim")
        print(report.verdict)          # "archived"
        print(report.findings[0].message)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from langchain_lifecycle_memory.cli.demo import memory_lines
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
    """Whether the target record's line is in the injected block."""
    injected_lines: list[str] = Field(default_factory=list)
    """Every statement the block carried (the target's and any others)."""
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
    """Offline paraphrases for a slot record: templates from the attribute's names and its topic hints.

    The record's own language comes first. Records without a slot get none (pass your own).

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
    exact = [r for r in records if normalize_value(r.content) == wanted]
    if exact:
        return newest(exact), "content", None
    by_value = [r for r in records if value_mentioned(text, r.value)]
    if by_value:
        longest = max(len(r.value or "") for r in by_value)
        return newest([r for r in by_value if len(r.value or "") == longest]), "value", None
    contained = [r for r in records if wanted and (wanted in normalize_value(r.content))]
    if contained:
        return newest(contained), "content", None
    hits = memory.store.search_records(ns, text, k=1, statuses=None, include_expired=True) if text else []
    if hits and hits[0][1] >= MIN_SIMILARITY:
        return hits[0][0], "similarity", round(float(hits[0][1]), 4)
    return None, None, None


def _check(memory: Any, user_id: str, record: MemoryRecord, query: str, origin: str, now: datetime) -> QueryCheck:
    explanation = memory.explain(query, user_id, now=now)
    candidate = next((c for c in explanation.candidates if c.record.id == record.id), None)
    block = memory.inject(query, user_id, now=now)
    check = QueryCheck(
        query=query,
        origin=origin,  # type: ignore[arg-type]
        injected=record.id in block.included,
        injected_lines=memory_lines(block.text),
        block=block.text,
    )
    if candidate is not None:
        check.decision = candidate.decision
        check.reason = candidate.reason
        check.rank = candidate.rank
        check.fused = round(candidate.fused, 4)
        check.channels = {k: round(v, 4) for k, v in candidate.channels.items()}
    return check


def _day(value: datetime | None) -> str:
    return value.date().isoformat() if value is not None else "?"


def _status_finding(report: DoctorReport, now: datetime) -> Finding:
    record = report.record
    assert record is not None
    if record.status is MemoryStatus.ARCHIVED:
        if report.successor is not None:
            message = (
                f"archived on {_day(record.valid_to)}: superseded by "
                f"'{report.successor.value or report.successor.content}' ({report.successor.id[:8]}, "
                f"{report.successor.status.value}). Archived versions are history: they are never injected, "
                "and 'as_of' questions still find them."
            )
        else:
            message = (
                f"archived on {_day(record.valid_to)} (forgotten or expired, no successor): it is no longer injected."
            )
        return Finding(step="status", ok=False, message=message)
    if record.is_expired(now):
        return Finding(
            step="status",
            ok=False,
            message=f"expired at {record.expires_at}: retrieval skips it; `sweep` will archive it. "
            "Restate it to refresh it.",
        )
    if record.status is MemoryStatus.PENDING:
        return Finding(
            step="status",
            ok=False,
            message=f"pending (confidence {record.confidence:.2f} below the bar): not injected until restated "
            "or edited (`lifecycle-memory edit ID --confidence 0.9`).",
        )
    expiry = f", expires {_day(record.expires_at)}" if record.expires_at else ", no expiry"
    return Finding(
        step="status",
        ok=True,
        message=f"active since {_day(record.valid_from)} (confidence {record.confidence:.2f}{expiry}).",
    )


def _recall_text(check: QueryCheck) -> str:
    if check.decision == "kept":
        return f"rank {check.rank}, score {check.fused}"
    return f"{check.decision} ({check.reason or 'not a candidate'})"


def doctor(
    memory: Any,
    user_id: str,
    target: str,
    *,
    paraphrases: Sequence[str] | None = None,
    now: datetime | str | None = None,
) -> DoctorReport:
    """Run the seed article's checklist on one memory of ``user_id``.

    Args:
        memory: A ``LifecycleMemory``.
        user_id: Whose memory.
        target: A record id (or a unique id prefix), or text: the memory's content, its
            value ("VS Code"), or anything close to it.
        paraphrases: Other wordings to test; default: generated from the record's slot.
        now: The clock for expiry and recall (default: now).

    Returns:
        The record (if found), its successor when archived, one check per query (own text
        first) and the checklist findings, with an overall verdict.
    """
    when = ensure_aware(now) or utcnow()
    report = DoctorReport(user_id=str(user_id), namespace=memory.namespace(user_id), target=target, now=when)
    record, found_by, similarity = _find(memory, user_id, target)
    if record is None:
        report.findings.append(
            Finding(
                step="stored",
                ok=False,
                message=f"no memory of user {user_id!r} matches {target!r} (by id, content, value or similarity "
                f"≥ {MIN_SIMILARITY}). Either extraction kept nothing from that message (try "
                "`lifecycle-memory add` and read what it prints) or it was purged.",
            )
        )
        return report
    report.record, report.found_by, report.similarity = record, found_by, similarity  # type: ignore[assignment]
    how = {"id": "by id", "content": "by its text", "value": f"by its value {record.value!r}"}.get(
        found_by or "", f"by similarity {similarity}"
    )
    report.findings.append(
        Finding(step="stored", ok=True, message=f"stored as {record.id[:8]} ({how}): {record.content!r}")
    )
    if record.slot is not None:
        fixed = repair_slots(memory.store, report.namespace, slots=[record.slot], at=when)
        if fixed:
            report.record = record = memory.store.get_record(report.namespace, record.id) or record
            report.findings.append(
                Finding(
                    step="chain",
                    ok=False,
                    message=f"slot {record.entity}.{record.attribute} held {len(fixed)} version(s) out of line (two "
                    "current values or a forked history, left by a crash or by concurrent writers); repaired into "
                    "one chain, the newest valid_from current, nothing deleted.",
                )
            )
    if record.superseded_by:
        report.successor = memory.store.get_record(report.namespace, record.superseded_by)
    report.findings.append(_status_finding(report, when))

    own = _check(memory, user_id, record, record.content, "own text", when)
    others = [_check(memory, user_id, record, q, "given", when) for q in paraphrases or ()]
    if paraphrases is None:
        others = [_check(memory, user_id, record, q, "generated", when) for q in generate_paraphrases(record)]
    report.checks = [own, *others]
    live = record.status is not MemoryStatus.ARCHIVED and not record.is_expired(when)
    if live:
        report.findings.append(Finding(step="own text", ok=own.decision == "kept", message=_recall_text(own)))
    else:
        message = f"{_recall_text(own)}: expected, it is no longer live"
        report.findings.append(Finding(step="own text", ok=own.decision != "kept", message=message))
    if others and not live:
        state = "an archived" if record.status is MemoryStatus.ARCHIVED else "an expired"
        message = f"{len(others)} paraphrase(s) tested; as expected for {state} memory, none recalls it"
        if report.successor is not None:
            hits = sum(report.successor.content in c.injected_lines for c in others)
            message += f"; the current version was injected for {hits} of them"
        ok = all(c.decision != "kept" for c in others)
        report.findings.append(Finding(step="paraphrases", ok=ok, message=message))
    elif others:
        missed = [c for c in others if c.decision != "kept"]
        message = f"recalled by {len(others) - len(missed)} of {len(others)} paraphrase(s)"
        if missed:
            message += "; missed: " + "; ".join(f"{c.query!r} → {_recall_text(c)}" for c in missed)
            if live:
                message += ". Fixes: a query model for expansion (LifecycleRetriever(query_model=...)), topic hints "
                message += "for the attribute in the vocabulary, or a lower min_score (watch contamination)."
        report.findings.append(Finding(step="paraphrases", ok=not missed, message=message))
    else:
        report.findings.append(
            Finding(step="paraphrases", ok=True, message="no slot to generate paraphrases from; pass some to test.")
        )
    extra = max((len(c.injected_lines) - int(c.injected) for c in report.checks), default=0)
    injected = sum(c.injected for c in report.checks)
    message = f"its line was injected for {injected} of {len(report.checks)} query(ies)"
    if report.successor is not None:
        carried = sum(1 for c in report.checks if any(report.successor.content == line for line in c.injected_lines))
        message += f"; the current version was injected for {carried}"
    if extra:
        message += f"; up to {extra} other line(s) shared a block (see the blocks for pollution)"
    ok = injected == len(report.checks) if live else injected == 0
    report.findings.append(Finding(step="injected", ok=ok, message=message))

    if record.status is MemoryStatus.ARCHIVED:
        report.verdict = "archived"
    elif record.is_expired(when):
        report.verdict = "expired"
    elif record.status is MemoryStatus.PENDING:
        report.verdict = "pending"
    elif all(c.decision == "kept" and c.injected for c in report.checks):
        report.verdict = "healthy"
    else:
        report.verdict = "hard to recall"
    return report
