"""Robustness: the scenario probes again, with the naming drift real extractors produce.

A perturbation generator rewrites any scenario file's gold facts the way a model might on
another day, then replays it (gold facts, so only the update and read side are measured):

* **attribute drift** on every second statement of a slot: qualifier prefixes/suffixes
  (``current_``, ``preferred_``, ``_name``), camelCase, plurals, and synonyms drawn from a
  held-apart list below (not the vocabulary's, which the resolver reads);
* **entity alias forms**: a fact about ``sister_linyue`` is restated about ``sister`` or ``linyue``;
* **value variants** of a restated value (``VS Code`` → ``vscode``, case);
* **set-valued additions**: after the first statement of an allergy/pet/hobby/instrument/
  language/sport slot, one more member is added ("also ...") — it must not erase the first.

Every probe keeps its ``expect``/``forbid``. Reported per category, ours vs the naive
engine, perturbed vs unperturbed, all in this run.

Run: ``python benchmarks/robustness.py [FILES...] [--seed 7] [--out benchmarks/results/robustness.json]``
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from langchain_lifecycle_memory.eval import run_scenarios
from langchain_lifecycle_memory.schema import ensure_aware, normalize_value

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FILES = [ROOT / ".." / "shared" / "scenarios" / "public.jsonl", ROOT / "tests" / "scenarios" / "extra.jsonl"]

PREFIXES = ("current_", "preferred_", "main_", "my_", "usual_")
SUFFIXES = ("_name", "_now")
# Held apart from the resolver: the vocabulary's descriptions/aliases are never read here.
HELD_APART_SYNONYMS: dict[str, tuple[str, ...]] = {
    "editor": ("text_editor", "coding_editor"),
    "employer": ("employer_company", "work_company"),
    "city": ("city_of_living", "city_lived_in"),
    "drink": ("usual_drink_order", "drinks"),
    "car": ("car_model", "vehicle_car"),
    "smartphone": ("phone_device",),
    "laptop": ("laptop_model",),
}
SET_EXTRAS: dict[str, str] = {
    "allergy": "sesame",
    "pet": "a goldfish named Bubbles",
    "hobby": "origami",
    "instrument": "harmonica",
    "sport": "fencing",
    "language": "Esperanto",
    "learning_language": "Latin",
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def _plural(name: str) -> str:
    return name[:-1] + "ies" if re.search(r"[^aeiou]y$", name) else name + "s"


def drift_attribute(name: str, rng: random.Random) -> tuple[str, str]:
    """``(new name, how)``: a structural variant or a held-apart synonym."""
    options = [
        ("prefix", rng.choice(PREFIXES) + name),
        ("suffix", name + rng.choice(SUFFIXES)),
        ("camel", _camel(rng.choice(PREFIXES) + name)),
        ("plural", _plural(name)),
    ]
    if name in HELD_APART_SYNONYMS:
        options.append(("synonym", rng.choice(HELD_APART_SYNONYMS[name])))
    return rng.choice(options)


def alias_entity(entity: str, rng: random.Random) -> str:
    """``sister_linyue`` → ``sister`` or ``linyue``; other names unchanged."""
    if entity == "user" or "_" not in entity:
        return entity
    relation, _, name = entity.partition("_")
    return rng.choice((relation, name))


def variant_value(value: str) -> str:
    """The same value spelled differently (spacing, case)."""
    if " " in value:
        return value.replace(" ", "")
    return value.lower() if value != value.lower() else value.upper()


def perturb(scenario: dict[str, Any], rng: random.Random) -> tuple[dict[str, Any], dict[str, int]]:
    """A perturbed copy of one scenario and the count of each perturbation applied."""
    out = copy.deepcopy(scenario)
    counts: dict[str, int] = {}
    seen: dict[tuple[str, str], int] = {}
    current: dict[tuple[str, str], str] = {}
    aliased: set[str] = set()
    steps: list[dict[str, Any]] = []
    for step in out["steps"]:
        steps.append(step)
        if step.get("type") != "turn":
            continue
        added: list[dict[str, Any]] = []
        for fact in step.get("facts") or []:
            if not (fact.get("entity") and fact.get("attribute")):
                continue
            slot = (fact["entity"], fact["attribute"])
            n = seen.get(slot, 0)
            seen[slot] = n + 1
            value = fact.get("value") or ""
            if n == 0 and fact["attribute"] in SET_EXTRAS and fact.get("operation") != "retract":
                added.append({**fact, "value": SET_EXTRAS[fact["attribute"]], "content": _also(fact, rng)})
                counts["set_addition"] = counts.get("set_addition", 0) + 1
            if n % 2 == 1:
                how, new_name = drift_attribute(fact["attribute"], rng)
                fact["attribute"] = new_name
                counts[f"attribute_{how}"] = counts.get(f"attribute_{how}", 0) + 1
                if value and normalize_value(current.get(slot)) == normalize_value(value):
                    fact["value"] = variant_value(value)
                    counts["value_variant"] = counts.get("value_variant", 0) + 1
            current[slot] = value
            if fact["entity"] not in aliased and (alias := alias_entity(fact["entity"], rng)) != fact["entity"]:
                # A later restatement of the same fact names the person by relation or name only.
                aliased.add(fact["entity"])
                added.append({**fact, "entity": alias, "value": variant_value(value) if value else value})
                counts["entity_alias"] = counts.get("entity_alias", 0) + 1
        if added:
            at = ensure_aware(step["at"]) + timedelta(seconds=30)  # type: ignore[operator]
            steps.append({"type": "turn", "at": at.isoformat(), "user": "(also)", "facts": added})
    out["steps"] = steps
    return out, counts


def _also(fact: dict[str, Any], rng: random.Random) -> str:
    extra = SET_EXTRAS[fact["attribute"]]
    who = "The user" if fact["entity"] == "user" else f"The user's {fact['entity'].replace('_', ' ')}"
    return f"{who} also has {fact['attribute'].replace('_', ' ')}: {extra}."


def _load(paths: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(line) for p in paths for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def _score(scenarios: list[dict[str, Any]], engine: str) -> dict[str, Any]:
    report = run_scenarios(scenarios, extractor="gold", engine=engine)  # type: ignore[arg-type]
    summary = report.summary
    summary["failures"] = [(p.scenario, p.step, p.reasons) for p in report.failures()]
    return summary


def main(argv: list[str] | None = None) -> int:
    """Print the table and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "robustness.json")
    args = parser.parse_args(argv)
    files = [f for f in args.files if f.exists()]
    if not files:
        print("Skipped: no scenario file found (check out shared/ next to the repo).")
        return 0
    rng = random.Random(args.seed)
    original = _load(files)
    perturbed, totals = [], {}
    for scenario in original:
        changed, counts = perturb(scenario, rng)
        perturbed.append(changed)
        for k, v in counts.items():
            totals[k] = totals.get(k, 0) + v
    runs = {
        ("ours", "unperturbed"): _score(original, "ours"),
        ("ours", "perturbed"): _score(perturbed, "ours"),
        ("naive", "unperturbed"): _score(original, "naive"),
        ("naive", "perturbed"): _score(perturbed, "naive"),
    }
    categories = sorted({c for r in runs.values() for c in r["by_category"]})
    print(f"Robustness on {', '.join(str(f.name) for f in files)} (seed {args.seed}); perturbations: {totals}")
    header = f"{'category':<18}" + "".join(f"{e + ' ' + v:>20}" for e, v in runs)
    print(header)
    for cat in [*categories, "all"]:
        cells = []
        for r in runs.values():
            c = r if cat == "all" else r["by_category"].get(cat, {"passed": 0, "failed": 0})
            total = c["passed"] + c["failed"]
            cells.append(f"{c['passed']}/{total} ({100 * c['passed'] / max(1, total):.0f}%)")
        print(f"{cat:<18}" + "".join(f"{cell:>20}" for cell in cells))
    print("\nours, perturbed — failures:")
    for sid, step, reasons in runs[("ours", "perturbed")]["failures"]:
        print(f"  {sid} step {step}: {'; '.join(reasons)}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"seed": args.seed, "files": [str(f) for f in files], "perturbations": totals}
    payload["runs"] = {f"{e}/{v}": r for (e, v), r in runs.items()}
    args.out.write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
