"""Cold-start latency of the package and the CLI: what a shell user waits for per command.

Each number is the median wall time of N fresh processes (default 5):

* ``python -c "import langchain_lifecycle_memory"``
* ``lifecycle-memory --help``
* ``lifecycle-memory add`` and ``lifecycle-memory search`` on a store holding 1,000 records

The encoder's on-disk cache (tokenizer and weights, see ``embeddings.py``) lives in a
cache directory made for this run, so the first ``add`` pays for filling it; it is
reported separately ("first run, empty cache") and the medians are over the following
runs. ``--no-cache`` times the uncached path (``LIFECYCLE_MEMORY_CACHE_DIR=off``) as the
baseline, in the same process.

    python benchmarks/cold_start.py            # medians of 5, 1,000-record store
    python benchmarks/cold_start.py --runs 3 --size 200
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _synthetic import sentences

BIN = Path(sys.executable).parent
CLI = str(BIN / "lifecycle-memory")
TARGETS = {"--help": 0.5, "import": 1.0, "add": 2.0, "search": 2.0}


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed


def build_store(path: Path, size: int, user: str) -> None:
    from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory, MemoryRecord

    memory = LifecycleMemory(ChromaMemoryStore(path))
    ns = memory.namespace(user)
    records = [MemoryRecord(namespace=ns, content=t, valid_from="2024-01-01T00:00:00Z") for t in sentences(size)]
    for i in range(0, size, 500):
        memory.store.put_records(records[i : i + 500])


def measure(runs: int, size: int, workdir: Path, cache: str) -> dict[str, object]:
    env = {**os.environ, "LIFECYCLE_MEMORY_CACHE_DIR": cache, "LIFECYCLE_MEMORY_PATH": str(workdir / "store")}
    user = "bench"
    cmds = {
        "import": [sys.executable, "-c", "import langchain_lifecycle_memory"],
        "--help": [CLI, "--help"],
        "add": [CLI, "add", "-u", user, "I switched to the Helix editor last week"],
        "search": [CLI, "search", "-u", user, "What editor do I use?"],
    }
    first_add = timed(cmds["add"], env)  # fills the encoder cache when there is one
    out: dict[str, object] = {"first add": first_add}
    samples: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(runs):  # interleaved, so that a change of machine load hits every command alike
        for name, cmd in cmds.items():
            samples[name].append(timed(cmd, env))
    out |= {name: statistics.median(vals) for name, vals in samples.items()}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--no-cache", action="store_true", help="Also time without the encoder's disk cache.")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="lifecycle-coldstart-"))
    try:
        os.environ["LIFECYCLE_MEMORY_CACHE_DIR"] = str(workdir / "cache")
        build_store(workdir / "store", args.size, "bench")
        rows = {"cached encoder": measure(args.runs, args.size, workdir, str(workdir / "cache"))}
        if args.no_cache:
            rows["no disk cache"] = measure(args.runs, args.size, workdir, "off")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"Cold start, median of {args.runs} fresh processes, store of {args.size} records (seconds)")
    names = ["import", "--help", "add", "search", "first add"]
    print(f"{'':16}" + "".join(f"{n:>12}" for n in names))
    for label, row in rows.items():
        print(f"{label:16}" + "".join(f"{row[n]:>12.2f}" for n in names))
    print(f"{'target':16}" + "".join(f"{TARGETS[n]:>12.1f}" if n in TARGETS else f"{'':>12}" for n in names))


if __name__ == "__main__":
    main()
