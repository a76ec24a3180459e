"""Replay scenario gold facts into a store and judge the retriever on every probe.

A stand-in for the lead's scenario runner, judged on retrieved records (contents and
values) instead of the injected block: ``expect`` strings must appear, ``forbid`` ones
must not, ``expect_empty`` means nothing is retrieved.

    python benchmarks/retrieval_scenarios.py [../shared/scenarios/public.jsonl ...] [-v]

Prints pass/fail per probe for calibrated fusion, RRF ordering (gated by the same
calibrated ``min_score``), a threshold calibration without ceilings (``unclipped``),
RRF with no score gate (what rank fusion alone does to off-topic queries), and
dense-only (the article's baseline).
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import chromadb

from langchain_lifecycle_memory.read.retrieval import ChannelWeights, LifecycleRetriever, ScoreCalibration
from langchain_lifecycle_memory.schema import MemoryRecord, MemorySource, MemoryStatus, ensure_aware, normalize_value
from langchain_lifecycle_memory.store.chroma_store import ChromaMemoryStore

DEFAULT_FILE = Path(__file__).resolve().parents[2] / "shared" / "scenarios" / "public.jsonl"

CONFIGS: dict[str, dict[str, Any]] = {
    "calibrated": {},
    "rrf": {"fusion": "rrf"},
    "unclipped": {"calibration": ScoreCalibration(lexical_ceiling=1.0, dense_ceiling=1.0)},
    "rrf-no-gate": {"fusion": "rrf", "min_score": 0.0},
    "dense-only": {"weights": ChannelWeights(dense=1.0, lexical=0.0, slot=0.0), "other_entity_factor": 1.0},
}


def _ns(user_id: str) -> tuple[str, ...]:
    return ("memories", user_id)


def _archive(store: ChromaMemoryStore, record: MemoryRecord, at: datetime, **changes: Any) -> None:
    store.put_record(record.transition(MemoryStatus.ARCHIVED, at=at, **changes))


def apply_turn(store: ChromaMemoryStore, user_id: str, at: datetime, facts: list[dict[str, Any]]) -> None:
    """Gold update: same slot + same value refreshes, a new value archives the old one."""
    ns = _ns(user_id)
    for fact in facts:
        entity, attribute, value = fact.get("entity"), fact.get("attribute"), fact.get("value")
        current = []
        if entity and attribute:
            current = store.list_records(ns, statuses=["active"], entity=entity, attribute=attribute)
        same = [r for r in current if normalize_value(r.value) == normalize_value(value)]
        if same:
            store.put_record(same[0].model_copy(update={"updated_at": at}))
            continue
        ttl = fact.get("ttl_days")
        record = MemoryRecord(
            namespace=ns,
            content=fact["content"],
            entity=entity,
            attribute=attribute,
            value=value,
            kind=fact.get("kind", "fact"),
            confidence=fact.get("confidence", 0.8),
            source=MemorySource(extractor="gold"),
            created_at=at,
            updated_at=at,
            valid_from=at,
            expires_at=at + timedelta(days=ttl) if ttl else None,
            supersedes=current[-1].id if current else None,
        )
        for old in current:
            _archive(store, old, at, valid_to=at, superseded_by=record.id)
        store.put_record(record)


def apply_forget(store: ChromaMemoryStore, user_id: str, at: datetime, step: dict[str, Any]) -> None:
    """Archive the slot named by entity/attribute, or what a forget query points at."""
    ns = _ns(user_id)
    if step.get("attribute"):
        targets = store.list_records(ns, statuses=["active"], entity=step.get("entity"), attribute=step["attribute"])
    else:
        docs = LifecycleRetriever(store=store, namespace=ns, now=at).invoke(step["query"])
        named = [
            d
            for d in docs
            if d.metadata["value"] and normalize_value(d.metadata["value"]) in normalize_value(step["query"])
        ]
        chosen = named or docs[:1]
        targets = [r for d in chosen if (r := store.get_record(ns, d.metadata["id"])) is not None]
    for record in targets:
        _archive(store, record, at)


def apply_sweep(store: ChromaMemoryStore, at: datetime) -> None:
    """Archive every active record whose TTL deadline has passed."""
    for ns in store.list_namespaces(limit=10_000):
        for record in store.list_records(ns, statuses=["active"]):
            if record.expires_at is not None and record.expires_at <= at:
                _archive(store, record, record.expires_at)


def judge(step: dict[str, Any], docs: list[Any]) -> tuple[bool, str]:
    """Pass/fail of one probe on the retrieved documents."""
    text = " ".join(f"{d.page_content} {d.metadata.get('value') or ''}" for d in docs).casefold()
    problems = []
    if step.get("expect_empty") and docs:
        problems.append("expected nothing")
    problems += [f"missing {e!r}" for e in step.get("expect", []) if e.casefold() not in text]
    problems += [f"forbidden {f!r}" for f in step.get("forbid", []) if f.casefold() in text]
    return not problems, "; ".join(problems)


def margins(step: dict[str, Any], retriever: LifecycleRetriever, as_of: Any) -> tuple[float, float]:
    """(lowest fused score of a record the probe needs, highest of one it must not get)."""
    explanation = retriever.explain(step["query"], as_of=as_of)
    eligible = [c for c in explanation.candidates if c.decision in ("kept", "below_threshold", "cut_by_k")]
    need, bad = 1.0, 0.0
    for c in eligible:
        text = f"{c.record.content} {c.record.value or ''}".casefold()
        if any(e.casefold() in text for e in step.get("expect", [])):
            need = min(need, c.fused)
        if step.get("expect_empty") or any(f.casefold() in text for f in step.get("forbid", [])):
            bad = max(bad, c.fused)
    return need, bad


def run(paths: list[Path], verbose: bool) -> dict[str, tuple[int, int]]:
    """Replay every scenario once per config; print a row per probe; return pass counts."""
    scenarios = [json.loads(line) for p in paths for line in p.read_text().splitlines() if line.strip()]
    client = chromadb.EphemeralClient()
    totals = dict.fromkeys(CONFIGS, (0, 0))
    closest: list[tuple[float, str, str]] = []
    print(f"{'scenario':24} {'query':44} " + " ".join(f"{c:>11}" for c in CONFIGS))
    for sc in scenarios:
        store = ChromaMemoryStore(client=client, collection_prefix=f"b{uuid.uuid4().hex[:10]}")
        last = None
        for step in sc["steps"]:
            at = ensure_aware(step.get("at")) or last or ensure_aware("2024-01-01T00:00:00Z")
            assert at is not None
            last = at
            user = step.get("user_id", sc["user_id"])
            kind = step["type"]
            if kind == "turn":
                apply_turn(store, user, at, step.get("facts", []))
            elif kind == "forget":
                apply_forget(store, user, at, step)
            elif kind == "sweep":
                apply_sweep(store, at)
            elif kind == "purge":
                store.purge(_ns(step.get("user_id", sc["user_id"])))
            elif kind == "probe":
                cells, notes = [], []
                for name, cfg in CONFIGS.items():
                    retriever = LifecycleRetriever(store=store, namespace=_ns(user), now=at, **cfg)
                    docs = retriever.invoke(step["query"], as_of=step.get("as_of"))
                    ok, why = judge(step, docs)
                    passed, seen = totals[name]
                    totals[name] = (passed + ok, seen + 1)
                    cells.append("pass" if ok else "FAIL")
                    if not ok or verbose:
                        notes.append(f"    {name}: {why or 'ok'} <- {[d.page_content for d in docs]}")
                need, bad = margins(
                    step, LifecycleRetriever(store=store, namespace=_ns(user), now=at), step.get("as_of")
                )
                closest.append((need - bad, sc["id"], f"{step['query'][:40]} need>={need:.2f} bad<={bad:.2f}"))
                print(f"{sc['id'][:24]:24} {step['query'][:44]:44} " + " ".join(f"{c:>11}" for c in cells))
                for note in notes:
                    print(note)
    print("\nclosest calls (calibrated; margin = weakest needed record - strongest unwanted one):")
    for gap, sid, text in sorted(closest)[:8]:
        print(f"  {gap:+.2f}  {sid:24} {text}")
    print("\n" + "  ".join(f"{name}: {p}/{n}" for name, (p, n) in totals.items()))
    return totals


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=[DEFAULT_FILE])
    parser.add_argument("-v", "--verbose", action="store_true", help="show retrieved records for passes too")
    args = parser.parse_args(argv)
    missing = [p for p in args.files if not p.exists()]
    if missing:
        print(f"Scenario file(s) not found: {missing}; pass paths to shared/scenarios/*.jsonl.", file=sys.stderr)
        return 2
    totals = run(args.files, args.verbose)
    return 0 if all(p == n for p, n in totals.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
