"""LoCoMo evidence recall for every retriever; writes ``benchmarks/results/locomo.json``.

A thin wrapper around ``python -m langchain_lifecycle_memory.eval locomo`` with the
project's defaults (all 7 conversations of ``../shared/data/locomo/locomo7.json``, the
audit file when present, k = 5 and 10)::

    python benchmarks/locomo_recall.py                          # full run
    python benchmarks/locomo_recall.py --limit-conversations 1  # smoke run
    python benchmarks/locomo_recall.py --text date+prev+next --variant 'rrf={"fusion": "rrf"}'

``--study FORMAT[,FORMAT...]`` instead runs an offline channel study (no store, no
retriever): BM25 with the package's tokeniser and USE cosines over the turns written in
each text format, ranked by BM25, dense, weighted RRF and a linear blend of max-normalised
BM25 with cosine, to show what the retriever's fusion could reach::

    python benchmarks/locomo_recall.py --study speaker,prev,date+prev+next

Extra arguments are passed on to the CLI. The results hold numbers only, never LoCoMo text
(the data is CC BY-NC 4.0 and stays in ``shared/``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from langchain_lifecycle_memory.eval.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "locomo" / "locomo7.json"
AUDIT = DATA.parent / "locomo_audit_errors.json"
OUT = ROOT / "benchmarks" / "results" / "locomo.json"


def _ranks(scores: np.ndarray) -> np.ndarray:
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    return ranks


def study(formats: list[str], ks: tuple[int, ...] = (5, 10)) -> dict[str, dict[str, dict[str, float]]]:
    """Recall@k of offline rankers per text format (see the module docstring)."""
    import bm25s

    from langchain_lifecycle_memory.eval.locomo import CachedEmbeddings, apply_audit, index_text, load_locomo
    from langchain_lifecycle_memory.eval.locomo import recall_at_k as recall
    from langchain_lifecycle_memory.read.lexical import tokenize
    from langchain_lifecycle_memory.store.embeddings import UniversalSentenceEncoderEmbeddings

    conversations = load_locomo(DATA)
    if AUDIT.is_file():
        apply_audit(conversations, json.loads(AUDIT.read_text(encoding="utf-8")))
    emb = CachedEmbeddings(UniversalSentenceEncoderEmbeddings())
    scores: dict[str, dict[int, dict[str, list[float]]]] = {}

    def add(name: str, category: str, evidence: list[str], top: list[str]) -> None:
        by_k = scores.setdefault(name, {k: {c: [] for c in ("all", "1", "2", "3", "4")} for k in ks})
        for k in ks:
            by_k[k]["all"].append(recall(evidence, top, k))
            by_k[k][category].append(recall(evidence, top, k))

    for conv in conversations:
        turns, questions = conv.turns, [q for q in conv.questions if q.evidence]
        ids = [t.dia_id for t in turns]
        qv = np.asarray(emb.embed_documents([q.question for q in questions]))
        qv /= np.linalg.norm(qv, axis=1, keepdims=True)
        for fmt in formats:
            texts = [
                index_text(t, fmt, p, n) for t, p, n in zip(turns, [None, *turns[:-1]], [*turns[1:], None], strict=True)
            ]
            x = np.asarray(emb.embed_documents(texts))
            cosines = qv @ (x / np.linalg.norm(x, axis=1, keepdims=True)).T
            corpus = [tokenize(t) or [""] for t in texts]
            index = bm25s.BM25(method="lucene")
            index.index(corpus, show_progress=False)
            vocab = {tok for doc in corpus for tok in doc}
            for i, q in enumerate(questions):
                tokens = [t for t in dict.fromkeys(tokenize(q.question)) if t in vocab]
                bm = np.asarray(index.get_scores(tokens)) if tokens else np.zeros(len(turns))
                cos = cosines[i]

                def top(s: np.ndarray, ids: list[str] = ids) -> list[str]:
                    return [ids[j] for j in np.argsort(-s, kind="stable")[: max(ks)]]

                add(f"bm25 [{fmt}]", q.category, q.evidence, top(bm))
                add(f"dense [{fmt}]", q.category, q.evidence, top(cos))
                rb, rc = _ranks(bm), _ranks(cos)
                for wd in (0.3, 1.0):
                    add(f"rrf dense-weight {wd} [{fmt}]", q.category, q.evidence, top(1 / (60 + rb) + wd / (60 + rc)))
                norm = bm / (bm.max() or 1.0)
                for a in (0.35, 0.5):
                    add(f"linear cos-weight {a} [{fmt}]", q.category, q.evidence, top((1 - a) * norm + a * cos))
        print(conv.sample_id, file=sys.stderr)
    return {
        name: {f"recall@{k}": {c: round(float(np.mean(v)), 4) for c, v in by_k[k].items()} for k in ks}
        for name, by_k in scores.items()
    }


if __name__ == "__main__":
    extra = sys.argv[1:]
    if extra[:1] == ["--study"]:
        result = study(extra[1].split(",") if len(extra) > 1 else ["speaker"])
        for name, metrics in sorted(result.items(), key=lambda kv: -kv[1]["recall@10"]["all"]):
            r5, r10 = metrics["recall@5"], metrics["recall@10"]
            cats = " ".join(f"{c}:{r10[c]:.3f}" for c in "1234")
            print(f"{name:42s} @5 {r5['all']:.3f}  @10 {r10['all']:.3f}  ({cats})")
        sys.exit(0)
    args = ["locomo", str(DATA), "--k", "5", "10"]
    if "--json" not in extra:
        args += ["--json", str(OUT)]
    sys.exit(main(args + extra))
