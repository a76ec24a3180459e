"""Head to head: this package against LangMem, mem0, no memory and the whole conversation, on one model.

    .venv-anchors/bin/python benchmarks/head_to_head.py FILE.jsonl --base-url URL \
        [--systems ours,langmem,mem0,none,full] [--shim] [--json OUT]

(``.venv-anchors``: ``python3 -m venv .venv-anchors && .venv-anchors/bin/pip install -e '.[anchors]'``.)
One scenario a line: ``{"id", "lang", "turns": [{"at", "user"}], "queries": [{"at", "q", "expect", "forbid"}]}``.
Each system gets a fresh user per scenario and the turns one by one, as its docs use it (see each class).
Memory level: the top 3 memories shown contain, for every ``expect`` entry, one of its alternatives (case- and
whitespace-insensitive substring) and no ``forbid`` string. Answer level: the same model (temperature 0)
answers with those memories in the system's own prompt; judged on ``expect`` only. Systems other than
``ours`` get a "Today is <date>." line, since only our block is dated. ``langmem+shim`` (or ``--shim``): LangMem
over ``ToolCallShim``, which turns tool calls the small model writes as JSON text back into tool calls.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")  # mem0: no telemetry, no remote notice config

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatResult

TOP_K = 3
SYSTEMS = ("ours", "langmem", "mem0", "none", "full")
ModelFactory = Callable[[], BaseChatModel]


# ------------------------------------------------------------------ judging
def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text).casefold()


def missing_expects(text: str, expect: list[list[str]]) -> list[list[str]]:
    """The ``expect`` entries none of whose alternatives appears in ``text``."""
    have = _norm(text)
    return [alts for alts in expect if not any(_norm(a) in have for a in alts)]


def forbidden_found(text: str, forbid: list[str]) -> list[str]:
    """The ``forbid`` strings that appear in ``text``."""
    have = _norm(text)
    return [f for f in forbid if _norm(f) in have]


# ------------------------------------------------------------------ counting and the shim
class CallCounter(BaseCallbackHandler):
    """Counts chat model starts (every request a LangChain model sends)."""

    def __init__(self) -> None:
        self.calls = 0

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.calls += 1


def counted(make_model: ModelFactory, counter: CallCounter) -> BaseChatModel:
    model = make_model()
    model.callbacks = [counter]
    return model


def json_values(text: str) -> list[Any]:
    """Every JSON object or array embedded in ``text``, left to right."""
    decoder, values, i = json.JSONDecoder(), [], 0
    while i < len(text):
        if text[i] in "{[":
            try:
                value, i = decoder.raw_decode(text, i)
                values.append(value)
                continue
            except ValueError:
                pass
        i += 1
    return values


def tool_calls_in_text(text: str, names: set[str]) -> list[dict[str, Any]]:
    """Tool calls written as ``{"name": ..., "arguments": {...}}`` text (one, several, or a list)."""
    calls = []
    for value in json_values(text):
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and item.get("name") in names:
                args = item.get("arguments", item.get("parameters", {}))
                args = (json_values(args) or [None])[0] if isinstance(args, str) else args
                if isinstance(args, dict):
                    calls.append({"name": item["name"], "args": args, "id": f"call_{uuid.uuid4().hex[:12]}"})
    return calls


def shim_result(result: ChatResult, tools: Any) -> ChatResult:
    """Turn tool calls the model wrote as text into real ``tool_calls``."""
    names = {t.get("function", t).get("name") for t in tools or [] if isinstance(t, dict)}
    for gen in result.generations:
        msg = gen.message
        if names and isinstance(msg, AIMessage) and not msg.tool_calls and isinstance(msg.content, str):
            calls = tool_calls_in_text(msg.content, names)
            if calls:
                gen.message = AIMessage(content="", tool_calls=calls, response_metadata=msg.response_metadata)
    return result


def shim_class() -> type:
    from langchain_openai import ChatOpenAI

    class ToolCallShim(ChatOpenAI):
        """``ChatOpenAI`` that recovers tool calls a small model wrote as JSON text."""

        def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any):
            return shim_result(super()._generate(messages, stop=stop, run_manager=run_manager, **kw), kw.get("tools"))

    return ToolCallShim


# ------------------------------------------------------------------ the systems
@dataclass
class Context:
    make_model: ModelFactory
    workdir: Path
    base_url: str = ""
    model_name: str = "local"
    make_shim_model: ModelFactory | None = None
    _embedder: Any = None

    def embedder(self) -> Any:
        if self._embedder is None:
            from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings

            self._embedder = UniversalSentenceEncoderEmbeddings()
        return self._embedder

    def folder(self, name: str) -> Path:
        path = self.workdir / f"{name.replace('+', '-')}-{uuid.uuid4().hex[:8]}"
        path.mkdir(parents=True)
        return path


def _dated(system_prompt: str, at: str) -> str:
    return f"{system_prompt}\nToday is {at}."


class Ours:
    """``LifecycleMemory(path=<fresh folder>, extractor=<model>)``; the ``inject(k=3)`` block in ``MEMORY_PROMPT``."""

    def __init__(self, ctx: Context, counter: CallCounter, shim: bool = False) -> None:
        from langchain_lifecycle_memory import LifecycleMemory

        self.user = f"u-{uuid.uuid4().hex[:8]}"
        self.memory = LifecycleMemory(path=ctx.folder("ours"), extractor=counted(ctx.make_model, counter))

    def add(self, text: str, at: str) -> list[str]:
        result = self.memory.add_messages([("user", text)], user_id=self.user, at=at)
        return [f"recovered: {e}" for e in result.errors]

    def recall(self, q: str, at: str) -> list[str]:
        return [self.memory.inject(q, user_id=self.user, now=at, k=TOP_K).text]

    def prompt(self, q: str, memories: list[str], at: str) -> list[BaseMessage]:
        from langchain_lifecycle_memory.read.injection import MEMORY_PROMPT

        return MEMORY_PROMPT.invoke({"memories": "\n".join(memories), "messages": [HumanMessage(q)]}).to_messages()


class LangMem:
    """``create_memory_store_manager`` over ``InMemoryStore`` with our embedder; its docstring example's prompt."""

    def __init__(self, ctx: Context, counter: CallCounter, shim: bool = False) -> None:
        from langgraph.store.memory import InMemoryStore
        from langmem import create_memory_store_manager

        make = ctx.make_shim_model if shim and ctx.make_shim_model else ctx.make_model
        self.store = InMemoryStore(index={"dims": 512, "embed": ctx.embedder()})
        namespace = ("memories", "{langgraph_user_id}")
        self.manager = create_memory_store_manager(counted(make, counter), namespace=namespace, store=self.store)
        self.config = {"configurable": {"langgraph_user_id": f"u-{uuid.uuid4().hex[:8]}"}}

    def add(self, text: str, at: str) -> list[str]:
        self.manager.invoke({"messages": [{"role": "user", "content": text}]}, config=self.config)
        return []

    def recall(self, q: str, at: str) -> list[str]:
        items = self.manager.search(query=q, limit=TOP_K, config=self.config)
        return [_langmem_text(item.value) for item in items]

    def prompt(self, q: str, memories: list[str], at: str) -> list[BaseMessage]:
        listed = "\n".join(memories)
        system = f"You are a helpful assistant.\n\n## Memories from the user:\n<memories>\n{listed}\n</memories>"
        return [SystemMessage(_dated(system, at)), HumanMessage(q)]


