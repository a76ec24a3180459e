"""The number behind ``SAID_THRESHOLD`` (``write/_grounding.py``): is an extracted statement in the user's words?

*Said*: each gold fact's statement against the user turn it was written from, in the development files
(the public sample, ``extra.jsonl``, ``dev_rules.jsonl``), including statements written in the other
language than the turn. *Not said*: the statements of the extraction prompt's own example (what a small
model copies when a turn gives it nothing: "The user now uses the VS Code editor.") against every turn that
does not mention its value. Each pair is the cosine of the two texts with the bundled encoder. Prints the
share of each group below a sweep of thresholds. Run: ``python benchmarks/said_calibration.py [--shared PATH]``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from _results import dev_files

from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings
from langchain_lifecycle_memory.write._grounding import SAID_THRESHOLD, value_said

ROOT = Path(__file__).resolve().parents[1]
PROMPT_EXAMPLES = {  # the statements the extraction prompt shows (write/_prompts.py), with their values
    "The user now uses the VS Code editor.": "vs code",
    "用户喜欢使用 Vim 编辑器": "vim",
    "The user likes using the Vim editor.": "vim",
    "I'm using VS Code for coding.": "vs code",
    "用户不喝酒": "酒",
}


def turns_and_facts(paths: list[Path]) -> list[tuple[str, list[tuple[str, str | None]]]]:
    out = []
    for path in (p for p in paths if p.exists()):
        for line in path.read_text(encoding="utf-8").splitlines():
            for step in json.loads(line).get("steps", []) if line.strip() else []:
                if step.get("type") == "turn" and len((step.get("user") or "").strip()) > 2:  # not a placeholder
                    facts = [f for f in step.get("facts") or [] if f.get("content")]
                    out.append((step["user"], [(f["content"], f.get("value")) for f in facts]))
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
    said = [(fact, turn) for turn, facts in data for fact, _ in facts]
    # What the check drops needs both: the value not said (the statement is then all there is) and a low cosine.
    unsaid_value = np.array([not value_said(v, turn) for turn, facts in data for _, v in facts])
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
