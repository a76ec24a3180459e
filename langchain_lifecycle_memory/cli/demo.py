"""The seed article's demo, replayed twice: its naive memory engine next to this package.

The article writes "我喜欢使用 Vim 编辑器", asks a paraphrase ("我适合用什么工具写 Python？"),
switches to VS Code, and prints the prompt block it would inject. Its engine is
append-only, dense-only and uses a fixed ``min_score``; ``naive`` rebuilds it on the
same store and embedder. Here both engines hear the same conversation (extracted by the
same rule extractor) and answer the same queries, and every cell of the comparison is
computed from what each engine actually retrieved and injected: if the naive engine
passes a round, the result says so.

Before the four rounds, both engines also learn three unrelated facts from "other
conversations" (city, pet, allergy): a memory store is never about one topic, and
unrelated memories are what a low threshold lets into a prompt. A fifth query
("今天天气怎么样？") shows the "nothing known" path.

Example:
    .. code-block:: python

        from langchain_lifecycle_memory.cli.demo import run_demo

        result = run_demo("zh")
        r3 = result.rounds[2]
        print(r3.naive.lines)  # both editors
        print(r3.ours.lines)   # VS Code only
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import HumanMessage
from pydantic import BaseModel, Field

from langchain_lifecycle_memory.schema import MemoryRecord, ensure_aware

__all__ = ["DemoResult", "DemoRound", "EngineView", "Verdict", "memory_lines", "run_demo"]

Lang = Literal["zh", "en"]
DEMO_PREFIX_NAIVE = "lifecycle_demo_naive"


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


class _Script(BaseModel):
    user_id: str
    background: tuple[tuple[str, str], ...]
    rounds: tuple[_RoundSpec, ...]
    topic: tuple[str, ...]
    """Values that make an injected line on-topic for the editor rounds."""


_SCRIPTS: dict[str, _Script] = {
    "zh": _Script(
        user_id="demo-zh",
        background=(
            ("我住在杭州", "2023-12-20T09:00:00Z"),
            ("我养了一只猫，叫咪咪", "2023-12-20T09:01:00Z"),
            ("我对花生过敏", "2023-12-20T09:02:00Z"),
        ),
        rounds=(
            _RoundSpec(
                title="第 1 轮：写入偏好，用几乎相同的话检索",
                said="我喜欢使用 Vim 编辑器",
                said_at="2024-01-01T10:00:00Z",
                query="用户的编辑器偏好是什么？",
                at="2024-01-01T10:05:00Z",
                expect=("Vim",),
            ),
            _RoundSpec(
                title="第 2 轮：几天后换一种问法（语义鸿沟）",
                query="我适合用什么工具写 Python？",
                at="2024-01-04T09:00:00Z",
                expect=("Vim",),
            ),
            _RoundSpec(
                title="第 3 轮：用户改用 VS Code（记忆冲突）",
                said="我现在改用 VS Code 了",
                said_at="2024-03-01T10:00:00Z",
                query="用户的编辑器偏好是什么？",
                at="2024-03-01T10:05:00Z",
                expect=("VS Code",),
                forbid=("Vim",),
            ),
            _RoundSpec(
                title="第 4 轮：实际注入 Prompt 的记忆块（上下文污染）",
                query="用户喜欢什么编辑器",
                at="2024-03-01T10:10:00Z",
                expect=("VS Code",),
                forbid=("Vim",),
                show_block=True,
            ),
            _RoundSpec(
                title="附加：无关问题，应当“什么都不知道”",
                query="今天天气怎么样？",
                at="2024-03-02T08:00:00Z",
                expect_empty=True,
                show_block=True,
            ),
        ),
        topic=("Vim", "VS Code"),
    ),
    "en": _Script(
        user_id="demo-en",
        background=(
            ("I live in Berlin", "2023-12-20T09:00:00Z"),
            ("I have a cat named Miso", "2023-12-20T09:01:00Z"),
            ("I'm allergic to peanuts", "2023-12-20T09:02:00Z"),
        ),
        rounds=(
            _RoundSpec(
                title="Round 1: store a preference, query with almost the same words",
                said="I like using the Vim editor",
                said_at="2024-01-01T10:00:00Z",
                query="What is the user's editor preference?",
                at="2024-01-01T10:05:00Z",
                expect=("Vim",),
            ),
            _RoundSpec(
                title="Round 2: a few days later, a paraphrase (semantic gap)",
                query="What tool should I use to write Python?",
                at="2024-01-04T09:00:00Z",
                expect=("Vim",),
            ),
            _RoundSpec(
                title="Round 3: the user switches to VS Code (conflict)",
                said="I've switched to VS Code now",
                said_at="2024-03-01T10:00:00Z",
                query="What is the user's editor preference?",
                at="2024-03-01T10:05:00Z",
                expect=("VS Code",),
                forbid=("Vim",),
            ),
            _RoundSpec(
                title="Round 4: the block actually injected into the prompt (pollution)",
                query="What editor does the user like?",
                at="2024-03-01T10:10:00Z",
                expect=("VS Code",),
                forbid=("Vim",),
                show_block=True,
            ),
            _RoundSpec(
                title="Extra: an unrelated question should know nothing",
                query="What's the weather like today?",
                at="2024-03-02T08:00:00Z",
                expect_empty=True,
                show_block=True,
            ),
        ),
        topic=("Vim", "VS Code"),
    ),
}


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
    """Statements stored by this round's message."""
    archived: list[str] = Field(default_factory=list)
    """Statements archived by this round's message (the naive engine never archives)."""
    retrieved: list[tuple[str, float]] = Field(default_factory=list)
    """Returned memories with their score (naive: cosine; ours: calibrated fused score)."""
    held_back: list[tuple[str, str]] = Field(default_factory=list)
    """Near misses and why: ``(statement, reason)``."""
    block: str
    """The injected prompt block, verbatim."""
    lines: list[str] = Field(default_factory=list)
    """The statements the block carries."""
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
        return {
            "naive": sum(r.naive.verdict.ok for r in self.rounds),
            "ours": sum(r.ours.verdict.ok for r in self.rounds),
        }


