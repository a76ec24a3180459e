"""Performance guard: the issue's bars on the embedded store, next to plain ``langchain-chroma``.

Every measurement runs in a fresh child process (RSS growth and first searches are that
process's alone), ours and the baseline on the same data in the same run. Ours is the
default config (``ChromaMemoryStore(path, embeddings=...)``: 16 bucket collections,
``LifecycleRetriever`` with its defaults, k=6); the baseline is ``langchain_chroma.Chroma``
with its defaults (``similarity_search(k=6)``).

* users: 2,000 users x 20 records (``put_records`` into ``("memories", f"u{i}")``), then one
  search per user. Baseline: 16 collections (users hashed into them, like the store's 16
  buckets), a ``{"user": ...}`` filter. Bar: RSS growth <= 200 MB (from after the imports).
* first search: a 20k-record namespace written by another process; a fresh process opens
  the folder, constructs the store and the retriever and runs one ``invoke`` (timed from
  just before the store). Twice: with the snapshot file the writer left (a bulk
  ``put_records`` refreshes it), then with that file removed first (a folder written by an
  older version, or the file deleted). Imports and the default encoder's load are timed
  separately. Bar: <= 2 s, on the first (the default path).
* write -> search: a process holding a warm snapshot of the 20k namespace: ``put_record``
  of a new record, then an ``invoke`` that should find it. Bar: p50 <= 150 ms.
* warm: 10k records, both systems in one process, the same queries back to back. Bar:
  ours <= 2x ``similarity_search`` at p50 (``as_retriever().invoke`` shown too).

Embeddings: ``HashEmbeddings`` (``_synthetic.py``, cheap and deterministic) for the bulk data of
users / first search / write -> search, for both systems; the real default encoder
(Universal Sentence Encoder) for the warm ratio, where query embedding is part of what
both pay (``--warm-embedder hash`` for the stores alone). Bars are guards, not targets.
Children cache bytecode (see ``run_child``). A shared machine makes every number noisy.

Run: ``python benchmarks/perf_guard.py [--quick] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import QUERIES, HashEmbeddings, client, ms, percentile, rss_mb, sentences, stats

RESULTS = Path(__file__).resolve().parent / "results"
NS = ("memories", "big")
K = 6  # LifecycleRetriever's default k; the baseline returns as many
BATCH = 2000


def embedder(name: str) -> Any:
    if name == "use":
        from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings

        return UniversalSentenceEncoderEmbeddings()
    return HashEmbeddings()


def ours_store(work: Path, emb: Any) -> Any:
    from langchain_lifecycle_memory import ChromaMemoryStore

    return ChromaMemoryStore(str(work / "ours"), embeddings=emb)


def lc_store(work: Path, emb: Any) -> Any:
    from langchain_chroma import Chroma

    return Chroma(collection_name="lc_big", embedding_function=emb, persist_directory=str(work / "lc"))


def fill(store: Any, lc: Any, texts: list[str]) -> None:
    """The same texts into one namespace of ours and one ``Chroma`` collection, in batches."""
    from langchain_lifecycle_memory import MemoryRecord

    for i in range(0, len(texts), BATCH):
        chunk = texts[i : i + BATCH]
        if store is not None:
            store.put_records([MemoryRecord(namespace=NS, content=t) for t in chunk])
        if lc is not None:
            lc.add_texts(chunk)


# ---------------------------------------------------------------------------- children
def child_users(cfg: dict[str, Any], work: Path) -> dict[str, Any]:
    import langchain_chroma  # noqa: F401  (both systems' imports before the base RSS)

    from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever, MemoryRecord  # noqa: F401

    users, per, emb = cfg["users"], 20, HashEmbeddings()
    texts = sentences(users * per)
    base = rss_mb()
    t0 = time.perf_counter()
    search = load_users(cfg["system"], work, emb, texts, users, per)
    load_s, loaded = time.perf_counter() - t0, rss_mb()
    samples, leaks, returned = [], 0, 0
    for u in range(users):
        t0 = time.perf_counter()
        owners = search(u, QUERIES[u % len(QUERIES)])
        samples.append(ms(t0))
        leaks += sum(o != f"u{u}" for o in owners)
        returned += len(owners)
    return {
        "load_s": round(load_s, 1),
        "rss_after_load_mb": round(loaded - base, 1),
        "rss_growth_mb": round(rss_mb() - base, 1),
        "search": stats(samples),
        "results": returned,
        "cross_tenant_results": leaks,
    }


def load_users(system: str, work: Path, emb: Any, texts: list[str], users: int, per: int) -> Any:
    """Write every user's records; returns ``search(u, query) -> owners of the results``."""
    if system == "ours":
        from langchain_lifecycle_memory import LifecycleRetriever, MemoryRecord

        store = ours_store(work, emb)
        retriever = LifecycleRetriever(store=store, namespace=("memories", "u0"))
        for u in range(users):
            ns = ("memories", f"u{u}")
            store.put_records([MemoryRecord(namespace=ns, content=t) for t in texts[u * per : (u + 1) * per]])
        return lambda u, q: [d.metadata["namespace"][1] for d in retriever.invoke(q, namespace=("memories", f"u{u}"))]
    from langchain_chroma import Chroma

    cl = client(work / "lc", None)
    buckets = [Chroma(client=cl, collection_name=f"lc_b{b}", embedding_function=emb) for b in range(16)]

    def bucket(u: int) -> Any:
        return buckets[zlib.crc32(f"u{u}".encode()) % len(buckets)]

    for u in range(users):
        bucket(u).add_texts(texts[u * per : (u + 1) * per], metadatas=[{"user": f"u{u}"}] * per)
    return lambda u, q: [d.metadata["user"] for d in bucket(u).similarity_search(q, k=K, filter={"user": f"u{u}"})]


