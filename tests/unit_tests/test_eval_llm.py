"""The scenario runner with ``--extractor llm``: both engines see the same extracted facts, one model call a turn."""

from __future__ import annotations

import json
from typing import Any

import pytest

from langchain_lifecycle_memory.eval.__main__ import main
from langchain_lifecycle_memory.eval.scenarios import llm_extractor, run_scenarios
from tests.scripted_chat import ScriptedChatModel


def fact(value: str, content: str) -> str:
    item = {"entity": "user", "attribute": "editor", "value": value, "content": content, "kind": "preference"}
    return json.dumps({"facts": [item]})


SCENARIO = {
    "id": "llm-seed",
    "category": "conflict",
    "user_id": "u1",
    "steps": [
        {"type": "turn", "at": "2024-01-01T10:00:00Z", "user": "I like using the Vim editor"},
        {"type": "turn", "at": "2024-03-01T10:00:00Z", "user": "I've switched to VS Code now"},
        {
            "type": "probe",
            "at": "2024-03-02T09:00:00Z",
            "query": "Which editor?",
            "expect": ["VS Code"],
            "forbid": ["Vim"],
        },
    ],
}


def test_llm_extractor_is_shared_by_both_engines_and_called_once_per_turn() -> None:
    model = ScriptedChatModel(
        replies=[fact("Vim", "The user likes Vim."), fact("VS Code", "The user now uses VS Code.")]
    )
    llm = llm_extractor(model)
    ours = run_scenarios([SCENARIO], extractor="llm", engine="ours", llm=llm)
    naive = run_scenarios([SCENARIO], extractor="llm", engine="naive", llm=llm)
    assert model.calls == 2  # the naive engine reused ours' extraction of each turn
    assert ours.summary["passed"] == 1
    assert len(naive.probes) == 1 and not naive.errors


def test_llm_without_a_model_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="needs llm="):
        run_scenarios([SCENARIO], extractor="llm", engine="ours")


def test_cli_llm_needs_a_base_url(monkeypatch: pytest.MonkeyPatch, tmp_path: Any, capsys: Any) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(SCENARIO) + "\n", encoding="utf-8")
    assert main(["scenarios", str(path), "--extractor", "llm"]) == 2
    assert "--base-url" in capsys.readouterr().err


def test_out_file_keeps_each_scenario_and_resume_skips_what_is_done(tmp_path: Any, capsys: Any) -> None:
    first, second = dict(SCENARIO, id="first"), dict(SCENARIO, id="second")
    for s in (first, second):
        s["steps"] = [dict(s["steps"][0], facts=[json.loads(fact("Vim", "The user likes Vim."))["facts"][0]])]
        s["steps"].append({"type": "probe", "query": "Which editor?", "expect": ["Vim"]})
    path, out = tmp_path / "s.jsonl", tmp_path / "results.jsonl"
    path.write_text(json.dumps(first) + "\n", encoding="utf-8")
    # A run that covered only the first scenario (as if it died before the second).
    assert main(["scenarios", str(path), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["scenario"], r["engine"]) for r in rows] == [("first", "ours"), ("first", "naive")]
    assert rows[0]["summary"]["passed"] == 1 and rows[0]["probes"][0]["query"] == "Which editor?"
    # Reusing the file without --resume is refused rather than mixing two runs.
    assert main(["scenarios", str(path), "--out", str(out)]) == 2
    assert "--resume" in capsys.readouterr().err
    # A line cut mid-write by a crash is ignored; the resumed run reports both scenarios, runs only the second.
    with out.open("a", encoding="utf-8") as f:
        f.write('{"scenario": "second", "eng')
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n", encoding="utf-8")
    report = tmp_path / "report.json"
    assert main(["scenarios", str(path), "--out", str(out), "--resume", "--json", str(report)]) == 0
    assert "first: already in" in capsys.readouterr().err
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["summary"]["passed"] == 2 and len(data["probes"]) == 2
    assert data["baselines"]["naive"]["passed"] + data["baselines"]["naive"]["failed"] == 2
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line.endswith("}")]
    assert [r["scenario"] for r in rows] == ["first", "first", "second", "second"]


def test_resume_needs_out(tmp_path: Any, capsys: Any) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(SCENARIO) + "\n", encoding="utf-8")
    assert main(["scenarios", str(path), "--resume"]) == 2
    assert "--out" in capsys.readouterr().err


def test_call_stats_count_every_model_call_failed_ones_included() -> None:
    from langchain_lifecycle_memory.eval._runlog import CallStats

    stats = CallStats()
    model = ScriptedChatModel(replies=["ok", RuntimeError("server down")], callbacks=[stats])
    model.invoke("hi")
    with pytest.raises(RuntimeError):
        model.invoke("again")
    assert stats.snapshot()["calls"] == 2 and stats.snapshot()["errors"] == 1


def test_reply_cache_file_answers_the_same_prompt_in_a_later_run(tmp_path: Any) -> None:
    from langchain_lifecycle_memory.eval._runlog import ReplyCache

    path = tmp_path / "cache.jsonl"
    first = ScriptedChatModel(default="north-facing balcony: gardening", cache=ReplyCache(path))
    assert first.invoke("cues for: balcony").content == "north-facing balcony: gardening"
    with path.open("a", encoding="utf-8") as f:
        f.write('{"prompt": "cut by a cra')  # a crash mid-write loses only that reply
    cache = ReplyCache(path)
    later = ScriptedChatModel(default="north-facing balcony: gardening", cache=cache)
    assert later.invoke("cues for: balcony").content == "north-facing balcony: gardening"
    assert later.calls == 0 and cache.hits == 1
    later.invoke("cues for: something else")
    assert later.calls == 1 and cache.misses == 1
    assert len(ReplyCache(path)._store) == 2


def test_update_config_reaches_ours_so_a_judge_can_be_measured() -> None:
    from langchain_core.runnables import RunnableLambda

    from langchain_lifecycle_memory.write.update import ConflictVerdict, UpdateConfig

    asked: list[str] = []

    def judge(inputs: dict[str, Any]) -> ConflictVerdict:
        asked.append(inputs["new"])
        return ConflictVerdict(superseded_ids=[c.id for c in inputs["candidates"]])

    free = {"kind": "event", "confidence": 0.9}
    scenario = {
        "id": "judge",
        "category": "conflict",
        "user_id": "u1",
        "steps": [
            {"type": "turn", "at": "2024-01-01T10:00:00Z", "facts": [dict(free, content="The user walks to work.")]},
            {"type": "turn", "at": "2024-02-01T10:00:00Z", "facts": [dict(free, content="The user cycles to work.")]},
            {"type": "probe", "query": "How does the user get to work?", "expect": ["cycles"], "forbid": ["walks"]},
        ],
    }
    report = run_scenarios([scenario], update=UpdateConfig(judge=RunnableLambda(judge)))
    assert asked == ["The user cycles to work."]
    assert report.summary["passed"] == 1, report.failures()
