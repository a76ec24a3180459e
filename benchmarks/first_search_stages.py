"""Where the loading process's first search goes, stage by stage (no profiler), and the collector's share.

    nice -n 10 python benchmarks/first_search_stages.py --size 50000 [--kind attributes|episodes]
        [--writes 20] [--workdir DIR]   # keep the database; a second run on it is a fresh worker's full read

Loads ``--size`` records into one namespace the way ``scale.py --parts attributes`` does
(``attributes``: fact records with one distinct attribute each, 2,000 per batch; ``episodes``:
short episode records), then times the ``LifecycleRetriever``'s first search in the same
process with a wall-clock timer around each stage: the SQLite read, decoding, BM25, the
rest of the snapshot build, the router's card lookup / embedding / install / stacking, the
attribute-mention index and scoring; then ``--writes`` writes, each followed by a search
(p50). Every garbage collection during the search is timed
too (``gc.callbacks``). With ``--workdir`` of an earlier run the load is skipped and its
snapshot sidecars removed: the search is a fresh worker's full read, cards from the card files.
Timings are printed, never asserted; compare runs made back to back (load inflates them).
"""

from __future__ import annotations

import argparse
import functools
import gc
import glob
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import QUERIES, sentences
from scale import HashEmbeddings, client


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50000)
    parser.add_argument("--kind", choices=["attributes", "episodes"], default="attributes")
    parser.add_argument("--writes", type=int, default=20, help="writes after the first search, each then searched")
    parser.add_argument("--workdir", help="keep the database here (a second run: a fresh worker on it)")
    args = parser.parse_args()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="first-search-"))
    workdir.mkdir(parents=True, exist_ok=True)
    reopened = (workdir / "chroma.sqlite3").exists()
    os.environ.setdefault("LIFECYCLE_MEMORY_CACHE_DIR", str(workdir / "cache"))

    import langchain_lifecycle_memory
    from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord
    from langchain_lifecycle_memory.read import _scoring, _snapshot, _snapshot_source, retrieval, routing
    from langchain_lifecycle_memory.read._sidecar import SIDECARS
    from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever

    stages: dict[str, float] = {}

    def timed(owner: Any, name: str, label: str) -> None:
        inner = getattr(owner, name)

        @functools.wraps(inner)
        def wrapper(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(*a, **k)
            finally:
                stages[label] = stages.get(label, 0.0) + (time.perf_counter() - t0) * 1000

        setattr(owner, name, wrapper)

    emb, ns = HashEmbeddings(), ("memories", "big")
    store = ChromaMemoryStore(client=client(workdir, None), embeddings=emb, collection_prefix="scale")
    out: dict[str, Any] = {"package": str(Path(langchain_lifecycle_memory.__file__).parent), "kind": args.kind}
    t0 = time.perf_counter()
    if reopened:
        for name in glob.glob(str(workdir / "lifecycle-snapshots" / "*")):
            os.remove(name)  # no sidecar: the full read
    else:
        texts = sentences(args.size)
        for i in range(0, args.size, 2000):
            batch = []
            for j, text in enumerate(texts[i : i + 2000], start=i):
                slot = {"entity": "user", "attribute": f"topic_{j}", "value": f"value {j}"}
                kind = "fact" if args.kind == "attributes" else "episode"
                batch.append(MemoryRecord(namespace=ns, content=text, kind=kind, **(slot if kind == "fact" else {})))
            store.put_records(batch)
    out["load_s"] = round(time.perf_counter() - t0, 1)
    out["tracked_objects"] = len(gc.get_objects())

    timed(_snapshot_source, "snapshot_of_documents", "snapshot")
    timed(_snapshot, "decode", "snapshot.decode")
    timed(_snapshot, "LexicalIndex", "snapshot.bm25")
    timed(retrieval, "score_snapshot", "scoring")
    timed(routing.AttributeRouter, "missing", "router.lookup_and_card_files")
    timed(routing.AttributeRouter, "install", "router.install")
    timed(routing.AttributeRouter, "_stack", "router.stack")
    timed(_scoring, "mentioned_attributes", "mention_index")
    timed(type(store), "namespace_documents", "read")
    timed(emb, "embed_documents", "router.embed_cards")  # by the search, or the warmer still at it

    collections: list[tuple[int, float]] = []
    started: list[float] = []

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            collections.append((info["generation"], (time.perf_counter() - started.pop()) * 1000))

    warmer = getattr(routing, "CARD_WARMER", None)  # absent before the card warmer
    out["cards_warming_at_search"] = None if warmer is None else warmer.busy(emb)
    gc.callbacks.append(on_gc)
    retriever = LifecycleRetriever(store=store, namespace=ns, k=10)
    t0 = time.perf_counter()
    retriever.invoke(QUERIES[0])
    out["first_search_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    gc.callbacks.remove(on_gc)
    out["stages_ms"] = {k: round(v, 1) for k, v in stages.items()}
    out["gc_ms"] = {f"gen{g}": round(sum(d for gg, d in collections if gg == g), 1) for g in (0, 1, 2)}
    out["gc_collections"] = {f"gen{g}": sum(1 for gg, _ in collections if gg == g) for g in (0, 1, 2)}
    t0 = time.perf_counter()
    retriever.invoke(QUERIES[1])
    out["second_search_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    after = []
    for n in range(args.writes):  # a write, then a search (the journal's delta applied to the snapshot)
        store.put_record(MemoryRecord(namespace=ns, content=f"The user adopted a cat named Miso {n}"))
        t0 = time.perf_counter()
        retriever.invoke(QUERIES[n % len(QUERIES)])
        after.append((time.perf_counter() - t0) * 1000)
    if after:
        out["search_after_write_p50_ms"] = round(statistics.median(after), 2)
    SIDECARS.wait()
    print(json.dumps(out))
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
