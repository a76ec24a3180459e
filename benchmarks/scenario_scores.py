"""Scenario probes passed, per file and extractor: the shared samples and the held-out files.

    python benchmarks/scenario_scores.py [--shared DIR] [--json OUT]
    python benchmarks/scenario_scores.py --retriever profile_fallback=0 --json OUT   # an ablation

Each file is replayed with the gold facts (the lifecycle and retrieval alone) and with the
offline rule extractor (the default without a model), engine ``ours``, the bundled encoder.
The held-out files under ``tests/scenarios/heldout_*`` were written before the code they
measure and are never edited; ``--shared`` adds the public sample files (``public.jsonl``,
``robustness.jsonl``) when you have them.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from _results import write

from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings, UpdateConfig
from langchain_lifecycle_memory.eval import run_scenarios

ROOT = Path(__file__).resolve().parents[1]
HELD_OUT = [
    "heldout_domains",
    "heldout_domains_robustness",
    "heldout_themes_b",
    "heldout_recall",
    "heldout_reconcile",
    "heldout_fresh",
    "heldout_sets",
    "heldout_life",
    "heldout_slots",
    "heldout_winter",
    "heldout_spring",
    "heldout_autumn",
    "heldout_frost",
    "heldout_thaw",
    "heldout_ember",
    "heldout_solstice",
    "heldout_equinox",
    "heldout_meridian",
    "heldout_zenith",
    "heldout_lantern",
    "extra",
]


def settings(pairs: list[str]) -> dict[str, object] | None:
    """``["k=v", ...]`` as keyword arguments, each value read as JSON when it parses (``0``, ``0.5``, ``null``)."""
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.isidentifier():
            raise SystemExit(f"--retriever takes KEY=VALUE settings (profile_fallback=0), not {pair!r}")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out or None


def score(path: Path, embeddings: object, options: dict[str, object]) -> dict[str, object]:
    row: dict[str, object] = {"probes": 0}
    for extractor in ("gold", "rule"):
        report = run_scenarios(path, extractor=extractor, engine="ours", embeddings=embeddings, **options)
        by_category: Counter[str] = Counter()
        totals: Counter[str] = Counter()
        for probe in report.probes:
            totals[probe.category] += 1
            by_category[probe.category] += probe.passed
        row["probes"] = len(report.probes)
        row[extractor] = {
            "passed": report.summary["passed"],
            "errors": len(report.errors),
            "by_category": {c: [by_category[c], totals[c]] for c in sorted(totals)},
        }
        print(f"{path.name:36s} {extractor:5s} {report.summary['passed']}/{len(report.probes)}", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, help="folder holding public.jsonl and robustness.jsonl")
    parser.add_argument("--json", type=Path, help="default: benchmarks/results/scenarios.json")
    parser.add_argument("--retriever", nargs="*", default=[], help="LifecycleRetriever settings, KEY=VALUE")
    parser.add_argument("--update", nargs="*", default=[], help="UpdateConfig settings, KEY=VALUE")
    args = parser.parse_args()
    files = [ROOT / "tests" / "scenarios" / f"{name}.jsonl" for name in HELD_OUT]
    if args.shared:
        files += [args.shared / "public.jsonl", args.shared / "robustness.jsonl"]
    embeddings = UniversalSentenceEncoderEmbeddings()
    update = settings(args.update)
    options = {"retriever": settings(args.retriever), "update": UpdateConfig(**update) if update else None}
    result = {"files": {path.name: score(path, embeddings, options) for path in files}}
    print("wrote", write("scenarios", result, args.json))


if __name__ == "__main__":
    main()
