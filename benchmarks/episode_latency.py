"""Episode encoder cost (issue 13): ingest and search latency with and without it, same run.

``LifecycleMemory.add_episode`` for N synthetic turns, then searches: the first one
(which embeds every new episode with the episode encoder) and the p50 of the next ones.
Both memories use the same default USE store encoder; one retriever has
``episode_embeddings=None`` (and no episode feedback), the other the defaults
(multilingual-e5-small for episodes, BM25 feedback). Last, a new process opens each
store and times its first search: it reads the episode vectors from the namespace's file
next to the snapshot sidecar instead of embedding the episodes again (the centring
background comes from the cache directory after the first process on a machine).

    nice -n 10 python benchmarks/episode_latency.py --episodes 300 --queries 20
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _synthetic import percentile, sentences

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory, LifecycleRetriever
from langchain_lifecycle_memory.store.embeddings import UniversalSentenceEncoderEmbeddings

QUERIES = [
    "What does my sister like?",
    "Which editor does the user use?",
    "What did our team lead buy?",
    "我爸爸喜欢什么？",
    "Any podcast recommendations from the client?",
]


FRESH = """
import json, sys, time
from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory, LifecycleRetriever
from langchain_lifecycle_memory.store.embeddings import UniversalSentenceEncoderEmbeddings
store = ChromaMemoryStore(sys.argv[1], embeddings=UniversalSentenceEncoderEmbeddings())
on = sys.argv[2] == "auto"
retriever = LifecycleRetriever(store=store, episode_embeddings="auto" if on else None, episode_feedback=on)
memory = LifecycleMemory(store, retriever=retriever, retrieval_log=None)
store.embeddings.embed_query("warm the store encoder")
t0 = time.perf_counter()
memory.search(sys.argv[3], "u1", k=10)
print(json.dumps((time.perf_counter() - t0) * 1000))
"""


def fresh_first_search(root: Path, episode_embeddings: object) -> float:
    """First search of a new process on the store at ``root`` (the store encoder already loaded)."""
    mode = "auto" if episode_embeddings == "auto" else "none"
    out = subprocess.run(
        [sys.executable, "-c", FRESH, str(root), mode, QUERIES[0]], capture_output=True, text=True, check=True
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def run(root: Path, episode_embeddings: object, texts: list[str], queries: int) -> dict[str, float]:
    store = ChromaMemoryStore(root, embeddings=UniversalSentenceEncoderEmbeddings())
    on = episode_embeddings is not None
    retriever = LifecycleRetriever(store=store, episode_embeddings=episode_embeddings, episode_feedback=on)
    memory = LifecycleMemory(store, retriever=retriever, retrieval_log=None)
    t0 = time.perf_counter()
    for i, text in enumerate(texts):
        memory.add_episode(text, "u1", source_id=f"t{i}")
    ingest = (time.perf_counter() - t0) / len(texts) * 1000
    t0 = time.perf_counter()
    memory.search(QUERIES[0], "u1", k=10)
    first = (time.perf_counter() - t0) * 1000
    times = []
    for i in range(queries):
        t0 = time.perf_counter()
        memory.search(f"{QUERIES[i % len(QUERIES)]} ({i})", "u1", k=10)
        times.append((time.perf_counter() - t0) * 1000)
    return {"put ms/episode": ingest, "first search ms": first, "search p50 ms": percentile(times, 50)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--queries", type=int, default=20)
    args = parser.parse_args()
    texts = sentences(args.episodes)
    with tempfile.TemporaryDirectory(dir=Path(__file__).parent) as tmp:
        rows = {
            "USE only (episode_embeddings=None)": run(Path(tmp) / "a", None, texts, args.queries),
            "USE + e5 for episodes (default)": run(Path(tmp) / "b", "auto", texts, args.queries),
        }
        for row, (sub, mode) in zip(rows.values(), (("a", None), ("b", "auto")), strict=True):
            row["new process, first search ms"] = fresh_first_search(Path(tmp) / sub, mode)
    print(f"{args.episodes} episodes, {args.queries} searches")
    for name, row in rows.items():
        print(f"{name:40s} " + "  ".join(f"{k} {v:8.1f}" for k, v in row.items()))


if __name__ == "__main__":
    main()