def _langmem_text(value: Any) -> str:
    content = value.get("content", value) if isinstance(value, dict) else value
    content = content.model_dump() if hasattr(content, "model_dump") else content  # the sync path stores models
    if isinstance(content, dict) and set(content) == {"content"}:
        return str(content["content"])
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, default=str)


class Mem0:
    """``Memory.from_config``: OpenAI-compatible LLM, Chroma, ``langchain`` embedder (ours); the README's prompt."""

    def __init__(self, ctx: Context, counter: CallCounter, shim: bool = False) -> None:
        from mem0 import Memory

        folder = ctx.folder("mem0")
        llm = {"model": ctx.model_name, "api_key": "local", "openai_base_url": ctx.base_url, "temperature": 0}
        self.memory = Memory.from_config(
            {
                "llm": {"provider": "openai", "config": llm},
                "embedder": {"provider": "langchain", "config": {"model": ctx.embedder()}},
                "vector_store": {"provider": "chroma", "config": {"collection_name": "mem0", "path": str(folder)}},
                "history_db_path": str(folder / "history.db"),
            }
        )
        self.user = f"u-{uuid.uuid4().hex[:8]}"
        generate = self.memory.llm.generate_response  # mem0 calls the OpenAI SDK itself: count at its LLM wrapper

        def generate_counted(*args: Any, **kwargs: Any) -> Any:
            counter.calls += 1
            return generate(*args, **kwargs)

        self.memory.llm.generate_response = generate_counted

    def add(self, text: str, at: str) -> list[str]:
        self.memory.add([{"role": "user", "content": text}], user_id=self.user)
        return []

    def recall(self, q: str, at: str) -> list[str]:
        found = self.memory.search(q, filters={"user_id": self.user}, top_k=TOP_K)
        return [entry["memory"] for entry in found["results"]]

    def prompt(self, q: str, memories: list[str], at: str) -> list[BaseMessage]:
        listed = "\n".join(f"- {m}" for m in memories)
        system = f"You are a helpful AI. Answer the question based on query and memories.\nUser Memories:\n{listed}"
        return [SystemMessage(_dated(system, at)), HumanMessage(q)]


