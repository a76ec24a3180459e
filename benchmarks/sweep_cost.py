"""What a sweep costs when nothing (or little) is due: ``where`` on time twins vs a full scan.

Builds an embedded store with N records spread over T tenants (deterministic fake
embeddings, so building is Chroma's cost only), then times in the same process:

* **naive**: ``list_records`` of every namespace + ``RetentionPolicy.sweep_plan`` in Python;
* **sweep**: ``lifecycle.sweep`` (Chroma ``where`` on ``t.expires_at`` / ``t.valid_from`` /
  ``t.updated_at`` per namespace), nothing due;
* **sweep, 1% due**: the same with 1% of the records past their deadline (``dry_run``).

    python benchmarks/sweep_cost.py [--sizes 10000 100000] [--tenants 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

from langchain_core.embeddings import DeterministicFakeEmbedding
from rich.progress import Progress

from langchain_lifecycle_memory.lifecycle.operations import sweep
from langchain_lifecycle_memory.schema import KINDS, MemoryRecord
from langchain_lifecycle_memory.store.chroma_store import ChromaMemoryStore
from langchain_lifecycle_memory.store.retention import RetentionPolicy

NOW = datetime(2024, 6, 1, tzinfo=timezone.utc)


def build(path: Path, n: int, tenants: int, seed: int = 0) -> tuple[ChromaMemoryStore, float]:
    """A store of ``n`` fresh records (nothing due at ``NOW``); 1% expire one hour later."""
    rng = random.Random(seed)
    store = ChromaMemoryStore(path, embeddings=DeterministicFakeEmbedding(size=16), collection_prefix="sweepcost")
    started = time.perf_counter()
    per_tenant = n // tenants
    with Progress(transient=True) as bar:
        task = bar.add_task(f"building {n} records", total=n)
        for t in range(tenants):
            batch = []
            for i in range(per_tenant):
                at = NOW - timedelta(days=rng.uniform(0, 20))
                expires = NOW + timedelta(hours=1) if rng.random() < 0.01 else None
                batch.append(
                    MemoryRecord(
                        namespace=("memories", f"user{t:04d}"),
                        content=f"tenant {t} memory {i}: something the user said",
                        kind=rng.choice(KINDS),
                        valid_from=at,
                        created_at=at,
                        updated_at=at,
                        expires_at=expires,
                    )
                )
            store.put_records(batch)
            bar.advance(task, len(batch))
    return store, time.perf_counter() - started


def naive_sweep(store: ChromaMemoryStore, now: datetime, policy: RetentionPolicy) -> int:
    """The full-scan way: read every record, decide in Python."""
    due = 0
    for ns in store.list_namespaces(limit=1_000_000):
        plan = policy.sweep_plan(store.list_records(ns), now)
        due += len(plan.archive) + len(plan.delete)
    return due


def interleaved(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, tuple[float, object]]:
    """Median milliseconds and last result of each function, run round-robin so that
    Chroma's background work after the build weighs on all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    results: dict[str, object] = {}
    for _ in range(repeat):
        for name, fn in fns.items():
            started = time.perf_counter()
            results[name] = fn()
            times[name].append((time.perf_counter() - started) * 1000)
    return {name: (statistics.median(times[name]), results[name]) for name in fns}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    policy = RetentionPolicy()
    later = NOW + timedelta(hours=2)
    rows = []
    for n in args.sizes:
        with tempfile.TemporaryDirectory(prefix="sweepcost") as tmp:
            store, build_s = build(Path(tmp) / "chroma", n, args.tenants)
            sweep(store, now=NOW, policy=policy)  # warm-up: opens every collection
            got = interleaved(
                {
                    "naive": lambda s=store: naive_sweep(s, NOW, policy),
                    "sweep": lambda s=store: sweep(s, now=NOW, policy=policy).archived,
                    "naive_due": lambda s=store: naive_sweep(s, later, policy),
                    "sweep_due": lambda s=store: sweep(s, now=later, policy=policy, dry_run=True).archived,
                },
                args.repeat,
            )
            assert got["naive"][1] == 0 and got["sweep"][1] == 0
            assert got["sweep_due"][1] == got["naive_due"][1]
            rows.append((n, build_s, got))
    print(f"\nembedded Chroma, {args.tenants} tenants, median of {args.repeat} interleaved runs")
    head = (
        f"{'records':>8} {'build s':>8} {'naive no-op ms':>15} {'sweep no-op ms':>15} {'speedup':>8} "
        f"{'naive 1% due ms':>16} {'sweep 1% due ms':>16} {'due':>5}"
    )
    print(head)
    for n, build_s, got in rows:
        naive_ms, sweep_ms = got["naive"][0], got["sweep"][0]
        print(
            f"{n:>8} {build_s:>8.0f} {naive_ms:>15.0f} {sweep_ms:>15.0f} {naive_ms / sweep_ms:>7.1f}x "
            f"{got['naive_due'][0]:>16.0f} {got['sweep_due'][0]:>16.0f} {got['sweep_due'][1]:>5}"
        )


if __name__ == "__main__":
    main()
