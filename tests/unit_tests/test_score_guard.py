"""Regression guard: the held-out scenario files must not score below what the repo records.

The values live in ``tests/scenarios/recorded_scores.json``; a change that raises a score
raises the recorded value in a one-line commit. The files themselves are never edited.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings
from langchain_lifecycle_memory.eval import run_scenarios

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"
RECORDED = json.loads((SCENARIOS / "recorded_scores.json").read_text(encoding="utf-8"))["scores"]
CASES = [(name, extractor) for name, by in RECORDED.items() for extractor in by]


@pytest.fixture(scope="module")
def embeddings() -> Any:
    return UniversalSentenceEncoderEmbeddings()


@pytest.mark.parametrize(("name", "extractor"), CASES, ids=[f"{n.removesuffix('.jsonl')}-{x}" for n, x in CASES])
def test_held_out_scores_do_not_drop(name: str, extractor: str, embeddings: Any) -> None:
    report = run_scenarios(SCENARIOS / name, extractor=extractor, engine="ours", embeddings=embeddings)
    passed, recorded = report.summary["passed"], RECORDED[name][extractor]
    assert report.errors == [], report.errors
    assert passed >= recorded, f"{name} ({extractor}): {passed} < recorded {recorded}\n{report.failures()}"
