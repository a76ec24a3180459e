"""``python -m langchain_lifecycle_memory.eval {scenarios,locomo} ...``.

Examples::

    python -m langchain_lifecycle_memory.eval scenarios ../shared/scenarios/public.jsonl --extractor gold
    python -m langchain_lifecycle_memory.eval scenarios FILE.jsonl --engine ours --json out.json
    python -m langchain_lifecycle_memory.eval scenarios FILE.jsonl --extractor llm --base-url http://127.0.0.1:8765/v1
    python -m langchain_lifecycle_memory.eval locomo ../shared/data/locomo/locomo7.json --k 5 10 --json out.json

Exit codes: 0 when the run completed (failed probes included), 1 for a malformed input
file or a crash, 2 for bad command-line arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]

DEFAULT_TEXT = "date+prev+next"
"""Episode text for LoCoMo: the turn with its session date and its neighbours (measured best)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m langchain_lifecycle_memory.eval", description=(__doc__ or "").split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)

    sc = sub.add_parser("scenarios", help="replay a scenario .jsonl file and judge its probes")
    sc.add_argument("file", help="scenario file, one JSON scenario a line")
    sc.add_argument("--extractor", choices=["gold", "rule", "llm"], default="gold")
    sc.add_argument("--base-url", help="--extractor llm: OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp...)")
    sc.add_argument("--model", default=None, help="--extractor llm: model name (default: 'local' with --base-url)")
    sc.add_argument("--api-key", default=None, help="--extractor llm: API key (default: OPENAI_API_KEY or 'local')")
    sc.add_argument("--engine", choices=["ours", "naive", "both"], default="both")
    sc.add_argument("--json", dest="json_out", metavar="OUT", help="write the results as JSON")
    sc.add_argument("-v", "--verbose", action="store_true", help="also list the naive baseline's failures")
    sc.add_argument(
        "--retriever",
        default=None,
        metavar="JSON",
        help="LifecycleRetriever settings for ours, e.g. '{\"topic_cards\": false}' (ablations)",
    )
    sc.add_argument("--category", action="append", default=None, help="only scenarios of this category (repeatable)")
    sc.add_argument(
        "--cues-llm",
        default=None,
        metavar="BASE_URL",
        help="OpenAI-compatible chat endpoint for write-time cues (e.g. the local model's /v1 URL)",
    )
    sc.add_argument(
        "--judge-llm",
        default=None,
        metavar="BASE_URL",
        help="OpenAI-compatible chat endpoint for the conflict judge and the slot judge (ours)",
    )
    sc.add_argument(
        "--query-llm",
        default=None,
        metavar="BASE_URL",
        help="OpenAI-compatible chat endpoint for LLM query expansion (LifecycleRetriever.query_model, ours)",
    )
    sc.add_argument(
        "--rerank-llm",
        default=None,
        metavar="BASE_URL",
        help="OpenAI-compatible chat endpoint for an LLM relevance filter as the retriever's reranker (ours)",
    )
    sc.add_argument(
        "--out",
        default=None,
        metavar="FILE.jsonl",
        help="append each scenario's verdicts (and LLM calls/seconds) to this file as it is judged",
    )
    sc.add_argument(
        "--llm-cache",
        default=None,
        metavar="FILE.jsonl",
        help="keep the models' replies in this file and reuse them for the same prompt (reruns, ablations)",
    )
    sc.add_argument(
        "--resume", action="store_true", help="with --out: skip the scenarios already in the file, report them all"
    )

    lo = sub.add_parser("locomo", help="LoCoMo evidence recall@k per category")
    lo.add_argument("file", help="locomo JSON (e.g. ../shared/data/locomo/locomo7.json)")
    lo.add_argument("--k", dest="ks", type=int, nargs="+", default=[5, 10])
    lo.add_argument("--audit", help="audit file (default: locomo_audit_errors.json if found; 'none' to skip)")
    lo.add_argument("--json", dest="json_out", metavar="OUT", help="write the results as JSON")
    lo.add_argument("--limit-conversations", type=int, default=None, metavar="N")
    lo.add_argument(
        "--text",
        dest="text_format",
        default=DEFAULT_TEXT,
        help=f"episode text: speaker, or a +-join of date/prev/next (default: {DEFAULT_TEXT})",
    )
    lo.add_argument(
        "--retrievers",
        nargs="+",
        default=None,
        help="subset of: default default-nothreshold dense bm25 langgraph-inmemory (default: all)",
    )
    lo.add_argument(
        "--no-speaker-entity",
        action="store_true",
        help="store every turn as the user's (default: the speaker is the episode's entity)",
    )
    lo.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="extra LifecycleRetriever settings to measure, e.g. 'low={\"min_score\": 0.2}'",
    )
    for p in (sc, lo):
        p.add_argument(
            "--embedder", choices=sorted(EMBEDDERS), default=None, help="offline encoder (default: the package's)"
        )
    return parser


