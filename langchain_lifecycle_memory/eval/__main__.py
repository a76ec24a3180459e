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
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]

DEFAULT_TEXT = "date+prev+next"
"""Episode text for LoCoMo: the turn with its session date and its neighbours (measured best)."""
EMBEDDERS = {"use": "UniversalSentenceEncoderEmbeddings", "e5": "E5SmallEmbeddings"}
LLM_HOOKS = {
    "--cues-llm": "write-time cues (e.g. the local model's /v1 URL)",
    "--judge-llm": "the conflict judge and the slot judge (ours)",
    "--query-llm": "LLM query expansion (LifecycleRetriever.query_model, ours)",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m langchain_lifecycle_memory.eval", description=(__doc__ or "").split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sc = sub.add_parser("scenarios", help="replay a scenario .jsonl file and judge its probes")
    sc.add_argument("file", help="scenario file, one JSON scenario a line")
    sc.add_argument("--extractor", choices=["gold", "rule", "llm"], default="gold")
    sc.add_argument("--base-url", help="--extractor llm: OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp...)")
    sc.add_argument("--model", help="--extractor llm: model name (default: 'local' with --base-url)")
    sc.add_argument("--api-key", help="--extractor llm: API key (default: OPENAI_API_KEY or 'local')")
    sc.add_argument("--engine", choices=["ours", "naive", "both"], default="both")
    sc.add_argument("-v", "--verbose", action="store_true", help="also list the naive baseline's failures")
    sc.add_argument("--retriever", metavar="JSON", help="LifecycleRetriever settings for ours (ablations)")
    sc.add_argument("--category", action="append", help="only scenarios of this category (repeatable)")
    for flag, what in LLM_HOOKS.items():
        sc.add_argument(flag, metavar="BASE_URL", help=f"OpenAI-compatible chat endpoint for {what}")
    sc.add_argument("--out", metavar="FILE.jsonl", help="append each scenario's verdicts (and LLM calls) as judged")
    sc.add_argument("--llm-cache", metavar="FILE.jsonl", help="keep the models' replies here, reused for a same prompt")
    sc.add_argument("--resume", action="store_true", help="with --out: skip the scenarios already in the file")
    lo = sub.add_parser("locomo", help="LoCoMo evidence recall@k per category")
    lo.add_argument("file", help="locomo JSON (e.g. ../shared/data/locomo/locomo7.json)")
    lo.add_argument("--k", dest="ks", type=int, nargs="+", default=[5, 10])
    lo.add_argument("--audit", help="audit file (default: locomo_audit_errors.json if found; 'none' to skip)")
    lo.add_argument("--limit-conversations", type=int, metavar="N")
    lo.add_argument("--text", dest="text_format", default=DEFAULT_TEXT, help="speaker, or a +-join of date/prev/next")
    lo.add_argument("--retrievers", nargs="+", help="default default-nothreshold dense bm25 langgraph-inmemory")
    for p in (sc, lo):
        p.add_argument("--json", dest="json_out", metavar="OUT", help="write the results as JSON")
        p.add_argument("--embedder", choices=sorted(EMBEDDERS), help="offline encoder (default: the package's)")
    return parser


def _fail(message: str, code: int) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def _embedder(name: str | None) -> Any:
    if name is None:
        return None
    from langchain_lifecycle_memory.store import embeddings

    return getattr(embeddings, EMBEDDERS[name])()


def _write_json(path: str, data: dict[str, Any]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def _options(args: argparse.Namespace, stats: dict[str, Any], caches: dict[str, Any]) -> dict[str, Any] | int:
    """``run_scenarios`` keyword arguments from the command line, or an exit code."""
    from langchain_lifecycle_memory.eval._runlog import CallStats, ReplyCache

    try:
        retriever = json.loads(args.retriever) if args.retriever else None
    except json.JSONDecodeError as e:
        return _fail(f"--retriever must be a JSON object ({e}).", 2)
    if args.extractor == "llm" and not args.base_url and not os.environ.get("OPENAI_API_KEY"):
        return _fail("--extractor llm needs --base-url (or OPENAI_API_KEY for OpenAI).", 2)

    def chat(name: str, base_url: str | None, **options: Any) -> Any:
        """A ChatOpenAI whose calls are counted (and cached with --llm-cache) under ``name``."""
        from langchain_openai import ChatOpenAI

        stats[name] = CallStats()
        if args.llm_cache:
            caches[name] = ReplyCache(args.llm_cache)
        options = {"api_key": "local", "model": "local", **options}
        return ChatOpenAI(base_url=base_url, temperature=0, callbacks=[stats[name]], cache=caches.get(name), **options)

    options: dict[str, Any] = {"extractor": args.extractor, "embeddings": _embedder(args.embedder), "update": None}
    options["cue_model"] = chat("cues", args.cues_llm) if args.cues_llm else None
    if args.judge_llm:
        from langchain_lifecycle_memory.write.update import UpdateConfig, create_conflict_judge, create_slot_judge

        judge = chat("judge", args.judge_llm)
        options["update"] = UpdateConfig(judge=create_conflict_judge(judge), slot_judge=create_slot_judge(judge))
    if args.query_llm:
        retriever = {**(retriever or {}), "query_model": chat("query expansion", args.query_llm)}
    options["retriever"], options["llm"] = retriever, None
    if args.extractor == "llm":
        from langchain_lifecycle_memory.eval.scenarios import llm_extractor

        key = args.api_key or os.environ.get("OPENAI_API_KEY") or "local"
        model = args.model or ("local" if args.base_url else "gpt-4o-mini")
        options["llm"] = llm_extractor(chat("extraction", args.base_url, api_key=key, model=model))
    return options


def _one_by_one(scenarios: list[Any], engines: list[str], options: dict[str, Any], log: Any, stats: dict) -> list[Any]:
    """Scenario by scenario, each engine's verdicts printed (and logged with ``--out``) as they come."""
    from langchain_lifecycle_memory.eval._runlog import stats_delta
    from langchain_lifecycle_memory.eval.scenarios import ScenarioReport, run_scenarios

    reports = [ScenarioReport(engine=e, extractor=options["extractor"]) for e in engines]
    for scenario in scenarios:
        if log is not None and log.has(scenario.id, engines):
            for report in reports:
                log.restore(scenario.id, report)
            print(f"  {scenario.id}: already in {log.path}", file=sys.stderr, flush=True)
            continue
        cells = []
        for report in reports:
            before = {name: s.snapshot() for name, s in stats.items()}
            part = run_scenarios([scenario], engine=report.engine, **options)
            report.probes += part.probes
            report.errors += part.errors
            if log is not None:
                log.write(scenario.id, part, category=scenario.category, llm=stats_delta(stats, before))
            so_far = f"(so far {report.summary['passed']}/{len(report.probes)})"
            cells.append(f"{report.engine} {part.summary['passed']}/{len(part.probes)} {so_far}")
        print(f"  {scenario.id}: " + ", ".join(cells), file=sys.stderr, flush=True)
    return reports


def _cell(summary: dict[str, Any], category: str | None = None) -> str:
    cell = summary if category is None else summary["by_category"].get(category)
    return f"{cell['passed']}/{cell['passed'] + cell['failed']}" if cell else "-"


def _print_scenarios(reports: list[Any], verbose: bool) -> None:
    """One row per category, one column per engine (``passed/total``); then the failed probes."""
    from rich.console import Console
    from rich.table import Table

    console, summaries = Console(), [r.summary for r in reports]
    categories = list(dict.fromkeys(c for s in summaries for c in s["by_category"]))
    table = Table(title=f"Scenario probes passed (extractor: {reports[0].extractor if reports else '?'})")
    table.add_column("category")
    for r in reports:
        table.add_column(r.engine, justify="right")
    for c in categories:
        table.add_row(c, *(_cell(s, c) for s in summaries))
    table.add_section()
    table.add_row("all", *(_cell(s) for s in summaries), style="bold")
    console.print(table)
    for report in [r for r in reports if r.engine == "ours" or verbose or len(reports) == 1]:
        failures = report.failures()
        if not failures:
            console.print(f"[green]{report.engine}: every probe passed.[/green]")
            continue
        table = Table(title=f"{report.engine}: {len(failures)} failed probe(s)", show_lines=False)
        for name in ("scenario", "step", "category", "query", "reasons"):
            table.add_column(name, overflow="fold")
        for p in failures[:200]:
            table.add_row(p.scenario, str(p.step), p.category, p.query, "; ".join(p.reasons))
        console.print(table)
        if len(failures) > 200:
            console.print(f"... and {len(failures) - 200} more (use --json for all).")
        for error in report.errors:
            console.print(f"[red]{report.engine} engine error:[/red] {error}")


def _scenarios(args: argparse.Namespace) -> int:
    from langchain_lifecycle_memory.eval._runlog import ResultsLog
    from langchain_lifecycle_memory.eval.scenarios import ScenarioFormatError, load_scenarios, run_scenarios

    try:
        scenarios = [s for s in load_scenarios(args.file) if not args.category or s.category in args.category]
    except (ScenarioFormatError, FileNotFoundError, UnicodeDecodeError) as e:
        return _fail(f"{args.file}: {e}", 1)
    if args.resume and not args.out:
        return _fail("--resume needs --out FILE.jsonl (the file to continue).", 2)
    try:
        log = ResultsLog(args.out, resume=args.resume) if args.out else None
    except FileExistsError as e:
        return _fail(str(e), 2)
    stats: dict[str, Any] = {}
    caches: dict[str, Any] = {}
    options = _options(args, stats, caches)
    if isinstance(options, int):
        return options
    engines = ["ours", "naive"] if args.engine == "both" else [args.engine]
    if options["llm"] is None and log is None:
        reports = [run_scenarios(scenarios, engine=e, **options) for e in engines]
    else:  # slow: scenario by scenario
        reports = _one_by_one(scenarios, engines, options, log, stats)
    for name, s in stats.items():
        snap = s.snapshot()
        hits = f" ({caches[name].hits} answered from --llm-cache)" if name in caches else ""
        print(f"LLM {name} (this process): {snap['calls']} calls{hits}, {snap['errors']} failed, {snap['seconds']} s")
    _print_scenarios(reports, args.verbose)
    if args.json_out:
        first, *baselines = reports
        data = {**first.to_dict(), "engine": first.engine, "extractor": first.extractor}
        if baselines:
            data["baselines"] = {r.engine: r.summary for r in baselines}
        if first.errors:
            data["errors"] = first.errors
        _write_json(args.json_out, data)
    return 0


def _num(value: Any, digits: int = 0) -> str:
    value = value.get("all") if isinstance(value, dict) else value
    return "-" if value is None else f"{value:.{digits}f}"


def _print_locomo(result: dict[str, Any]) -> None:
    """Recall@k per category for every retriever, then the injected-token medians."""
    from rich.console import Console
    from rich.table import Table

    console, retrievers, ks = Console(), result["retrievers"], result["ks"]
    names = {"all": "all", "1": "1 multi-hop", "2": "2 temporal", "3": "3 open-dom.", "4": "4 single-hop"}
    counts = result.get("questions_by_category", {})
    table = Table(title="LoCoMo evidence recall@k (mean over questions)")
    table.add_column("retriever")
    table.add_column("k", justify="right")
    for c, label in names.items():
        table.add_column(f"{label} (n={counts[c]})" if c in counts else label, justify="right")
    for name, metrics in retrievers.items():
        for k in ks:
            row = metrics.get(f"recall@{k}", {})
            table.add_row(name, str(k), *(f"{row[c]:.3f}" if c in row else "-" for c in names))
        table.add_section()
    console.print(table)
    tokens, shown, turn_only = (
        result.get(key) or {} for key in ("median_injected_tokens", "injected_recall", "injected_recall_turn_only")
    )
    columns = {
        "median tokens": (tokens, "", 0),
        "unbudgeted": (tokens, "-unbudgeted", 0),
        "evidence in block": (shown, "", 3),
    }
    if turn_only:
        columns |= {
            "turn-only tokens": (tokens, "-turn-only", 0),
            "turn-only unbudgeted": (tokens, "-turn-only-unbudgeted", 0),
        }
        columns["turn-only evidence in block"] = (turn_only, "", 3)
    if tokens:
        t = Table(title=f"Injected block per question (top {max(ks)}, budget {result.get('max_tokens', '?')} tokens)")
        t.add_column("retriever")
        for col in columns:
            t.add_column(col, justify="right")
        for name in (n for n in retrievers if n in tokens):
            t.add_row(name, *(_num(source.get(name + suffix), digits) for source, suffix, digits in columns.values()))
        console.print(t)
    for line in result.get("notes", []):
        console.print(f"- {line}")


def _locomo(args: argparse.Namespace) -> int:
    from langchain_lifecycle_memory.eval.locomo import BASELINES, evaluate_locomo, find_audit_file

    if not Path(args.file).is_file():
        return _fail(f"{args.file} not found (LoCoMo lives in ../shared/data/locomo/).", 1)
    audit = Path(args.audit) if args.audit else find_audit_file(args.file)
    if args.audit and args.audit.lower() == "none":
        audit = None
    elif audit is not None and not audit.is_file():
        return _fail(f"audit file {args.audit} not found; pass --audit none to run without it.", 1)
    retrievers = args.retrievers or list(BASELINES)
    unknown = sorted(set(retrievers) - set(BASELINES))
    if unknown:
        return _fail(f"unknown retriever(s) {unknown}; choose from {list(BASELINES)}.", 2)
    try:
        result = evaluate_locomo(
            args.file,
            ks=args.ks,
            audit=audit,
            limit_conversations=args.limit_conversations,
            text_format=args.text_format,
            retrievers=retrievers,
            embeddings=_embedder(args.embedder),
            progress=lambda line: print(line, file=sys.stderr),
        )
    except (ValueError, KeyError, json.JSONDecodeError) as e:
        return _fail(f"{args.file}: {type(e).__name__}: {e}", 1)
    _print_locomo(result)
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
