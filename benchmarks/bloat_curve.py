"""Failure mode 4 (bloat): a year of daily memories with a daily sweep vs append-only.

One user; every day 1-3 new facts (half of them updates of a rotating set of slots,
the rest free-text events, preferences and facts) and 2-4 raw ``episode`` turns. The
*swept* store archives the previous version of a slot on update and runs
``sweep(now=day)`` with the default ``RetentionPolicy`` every night (events and raw turns
expire; preferences and facts stay until superseded); the *baseline* appends every write
and never forgets. Both run in the same process on the same data.

    python benchmarks/bloat_curve.py [--days 365] [--seed 0]

Prints active records at the end of each month and writes
``benchmarks/results/bloat_curve.png``.
"""

from __future__ import annotations

import argparse
import random
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import chromadb
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_lifecycle_memory import ChromaMemoryStore
from langchain_lifecycle_memory.lifecycle.operations import sweep
from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus
from langchain_lifecycle_memory.store.retention import RetentionPolicy

START = datetime(2024, 1, 1, tzinfo=timezone.utc)
NS = ("memories", "bloat_user")
SLOTS: tuple[tuple[str, str], ...] = (
    ("editor", "preference"),
    ("drink", "preference"),
    ("music", "preference"),
    ("cuisine", "preference"),
    ("hobby", "preference"),
    ("city", "profile"),
    ("job", "profile"),
    ("employer", "profile"),
    ("car", "fact"),
    ("laptop", "fact"),
    ("travel_plan", "event"),
    ("current_book", "preference"),
)


@dataclass
class BloatResult:
    """Record counts after each sweep of the simulation."""

    days: list[int] = field(default_factory=list)
    """Day numbers (1-based) at which the counts below were taken."""
    swept: list[int] = field(default_factory=list)
    """Active records of the swept store."""
    stored: list[int] = field(default_factory=list)
    """Everything the swept store holds (active + archived history)."""
    baseline: list[int] = field(default_factory=list)
    """Active records of the append-only baseline (every write stays active)."""
    transient: list[int] = field(default_factory=list)
    """Active events and raw turns of the swept store (what expires by kind)."""
    archived: int = 0
    deleted: int = 0

    def at(self, day: int) -> tuple[int, int]:
        """``(swept active, baseline active)`` at the last measurement on or before ``day``."""
        seen = [j for j, d in enumerate(self.days) if d <= day]
        return (self.swept[seen[-1]], self.baseline[seen[-1]]) if seen else (0, 0)


def _store() -> ChromaMemoryStore:
    return ChromaMemoryStore(
        client=chromadb.EphemeralClient(),
        embeddings=DeterministicFakeEmbedding(size=8),
        collection_prefix=f"bloat{uuid.uuid4().hex[:8]}",
    )


def _record(content: str, kind: str, at: datetime, **slot: str) -> MemoryRecord:
    return MemoryRecord(namespace=NS, content=content, kind=kind, valid_from=at, created_at=at, updated_at=at, **slot)


