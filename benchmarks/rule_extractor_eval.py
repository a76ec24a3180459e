"""Score the rule extractor on the scenario turns: slot-level precision / recall / F1 against gold facts.

Every ``turn`` of a scenario file (default ``../shared/scenarios/public.jsonl`` from the repo root)
is replayed through ``create_rule_extractor()`` at the turn's own timestamp. A predicted fact
matches a gold fact when entity, attribute and normalised value agree (``schema.normalize_value``);
the slot-only score ignores the value. Retractions ("I no longer use X") have no gold counterpart
in the scenario format, so they are listed apart and not scored.

Usage:
    python benchmarks/rule_extractor_eval.py [SCENARIOS.jsonl] [--out benchmarks/results/rule_extractor_eval.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langchain_lifecycle_memory.schema import ensure_aware, normalize_value
from langchain_lifecycle_memory.write.extraction import create_rule_extractor

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SCENARIOS = ROOT / ".." / "shared" / "scenarios" / "public.jsonl"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "rule_extractor_eval.json"


def _prf(hits: int, predicted: int, gold: int) -> tuple[float, float, float]:
    precision = hits / predicted if predicted else 1.0
    recall = hits / gold if gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def evaluate(path: Path) -> dict[str, Any]:
    """Replay every turn of ``path`` and count matches per language and overall."""
    extractor = create_rule_extractor()
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    misses, extras, retractions = [], [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        scenario = json.loads(line)
        for step in scenario["steps"]:
            if step["type"] != "turn":
                continue
            messages: list[BaseMessage] = [HumanMessage(step["user"])]
            if step.get("assistant"):
                messages.append(AIMessage(step["assistant"]))
            facts = extractor.invoke({"messages": messages, "now": ensure_aware(step["at"])})
            gold = {(g["entity"], g["attribute"], normalize_value(g["value"])) for g in step.get("facts", [])}
            predicted = {(f.entity, f.attribute, normalize_value(f.value)) for f in facts if f.operation == "assert"}
            retractions += [(step["user"], f.attribute, f.value) for f in facts if f.operation == "retract"]
            lang = "zh" if re.search(r"[\u3400-\u9fff]", step["user"]) else "en"
            for group in ("all", lang):
                c = counts[group]
                c["gold"] += len(gold)
                c["predicted"] += len(predicted)
                c["hits"] += len(gold & predicted)
                c["slot_gold"] += len({g[:2] for g in gold})
                c["slot_predicted"] += len({p[:2] for p in predicted})
                c["slot_hits"] += len({g[:2] for g in gold} & {p[:2] for p in predicted})
                c["turns"] += 1
            misses += [(scenario["id"], step["user"], g) for g in sorted(gold - predicted)]
            extras += [(scenario["id"], step["user"], p) for p in sorted(predicted - gold, key=str)]
    return {
        "scenarios": str(path),
        "counts": {k: dict(v) for k, v in counts.items()},
        "misses": misses,
        "extras": extras,
        "retractions": retractions,
    }


def report(result: dict[str, Any]) -> None:
    """Print the score table and every miss / extra."""
    print(f"Rule extractor on {result['scenarios']}")
    print(
        f"{'group':<6} {'turns':>5} {'gold':>5} {'pred':>5} {'P':>6} {'R':>6} {'F1':>6}   {'slot P':>6} {'slot R':>6}"
    )
    for group in ("all", "en", "zh"):
        c = result["counts"].get(group)
        if not c:
            continue
        p, r, f1 = _prf(c["hits"], c["predicted"], c["gold"])
        sp, sr, _ = _prf(c["slot_hits"], c["slot_predicted"], c["slot_gold"])
        print(
            f"{group:<6} {c['turns']:>5} {c['gold']:>5} {c['predicted']:>5} {p:>6.3f} {r:>6.3f} {f1:>6.3f}"
            f"   {sp:>6.3f} {sr:>6.3f}"
        )
    print(f"\nMisses (gold facts not produced): {len(result['misses'])}")
    for scenario, user, gold in result["misses"]:
        print(f"  [{scenario}] {user!r}: expected {gold}")
    print(f"Extras (produced, not in gold): {len(result['extras'])}")
    for scenario, user, fact in result["extras"]:
        print(f"  [{scenario}] {user!r}: produced {fact}")
    print(f"Retractions (not scored): {len(result['retractions'])}")
    for user, attribute, value in result["retractions"]:
        print(f"  {user!r}: retract {attribute}={value!r}")


def main(argv: list[str] | None = None) -> int:
    """Run the evaluation; a missing scenario file is a skip, not a failure."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenarios", nargs="?", type=Path, default=DEFAULT_SCENARIOS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON results")
    args = parser.parse_args(argv)
    if not args.scenarios.exists():
        print(f"Skipped: no scenario file at {args.scenarios} (pass a path, or check out shared/ next to the repo).")
        return 0
    result = evaluate(args.scenarios)
    report(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
    print(f"\nWrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
