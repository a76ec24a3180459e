"""Evaluation: the scenario runner (ours vs the naive baseline) and LoCoMo evidence recall.

From a shell: ``python -m langchain_lifecycle_memory.eval {scenarios,locomo} FILE ...`` (see ``__main__``).
Nothing else in the package imports this subpackage; it uses the public API only.
"""

from langchain_lifecycle_memory.eval.evaluators import (
    empty_evaluator,
    expect_evaluator,
    forbid_evaluator,
    probe_evaluator,
    scenario_examples,
    scenario_target,
)
from langchain_lifecycle_memory.eval.scenarios import (
    LifecycleEngine,
    ProbeResult,
    Scenario,
    ScenarioFormatError,
    ScenarioReport,
    judge_block,
    load_scenarios,
    run_scenarios,
)

__all__ = [
    "LifecycleEngine",
    "ProbeResult",
    "Scenario",
    "ScenarioFormatError",
    "ScenarioReport",
    "empty_evaluator",
    "expect_evaluator",
    "forbid_evaluator",
    "judge_block",
    "load_scenarios",
    "probe_evaluator",
    "run_scenarios",
    "scenario_examples",
    "scenario_target",
]
