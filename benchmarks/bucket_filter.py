"""Chroma's tenant-filtered query against an unfiltered one of the same bucket, by the tenant's share.

Chooses ``store/_bucket_query.py``'s ``MAX_UNFILTERED_FETCH``: a bucket of ``--rows`` rows
holds tenants of the given shares (the rest one filler tenant); for each, the p50 of a
dense query for ``--n`` neighbours through ``where={"_ns": tenant}`` and of an unfiltered
query for ``n x rows / tenant rows x 1.25 + 16`` rows (the store's fetch), keeping the
tenant's own by id prefix, and how many of its own that found (at least ``n``: the
unfiltered answer is usable). chromadb directly, random 64-d vectors.

Run: ``python benchmarks/bucket_filter.py [--rows 60000] [--shares 0.01 0.05 0.1 0.3] [--server HOST:PORT]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Any

import numpy as np


def p50(rng: np.random.Generator, query: Any, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        vector = rng.normal(size=64).astype(np.float32).tolist()
        t0 = time.perf_counter()
        query(vector)
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def main() -> None:
    import chromadb

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=60000)
    parser.add_argument("--shares", type=float, nargs="+", default=[0.01, 0.03, 0.05, 0.1, 0.17, 0.3])
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--server", help="HOST:PORT of a `chroma run` server (default: embedded)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    if args.server:
        host, _, port = args.server.rpartition(":")
        client: Any = chromadb.HttpClient(host=host, port=int(port))
    else:
        client = chromadb.PersistentClient(path=tempfile.mkdtemp(prefix="bucket-filter-"))
    name = f"bucket-filter-{rng.integers(1 << 30)}"
    col = client.get_or_create_collection(name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}})
    sizes = [int(s * args.rows) for s in args.shares]
    sizes.append(args.rows - sum(sizes))
    vectors = rng.normal(size=(args.rows, 64)).astype(np.float32)
    at = 0
    for tenant, size in enumerate(sizes):
        for start in range(0, size, 4000):
            m = min(4000, size - start)
            col.upsert(
                ids=[f"t{tenant}\0{at + j}" for j in range(m)],
                embeddings=vectors[at : at + m],
                metadatas=[{"_ns": f"t{tenant}"}] * m,
            )
            at += m
    where = "server" if args.server else "embedded"
    print(f"{where}: one bucket of {args.rows} rows, {args.n} neighbours wanted, p50 of {args.repeat} queries (ms)")
    print("| tenant share | tenant rows | filtered | unfiltered fetch | unfiltered | own rows found (min) |")
    print("|---|---|---|---|---|---|")
    for tenant, share in enumerate(args.shares):
        prefix = f"t{tenant}\0"
        fetch = min(args.rows, int(args.n / share * 1.25) + 16)

        def filtered(v: list[float], t: int = tenant) -> Any:
            return col.query(query_embeddings=[v], n_results=args.n, where={"_ns": f"t{t}"}, include=["distances"])

        def unfiltered(v: list[float], f: int = fetch, p: str = prefix) -> int:
            res = col.query(query_embeddings=[v], n_results=f, include=["distances"])
            return sum(i.startswith(p) for i in res["ids"][0])

        found = min(unfiltered(rng.normal(size=64).astype(np.float32).tolist()) for _ in range(5))
        print(
            f"| {share:.2f} | {sizes[tenant]} | {p50(rng, filtered, args.repeat):.1f} | {fetch} "
            f"| {p50(rng, unfiltered, args.repeat):.1f} | {found} |",
            flush=True,
        )
    if args.server:
        client.delete_collection(name)


if __name__ == "__main__":
    main()
