"""The scenario runner: format, judging, engines (ours vs naive), CLI contract, evaluators."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langchain_lifecycle_memory.eval import (
    ScenarioFormatError,
    empty_evaluator,
    expect_evaluator,
    forbid_evaluator,
    judge_block,
    load_scenarios,
    probe_evaluator,
    run_scenarios,
    scenario_examples,
    scenario_target,
)
from langchain_lifecycle_memory.eval.__main__ import main
from langchain_lifecycle_memory.read.injection import format_memories


def _fact(attribute: str, value: str, content: str, kind: str = "preference", **extra: object) -> dict:
    return {
        "entity": "user",
        "attribute": attribute,
        "value": value,
        "content": content,
        "kind": kind,
        "confidence": 0.9,
        **extra,
    }


def _turn(at: str, *facts: dict, user_id: str | None = None) -> dict:
    step = {"type": "turn", "at": at, "user": "…", "assistant": "ok", "facts": list(facts)}
    if user_id:
        step["user_id"] = user_id
    return step


def _probe(query: str, at: str | None = None, **judge: object) -> dict:
    step: dict = {"type": "probe", "query": query, **judge}
    if at:
        step["at"] = at
    return step


EDITOR = {
    "id": "editor",
    "category": "conflict",
    "lang": "en",
    "user_id": "u1",
    "steps": [
        _turn("2024-01-01T10:00:00Z", _fact("editor", "Vim", "The user likes using the Vim editor.")),
        _turn("2024-03-01T10:00:00Z", _fact("editor", "VS Code", "The user now uses the VS Code editor.")),
        _probe("What editor does the user like?", "2024-03-02T10:00:00Z", expect=["VS Code"], forbid=["Vim"]),
        _probe("What editor did I use in January?", as_of="2024-01-15T00:00:00Z", expect=["Vim"]),
        _probe("What's the weather like tomorrow?", expect_empty=True),
        _probe("Which editor do I use?", expect=["Emacs"]),  # never stated: must fail
    ],
}
LIFECYCLE = {
    "id": "lifecycle",
    "category": "ttl",
    "user_id": "u2",
    "steps": [
        _turn("2024-05-01T09:00:00Z", _fact("lunch", "ramen", "This week the user wants ramen for lunch.", ttl_days=7)),
        _turn("2024-05-01T09:01:00Z", _fact("pet_name", "Mango", "The user's dog is called Mango.", "profile")),
        _turn("2024-05-01T09:02:00Z", _fact("city", "Lisbon", "The user lives in Lisbon.", "profile")),
        _turn(
            "2024-05-01T09:03:00Z",
            _fact("pet_name", "Biscuit", "The user's dog is called Biscuit.", "profile"),
            user_id="u3",
        ),
        _probe("What should I eat for lunch?", "2024-05-02T12:00:00Z", expect=["ramen"]),
        {"type": "sweep", "at": "2024-06-01T00:00:00Z"},
        _probe("What should I eat for lunch?", forbid=["ramen"]),
        {"type": "forget", "at": "2024-06-02T00:00:00Z", "entity": "user", "attribute": "pet_name"},
        _probe("What is my dog called?", forbid=["Mango"]),
        _probe("What is my dog called?", user_id="u3", expect=["Biscuit"], forbid=["Mango"]),
        {"type": "purge", "user_id": "u2"},
        _probe("Which city do I live in?", expect_empty=True),
        _probe("What is my dog called?", user_id="u3", expect=["Biscuit"]),
    ],
}


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scen") / "tiny.jsonl"
    path.write_text("\n".join(json.dumps(s) for s in (EDITOR, LIFECYCLE)) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def ours(scenario_file: Path):
    return run_scenarios(scenario_file, extractor="gold", engine="ours")


def test_ours_passes_every_possible_probe_and_fails_the_impossible_one(ours) -> None:
    failed = [(p.scenario, p.step) for p in ours.failures()]
    assert failed == [("editor", 5)], [(p.scenario, p.step, p.reasons) for p in ours.failures()]
    impossible = ours.failures()[0]
    assert impossible.reasons == ["expected 'Emacs', not injected"]
    assert ours.summary["passed"] == 9 and ours.summary["failed"] == 1
    assert ours.summary["by_category"] == {"conflict": {"passed": 3, "failed": 1}, "ttl": {"passed": 6, "failed": 0}}
    assert ours.errors == []


def test_ours_injects_only_the_latest_editor_and_the_old_one_as_of_january(ours) -> None:
    latest, january = ours.probes[0], ours.probes[1]
    assert "VS Code" in latest.injected and "Vim" not in latest.injected
    assert "Vim" in january.injected


def test_naive_baseline_keeps_both_editors_and_never_forgets(scenario_file: Path) -> None:
    naive = run_scenarios(scenario_file, extractor="gold", engine="naive")
    by_step = {(p.scenario, p.step): p for p in naive.probes}
    assert "forbidden 'Vim' was injected" in by_step[("editor", 2)].reasons  # append-only: conflict stays
    assert not by_step[("lifecycle", 8)].passed  # forget is a no-op: Mango still injected
    assert by_step[("lifecycle", 11)].passed  # purge deletes the namespace
    assert not by_step[("editor", 5)].passed  # the impossible probe fails for any engine


def test_judge_reads_memory_lines_not_the_block_instructions() -> None:
    block = format_memories(
        [{"id": "1", "content": 'He said "hi" to Mango', "valid_from": "2024-01-01T00:00:00Z"}], lang="en"
    )
    assert "memory" in block.text.casefold()
    assert judge_block(block.text, empty=block.empty, expect=["memory"]) == ["expected 'memory', not injected"]
    assert judge_block(block.text, empty=block.empty, expect=['"hi" to mango', "2024-01-01"]) == []
    assert judge_block(block.text, empty=block.empty, expect_empty=True) == [
        "expected nothing injected, got 1 memory line(s)"
    ]
    nothing = format_memories([], lang="en")
    assert judge_block(nothing.text, empty=nothing.empty, expect_empty=True, forbid=["know"]) == []


def test_cli_json_has_exactly_the_contract_shape_and_exits_0_with_failures(scenario_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    assert main(["scenarios", str(scenario_file), "--extractor", "gold", "--json", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert set(data["summary"]) == {"passed", "failed", "by_category"}
    assert data["summary"]["failed"] == 1 and data["summary"]["passed"] == 9
    assert all(set(c) == {"passed", "failed"} for c in data["summary"]["by_category"].values())
    assert len(data["probes"]) == 10
    for probe in data["probes"]:
        assert set(probe) == {"scenario", "step", "category", "passed", "injected", "reasons"}
        assert isinstance(probe["step"], int) and isinstance(probe["reasons"], list)
    assert set(data["baselines"]["naive"]) == {"passed", "failed", "by_category"}
    assert data["baselines"]["naive"]["failed"] > data["summary"]["failed"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "x", "user_id": "u", "steps": [', "line 2: invalid JSON"),
        ('{"id": "x", "user_id": "u", "steps": [{"type": "dance"}]}', "unknown type 'dance'"),
        ('{"id": "x", "user_id": "u", "steps": [{"type": "probe"}]}', "needs a non-empty `query`"),
        ('{"id": "x", "steps": [{"type": "probe", "query": "q"}]}', "no user_id"),
        ('{"id": "x", "user_id": "u"}', "missing `steps`"),
        ('{"id": "x", "user_id": "u", "steps": [{"type": "forget"}]}', "needs `query`"),
    ],
)
def test_malformed_file_exits_1_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(EDITOR) + "\n" + line + "\n", encoding="utf-8")
    assert main(["scenarios", str(path), "--engine", "ours"]) == 1
    err = capsys.readouterr().err
    assert "line 2" in err and message in err
    with pytest.raises(ScenarioFormatError, match="line 2"):
        load_scenarios(path)


def test_unknown_categories_and_missing_optional_fields_are_fine() -> None:
    line = json.dumps(
        {
            "user_id": "u",
            "steps": [
                {"type": "turn", "user": "I like tea", "facts": [{"content": "The user likes tea."}]},
                {"type": "probe", "query": "Do I like tea?", "expect": ["tea"]},
            ],
        }
    )
    report = run_scenarios([line], engine="ours")
    assert [(p.scenario, p.category, p.passed) for p in report.probes] == [("line1", "uncategorized", True)]


def test_evaluators_score_outputs_against_reference() -> None:
    block = format_memories([{"id": "1", "content": "The user uses VS Code.", "valid_from": "2024-03-01"}])
    outputs = {"injected": block.text, "empty": block.empty}
    assert expect_evaluator(outputs, {"expect": ["vs code"]}) == {"key": "expect", "score": 1, "comment": ""}
    assert expect_evaluator(outputs, {"expect": ["Vim"]})["score"] == 0
    assert forbid_evaluator(outputs, {"forbid": ["Vim"]})["score"] == 1
    assert forbid_evaluator(outputs, {"forbid": ["VS Code"]})["score"] == 0
    assert empty_evaluator(outputs, {"expect_empty": True})["score"] == 0
    assert empty_evaluator({"injected": format_memories([]).text, "empty": True}, {"expect_empty": True})["score"] == 1
    verdict = probe_evaluator(outputs, {"expect": ["VS Code"], "forbid": ["Vim"], "expect_empty": False})
    assert verdict["key"] == "probe_passed" and verdict["score"] == 1


def test_langsmith_examples_and_target_replay_up_to_the_probe(scenario_file: Path) -> None:
    examples = scenario_examples(scenario_file)
    assert len(examples) == 10
    first = examples[0]
    assert first["inputs"]["step"] == 2 and first["outputs"]["forbid"] == ["Vim"]
    outputs = scenario_target()(first["inputs"])
    assert probe_evaluator(outputs, first["outputs"])["score"] == 1


def test_public_scenarios_pass_with_gold_extraction(shared_dir: Path) -> None:
    report = run_scenarios(shared_dir / "scenarios" / "public.jsonl", extractor="gold", engine="ours")
    assert report.errors == []
    # Not a 100 % gate: the vocabulary no longer holds topic phrases that restate one public probe.
    assert report.summary["passed"] >= 0.9 * len(report.probes), report.failures()


def test_our_own_extra_scenarios_pass_with_gold_extraction() -> None:
    """55 probes written apart from the public file (paraphrases, mixed languages, relatives, TTL)."""
    extra = Path(__file__).resolve().parents[1] / "scenarios" / "extra.jsonl"
    report = run_scenarios(extra, extractor="gold", engine="ours")
    assert report.errors == []
    assert report.summary["passed"] >= 0.9 * 55, report.failures()
