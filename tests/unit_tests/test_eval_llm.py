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
