"""Ablation (issue 13): what each retrieval channel and the topic cards carry.

Scenario probes (gold extraction) and LoCoMo recall@10 for the default retriever with
topic cards on/off, and for each channel alone (the other channels' weights set to 0),
all in one process on the same encoder.

    nice -n 10 python benchmarks/ablation.py                      # scenarios only
    nice -n 10 python benchmarks/ablation.py --locomo 7           # + LoCoMo on 7 conversations
    nice -n 10 python benchmarks/ablation.py --embedder e5 --locomo 1

Scenario files: ``../shared/scenarios/public.jsonl``, ``tests/scenarios/extra.jsonl``,
``tests/scenarios/heldout_recall.jsonl`` (the held-out probes, written before any of
this issue's retrieval changes).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from langchain_lifecycle_memory.eval.locomo import evaluate_locomo, find_audit_file
from langchain_lifecycle_memory.eval.scenarios import run_scenarios

ROOT = Path(__file__).resolve().parent.parent
FILES = {
    "public": ROOT.parent / "shared" / "scenarios" / "public.jsonl",
    "extra": ROOT / "tests" / "scenarios" / "extra.jsonl",
    "held-out": ROOT / "tests" / "scenarios" / "heldout_recall.jsonl",
}
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo7.json"

OFF: dict[str, float] = {"dense": 0.0, "lexical": 0.0, "slot": 0.0}
CONFIGS: dict[str, dict[str, Any]] = {
    "fused (default)": {},
    "fused, no topic cards": {"topic_cards": False},
    "dense only": {"weights": {**OFF, "dense": 0.8}},
    "lexical only": {"weights": {**OFF, "lexical": 1.0}},
    "slot only": {"weights": {**OFF, "slot": 0.9}},
    "slot only, no topic cards": {"weights": {**OFF, "slot": 0.9}, "topic_cards": False},
}


def _embedder(name: str | None) -> Any:
    if name is None:
        return None
    from langchain_lifecycle_memory.store import embeddings

    return embeddings.E5SmallEmbeddings() if name == "e5" else embeddings.UniversalSentenceEncoderEmbeddings()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", choices=["use", "e5"], default=None)
    parser.add_argument("--locomo", type=int, default=0, metavar="N", help="also LoCoMo on N conversations")
    parser.add_argument("--json", default=None, help="write the numbers as JSON")
    args = parser.parse_args()
    emb = _embedder(args.embedder)
    out: dict[str, Any] = {"embedder": args.embedder or "default", "scenarios": {}, "locomo": {}}
    for name, options in CONFIGS.items():
        row = {}
        for label, path in FILES.items():
            summary = run_scenarios(path, extractor="gold", engine="ours", embeddings=emb, retriever=options).summary
            row[label] = f"{summary['passed']}/{summary['passed'] + summary['failed']}"
        out["scenarios"][name] = row
        print(f"{name:28s} " + "  ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    if args.locomo:
        variants = {name: options for name, options in CONFIGS.items() if options}
        result = evaluate_locomo(
            LOCOMO,
            ks=(10,),
            audit=find_audit_file(LOCOMO),
            limit_conversations=args.locomo,
            retrievers=["default"],
            variants=variants,
            embeddings=emb,
        )
        for name, by_k in result["retrievers"].items():
            recall = by_k["recall@10"]
            out["locomo"]["fused (default)" if name == "default" else name] = recall
            cats = "  ".join(f"{c} {v:.3f}" for c, v in recall.items())
            print(f"LoCoMo R@10 {name:28s} {cats}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
