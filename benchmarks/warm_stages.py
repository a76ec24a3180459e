"""Where a warm search's time goes, stage by stage (wall clock, median per search).

    nice -n 10 python benchmarks/warm_stages.py DIR [--layout collection] [--queries 300]

``DIR`` is a work folder that ``benchmarks/warm_profile.py --workdir DIR`` loaded. Each
stage of ``LifecycleRetriever.invoke`` is wrapped in a timer (the wrappers cost ~1 us
each); the rest of the pipeline is what is left of ``_get_relevant_documents``, and
LangChain's part is what is left of ``invoke``. Printed next to
``Chroma.similarity_search`` on the same queries, back to back. The dense query runs on a
helper thread while the stages marked "(during)" run; it is shown indented, off the sum.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import QUERIES
from scale import HashEmbeddings, client

TIMES: dict[str, list[float]] = defaultdict(list)
CLOCK = time.perf_counter
_PENDING: dict[str, float] = defaultdict(float)


def timed(owner: Any, name: str, label: str) -> None:
    fn = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = CLOCK()
        try:
            return fn(*args, **kwargs)
        finally:
            _PENDING[label] += (CLOCK() - t0) * 1000

    setattr(owner, name, wrapper)


def timed_gen(owner: Any, name: str, label: str) -> None:
    """A generator function: time spent inside it (between its yields) is counted."""
    fn = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        gen = fn(*args, **kwargs)
        reply = None
        while True:
            t0 = CLOCK()
            try:
                req = gen.send(reply)
            except StopIteration as stop:
                _PENDING[label] += (CLOCK() - t0) * 1000
                return stop.value
            _PENDING[label] += (CLOCK() - t0) * 1000
            reply = yield req

    setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir")
    parser.add_argument("--layout", choices=["bucketed", "collection"], default="bucketed")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--only", type=int, default=None, help="search only QUERIES[ONLY]")
    parser.add_argument(
        "--clock", choices=["wall", "thread"], default="wall", help="thread: this thread's CPU time (less load noise)"
    )
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.thread_time if args.clock == "thread" else time.perf_counter

    from chromadb.api.models.Collection import Collection
    from langchain_chroma import Chroma

    from langchain_lifecycle_memory import ChromaMemoryStore
    from langchain_lifecycle_memory.read import _scoring, retrieval
    from langchain_lifecycle_memory.read._snapshot import Snapshot
    from langchain_lifecycle_memory.read.routing import AttributeRouter

    emb, ns = HashEmbeddings(), ("memories", "big")
    cl = client(Path(args.workdir), None)
    store = ChromaMemoryStore(client=cl, embeddings=emb, collection_prefix="scale", layout=args.layout)
    lc = Chroma(client=cl, collection_name="scale_lc", embedding_function=emb)
    retriever = retrieval.LifecycleRetriever(store=store, namespace=ns, k=10)
    retriever.invoke(QUERIES[0])

    timed(HashEmbeddings, "embed_query", "embed query (both systems)")
    timed_gen(retrieval, "current_snapshot", "revision check (current_snapshot)")
    timed(Snapshot, "eligible", "eligible mask")
    # The dense query runs on a helper thread while the stages marked "during" run (read/_driver.py):
    # its own time is shown indented (not on the search's path); the driver's handing it over
    # and the wait for it are in "rest of the pipeline" (wall clock; ~0 of this thread's CPU).
    timed(Collection, "query", "  chroma Collection.query (both systems)")
    timed(type(store), "nearest_ids", "  dense query (nearest_ids, on the helper thread)")
    timed(AttributeRouter, "missing", "router.missing (during)")
    timed_gen(retrieval, "episode_scores", "episode_scores (during)")
    timed(retrieval, "query_evidence", "query evidence: routes, people (during)")
    timed(retrieval, "prepare", "BM25 over the namespace, rows to score (during)")
    timed(Snapshot, "scoring_rows", "  of which scoring_rows")
    timed_gen(retrieval, "dense_hits", "dense hits: ids to positions")
    timed(retrieval, "restrict", "restrict: the dense hits merged in")
    timed(Snapshot, "restricted", "  of which restricted")
    timed(retrieval, "score_snapshot", "score_snapshot")
    timed(_scoring, "episode_feedback", "  episode_feedback")
    timed(retrieval, "_documents", "Documents")
    timed(retrieval.LifecycleRetriever, "_get_relevant_documents", "_get_relevant_documents")

    totals: dict[str, list[float]] = defaultdict(list)
    for n in range(args.queries):
        q = QUERIES[n % len(QUERIES) if args.only is None else args.only]
        _PENDING.clear()
        t0 = CLOCK()
        retriever.invoke(q)
        total = (CLOCK() - t0) * 1000
        t0 = CLOCK()
        lc.similarity_search(q, k=10)
        totals["langchain-chroma similarity_search"].append((CLOCK() - t0) * 1000)
        totals["ours invoke"].append(total)
        stages = dict(_PENDING)
        inner = stages.get("_get_relevant_documents", 0.0)
        named = sum(v for k, v in stages.items() if not k.startswith(" ") and k not in ("_get_relevant_documents",))
        stages["rest of the pipeline"] = inner - named
        stages["LangChain invoke (callbacks)"] = total - inner
        for k, v in stages.items():
            TIMES[k].append(v)
    for k, v in totals.items():
        print(f"{k:42s} {statistics.median(v):7.3f} ms")
    print("stages of ours (median per search):")
    for k, v in TIMES.items():
        if k != "_get_relevant_documents":
            print(f"  {k:40s} {statistics.median(v):7.3f} ms")


if __name__ == "__main__":
    main()
