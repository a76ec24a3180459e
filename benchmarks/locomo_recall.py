"""LoCoMo evidence recall of the retrievers; writes ``benchmarks/results/locomo.json``.

    python benchmarks/locomo_recall.py PATH/TO/locomo10.json [--retrievers default dense bm25] [--limit-conversations N]

LoCoMo (https://github.com/snap-research/locomo, CC BY-NC 4.0) is not shipped: download
``data/locomo10.json`` and pass its path. Each conversation's turns are stored as episodes, each
question of categories 1-4 is a search, and recall@k is the share of the question's evidence
turns among the top k. The result holds numbers only, never LoCoMo text.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _results import write

from langchain_lifecycle_memory.eval.locomo import BASELINES, evaluate_locomo, find_audit_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="LoCoMo JSON (locomo10.json, or a subset in its format)")
    parser.add_argument("--retrievers", nargs="+", default=["default", "dense", "bm25"], choices=list(BASELINES))
    parser.add_argument(
        "--audit", type=Path, help="evidence corrections (default: locomo_audit_errors.json beside the data)"
    )
    parser.add_argument("--limit-conversations", type=int)
    parser.add_argument("--json", type=Path, help="default: benchmarks/results/locomo.json")
    args = parser.parse_args()
    result = evaluate_locomo(
        args.data,
        ks=(5, 10),
        audit=args.audit or find_audit_file(args.data),
        retrievers=args.retrievers,
        limit_conversations=args.limit_conversations,
        progress=lambda line: print(line, file=sys.stderr),
    )
    for name, by_k in result["retrievers"].items():
        print(f"{name:10s} R@5 {by_k['recall@5']['all']:.3f}  R@10 {by_k['recall@10']['all']:.3f}")
    result["data"] = args.data.name
    result["audit"] = bool(args.audit or find_audit_file(args.data))
    print("wrote", write("locomo", result, args.json))


if __name__ == "__main__":
    main()
