"""LoCoMo data: parsing, evidence-id repair, audit matching, indexed text, recall@k. Pure.

The LoCoMo data is CC BY-NC 4.0: read it from ``shared/``, never copy it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

CATEGORIES = ("1", "2", "3", "4")
TEXT_PARTS = ("date", "prev", "next")
AUDIT_NAME = "locomo_audit_errors.json"
_DATE = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I)
_EVIDENCE = re.compile(r"^D:?(\d+):(\d+)$")
_QID = re.compile(r"locomo_(\d+)_qa")


@dataclass
class Turn:
    """One utterance of a conversation."""

    dia_id: str
    speaker: str
    text: str
    at: datetime
    session: int
    caption: str | None = None


@dataclass
class Question:
    """One question of categories 1-4 with its (normalised) evidence turn ids."""

    question: str
    category: str
    evidence: list[str]


@dataclass
class Conversation:
    """A conversation's turns (in order) and questions."""

    sample_id: str
    turns: list[Turn]
    questions: list[Question]

    @property
    def asked_at(self) -> datetime:
        """When the questions are asked: a day after the last session."""
        return max(t.at for t in self.turns) + timedelta(days=1)


@dataclass
class EvidenceStats:
    """What normalisation and the audit did to the evidence ids."""

    normalised: int = 0
    skipped_malformed: int = 0
    skipped_unknown: int = 0
    questions_without_evidence: int = 0
    audit_matched: int = 0
    audit_unmatched: list[str] = field(default_factory=list)

    @property
    def audit_entries(self) -> int:
        """Audit entries applied (matched or not)."""
        return self.audit_matched + len(self.audit_unmatched)

    def notes(self) -> list[str]:
        """Human-readable lines for the report."""
        out = [
            f"evidence ids: {self.normalised} normalised, {self.skipped_malformed} malformed skipped, "
            f"{self.skipped_unknown} naming no turn of the conversation skipped; "
            f"{self.questions_without_evidence} question(s) without evidence skipped",
        ]
        if self.audit_entries:
            out.append(
                f"audit: {self.audit_matched}/{self.audit_entries} entries matched by question text"
                + (f"; unmatched: {', '.join(self.audit_unmatched[:5])}" if self.audit_unmatched else "")
            )
        else:
            out.append("audit: none applied")
        return out


