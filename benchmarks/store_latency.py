"""Store latency: put / get / search p50 and p95 at 1k and 10k records.

Compares, in one run and with the same embedder (USE multilingual, offline):

* ``ChromaMemoryStore`` (LangGraph BaseStore API: put / get / search),
* ``ChromaMemoryStore`` record API (``search_records``: active-only, expiry-aware),
* ``LifecycleRetriever`` (dense + BM25 + slot routing, the use side's real path), and
  its first query after a write (the latency an agent's write-then-read turn feels),
  next to langchain-chroma's first ``similarity_search`` after an ``add_texts``,
* LangGraph ``InMemoryStore`` (same embedder),
* plain ``langchain_chroma.Chroma.similarity_search``.

Run: ``python benchmarks/store_latency.py [--sizes 1000 10000] [--queries 50] [--embedder use|e5]``.
Writes ``benchmarks/results/store_latency.json``. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import chromadb
from _synthetic import QUERIES, percentile, sentences
from langchain_chroma import Chroma
from langgraph.store.memory import InMemoryStore
from rich.console import Console
from rich.table import Table

from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord, UniversalSentenceEncoderEmbeddings
from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever
from langchain_lifecycle_memory.store.embeddings import E5SmallEmbeddings

NS = ("memories", "bench")


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Milliseconds per call."""
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def run(size: int, queries: int, emb: UniversalSentenceEncoderEmbeddings, workdir: Path) -> dict[str, dict[str, float]]:
    texts = sentences(size)
    extra = sentences(queries, seed=99)
    qs = [QUERIES[i % len(QUERIES)] for i in range(queries)]
    results: dict[str, dict[str, float]] = {}

    def record(name: str, op: str, samples: list[float]) -> None:
        results.setdefault(name, {})[f"{op}_p50"] = percentile(samples, 50)
        results[name][f"{op}_p95"] = percentile(samples, 95)

    # ours: embedded persistent client, one collection per namespace
    store = ChromaMemoryStore(workdir / f"ours{size}", embeddings=emb, collection_prefix="bench")
    records = [MemoryRecord(namespace=NS, content=t, valid_from="2024-01-01T00:00:00Z") for t in texts]
    for i in range(0, size, 2000):
        store.put_records(records[i : i + 2000])
    it = iter(range(10**9))
    record("ChromaMemoryStore", "put", timed(lambda: store.put(NS, f"x{next(it)}", {"content": extra[0]}), queries))
    keys = [r.id for r in records[:queries]]
    kit = iter(keys * 2)
    record("ChromaMemoryStore", "get", timed(lambda: store.get(NS, next(kit)), queries))

    # plain langchain-chroma, same embedder, same kind of client
    client = chromadb.PersistentClient(path=str(workdir / f"lc{size}"))
    lc = Chroma(client=client, collection_name=f"lc{uuid.uuid4().hex[:8]}", embedding_function=emb)
    for i in range(0, size, 2000):
        lc.add_texts(texts[i : i + 2000], metadatas=[{"n": j} for j in range(i, min(size, i + 2000))])
    record("langchain-chroma", "put", timed(lambda: lc.add_texts([extra[0]], metadatas=[{"n": -1}]), queries))
    ids = lc.get(limit=queries)["ids"]
    iit = iter(ids * 2)
    record("langchain-chroma", "get", timed(lambda: lc.get_by_ids([next(iit)]), queries))

    # Searches, interleaved query by query so that a change of machine load hits every
    # system alike (the ratio to langchain-chroma is the number that matters).
    retriever = LifecycleRetriever(store=store, namespace=NS, k=10)
    retriever.invoke(qs[0])  # builds the namespace snapshot once (cached per revision)
    searches: dict[str, Callable[[str], object]] = {
        "langchain-chroma": lambda q: lc.similarity_search(q, k=10),
        "ChromaMemoryStore": lambda q: store.search(NS, query=q, limit=10),
        "record API search_records": lambda q: store.search_records(NS, q, k=10),
        "LifecycleRetriever (hybrid)": lambda q: retriever.invoke(q),
    }
    samples_by: dict[str, list[float]] = {name: [] for name in searches}
    for q in qs * 2:
        for name, fn in searches.items():
            samples_by[name] += timed(lambda fn=fn, q=q: fn(q), 1)
    for name, samples in samples_by.items():
        record(name, "search", samples)

    # An agent turn is write-then-read: the first query after a write brings the namespace
    # snapshot (records + BM25 index) up to date from this process's write journal.
    wit = iter(range(10**9))
    qit = iter(qs * 3)
    after: dict[str, list[float]] = {"ours": [], "lc": []}

    def write_then_search() -> None:
        store.put_record(MemoryRecord(namespace=NS, content=f"{extra[1]} ({next(wit)})"))
        after["ours"] += timed(lambda: retriever.invoke(next(qit)), 1)

    def lc_write_then_search() -> None:
        lc.add_texts([f"{extra[1]} ({next(wit)})"], metadatas=[{"n": -2}])
        after["lc"] += timed(lambda: lc.similarity_search(next(qit), k=10), 1)

    both: list[float] = []
    for _ in range(max(3, queries // 5)):  # interleaved, as the searches above
        both += timed(write_then_search, 1)
        lc_write_then_search()
    record("LifecycleRetriever: put one record, then search", "search", both)
    record("LifecycleRetriever: first search after a write", "search", after["ours"])
    record("langchain-chroma: first search after a write", "search", after["lc"])

    # LangGraph InMemoryStore, same embedder
    mem = InMemoryStore(index={"dims": emb.dims, "embed": emb, "fields": ["content"]})
    vectors = emb.embed_documents(texts)
    del vectors  # the store embeds again itself; warm-up only
    from langgraph.store.base import PutOp

    for i in range(0, size, 2000):
        mem.batch([PutOp(NS, f"k{j}", {"content": texts[j]}) for j in range(i, min(size, i + 2000))])
    it2 = iter(range(10**9))
    record(
        "LangGraph InMemoryStore", "put", timed(lambda: mem.put(NS, f"x{next(it2)}", {"content": extra[0]}), queries)
    )
    kit2 = iter([f"k{j}" for j in range(queries)] * 2)
    record("LangGraph InMemoryStore", "get", timed(lambda: mem.get(NS, next(kit2)), queries))
    n_mem = max(5, queries // 5)  # brute-force python cosine: slow at 10k
    qit = iter(qs * 3)
    record("LangGraph InMemoryStore", "search", timed(lambda: mem.search(NS, query=next(qit), limit=10), n_mem))
    return results


def main() -> None:
    """Run the benchmark and print one table per size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--embedder", choices=["use", "e5"], default="use", help="the encoder every system uses")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "store_latency.json"))
    args = parser.parse_args()
    emb = UniversalSentenceEncoderEmbeddings() if args.embedder == "use" else E5SmallEmbeddings()
    emb.embed_query("warm up")
    console = Console(width=160)
    everything = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            res = run(size, args.queries, emb, Path(tmp))
            everything[str(size)] = res
            table = Table(title=f"{size} records, {args.queries} ops each (ms)")
            table.add_column("system")
            for col in ("put_p50", "put_p95", "get_p50", "get_p95", "search_p50", "search_p95"):
                table.add_column(col, justify="right")
            for name, row in res.items():
                table.add_row(
                    name,
                    *[
                        f"{row[c]:.2f}" if c in row else "-"
                        for c in ("put_p50", "put_p95", "get_p50", "get_p95", "search_p50", "search_p95")
                    ],
                )
            console.print(table)
            ratio = res["LifecycleRetriever (hybrid)"]["search_p50"] / res["langchain-chroma"]["search_p50"]
            console.print(f"hybrid retriever search p50 / langchain-chroma similarity_search p50 = {ratio:.2f}x")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(everything, indent=2))
    console.print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
