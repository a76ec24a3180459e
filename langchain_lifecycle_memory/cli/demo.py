"""The seed article's demo (Vim, a paraphrase, a switch to VS Code) on its naive engine and on this package.

Both engines hear the same conversation; every verdict is computed from what each actually injected.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from langchain_lifecycle_memory.read.injection import block_lines
from langchain_lifecycle_memory.schema import MemoryRecord, ensure_aware

__all__ = ["DemoResult", "DemoRound", "EngineView", "Verdict", "memory_lines", "run_demo"]

Lang = Literal["zh", "en"]
DEMO_PREFIX_NAIVE = "lifecycle_demo_naive"
TOPIC = ("Vim", "VS Code")
"""Values that make an injected line on-topic for the editor rounds."""


class _RoundSpec(BaseModel):
    title: str
    query: str
    at: str
    said: str | None = None
    said_at: str | None = None
    expect: tuple[str, ...] = ()
    forbid: tuple[str, ...] = ()
    expect_empty: bool = False
    show_block: bool = False


_ROUNDS: tuple[dict[str, Any], ...] = (  # what the rounds are, in either language
    {"at": "2024-01-01T10:05:00Z", "said_at": "2024-01-01T10:00:00Z", "expect": ("Vim",)},
    {"at": "2024-01-04T09:00:00Z", "expect": ("Vim",)},
    {"at": "2024-03-01T10:05:00Z", "said_at": "2024-03-01T10:00:00Z", "expect": ("VS Code",), "forbid": ("Vim",)},
    {"at": "2024-03-01T10:10:00Z", "expect": ("VS Code",), "forbid": ("Vim",), "show_block": True},
    {"at": "2024-03-02T08:00:00Z", "expect_empty": True, "show_block": True},
)
_BACKGROUND_AT = ("2023-12-20T09:00:00Z", "2023-12-20T09:01:00Z", "2023-12-20T09:02:00Z")
_WORDS: dict[str, dict[str, tuple[str | None, ...]]] = {
    "zh": {
        "background": ("我住在杭州", "我养了一只猫，叫咪咪", "我对花生过敏"),
        "title": (
            "第 1 轮：写入偏好，用几乎相同的话检索",
            "第 2 轮：几天后换一种问法（语义鸿沟）",
            "第 3 轮：用户改用 VS Code（记忆冲突）",
            "第 4 轮：实际注入 Prompt 的记忆块（上下文污染）",
            "附加：无关问题，应当“什么都不知道”",
        ),
        "query": (
            "用户的编辑器偏好是什么？",
            "我适合用什么工具写 Python？",
            "用户的编辑器偏好是什么？",
            "用户喜欢什么编辑器",
            "今天天气怎么样？",
        ),
        "said": ("我喜欢使用 Vim 编辑器", None, "我现在改用 VS Code 了", None, None),
    },
    "en": {
        "background": ("I live in Berlin", "I have a cat named Miso", "I'm allergic to peanuts"),
        "title": (
            "Round 1: store a preference, query with almost the same words",
            "Round 2: a few days later, a paraphrase (semantic gap)",
            "Round 3: the user switches to VS Code (conflict)",
            "Round 4: the block actually injected into the prompt (pollution)",
            "Extra: an unrelated question should know nothing",
        ),
        "query": (
            "What is the user's editor preference?",
            "What tool should I use to write Python?",
            "What is the user's editor preference?",
            "What editor does the user like?",
            "What's the weather like today?",
        ),
        "said": ("I like using the Vim editor", None, "I've switched to VS Code now", None, None),
    },
}


def _rounds(lang: str) -> list[_RoundSpec]:
    words = _WORDS[lang]
    return [
        _RoundSpec(title=title, query=query, said=said, **shape)
        for title, query, said, shape in zip(words["title"], words["query"], words["said"], _ROUNDS, strict=True)
    ]


class Verdict(BaseModel):
    """How one engine did on one round, judged on its injected block."""

    ok: bool
    label: str
    """``hit``, ``miss``, ``conflict``, ``polluted``, ``nothing known``."""
    details: list[str] = Field(default_factory=list)
    """What went wrong, e.g. ``stale 'Vim' injected``, ``1 unrelated line``."""


class EngineView(BaseModel):
    """What one engine did in one round."""

    engine: Literal["naive", "ours"]
    written: list[str] = Field(default_factory=list)
    archived: list[str] = Field(default_factory=list)
    """What this round's message stored and archived (the naive engine never archives)."""
    retrieved: list[tuple[str, float]] = Field(default_factory=list)
    """Returned memories with their score (naive: cosine; ours: calibrated fused score)."""
    held_back: list[tuple[str, str]] = Field(default_factory=list)
    """Near misses and why: ``(statement, reason)``."""
    block: str
    lines: list[str] = Field(default_factory=list)
    """The injected block, verbatim, and the statements it carries."""
    empty: bool
    verdict: Verdict


