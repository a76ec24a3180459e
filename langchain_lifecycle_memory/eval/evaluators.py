"""LangSmith-style evaluation of scenario files: one example per probe, a target, and evaluators.

The target replays a scenario up to the probe and returns the injected block; evaluators judge it with ``judge_block``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from langchain_lifecycle_memory.eval.scenarios import (
    EngineName,
    Extractor,
    judge_block,
    load_scenarios,
    make_engine,
    replay_probes,
)

__all__ = [
    "empty_evaluator",
    "expect_evaluator",
    "forbid_evaluator",
    "probe_evaluator",
    "scenario_examples",
    "scenario_target",
]


def scenario_examples(source: str | os.PathLike[str] | Iterable[Any]) -> list[dict[str, Any]]:
    """One LangSmith example per probe: ``inputs`` the scenario and the probe's step, ``outputs`` its checks."""
    return [
        {
            "inputs": {"scenario": s.raw, "step": i},
            "outputs": {k: step[k] for k in ("expect", "forbid", "expect_empty")},
            "metadata": {"scenario": s.id, "category": s.category, "query": step["query"]},
        }
        for s in load_scenarios(source)
        for i, step in enumerate(s.steps)
        if step["type"] == "probe"
    ]


def scenario_target(
    *, extractor: Extractor = "gold", engine: EngineName = "ours", embeddings: Any | None = None
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A ``langsmith.evaluate`` target: replay up to the probe, return the injected block."""

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        scenario = load_scenarios([inputs["scenario"]])[0]
        step = int(inputs["step"])
        eng = make_engine(engine, extractor=extractor, embeddings=embeddings)
        try:
            played = [p for p in replay_probes(scenario, eng, stop_at=step) if p[0] == step]
        finally:
            eng.close()
        if not played:
            msg = f"step {step} of scenario {scenario.id!r} is not a probe."
            raise ValueError(msg)
        _, _, block, error = played[0]
        if block is None:
            return {"injected": "", "empty": True, "error": error}
        return {"injected": block.text, "empty": block.empty}

    return target


def _judge(key: str, outputs: Mapping[str, Any], reference: Mapping[str, Any], *checks: str) -> dict[str, Any]:
    """``judge_block`` on a target's outputs with the reference's ``checks``, as a LangSmith score."""
    options: dict[str, Any] = {c: reference.get(c) or [] for c in checks if c != "expect_empty"}
    if "expect_empty" in checks:
        options["expect_empty"] = bool(reference.get("expect_empty"))
    reasons = [outputs["error"]] if key == "probe_passed" and outputs.get("error") else []
    reasons += judge_block(str(outputs.get("injected") or ""), empty=outputs.get("empty"), **options)
    return {"key": key, "score": int(not reasons), "comment": "; ".join(reasons)}


def expect_evaluator(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> dict[str, Any]:
    """Score 1 when every ``expect`` string is in the injected memory lines."""
    return _judge("expect", outputs, reference_outputs, "expect")


def forbid_evaluator(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> dict[str, Any]:
    """Score 1 when no ``forbid`` string is in the injected memory lines."""
    return _judge("forbid", outputs, reference_outputs, "forbid")


def empty_evaluator(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> dict[str, Any]:
    """Score 1 unless ``expect_empty`` is set and some memory line was injected."""
    return _judge("expect_empty", outputs, reference_outputs, "expect_empty")


def probe_evaluator(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> dict[str, Any]:
    """The runner's verdict: expect, forbid and expect_empty together."""
    return _judge("probe_passed", outputs, reference_outputs, "expect", "forbid", "expect_empty")
