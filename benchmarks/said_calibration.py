"""The number behind ``SAID_THRESHOLD`` (``write/_grounding.py``): is an extracted statement in the user's words?

*Said*: each gold fact's statement against the user turn it was written from, in the development files
(the public sample, ``extra.jsonl``, ``dev_rules.jsonl``), including statements written in the other
language than the turn. *Not said*: the statements of the extraction prompt's own example (what a small
model copies when a turn gives it nothing: "The user now uses the VS Code editor.") against every turn that
does not mention its value. Each pair is the cosine of the two texts with the bundled encoder. Prints the
share of each group below a sweep of thresholds. Run: ``python benchmarks/said_calibration.py [--shared PATH]``.

Then the number behind ``FILED_THRESHOLD``: each development turn against the prompt's example slot
(``EXAMPLE_SLOT_TOPIC``), split into turns with a gold fact in that slot and the others, beside the turns a
small model was seen to misfile there (``MISFILED``, from the head-to-head runs).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
from _results import dev_files

from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings
from langchain_lifecycle_memory.write._grounding import (
    EXAMPLE_SLOT,
    EXAMPLE_SLOT_TOPIC,
    FILED_THRESHOLD,
    SAID_THRESHOLD,
    value_said,
)

ROOT = Path(__file__).resolve().parents[1]
PROMPT_EXAMPLES = {  # the statements the extraction prompt shows (write/_prompts.py), with their values
    "The user now uses the VS Code editor.": "vs code",
    "用户喜欢使用 Vim 编辑器": "vim",
    "The user likes using the Vim editor.": "vim",
    "I'm using VS Code for coding.": "vs code",
    "用户不喝酒": "酒",
}


MISFILED = (  # turns whose fact a 1.5B model filed as the example slot (benchmarks/results/h2h*/ours.json)
    "Got an e-bike last month. Riding along the river to the office takes 20 minutes and I arrive way less grumpy.",
    "我爸刚换了华为 Mate 60，天天拿着拍照。",
)


def turns_and_facts(paths: list[Path]) -> list[tuple[str, list[tuple[str, str | None, str | None]]]]:
    out = []
    for path in (p for p in paths if p.exists()):
        for line in path.read_text(encoding="utf-8").splitlines():
            for step in json.loads(line).get("steps", []) if line.strip() else []:
                if step.get("type") == "turn" and len((step.get("user") or "").strip()) > 2:  # not a placeholder
                    facts = [f for f in step.get("facts") or [] if f.get("content")]
                    out.append((step["user"], [(f["content"], f.get("value"), f.get("attribute")) for f in facts]))
    return out


def cosines(embedder: UniversalSentenceEncoderEmbeddings, pairs: list[tuple[str, str]]) -> np.ndarray:
    texts = sorted({t for pair in pairs for t in pair})
    matrix = np.array(embedder.embed_documents(texts))
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    index = {t: i for i, t in enumerate(texts)}
    return np.array([float(matrix[index[a]] @ matrix[index[b]]) for a, b in pairs])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "scenarios")
    args = parser.parse_args()
    data = turns_and_facts(dev_files(args.shared))
    said = [(fact, turn) for turn, facts in data for fact, _, _ in facts]
    # What the check drops needs both: the value not said (the statement is then all there is) and a low cosine.
    unsaid_value = np.array([not value_said(v, turn) for turn, facts in data for _, v, _ in facts])
    unsaid = [(ex, turn) for turn, _ in data for ex, value in PROMPT_EXAMPLES.items() if value not in turn.casefold()]
    embedder = UniversalSentenceEncoderEmbeddings()
    s, u = cosines(embedder, said), cosines(embedder, unsaid)
    print(f"said: {len(s)} statement/turn pairs, median {np.median(s):.3f}")
    print(f"not said: {len(u)} prompt-example/turn pairs, median {np.median(u):.3f}")
    print(f"said, with a value not in the turn either: {int(unsaid_value.sum())}")
    print("threshold  said below  said below, value unsaid (dropped)  not said below (dropped)")
    for t in (0.05, 0.08, 0.10, 0.12, 0.15, 0.20):
        mark = "  <- SAID_THRESHOLD" if abs(t - SAID_THRESHOLD) < 1e-9 else ""
        dropped = int(((s < t) & unsaid_value).sum())
        print(f"{t:9.2f}  {np.mean(s < t):9.1%}  {dropped:33d}  {np.mean(u < t):23.1%}{mark}")
    low = sorted(zip(s, said))[:3]
    print("lowest said pairs:", [(round(float(c), 3), f[:50]) for c, (f, _) in low])
    filed(embedder, data)
    return 0


def filed(embedder: UniversalSentenceEncoderEmbeddings, data: list[tuple[str, list[Any]]]) -> None:
    """Turns against the example slot's topic: with a fact in that slot, without one, and misfiled ones."""
    turns = dict.fromkeys(turn for turn, _ in data)
    inside = {turn for turn, facts in data if any(attribute == EXAMPLE_SLOT for _, _, attribute in facts)}
    c = dict(zip(turns, cosines(embedder, [(t, EXAMPLE_SLOT_TOPIC) for t in turns])))
    yes, no = np.array([c[t] for t in turns if t in inside]), np.array([c[t] for t in turns if t not in inside])
    bad = cosines(embedder, [(t, EXAMPLE_SLOT_TOPIC) for t in MISFILED])
    print(f"\n{EXAMPLE_SLOT!r} turns: {len(yes)}, lowest {yes.min():.3f}; other turns: {len(no)}")
    print(f"misfiled turns: {bad.round(3)}")
    print("threshold  slot turns below  other turns below")
    for t in (0.03, 0.05, 0.08, 0.10):
        mark = "  <- FILED_THRESHOLD" if abs(t - FILED_THRESHOLD) < 1e-9 else ""
        print(f"{t:9.2f}  {np.mean(yes < t):16.1%}  {np.mean(no < t):17.1%}{mark}")


if __name__ == "__main__":
    raise SystemExit(main())
