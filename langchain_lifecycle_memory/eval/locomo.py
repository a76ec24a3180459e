"""LoCoMo evidence recall: each turn stored as an episode, recall@k of every question's evidence turns per category.

The LoCoMo data is CC BY-NC 4.0: read it from ``shared/``, never copy it.
"""

from __future__ import annotations

import json
import re
import statistics
import time
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.runnables import RunnableLambda

from langchain_lifecycle_memory.eval._baselines import (
    CachedEmbeddings,
    Hit,
    Retriever,
    bm25_retriever,
    inmemory_retriever,
)
from langchain_lifecycle_memory.graph.memory import LifecycleMemory
from langchain_lifecycle_memory.graph.naive import drop_store, fresh_store
from langchain_lifecycle_memory.read.injection import format_memories
from langchain_lifecycle_memory.store.retention import RetentionPolicy
from langchain_lifecycle_memory.write.update import UpdateConfig

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
        unmatched = f"; unmatched: {', '.join(self.audit_unmatched[:5])}" if self.audit_unmatched else ""
        audit = f"audit: {self.audit_matched}/{self.audit_entries} entries matched by question text{unmatched}"
        evidence = (
            f"evidence ids: {self.normalised} normalised, {self.skipped_malformed} malformed skipped, "
            f"{self.skipped_unknown} naming no turn of the conversation skipped; "
            f"{self.questions_without_evidence} question(s) without evidence skipped"
        )
        return [evidence, audit if self.audit_entries else "audit: none applied"]


# ---------------------------------------------------------------------------- parsing
def parse_session_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → an aware UTC datetime."""
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
    """Replace evidence with each audit entry's ``correct_evidence``, matched by question text (in its conversation)."""
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
    """What is stored for a turn: ``"Speaker: text"``, with the ``date`` and the ``prev``/``next`` turn if asked."""
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
    """Share of ``evidence`` among the first ``k`` ``sources``."""
    wanted = set(evidence)
    if not wanted:
        msg = "recall needs at least one evidence id."
        raise ValueError(msg)
    return len(wanted & set(sources[:k])) / len(wanted)


# ---------------------------------------------------------------------------- retrievers
BASELINES = ("default", "default-nothreshold", "dense", "bm25", "langgraph-inmemory")


def _ingest(
    conv: Conversation,
    embeddings: CachedEmbeddings,
    text_format: str,
    names: Sequence[str],
    k: int,
) -> tuple[LifecycleMemory, dict[str, Retriever]]:
    """One conversation stored through the facade (each turn under its speaker); the retrievers in ``names``."""
    # The questions are about months-old turns: episodes must not expire (default TTL 30 days).
    update = UpdateConfig(policy=RetentionPolicy(ttl={"episode": None}))
    memory = LifecycleMemory(
        store=fresh_store(embeddings), extractor=RunnableLambda(lambda _: [], name="none"), update=update
    )
    previous, following = [None, *conv.turns[:-1]], [*conv.turns[1:], None]
    texts = [index_text(t, text_format, p, n) for t, p, n in zip(conv.turns, previous, following, strict=True)]
    embeddings.warm(texts, queries=[q.question for q in conv.questions])
    # The episode encoder's vectors in one batch (add_episode would embed them one by one: same vectors).
    memory.retriever.embed_episodes(texts)
    by_record = {}
    said: dict[int, int] = {}  # turns so far per session: a session's turns are said one after another
    for turn, text in zip(conv.turns, texts, strict=True):
        said[turn.session] = said.get(turn.session, -1) + 1
        at = turn.at + timedelta(seconds=said[turn.session])
        record = memory.add_episode(text, user_id=conv.sample_id, at=at, source_id=turn.dia_id, entity=turn.speaker)
        by_record[record.id] = turn.dia_id

    def hits(docs: Sequence[Any]) -> list[Hit]:  # the dia_id from the episode's source, else by its record id
        out = []
        for d in docs:
            source = d.metadata.get("source")
            msg_ids = source.get("message_ids") if isinstance(source, dict) else None
            dia = msg_ids[0] if msg_ids else by_record.get(str(d.metadata.get("id")), "?")
            out.append((dia, d.page_content, datetime.fromisoformat(d.metadata["valid_from"])))
        return out

    user, now, ns = conv.sample_id, conv.asked_at, memory.namespace(conv.sample_id)
    runners: dict[str, Retriever] = {
        "default": lambda q: hits(memory.search(q, user, k=k, now=now)),
        "default-nothreshold": lambda q: hits(memory.search(q, user, k=k, now=now, min_score=0.0)),
        "dense": lambda q: [
            (by_record.get(r.id, "?"), r.content, r.valid_from)
            for r, _ in memory.store.search_records(ns, q, k=k, now=now)
        ],
    }
    if "bm25" in names:
        runners["bm25"] = bm25_retriever(texts, conv.turns, k)
    if "langgraph-inmemory" in names:
        runners["langgraph-inmemory"] = inmemory_retriever(embeddings, user, texts, conv.turns, k)
    return memory, {name: run for name, run in runners.items() if name in names}


def _put(by_category: dict[str, list[float]], category: str, value: float) -> None:
    by_category["all"].append(value)
    by_category[category].append(value)


def _means(by_category: dict[str, list[float]]) -> dict[str, float]:
    return {c: round(sum(v) / len(v), 4) if v else 0.0 for c, v in by_category.items()}


