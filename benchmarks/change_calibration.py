"""The numbers behind the stated-change thresholds (``write/_change.py``, used by ``write/_replaced.py``).

Pairs of gold statements about one entity in the development files (the public sample, ``extra.jsonl``,
``dev_rules.jsonl``): *same slot* (one attribute, two values, in a conflict or temporal scenario) against
*other slot* (two attributes). Each pair is scored as the update step scores it: the stored statement's
document vector against the new statement's query vector, with the bundled encoder. Prints the median of
each group, the share of each at or above a sweep of thresholds, and the example behind
``NAMED_CHANGE_THRESHOLD``. Run: ``python benchmarks/change_calibration.py [--shared PATH/TO/scenarios]``.
"""

from __future__ import annotations

import argparse
import json
from itertools import combinations
from pathlib import Path

import numpy as np
from _results import dev_files

from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings
from langchain_lifecycle_memory.write._change import DEFAULT_CHANGE_THRESHOLD, NAMED_CHANGE_THRESHOLD

ROOT = Path(__file__).resolve().parents[1]
NAMED_EXAMPLE = (
    "The user banks with Harborline Credit Union.",
    "The user closed their Harborline account and moved everything over to Meridian Trust.",
)


def pairs(paths: list[Path]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    same, other = [], []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            scenario = json.loads(line)
            facts = [f for s in scenario["steps"] if s["type"] == "turn" for f in s.get("facts", [])]
            for a, b in combinations(facts, 2):
                if a["entity"] != b["entity"]:
                    continue
                if a["attribute"] != b["attribute"]:
                    other.append((a["content"], b["content"]))
                elif a["value"] != b["value"] and scenario["category"] in ("conflict", "temporal"):
                    same.append((a["content"], b["content"]))
    return same, other


def cosines(embeddings: UniversalSentenceEncoderEmbeddings, pairs: list[tuple[str, str]]) -> np.ndarray:
    old = np.asarray(embeddings.embed_documents([a for a, _ in pairs]))
    new = np.asarray([embeddings.embed_query(b) for _, b in pairs])
    old /= np.linalg.norm(old, axis=1, keepdims=True)
    new /= np.linalg.norm(new, axis=1, keepdims=True)
    return (old * new).sum(axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "scenarios")
    args = parser.parse_args()
    files = dev_files(args.shared)
    embeddings = UniversalSentenceEncoderEmbeddings()
    same, other = (cosines(embeddings, p) for p in pairs([f for f in files if f.exists()]))
    print(f"same slot: {len(same)} pairs, median {np.median(same):.2f}")
    print(f"other slot: {len(other)} pairs, median {np.median(other):.2f}")
    for t in (0.3, 0.35, 0.4, DEFAULT_CHANGE_THRESHOLD, 0.5, 0.55, 0.6):
        print(f"  >= {t:.2f}: same slot {np.mean(same >= t):6.1%}   other slot {np.mean(other >= t):6.1%}")
    named = cosines(embeddings, [NAMED_EXAMPLE])[0]
    print(f"named example ({NAMED_CHANGE_THRESHOLD} bar): {named:.2f}")


if __name__ == "__main__":
    main()
