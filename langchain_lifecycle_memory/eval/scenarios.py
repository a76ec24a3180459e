"""Scenario runner: replay JSONL scenarios (``turn``, ``probe``, ``sweep``, ``forget``, ``purge`` steps), judge probes.

A probe is judged on the injected block's memory lines: every ``expect`` string, no ``forbid`` one, or none at all.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from langchain_core.embeddings import Embeddings
from langchain_core.runnables import RunnableLambda

from langchain_lifecycle_memory.graph.memory import LifecycleMemory
from langchain_lifecycle_memory.graph.naive import NaiveEngine, ScenarioEngine, drop_store, fresh_store
from langchain_lifecycle_memory.read.injection import MemoryBlock, block_lines
from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever
from langchain_lifecycle_memory.schema import Fact, ensure_aware, utcnow

__all__ = [
    "ProbeResult",
    "LifecycleEngine",
    "Scenario",
    "ScenarioFormatError",
    "ScenarioReport",
    "judge_block",
    "llm_extractor",
    "load_scenarios",
    "run_scenarios",
]

Extractor = Literal["gold", "rule", "llm"]
EngineName = Literal["ours", "naive"]
_TICK = timedelta(seconds=1)
_OPEN = "<memories>"


# ---------------------------------------------------------------------------- the file format
STEP_TYPES = ("turn", "probe", "sweep", "forget", "purge")


class ScenarioFormatError(ValueError):
    """A scenario file that does not follow the format; the message names the line."""


@dataclass
class Scenario:
    """One parsed scenario (a line of the file)."""

    id: str
    category: str
    user_id: str | None
    steps: list[dict[str, Any]]
    line: int
    lang: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


def _fail(line: int, sid: str | None, msg: str) -> ScenarioFormatError:
    where = f"line {line}" + (f" (scenario {sid!r})" if sid else "")
    return ScenarioFormatError(f"{where}: {msg}")


def _strings(value: Any, name: str, line: int, sid: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(line, sid, f"`{name}` must be a list of strings, got {value!r}.")
    return list(value)


def _time(value: Any, name: str, line: int, sid: str) -> datetime | None:
    if value is None:
        return None
    try:
        return ensure_aware(value)
    except (TypeError, ValueError) as e:
        raise _fail(line, sid, f"`{name}`: {e}") from e


def _check_step(step: Any, i: int, scenario_user: str | None, line: int, sid: str) -> dict[str, Any]:
    if not isinstance(step, dict):
        raise _fail(line, sid, f"step {i} must be an object, got {type(step).__name__}.")
    kind = step.get("type")
    if kind not in STEP_TYPES:
        raise _fail(line, sid, f"step {i} has unknown type {kind!r}; expected one of {list(STEP_TYPES)}.")
    out = dict(step)
    out["at"] = _time(step.get("at"), f"steps[{i}].at", line, sid)
    user = step.get("user_id", scenario_user)
    if user is None:
        raise _fail(line, sid, f"step {i} ({kind}) has no user_id and the scenario sets none; add `user_id`.")
    out["user_id"] = str(user)
    if kind == "turn":
        facts = step.get("facts") or []
        if not isinstance(facts, list):
            raise _fail(line, sid, f"steps[{i}].facts must be a list of fact objects.")
        for j, fact in enumerate(facts):
            try:
                Fact.model_validate(fact)
            except Exception as e:
                raise _fail(line, sid, f"steps[{i}].facts[{j}] is not a valid fact: {e}") from e
        if not facts and not isinstance(step.get("user"), str):
            raise _fail(line, sid, f"turn step {i} needs `user` text or gold `facts`.")
        out["facts"] = facts
    elif kind == "probe":
        query = step.get("query")
        if not isinstance(query, str) or not query.strip():
            raise _fail(line, sid, f"probe step {i} needs a non-empty `query` string.")
        out["expect"] = _strings(step.get("expect"), f"steps[{i}].expect", line, sid)
        out["forbid"] = _strings(step.get("forbid"), f"steps[{i}].forbid", line, sid)
        out["expect_empty"] = bool(step.get("expect_empty", False))
        out["as_of"] = _time(step.get("as_of"), f"steps[{i}].as_of", line, sid)
    elif kind == "forget":
        target = {k: step.get(k) for k in ("query", "entity", "attribute") if step.get(k) is not None}
        if not target:
            raise _fail(line, sid, f"forget step {i} needs `query`, or `entity`/`attribute`.")
    return out


def _parse_scenario(obj: Any, line: int) -> Scenario:
    if not isinstance(obj, dict):
        raise _fail(line, None, f"a scenario must be a JSON object, got {type(obj).__name__}.")
    sid = str(obj.get("id") or f"line{line}")
    steps = obj.get("steps")
    if not isinstance(steps, list):
        raise _fail(line, sid, "missing `steps` (a list of step objects).")
    user = None if obj.get("user_id") is None else str(obj["user_id"])
    checked = [_check_step(s, i, user, line, sid) for i, s in enumerate(steps)]
    category = str(obj.get("category") or "uncategorized")
    return Scenario(sid, category, user, checked, line, obj.get("lang"), obj)


def load_scenarios(source: str | os.PathLike[str] | Iterable[Any]) -> list[Scenario]:
    """Parse and validate a scenario file, JSONL text, lines or dicts; ``ScenarioFormatError`` names a bad line."""
    if isinstance(source, os.PathLike) or (isinstance(source, str) and not source.lstrip().startswith("{")):
        path = Path(source)
        if not path.is_file():
            msg = f"Scenario file {str(path)!r} not found; pass a .jsonl path (one scenario a line)."
            raise FileNotFoundError(msg)
        source = path.read_text(encoding="utf-8")
    out: list[Scenario] = []
    for n, item in enumerate(source.splitlines() if isinstance(source, str) else source, start=1):
        if isinstance(item, (str, bytes)):
            text = item.decode() if isinstance(item, bytes) else item
            if not text.strip() or text.lstrip().startswith("//"):
                continue
            try:
                item = json.loads(text)
            except json.JSONDecodeError as e:
                raise _fail(n, None, f"invalid JSON ({e.msg} at column {e.colno}).") from e
        out.append(item if isinstance(item, Scenario) else _parse_scenario(item, n))
    return out


# ---------------------------------------------------------------------------- results


@dataclass
class ProbeResult:
    """The verdict on one probe."""

    scenario: str
    step: int
    """Index of the probe in the scenario's ``steps`` (0-based)."""
    category: str
    passed: bool
    injected: str
    """The whole injected block text."""
    reasons: list[str]
    query: str = ""
    user_id: str | None = None


