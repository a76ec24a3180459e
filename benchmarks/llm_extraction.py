"""LLM extraction against a real model behind an OpenAI-compatible server, scored on gold facts.

Every turn of the scenario files goes through ``create_extractor(ChatOpenAI(base_url=...))``
twice: without context, and with the entity's existing slots (the gold facts of the same
user's earlier turns, replayed as ``slots``, as the write path passes the store's). Turns are
run in file order and the two modes interleaved, so a run cut short (``--limit``) compares
both modes on the same turns. Each turn's result is appended to ``--out`` (JSONL) as it comes;
``--report`` prints the table from such a file without calling the model.

Scores, per mode, against the turn's gold facts (facts with an attribute):
  slot precision / recall  (entity, attribute) after the package's slot resolution
                           (``resolve_facts``, the write path's step: entity tokens, vocabulary,
                           name structure, the bundled encoder at its calibrated threshold)
                           against the user's existing slots, the same in both modes; and
                           "exact": normalised names only (snake_case, casefold, "I"/"me"/"用户"
                           -> user), no resolution
  value accuracy           of matched slots: normalised values equal or one contains the other
  kind accuracy            of matched slots
  failures                 turns whose extraction raised (bad JSON after retries, server errors)
  method errors            capability rejections (e.g. json_schema refused) -> fallback
  calls / turn, p50 / p95 latency (seconds per turn, fallback and retries included)

    python benchmarks/llm_extraction.py --base-url http://127.0.0.1:8765/v1 --limit 20
    python benchmarks/llm_extraction.py --base-url URL --files PUBLIC.jsonl tests/scenarios/extra.jsonl
    python benchmarks/llm_extraction.py --report benchmarks/results/llm_extraction.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage

from langchain_lifecycle_memory.errors import ExtractionError
from langchain_lifecycle_memory.eval.scenarios import load_scenarios
from langchain_lifecycle_memory.schema import Fact, normalize_value
from langchain_lifecycle_memory.write._slot_identity import DEFAULT_SLOT_THRESHOLD, resolve_facts
from langchain_lifecycle_memory.write._structured import is_capability_error
from langchain_lifecycle_memory.write.extraction import create_extractor

DEFAULT_FILES = ["../shared/scenarios/public.jsonl"]
MODES = ("without", "with")
_USER = {"user", "the_user", "speaker", "me", "i", "myself", "用户", "我"}


class CallCounter(BaseCallbackHandler):
    """Counts chat-model calls and capability errors (method fallbacks)."""

    def __init__(self) -> None:
        self.calls = 0
        self.method_errors = 0

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self.calls += 1

    def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
        if is_capability_error(error):
            self.method_errors += 1


def norm_name(name: Any) -> str:
    text = re.sub(r"[\s\-./]+", "_", str(name or "").strip().casefold())
    text = re.sub(r"[^\w]", "", text).strip("_")
    return "user" if text in _USER else text


def slot_of(fact: dict[str, Any]) -> tuple[str, str] | None:
    if not fact.get("attribute"):
        return None
    return (norm_name(fact.get("entity") or "user"), norm_name(fact["attribute"]))


def turns(files: list[str]) -> Iterator[dict[str, Any]]:
    """Each turn with text: its gold facts and the slots the same user's earlier gold facts left."""
    for path in files:
        for scenario in load_scenarios(path):
            state: dict[str, dict[tuple[str, str], str | None]] = {}
            for i, step in enumerate(scenario.steps):
                if step["type"] == "purge":
                    state.pop(step["user_id"], None)
                if step["type"] != "turn" or not isinstance(step.get("user"), str):
                    continue
                slots = state.setdefault(step["user_id"], {})
                context = [(e, a, v) for (e, a), v in reversed(slots.items())]
                yield {
                    "file": Path(path).name,
                    "scenario": scenario.id,
                    "step": i,
                    "user": step["user"],
                    "assistant": step.get("assistant"),
                    "at": step["at"].isoformat() if step["at"] else None,
                    "gold": step["facts"],
                    "context": context,
                }
                for fact in step["facts"]:
                    if fact.get("entity") and fact.get("attribute"):
                        key = (fact["entity"], fact["attribute"])
                        slots.pop(key, None)
                        if fact.get("operation", "assert") != "retract":
                            slots[key] = fact.get("value")


