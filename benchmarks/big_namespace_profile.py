"""Where a big namespace's full read goes: each part timed on its own, in one process.

    nice -n 10 python benchmarks/big_namespace_profile.py --size 50000 [--layout collection]

Loads ``--size`` episode records (the cheap hashing embedder of ``scale.py``), then times,
``--repeat`` times each (median): Chroma's ``get`` of the namespace's documents (pages of
1,000) against the SQLite file read; validating every document into a ``MemoryRecord``
(the full read before) against decoding them (``read._decode``); the BM25 index; the
snapshot built from the documents, and the read and build with the garbage collector
running and paused; the dense query through Chroma's
tenant filter against ``nearest_ids``; and a fresh worker's first search with a stale
sidecar (brought up to date from the stored documents) against a full read.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import glob
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import QUERIES, sentences
from scale import HashEmbeddings, client


def median_ms(fn: Any, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(samples), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50000)
    parser.add_argument("--layout", choices=["bucketed", "collection"], default="bucketed")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord
    from langchain_lifecycle_memory.read import retrieval
    from langchain_lifecycle_memory.read._decode import decode
    from langchain_lifecycle_memory.read._sidecar import SIDECARS
    from langchain_lifecycle_memory.read._snapshot import snapshot_of_documents
    from langchain_lifecycle_memory.read.lexical import LexicalIndex
    from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever
    from langchain_lifecycle_memory.store._records import parse_record
    from langchain_lifecycle_memory.store.gcpause import paused_gc

    workdir = Path(tempfile.mkdtemp(prefix="big-ns-"))
    emb, ns = HashEmbeddings(), ("memories", "big")

    def open_store() -> Any:
        return ChromaMemoryStore(
            client=client(workdir, None), embeddings=emb, collection_prefix="big", layout=args.layout
        )

    store = open_store()
    texts = sentences(args.size)
    for i in range(0, args.size, 2000):
        store.put_records([MemoryRecord(namespace=ns, content=t, kind="episode") for t in texts[i : i + 2000]])
    out: dict[str, Any] = {"size": args.size, "layout": store.layout}

    def read_api() -> Any:
        store.direct_reads = False
        try:
            return store.namespace_documents(ns)
        finally:
            store.direct_reads = True

    out["read_documents_chroma_api_ms"] = median_ms(read_api, 1)
    out["read_documents_sqlite_ms"] = median_ms(lambda: store.namespace_documents(ns), args.repeat)
    documents = store.namespace_documents(ns)

    def paused(fn: Any) -> Any:  # as the retriever runs them: the collector paused (``store.gcpause``)
        def run() -> Any:
            with paused_gc():
                return fn()

        return run

    out["validate_each_into_a_record_and_sort_ms"] = median_ms(  # the full read before (read_namespace)
        paused(
            lambda: sorted(
                (r for d in documents if (r := parse_record(ns, d)) is not None),
                key=lambda r: (r.created_at, r.valid_from, r.id),
            )
        ),
        args.repeat,
    )
    out["decode_and_sort_ms"] = median_ms(paused(lambda: decode(ns, documents)), args.repeat)
    kept, fields, _ = decode(ns, documents)
    out["bm25_index_ms"] = median_ms(paused(lambda: LexicalIndex([*fields.contents])), args.repeat)
    out["snapshot_of_documents_ms"] = median_ms(
        lambda: snapshot_of_documents(store, documents, namespace=ns), args.repeat
    )

    def gc_running(fn: Any) -> Any:  # the same work with the collector on throughout (no pause)
        modules = [
            sys.modules["langchain_lifecycle_memory.store._records"],
            sys.modules[snapshot_of_documents.__module__],
        ]

        def run() -> Any:
            saved = [m.paused_gc for m in modules]
            for m in modules:
                m.paused_gc = contextlib.nullcontext
            try:
                return fn()
            finally:
                for m, original in zip(modules, saved):
                    m.paused_gc = original

        return run

    def read_and_build() -> Any:
        return snapshot_of_documents(store, store.namespace_documents(ns), namespace=ns)

    out["read_and_build_gc_paused_ms"] = median_ms(read_and_build, args.repeat)
    out["read_and_build_gc_running_ms"] = median_ms(gc_running(read_and_build), args.repeat)
    gc.collect()

    vector, col = emb.embed_query(QUERIES[0]), store._col(ns)
    store.nearest_ids(ns, vector, 60)
    out["dense_query_nearest_ids_ms"] = median_ms(lambda: store.nearest_ids(ns, vector, 60), 20)
    out["dense_query_chroma_where_ms"] = median_ms(
        lambda: col.query(query_embeddings=[vector], n_results=60, include=["distances"]), 20
    )

    LifecycleRetriever(store=store, namespace=ns, k=10).invoke(QUERIES[0])  # saves the sidecar
    SIDECARS.wait()
    store.put_records([MemoryRecord(namespace=ns, content=f"another process wrote {n}") for n in range(5)])
    for delta in glob.glob(str(workdir / "lifecycle-snapshots" / "*.delta.json")):
        os.remove(delta)  # as if another process had written: the sidecar is stale

    def fresh_worker_first_search(with_sidecar: bool) -> float:
        if not with_sidecar:
            for name in glob.glob(str(workdir / "lifecycle-snapshots" / "*")):
                os.remove(name)
        retrieval._SNAPSHOTS.clear()
        worker = open_store()
        t0 = time.perf_counter()
        LifecycleRetriever(store=worker, namespace=ns, k=10).invoke(QUERIES[1])
        elapsed = round((time.perf_counter() - t0) * 1000, 1)
        SIDECARS.wait()  # a sidecar written in the background is not part of the search
        return elapsed

    out["first_search_stale_sidecar_ms"] = fresh_worker_first_search(True)
    out["first_search_full_read_ms"] = fresh_worker_first_search(False)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