def child_build(cfg: dict[str, Any], work: Path) -> dict[str, Any]:
    """Write the big namespace for both systems (another process than the ones measured)."""
    emb, texts, t0 = HashEmbeddings(), sentences(cfg["size"]), time.perf_counter()
    fill(ours_store(work, emb), None, texts)
    t1 = time.perf_counter()
    fill(None, lc_store(work, emb), texts)
    return {"load_s": {"ours": round(t1 - t0, 1), "langchain-chroma": round(time.perf_counter() - t1, 1)}}


def child_first(cfg: dict[str, Any], work: Path) -> dict[str, Any]:
    """A fresh process's first search of the existing namespace (imports and model load apart)."""
    ours, q = cfg["system"] == "ours", QUERIES[0]
    t0 = time.perf_counter()
    if ours:  # chromadb too: ours imports it when the store opens, langchain_chroma on import
        import chromadb  # noqa: F401

        from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever
    else:
        from langchain_chroma import Chroma  # noqa: F401
    import_s, emb, snapshot_file = time.perf_counter() - t0, HashEmbeddings(), None
    if ours and cfg.get("remove_file"):  # the package's own files, removed without opening the store (not timed)
        from langchain_lifecycle_memory.store.records import SNAPSHOT_FOLDER

        shutil.rmtree(work / "ours" / SNAPSHOT_FOLDER, ignore_errors=True)
    t0 = time.perf_counter()
    if ours:
        store = ChromaMemoryStore(str(work / "ours"), embeddings=emb)
        snapshot_file = os.path.exists(store.snapshot_path(NS) or "")
        retriever = LifecycleRetriever(store=store, namespace=NS)
        open_s = time.perf_counter() - t0
        docs = retriever.invoke(q)
    else:
        lc = lc_store(work, emb)
        open_s = time.perf_counter() - t0
        docs = lc.similarity_search(q, k=K)
    first_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    embedder("use").embed_query(q)  # what the default encoder adds to a process's first search
    return {
        "import_s": round(import_s, 3),
        "open_s": round(open_s, 3),
        "first_search_s": round(first_s, 3),
        "use_model_load_s": round(time.perf_counter() - t0, 3),
        "snapshot_file": snapshot_file,
        "results": len(docs),
    }


def child_write(cfg: dict[str, Any], work: Path) -> dict[str, Any]:
    """Write one record, then search for it, ``reps`` times, in a process holding a warm snapshot."""
    emb = HashEmbeddings()
    if cfg["system"] == "ours":
        from langchain_lifecycle_memory import LifecycleRetriever, MemoryRecord

        store = ours_store(work, emb)
        write = lambda text: store.put_record(MemoryRecord(namespace=NS, content=text))  # noqa: E731
        search = LifecycleRetriever(store=store, namespace=NS).invoke
    else:
        lc = lc_store(work, emb)
        write, search = (lambda text: lc.add_texts([text])), (lambda q: lc.similarity_search(q, k=K))
    search(QUERIES[0]), search(QUERIES[1])  # warm
    writes, searches, totals, found = [], [], [], 0
    for n in range(cfg["reps"]):
        text, query = f"My parking spot at the office is number P{n:04d}", f"which parking spot is P{n:04d}"
        t0 = time.perf_counter()
        write(text)
        t1 = time.perf_counter()
        docs = search(query)
        t2 = time.perf_counter()
        writes.append((t1 - t0) * 1000)
        searches.append((t2 - t1) * 1000)
        totals.append((t2 - t0) * 1000)
        found += any(d.page_content == text for d in docs)
    return {"write_search": stats(totals), "write": stats(writes), "search": stats(searches), "found": found}


