"""Snapshot after a write: ``Snapshot.apply`` (splice) next to ``build_snapshot`` (rebuild).

In memory, no store: one namespace of ``--size`` fact records over ``--slots``
single-valued slots (several active versions each, so slot resolution has forks to
linearise), a third with write-time cues, one distinct value per record. Each
kind of write is applied ``--writes`` times; the rebuild over the same records, which
is what a search after a write cost before splicing, is timed in the same process.

Run: ``python benchmarks/snapshot_apply.py [--size 50000]``. Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import datetime, timedelta, timezone

from langchain_lifecycle_memory.read._snapshot import build_snapshot
from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
NS = ("memories", "big")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50_000)
    parser.add_argument("--slots", type=int, default=5_000)
    parser.add_argument("--writes", type=int, default=10)
    args = parser.parse_args()
    at = [T0 + timedelta(seconds=j) for j in range(args.size)]
    records = [
        MemoryRecord(
            namespace=NS,
            content=f"The user likes topic {j} value {j} with words alpha beta {j % 97}",
            entity="user",
            attribute=f"topic_{j % args.slots}",
            value=f"value {j}",
            kind="fact",
            created_at=at[j],
            updated_at=at[j],
            valid_from=at[j],
            metadata={"cues": [f"cue {j % 13}"]} if j % 3 == 0 else {},
        )
        for j in range(args.size)
    ]
    t0 = time.perf_counter()
    snap = build_snapshot(None, records, namespace=NS)
    build_ms = (time.perf_counter() - t0) * 1e3
    print(f"{args.size} records, {args.slots} slots: build_snapshot {build_ms:.1f} ms")

    def free(i: int) -> list[tuple[str, dict]]:
        t = T0 + timedelta(days=10, seconds=i)
        r = MemoryRecord(namespace=NS, content=f"The user adopted a cat {i}", created_at=t)
        return [(r.id, r.to_value())]

    def version(i: int) -> list[tuple[str, dict]]:  # one more active version of a slot: resolution redone there
        t = T0 + timedelta(days=11, seconds=i)
        r = MemoryRecord(
            namespace=NS, content=f"The user now likes topic {i}", entity="user", attribute=f"topic_{i}",
            value=f"new {i}", created_at=t, valid_from=t,
        )  # fmt: skip
        return [(r.id, r.to_value())]

    def archive(i: int) -> list[tuple[str, dict]]:  # an old record archived in place
        r = snap.stored[1000 + i].transition(MemoryStatus.ARCHIVED, at=T0 + timedelta(days=12))
        return [(r.id, r.to_value())]

    for label, make in [("free-text write", free), ("slot version", version), ("archive in place", archive)]:
        apply_ms, rebuild_ms = [], []
        for i in range(args.writes):
            changes = make(i)
            t0 = time.perf_counter()
            snap = snap.apply(changes, token=i)
            apply_ms.append((time.perf_counter() - t0) * 1e3)
            if i < 2:  # the rebuild is slow: twice is enough for its p50
                t0 = time.perf_counter()
                build_snapshot(None, snap.stored, namespace=NS)
                rebuild_ms.append((time.perf_counter() - t0) * 1e3)
        print(
            f"{label:18s} apply p50 {statistics.median(apply_ms):7.1f} ms (max {max(apply_ms):.1f}) | "
            f"rebuild p50 {statistics.median(rebuild_ms):7.1f} ms"
        )


if __name__ == "__main__":
    main()