def run_turn(extractor: Any, turn: dict[str, Any], mode: str) -> dict[str, Any]:
    from datetime import datetime

    messages: list[Any] = [HumanMessage(turn["user"])]
    if turn["assistant"]:
        messages.append(AIMessage(turn["assistant"]))
    payload: dict[str, Any] = {"messages": messages, "now": datetime.fromisoformat(turn["at"]) if turn["at"] else None}
    if mode == "with" and turn["context"]:
        payload["slots"] = turn["context"]
    counter = CallCounter()
    start = time.perf_counter()
    error = None
    try:
        facts = [f.model_dump(mode="json") for f in extractor.invoke(payload, {"callbacks": [counter]})]
    except ExtractionError as e:
        facts, error = [], str(e)[:300]
    return {
        "mode": mode,
        "scenario": turn["scenario"],
        "step": turn["step"],
        "file": turn["file"],
        "user": turn["user"],
        "context": len(turn["context"]) if mode == "with" else 0,
        "existing": [list(slot) for slot in turn["context"]],
        "gold": [{k: f.get(k) for k in ("entity", "attribute", "value", "kind", "operation")} for f in turn["gold"]],
        "pred": [{k: f.get(k) for k in ("entity", "attribute", "value", "kind", "operation")} for f in facts],
        "seconds": round(time.perf_counter() - start, 2),
        "calls": counter.calls,
        "method_errors": counter.method_errors,
        "error": error,
    }


def value_match(a: Any, b: Any) -> bool:
    x, y = normalize_value(a or ""), normalize_value(b or "")
    return bool(x and y) and (x == y or x in y or y in x)


class Resolver:
    """The write path's slot resolution (``resolve_facts`` with the store's bundled encoder and threshold).

    Predicted facts are renamed onto the user's existing slots exactly as ``LifecycleMemory`` would
    before planning; the existing slots are the same in both modes (the store holds them either way).
    """

    def __init__(self) -> None:
        from langchain_lifecycle_memory.store.embeddings import UniversalSentenceEncoderEmbeddings

        self.embeddings = UniversalSentenceEncoderEmbeddings()

    def __call__(self, pred: list[dict[str, Any]], existing: list[list[Any]]) -> list[dict[str, Any]]:
        facts = [Fact(**{k: f.get(k) for k in ("entity", "attribute", "value")}, content="-") for f in pred]
        catalogue = [{"entity": e, "attribute": a, "value": v, "cardinality": "single"} for e, a, v in existing]
        if not catalogue or not any(f.slot for f in facts):
            return pred
        resolved = resolve_facts(facts, catalogue, embeddings=self.embeddings, threshold=DEFAULT_SLOT_THRESHOLD)
        return [{**f, "entity": r.entity, "attribute": r.attribute} for f, r in zip(pred, resolved)]


def score(rows: list[dict[str, Any]], resolver: Resolver | None = None) -> dict[str, Any]:
    """Slot P/R, value and kind accuracy; with a resolver, predictions are resolved onto existing slots first."""
    tp = n_pred = n_gold = value_ok = kind_ok = 0
    for row in rows:
        gold = [(s, f) for f in row["gold"] if (s := slot_of(f)) is not None]
        predicted = resolver(row["pred"], row.get("existing", [])) if resolver else row["pred"]
        pred = [(s, f) for f in predicted if (s := slot_of(f)) is not None]
        n_gold, n_pred = n_gold + len(gold), n_pred + len(pred)
        unmatched = list(pred)
        for slot, g in gold:
            hit = next((p for p in unmatched if p[0] == slot), None)
            if hit is None:
                continue
            unmatched.remove(hit)
            tp += 1
            value_ok += value_match(hit[1].get("value"), g.get("value"))
            kind_ok += (hit[1].get("kind") or "fact") == (g.get("kind") or "fact")
    seconds = sorted(r["seconds"] for r in rows)
    pct = (lambda q: seconds[min(len(seconds) - 1, int(q * len(seconds)))]) if seconds else (lambda q: float("nan"))
    return {
        "turns": len(rows),
        "slot_precision": tp / n_pred if n_pred else float("nan"),
        "slot_recall": tp / n_gold if n_gold else float("nan"),
        "value_accuracy": value_ok / tp if tp else float("nan"),
        "kind_accuracy": kind_ok / tp if tp else float("nan"),
        "failures": sum(1 for r in rows if r["error"]),
        "method_errors": sum(r["method_errors"] for r in rows),
        "calls_per_turn": sum(r["calls"] for r in rows) / len(rows) if rows else float("nan"),
        "p50_s": statistics.median(seconds) if seconds else float("nan"),
        "p95_s": pct(0.95),
        "gold_slots": n_gold,
        "pred_slots": n_pred,
        "matched": tp,
    }