# ---------------------------------------------------------------------------- parsing
def parse_session_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → an aware UTC datetime.

    Example:
        >>> parse_session_date("1:56 pm on 8 May, 2023").isoformat()
        '2023-05-08T13:56:00+00:00'
    """
    m = _DATE.match(text)
    if not m:
        msg = f"Cannot parse the session date {text!r}; expected e.g. '1:56 pm on 8 May, 2023'."
        raise ValueError(msg)
    hour, minute, ampm, day, month, year = m.groups()
    clock = datetime.strptime(f"{int(hour)}:{minute} {ampm.upper()}", "%I:%M %p")
    date = datetime.strptime(f"{day} {month[:3].title()} {year}", "%d %b %Y")
    return date.replace(hour=clock.hour, minute=clock.minute, tzinfo=timezone.utc)


def normalize_evidence(ids: Iterable[str]) -> tuple[list[str], int, int]:
    """Split and repair evidence ids: ``(ids, how many were repaired, how many skipped)``.

    Example:
        >>> normalize_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D", "D1:3"])
        (['D8:6', 'D9:17', 'D11:26', 'D30:5', 'D1:3'], 3, 1)
    """
    out: list[str] = []
    repaired = skipped = 0
    for raw in ids:
        parts = [p for p in re.split(r"[;,\s]+", str(raw).strip()) if p]
        if not parts:
            skipped += 1
            continue
        changed = len(parts) > 1
        for part in parts:
            m = _EVIDENCE.match(part)
            if not m:
                skipped += 1
                continue
            fixed = f"D{int(m.group(1))}:{int(m.group(2))}"
            changed = changed or fixed != part
            if fixed not in out:
                out.append(fixed)
        repaired += int(changed)
    return out, repaired, skipped


def _norm_question(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"[^\w\s]", " ", text).split())


def _sessions(conv: dict[str, Any]) -> list[tuple[int, list[dict[str, Any]], datetime]]:
    out = []
    for key, value in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(value, list) and value:
            out.append((int(m.group(1)), value, parse_session_date(conv[f"{key}_date_time"])))
    return sorted(out, key=lambda s: s[0])


def load_locomo(
    path: str | Path, *, stats: EvidenceStats | None = None, limit: int | None = None
) -> list[Conversation]:
    """Read a LoCoMo file (the first ``limit`` conversations): turns in session order, questions of categories 1-4."""
    stats = stats if stats is not None else EvidenceStats()
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    conversations = []
    for sample in data[:limit]:
        turns = [
            Turn(t["dia_id"], t.get("speaker", ""), t.get("text", ""), at, n, t.get("blip_caption"))
            for n, session, at in _sessions(sample["conversation"])
            for t in session
        ]
        known = {t.dia_id for t in turns}
        questions = []
        for qa in sample.get("qa", []):
            category = str(qa.get("category"))
            if category not in CATEGORIES:
                continue
            ids, repaired, skipped = normalize_evidence(qa.get("evidence") or [])
            stats.normalised += repaired
            stats.skipped_malformed += skipped
            stats.skipped_unknown += sum(e not in known for e in ids)
            questions.append(Question(qa["question"], category, [e for e in ids if e in known]))
        conversations.append(Conversation(str(sample.get("sample_id")), turns, questions))
    return conversations


def apply_audit(
    conversations: Sequence[Conversation],
    entries: Iterable[dict[str, Any]],
    stats: EvidenceStats | None = None,
    *,
    limited: bool = False,
) -> EvidenceStats:
    """Replace evidence with each audit entry's ``correct_evidence``, matched by question text.

    ``question_id`` (``locomo_<conversation index>_qa<n>``) only narrows the search to that conversation
    (with ``limited=True``, entries naming a conversation not loaded are ignored).
    """
    stats = stats if stats is not None else EvidenceStats()
    for n, entry in enumerate(entries):
        correct = entry.get("correct_evidence")
        if correct is None:
            continue
        wanted = _norm_question(str(entry.get("question", "")))
        m = _QID.match(str(entry.get("question_id", "")))
        index = int(m.group(1)) if m else len(conversations)
        if m and limited and index >= len(conversations):
            continue  # a conversation that was not loaded (--limit-conversations)
        pool = conversations[index : index + 1] or conversations
        hits = [(c, q) for c in pool for q in c.questions if _norm_question(q.question) == wanted]
        if not hits:
            stats.audit_unmatched.append(str(entry.get("question_id") or f"entry #{n}"))
            continue
        stats.audit_matched += 1
        for conv, q in hits:
            ids, repaired, skipped = normalize_evidence(correct)
            known = {t.dia_id for t in conv.turns}
            stats.normalised += repaired
            stats.skipped_malformed += skipped
            q.evidence = [e for e in ids if e in known]
    return stats


def find_audit_file(data_file: str | Path | None = None) -> Path | None:
    """The audit file next to the data, or under ``../shared/data/locomo/`` from the cwd or the repo root."""
    candidates = [] if data_file is None else [Path(data_file).parent / AUDIT_NAME]
    rel = Path("..") / "shared" / "data" / "locomo" / AUDIT_NAME
    candidates += [Path.cwd() / rel, Path(__file__).resolve().parents[2] / rel]
    return next((p for p in candidates if p.is_file()), None)


# ---------------------------------------------------------------------------- indexing
def check_text_format(fmt: str) -> set[str]:
    """The additions a text format asks for; raises ``ValueError`` for an unknown one."""
    parts = set(fmt.split("+")) - {"speaker"}
    if not fmt or not parts <= set(TEXT_PARTS):
        msg = f"text format must be 'speaker' or a '+'-join of {TEXT_PARTS}, got {fmt!r}."
        raise ValueError(msg)
    return parts


def index_text(turn: Turn, fmt: str = "speaker", previous: Turn | None = None, following: Turn | None = None) -> str:
    """What is stored for a turn: ``speaker`` (``"Caroline: text [image: caption]"``) or ``+``-joined additions.

    ``date`` prefixes the session date (``"[8 May 2023] ..."``); ``prev`` / ``next`` append the previous /
    next turn of the same session (``" (after Melanie: ...)"``, ``" (before Melanie: ...)"``).
    """
    parts = check_text_format(fmt)

    def line(t: Turn) -> str:
        caption = f" [image: {t.caption}]" if t.caption else ""
        return f"{t.speaker}: {t.text}{caption}".strip()

    text = line(turn)
    if "date" in parts:
        text = f"[{turn.at.day} {turn.at:%B %Y}] {text}"
    if "prev" in parts and previous is not None and previous.session == turn.session:
        text += f" (after {line(previous)})"
    if "next" in parts and following is not None and following.session == turn.session:
        text += f" (before {line(following)})"
    return text


def recall_at_k(evidence: Sequence[str], sources: Sequence[str], k: int) -> float:
    """Share of ``evidence`` among the first ``k`` ``sources``.

    Example:
        >>> recall_at_k(["D1:3", "D2:1"], ["D1:3", "D9:9", "D2:1"], 2)
        0.5
    """
    wanted = set(evidence)
    if not wanted:
        msg = "recall needs at least one evidence id."
        raise ValueError(msg)
    return len(wanted & set(sources[:k])) / len(wanted)