def _day_records(rng: random.Random, day: int, at: datetime) -> list[tuple[MemoryRecord, tuple[str, str] | None]]:
    out: list[tuple[MemoryRecord, tuple[str, str] | None]] = []
    for i in range(rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.5:
            attribute, kind = rng.choice(SLOTS)
            value = f"{attribute} v{day}.{i}"
            content = f"The user's {attribute} is now {value}"
            out.append(
                (_record(content, kind, at, entity="user", attribute=attribute, value=value), ("user", attribute))
            )
            continue
        kind = "event" if roll < 0.85 else "preference" if roll < 0.95 else "fact"
        out.append((_record(f"day {day} {kind} {i}: something the user mentioned", kind, at), None))
    for turn in range(rng.randint(2, 4)):
        out.append((_record(f"day {day} turn {turn}: raw conversation", "episode", at), None))
    return out


def simulate(
    days: int = 365, seed: int = 0, policy: RetentionPolicy | None = None, sweep_every: int = 1
) -> BloatResult:
    """Run the year; the swept store is written and swept every ``sweep_every`` days.

    The baseline is append-only: nothing is ever archived or deleted, so its active
    count is the number of records written (no store needed to count it).
    """
    rng = random.Random(seed)
    policy = policy or RetentionPolicy()
    store = _store()
    result = BloatResult()
    current: dict[tuple[str, str], MemoryRecord] = {}
    batch: dict[str, MemoryRecord] = {}
    written = 0
    for day in range(days):
        at = START + timedelta(days=day, hours=12)
        writes = _day_records(rng, day, at)
        written += len(writes)
        for record, slot in writes:
            stamped = policy.stamp(record)
            if slot is not None:
                # The update step's job in the package; here the gold rule: archive the old version.
                old = current.get(slot)
                if old is not None:
                    batch[old.id] = old.transition(MemoryStatus.ARCHIVED, at=at, superseded_by=stamped.id)
                    result.archived += 1
                    stamped = stamped.model_copy(update={"supersedes": old.id})
                current[slot] = stamped
            batch[stamped.id] = stamped
        if (day + 1) % sweep_every and day != days - 1:
            continue
        store.put_records(list(batch.values()))
        batch.clear()
        report = sweep(store, now=START + timedelta(days=day + 1), policy=policy)
        gone = {i for n in report.namespaces for i in n.archived}
        current = {k: r for k, r in current.items() if r.id not in gone}
        result.archived += report.archived
        result.deleted += report.deleted
        result.days.append(day + 1)
        active = store.list_records(NS, statuses=MemoryStatus.ACTIVE, now=START + timedelta(days=day + 1))
        result.swept.append(len(active))
        result.transient.append(sum(r.kind in ("event", "episode") for r in active))
        result.stored.append(store.count_records(NS))
        result.baseline.append(written)
    return result


def _month_rows(result: BloatResult) -> list[tuple[str, int, int, int]]:
    rows = []
    for month in range(1, 13):
        month_end = (datetime(2024 + month // 12, month % 12 + 1, 1, tzinfo=timezone.utc) - START).days
        day = min(month_end, result.days[-1])
        i = max(j for j, d in enumerate(result.days) if d <= day)
        rows.append((f"2024-{month:02d} (day {result.days[i]})", result.swept[i], result.stored[i], result.baseline[i]))
        if month_end >= result.days[-1]:
            break
    return rows


def _plot(result: BloatResult, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    days = result.days
    ax.plot(days, result.baseline, label="append-only (no forgetting): active")
    ax.plot(days, result.stored, label="update + daily sweep: stored (incl. archived history)", linestyle="--")
    ax.plot(days, result.swept, label="update + daily sweep: active")
    ax.set_xlabel("day")
    ax.set_ylabel("records")
    ax.set_title("Memory bloat over a simulated year (default RetentionPolicy)")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sweep-every", type=int, default=1, help="days between writes+sweeps (default: daily)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "bloat_curve.png")
    args = parser.parse_args()
    started = time.perf_counter()
    result = simulate(args.days, args.seed, sweep_every=args.sweep_every)
    elapsed = time.perf_counter() - started
    print(f"{'month end':<18} {'swept active':>13} {'swept stored':>13} {'append-only':>12}")
    for month, active, stored, base in _month_rows(result):
        print(f"{month:<18} {active:>13} {stored:>13} {base:>12}")
    last = result.days[-1]
    q = min(90, last - 1)
    first_growth = result.at(q)[0] - result.at(0)[0]
    last_growth = result.at(last)[0] - result.at(last - q)[0]
    print(
        f"\nday {last}: swept active {result.swept[-1]} vs append-only {result.baseline[-1]} "
        f"({result.baseline[-1] / max(1, result.swept[-1]):.1f}x); archived {result.archived}, deleted {result.deleted}"
    )
    print(f"growth of swept active: first {q} days {first_growth:+d}, last {q} days {last_growth:+d}")
    print(f"simulated {args.days} days, sweep every {args.sweep_every} day(s), in {elapsed:.1f} s")
    _plot(result, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
