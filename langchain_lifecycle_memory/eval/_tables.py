"""Rich tables for the eval CLI (printing only; no logic)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from langchain_lifecycle_memory.eval.scenarios import ScenarioReport

__all__ = ["print_locomo", "print_scenario_failures", "print_scenario_summary"]


def _cell(summary: Mapping[str, Any] | None, category: str | None = None) -> str:
    if summary is None:
        return "-"
    cell = summary if category is None else summary["by_category"].get(category)
    if not cell:
        return "-"
    total = cell["passed"] + cell["failed"]
    return f"{cell['passed']}/{total}"


def print_scenario_summary(reports: Sequence[ScenarioReport], console: Console | None = None) -> None:
    """One row per category, one column per engine: ``passed/total``."""
    console = console or Console()
    summaries = [r.summary for r in reports]
    categories: list[str] = []
    for s in summaries:
        categories += [c for c in s["by_category"] if c not in categories]
    extractor = reports[0].extractor if reports else "?"
    table = Table(title=f"Scenario probes passed (extractor: {extractor})")
    table.add_column("category")
    for r in reports:
        table.add_column(r.engine, justify="right")
    for c in categories:
        table.add_row(c, *(_cell(s, c) for s in summaries))
    table.add_section()
    table.add_row("all", *(_cell(s) for s in summaries), style="bold")
    console.print(table)


def print_scenario_failures(report: ScenarioReport, console: Console | None = None, *, limit: int = 200) -> None:
    """The failed probes of one engine with their reasons."""
    console = console or Console()
    failures = report.failures()
    if not failures:
        console.print(f"[green]{report.engine}: every probe passed.[/green]")
        return
    table = Table(title=f"{report.engine}: {len(failures)} failed probe(s)", show_lines=False)
    for name in ("scenario", "step", "category", "query", "reasons"):
        table.add_column(name, overflow="fold")
    for p in failures[:limit]:
        table.add_row(p.scenario, str(p.step), p.category, p.query, "; ".join(p.reasons))
    console.print(table)
    if len(failures) > limit:
        console.print(f"... and {len(failures) - limit} more (use --json for all).")
    for error in report.errors:
        console.print(f"[red]{report.engine} engine error:[/red] {error}")


def _num(value: Any, digits: int = 0) -> str:
    if isinstance(value, Mapping):
        value = value.get("all")
    return "-" if value is None else f"{value:.{digits}f}"


def print_locomo(result: Mapping[str, Any], console: Console | None = None) -> None:
    """Recall@k per category for every retriever, then the injected-token medians."""
    console = console or Console()
    retrievers: Mapping[str, Mapping[str, Mapping[str, float]]] = result["retrievers"]
    ks = result.get("ks") or sorted({int(m.split("@")[1]) for r in retrievers.values() for m in r})
    cats = ["all", "1", "2", "3", "4"]
    names = {"1": "1 multi-hop", "2": "2 temporal", "3": "3 open-dom.", "4": "4 single-hop"}
    counts = result.get("questions_by_category", {})
    table = Table(title="LoCoMo evidence recall@k (mean over questions)")
    table.add_column("retriever")
    table.add_column("k", justify="right")
    for c in cats:
        label = names.get(c, c)
        table.add_column(f"{label} (n={counts[c]})" if c in counts else label, justify="right")
    for name, metrics in retrievers.items():
        for k in ks:
            row = metrics.get(f"recall@{k}", {})
            table.add_row(name, str(k), *(f"{row[c]:.3f}" if c in row else "-" for c in cats))
        table.add_section()
    console.print(table)
    tokens = result.get("median_injected_tokens") or {}
    shown = result.get("injected_recall") or {}
    turn_only = result.get("injected_recall_turn_only") or {}
    if tokens:
        budget = result.get("max_tokens", "?")
        t = Table(title=f"Injected block per question (top {max(ks)}, budget {budget} tokens)")
        for col in ("retriever", "median tokens", "unbudgeted", "evidence in block"):
            t.add_column(col, justify="left" if col == "retriever" else "right")
        if turn_only:
            for col in ("turn-only tokens", "turn-only unbudgeted", "turn-only evidence in block"):
                t.add_column(col, justify="right")
        for name in retrievers:
            if name not in tokens:
                continue
            row = [name, _num(tokens.get(name)), _num(tokens.get(f"{name}-unbudgeted")), _num(shown.get(name), 3)]
            if turn_only:
                row += [
                    _num(tokens.get(f"{name}-turn-only")),
                    _num(tokens.get(f"{name}-turn-only-unbudgeted")),
                    _num(turn_only.get(name), 3),
                ]
            t.add_row(*row)
        console.print(t)
    for line in result.get("notes", []):
        console.print(f"- {line}")