class DemoRound(BaseModel):
    """One round: what the user said (if anything), the query, and both engines' answers."""

    number: int
    title: str
    said: str | None
    query: str
    at: datetime
    expect: list[str]
    forbid: list[str]
    expect_empty: bool
    show_block: bool
    naive: EngineView
    ours: EngineView


class DemoResult(BaseModel):
    """Everything the demo computed (the CLI renders it; ``--json`` prints it)."""

    lang: Lang
    user_id: str
    path: str | None
    """The store folder when ``--path`` was given (temporary folders are gone afterwards)."""
    background: list[str]
    rounds: list[DemoRound]
    history: list[MemoryRecord]
    """Every version of the ``user/editor`` slot in this package's store, oldest first."""
    naive_k: int
    naive_min_score: float
    """The naive engine's fixed settings (the article's ``top_k`` and ``min_score``)."""
    seconds: float

    def score(self) -> dict[str, int]:
        """Rounds passed per engine."""
        return {engine: sum(getattr(r, engine).verdict.ok for r in self.rounds) for engine in ("naive", "ours")}


def memory_lines(block: str) -> list[str]:
    r"""The statements inside a ``format_memories`` block (unquoted), in order.

    Example:
        >>> memory_lines('head\n<memories>\n- [2024-01-01 · conf 0.75] editor: "Vim" — "用户喜欢 Vim"\n</memories>')
        ['用户喜欢 Vim']
    """
    return [statement for _, statement in block_lines(block)]


def _mentions(line: str, value: str) -> bool:
    return value.casefold() in line.casefold()


def judge(lines: Sequence[str], spec: _RoundSpec, topic: Sequence[str]) -> Verdict:
    """Judge an injected block's statements against a round's expectations."""
    if spec.expect_empty:
        if not lines:
            return Verdict(ok=True, label="nothing known")
        return Verdict(ok=False, label="polluted", details=[f"{len(lines)} unrelated line(s) injected"])
    missing = [v for v in spec.expect if not any(_mentions(line, v) for line in lines)]
    stale = [v for v in spec.forbid if any(_mentions(line, v) for line in lines if not _mentions(line, spec.expect[0]))]
    unrelated = [line for line in lines if not any(_mentions(line, v) for v in topic)]
    details = ["missing " + ", ".join(repr(v) for v in missing)] if missing else []
    details += ["stale " + ", ".join(repr(v) for v in stale) + " injected too"] if stale else []
    details += [f"{len(unrelated)} unrelated line(s)"] if unrelated else []
    label = "miss" if missing else "conflict" if stale else "polluted" if unrelated else "hit"
    return Verdict(ok=not details, label=label, details=details)


def _day(value: datetime | None) -> str:
    return value.date().isoformat() if value is not None else "?"


def _view(block: Any, spec: _RoundSpec, **data: Any) -> EngineView:
    lines = memory_lines(block.text)
    return EngineView(**data, block=block.text, lines=lines, empty=block.empty, verdict=judge(lines, spec, TOPIC))


def _naive_view(naive: Any, spec: _RoundSpec, user: str, now: datetime, written: list[str]) -> EngineView:
    hits = [
        h for h in naive.store.search(naive.namespace(user), query=spec.query, limit=naive.k) if h.score is not None
    ]
    kept = [(h.value["content"], float(h.score)) for h in hits if h.score >= naive.min_score]
    misses = [h for h in hits if h.score < naive.min_score][:1]
    below = [(h.value["content"], f"cosine {h.score:.3f} < min_score {naive.min_score}") for h in misses]
    block = naive.inject(spec.query, user, now=now)
    return _view(block, spec, engine="naive", written=written, retrieved=kept, held_back=below)


