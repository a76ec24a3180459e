"""Where a warm search of a big namespace goes, next to plain ``langchain-chroma``.

    nice -n 10 python benchmarks/warm_profile.py --size 50000 [--layout collection] [--workdir DIR]

Loads ``--size`` episode records into ours and a ``langchain-chroma`` collection (the
hashing embedder of ``scale.py``; ``--workdir`` keeps the data for the next run), then
searches both with the same queries back to back (as ``scale.py --parts warm``) and
prints p50 of each, the ratio, and ``langchain-chroma`` through ``as_retriever().invoke``
(which pays LangChain's retriever callbacks, as ours does). ``--profile N`` adds a
cProfile of N warm searches of ours (top functions by own and cumulative time). ``--serial``
adds ours with the dense query run in the search's own thread (``LIFECYCLE_MEMORY_OVERLAP=0``,
set per call) to the same interleaving; ``--per-query`` prints each query's p50 per system.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import QUERIES, percentile, sentences
from scale import HashEmbeddings, client


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50000)
    parser.add_argument("--layout", choices=["bucketed", "collection"], default="bucketed")
    parser.add_argument("--workdir", default=None, help="keep (and reuse) the loaded stores here")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--profile", type=int, default=0, help="cProfile this many warm searches of ours")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--serial", action="store_true", help="also ours with LIFECYCLE_MEMORY_OVERLAP=0")
    parser.add_argument("--per-query", action="store_true", help="each query's p50 per system")
    args = parser.parse_args()

    from langchain_chroma import Chroma

    from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord
    from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="warm-profile-"))
    fresh = not (workdir / "loaded").exists()
    emb, ns = HashEmbeddings(), ("memories", "big")
    cl = client(workdir, None)
    store = ChromaMemoryStore(client=cl, embeddings=emb, collection_prefix="scale", layout=args.layout)
    lc = Chroma(client=cl, collection_name="scale_lc", embedding_function=emb)
    t0 = time.perf_counter()
    if fresh:
        texts = sentences(args.size)
        for i in range(0, args.size, 2000):
            store.put_records([MemoryRecord(namespace=ns, content=t, kind="episode") for t in texts[i : i + 2000]])
            lc.add_texts(texts[i : i + 2000], metadatas=[{"n": j} for j in range(i, min(args.size, i + 2000))])
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "loaded").write_text(str(args.size))
    print(f"workdir {workdir} layout {store.layout} load {time.perf_counter() - t0:.1f} s", flush=True)
    retriever = LifecycleRetriever(store=store, namespace=ns, k=10)
    lc_retriever = lc.as_retriever(search_kwargs={"k": 10})
    t0 = time.perf_counter()
    retriever.invoke(QUERIES[0])
    print(f"first search {1000 * (time.perf_counter() - t0):.0f} ms", flush=True)
    lc.similarity_search(QUERIES[0], k=10)
    lc_retriever.invoke(QUERIES[0])
    systems = {
        "ours": retriever.invoke,
        "langchain-chroma": lambda q: lc.similarity_search(q, k=10),
        "langchain-chroma retriever": lc_retriever.invoke,
    }
    if args.serial:
        systems["ours, serial"] = lambda q: serial(retriever, q)
    samples: dict[str, list[float]] = {name: [] for name in systems}
    by_query: dict[tuple[str, str], list[float]] = {}
    for n in range(args.queries):
        q = QUERIES[n % len(QUERIES)]
        for name, search in systems.items():
            t0 = time.perf_counter()
            search(q)
            samples[name].append((time.perf_counter() - t0) * 1000)
            by_query.setdefault((name, q), []).append(samples[name][-1])
    p50 = {name: percentile(s, 50) for name, s in samples.items()}
    for name, value in p50.items():
        print(f"{name:28s} p50 {value:6.2f} ms  p95 {percentile(samples[name], 95):6.2f} ms")
    if args.per_query:
        print("p50 per query, ms: " + " | ".join(systems) + " | rows of ours scored / kept apart")
        for q in QUERIES:
            times = " | ".join(f"{percentile(by_query[(name, q)], 50):6.2f}" for name in systems)
            print(f"  {times} | {rows_scored(retriever, q)}  {q}")
    if args.serial:
        print(f"ratio p50 ours serial / similarity_search {p50['ours, serial'] / p50['langchain-chroma']:.2f}")
    print(f"ratio p50 ours / similarity_search {p50['ours'] / p50['langchain-chroma']:.2f}")
    print(f"ratio p50 ours / as_retriever().invoke {p50['ours'] / p50['langchain-chroma retriever']:.2f}")
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for n in range(args.profile):
            retriever.invoke(QUERIES[n % len(QUERIES)])
        prof.disable()
        for key in ("tottime", "cumulative"):
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats(key).print_stats(args.top)
            print(buf.getvalue())


def rows_scored(retriever: object, q: str) -> str:
    """The rows one search of ours scores and keeps apart (``Snapshot.restricted``; "all": none restricted)."""
    from langchain_lifecycle_memory.read._snapshot import Snapshot

    seen: list[str] = []
    restricted = Snapshot.restricted

    def spy(self: Any, rows: Any, scores: Any, background: Any = None) -> Any:
        seen.append(f"{len(rows)} / {0 if background is None else len(background)}")
        return restricted(self, rows, scores, background)

    Snapshot.restricted = spy  # type: ignore[method-assign]
    try:
        retriever.invoke(q)  # type: ignore[attr-defined]
    finally:
        Snapshot.restricted = restricted  # type: ignore[method-assign]
    return seen[-1] if seen else "all"


def serial(retriever: object, q: str) -> object:
    """One search of ours with the dense query in the search's thread (the driver reads the switch per call)."""
    before = os.environ.get("LIFECYCLE_MEMORY_OVERLAP")
    os.environ["LIFECYCLE_MEMORY_OVERLAP"] = "0"
    try:
        return retriever.invoke(q)  # type: ignore[attr-defined]
    finally:
        if before is None:
            del os.environ["LIFECYCLE_MEMORY_OVERLAP"]
        else:
            os.environ["LIFECYCLE_MEMORY_OVERLAP"] = before


if __name__ == "__main__":
    main()