class Transcript:
    """``none`` (``keep=False``): no memory at all; ``full``: every turn, dated, in the system prompt."""

    def __init__(self, ctx: Context, counter: CallCounter, shim: bool = False, keep: bool = False) -> None:
        self.keep, self.turns = keep, []

    def add(self, text: str, at: str) -> list[str]:
        self.turns += [f"[{at}] user: {text}"] if self.keep else []
        return []

    def recall(self, q: str, at: str) -> list[str]:
        return list(self.turns)

    def prompt(self, q: str, memories: list[str], at: str) -> list[BaseMessage]:
        convo = "\n".join(memories)
        system = f"You are a helpful assistant. Our conversation so far:\n<conversation>\n{convo}\n</conversation>"
        return [SystemMessage(_dated(system if self.keep else "You are a helpful assistant.", at)), HumanMessage(q)]


BUILDERS: dict[str, Callable[..., Any]] = {
    **{"ours": Ours, "langmem": LangMem, "mem0": Mem0, "none": Transcript},
    "full": lambda *args, **kw: Transcript(*args, **kw, keep=True),
}


# ------------------------------------------------------------------ orchestration
def _fail(exc: BaseException) -> str:
    traceback.print_exc(file=sys.stderr)
    return f"{type(exc).__name__}: {exc}"[:500]


def blank_row(name: str, scenario_id: str, query: dict[str, Any]) -> dict[str, Any]:
    expect = query.get("expect", [])
    row = {"scenario": scenario_id, "system": name, "q": query["q"], "memories": [], "answer": None}
    row.update(memory_pass=False, answer_pass=False, missing=expect, missing_in_answer=expect, forbidden=[])
    row.update(copied_line=False)
    return {**row, "error": None}


def recall(system: Any, row: dict[str, Any], query: dict[str, Any]) -> list[BaseMessage] | None:
    """Judge the memories ``system`` shows for ``query``; return the prompt that answers it."""
    try:
        row["memories"] = system.recall(query["q"], query["at"])
        shown = "\n".join(row["memories"])
        row["missing"] = missing_expects(shown, query.get("expect", []))
        row["forbidden"] = forbidden_found(shown, query.get("forbid", []))
        row["memory_pass"] = not row["missing"] and not row["forbidden"]
        return system.prompt(query["q"], row["memories"], query["at"])
    except Exception as exc:  # a failed query, not a stopped run
        row["error"] = _fail(exc)
        return None


def answer(row: dict[str, Any], messages: list[BaseMessage], query: dict[str, Any], model: BaseChatModel) -> None:
    try:
        row["answer"] = str(model.invoke(messages).content)
        row["missing_in_answer"] = missing_expects(row["answer"], query.get("expect", []))
        row["answer_pass"] = not row["missing_in_answer"]
        row["copied_line"] = copies_a_line(row["answer"], row["memories"])
    except Exception as exc:
        row["error"] = _fail(exc)


def copies_a_line(answer: str, memories: list[str]) -> bool:
    """Whether the answer repeats a whole line of the memories shown (a small model echoing its prompt)."""
    lines = (line.strip().removeprefix("- ").strip() for text in memories for line in text.splitlines())
    return any(len(line) >= 12 and line in answer for line in lines)


Pending = tuple[dict[str, Any], "list[BaseMessage] | None", dict[str, Any]]


def remember(name: str, scenario: dict[str, Any], ctx: Context, counter: CallCounter, notes: dict) -> list[Pending]:
    """A fresh instance of ``name`` gets the turns one by one; then each query's memories are judged."""
    rows = [blank_row(name, scenario["id"], q) for q in scenario["queries"]]
    base, _, variant = name.partition("+")
    try:
        system = BUILDERS[base](ctx, counter, shim=variant == "shim")
    except Exception as exc:  # not installed, bad config: every query of the scenario fails
        error = _fail(exc)
        return [({**row, "error": error}, None, q) for row, q in zip(rows, scenario["queries"])]
    for turn in scenario["turns"]:
        try:
            notes["warnings"] += [f"{scenario['id']}: {w}" for w in system.add(turn["user"], turn["at"])]
        except Exception as exc:
            notes["errors"].append(f"{scenario['id']} add: {_fail(exc)}")
    return [(row, recall(system, row, q), q) for row, q in zip(rows, scenario["queries"])]