class _Tally:
    """Per-retriever recall@k, injected-block size and evidence that made it into the block."""

    def __init__(self, names: Sequence[str], ks: Sequence[int], max_tokens: int, turn_only: bool) -> None:
        self.ks, self.max_tokens, self.turn_only = list(ks), max_tokens, turn_only

        def by_category() -> dict[str, list[float]]:
            return {c: [] for c in ("all", *CATEGORIES)}

        self.recall = {n: {k: by_category() for k in ks} for n in names}
        self.shown = {n: by_category() for n in names}
        self.tokens: dict[str, list[int]] = {}
        self.shown_turn_only = {n: by_category() for n in names}

    def _inject(self, key: str, hits: list[Hit], q: Question, now: datetime) -> float:
        """The block's tokens (and without a budget) under ``key``; returns the share of evidence in it."""
        items = [{"id": h[0], "content": h[1], "valid_from": h[2]} for h in hits]
        block = format_memories(items, max_tokens=self.max_tokens, query=q.question, now=now)
        self.tokens.setdefault(key, []).append(block.tokens)
        whole = format_memories(items, max_tokens=10**9, query=q.question, now=now)
        self.tokens.setdefault(f"{key}-unbudgeted", []).append(whole.tokens)
        return recall_at_k(q.evidence, block.included, len(block.included))

    def add(self, name: str, q: Question, hits: list[Hit], plain: dict[str, str], now: datetime) -> None:
        """Score one question's results (``plain``: each turn's text without context)."""
        for k in self.ks:
            _put(self.recall[name][k], q.category, recall_at_k(q.evidence, [h[0] for h in hits], k))
        _put(self.shown[name], q.category, self._inject(name, hits, q, now))
        if self.turn_only:  # what the block would cost if only the turn itself were shown
            turns = [(d, plain.get(d, c), t) for d, c, t in hits]
            _put(self.shown_turn_only[name], q.category, self._inject(f"{name}-turn-only", turns, q, now))

    def result(self) -> dict[str, Any]:
        """The metric part of the ``--json`` dict."""
        first = next(iter(self.recall.values()), {})
        out: dict[str, Any] = {
            "retrievers": {n: {f"recall@{k}": _means(by_k[k]) for k in self.ks} for n, by_k in self.recall.items()},
            "median_injected_tokens": {key: float(statistics.median(v)) for key, v in self.tokens.items()},
            "injected_recall": {n: _means(by_c) for n, by_c in self.shown.items()},
            "questions_by_category": {c: len(v) for c, v in first.get(max(self.ks), {}).items()},
            "max_tokens": self.max_tokens,
        }
        if self.turn_only:
            out["injected_recall_turn_only"] = {n: _means(by_c) for n, by_c in self.shown_turn_only.items()}
        return out


def evaluate_locomo(
    path: str | Path,
    *,
    ks: Sequence[int] = (5, 10),
    audit: str | Path | None = None,
    limit_conversations: int | None = None,
    text_format: str = "date+prev+next",
    retrievers: Sequence[str] = BASELINES,
    embeddings: Embeddings | None = None,
    max_tokens: int = 600,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the benchmark; returns the ``--json`` dict."""
    parts = check_text_format(text_format)
    unknown = sorted(set(retrievers) - set(BASELINES))
    if unknown:
        msg = f"Unknown retriever(s) {unknown}; choose from {list(BASELINES)}."
        raise ValueError(msg)
    stats = EvidenceStats()
    conversations = load_locomo(path, stats=stats, limit=limit_conversations)
    if audit is not None:
        entries = json.loads(Path(audit).read_text(encoding="utf-8"))
        apply_audit(conversations, entries, stats, limited=limit_conversations is not None)
    for conv in conversations:
        stats.questions_without_evidence += sum(not q.evidence for q in conv.questions)
    if embeddings is None:
        from langchain_lifecycle_memory.store.embeddings import UniversalSentenceEncoderEmbeddings

        embeddings = UniversalSentenceEncoderEmbeddings()
    cached = CachedEmbeddings(embeddings)
    kmax = max(ks)
    names = list(retrievers)
    tally = _Tally(names, ks, max_tokens, turn_only=bool(parts - {"date"}))
    timings: dict[str, float] = dict.fromkeys(["ingest", *names], 0.0)
    for conv in conversations:
        t0 = time.perf_counter()
        memory, runners = _ingest(conv, cached, text_format, retrievers, kmax)
        timings["ingest"] += time.perf_counter() - t0
        questions = [q for q in conv.questions if q.evidence]
        plain = {t.dia_id: index_text(t) for t in conv.turns}
        for name, run in runners.items():
            t1 = time.perf_counter()
            for q in questions:
                tally.add(name, q, run(q.question), plain, conv.asked_at)
            timings[name] += time.perf_counter() - t1
        drop_store(memory.store)
        if progress is not None:
            progress(f"{conv.sample_id}: {len(conv.turns)} turns, {len(questions)} questions")
    return {
        **tally.result(),
        "ks": list(ks),
        "conversations": [c.sample_id for c in conversations],
        "text_format": text_format,
        "audit": None if audit is None else str(audit),
        "seconds": {k: round(v, 1) for k, v in timings.items()},
        "notes": stats.notes(),
    }