def _ours_view(memory: Any, spec: _RoundSpec, user: str, now: datetime, result: Any) -> EngineView:
    explanation = memory.explain(spec.query, user, now=now)
    by_id = {c.record.id: c.record for c in explanation.candidates}
    held = []
    for c in explanation.by_decision("archived"):
        if c.fused < explanation.min_score:  # only what would have been injected, were it still true
            continue
        successor = by_id.get(c.record.superseded_by or "")
        why = f"superseded by {successor.value or successor.content!r}" if successor is not None else c.reason
        held.append((c.record.content, f"archived {_day(c.record.valid_to)}, {why}"))
    added, refreshed, archived = (result.added, result.refreshed, result.archived) if result else ([], [], [])
    return _view(
        memory.inject(spec.query, user, now=now),
        spec,
        engine="ours",
        written=[r.content for r in added] + [f"{r.content} (refreshed)" for r in refreshed],
        archived=[r.content for r in archived],
        retrieved=[(c.record.content, round(c.fused, 4)) for c in explanation.kept()],
        held_back=held,
    )


def run_demo(lang: Lang = "zh", path: str | Path | None = None, *, embeddings: Any | None = None) -> DemoResult:
    """Replay the seed article's rounds on the naive engine and on ``LifecycleMemory`` (``path``: a folder kept)."""
    if lang not in _WORDS:
        msg = f"lang must be 'zh' or 'en', got {lang!r}."
        raise ValueError(msg)
    if path is None:
        with tempfile.TemporaryDirectory(prefix="lifecycle-demo-", ignore_cleanup_errors=True) as tmp:
            return _run(lang, Path(tmp), None, embeddings)
    folder = Path(path).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    return _run(lang, folder, str(folder), embeddings)


def _run(lang: Lang, folder: Path, shown_path: str | None, embeddings: Any | None) -> DemoResult:
    from langchain_lifecycle_memory.graph.memory import LifecycleMemory
    from langchain_lifecycle_memory.graph.naive import NaiveMemory
    from langchain_lifecycle_memory.graph.store import ChromaMemoryStore
    from langchain_lifecycle_memory.write.extraction import create_rule_extractor

    started, user = time.perf_counter(), f"demo-{lang}"
    store = ChromaMemoryStore(folder, embeddings=embeddings)
    naive_store = ChromaMemoryStore(
        client=store.client,
        embeddings=store.embeddings,
        collection_prefix=DEMO_PREFIX_NAIVE,
        index={"fields": ["content"]},
    )
    memory, naive = LifecycleMemory(store), NaiveMemory(naive_store)
    store.purge(memory.namespace(user))
    naive_store.purge(naive.namespace(user))
    extractor = create_rule_extractor()

    def tell(text: str, at: str) -> tuple[Any, list[str]]:
        when = ensure_aware(at)
        facts = extractor.invoke({"messages": [HumanMessage(text)], "now": when})
        statements = [f.content for f in facts if f.operation == "assert"]
        naive.add(statements, user, at=when)  # type: ignore[arg-type]
        return memory.add_messages([("user", text)], user, at=when), statements

    background = [str(text) for text in _WORDS[lang]["background"]]
    for text, at in zip(background, _BACKGROUND_AT, strict=True):
        tell(text, at)
    rounds: list[DemoRound] = []
    for number, spec in enumerate(_rounds(lang), start=1):
        result, statements = tell(spec.said, spec.said_at or spec.at) if spec.said else (None, [])
        now = ensure_aware(spec.at)
        assert now is not None
        views = {
            "naive": _naive_view(naive, spec, user, now, statements),
            "ours": _ours_view(memory, spec, user, now, result),
        }
        rounds.append(DemoRound(number=number, at=now, **views, **spec.model_dump(exclude={"at", "said_at"})))
    return DemoResult(
        lang=lang,
        user_id=user,
        path=shown_path,
        background=background,
        rounds=rounds,
        history=memory.history(user, "user", "editor"),
        naive_k=naive.k,
        naive_min_score=naive.min_score,
        seconds=round(time.perf_counter() - started, 2),
    )
