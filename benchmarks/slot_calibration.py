"""Calibrate the embedding threshold of slot identity (``_slots.DEFAULT_SLOT_THRESHOLD``).

Embeddings decide only where the vocabulary and the names' structure say nothing. Cases:

* negatives: every pair of distinct vocabulary attributes (different slots by definition);
* positives: the general-English synonyms below (none of them is in the held-out files,
  the robustness generator's list or the vocabulary's aliases).

For each threshold the script prints accuracy on positives and negatives (balanced) and the
best one, using the bundled encoder.

Then ``STATEMENT_SLOT_THRESHOLD`` (and ``JOINT_STATEMENT`` with ``JOINT_NAME``): for names neither the
vocabulary nor their structure relates, the cosine of the two slots' statements without the words naming
their entity (``predicate``). Negatives:
every such pair of two slots of one entity in the development files and ``heldout_domains.jsonl``;
positives: such pairs in the slot-drift scenarios of ``heldout_domains_robustness.jsonl`` and the shared
robustness sample (both already seen; ``heldout_fresh.jsonl`` is not used).
Last, the examples the docs quote: names outside the vocabulary with the nearest vocabulary attribute
(``CARDINALITY_THRESHOLD``: only a set-valued one decides), and statement pairs of names sharing a word.
Run: ``python benchmarks/slot_calibration.py [--shared PATH/TO/scenarios]``.
"""

from __future__ import annotations

import argparse
import json
from itertools import combinations
from pathlib import Path

from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES
from langchain_lifecycle_memory.write._cardinality import DEFAULT_ALIKE_THRESHOLD
from langchain_lifecycle_memory.write._slot_identity import (
    CARDINALITY_THRESHOLD,
    DEFAULT_SLOT_THRESHOLD,
    JOINT_NAME,
    JOINT_STATEMENT,
    STATEMENT_SLOT_THRESHOLD,
    UNRELATED_NAMES,
    _Embedder,
    _frame,
    attribute_relation,
    name_similarity,
    predicate,
)

ROOT = Path(__file__).resolve().parents[1]

POSITIVES = [
    ("occupation", "job"),
    ("profession", "job"),
    ("automobile", "car"),
    ("beverage", "drink"),
    ("town", "city"),
    ("workplace", "employer"),
    ("canine_breed", "dog_breed"),
    ("pastime", "hobby"),
    ("musical_instrument", "instrument"),
    ("notebook_computer", "laptop"),
    ("e_mail", "email"),
    ("date_of_birth", "birthday"),
    ("years_old", "age"),
]


NAME_EXAMPLES = ("spoken_language", "side_project", "pharmacy", "kitchen_appliance")
STATEMENT_EXAMPLES = [  # the user's statements under two names that share a word
    ("The user's work phone is an iPhone SE.", "The user's personal phone is a OnePlus 11."),
    (
        "The user has the Ikon Pass for the 2023-24 ski season.",
        "The user has the Indy Pass for the 2024-25 ski season.",
    ),
    ("The user's work laptop is a Dell Latitude 7440.", "The user's company laptop is an HP EliteBook 840."),
    (  # and under two names that share nothing (UNRELATED_NAMES)
        "The user paddles with the Millrace Outrigger Club.",
        "The user's outrigger club paddles on Monday evenings.",
    ),
]
NAME_PAIRS = [("practice_nights", "outrigger_club")]


def examples(specs: dict, embedder: _Embedder) -> None:
    """The docs' examples: a name's nearest vocabulary attribute, and two statements' cosine."""
    for name in NAME_EXAMPLES:
        score, near = max((name_similarity(name, b, embedder, specs), b) for b in specs)
        verdict = "decides" if score >= CARDINALITY_THRESHOLD and specs[near].cardinality == "set" else "no"
        print(f"  {name} -> {near} ({specs[near].cardinality}): {score:.2f}, {verdict}")
    for a, b in STATEMENT_EXAMPLES:
        u, v = embedder.vectors([predicate(a, "user"), predicate(b, "user")])
        print(f"  {predicate(a, 'user')!r} / {predicate(b, 'user')!r}: {sum(x * y for x, y in zip(u, v)):.2f}")
    for a, b in NAME_PAIRS:
        print(f"  names {a} / {b}: {name_similarity(a, b, embedder, specs):.2f}")