def memory_lines(block: str) -> list[str]:
    r"""The statements inside a ``format_memories`` block (unquoted), in order.

    Example:
        >>> memory_lines('head\n<memories>\n- [2024-01-01 · conf 0.75] "用户喜欢 Vim"\n</memories>')
        ['用户喜欢 Vim']
    """
    out: list[str] = []
    inside = False
    for raw in block.splitlines():
        line = raw.strip()
        if line == "<memories>":
            inside = True
        elif line == "</memories>":
            inside = False
        elif inside and line.startswith("- ["):
            _, _, quoted = line.partition("] ")
            try:
                out.append(str(json.loads(quoted)))
            except ValueError:
                out.append(quoted)
    return out


def _mentions(line: str, value: str) -> bool:
    return value.casefold() in line.casefold()


def judge(lines: Sequence[str], spec: _RoundSpec, topic: Sequence[str]) -> Verdict:
    """Judge an injected block's statements against a round's expectations."""
    if spec.expect_empty:
        if not lines:
            return Verdict(ok=True, label="nothing known")
        return Verdict(ok=False, label="polluted", details=[f"{len(lines)} unrelated line(s) injected"])
    details: list[str] = []
    missing = [v for v in spec.expect if not any(_mentions(line, v) for line in lines)]
    stale = [v for v in spec.forbid if any(_mentions(line, v) for line in lines if not _mentions(line, spec.expect[0]))]
    unrelated = [line for line in lines if not any(_mentions(line, v) for v in topic)]
    if missing:
        details.append("missing " + ", ".join(repr(v) for v in missing))
    if stale:
        details.append("stale " + ", ".join(repr(v) for v in stale) + " injected too")
    if unrelated:
        details.append(f"{len(unrelated)} unrelated line(s)")
    if missing:
        label = "miss"
    elif stale:
        label = "conflict"
    elif unrelated:
        label = "polluted"
    else:
        label = "hit"
    return Verdict(ok=not details, label=label, details=details)


def _naive_view(naive: Any, spec: _RoundSpec, user: str, now: datetime, written: list[str]) -> dict[str, Any]:
    hits = naive.store.search(naive.namespace(user), query=spec.query, limit=naive.k)
    kept = [(h.value["content"], float(h.score)) for h in hits if h.score is not None and h.score >= naive.min_score]
    below = [
        (h.value["content"], f"cosine {h.score:.3f} < min_score {naive.min_score}")
        for h in hits
        if h.score is not None and h.score < naive.min_score
    ][:1]
    block = naive.inject(spec.query, user, now=now)
    return {"engine": "naive", "written": written, "retrieved": kept, "held_back": below, "block": block}


