"""A small namespace's first search: documents from the SQLite file vs through Chroma's ``get``.

    nice -n 10 python benchmarks/small_read.py [--users 1200] [--records 20]

Loads ``--users`` x ``--records`` into ours (bucketed, 16 buckets) and plain
``langchain-chroma`` (16 buckets + a tenant filter, as ``scale.py --parts users``) in one
embedded database, then searches every user once, ours then the baseline, with
``store.direct_reads`` alternating on and off from one user to the next (off: the
documents come with the vectors in one Chroma ``get``; on: vectors from Chroma, documents
from the file, ``_namespace_reads._small_rows``). Prints p50/p95 of each, the three reads
alone (Chroma's ``get`` of documents and vectors, of vectors only, the file's documents), the time of
the write-ahead-log check (``_sqlite_read._caught_up``) that the full read makes and the
small read skips, after the load and after a write to most buckets. Diagnostic.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import QUERIES, percentile, sentences
from scale import client, users_system


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=1200)
    parser.add_argument("--records", type=int, default=20)
    args = parser.parse_args()
    cfg = {"users": args.users, "records": args.records, "layout": "bucketed"}
    workdir = Path(tempfile.mkdtemp(prefix="small-read-"))
    cl = client(workdir, None)
    texts = sentences(args.users * args.records)
    t0 = time.perf_counter()
    ours = users_system(cfg, cl, "ours", texts)
    base = users_system(cfg, cl, "langchain-chroma", texts)
    print(f"loaded {args.users} x {args.records} into both in {time.perf_counter() - t0:.0f} s")
    store = ours.store  # type: ignore[attr-defined]
    samples: dict[str, list[float]] = {"file": [], "chroma get": [], "langchain-chroma": []}
    ours(0, QUERIES[0])
    base(0, QUERIES[0])
    for u in range(1, args.users):
        q = QUERIES[u % len(QUERIES)]
        variant = "file" if u % 2 else "chroma get"
        store.direct_reads = variant == "file"
        t0 = time.perf_counter()
        ours(u, q)
        samples[variant].append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        base(u, q)
        samples["langchain-chroma"].append((time.perf_counter() - t0) * 1000)
    store.direct_reads = True
    print("first search of each user, ms")
    for name, xs in samples.items():
        print(f"  {name:18s} p50 {percentile(xs, 50):6.2f}  p95 {percentile(xs, 95):6.2f}  (n={len(xs)})")
    from langchain_lifecycle_memory.store._sqlite_read import read_documents

    reads: dict[str, list[float]] = {"get documents + vectors": [], "get vectors": [], "file documents": []}
    path = str(workdir / "chroma.sqlite3")
    for u in range(min(args.users, 300)):  # the three reads alone, each user's namespace in its bucket
        view = store._reader(("memories", f"u{u}"))
        found = store._in_file(view)  # (database path, collection id, tenant)
        for name, read in (
            ("get documents + vectors", lambda v=view: v.get(include=["documents", "embeddings"], limit=257)),
            ("get vectors", lambda v=view: v.get(include=["embeddings"], limit=257)),
            ("file documents", lambda f=found: read_documents(*f, check_log=False)),
        ):
            t0 = time.perf_counter()
            read()
            reads[name].append((time.perf_counter() - t0) * 1000)
    print(f"one {args.records}-record namespace's read alone, ms")
    for name, xs in reads.items():
        print(f"  {name:24s} p50 {percentile(xs, 50):6.3f}")
    conn = sqlite3.connect(path)
    entries = conn.execute("SELECT count(*) FROM embeddings_queue").fetchone()[0]
    rows = conn.execute(
        "SELECT s.collection, s.id FROM segments s JOIN collections c ON c.id = s.collection "
        "WHERE s.scope = 'METADATA' AND c.name LIKE 'scale.%'"
    ).fetchall()
    from langchain_lifecycle_memory.store._sqlite_read import _caught_up

    def timed(when: str) -> None:
        t0 = time.perf_counter()
        answers = [_caught_up(conn, str(c), str(s)) for c, s in rows * 5]
        ms = (time.perf_counter() - t0) * 1000 / len(answers)
        print(f"log check {when}: {ms:.3f} ms per collection (all caught up: {all(answers)})")

    print(f"{entries} log entries; the baseline's were written after ours")
    timed("after the load")
    from langchain_lifecycle_memory import MemoryRecord

    for u in range(64):  # one more write to most buckets: their applied positions near the log's end
        store.put_record(MemoryRecord(namespace=("memories", f"u{u}"), content=f"One more note {u}"))
    timed("after a write to most buckets")


if __name__ == "__main__":
    main()