def child_warm(cfg: dict[str, Any], work: Path) -> dict[str, Any]:
    """Both systems in one process, the same queries back to back (load hits both alike)."""
    from langchain_lifecycle_memory import LifecycleRetriever

    emb = embedder(cfg["embedder"])
    store, lc = ours_store(work, emb), lc_store(work, emb)
    fill(store, lc, sentences(cfg["size"]))
    retriever, lc_retriever = LifecycleRetriever(store=store, namespace=NS), lc.as_retriever(search_kwargs={"k": K})
    systems = {
        "ours": retriever.invoke,
        "langchain-chroma": lambda q: lc.similarity_search(q, k=K),
        "langchain-chroma-retriever": lc_retriever.invoke,
    }
    samples: dict[str, list[float]] = {name: [] for name in systems}
    for n in range(-len(QUERIES), cfg["queries"]):  # the first round warms every system
        for name, search in systems.items():
            t0 = time.perf_counter()
            search(QUERIES[n % len(QUERIES)])
            if n >= 0:
                samples[name].append(ms(t0))
    out: dict[str, Any] = {name: stats(s) for name, s in samples.items()}
    for name in ("langchain-chroma", "langchain-chroma-retriever"):
        for q in (50, 95):
            out[f"ratio_p{q}_vs_{name}"] = round(percentile(samples["ours"], q) / percentile(samples[name], q), 2)
    return out


def child_prime(cfg: dict[str, Any], work: Path) -> dict[str, Any]:
    """Import everything once, so that the measured children find compiled bytecode."""
    import langchain_chroma  # noqa: F401

    from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever  # noqa: F401

    embedder("use").embed_query("warm-up")
    return {}


CHILDREN = {"prime": child_prime, "users": child_users, "build": child_build, "first": child_first}
CHILDREN |= {"write": child_write, "warm": child_warm}


def run_child(kind: str, cfg: dict[str, Any], work: Path) -> dict[str, Any]:
    """One measurement in a fresh process. Bytecode is cached (``PYTHONPYCACHEPREFIX``) as after a
    pip install, even where the environment sets ``PYTHONDONTWRITEBYTECODE`` (else every import compiles)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(RESULTS / ".perf-guard-pycache")
    cmd = [sys.executable, __file__, "--child", kind, "--cfg", json.dumps(cfg), "--workdir", str(work)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        print(f"{kind} {cfg}: ERROR\n{proc.stderr[-3000:]}", file=sys.stderr)
        return {"error": (proc.stderr or proc.stdout)[-3000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------- the run
def measure(args: argparse.Namespace) -> dict[str, Any]:
    raw: dict[str, Any] = {"users": {}, "first": {}, "write": {}}
    with tempfile.TemporaryDirectory(dir=RESULTS, prefix="perf-guard-") as tmp:
        run_child("prime", {}, Path(tmp))
        for system in ("ours", "langchain-chroma"):
            work = Path(tmp) / f"users-{system}"
            raw["users"][system] = run_child("users", {"system": system, "users": args.users}, work)
        big = Path(tmp) / "big"
        raw["build"] = run_child("build", {"size": args.size}, big)
        for run in ("file", "no_file"):  # ours: with the file the writer left, then with it removed
            for system in ("ours", "langchain-chroma"):
                cfg = {"system": system, "remove_file": run == "no_file"}
                raw["first"].setdefault(system, {})[run] = run_child("first", cfg, big)
        for system in ("ours", "langchain-chroma"):
            raw["write"][system] = run_child("write", {"system": system, "reps": args.reps}, big)
        cfg = {"size": args.warm_size, "embedder": args.warm_embedder, "queries": args.queries}
        raw["warm"] = run_child("warm", cfg, Path(tmp) / "warm")
    return raw


def rows(raw: dict[str, Any], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Measurement rows: name, ours, langchain-chroma, bar, within bar (None: info only, or an error)."""
    u, n, w = f"{args.users:,} users x 20", f"{args.size:,} records", f"warm {args.warm_size:,} ({args.warm_embedder})"
    lc, lcr = "langchain-chroma", "langchain-chroma-retriever"
    specs = [  # name, part, path of ours, of langchain-chroma (None: the same; "": none), bar
        (f"{u}: RSS growth (MB)", "users", "rss_growth_mb", None, 200),
        (f"{u}: RSS growth after the writes, before searching (MB)", "users", "rss_after_load_mb", None, None),
        (f"{u}: search p50 / p95 (ms)", "users", "search.p50|search.p95", None, None),
        (f"{u}: cross-tenant results", "users", "cross_tenant_results", None, None),
        (f"{n}: first search, fresh process, the writer's snapshot file (s)", "first", "file.first_search_s", None, 2),
        (f"{n}: first search, fresh process, snapshot file removed (s)", "first", "no_file.first_search_s", None, None),
        (f"{n}: of it, opening store + retriever (s)", "first", "no_file.open_s|file.open_s", None, None),
        (f"{n}: imports before it (s)", "first", "no_file.import_s|file.import_s", None, None),
        (f"{n}: default encoder load + first embed (s)", "first", "no_file.use_model_load_s", None, None),
        (f"{n}: write -> search p50 (ms)", "write", "write_search.p50", None, 150),
        (f"{n}: write -> search p95 (ms)", "write", "write_search.p95", None, None),
        (f"{n}: write p50 / search p50 (ms)", "write", "write.p50|search.p50", None, None),
        (f"{n}: written record found (of {args.reps})", "write", "found", None, None),
        (f"{w}: p50 / p95 (ms)", "warm", "ours.p50|ours.p95", f"{lc}.p50|{lc}.p95", None),
        (f"{w}: as_retriever().invoke p50 / p95 (ms)", "warm", "", f"{lcr}.p50|{lcr}.p95", None),
        (f"{w}: ours / similarity_search, p50 (x)", "warm", f"ratio_p50_vs_{lc}", "", 2),
        (f"{w}: ours / similarity_search, p95 (x)", "warm", f"ratio_p95_vs_{lc}", "", None),
        (f"{w}: ours / as_retriever().invoke, p50 (x)", "warm", f"ratio_p50_vs_{lcr}", "", None),
    ]
    out = []
    for name, part, ours_path, lc_path, bar in specs:
        both = {"ours": raw[part].get("ours", {}), lc: raw[part].get(lc, {})} if part != "warm" else {}
        ours = cell(both.get("ours", raw[part]), ours_path)
        base = cell(both.get(lc, raw[part]), ours_path if lc_path is None else lc_path)
        ok = ours <= bar if bar is not None and isinstance(ours, (int, float)) else None
        out.append({"measurement": name, "ours": ours, lc: base, "bar": bar, "within_bar": ok})
    return out


