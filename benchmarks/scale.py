"""Scale: many users, one big namespace, many attributes, and the storage layout.

Every measurement runs in a fresh child process (so RSS growth is that system's alone)
and is printed next to plain ``langchain-chroma`` on the same data in the same run.

Parts (``--parts``, all by default):

* ``namespace``: one namespace of 1k/10k/50k short episode records: first search, warm
  search p50/p95, first search after a write (p50/p95), RSS growth; then fresh worker
  processes on the written namespace: the first search with the loader's sidecar plus the
  delta of its writes, without any sidecar (a full read), and with the sidecar that read
  saved; warm p50 and RSS growth. Ours is the
  ``LifecycleRetriever`` (the use side's real path); the baseline is
  ``Chroma.similarity_search`` over a collection of the same texts.
* ``warm``: ours and ``langchain-chroma`` loaded in one process and searched with the
  same queries back to back (p50/p95 and the ratio), so machine load hits both alike;
  a third column searches the same collection through ``as_retriever().invoke`` (which
  pays LangChain's retriever callbacks, as ours does).
* ``attributes``: 50k records with 50k distinct attributes: the first search (snapshot
  built; the router's cards embedded after each write batch by the background card warmer,
  ``read._card_warmer``, and waited for if it is still busy: ``cards_warming_at_first_search``),
  split into its parts (``attribute_split``),
  a warm one, one after a write, and the first search of a reopened store (card vectors
  from the card files the first one wrote).
* ``users``: 1k/10k users x 20 records, every user searched once: RSS growth (and what is
  left of it once glibc's ``malloc_trim`` returns the heap memory it keeps free), disk,
  p50/p95, cross-tenant results. Ours and the baseline in the same layout
  (``--user-layouts``): ``bucketed`` (ours: ``ChromaMemoryStore(layout="bucketed")``;
  the baseline: 16 shared ``Chroma`` collections searched with a ``filter`` on the user)
  and ``collection`` (one collection per user for both, capped at ``--max-collections``).
* ``users-mixed``: the ``users`` data, both systems loaded in one process and every user
  searched by each back to back (which goes first alternates), twice: the first search
  of each user and a second one (ours: from its snapshot). Load hits both alike.
* ``layout``: ``chromadb`` directly, layouts side by side (``--layouts``): a collection per
  namespace, one shared collection with a tenant ``where`` filter, a hybrid (small
  tenants hashed into 16 shared buckets with a tenant filter, tenants over 1,000
  records in their own collection) and ``bucketed``, the store's (every tenant in one of
  16 buckets; a tenant of 1,000+ records searched unfiltered, its own rows kept, when
  that fetch is at most 1,500 rows), at 10k users x 20 and 100 users x 2k records.

Embeddings: a cheap deterministic 64-d hashing embedder (``HashEmbeddings``) for every
system, so that building 50k-record namespaces on a 2-core machine takes minutes, not
hours; latency and memory of the stores do not depend on which model made the vectors
(the real encoder adds the same ~10 ms per query to every system).

Run: ``python benchmarks/scale.py [--quick] [--server auto|HOST:PORT] [--parts ...]``.
``--server auto`` starts ``chroma run`` on port 8108 for the server rows. Writes
``benchmarks/results/scale.json`` and ``scale.png``. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import psutil
from _synthetic import QUERIES, percentile, sentences

RESULTS = Path(__file__).resolve().parent / "results"
DIMS = 64
_BUCKETS = np.random.default_rng(7).standard_normal((1 << 14, DIMS)).astype(np.float32)


class HashEmbeddings:
    """Deterministic bag-of-hashed-tokens vectors (cheap; the same for every system)."""

    fingerprint = {"provider": "benchmarks.scale.HashEmbeddings", "model": "hash64", "dims": DIMS, "version": 1}

    def _one(self, text: str) -> list[float]:
        low = text.lower()
        tokens = low.split() + [ch for ch in low if ord(ch) > 0x2E80]
        rows = [zlib.crc32(t.encode()) & ((1 << 14) - 1) for t in tokens] or [0]
        v = _BUCKETS[rows].sum(axis=0) + 1e-3
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def rss_mb(pid: int | None = None) -> float:
    return psutil.Process(pid or os.getpid()).memory_info().rss / 2**20


def disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def stats(samples: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(samples, 50), 2), "p95": round(percentile(samples, 95), 2)}


def client(workdir: Path, server: str | None) -> Any:
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if server:
        host, port = server.rsplit(":", 1)
        return chromadb.HttpClient(host=host, port=int(port), settings=settings)
    return chromadb.PersistentClient(path=str(workdir), settings=settings)


# ---------------------------------------------------------------------------- children
def child_namespace(cfg: dict[str, Any], workdir: Path) -> dict[str, Any]:
    from langchain_chroma import Chroma

    from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord
    from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever

    size, emb, ns = cfg["size"], HashEmbeddings(), ("memories", "big")
    texts, attributes = sentences(size), cfg.get("attributes", False)
    qs = [QUERIES[i % len(QUERIES)] for i in range(40)]
    base = rss_mb()
    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    reopen = cfg.get("reopen", False)  # a fresh worker on the namespace another process wrote
    if cfg["system"] == "ours":
        store = ChromaMemoryStore(
            client=client(workdir, cfg["server"]), embeddings=emb, collection_prefix="scale", layout=cfg.get("layout")
        )
        if cfg["server"]:  # sidecars of a server's namespaces go to a local folder (opt-in)
            store.snapshot_dir = str(workdir / "snapshots")
        for i in range(0, 0 if reopen else size, 2000):
            batch = []
            for j, text in enumerate(texts[i : i + 2000], start=i):
                slot = {"entity": "user", "attribute": f"topic_{j}", "value": f"value {j}"} if attributes else {}
                batch.append(MemoryRecord(namespace=ns, content=text, kind="fact" if attributes else "episode", **slot))
            store.put_records(batch)
        retriever = LifecycleRetriever(store=store, namespace=ns, k=10)

        def search(q: str) -> Any:
            return retriever.invoke(q)

        def write(n: int) -> Any:
            return store.put_record(MemoryRecord(namespace=ns, content=f"The user adopted a cat named Miso {n}"))
    else:
        lc = Chroma(client=client(workdir, cfg["server"]), collection_name="scale_lc", embedding_function=emb)
        for i in range(0, 0 if reopen else size, 2000):
            lc.add_texts(texts[i : i + 2000], metadatas=[{"n": j} for j in range(i, min(size, i + 2000))])

        def search(q: str) -> Any:
            return lc.similarity_search(q, k=10)

        def write(n: int) -> Any:
            return lc.add_texts([f"The user adopted a cat named Miso {n}"], metadatas=[{"n": -n}])

    out["load_s"] = round(time.perf_counter() - t0, 1)
    if attributes:  # the cards of the last batches may still be being embedded: the search waits for them
        from langchain_lifecycle_memory.read.routing import CARD_WARMER

        out["cards_warming_at_first_search"] = CARD_WARMER.busy(emb)
    t0 = time.perf_counter()
    search(qs[0])
    out["first_search_ms"] = round(ms(t0), 1)
    warm = []
    for q in qs:
        t0 = time.perf_counter()
        search(q)
        warm.append(ms(t0))
    out["warm"] = stats(warm)
    if reopen:
        out["rss_growth_mb"] = round(rss_mb() - base, 1)
        return out
    writes, after = [], []
    for n in range(cfg.get("writes", 20)):
        t0 = time.perf_counter()
        write(n)
        writes.append(ms(t0))
        t0 = time.perf_counter()
        search(qs[n % len(qs)])
        after.append(ms(t0))
    out["write"], out["search_after_write"] = stats(writes), stats(after)
    out["rss_growth_mb"] = round(rss_mb() - base, 1)
    if cfg["system"] == "ours":  # where a first search goes: reading the namespace, then the snapshot
        from langchain_lifecycle_memory.read._snapshot import snapshot_of_documents

        out["layout"] = store.layout
        t0 = time.perf_counter()
        documents = store.namespace_documents(ns)  # the retriever's full read
        out["first_search_read_ms"] = round(ms(t0), 1)
        t0 = time.perf_counter()
        snapshot_of_documents(store, documents, namespace=ns)  # decoding the documents, the columns, BM25
        out["first_search_snapshot_ms"] = round(ms(t0), 1)
        del documents
        store.direct_reads = False  # the same read through Chroma's API (``get`` of documents, pages of 1,000)
        t0 = time.perf_counter()
        store.namespace_documents(ns)
        out["read_through_api_ms"] = round(ms(t0), 1)
        store.direct_reads = True
        vector, col = emb.embed_query(qs[0]), store._col(ns)
        nearest, filtered = [], []
        for _ in range(10):  # the retriever's dense query vs Chroma's query through the tenant filter
            t0 = time.perf_counter()
            store.nearest_ids(ns, vector, 60)
            nearest.append(ms(t0))
            t0 = time.perf_counter()
            col.query(query_embeddings=[vector], n_results=60, include=["distances"])
            filtered.append(ms(t0))
        out["nearest_ids_ms"], out["chroma_query_ms"] = stats(nearest)["p50"], stats(filtered)["p50"]
    if attributes:
        out.update(attribute_split(store, emb, ns, size, qs[0], client(workdir, cfg["server"])))
    return out


def attribute_split(store: Any, emb: Any, ns: tuple[str, ...], size: int, q: str, cl: Any) -> dict[str, Any]:
    """Where a first search over many attributes goes, and the first search of a new process.

    The router parts are timed on a fresh router (no in-memory cards): embedding the card
    phrases (what the card warmer did in the background during the load, once per embedder
    ever), loading them from the card files the warmer wrote (every later process),
    installing and scoring, and indexing attribute names
    for mention lookup. ``first_search_reopened_ms`` drops every in-process cache (store
    handles, snapshots, cards, the mention index) and searches through a new store
    object on the same database: a restarted process, less its imports.
    """
    from langchain_lifecycle_memory import ChromaMemoryStore
    from langchain_lifecycle_memory.read import _card_vectors, retrieval, routing
    from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever

    out: dict[str, Any] = {}
    names = tuple(f"topic_{j}" for j in range(size))
    owners = [a for a in names for _ in routing._card_phrases(a, None)]
    phrases = [p for a in names for p in routing._card_phrases(a, None)]
    disk = _card_vectors.PersistedCards.for_embeddings(emb)
    t0 = time.perf_counter()  # a new process: no card file read yet
    loaded = _card_vectors.PersistedCards(disk.folder, emb.fingerprint).load(phrases) if disk else {}
    out["router_load_cards_ms"] = round(ms(t0), 1)
    out["router_cards_loaded"] = len(loaded)
    t0 = time.perf_counter()
    vectors = emb.embed_documents(phrases)
    out["router_embed_cards_ms"] = round(ms(t0), 1)
    routing.AttributeRouter._cache.clear()
    router = routing.AttributeRouter(emb, vocabulary=())
    router._disk = None
    router.missing(names)
    t0 = time.perf_counter()
    router.install(owners, vectors)
    router.score_array(emb.embed_query(q), names)
    out["router_install_and_score_ms"] = round(ms(t0), 1)
    t0 = time.perf_counter()
    routing._mention_index.clear()
    routing._attribute_names.cache_clear()
    routing.mentioned_attributes([q], names, router.specs)
    out["mention_index_ms"] = round(ms(t0), 1)

    retrieval._SNAPSHOTS.clear()
    routing.AttributeRouter._cache.clear()
    _card_vectors.PersistedCards._open.clear()
    routing._mention_index.clear()
    routing._attribute_names.cache_clear()
    fresh = ChromaMemoryStore(client=cl, embeddings=emb, collection_prefix="scale")
    t0 = time.perf_counter()
    LifecycleRetriever(store=fresh, namespace=ns, k=10).invoke(q)
    out["first_search_reopened_ms"] = round(ms(t0), 1)
    return out


def child_warm(cfg: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """Warm search, ours and plain ``langchain-chroma`` in one process, queries interleaved.

    Separate children run at different moments, and on a shared machine the load moves
    between them; here every query goes to both systems back to back.
    """
    from langchain_chroma import Chroma

    from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord
    from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever

    size, emb, ns = cfg["size"], HashEmbeddings(), ("memories", "big")
    texts = sentences(size)
    cl = client(workdir, cfg["server"])
    store = ChromaMemoryStore(client=cl, embeddings=emb, collection_prefix="scale", layout=cfg.get("layout"))
    lc = Chroma(client=cl, collection_name="scale_lc", embedding_function=emb)
    for i in range(0, size, 2000):
        store.put_records([MemoryRecord(namespace=ns, content=t, kind="episode") for t in texts[i : i + 2000]])
        lc.add_texts(texts[i : i + 2000], metadatas=[{"n": j} for j in range(i, min(size, i + 2000))])
    retriever = LifecycleRetriever(store=store, namespace=ns, k=10)
    lc_retriever = lc.as_retriever(search_kwargs={"k": 10})  # pays LangChain's retriever callbacks, as ours does
    retriever.invoke(QUERIES[0])
    lc.similarity_search(QUERIES[0], k=10)
    lc_retriever.invoke(QUERIES[0])
    ours, base, base_retriever = [], [], []
    systems = (
        (ours, retriever.invoke),
        (base, lambda q: lc.similarity_search(q, k=10)),
        (base_retriever, lc_retriever.invoke),
    )
    for n in range(cfg.get("queries", 120)):
        q = QUERIES[n % len(QUERIES)]
        for samples, search in systems:
            t0 = time.perf_counter()
            search(q)
            samples.append(ms(t0))
    return {
        "ours": stats(ours),
        "langchain-chroma": stats(base),
        "ratio_p50": round(percentile(ours, 50) / percentile(base, 50), 2),
        "langchain-chroma-retriever": stats(base_retriever),
        "ratio_p50_retriever": round(percentile(ours, 50) / percentile(base_retriever, 50), 2),
    }


def users_system(cfg: dict[str, Any], cl: Any, system: str, texts: list[str]) -> Any:
    """Load ``cfg["users"]`` x ``cfg["records"]`` into ``system``; returns ``search(u, query) -> owners``.

    ``collection``: one collection per user for both. ``bucketed``: ours with
    ``layout="bucketed"`` (16 shared collections, tenant filter); the baseline the same way
    by hand (one ``Chroma`` per bucket, ``similarity_search(filter={"user": ...})``).
    """
    from langchain_chroma import Chroma

    from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord
    from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever

    users, per, emb, layout = cfg["users"], cfg["records"], HashEmbeddings(), cfg.get("layout", "collection")
    if system == "ours":
        store = ChromaMemoryStore(client=cl, embeddings=emb, collection_prefix="scale", layout=layout)
        retriever = LifecycleRetriever(store=store, namespace=("memories", "u0"), k=10)
        for u in range(users):
            ns = ("memories", f"u{u}")
            store.put_records([MemoryRecord(namespace=ns, content=t) for t in texts[u * per : (u + 1) * per]])

        def search(u: int, q: str) -> list[str]:
            return [d.metadata["namespace"][1] for d in retriever.invoke(q, namespace=("memories", f"u{u}"))]

        search.store = store  # type: ignore[attr-defined]  (for diagnostics: benchmarks/small_read.py)
        return search
    if layout == "bucketed":
        buckets = [Chroma(client=cl, collection_name=f"lc_b{b}", embedding_function=emb) for b in range(16)]

        def bucket(u: int) -> Any:
            return buckets[zlib.crc32(f"u{u}".encode()) % len(buckets)]

        for u in range(users):
            bucket(u).add_texts(texts[u * per : (u + 1) * per], metadatas=[{"user": f"u{u}"}] * per)

        def search_bucket(u: int, q: str) -> list[str]:
            return [d.metadata["user"] for d in bucket(u).similarity_search(q, k=10, filter={"user": f"u{u}"})]

        return search_bucket
    stores = []
    for u in range(users):
        stores.append(Chroma(client=cl, collection_name=f"lc_u{u}", embedding_function=emb))
        stores[-1].add_texts(texts[u * per : (u + 1) * per], metadatas=[{"user": f"u{u}"}] * per)

    def search_own(u: int, q: str) -> list[str]:
        return [d.metadata["user"] for d in stores[u].similarity_search(q, k=10)]

    return search_own


def child_users(cfg: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """``users`` x ``records``, every user searched once, ours or plain ``langchain-chroma`` (``users_system``)."""
    import langchain_chroma  # noqa: F401  (both systems' imports before the base RSS)

    import langchain_lifecycle_memory.read.retrieval  # noqa: F401

    texts = sentences(cfg["users"] * cfg["records"])
    base = rss_mb()
    cl = client(workdir, cfg["server"])
    t0 = time.perf_counter()
    search = users_system(cfg, cl, cfg["system"], texts)
    load_s = time.perf_counter() - t0
    loaded = rss_mb()
    samples, leaks = [], 0
    for u in range(cfg["users"]):
        t0 = time.perf_counter()
        owners = search(u, QUERIES[u % len(QUERIES)])
        samples.append(ms(t0))
        leaks += sum(o != f"u{u}" for o in owners)
    grown = rss_mb()
    return {
        "load_s": round(load_s, 1),
        "rss_after_load_mb": round(loaded - base, 1),
        "rss_growth_mb": round(grown - base, 1),
        "rss_growth_trimmed_mb": round(trimmed_rss() - base, 1),
        "disk_mb": round(disk_mb(workdir), 1) if not cfg["server"] else None,
        "search": stats(samples),
        "cross_tenant_results": leaks,
    }


def trimmed_rss() -> float:
    """RSS once glibc has handed the heap memory it holds free back to the OS (a diagnostic:
    how much of a process's RSS is memory freed but kept by the allocator)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        ctypes.CDLL(name).malloc_trim(0)  # type: ignore[union-attr]
    except (OSError, AttributeError):  # not glibc
        pass
    return rss_mb()


def child_users_mixed(cfg: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """Both systems loaded in one process, every user searched once by each, back to back.

    As ``warm`` for the many-users case: the first search of each user, ours and the
    baseline's one after the other (which goes first alternates), so machine load hits
    both alike. Then a second search of every user (ours: a warm snapshot).
    """
    texts = sentences(cfg["users"] * cfg["records"])
    cl = client(workdir, cfg["server"])
    systems = {name: users_system(cfg, cl, name, texts) for name in ("ours", "langchain-chroma")}
    out: dict[str, Any] = {}
    for rnd in ("first", "second"):
        samples: dict[str, list[float]] = {name: [] for name in systems}
        leaks = dict.fromkeys(systems, 0)
        for u in range(cfg["users"]):
            order = list(systems) if u % 2 == 0 else list(systems)[::-1]
            for name in order:
                t0 = time.perf_counter()
                owners = systems[name](u, QUERIES[u % len(QUERIES)])
                samples[name].append(ms(t0))
                leaks[name] += sum(o != f"u{u}" for o in owners)
        out[rnd] = {name: {**stats(samples[name]), "cross_tenant_results": leaks[name]} for name in systems}
        out[rnd]["ratio_p50"] = round(percentile(samples["ours"], 50) / percentile(samples["langchain-chroma"], 50), 2)
    return out


def child_layout(cfg: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """chromadb directly: one collection per tenant, one shared with a filter, or hybrid."""
    users, per, layout = cfg["users"], cfg["records"], cfg["layout"]
    emb = HashEmbeddings()
    base = rss_mb()
    cl = client(workdir, cfg["server"])
    space = {"hnsw": {"space": "cosine"}}
    cols: dict[str, Any] = {}

    def collection_of(u: int) -> tuple[Any, dict[str, Any] | None]:
        if layout == "per-namespace" or (layout == "hybrid" and per > cfg["promote"]):
            name = f"t_{u}"
            tenant_filter = None
        else:
            name = "shared" if layout == "shared" else f"bucket_{zlib.crc32(str(u).encode()) % cfg['buckets']}"
            tenant_filter = {"tenant": f"u{u}"}
        if name not in cols:
            cols[name] = cl.get_or_create_collection(name, embedding_function=None, configuration=space)
        return cols[name], tenant_filter

    t0 = time.perf_counter()
    pending: dict[str, tuple[Any, list[Any]]] = {}
    for u in range(users):
        texts = sentences(per, seed=u)
        col, _ = collection_of(u)
        ids, vecs, docs, metas = pending.setdefault(col.name, (col, [[], [], [], []]))[1]
        ids += [f"u{u}-{i}" for i in range(per)]
        vecs += emb.embed_documents(texts)
        docs += texts
        metas += [{"tenant": f"u{u}", "status": "active"}] * per
        if len(ids) >= 4000 or u == users - 1:
            for c, (i, v, d, m) in pending.values():
                for s in range(0, len(i), 4000):
                    c.upsert(
                        ids=i[s : s + 4000],
                        embeddings=v[s : s + 4000],
                        documents=d[s : s + 4000],
                        metadatas=m[s : s + 4000],
                    )
            pending.clear()
    load_s = time.perf_counter() - t0
    cols.clear()  # handles are re-fetched per search, as a process serving many users would
    samples, leaks = [], 0
    sizes: dict[str, int] = {}  # bucket rows (the store recounts every few seconds)
    for u in range(users):
        q = emb.embed_query(QUERIES[u % len(QUERIES)])
        t0 = time.perf_counter()
        col, tenant_filter = collection_of(u)
        fetch = 0
        if layout == "bucketed" and per >= 1000:  # ours: the store's unfiltered bucket query when it pays
            total = sizes.setdefault(col.name, col.count())
            fetch = int(10 * total / per * 1.25) + 16
            fetch = fetch if fetch <= 1500 else 0
        if fetch:
            res = col.query(query_embeddings=[q], n_results=fetch, include=["metadatas", "documents"])
            own = [j for j, m in enumerate(res["metadatas"][0]) if m["tenant"] == f"u{u}"][:10]
            if len(own) < 10:  # too few of its own: the filtered query, as the store does
                res = col.query(query_embeddings=[q], n_results=10, where=tenant_filter, include=["metadatas"])
                own = list(range(len(res["ids"][0])))
            metas = [res["metadatas"][0][j] for j in own]
        else:
            res = col.query(query_embeddings=[q], n_results=10, where=tenant_filter, include=["metadatas", "documents"])
            metas = res["metadatas"][0]
        samples.append(ms(t0))
        leaks += sum(m["tenant"] != f"u{u}" for m in metas)
        if len(cols) > 64:
            cols.clear()
    return {
        "load_s": round(load_s, 1),
        "rss_growth_mb": round(rss_mb() - base, 1),
        "disk_mb": round(disk_mb(workdir), 1) if not cfg["server"] else None,
        "search": stats(samples),
        "cross_tenant_results": leaks,
    }


CHILDREN = {
    "namespace": child_namespace,
    "warm": child_warm,
    "users": child_users,
    "users-mixed": child_users_mixed,
    "layout": child_layout,
}


def run_child(cfg: dict[str, Any], server: str | None, server_pid: int | None) -> dict[str, Any]:
    """Run one measurement in a fresh process (with a fresh server database when served)."""
    cfg = {**cfg, "server": server}
    if server:  # a clean slate on the shared server: drop every collection first
        import chromadb

        host, port = server.rsplit(":", 1)
        hc = chromadb.HttpClient(host=host, port=int(port))
        for col in hc.list_collections():
            hc.delete_collection(col.name)
    server_before = rss_mb(server_pid) if server_pid else None
    RESULTS.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(dir=RESULTS, prefix="scale-"))
    cache = Path(tempfile.mkdtemp(dir=RESULTS, prefix="scale-cache-"))  # derived files start cold

    def child(config: dict[str, Any]) -> dict[str, Any]:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", json.dumps(config), "--workdir", str(workdir)],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "LIFECYCLE_MEMORY_CACHE_DIR": str(cache)},
        )
        if proc.returncode != 0:
            return {"error": (proc.stderr or proc.stdout)[-600:]}
        return json.loads(proc.stdout.strip().splitlines()[-1])

    try:
        result = child(cfg)
        if server_pid and "error" not in result:
            result["server_rss_growth_mb"] = round(rss_mb(server_pid) - (server_before or 0), 1)
        if cfg["kind"] == "namespace" and "error" not in result:
            # Fresh workers on the namespace just written. Ours: the first finds the sidecar
            # the loader saved plus the delta of its later writes; the next finds the sidecar
            # without the delta (as after another process's writes); then the sidecars are
            # deleted, so the next reads the namespace in full (and saves one), and the
            # last loads that. langchain-chroma: a fresh process's first search.
            if cfg["system"] == "ours":
                result["cold_delta"] = child({**cfg, "reopen": True})
                for delta in workdir.rglob("*.delta.json"):  # the loader's later writes as another
                    delta.unlink()  # process's: the sidecar is stale, brought up to date from the documents
                result["cold_stale"] = child({**cfg, "reopen": True})
                for folder in ("lifecycle-snapshots", "snapshots"):
                    shutil.rmtree(workdir / folder, ignore_errors=True)
            result["cold_full_read"] = child({**cfg, "reopen": True})
            if cfg["system"] == "ours":
                result["cold_sidecar"] = child({**cfg, "reopen": True})
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    return result


# ---------------------------------------------------------------------------- the run
def start_server(port: int) -> tuple[subprocess.Popen[bytes], Path]:
    path = Path(tempfile.mkdtemp(dir=RESULTS, prefix="server-"))
    exe = Path(sys.executable).with_name("chroma")
    proc = subprocess.Popen(
        [str(exe), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import chromadb

    for _ in range(100):
        try:
            chromadb.HttpClient(host="127.0.0.1", port=port).heartbeat()
            return proc, path
        except Exception:
            time.sleep(0.3)
    proc.kill()
    msg = f"chroma run did not start on port {port}"
    raise RuntimeError(msg)


def show(title: str, rows: list[tuple[str, dict[str, Any]]], columns: list[str]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    table.add_column("system")
    for c in columns:
        table.add_column(c, justify="right")
    for name, row in rows:
        cells = []
        for c in columns:
            value: Any = row
            for part in c.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            cells.append("-" if value is None else str(value))
        table.add_row(name, *cells)
    Console(width=200).print(table)
    for name, row in rows:
        if "error" in row:
            print(f"{name}: ERROR {row['error']}")


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    ns = results.get("namespace", {})
    for where, style in (("embedded", "-"), ("server", "--")):
        for system, color in (("ours", "tab:blue"), ("langchain-chroma", "tab:orange")):
            pts = [(int(s), r) for s, r in ns.get(where, {}).get(system, {}).items() if "error" not in r]
            if not pts:
                continue
            xs = [p[0] for p in pts]
            label = f"{system} ({where})"
            axes[0].plot(xs, [p[1]["warm"]["p50"] for p in pts], style, color=color, marker="o", label=label)
            axes[1].plot(
                xs, [p[1]["search_after_write"]["p50"] for p in pts], style, color=color, marker="o", label=label
            )
    for ax, title in ((axes[0], "warm search p50 (ms)"), (axes[1], "first search after a write p50 (ms)")):
        ax.set_xscale("log")
        ax.set_xlabel("records in the namespace")
        ax.set_title(title)
        ax.legend(fontsize=7)
    lay = results.get("layout", {}).get("embedded", {})
    labels, rss = [], []
    for key, r in lay.items():
        if "error" not in r:
            labels.append(key.replace(" ", "\n"))
            rss.append(r["rss_growth_mb"])
    axes[2].bar(range(len(rss)), rss, color="tab:green")
    axes[2].set_xticks(range(len(rss)), labels, fontsize=6)
    axes[2].set_title("layout: RSS growth after searching every user (MB)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=["namespace", "attributes", "users", "layout"])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--attributes", type=int, default=50000)
    parser.add_argument("--users", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument(
        "--user-layouts", nargs="+", default=["bucketed", "collection"], help="layouts of the users part"
    )
    parser.add_argument(
        "--namespace-layout",
        choices=["bucketed", "collection"],
        help="store layout of the namespace/warm/attributes parts",
    )
    parser.add_argument(
        "--systems", nargs="+", default=["ours", "langchain-chroma"], help="systems of the users part (default both)"
    )
    parser.add_argument("--max-collections", type=int, default=2000, help="cap for one-collection-per-user runs")
    parser.add_argument("--layout-sizes", nargs="+", default=["10000x20", "100x2000"])
    parser.add_argument(
        "--layouts",
        nargs="+",
        default=["per-namespace", "shared", "hybrid", "bucketed"],
        help="layouts of the layout part; bucketed: 16 buckets searched as the store does (unfiltered when it pays)",
    )
    parser.add_argument("--server", help="HOST:PORT of a `chroma run` server, or 'auto' (port 8108)")
    parser.add_argument("--server-pid", type=int, help="pid of the given server (its RSS growth is reported)")
    parser.add_argument("--server-only", action="store_true", help="skip the embedded rows")
    parser.add_argument("--quick", action="store_true", help="small sizes for a smoke run")
    parser.add_argument("--tag", default="scale", help="name of the JSON and PNG written to benchmarks/results/")
    parser.add_argument("--child")
    parser.add_argument("--workdir")
    args = parser.parse_args()
    if args.child:
        cfg = json.loads(args.child)
        print(json.dumps(CHILDREN[cfg["kind"]](cfg, Path(args.workdir))))
        return
    if args.quick:
        args.sizes, args.attributes, args.users = [500, 2000], 2000, [100]
        args.layout_sizes, args.max_collections = ["300x20", "10x500"], 300
    RESULTS.mkdir(parents=True, exist_ok=True)
    servers: list[tuple[str, str | None, int | None]] = [("embedded", None, None)]
    started = None
    if args.server == "auto":
        started = start_server(8108)
        servers.append(("server", "127.0.0.1:8108", started[0].pid))
    elif args.server:
        servers.append(("server", args.server, args.server_pid))
    if args.server_only:
        servers = servers[1:]
    results: dict[str, Any] = {}
    try:
        for where, server, pid in servers:
            if "namespace" in args.parts:
                part = results.setdefault("namespace", {}).setdefault(where, {})
                rows = []
                for size in args.sizes:
                    for system in ("ours", "langchain-chroma"):
                        cfg = {"kind": "namespace", "system": system, "size": size, "layout": args.namespace_layout}
                        r = run_child(cfg, server, pid)
                        part.setdefault(system, {})[str(size)] = r
                        rows.append((f"{system} {size}", r))
                cols = ["load_s", "first_search_ms", "warm.p50", "warm.p95", "write.p50"]
                cols += ["search_after_write.p50", "search_after_write.p95", "rss_growth_mb", "server_rss_growth_mb"]
                cols += ["first_search_read_ms", "first_search_snapshot_ms", "read_through_api_ms"]
                cols += ["nearest_ids_ms", "chroma_query_ms", "layout"]
                show(f"one namespace ({where}), ms", rows, cols)
                cold = [f"{c}.first_search_ms" for c in ("cold_delta", "cold_stale", "cold_full_read", "cold_sidecar")]
                cold += [f"{c}.{m}" for c in ("cold_full_read", "cold_sidecar") for m in ("warm.p50", "rss_growth_mb")]
                show(f"one namespace ({where}), a fresh worker's first search, ms", rows, cold)
            if "warm" in args.parts:
                part = results.setdefault("warm", {}).setdefault(where, {})
                rows = []
                for size in args.sizes:
                    cfg = {"kind": "warm", "size": size, "layout": args.namespace_layout}
                    r = part[str(size)] = run_child(cfg, server, pid)
                    rows.append((f"{size} records", r))
                cols = ["ours.p50", "ours.p95", "langchain-chroma.p50", "langchain-chroma.p95", "ratio_p50"]
                cols += ["langchain-chroma-retriever.p50", "ratio_p50_retriever"]
                show(f"warm search, both systems in one process, queries interleaved ({where}), ms", rows, cols)
            if "attributes" in args.parts and where == "embedded":
                cfg = {"kind": "namespace", "system": "ours", "size": args.attributes, "attributes": True, "writes": 5}
                cfg["layout"] = args.namespace_layout
                r = run_child(cfg, server, pid)
                results["attributes"] = r
                show(
                    f"{args.attributes} distinct attributes (embedded), ms",
                    [("ours", r)],
                    ["first_search_ms", "cards_warming_at_first_search", "first_search_reopened_ms"]
                    + ["warm.p50", "search_after_write.p50"]
                    + ["rss_growth_mb", "first_search_read_ms", "first_search_snapshot_ms"]
                    + ["router_embed_cards_ms", "router_load_cards_ms", "router_install_and_score_ms"]
                    + ["mention_index_ms"],
                )
            if "users" in args.parts:
                part = results.setdefault("users", {}).setdefault(where, {})
                rows = []
                for layout in args.user_layouts:
                    for users in args.users:
                        n = min(users, args.max_collections) if layout == "collection" else users
                        for system in args.systems:
                            cfg = {"kind": "users", "system": system, "users": n, "records": 20, "layout": layout}
                            r = run_child(cfg, server, pid)
                            r["users_run"], r["users_asked"], r["layout"] = n, users, layout
                            part[f"{system} {layout} {users}"] = r
                            capped = f" (capped from {users})" if n < users else ""
                            rows.append((f"{system} {layout} {n} users x 20{capped}", r))
                cols = ["load_s", "rss_after_load_mb", "rss_growth_mb", "rss_growth_trimmed_mb", "disk_mb"]
                cols += ["search.p50", "search.p95"]
                show(
                    f"users ({where}), each system in the same layout",
                    rows,
                    cols + ["cross_tenant_results", "server_rss_growth_mb"],
                )
            if "users-mixed" in args.parts:
                part = results.setdefault("users-mixed", {}).setdefault(where, {})
                rows = []
                for layout in args.user_layouts:
                    for users in args.users:
                        n = min(users, args.max_collections) if layout == "collection" else users
                        cfg = {"kind": "users-mixed", "users": n, "records": 20, "layout": layout}
                        r = part[f"{layout} {n}"] = run_child(cfg, server, pid)
                        rows.append((f"{layout} {n} users x 20", r))
                cols = [f"{rnd}.{c}" for rnd in ("first", "second") for c in ("ours.p50", "langchain-chroma.p50")]
                cols += ["first.ratio_p50", "second.ratio_p50", "first.ours.p95", "first.langchain-chroma.p95"]
                cols += ["first.ours.cross_tenant_results", "first.langchain-chroma.cross_tenant_results"]
                show(f"users, both systems in one process, searches interleaved ({where}), ms", rows, cols)
            if "layout" in args.parts:
                part = results.setdefault("layout", {}).setdefault(where, {})
                rows = []
                for spec in args.layout_sizes:
                    users, per = (int(x) for x in spec.split("x"))
                    for layout in args.layouts:
                        n = min(users, args.max_collections) if layout == "per-namespace" and per <= 1000 else users
                        cfg = {
                            "kind": "layout",
                            "layout": layout,
                            "users": n,
                            "records": per,
                            "buckets": 16,
                            "promote": 1000,
                        }
                        r = run_child(cfg, server, pid)
                        key = f"{layout} {n}x{per}"
                        part[key] = r
                        rows.append((key + (f" (capped from {users})" if n < users else ""), r))
                cols = ["load_s", "rss_growth_mb", "disk_mb", "search.p50", "search.p95", "cross_tenant_results"]
                show(f"layouts, chromadb directly ({where})", rows, cols + ["server_rss_growth_mb"])
    finally:
        if started is not None:
            started[0].terminate()
            started[0].wait(timeout=30)
            shutil.rmtree(started[1], ignore_errors=True)
    out = RESULTS / (f"{args.tag}-quick.json" if args.quick else f"{args.tag}.json")
    out.write_text(json.dumps(results, indent=2))
    plot(results, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
