"""Concurrent writers: forks, two current values, lost writes; and what serialising costs.

Three parts, one process (numbers side by side):

* **threads**: ``--threads`` threads share one embedded store and make ``--updates``
  updates in all to ``--slots`` shared single-valued slots through ``LifecycleMemory``;
* **processes**: ``--processes`` processes on one ``chroma run`` server do the same
  (``--server host:port``, else a server is started on 127.0.0.1 in a temporary folder);
* **single writer**: update latency of the current path (writer lock + check of the
  touched slots) next to the pre-change path (plan, then the two writes, nothing else),
  interleaved update by update on two stores so both see the same machine load.

The races run twice: on the current write path and on the pre-change one (readers are
the current ones in both). After the writers finish (no sweep, no repair call) it counts,
from the stored records:
slots with two active records, forks (a record that two records claim to supersede),
acknowledged writes missing or changed; and, through ``search(as_of=t)`` at every
record's start time, answers that carry two values of one slot. All must be 0 on the
current path.

The race parts use ``DeterministicFakeEmbedding`` (the embedder plays no part in slot
logic and keeps four processes light); the latency part uses the default offline embedder.

    python benchmarks/concurrency.py [--updates 200] [--threads 8] [--processes 4] [--server host:port]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from langchain_core.embeddings import DeterministicFakeEmbedding
from rich.console import Console
from rich.table import Table

from langchain_lifecycle_memory import ChromaMemoryStore, Fact, LifecycleMemory, MemoryRecord
from langchain_lifecycle_memory.write.update import plan_updates

USER = "bench"
NS = ("memories", USER)
FAKE_DIMS = 64


def fact(slot: str, value: str) -> Fact:
    """One update of a shared slot."""
    return Fact(entity="user", attribute=slot, value=value, content=f"The user's {slot} is now {value}")


def stored(store: ChromaMemoryStore) -> list[MemoryRecord]:
    """The records exactly as stored (plain LangGraph store API, no resolution)."""
    return [MemoryRecord.from_value(NS, item.value) for item in store.search(NS, limit=1_000_000)]


def measure(memory: LifecycleMemory, acknowledged: list[tuple[str, str]], slots: list[str]) -> dict[str, int]:
    """The four counts that must be 0 (see the module docstring)."""
    records = stored(memory.store)
    active = Counter(r.slot for r in records if r.slot and r.status.value == "active")
    claimed = Counter(r.supersedes for r in records if r.supersedes)
    by_id = {r.id: r for r in records}
    lost = sum(1 for rid, value in acknowledged if rid not in by_id or by_id[rid].value != value)
    two_at = 0
    for t in sorted({r.valid_from for r in records}):
        docs = memory.search("What is my " + " and ".join(slots) + "?", USER, as_of=t, k=50, min_score=0.0, now=t)
        per_slot = Counter(d.metadata.get("attribute") for d in docs if d.metadata.get("attribute"))
        two_at += any(n > 1 for n in per_slot.values())
    return {
        "updates acknowledged": len(acknowledged),
        "slots with two current values": sum(n > 1 for n in active.values()),
        "forks (superseded by two)": sum(n > 1 for n in claimed.values()),
        "lost acknowledged writes": lost,
        "as_of answers with two values": two_at,
    }


def _updates(worker: int, count: int, slots: list[str]) -> list[tuple[str, str]]:
    return [(slots[(worker + i) % len(slots)], f"w{worker}-{i}") for i in range(count)]


def update(memory: LifecycleMemory, f: Fact, baseline: bool) -> list[MemoryRecord]:
    """One update: the current path, or the pre-change one; returns the records added."""
    if baseline:
        return _baseline_update(memory, f)
    return memory.add_facts([f], USER).added


def run_threads(threads: int, updates: int, slots: list[str], folder: Path, baseline: bool) -> dict[str, int]:
    """``threads`` threads on one embedded store."""
    name = "threads-baseline" if baseline else "threads"
    store = ChromaMemoryStore(folder / name, embeddings=DeterministicFakeEmbedding(size=FAKE_DIMS))
    memory = LifecycleMemory(store)
    acknowledged: list[tuple[str, str]] = []
    start = threading.Barrier(threads)

    def writer(n: int) -> None:
        start.wait()
        for slot, value in _updates(n, updates // threads, slots):
            added = update(memory, fact(slot, value), baseline)
            acknowledged.extend((r.id, r.value or "") for r in added)

    pool = [threading.Thread(target=writer, args=(n,)) for n in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return measure(memory, acknowledged, slots)


def _process_worker(
    host: str, port: int, prefix: str, n: int, count: int, slots: list[str], go: Any, baseline: bool
) -> list[Any]:
    store = ChromaMemoryStore(
        host=host, port=port, collection_prefix=prefix, embeddings=DeterministicFakeEmbedding(size=FAKE_DIMS)
    )
    memory = LifecycleMemory(store)
    go.wait()
    acknowledged = []
    for slot, value in _updates(n, count, slots):
        acknowledged += [(r.id, r.value) for r in update(memory, fact(slot, value), baseline)]
    return acknowledged


def run_processes(
    processes: int, updates: int, slots: list[str], host: str, port: int, baseline: bool
) -> dict[str, int]:
    """``processes`` processes on one Chroma server."""
    prefix = f"bench{os.getpid()}{'b' if baseline else ''}"
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        go = manager.Barrier(processes)
        with ctx.Pool(processes) as pool:
            jobs = [
                pool.apply_async(_process_worker, (host, port, prefix, n, updates // processes, slots, go, baseline))
                for n in range(processes)
            ]
            acknowledged = [tuple(pair) for job in jobs for pair in job.get(timeout=3600)]
    store = ChromaMemoryStore(
        host=host, port=port, collection_prefix=prefix, embeddings=DeterministicFakeEmbedding(size=FAKE_DIMS)
    )
    try:
        return measure(LifecycleMemory(store), acknowledged, slots)  # type: ignore[arg-type]
    finally:
        for col in store.client.list_collections():  # every collection of the store, any layout
            if col.name.startswith(store.prefix + "."):
                store.client.delete_collection(col.name)


def _baseline_update(memory: LifecycleMemory, f: Fact) -> list[MemoryRecord]:
    """The pre-change path: plan, write the new records, then the archivals; no lock, no check."""
    plan = plan_updates(memory.store, NS, [f], config=memory.update_config)
    first = [*plan.added, *plan.refreshed]
    if first:
        memory.store.put_records(first)
    if plan.archived:
        memory.store.put_records(plan.archived)
    return plan.added


def run_latency(updates: int, slots: list[str], folder: Path) -> dict[str, float]:
    """Single-writer update latency, current vs pre-change path, interleaved."""
    from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings

    emb = UniversalSentenceEncoderEmbeddings()
    emb.embed_query("warm up")
    new = LifecycleMemory(ChromaMemoryStore(folder / "new", embeddings=emb))
    old = LifecycleMemory(ChromaMemoryStore(folder / "old", embeddings=emb))
    times: dict[str, list[float]] = {"new": [], "old": []}
    for i in range(updates):
        f = fact(slots[i % len(slots)], f"v{i}")
        order = [("new", new), ("old", old)] if i % 2 else [("old", old), ("new", new)]
        for name, memory in order:
            t = time.perf_counter()
            if name == "new":
                memory.add_facts([f], USER)
            else:
                _baseline_update(memory, f)
            times[name].append((time.perf_counter() - t) * 1000)
    warm = max(1, updates // 10)
    out = {}
    for name in ("new", "old"):
        kept = times[name][warm:]
        out[f"{name} p50 ms"] = statistics.median(kept)
        out[f"{name} mean ms"] = statistics.fmean(kept)
    out["ratio p50"] = out["new p50 ms"] / out["old p50 ms"]
    out["ratio mean"] = out["new mean ms"] / out["old mean ms"]
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(folder: Path) -> tuple[subprocess.Popen[bytes], int]:
    """``chroma run`` on 127.0.0.1 in ``folder``; returns once it answers."""
    import chromadb

    port = _free_port()
    chroma = Path(sys.executable).with_name("chroma")
    cmd = [str(chroma), "run", "--path", str(folder / "server"), "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            chromadb.HttpClient(host="127.0.0.1", port=port).heartbeat()
            return proc, port
        except Exception:
            time.sleep(0.2)
    proc.kill()
    msg = "chroma run did not answer within 60 s"
    raise RuntimeError(msg)


def main() -> None:
    """Print the tables and write ``benchmarks/results/concurrency.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=200, help="updates per race (all writers together)")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--slots", type=int, default=3, help="shared single-valued slots")
    parser.add_argument("--latency-updates", type=int, default=200)
    parser.add_argument("--server", default=None, help="host:port of a running `chroma run` (else one is started)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the races on the pre-change write path")
    args = parser.parse_args()
    slots = ["editor", "city", "drink", "employer", "phone", "car"][: max(1, min(6, args.slots))]
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        folder = Path(tmp)
        runs = [False] if args.no_baseline else [False, True]
        for baseline in runs:
            out["threads" + "-baseline" * baseline] = run_threads(args.threads, args.updates, slots, folder, baseline)
        server = None
        if args.server:
            host, _, port_text = args.server.rpartition(":")
            port = int(port_text)
        else:
            server, port = start_server(folder)
            host = "127.0.0.1"
        try:
            for baseline in runs:
                key = "processes" + "-baseline" * baseline
                out[key] = run_processes(args.processes, args.updates, slots, host, port, baseline)
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=30)
        out["latency"] = run_latency(args.latency_updates, slots, folder)

    console = Console(width=140)
    races = Table(title=f"{args.updates} updates in all to {len(slots)} shared slots (all 0 but the first row)")
    races.add_column("count")
    columns = [("threads", f"{args.threads} threads, embedded"), ("processes", f"{args.processes} processes, server")]
    if not args.no_baseline:
        columns.insert(1, ("threads-baseline", "pre-change writes"))
        columns.append(("processes-baseline", "pre-change writes"))
    for _, title in columns:
        races.add_column(title, justify="right")
    for key in out["threads"]:
        races.add_row(key, *(str(out[run][key]) for run, _ in columns))
    console.print(races)
    lat = out["latency"]
    latency = Table(title=f"Single-writer update latency, {args.latency_updates} updates (embedded, default embedder)")
    for col in ("path", "p50 ms", "mean ms"):
        latency.add_column(col, justify="right")
    latency.add_row("pre-change (plan + 2 writes)", f"{lat['old p50 ms']:.1f}", f"{lat['old mean ms']:.1f}")
    latency.add_row("lock + write + check", f"{lat['new p50 ms']:.1f}", f"{lat['new mean ms']:.1f}")
    latency.add_row("ratio", f"{lat['ratio p50']:.2f}x", f"{lat['ratio mean']:.2f}x")
    console.print(latency)
    path = Path(__file__).parent / "results" / "concurrency.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
