"""doctor: the seed article's checklist on the seed demo's memories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langchain_lifecycle_memory.cli.diagnostics import doctor, generate_paraphrases
from langchain_lifecycle_memory.cli.main import app
from langchain_lifecycle_memory.graph.memory import LifecycleMemory
from langchain_lifecycle_memory.schema import Fact, MemoryRecord

NOW = "2024-03-02T09:00:00Z"
PARAPHRASE = "我适合用什么工具写 Python？"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> tuple[LifecycleMemory, Path]:
    path = tmp_path_factory.mktemp("doctor")
    memory = LifecycleMemory(path=path)
    for text, at in [
        ("我住在杭州", "2023-12-20T09:00:00Z"),
        ("我喜欢使用 Vim 编辑器", "2024-01-01T10:00:00Z"),
        ("我现在改用 VS Code 了", "2024-03-01T10:00:00Z"),
    ]:
        memory.add_messages([("user", text)], "u1", at=at)
    return memory, path


def test_archived_memory_says_superseded_by_vs_code(seeded: tuple[LifecycleMemory, Path]) -> None:
    memory, _ = seeded
    report = doctor(memory, "u1", "Vim", now=NOW)
    assert report.verdict == "archived" and not report.ok
    assert report.found_by == "value" and report.record is not None and report.record.value == "Vim"
    assert report.successor is not None and report.successor.value == "VS Code"
    status = next(f for f in report.findings if f.step == "status")
    assert "superseded by 'VS Code'" in status.message
    own = report.checks[0]
    assert own.origin == "own text" and own.decision == "archived" and not own.injected
    assert own.injected_lines == ["用户现在改用 VS Code 了"]  # the current version is what gets injected


def test_current_version_is_recalled_by_the_seed_paraphrase(seeded: tuple[LifecycleMemory, Path]) -> None:
    memory, _ = seeded
    report = doctor(memory, "u1", "VS Code", paraphrases=[PARAPHRASE], now=NOW)
    assert report.verdict == "healthy" and report.ok
    check = next(c for c in report.checks if c.query == PARAPHRASE)
    assert check.origin == "given" and check.decision == "kept" and check.rank == 0 and check.injected
    assert check.fused is not None and check.fused >= 0.3
    assert "Vim" not in check.block


def test_generated_paraphrases_from_the_vocabulary(seeded: tuple[LifecycleMemory, Path]) -> None:
    memory, _ = seeded
    report = doctor(memory, "u1", "用户现在改用 VS Code 了", now=NOW)
    assert report.found_by == "content"
    generated = [c.query for c in report.checks if c.origin == "generated"]
    assert generated[:2] == ["我的编辑器是什么？", "写代码用什么工具"]
    assert "What is my editor?" in generated
    assert all(c.decision is not None for c in report.checks)


def test_paraphrases_follow_the_record_language_and_entity() -> None:
    en = MemoryRecord(
        namespace=("m", "u"), content="The user likes Vim.", entity="user", attribute="editor", value="Vim"
    )
    assert generate_paraphrases(en)[0] == "What is my editor?"
    other = MemoryRecord(namespace=("m", "u"), content="Alice 喜欢喝茶", entity="Alice", attribute="tea", value="绿茶")
    assert generate_paraphrases(other)[0] == "Alice的茶是什么？"
    free = MemoryRecord(namespace=("m", "u"), content="Something happened.")
    assert generate_paraphrases(free) == []


def test_found_by_id_prefix(seeded: tuple[LifecycleMemory, Path]) -> None:
    memory, _ = seeded
    city = next(r for r in memory.list("u1") if r.attribute == "city")
    assert doctor(memory, "u1", city.id[:8], paraphrases=[], now=NOW).found_by == "id"
    assert doctor(memory, "u1", city.id, paraphrases=[], now=NOW).record == city


def test_not_stored(seeded: tuple[LifecycleMemory, Path]) -> None:
    memory, _ = seeded
    report = doctor(memory, "u1", "完全无关的天气预报", now=NOW)
    assert report.verdict == "not stored" and report.record is None
    assert "extraction" in report.findings[0].message


def test_pending_memory_explains_the_confidence_bar(tmp_path: Path) -> None:
    memory = LifecycleMemory(path=tmp_path)
    memory.add_facts(
        [Fact(entity="user", attribute="city", value="杭州", content="用户可能住在杭州", confidence=0.3)],
        "u2",
        at="2024-01-01",
    )
    report = doctor(memory, "u2", "杭州", now=NOW)
    assert report.verdict == "pending"
    assert "confidence 0.30 below the bar" in report.findings[1].message


def test_cli_doctor_prints_the_checklist(seeded: tuple[LifecycleMemory, Path]) -> None:
    _, path = seeded
    runner = CliRunner()
    args = ["--path", str(path), "doctor", "Vim", "--user", "u1", "--now", NOW]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "→ archived" in result.stdout and "superseded by 'VS Code'" in result.stdout
    as_json = runner.invoke(app, [*args[:3], "--json", *args[3:], "-p", PARAPHRASE])
    data = json.loads(as_json.stdout)
    assert data["verdict"] == "archived" and data["successor"]["value"] == "VS Code"
    assert data["checks"][1]["query"] == PARAPHRASE


def test_cli_doctor_not_found_exits_1(seeded: tuple[LifecycleMemory, Path]) -> None:
    _, path = seeded
    result = CliRunner().invoke(app, ["--path", str(path), "doctor", "天气预报", "--user", "u1"])
    assert result.exit_code == 1
    assert "not stored" in result.stdout


def test_docstring_examples_run() -> None:
    import doctest

    from langchain_lifecycle_memory.cli import demo, diagnostics

    for module in (demo, diagnostics):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__