def unrelated_pairs(paths: list[Path], specs: dict, *, drift: bool) -> list[tuple[dict, dict]]:
    """Gold fact pairs of one entity, two attribute names that the vocabulary and structure do not relate."""
    found = []
    for path in (p for p in paths if p.exists()):
        for line in path.read_text(encoding="utf-8").splitlines():
            scenario = json.loads(line)
            if drift and "drift" not in scenario["category"]:
                continue
            turns = [s for s in scenario["steps"] if s["type"] == "turn"]
            facts = [f for s in turns for f in s.get("facts", []) if f.get("attribute")]
            found += [
                (a, b)
                for a, b in combinations(facts, 2)
                if a["entity"] == b["entity"] and a["attribute"] != b["attribute"]
                and attribute_relation(a["attribute"], b["attribute"], specs) is None
            ]  # fmt: skip
    return found


def statement_sweep(shared: Path, specs: dict, embedder: _Embedder) -> None:
    def between(x: str, y: str) -> float:
        u, v = embedder.vectors([x, y])
        return sum(p * q for p, q in zip(u, v))

    def said(f: dict) -> str:
        return predicate(f["content"], f["entity"])

    def cosine(a: dict, b: dict) -> float:
        return between(said(a), said(b))

    def framed(a: dict, b: dict) -> float:  # the statements without their values ("lives in ." for any city)
        return between(*(_frame(said(f), [str(f.get("value") or "")]) for f in (a, b)))

    def alike(a: dict, b: dict) -> float:
        return between(str(a["value"]), str(b["value"])) if a.get("value") and b.get("value") else -1.0

    dev = [shared / "public.jsonl", *(ROOT / "tests/scenarios" / n for n in ("extra.jsonl", "dev_rules.jsonl"))]
    other = unrelated_pairs([*dev, ROOT / "tests/scenarios/heldout_domains.jsonl"], specs, drift=False)
    negatives = [cosine(a, b) for a, b in other]
    names = [name_similarity(a["attribute"], b["attribute"], embedder, specs) for a, b in other]
    drift = [shared / "robustness.jsonl", ROOT / "tests/scenarios/heldout_domains_robustness.jsonl"]
    positives = [(a["attribute"], b["attribute"], cosine(a, b)) for a, b in unrelated_pairs(drift, specs, drift=True)]
    print(f"statements: {len(negatives)} other-slot pairs; share at or above each threshold")
    for t in (0.5, 0.55, 0.6, STATEMENT_SLOT_THRESHOLD, 0.7):
        print(f"  >= {t:.2f}: {sum(n >= t for n in negatives) / len(negatives):.2%}")
    joint = sum(c >= JOINT_STATEMENT and n >= JOINT_NAME for c, n in zip(negatives, names))
    print(f"  names >= {JOINT_NAME} and statements >= {JOINT_STATEMENT}: {joint / len(negatives):.2%}")
    kind = sum(framed(a, b) >= JOINT_STATEMENT and alike(a, b) >= DEFAULT_ALIKE_THRESHOLD for a, b in other)
    print(
        f"  statements without their values >= {JOINT_STATEMENT} and values >= {DEFAULT_ALIKE_THRESHOLD}: "
        f"{kind}/{len(negatives)}"
    )
    for a, b, c in positives:
        n = name_similarity(a, b, embedder, specs)
        one = (c >= STATEMENT_SLOT_THRESHOLD and n >= UNRELATED_NAMES) or (c >= JOINT_STATEMENT and n >= JOINT_NAME)
        print(f"  drift pair {a} / {b}: statements {c:.2f}, names {n:.2f} ({'one slot' if one else 'two slots'})")


def main() -> None:
    """Print the sweep and the best threshold."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "scenarios")
    args = parser.parse_args()
    specs = {s.name: s for s in DEFAULT_ATTRIBUTES}
    embedder = _Embedder(UniversalSentenceEncoderEmbeddings())
    negatives = [name_similarity(a, b, embedder, specs) for a, b in combinations(specs, 2)]
    positives = [name_similarity(a, b, embedder, specs) for a, b in POSITIVES]
    print(f"{len(positives)} positive pairs, {len(negatives)} negative pairs (distinct vocabulary attributes)")
    best = (0.0, 0.0)
    for step in range(50, 91, 2):
        t = step / 100
        tpr = sum(p >= t for p in positives) / len(positives)
        tnr = sum(n < t for n in negatives) / len(negatives)
        balanced = (tpr + tnr) / 2
        best = max(best, (balanced, t))
        print(f"threshold {t:.2f}: positives {tpr:.2f}  negatives {tnr:.3f}  balanced {balanced:.3f}")
    print(f"best {best[1]:.2f} (balanced accuracy {best[0]:.3f}); in use: {DEFAULT_SLOT_THRESHOLD}")
    statement_sweep(args.shared, specs, embedder)
    print("examples quoted in docs/design.md:")
    examples(specs, embedder)


if __name__ == "__main__":
    main()
