"""Does Chroma's query let Python work run beside it? (Whether a search could overlap its steps.)

Times ``--queries`` dense queries of a ``--rows``-row collection alone, then again while
another thread runs pure Python. If the query released the GIL for its whole run, the
second time would stay close to the first on a machine with a free core; if it takes the
GIL back at points, each of those waits on the interpreter's switch interval (5 ms).
chromadb directly, embedded, random 64-d vectors, 60 neighbours, distances only (the
retriever's dense query).

Run: ``python benchmarks/query_gil.py [--rows 50000] [--queries 400]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time

import numpy as np


def main() -> None:
    import chromadb

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=50000)
    parser.add_argument("--queries", type=int, default=400)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    client = chromadb.PersistentClient(path=tempfile.mkdtemp(prefix="query-gil-"))
    col = client.get_or_create_collection(
        "query-gil", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
    )
    for start in range(0, args.rows, 5000):
        m = min(5000, args.rows - start)
        col.upsert(ids=[str(start + j) for j in range(m)], embeddings=rng.normal(size=(m, 64)).astype(np.float32))
    queries = [rng.normal(size=64).astype(np.float32).tolist() for _ in range(args.queries)]

    def run() -> float:
        t0 = time.perf_counter()
        for q in queries:
            col.query(query_embeddings=[q], n_results=60, include=["distances"])
        return (time.perf_counter() - t0) * 1000 / len(queries)

    alone = run()
    stop, spins = [False], [0]

    def spinner() -> None:
        n = 0
        while not stop[0]:
            n += 1
        spins[0] = n

    thread = threading.Thread(target=spinner)
    thread.start()
    beside = run()
    stop[0] = True
    thread.join()
    print(f"switch interval {sys.getswitchinterval() * 1000:.0f} ms, {args.rows} rows, {args.queries} queries")
    print(f"query alone: {alone:.2f} ms; beside a Python thread: {beside:.2f} ms ({beside / alone:.1f}x)")
    print(f"the Python thread's loop ran {spins[0]:,} times meanwhile")


if __name__ == "__main__":
    main()