EMBEDDERS = {"use": "UniversalSentenceEncoderEmbeddings", "e5": "E5SmallEmbeddings"}


def _embedder(name: str | None) -> Any:
    if name is None:
        return None
    from langchain_lifecycle_memory.store import embeddings

    return getattr(embeddings, EMBEDDERS[name])()


def _write_json(path: str, data: dict[str, Any]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def _scenarios(args: argparse.Namespace) -> int:
    from langchain_lifecycle_memory.eval._tables import print_scenario_failures, print_scenario_summary
    from langchain_lifecycle_memory.eval.scenarios import ScenarioFormatError, load_scenarios, run_scenarios

    try:
        scenarios = load_scenarios(args.file)
    except (ScenarioFormatError, FileNotFoundError, UnicodeDecodeError) as e:
        print(f"error: {args.file}: {e}", file=sys.stderr)
        return 1
    if args.category:
        scenarios = [s for s in scenarios if s.category in args.category]
    engines = ["ours", "naive"] if args.engine == "both" else [args.engine]
    try:
        retriever = json.loads(args.retriever) if args.retriever else None
    except json.JSONDecodeError as e:
        print(f"error: --retriever must be a JSON object ({e}).", file=sys.stderr)
        return 2
    if args.resume and not args.out:
        print("error: --resume needs --out FILE.jsonl (the file to continue).", file=sys.stderr)
        return 2
    from langchain_lifecycle_memory.eval._runlog import CallStats, ReplyCache, ResultsLog, stats_delta
    from langchain_lifecycle_memory.eval.scenarios import ScenarioReport

    try:
        log = ResultsLog(args.out, resume=args.resume) if args.out else None
    except FileExistsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    emb = _embedder(args.embedder)
    stats: dict[str, CallStats] = {}
    caches: dict[str, ReplyCache] = {}

    def chat(name: str, base_url: str | None, **options: Any) -> Any:
        """A ChatOpenAI whose calls are counted (and cached with --llm-cache) under ``name``."""
        from langchain_openai import ChatOpenAI

        stats[name] = CallStats()
        if args.llm_cache:
            caches[name] = ReplyCache(args.llm_cache)
        options = {"api_key": "local", "model": "local", **options}
        return ChatOpenAI(base_url=base_url, temperature=0, callbacks=[stats[name]], cache=caches.get(name), **options)

    cue_model = chat("cues", args.cues_llm) if args.cues_llm else None
    update = None
    if args.judge_llm:
        from langchain_lifecycle_memory.write.update import UpdateConfig, create_conflict_judge, create_slot_judge

        judge = chat("judge", args.judge_llm)
        update = UpdateConfig(judge=create_conflict_judge(judge), slot_judge=create_slot_judge(judge))
    if args.query_llm:
        retriever = {**(retriever or {}), "query_model": chat("query expansion", args.query_llm)}
    if args.rerank_llm:
        from langchain_lifecycle_memory.eval._rerank import LLMRelevanceFilter

        retriever = {**(retriever or {}), "reranker": LLMRelevanceFilter(model=chat("reranker", args.rerank_llm))}
    llm = None
    if args.extractor == "llm":
        import os

        from langchain_lifecycle_memory.eval.scenarios import llm_extractor

        if not args.base_url and not os.environ.get("OPENAI_API_KEY"):
            print("error: --extractor llm needs --base-url (or OPENAI_API_KEY for OpenAI).", file=sys.stderr)
            return 2
        model = chat(
            "extraction",
            args.base_url,
            api_key=args.api_key or os.environ.get("OPENAI_API_KEY") or "local",
            model=args.model or ("local" if args.base_url else "gpt-4o-mini"),
        )
        llm = llm_extractor(model)

    if llm is None and log is None:
        reports = [
            run_scenarios(
                scenarios,
                extractor=args.extractor,
                engine=e,
                embeddings=emb,
                retriever=retriever,
                cue_model=cue_model,
                update=update,
            )
            for e in engines
        ]
    else:  # slow: scenario by scenario, each engine's verdicts printed (and logged) as they come
        reports = [ScenarioReport(engine=e, extractor=args.extractor) for e in engines]
        for scenario in scenarios:
            if log is not None and log.has(scenario.id, engines):
                for report in reports:
                    log.restore(scenario.id, report)
                print(f"  {scenario.id}: already in {args.out}", file=sys.stderr, flush=True)
                continue
            cells = []
            for report in reports:
                before = {name: s.snapshot() for name, s in stats.items()}
                part = run_scenarios(
                    [scenario],
                    extractor=args.extractor,
                    engine=report.engine,
                    embeddings=emb,
                    retriever=retriever,
                    cue_model=cue_model,
                    llm=llm,
                    update=update,
                )
                report.probes += part.probes
                report.errors += part.errors
                if log is not None:
                    log.write(scenario.id, part, category=scenario.category, llm=stats_delta(stats, before))
                totals = report.summary
                cells.append(f"{report.engine} {part.summary['passed']}/{len(part.probes)} (so far {totals['passed']}")
                cells[-1] += f"/{len(report.probes)})"
            print(f"  {scenario.id}: " + ", ".join(cells), file=sys.stderr, flush=True)
    for name, s in stats.items():
        snap = s.snapshot()
        hits = f" ({caches[name].hits} answered from --llm-cache)" if name in caches else ""
        print(f"LLM {name} (this process): {snap['calls']} calls{hits}, {snap['errors']} failed, {snap['seconds']} s")
    print_scenario_summary(reports)
    for report in reports:
        if report.engine == "ours" or args.verbose or len(reports) == 1:
            print_scenario_failures(report)
    if args.json_out:
        main_report = reports[0]
        data = main_report.to_dict()
        data["engine"], data["extractor"] = main_report.engine, main_report.extractor
        if len(reports) > 1:
            data["baselines"] = {r.engine: r.to_dict()["summary"] for r in reports[1:]}
        if main_report.errors:
            data["errors"] = main_report.errors
        _write_json(args.json_out, data)
    return 0


def _locomo(args: argparse.Namespace) -> int:
    from langchain_lifecycle_memory.eval._tables import print_locomo
    from langchain_lifecycle_memory.eval.locomo import BASELINES, evaluate_locomo, find_audit_file

    if not Path(args.file).is_file():
        print(f"error: {args.file} not found (LoCoMo lives in ../shared/data/locomo/).", file=sys.stderr)
        return 1
    audit: Path | None
    if args.audit and args.audit.lower() == "none":
        audit = None
    elif args.audit:
        audit = Path(args.audit)
        if not audit.is_file():
            print(f"error: audit file {args.audit} not found; pass --audit none to run without it.", file=sys.stderr)
            return 1
    else:
        audit = find_audit_file(args.file)
    variants: dict[str, dict[str, Any]] = {}
    for spec in args.variant:
        name, sep, blob = spec.partition("=")
        try:
            variants[name] = json.loads(blob) if sep else {}
        except json.JSONDecodeError as e:
            print(f"error: --variant {spec!r}: the part after '=' must be a JSON object ({e}).", file=sys.stderr)
            return 2
    retrievers = args.retrievers or list(BASELINES)
    unknown = sorted(set(retrievers) - set(BASELINES))
    if unknown:
        print(f"error: unknown retriever(s) {unknown}; choose from {list(BASELINES)}.", file=sys.stderr)
        return 2
    try:
        result = evaluate_locomo(
            args.file,
            ks=args.ks,
            audit=audit,
            limit_conversations=args.limit_conversations,
            text_format=args.text_format,
            retrievers=retrievers,
            variants=variants,
            embeddings=_embedder(args.embedder),
            progress=lambda line: print(line, file=sys.stderr),
            speaker_entity=not args.no_speaker_entity,
        )
    except (ValueError, KeyError, json.JSONDecodeError) as e:
        print(f"error: {args.file}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print_locomo(result)
    if args.json_out:
        _write_json(args.json_out, result)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the eval CLI; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        return _scenarios(args) if args.command == "scenarios" else _locomo(args)
    except Exception:
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(main())
