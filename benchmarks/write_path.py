"""Write path: LLM calls per turn, and reconcile+store time per fact excluding the model.

For 1k and 10k existing records in the user's namespace, replays turns through the LLM
extraction chain (a fake chat model that answers with JSON facts, counting its calls)
and the update step, timing ``plan_updates`` + ``apply_plan`` per fact. Baseline in the
same run: append-only ``put_records`` of the same facts (what the naive approach does).

Each size runs twice in one process: slot resolution by meaning on (the default) and off
(``UpdateConfig(resolve_slots=False)``, the exact-name code path it replaced), so the cost
of resolving slots is read side by side.

Run: ``python benchmarks/write_path.py [--sizes 1000 10000] [--turns 40]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import percentile, sentences
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import convert_to_messages
from rich.console import Console
from rich.table import Table

from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord, UniversalSentenceEncoderEmbeddings
from langchain_lifecycle_memory.write.extraction import create_extractor
from langchain_lifecycle_memory.write.update import UpdateConfig, apply_plan, plan_updates

NS = ("memories", "writer")
SLOTS = ["editor", "drink", "city", "pet", "hobby", "car", "employer", "music"]


class CountCalls(BaseCallbackHandler):
    """Counts chat model starts."""

    def __init__(self) -> None:
        self.calls = 0

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self.calls += 1


def turn_facts(i: int) -> list[dict[str, Any]]:
    """Two facts a turn: one slot that changes value, one free-text event."""
    slot = SLOTS[i % len(SLOTS)]
    return [
        {
            "entity": "user",
            "attribute": slot,
            "value": f"{slot}-v{i}",
            "content": f"The user's {slot} is now {slot}-v{i}",
            "kind": "preference",
            "confidence": 0.9,
        },
        {"content": f"On day {i} the user mentioned a trip to city number {i}", "kind": "event", "confidence": 0.8},
    ]


def run(
    size: int, turns: int, emb: UniversalSentenceEncoderEmbeddings, workdir: Path, *, resolve: bool = True
) -> dict[str, float]:
    store = ChromaMemoryStore(workdir / f"w{size}-{resolve}", embeddings=emb, collection_prefix="bench")
    config = UpdateConfig(resolve_slots=resolve)
    texts = sentences(size)
    for i in range(0, size, 2000):
        store.put_records([MemoryRecord(namespace=NS, content=t) for t in texts[i : i + 2000]])
    replies = [json.dumps({"facts": turn_facts(i)}) for i in range(turns)]
    model = FakeListChatModel(responses=replies)
    extractor = create_extractor(model)
    counter = CountCalls()
    per_fact: list[float] = []
    baseline: list[float] = []
    for i in range(turns):
        messages = [("user", f"turn {i}: I changed my {SLOTS[i % len(SLOTS)]}"), ("ai", "noted")]
        facts = extractor.invoke({"messages": convert_to_messages(messages), "now": None}, {"callbacks": [counter]})
        t = time.perf_counter()
        plan = plan_updates(store, NS, facts, config=config)
        apply_plan(store, plan)
        per_fact.append((time.perf_counter() - t) * 1000 / max(1, len(facts)))
        t = time.perf_counter()
        store.put_records([MemoryRecord(namespace=("memories", "append-only"), content=f.content) for f in facts])
        baseline.append((time.perf_counter() - t) * 1000 / max(1, len(facts)))
    return {
        "llm_calls_per_turn": counter.calls / turns,
        "reconcile_store_p50_ms": percentile(per_fact, 50),
        "reconcile_store_p95_ms": percentile(per_fact, 95),
        "append_only_p50_ms": percentile(baseline, 50),
        "append_only_p95_ms": percentile(baseline, 95),
    }


def main() -> None:
    """Print the table and write ``benchmarks/results/write_path.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    emb = UniversalSentenceEncoderEmbeddings()
    emb.embed_query("warm up")
    table = Table(title=f"Write path per fact ({args.turns} turns, 2 facts each), ms excluding the model")
    columns = ("existing records", "slot resolution", "LLM calls/turn", "reconcile+store p50", "p95")
    for col in (*columns, "append-only p50", "p95"):
        table.add_column(col, justify="right")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size, resolve in [(size, resolve) for size in args.sizes for resolve in (False, True)]:
            row = run(size, args.turns, emb, Path(tmp), resolve=resolve)
            out[f"{size}{'' if resolve else '-no-resolution'}"] = row
            table.add_row(
                str(size),
                "on" if resolve else "off (baseline)",
                f"{row['llm_calls_per_turn']:.2f}",
                f"{row['reconcile_store_p50_ms']:.1f}",
                f"{row['reconcile_store_p95_ms']:.1f}",
                f"{row['append_only_p50_ms']:.1f}",
                f"{row['append_only_p95_ms']:.1f}",
            )
    Console(width=160).print(table)
    path = Path(__file__).parent / "results" / "write_path.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
