"""benchmarks/head_to_head.py offline: judging, the tool-call shim, and one run of ours/none/full on a fake model."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "head_to_head.py"
_spec = importlib.util.spec_from_file_location("head_to_head", SCRIPT)
assert _spec is not None and _spec.loader is not None
h2h = importlib.util.module_from_spec(_spec)
sys.modules["head_to_head"] = h2h  # dataclasses look their module up
_spec.loader.exec_module(h2h)

SCENARIO = {
    "id": "nurse",
    "lang": "en",
    "turns": [{"at": "2024-03-01", "user": "I work as a nurse in Munich."}],
    "queries": [
        {"at": "2024-03-05", "q": "What is my job?", "expect": [["NURSE", "doctor"]], "forbid": ["Berlin"]},
        {"at": "2024-03-05", "q": "Where do I work?", "expect": [["Mun ich"], ["hamburg"]], "forbid": []},
    ],
}
FACT = {"entity": "user", "attribute": "job", "value": "nurse", "content": "The user works as a nurse in Munich."}
ANSWERS = {"What is my job?": "You are a  Nurse.", "Where do I work?": "In Munich."}


class RoutingChat(BaseChatModel):
    """Answers a known question with its scripted answer; anything else is an extraction request."""

    @property
    def _llm_type(self) -> str:
        return "routing-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = ANSWERS.get(messages[-1].text) or json.dumps({"facts": [FACT]})
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])


@pytest.mark.parametrize(
    ("text", "expect", "missing"),
    [
        ("You are a  Nurse.", [["NURSE", "doctor"]], []),
        ("I use vscode", [["VS  Code"]], []),
        ("我现在用 VS Code", [["vscode"], ["Vim", "花 生"]], [["Vim", "花 生"]]),
        ("", [["x"]], [["x"]]),
        ("anything", [], []),
    ],
)
def test_expect_needs_one_alternative_of_every_entry(text: str, expect: list, missing: list) -> None:
    assert h2h.missing_expects(text, expect) == missing


def test_forbid_is_case_and_whitespace_insensitive() -> None:
    assert h2h.forbidden_found("Lives in BER LIN, used vim", ["berlin", "Vim", "Oslo"]) == ["berlin", "Vim"]


def test_shim_turns_tool_calls_written_as_text_into_tool_calls() -> None:
    text = '```json\n{"name": "Memory", "arguments": {"content": "lives in Munich"}}\n```\n[{"name": "Other"}]'
    result = ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])
    tools = [{"type": "function", "function": {"name": "Memory"}}]

    calls = h2h.shim_result(result, tools).generations[0].message.tool_calls

    assert [(c["name"], c["args"]) for c in calls] == [("Memory", {"content": "lives in Munich"})]
    untouched = ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])
    assert h2h.shim_result(untouched, None).generations[0].message.content == text


def test_run_ours_none_full_offline(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_text(json.dumps(SCENARIO) + "\n", encoding="utf-8")
    ctx = h2h.Context(make_model=RoutingChat, workdir=tmp_path / "work")

    report = h2h.run(h2h.load_scenarios(tmp_path / "s.jsonl"), ["ours", "none", "full"], ctx)

    json.dumps(report)  # serialisable as is
    systems = report["systems"]
    assert set(systems) == {"ours", "none", "full"}
    for totals in systems.values():
        assert set(totals) >= {"memory", "answer", "errors", "llm_calls", "seconds"}
        assert totals["memory"]["total"] == totals["answer"]["total"] == 2
        assert totals["errors"] == []
    rows = {(r["system"], r["q"]): r for r in report["queries"]}
    assert len(rows) == 6
    for row in rows.values():
        assert set(row) >= {"scenario", "q", "system", "memories", "answer", "memory_pass", "answer_pass"}
        assert set(row) >= {"missing", "forbidden", "error"}
        assert row["scenario"] == "nurse"
    job, where = "What is my job?", "Where do I work?"
    assert rows[("ours", job)]["memory_pass"] and "nurse" in rows[("ours", job)]["memories"][0]
    assert rows[("full", job)]["memory_pass"] and rows[("full", job)]["answer_pass"]
    assert not rows[("none", job)]["memory_pass"] and rows[("none", job)]["answer_pass"]
    assert rows[("full", where)]["missing"] == [["hamburg"]] and not rows[("full", where)]["memory_pass"]
    assert systems["none"]["llm_calls"] == 2  # the answers only
    assert systems["ours"]["llm_calls_memory"] >= 1 and systems["ours"]["llm_calls_answer"] == 2


def test_a_failing_system_is_recorded_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(h2h.Transcript):
        def add(self, text: str, at: str) -> list[str]:
            raise RuntimeError("store down")

        def recall(self, q: str, at: str) -> list[str]:
            raise RuntimeError("still down")

    monkeypatch.setitem(h2h.BUILDERS, "broken", Broken)
    ctx = h2h.Context(make_model=RoutingChat, workdir=tmp_path)

    report = h2h.run([SCENARIO], ["broken", "full"], ctx)

    broken = report["systems"]["broken"]
    assert broken["memory"] == {"passed": 0, "total": 2} and broken["answer"]["passed"] == 0
    assert any("store down" in e for e in broken["errors"]) and any("still down" in e for e in broken["errors"])
    assert report["systems"]["full"]["memory"]["passed"] == 1


def test_an_answer_that_repeats_a_memory_line_is_counted() -> None:
    block = 'Header\n<memories>\n- [2025-04-12 · conf 0.90] "I moved to Xiamen"\n</memories>'
    assert h2h.copies_a_line('[2025-04-12 · conf 0.90] "I moved to Xiamen"', [block])
    assert not h2h.copies_a_line("You live in Xiamen.", [block])
