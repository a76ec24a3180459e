"""The demo's view: the seed article's conflict, naive memory against lifecycle-memory (presentation only)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from langchain_lifecycle_memory.cli._render import history_table

__all__ = ["demo_view"]


_DEMO_LABELS: dict[str, dict[str, str]] = {
    "zh": {
        "title": "种子文章的演示：朴素记忆 vs lifecycle-memory",
        "background": "背景（其他对话里用户说过，两边都写入了）：",
        "said": "用户说",
        "query": "查询",
        "naive": "朴素方案（文章原型：只追加、只用向量、固定 min_score={min_score}）",
        "ours": "lifecycle-memory（混合召回、冲突归档、阈值校准）",
        "written": "写入",
        "archived": "归档",
        "appended": "只追加，旧记忆没有归档",
        "retrieved": "召回",
        "injected": "注入",
        "verdict": "结果",
        "none": "（无）",
        "history": "编辑器偏好的历史（user.editor）",
        "summary": "汇总",
        "round": "轮次",
        "explore": "查看这份存储：",
        "seconds": "用时 {seconds} 秒",
    },
    "en": {
        "title": "The seed article's demo: naive memory vs lifecycle-memory",
        "background": "Background (said in other conversations, written to both engines):",
        "said": "user says",
        "query": "query",
        "naive": "naive (the article's engine: append-only, dense-only, fixed min_score={min_score})",
        "ours": "lifecycle-memory (hybrid recall, archived conflicts, calibrated threshold)",
        "written": "written",
        "archived": "archived",
        "appended": "appended; the old memory stays active",
        "retrieved": "retrieved",
        "injected": "injected",
        "verdict": "verdict",
        "none": "(none)",
        "history": "History of the editor preference (user.editor)",
        "summary": "Summary",
        "round": "round",
        "explore": "Explore this store:",
        "seconds": "took {seconds} s",
    },
}


def _verdict_text(verdict: Any) -> Text:
    details = ": " + "; ".join(verdict.details) if verdict.details else ""
    mark, style = ("✓", "bold green") if verdict.ok else ("✗", "bold red")
    return Text(f"{mark} {verdict.label}{details}", style=style)


def _engine_cells(view: Any, show_block: bool, said: bool, labels: Mapping[str, str]) -> list[Text]:
    written = Text()
    if said:
        for line in view.written or [labels["none"]]:
            written.append(f"+ {line}\n")
        for line in view.archived:
            written.append(f"{labels['archived']}: {line}\n", style="yellow")
        if view.engine == "naive":
            written.append(f"({labels['appended']})", style="dim")
        written.rstrip()
    retrieved = Text()
    for content, score in view.retrieved:
        retrieved.append(f"{score:.3f}  {content}\n")
    for content, why in view.held_back:
        retrieved.append(f"✗ {content} — {why}\n", style="dim")
    if view.block and show_block:
        injected = Text(view.block)
    else:
        injected = Text("\n".join(f"• {line}" for line in view.lines) if view.lines else view.block)
    retrieved.rstrip()
    return [written, retrieved, injected, _verdict_text(view.verdict)]


def demo_view(result: Any) -> list[RenderableType]:
    """Renderables for a ``DemoResult``: one side-by-side table per round, the slot history, a summary."""
    labels = _DEMO_LABELS[result.lang]
    parts: list[RenderableType] = [Rule(labels["title"])]
    parts.append(Text(labels["background"] + " " + " / ".join(result.background), style="dim"))
    for rnd in result.rounds:
        head = Text()
        if rnd.said:
            head.append(f"{labels['said']}: ", style="bold")
            head.append(f"{rnd.said!s}\n")
        head.append(f"{labels['query']}: ", style="bold")
        head.append(f"{rnd.query} ({rnd.at.date().isoformat()})")
        table = Table(show_lines=True, expand=True)
        table.add_column("", style="bold", ratio=1)
        table.add_column(labels["naive"].format(min_score=result.naive_min_score), ratio=5, overflow="fold")
        table.add_column(labels["ours"], ratio=5, overflow="fold")
        cells = [_engine_cells(view, rnd.show_block, bool(rnd.said), labels) for view in (rnd.naive, rnd.ours)]
        for name, naive, ours in zip(("written", "retrieved", "injected", "verdict"), *cells, strict=True):
            if name != "written" or rnd.said:
                table.add_row(labels[name], naive, ours)
        parts.append(Panel(Group(head, table), title=Text(rnd.title), title_align="left"))
    parts.append(history_table(result.history, title=labels["history"]))
    summary = Table(labels["round"], "naive", "lifecycle-memory", title=labels["summary"], title_justify="left")
    for rnd in result.rounds:
        summary.add_row(Text(rnd.title), _verdict_text(rnd.naive.verdict), _verdict_text(rnd.ours.verdict))
    score, total = result.score(), len(result.rounds)
    summary.add_row("", f"{score['naive']}/{total}", f"{score['ours']}/{total}")
    parts.append(summary)
    footer = labels["seconds"].format(seconds=result.seconds)
    if result.path:
        footer += f" · {labels['explore']} lifecycle-memory --path {result.path} history --user {result.user_id} editor"
    parts.append(Text(footer, style="dim"))
    return parts
