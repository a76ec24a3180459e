"""Extraction alone: slot-level precision / recall of the rule extractor against gold facts.

Every ``turn`` of each scenario file is replayed through ``extract_rule_facts`` at the turn's own
time, with no store and no retrieval, so the score says what the extractor found and nothing about
what a probe later retrieved. Attribute names are compared *by meaning*, which here means not at all:
an extracted fact matches a gold fact of the same turn when

* the operation agrees (an assertion matches an assertion, a retraction a retraction),
* the entity is of the same kind (the speaker ``user`` versus another person), and
* the values match: normalised (NFKC, case, spaces, quotes and book-title marks dropped), one
  contains the other.

Each gold fact is matched at most once; statements the extractor keeps as said (no slot, no value)
are not value extractions and are left out. Precision counts every other extracted fact, including those from
turns whose gold is empty (a question or a hypothetical that became a memory is a wrong memory);
``on_empty`` is how many came from such turns. ``quiet`` counts the turns whose gold is empty (chit-chat,
questions, replies) and ``kept`` how many of them still leave a memory of any kind, statements kept as said
included. Turns whose ``user`` text is a placeholder (one
character, e.g. ``"x"`` for facts injected by hand) are skipped.

Held-out files are reported as numbers only: ``--show-misses`` refuses the held-out test corpora
(``heldout_domains*``, ``heldout_rule_blind``), which must never be read miss by miss.

Usage:
    python benchmarks/rule_extraction_eval.py [FILE.jsonl ...] [--json OUT] [--show-misses]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langchain_lifecycle_memory.schema import Fact, ensure_aware
from langchain_lifecycle_memory.write.extraction import extract_rule_facts

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "scenarios"
DEFAULT_FILES = (
    SHARED / "public.jsonl",
    SHARED / "robustness.jsonl",
    ROOT / "tests" / "scenarios" / "dev_rules.jsonl",
    ROOT / "tests" / "scenarios" / "heldout_recall.jsonl",
    ROOT / "tests" / "scenarios" / "heldout_reconcile.jsonl",
    ROOT / "tests" / "scenarios" / "heldout_rule_sentences.jsonl",
    ROOT / "tests" / "scenarios" / "heldout_rule_blind.jsonl",
    ROOT / "tests" / "scenarios" / "extra.jsonl",
    ROOT / "tests" / "scenarios" / "heldout_domains.jsonl",
    ROOT / "tests" / "scenarios" / "heldout_domains_robustness.jsonl",
)
NUMBERS_ONLY = re.compile(r"^heldout_(?:domains|rule_blind)")
_DROP = re.compile(r"[\s\"'“”‘’《》「」〈〉.,;:!?。，；：！？()（）-]+")


def norm(value: str | None) -> str:
    """A value for comparison: NFKC, casefolded, spaces and punctuation removed."""
    return _DROP.sub("", unicodedata.normalize("NFKC", value or "").casefold())


def values_match(extracted: str | None, gold: str | None) -> bool:
    a, b = norm(extracted), norm(gold)
    if not a or not b:
        return False
    short = min(a, b, key=len)
    if len(short) < 2 and not re.search(r"[\u3400-\u9fff]", short):
        return a == b
    return a in b or b in a


def _other(entity: str, speaker: str = "user") -> bool:
    return entity != speaker


def _match(extracted: Fact, gold: dict[str, Any]) -> bool:
    return (
        extracted.operation == gold.get("operation", "assert")
        and _other(extracted.entity) == _other(gold["entity"])
        and values_match(extracted.value, gold.get("value"))
    )


@dataclass
class FileScore:
    file: str
    turns: int = 0
    turns_with_gold: int = 0
    gold: int = 0
    extracted: int = 0
    matched: int = 0
    on_empty: int = 0
    quiet: int = 0
    kept: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.matched / self.extracted if self.extracted else 1.0

    @property
    def recall(self) -> float:
        return self.matched / self.gold if self.gold else 1.0


def _turns(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            scenario = json.loads(line)
            out += [{**s, "_id": scenario["id"]} for s in scenario["steps"] if s.get("type") == "turn"]
    return out


def _score_turn(turn: dict[str, Any], score: FileScore) -> None:
    gold = list(turn.get("facts") or [])
    facts = extract_rule_facts(turn["user"], now=ensure_aware(turn.get("at")) if turn.get("at") else None)
    score.quiet += not gold
    score.kept += bool(facts) and not gold
    facts = [f for f in facts if f.value is not None]  # statements kept as said carry no slot value to score
    score.turns += 1
    score.turns_with_gold += bool(gold)
    score.gold += len(gold)
    score.extracted += len(facts)
    score.on_empty += 0 if gold else len(facts)
    left = list(gold)
    wrong = []
    for fact in facts:
        hit = next((g for g in left if _match(fact, g)), None)
        if hit is None:
            wrong.append((fact.entity, fact.attribute, fact.value, fact.operation))
        else:
            left.remove(hit)
            score.matched += 1
    if left or wrong:
        missed = [(g["entity"], g.get("attribute"), g.get("value"), g.get("operation", "assert")) for g in left]
        score.misses.append({"scenario": turn["_id"], "user": turn["user"], "missed": missed, "wrong": wrong})


def score_file(path: Path) -> FileScore:
    score = FileScore(path.name)
    for turn in _turns(path):
        if len(turn.get("user", "").strip()) > 1:
            _score_turn(turn, score)
    return score


def _row(s: FileScore) -> str:
    return (
        f"{s.file:<36} {s.turns:>5} {s.turns_with_gold:>5} {s.gold:>5} {s.extracted:>5} {s.matched:>5} "
        f"{s.on_empty:>5} {s.precision:>6.1%} {s.recall:>6.1%} {s.quiet:>5} {s.kept:>5}"
    )


def _print_misses(s: FileScore) -> None:
    if NUMBERS_ONLY.match(s.file):
        print(f"  ({s.file}: held-out test corpus, numbers only)")
        return
    for miss in s.misses:
        print(f"  [{s.file}] {miss['scenario']}: {miss['user']}")
        for m in miss["missed"]:
            print(f"      missed {m}")
        for w in miss["wrong"]:
            print(f"      wrong  {w}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, help="scenario files (default: public, dev and held-out)")
    parser.add_argument("--json", type=Path, help="write the scores as JSON")
    parser.add_argument("--show-misses", action="store_true", help="list missed and wrong facts (not held-out)")
    args = parser.parse_args(argv)
    files = [f for f in (args.files or DEFAULT_FILES) if f.exists()]
    scores = [score_file(f) for f in files]
    head = ("turns", "w/gold", "gold", "extr", "match", "empty")
    print(f"{'file':<36} " + " ".join(f"{h:>5}" for h in head) + f" {'prec':>6} {'recall':>6} {'quiet':>5} {'kept':>5}")
    for s in scores:
        print(_row(s))
    if args.show_misses:
        for s in scores:
            _print_misses(s)
    if args.json:
        rows = [
            {**{k: v for k, v in asdict(s).items() if k != "misses"}, "precision": s.precision, "recall": s.recall}
            for s in scores
        ]
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
