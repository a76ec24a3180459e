"""The seed demo: both engines replayed on real stores, judged on what they injected."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from langchain_lifecycle_memory.cli._render_demo import demo_view
from langchain_lifecycle_memory.cli.demo import DemoResult, _RoundSpec, judge, memory_lines, run_demo
from langchain_lifecycle_memory.cli.main import app

WIDE = {"COLUMNS": "200"}


def render(result: DemoResult) -> str:
    console = Console(record=True, width=200, file=io.StringIO())
    for part in demo_view(result):
        console.print(part)
    return console.export_text()


@pytest.fixture(scope="module")
def zh() -> DemoResult:
    return run_demo("zh")


@pytest.fixture(scope="module")
def en(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    return run_demo("en", tmp_path_factory.mktemp("demo-en"))


def test_round_3_ours_injects_vs_code_only_naive_injects_both(zh: DemoResult) -> None:
    r3 = zh.rounds[2]
    assert r3.said == "我现在改用 VS Code 了"
    assert any("VS Code" in line for line in r3.ours.lines)
    assert not any("Vim" in line for line in r3.ours.lines)
    assert "Vim" not in r3.ours.block and "VS Code" in r3.ours.block
    assert any("Vim" in line for line in r3.naive.lines) and any("VS Code" in line for line in r3.naive.lines)
    assert r3.ours.archived == ["用户喜欢使用 Vim 编辑器"]
    assert r3.naive.archived == []
    assert (r3.naive.verdict.label, r3.ours.verdict.label) == ("conflict", "hit")


def test_paraphrase_round_naive_misses_ours_hits(zh: DemoResult) -> None:
    r2 = zh.rounds[1]
    assert r2.query == "我适合用什么工具写 Python？"
    assert r2.naive.empty and r2.naive.lines == []
    assert "min_score" in r2.naive.held_back[0][1]  # why it missed: the fixed threshold
    assert r2.ours.lines == ["用户喜欢使用 Vim 编辑器"]
    assert r2.ours.verdict.ok and not r2.naive.verdict.ok


def test_weather_query_injects_nothing_and_history_keeps_vim(zh: DemoResult) -> None:
    weather = zh.rounds[-1]
    assert weather.query == "今天天气怎么样？"
    assert weather.ours.empty and weather.ours.verdict.label == "nothing known"
    assert "不知道" in weather.ours.block
    assert [(r.value, r.status.value) for r in zh.history] == [("Vim", "archived"), ("VS Code", "active")]
    assert zh.history[0].superseded_by == zh.history[1].id


def test_every_cell_is_computed_from_the_injected_block(zh: DemoResult) -> None:
    for rnd in zh.rounds:
        for view in (rnd.naive, rnd.ours):
            assert view.lines == memory_lines(view.block)
            assert view.empty == (not view.lines)
    assert zh.score()["ours"] > zh.score()["naive"]


def test_rendered_demo_shows_failures_and_fixes(zh: DemoResult) -> None:
    text = render(zh)
    assert "第 3 轮" in text and "我适合用什么工具写 Python？" in text
    assert "✗ conflict: stale 'Vim' injected too" in text
    assert "✗ miss: missing 'Vim'" in text
    assert "归档: 用户喜欢使用 Vim 编辑器" in text  # ours archived the old editor in round 3
    assert "<memories>" in text  # round 4 prints the real block
    assert "编辑器偏好的历史" in text and "archived" in text


def test_english_mirror(en: DemoResult) -> None:
    assert en.lang == "en" and en.user_id == "demo-en"
    r3 = en.rounds[2]
    assert r3.ours.lines == ["The user has switched to VS Code now."]
    assert {"The user likes using the Vim editor.", "The user has switched to VS Code now."} <= set(r3.naive.lines)
    assert en.rounds[1].ours.verdict.ok and not en.rounds[1].naive.verdict.ok
    text = render(en)
    assert "Round 2: a few days later, a paraphrase" in text
    assert "archived: The user likes using the Vim editor." in text


def test_kept_path_can_be_explored_with_the_cli(en: DemoResult) -> None:
    assert en.path is not None
    result = CliRunner().invoke(app, ["--path", en.path, "--json", "history", "editor", "--user", "demo-en"])
    assert result.exit_code == 0, result.output
    versions = json.loads(result.stdout)["versions"]
    assert [v["value"] for v in versions] == ["Vim", "VS Code"]


def test_demo_twice_on_the_same_path_starts_fresh(tmp_path: Path) -> None:
    first = run_demo("en", tmp_path)
    second = run_demo("en", tmp_path)
    assert [r.ours.lines for r in first.rounds] == [r.ours.lines for r in second.rounds]
    assert len(second.history) == 2


def test_judge_reports_an_honest_pass() -> None:
    spec = _RoundSpec(title="t", query="q", at="2024-01-01", expect=("VS Code",), forbid=("Vim",))
    assert judge(["用户现在改用 VS Code 了"], spec, ("Vim", "VS Code")).label == "hit"
    both = judge(["用户喜欢使用 Vim 编辑器", "用户现在改用 VS Code 了"], spec, ("Vim", "VS Code"))
    assert both.label == "conflict" and not both.ok
    polluted = judge(["用户现在改用 VS Code 了", "用户对花生过敏"], spec, ("Vim", "VS Code"))
    assert polluted.label == "polluted" and polluted.details == ["1 unrelated line(s)"]
    empty = _RoundSpec(title="t", query="q", at="2024-01-01", expect_empty=True)
    assert judge([], empty, ()).label == "nothing known"


def test_cli_demo_both_languages() -> None:
    runner = CliRunner()
    zh = runner.invoke(app, ["demo"], env=WIDE)
    assert zh.exit_code == 0, zh.output
    assert "种子文章的演示" in zh.stdout and "lifecycle-memory" in zh.stdout
    en = runner.invoke(app, ["demo", "--lang", "en", "--json"])
    assert en.exit_code == 0, en.output
    data = json.loads(en.stdout)
    assert data["lang"] == "en" and len(data["rounds"]) == 5
    assert data["rounds"][2]["ours"]["verdict"]["label"] == "hit"


def test_cli_demo_bad_language_is_a_usage_error() -> None:
    result = CliRunner().invoke(app, ["demo", "--lang", "fr"])
    assert result.exit_code == 2
    assert "fr" in result.output


def test_python_dash_m_entry_point() -> None:
    import langchain_lifecycle_memory.__main__ as entry

    assert entry.app is app
