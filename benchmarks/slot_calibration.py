"""Calibrate the embedding threshold of slot identity (``_slots.DEFAULT_SLOT_THRESHOLD``).

Embeddings decide only where the vocabulary and the names' structure say nothing. Cases:

* negatives: every pair of distinct vocabulary attributes (different slots by definition);
* positives: the general-English synonyms below (none of them is in the held-out files,
  the robustness generator's list or the vocabulary's aliases).

For each threshold the script prints accuracy on positives and negatives (balanced) and the
best one, using the bundled encoder. Run: ``python benchmarks/slot_calibration.py``.
"""

from __future__ import annotations

from itertools import combinations

from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES
from langchain_lifecycle_memory.write._slot_identity import DEFAULT_SLOT_THRESHOLD, _Embedder, name_similarity

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


def main() -> None:
    """Print the sweep and the best threshold."""
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


if __name__ == "__main__":
    main()
