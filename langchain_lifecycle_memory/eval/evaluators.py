"""LangSmith-style evaluation of scenario files: examples, a target, and evaluators.

Each probe of a scenario file becomes one example; the target replays the scenario up to
that probe in a fresh store and returns the injected block; the evaluators judge it with
the same rules as the CLI runner (``judge_block``). Evaluators use the modern
``(outputs, reference_outputs) -> {"key", "score", "comment"}`` signature.

Example:
    .. code-block:: python

        from langsmith import Client, evaluate
        from langchain_lifecycle_memory.eval import probe_evaluator, scenario_examples, scenario_target

        client = Client()
        dataset = client.create_dataset("lifecycle-scenarios")
        client.create_examples(dataset_id=dataset.id, examples=scenario_examples("public.jsonl"))
        evaluate(scenario_target(extractor="gold"), data=dataset.name, evaluators=[probe_evaluator])
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
    """One LangSmith example per probe: ``{"inputs", "outputs", "metadata"}``.

    ``inputs`` holds the whole scenario and the probe's step index (the target replays
    the steps before it); ``outputs`` holds ``expect``, ``forbid`` and ``expect_empty``.
    Upload with ``client.create_examples(dataset_id=..., examples=scenario_examples(path))``.
    """
    examples = []
    for s in load_scenarios(source):
        for i, step in enumerate(s.steps):
            if step["type"] != "probe":
                continue
            examples.append(
                {
                    "inputs": {"scenario": s.raw, "step": i},
                    "outputs": {k: step[k] for k in ("expect", "forbid", "expect_empty")},
                    "metadata": {"scenario": s.id, "category": s.category, "query": step["query"]},
                }
            )
    return examples


def scenario_target(
    *, extractor: Extractor = "gold", engine: EngineName = "ours", embeddings: Any | None = None
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A ``langsmith.evaluate`` target: replay up to the probe, return the injected block.

    Example:
        .. code-block:: python

            from langsmith import evaluate
            from langchain_lifecycle_memory.eval import scenario_target, probe_evaluator

            evaluate(scenario_target(), data="lifecycle-scenarios", evaluators=[probe_evaluator])
    """

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


def _outputs(outputs: Mapping[str, Any]) -> tuple[str, bool | None]:
    return str(outputs.get("injected") or ""), outputs.get("empty")


def expect_evaluator(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> dict[str, Any]:
    """Score 1 when every ``expect`` string is in the injected memory lines."""
    text, empty = _outputs(outputs)
    reasons = judge_block(text, empty=empty, expect=reference_outputs.get("expect") or [])
    return {"key": "expect", "score": int(not reasons), "comment": "; ".join(reasons)}


def forbid_evaluator(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> dict[str, Any]:
    """Score 1 when no ``forbid`` string is in the injected memory lines."""
    text, empty = _outputs(outputs)
    reasons = judge_block(text, empty=empty, forbid=reference_outputs.get("forbid") or [])
    return {"key": "forbid", "score": int(not reasons), "comment": "; ".join(reasons)}


def empty_evaluator(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> dict[str, Any]:
    """Score 1 unless ``expect_empty`` is set and some memory line was injected."""
    text, empty = _outputs(outputs)
    reasons = judge_block(text, empty=empty, expect_empty=bool(reference_outputs.get("expect_empty")))
    return {"key": "expect_empty", "score": int(not reasons), "comment": "; ".join(reasons)}


def probe_evaluator(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> dict[str, Any]:
    """The runner's verdict: expect, forbid and expect_empty together."""
    text, empty = _outputs(outputs)
    reasons = [outputs["error"]] if outputs.get("error") else []
    reasons += judge_block(
        text,
        empty=empty,
        expect=reference_outputs.get("expect") or [],
        forbid=reference_outputs.get("forbid") or [],
        expect_empty=bool(reference_outputs.get("expect_empty")),
    )
    return {"key": "probe_passed", "score": int(not reasons), "comment": "; ".join(reasons)}