def run_system(name: str, scenarios: list[dict[str, Any]], ctx: Context) -> tuple[dict[str, Any], list[dict]]:
    """All scenarios' turns and recalls first, then all answers.

    The answers come last so that a system's long prompt (mem0's is ~8k tokens) stays in the
    local server's prompt cache from one write to the next instead of being evaluated again.
    """
    memory_calls, answer_calls, notes = CallCounter(), CallCounter(), {"errors": [], "warnings": []}
    started = time.perf_counter()
    pending: list[Pending] = []
    for scenario in scenarios:
        print(f"[{name}] {scenario['id']} ...", file=sys.stderr, flush=True)
        pending += remember(name, scenario, ctx, memory_calls, notes)
    model = counted(ctx.make_model, answer_calls)
    for row, messages, query in pending:
        if messages is not None:
            answer(row, messages, query, model)
    rows = [row for row, _, _ in pending]
    notes["errors"] += [f"{r['scenario']} {r['q']!r}: {r['error']}" for r in rows if r["error"]]
    return {
        "memory": {"passed": sum(r["memory_pass"] for r in rows), "total": len(rows)},
        "answer": {"passed": sum(r["answer_pass"] for r in rows), "total": len(rows)},
        "answers_copying_a_memory_line": sum(bool(r.get("copied_line")) for r in rows),
        **notes,
        "llm_calls": memory_calls.calls + answer_calls.calls,
        "llm_calls_memory": memory_calls.calls,
        "llm_calls_answer": answer_calls.calls,
        "seconds": round(time.perf_counter() - started, 2),
    }, rows


def run(scenarios: list[dict[str, Any]], systems: list[str], ctx: Context) -> dict[str, Any]:
    """Every system over every scenario: ``{"systems": {name: totals}, "queries": [rows]}``."""
    report: dict[str, Any] = {"systems": {}, "queries": []}
    for name in systems:
        report["systems"][name], rows = run_system(name, scenarios, ctx)
        report["queries"] += rows
    return report


# ------------------------------------------------------------------ command line
def load_scenarios(path: str | Path) -> list[dict[str, Any]]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for dist in ("langchain-lifecycle-memory", "langmem", "mem0ai", "langchain-core", "langgraph", "chromadb"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def table(report: dict[str, Any]) -> str:
    head = f"{'system':<14} {'memory':>9} {'answer':>9} {'errors':>6} {'LLM calls':>9} {'seconds':>8}"
    lines = [head, "-" * len(head)]
    for name, s in report["systems"].items():
        mem, ans = s["memory"], s["answer"]
        lines.append(
            f"{name:<14} {mem['passed']:>4}/{mem['total']:<4} {ans['passed']:>4}/{ans['total']:<4} "
            f"{len(s['errors']):>6} {s['llm_calls']:>9} {s['seconds']:>8.1f}"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="scenarios, one JSON object a line")
    parser.add_argument("--base-url", required=True, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8765/v1")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated; add +shim to an anchor")
    parser.add_argument("--shim", action="store_true", help="also run langmem+shim")
    parser.add_argument("--json", dest="json_out", help="write the full report here")
    parser.add_argument("--model", default="local", help="model name sent to the endpoint")
    parser.add_argument("--ids", help="comma-separated scenario ids: run only these (default: every scenario)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    from langchain_openai import ChatOpenAI

    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    if args.shim and "langmem" in systems and "langmem+shim" not in systems:
        systems.insert(systems.index("langmem") + 1, "langmem+shim")
    options = {"base_url": args.base_url, "api_key": "local", "model": args.model, "temperature": 0}
    with tempfile.TemporaryDirectory(prefix="head-to-head-", ignore_cleanup_errors=True) as tmp:
        ctx = Context(
            make_model=lambda: ChatOpenAI(**options),
            make_shim_model=lambda: shim_class()(**options),
            workdir=Path(tmp),
            base_url=args.base_url,
            model_name=args.model,
        )
        os.environ.setdefault("MEM0_DIR", str(Path(tmp) / "mem0-home"))
        scenarios = load_scenarios(args.file)
        if args.ids:
            wanted = {i.strip() for i in args.ids.split(",") if i.strip()}
            if missing := wanted - {s["id"] for s in scenarios}:
                raise SystemExit(f"--ids: no scenario {sorted(missing)} in {args.file}")
            scenarios = [s for s in scenarios if s["id"] in wanted]
        report = run(scenarios, systems, ctx)
    machine = {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()}
    stamp = {"model": args.model, "base_url": args.base_url, "versions": versions(), "machine": machine}
    command = f"python benchmarks/head_to_head.py {args.file} --base-url URL --systems {args.systems}"
    command += f" --ids {args.ids}" if args.ids else ""
    stamp |= {"command": command, "scenarios": len(scenarios)}
    report = {**stamp, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), **report}
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    print(table(report))
    return report


if __name__ == "__main__":
    main()