def _ours_view(memory: Any, spec: _RoundSpec, user: str, now: datetime, result: Any) -> dict[str, Any]:
    explanation = memory.explain(spec.query, user, now=now)
    kept = [(c.record.content, round(c.fused, 4)) for c in explanation.kept()]
    by_id = {c.record.id: c.record for c in explanation.candidates}
    held = []
    for c in explanation.by_decision("archived"):
        if c.fused < explanation.min_score:  # only what would have been injected, were it still true
            continue
        successor = by_id.get(c.record.superseded_by or "")
        why = f"superseded by {successor.value or successor.content!r}" if successor is not None else c.reason
        held.append((c.record.content, f"archived {_day(c.record.valid_to)}, {why}"))
    block = memory.inject(spec.query, user, now=now)
    written = [r.content for r in (result.added if result is not None else [])]
    written += [f"{r.content} (refreshed)" for r in (result.refreshed if result is not None else [])]
    archived = [r.content for r in (result.archived if result is not None else [])]
    return {
        "engine": "ours",
        "written": written,
        "archived": archived,
        "retrieved": kept,
        "held_back": held,
        "block": block,
    }


def _day(value: datetime | None) -> str:
    return value.date().isoformat() if value is not None else "?"


def _view(data: dict[str, Any], spec: _RoundSpec, topic: Sequence[str]) -> EngineView:
    block = data.pop("block")
    lines = memory_lines(block.text)
    return EngineView(**data, block=block.text, lines=lines, empty=block.empty, verdict=judge(lines, spec, topic))


def run_demo(lang: Lang = "zh", path: str | Path | None = None, *, embeddings: Any | None = None) -> DemoResult:
    """Replay the seed article's rounds on the naive engine and on ``LifecycleMemory``.

    Args:
        lang: ``"zh"`` (the article's own words) or ``"en"`` (the English mirror).
        path: Folder for an embedded Chroma that is kept afterwards (inspect it with
            ``lifecycle-memory --path DIR history --user demo-zh editor``); the demo user
            is reset there first. Default: a temporary folder, removed at the end.
        embeddings: Embedder for both engines (default: the offline USE model).

    Returns:
        Both engines' writes, retrievals, injected blocks and verdicts per round, and the
        history of the editor slot.

    Raises:
        ValueError: If ``lang`` is not ``"zh"`` or ``"en"``.
    """
    if lang not in _SCRIPTS:
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

    started = time.perf_counter()
    script = _SCRIPTS[lang]
    user = script.user_id
    store = ChromaMemoryStore(folder, embeddings=embeddings)
    naive_store = ChromaMemoryStore(
        client=store.client,
        embeddings=store.embeddings,
        collection_prefix=DEMO_PREFIX_NAIVE,
        index={"fields": ["content"]},
    )
    memory = LifecycleMemory(store)
    naive = NaiveMemory(naive_store)
    store.purge(memory.namespace(user))
    naive_store.purge(naive.namespace(user))
    extractor = create_rule_extractor()

    def tell(text: str, at: str) -> tuple[Any, list[str]]:
        when = ensure_aware(at)
        facts = extractor.invoke({"messages": [HumanMessage(text)], "now": when})
        statements = [f.content for f in facts if f.operation == "assert"]
        naive.add(statements, user, at=when)  # type: ignore[arg-type]
        return memory.add_messages([("user", text)], user, at=when), statements

    for text, at in script.background:
        tell(text, at)
    rounds: list[DemoRound] = []
    for number, spec in enumerate(script.rounds, start=1):
        result, statements = tell(spec.said, spec.said_at or spec.at) if spec.said else (None, [])
        now = ensure_aware(spec.at)
        assert now is not None
        naive_view = _view(_naive_view(naive, spec, user, now, statements), spec, script.topic)
        ours_view = _view(_ours_view(memory, spec, user, now, result), spec, script.topic)
        rounds.append(
            DemoRound(
                number=number,
                title=spec.title,
                said=spec.said,
                query=spec.query,
                at=now,
                expect=list(spec.expect),
                forbid=list(spec.forbid),
                expect_empty=spec.expect_empty,
                show_block=spec.show_block,
                naive=naive_view,
                ours=ours_view,
            )
        )
    return DemoResult(
        lang=lang,
        user_id=user,
        path=shown_path,
        background=[text for text, _ in script.background],
        rounds=rounds,
        history=memory.history(user, "user", "editor"),
        naive_k=naive.k,
        naive_min_score=naive.min_score,
        seconds=round(time.perf_counter() - started, 2),
    )