@dataclass
class ScenarioReport:
    """All probe verdicts of one run (one engine, one extractor)."""

    engine: str
    extractor: str
    probes: list[ProbeResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """Engine exceptions (the scenario's remaining probes were failed with the reason)."""

    @property
    def summary(self) -> dict[str, Any]:
        """``{"passed", "failed", "by_category": {category: {"passed", "failed"}}}``."""
        by_cat: dict[str, dict[str, int]] = {}
        for p in self.probes:
            cell = by_cat.setdefault(p.category, {"passed": 0, "failed": 0})
            cell["passed" if p.passed else "failed"] += 1
        passed = sum(p.passed for p in self.probes)
        return {"passed": passed, "failed": len(self.probes) - passed, "by_category": by_cat}

    def failures(self) -> list[ProbeResult]:
        """The probes that failed, in file order."""
        return [p for p in self.probes if not p.passed]

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` contract: ``{"summary": ..., "probes": [...]}``."""
        keys = ("scenario", "step", "category", "passed", "injected", "reasons")
        return {"summary": self.summary, "probes": [{k: asdict(p)[k] for k in keys} for p in self.probes]}


class LifecycleEngine:
    """Drives ``LifecycleMemory`` through a scenario: gold facts via ``add_facts``, else ``add_messages``."""

    name = "ours"

    def __init__(self, *, extractor: str = "gold", embeddings: Any = None, llm: Any = None, **options: Any) -> None:
        """``options``: ``retriever`` (``LifecycleRetriever`` settings), and ``LifecycleMemory``'s (``update``...)."""
        if extractor == "llm" and llm is None:
            msg = "extractor='llm' needs llm=llm_extractor(ChatOpenAI(base_url=...)) (or --base-url from a shell)."
            raise ValueError(msg)
        self.extractor = extractor
        self.store = fresh_store(embeddings)
        # With gold facts nothing is extracted from text: a no-op extractor avoids loading one.
        chosen: Any = RunnableLambda(lambda _: [], name="gold_replay") if extractor == "gold" else "rule"
        chosen = llm if extractor == "llm" else chosen
        settings = options.pop("retriever", None)
        retriever = LifecycleRetriever(store=self.store, **settings) if settings else None
        self.memory = LifecycleMemory(store=self.store, extractor=chosen, retriever=retriever, **options)
        self.sweep, self.forget, self.purge = self.memory.sweep, self.memory.forget, self.memory.purge  # as they are

    def turn(
        self, user_id: str, at: datetime, user: str | None, assistant: str | None, facts: list[dict[str, Any]]
    ) -> None:
        """Replay the gold facts, or extract from the exchange."""
        if self.extractor == "gold":
            if facts:
                self.memory.add_facts(facts, user_id, at=at)
            return
        messages = [("user", user or "")] + ([("ai", assistant)] if assistant else [])
        self.memory.add_messages(messages, user_id, at=at)

    def probe(self, query: str, user_id: str, *, now: datetime, as_of: datetime | None = None) -> MemoryBlock:
        """``memory.inject`` at ``now`` (and ``as_of``)."""
        return self.memory.inject(query, user_id, now=now, **({} if as_of is None else {"as_of": as_of}))

    def close(self) -> None:
        """Drop the scenario's collections."""
        drop_store(self.store)


# ---------------------------------------------------------------------------- parsing
def memory_lines(text: str) -> list[str]:
    """The memory lines of an injected block, values and statements JSON-unquoted (``[]`` if none)."""
    return [line for line, _ in block_lines(text)]


def judge_block(
    text: str,
    *,
    empty: bool | None = None,
    expect: Iterable[str] = (),
    forbid: Iterable[str] = (),
    expect_empty: bool = False,
) -> list[str]:
    """Why a probe fails on an injected block's memory lines (``[]``: it passes); ``empty``: ``MemoryBlock.empty``."""
    lines = memory_lines(text)
    if not lines and text and _OPEN not in text and empty is False:
        lines = [text]  # a block in some other layout: judge it whole
    haystack = "\n".join(lines).casefold()
    is_empty = (not lines) if empty is None else bool(empty)
    reasons = [f"expected {s!r}, not injected" for s in expect if s.casefold() not in haystack]
    reasons += [f"forbidden {s!r} was injected" for s in forbid if s and s.casefold() in haystack]
    if expect_empty and not is_empty:
        reasons.append(f"expected nothing injected, got {len(lines)} memory line(s)")
    return reasons


# ---------------------------------------------------------------------------- running
def replay_probes(
    scenario: Scenario, engine: ScenarioEngine, *, stop_at: int | None = None
) -> list[tuple[int, dict[str, Any], Any, str | None]]:
    """Replay steps; returns ``(index, step, block or None, error)`` for each probe."""
    clock: datetime | None = None
    out: list[tuple[int, dict[str, Any], Any, str | None]] = []
    error: str | None = None
    for i, step in enumerate(scenario.steps):
        if stop_at is not None and i > stop_at:
            break
        at = step["at"] or ((clock + _TICK) if clock is not None else utcnow())
        clock = at if clock is None else max(clock, at)
        kind = step["type"]
        try:
            if error is not None:  # an earlier step failed: the probes after it fail with its error
                pass
            elif kind == "turn":
                engine.turn(step["user_id"], at, step.get("user"), step.get("assistant"), step["facts"])
            elif kind == "probe":
                out.append((i, step, engine.probe(step["query"], step["user_id"], now=at, as_of=step["as_of"]), None))
            elif kind == "sweep":
                engine.sweep(now=at)
            elif kind == "forget":
                target = {k: step[k] for k in ("query", "entity", "attribute") if step.get(k) is not None}
                engine.forget(step["user_id"], now=at, **target)
            else:
                engine.purge(step["user_id"])
        except Exception as e:
            error = f"engine error at step {i} ({kind}): {type(e).__name__}: {e}"
        if error is not None and kind == "probe":
            out.append((i, step, None, error))
    return out


def _verdict(scenario: Scenario, i: int, step: dict[str, Any], block: Any, error: str | None) -> ProbeResult:
    if block is None:
        text, reasons = "", [error or "no block"]
    else:
        text = block.text
        reasons = judge_block(
            text, empty=block.empty, expect=step["expect"], forbid=step["forbid"], expect_empty=step["expect_empty"]
        )
    return ProbeResult(scenario.id, i, scenario.category, not reasons, text, reasons, step["query"], step["user_id"])


def run_scenarios(
    path_or_lines: str | os.PathLike[str] | Iterable[Any],
    *,
    extractor: Extractor = "gold",
    engine: EngineName = "ours",
    embeddings: Any | None = None,
    retriever: dict[str, Any] | None = None,
    cue_model: Any | None = None,
    llm: Any | None = None,
    update: Any | None = None,
) -> ScenarioReport:
    """Replay every scenario (a path, JSONL text, lines or dicts) in a fresh store and judge its probes.

    ``retriever``, ``cue_model`` and ``update`` apply to ``"ours"``; an engine error fails the remaining probes.
    """
    scenarios = load_scenarios(path_or_lines)
    report = ScenarioReport(engine=engine, extractor=extractor)
    ours = {"retriever": retriever, "cue_model": cue_model, "update": update}
    for scenario in scenarios:
        eng = make_engine(engine, extractor=extractor, embeddings=embeddings, llm=llm, **ours)
        try:
            for i, step, block, error in replay_probes(scenario, eng):
                report.probes.append(_verdict(scenario, i, step, block, error))
                if error is not None and f"{scenario.id}: {error}" not in report.errors:
                    report.errors.append(f"{scenario.id}: {error}")
        finally:
            eng.close()
    return report


def make_engine(
    name: str, *, extractor: str = "gold", embeddings: Embeddings | None = None, llm: Any = None, **ours: Any
) -> ScenarioEngine:
    """A fresh engine (fresh store) for one scenario: ``"ours"`` (``ours``: its settings) or ``"naive"``."""
    if extractor not in ("gold", "rule", "llm"):
        msg = f"extractor must be 'gold', 'rule' or 'llm', got {extractor!r}."
        raise ValueError(msg)
    if name not in ("ours", "naive"):
        msg = f"engine must be 'ours' or 'naive', got {name!r}."
        raise ValueError(msg)
    if name == "naive":
        return NaiveEngine(extractor=extractor, embeddings=embeddings, llm=llm)
    return LifecycleEngine(extractor=extractor, embeddings=embeddings, llm=llm, **ours)


def llm_extractor(model: Any) -> Any:
    """``create_extractor(model)`` memoised per turn: both engines of a comparison store the same facts."""
    from langchain_core.messages import BaseMessage

    from langchain_lifecycle_memory.write.extraction import WANTS_SLOTS, create_extractor

    inner = create_extractor(model)
    memo: dict[Any, Any] = {}

    def key(value: Any) -> Any:
        messages = value.get("messages", []) if isinstance(value, dict) else value
        texts = tuple(m.text if isinstance(m, BaseMessage) else str(m) for m in messages)
        return texts, str(value.get("now") if isinstance(value, dict) else None)

    def run(value: Any, config: Any = None) -> Any:
        k = key(value)
        if k not in memo:
            memo[k] = inner.invoke(value, config)
        return memo[k]

    return RunnableLambda(run, name="llm_extract_memories").with_config(metadata={WANTS_SLOTS: True})