def report(rows: list[dict[str, Any]], files: list[str] | None = None) -> None:
    """Both modes on the turns scored in both; slot P/R after resolution and with exact names."""
    if files and any("existing" not in r for r in rows):  # rows of an older run: rebuild the existing slots
        existing = {(t["scenario"], t["step"]): [list(x) for x in t["context"]] for t in turns(files)}
        rows = [{**r, "existing": existing.get((r["scenario"], r["step"]), [])} for r in rows]
    done = {(r["scenario"], r["step"]) for r in rows if r["mode"] == "with"}
    done &= {(r["scenario"], r["step"]) for r in rows if r["mode"] == "without"}
    paired = [r for r in rows if (r["scenario"], r["step"]) in done]
    print(f"{len(done)} turns scored in both modes ({len({r['scenario'] for r in paired})} scenarios)")
    resolver = Resolver()
    cols = ["slot_precision", "slot_recall", "value_accuracy", "kind_accuracy"]
    head = ["turns", *cols, "exact_P", "exact_R", "failures", "method_errors", "calls_per_turn", "p50_s", "p95_s"]
    head += ["gold_slots", "pred_slots", "matched", "exact_matched"]
    print("| context | " + " | ".join(head) + " |")
    print("|" + "---|" * (len(head) + 1))
    for mode in MODES:
        mine = [r for r in paired if r["mode"] == mode]
        s, exact = score(mine, resolver), score(mine)
        s |= {"exact_P": exact["slot_precision"], "exact_R": exact["slot_recall"], "exact_matched": exact["matched"]}
        cells = [f"{s[c]:.3f}" if isinstance(s[c], float) else str(s[c]) for c in head]
        print(f"| {mode} existing slots | " + " | ".join(cells) + " |")
    keys = {(r["scenario"], r["step"]) for r in paired if r.get("existing")}
    if keys:
        print(f"\nturns that had existing slots ({len(keys)}):")
        for mode in MODES:
            mine = [r for r in paired if r["mode"] == mode and (r["scenario"], r["step"]) in keys]
            s, exact = score(mine, resolver), score(mine)
            print(
                f"  {mode:7} slot P {s['slot_precision']:.3f}  R {s['slot_recall']:.3f} ({s['matched']}/"
                f"{s['gold_slots']})  exact R {exact['slot_recall']:.3f}  value {s['value_accuracy']:.3f}  "
                f"kind {s['kind_accuracy']:.3f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8765/v1")
    parser.add_argument("--model", default="local")
    parser.add_argument("--api-key", default="local")
    parser.add_argument("--files", nargs="+", default=DEFAULT_FILES)
    parser.add_argument("--limit", type=int, default=None, help="only the first N turns")
    parser.add_argument("--skip", type=int, default=0, help="start after the first N turns (resume a cut run)")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument(
        "--slot-context",
        choices=("rename", "prompt"),
        default="rename",
        help="how existing slots reach the model in the 'with' mode (create_extractor's slot_context)",
    )
    parser.add_argument(
        "--no-share",
        action="store_true",
        help="with --slot-context rename, send the 'with' mode's extraction request again instead of reusing the "
        "'without' mode's answer to the identical request",
    )
    parser.add_argument("--out", default="benchmarks/results/llm_extraction.jsonl")
    parser.add_argument("--report", metavar="JSONL", help="print the table of an earlier run and exit")
    args = parser.parse_args()
    if args.report:
        lines = Path(args.report).read_text(encoding="utf-8").splitlines()
        report([json.loads(line) for line in lines if line], args.files)
        return
    if not args.base_url:
        parser.error("--base-url is required (or --report FILE)")
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(base_url=args.base_url, api_key=args.api_key, model=args.model, temperature=0, max_retries=0)
    share = args.slot_context == "rename" and not args.no_share and list(args.modes) == list(MODES)
    if share:
        # In rename mode both modes send the byte-identical extraction request (the stored slots reach the model
        # only in the rename call), so the 'with' mode takes the answer from LangChain's cache and its row adds the
        # 'without' row's seconds: the latency a real 'with' turn has, without paying for the request twice.
        from langchain_core.caches import InMemoryCache

        model.cache = InMemoryCache()
    extractors = {mode: create_extractor(model, slot_context=args.slot_context) for mode in args.modes}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    with out.open("w", encoding="utf-8") as sink:
        for n, turn in enumerate(turns(args.files)):
            if args.limit is not None and n >= args.limit:
                break
            if n < args.skip:
                continue
            for mode in args.modes:
                row = run_turn(extractors[mode], turn, mode)
                if share and mode == "with":
                    row["shared_seconds"] = rows[-1]["seconds"]
                    row["seconds"] = round(row["seconds"] + row["shared_seconds"], 2)
                rows.append(row)
                sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                sink.flush()
                print(
                    f"[{n + 1}] {mode:7} {row['seconds']:6.1f}s calls={row['calls']} "
                    f"pred={[(f['entity'], f['attribute'], f['value']) for f in row['pred']]} "
                    f"gold={[(f['entity'], f['attribute'], f['value']) for f in row['gold']]}"
                    + (f" ERROR {row['error'][:80]}" if row["error"] else ""),
                    flush=True,
                )
    report(rows, args.files)


if __name__ == "__main__":
    main()