def cell(row: dict[str, Any], path: str) -> Any:
    if not path:
        return None
    if "error" in row:
        return "error"
    values = []
    for one in path.split("|"):
        value: Any = row
        for part in one.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        values.append(value)
    return values[0] if len(values) == 1 else " / ".join(map(str, values))


def show(table_rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="performance guard (bars are guards, not targets)", title_justify="left")
    for c in ("measurement", "ours", "langchain-chroma", "bar", "within bar"):
        table.add_column(c, justify="left" if c == "measurement" else "right")
    for r in table_rows:
        ok = {True: "yes", False: "NO", None: "-"}[r["within_bar"]]
        bar = None if r["bar"] is None else f"<= {r['bar']}"
        values = [r["measurement"], r["ours"], r["langchain-chroma"], bar]
        table.add_row(*["-" if v is None else str(v) for v in values], ok)
    Console(width=160).print(table)


def code_version() -> dict[str, Any]:
    """The commit, and whether the package had uncommitted changes (the children import what is on disk)."""
    git = ["git", "-C", str(Path(__file__).resolve().parents[1])]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "langchain_lifecycle_memory"], capture_output=True, text=True, check=False
    )
    return {"commit": head.stdout.strip(), "package_changes": dirty.stdout.split("\n")[:-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes for a smoke run (200 users, 2k records)")
    parser.add_argument("--json", type=Path, help="default: results/perf_guard.json (-quick.json with --quick)")
    parser.add_argument("--warm-embedder", choices=["use", "hash"], default="use")
    parser.add_argument("--reps", type=int, default=30, help="write -> search repetitions")
    parser.add_argument("--queries", type=int, default=120, help="warm queries per system")
    parser.add_argument("--child")
    parser.add_argument("--cfg")
    parser.add_argument("--workdir")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child](json.loads(args.cfg), Path(args.workdir))))
        return
    args.users, args.size, args.warm_size = (200, 2000, 2000) if args.quick else (2000, 20000, 10000)
    args.json = args.json or RESULTS / ("perf_guard-quick.json" if args.quick else "perf_guard.json")
    RESULTS.mkdir(parents=True, exist_ok=True)
    started, date = time.perf_counter(), datetime.now(timezone.utc).isoformat(timespec="seconds")
    version = code_version()
    raw = measure(args)
    table_rows = rows(raw, args)
    show(table_rows)
    result = {
        "date": date,
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()},
        "embeddings": {"bulk": "HashEmbeddings (benchmarks/_synthetic.py, 64-d)", "warm": args.warm_embedder},
        "sizes": {"users": args.users, "namespace": args.size, "warm": args.warm_size, "reps": args.reps},
        "wall_s": round(time.perf_counter() - started, 1),
        "code": {"at_start": version, "at_end": code_version()},
        "measurements": table_rows,
        "raw": raw,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    print(f"wrote {args.json} ({result['wall_s']} s; a shared machine: timings are noisy)")


if __name__ == "__main__":
    main()
