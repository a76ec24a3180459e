"""Why the read path keeps its own BM25 index rather than ``bm25s``: the same corpus, the same tokens, timed.

A search needs a namespace's BM25 index up to date after every write. ``bm25s`` builds an index
in one go and has no way to add a document, so a write means a rebuild; ``read/lexical.py``'s
``LexicalIndex`` adds (and drops) documents in place. Both are fed the package's own tokens
(``read.lexical.tokenize``: stemmed latin words, CJK unigrams and bigrams); ``bm25s`` gets them
already tokenised for each rebuild (tokenising is not counted against it after the first build).

Printed: build time for ``--size`` texts, the time to take one more text (``--writes`` times), and a
query's scores over the whole index (the ``QUERIES`` of ``_synthetic.py``), p50 each.

Run: ``python benchmarks/bm25_choice.py [--size 20000] [--writes 20]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import QUERIES, percentile, sentences

from langchain_lifecycle_memory.read.lexical import LexicalIndex, tokenize


def ours(texts: list[str], extra: list[str]) -> dict[str, float]:
    t0 = time.perf_counter()
    index = LexicalIndex(texts)
    build = time.perf_counter() - t0
    writes = []
    for text in extra:
        t0 = time.perf_counter()
        index = index.updated(np.arange(index.size), [text])
        writes.append(time.perf_counter() - t0)
    queries = []
    for q in QUERIES:
        t0 = time.perf_counter()
        index.scores(q)
        queries.append(time.perf_counter() - t0)
    return {"build_s": build, "write_ms": percentile(writes, 50) * 1e3, "query_ms": percentile(queries, 50) * 1e3}


def with_bm25s(texts: list[str], extra: list[str]) -> dict[str, float]:
    import bm25s

    def built(tokens: list[list[str]]) -> bm25s.BM25:
        index = bm25s.BM25(method="lucene")
        index.index(tokens, show_progress=False)
        return index

    t0 = time.perf_counter()
    tokens = [tokenize(t) for t in texts]
    index = built(tokens)
    build = time.perf_counter() - t0
    writes = []
    for text in extra:
        t0 = time.perf_counter()
        tokens.append(tokenize(text))
        index = built(tokens)
        writes.append(time.perf_counter() - t0)
    queries = []
    for q in QUERIES:
        t0 = time.perf_counter()
        index.get_scores(tokenize(q))
        queries.append(time.perf_counter() - t0)
    return {"build_s": build, "write_ms": percentile(writes, 50) * 1e3, "query_ms": percentile(queries, 50) * 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--writes", type=int, default=20)
    args = parser.parse_args()
    corpus = sentences(args.size + args.writes)
    texts, extra = corpus[: args.size], corpus[args.size :]
    print(f"{args.size:,} texts, {args.writes} writes of one text, {len(QUERIES)} queries (p50)")
    print(f"{'index':<14}{'build (s)':>12}{'one write (ms)':>18}{'query (ms)':>14}")
    for name, run in (("LexicalIndex", ours), ("bm25s", with_bm25s)):
        r = run(texts, extra)
        print(f"{name:<14}{r['build_s']:>12.2f}{r['write_ms']:>18.1f}{r['query_ms']:>14.2f}")


if __name__ == "__main__":
    main()
