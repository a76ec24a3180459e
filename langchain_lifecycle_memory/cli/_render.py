"""Rich tables and JSON output for the ``lifecycle-memory`` CLI (presentation only, no I/O but printing).

Every cell that holds user text is a ``rich.text.Text``, never markup: a memory such as
"[red]x[/red]" or an injected line "- [2024-01-01 · conf 0.75] ..." prints verbatim.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from enum import Enum
from typing import Any

import typer
from pydantic import BaseModel
from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from langchain_lifecycle_memory.schema import MemoryRecord

__all__ = [
    "doctor_view",
    "docs_table",
    "emit",
    "error_line",
    "explain_table",
    "forget_table",
    "history_table",
    "import_view",
    "jsonable",
    "kv_table",
    "print_json",
    "purge_view",
    "record_table",
    "records_table",
    "reindex_view",
    "short",
    "stats_view",
    "sweep_view",
    "update_table",
]

_STATUS_STYLE = {"active": "green", "pending": "yellow", "archived": "dim"}


FLOAT_DIGITS = 4
"""``--json`` rounds floats to this many decimals (0.72, not 0.7200000000000001)."""


def _timestamp(value: datetime) -> str:
    """One timestamp format everywhere: ISO 8601, UTC written as ``Z``."""
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


_ISO_UTC = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)(?:\+00:00|Z)$")


def jsonable(obj: Any) -> Any:
    """Plain JSON data from models, dataclasses, datetimes, enums and tuples (floats rounded, UTC as ``Z``)."""
    if isinstance(obj, BaseModel):
        return jsonable(obj.model_dump(mode="json"))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return jsonable(dataclasses.asdict(obj))
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, datetime):
        return _timestamp(obj)
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, float):
        return round(obj, FLOAT_DIGITS)
    if isinstance(obj, str) and len(obj) >= 20 and obj[4:5] == "-":
        match = _ISO_UTC.match(obj)  # timestamps kept as text (e.g. in document metadata)
        return f"{match.group(1)}Z" if match else obj
    return obj


def print_json(data: Any) -> None:
    """Write ``data`` as JSON on stdout (and nothing else)."""
    typer.echo(json.dumps(jsonable(data), ensure_ascii=False, indent=2))


def emit(as_json: bool, data: Any, *views: RenderableType) -> None:
    """JSON on stdout in ``--json`` mode, else the rich views (plain strings are printed verbatim)."""
    if as_json:
        print_json(data)
        return
    console = Console()
    for view in views:
        if isinstance(view, Table) and view.row_count == 0:  # say so, instead of an empty frame
            view = Text(f"{view.title or 'Results'}: none.")
        console.print(Text(view) if isinstance(view, str) else view)


def note(message: str) -> None:
    """One plain line on stderr (when stdout carries data, e.g. ``export -``)."""
    Console(stderr=True, soft_wrap=True).print(Text(message))


def error_line(message: str) -> None:
    """One red line on stderr (user text is printed verbatim, never as markup)."""
    text = Text("Error: ", style="bold red")
    text.append(" ".join(str(message).split()))
    Console(stderr=True, soft_wrap=True).print(text)


def short(record_id: str | None) -> str:
    """The first 8 characters of an id (what tables show; commands accept unique prefixes)."""
    return (record_id or "")[:8]


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else ""


def _day(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d") if value is not None else ""


def _channel(score: float | None) -> str:
    """A channel's score; "–" when it did not fire (a slot hit needs neither dense nor lexical)."""
    return "–" if not score else f"{score:.2f}"


CHANNEL_NOTE = "– : the channel did not match this memory (scores are calibrated; below its floor reads –)."


def _status(record: MemoryRecord) -> Text:
    return Text(record.status.value, style=_STATUS_STYLE.get(record.status.value, ""))


def _slot(record: MemoryRecord) -> str:
    return f"{record.entity}.{record.attribute}" if record.slot else ""


def records_table(records: Sequence[MemoryRecord], *, title: str) -> Table:
    """One row per record: id, status, kind, valid from, slot=value, content (fits 80 columns).

    ``show`` has every field (confidence, source...), ``history`` the validity intervals.
    """
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for name in ("id", "status", "kind", "from"):
        table.add_column(name, no_wrap=True)
    table.add_column("slot=value", overflow="fold", ratio=1, min_width=10)
    table.add_column("content", overflow="fold", ratio=2, min_width=16)
    for r in records:
        slot = Text(f"{_slot(r)}={r.value or ''}") if r.slot else Text("")
        table.add_row(short(r.id), _status(r), r.kind, _day(r.valid_from), slot, Text(r.content))
    return table


def record_table(record: MemoryRecord) -> Table:
    """Every field of one record."""
    table = Table(title=f"memory {record.id}", title_justify="left", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    for key, value in jsonable(record).items():
        shown = json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value or "")
        table.add_row(key, _status(record) if key == "status" else Text(shown))
    return table


def history_table(records: Sequence[MemoryRecord], *, title: str) -> Table:
    """Versions of a slot, oldest first, with the links between them."""
    table = Table(title=title, title_justify="left")
    for name in ("id", "status", "value", "valid from", "valid to", "superseded by", "content"):
        table.add_column(name, overflow="fold")
    for r in records:
        restored = r.metadata.get("restored") if isinstance(r.metadata, dict) else None
        status = _status(r)
        if restored:
            status = Text.assemble(status, f" (restored {str(restored[-1].get('at', ''))[:10]})")
        table.add_row(
            short(r.id),
            status,
            Text(r.value or ""),
            _when(r.valid_from),
            _when(r.valid_to),
            short(r.superseded_by),
            Text(r.content),
        )
    return table


def update_table(result: Any) -> Table:
    """What an update step did: added / refreshed / archived records."""
    table = Table(title=result.summary(), title_justify="left")
    for name in ("action", "id", "status", "slot", "value", "content"):
        table.add_column(name, overflow="fold")
    for action, records in (("added", result.added), ("refreshed", result.refreshed), ("archived", result.archived)):
        for r in records:
            table.add_row(action, short(r.id), _status(r), _slot(r), Text(r.value or ""), Text(r.content))
    return table


def docs_table(docs: Sequence[Any], *, title: str) -> Table:
    """Retrieved documents with their fused and per-channel scores."""
    table = Table(title=title, title_justify="left", caption=CHANNEL_NOTE if docs else None, caption_justify="left")
    table.box, table.pad_edge, table.collapse_padding = box.SIMPLE_HEAD, False, True
    for name in ("#", "id", "score", "dense", "lexical", "slot", "valid from"):
        table.add_column(name, no_wrap=True)
    table.add_column("content", overflow="fold", min_width=16)
    for rank, d in enumerate(docs):
        scores = d.metadata.get("scores") or {}
        table.add_row(
            str(rank),
            short(d.metadata.get("id")),
            f"{float(d.metadata.get('score') or 0.0):.3f}",
            *(_channel(float(scores.get(c) or 0.0)) for c in ("dense", "lexical", "slot")),
            (d.metadata.get("valid_from") or "")[:10],
            Text(d.page_content),
        )
    return table


def explain_table(explanation: Any) -> Table:
    """Every candidate of a retrieval with its decision and the reason."""
    title = f"why: {explanation.query!r} (min_score {explanation.min_score:.2f}, k {explanation.k})"
    table = Table(title=title, title_justify="left", caption=CHANNEL_NOTE, caption_justify="left")
    table.box, table.pad_edge, table.collapse_padding = box.SIMPLE_HEAD, False, True
    for name in ("decision", "fused", "dense", "lex", "slot", "id"):  # kept ones come first, in rank order
        table.add_column(name, no_wrap=True)
    table.add_column("content", overflow="fold", ratio=1, min_width=12)
    table.add_column("reason", overflow="fold", ratio=1, min_width=10)
    order = sorted(explanation.candidates, key=lambda c: (c.decision != "kept", c.rank or 0, -c.fused))
    for c in order:
        style = "green" if c.decision == "kept" else "dim"
        table.add_row(
            Text(c.decision if c.rank is None else f"{c.decision} #{c.rank}", style=style),
            f"{c.fused:.3f}",
            *(_channel(c.channels.get(ch)) for ch in ("dense", "lexical", "slot")),
            short(c.record.id),
            Text(c.record.content),
            Text(c.reason),
        )
    return table


def forget_table(matches: Sequence[Any], *, title: str) -> Table:
    """Records a forget would archive (or did), and why each matched."""
    table = Table(title=title, title_justify="left")
    for name in ("id", "matched by", "score", "status", "slot", "content"):
        table.add_column(name, overflow="fold")
    for m in matches:
        record = m.record if hasattr(m, "record") else m
        reason = getattr(m, "reason", "")
        score = getattr(m, "score", None)
        table.add_row(
            short(record.id),
            reason,
            "" if score is None else f"{score:.3f}",
            _status(record),
            _slot(record),
            Text(record.content),
        )
    return table


def kv_table(title: str, pairs: Iterable[tuple[str, Any]]) -> Table:
    """A two-column report (sweep, purge, reindex, import...)."""
    table = Table(title=title, title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", overflow="fold")
    for key, value in pairs:
        shown = json.dumps(jsonable(value), ensure_ascii=False) if isinstance(value, (dict, list, tuple)) else value
        table.add_row(key, Text(str(shown)))
    return table


def sweep_view(report: Any, records: Mapping[str, MemoryRecord] | None = None) -> Group:
    """A lifecycle ``SweepReport``, then which memories it archived / deleted (or would)."""
    dry = " (dry run)" if report.dry_run else ""
    verb = ("would archive", "would delete") if report.dry_run else ("archived", "deleted")
    pairs = [("now", _timestamp(report.now)), ("namespaces scanned", report.scanned_namespaces)]
    counts = kv_table(
        "sweep" + dry,
        [*pairs, (verb[0], report.archived), (verb[1], report.deleted), ("repaired", report.repaired)],
    )
    table = Table(title=f"memories {verb[0]} / {verb[1].split()[-1]}", title_justify="left")
    for name in ("action", "user", "id", "kind", "content"):
        table.add_column(name, overflow="fold")
    for ns in report.namespaces:
        for action, ids in ((verb[0], ns.archived), (verb[1], ns.deleted)):
            for record_id in ids:
                r = (records or {}).get(record_id)
                user = Text(ns.namespace[-1] if ns.namespace else "")
                table.add_row(action, user, short(record_id), r.kind if r else "", Text(r.content if r else ""))
    return Group(counts, table) if table.row_count else Group(counts)


def purge_view(user: str, report: Any) -> Table:
    """A lifecycle ``PurgeReport``."""
    pairs: list[tuple[str, Any]] = [("user", user), ("items deleted", report.items_deleted)]
    pairs.append(("log lines removed", report.log_lines_removed))
    if report.compaction is not None:
        c = report.compaction
        pairs.append(("files compacted", c.method if c.supported else c.reason))
    return kv_table("purged", pairs)


def reindex_view(old: Mapping[str, Any], report: Any) -> Table:
    """A ``ReindexReport`` with the fingerprint the store had before."""
    pairs = [("from", dict(old)), ("to", report.new_fingerprint), ("namespaces", report.namespaces)]
    return kv_table("reindexed", [*pairs, ("items", report.items), ("embedded", report.embedded)])


def import_view(report: Any) -> Group:
    """An ``ImportReport``: counts, then every bad line with its reason."""
    parts: list[RenderableType] = [
        Text(f"Imported {report.imported} memories into {len(report.namespaces)} namespace(s).")
    ]
    archived = getattr(report, "archived", [])
    if archived:
        title = f"{len(archived)} line(s) imported as archived (a newer version is current)"
        parts.append(kv_table(title, [(f"line {e.line}", e.reason) for e in archived]))
    if report.errors:
        title = f"{len(report.errors)} bad line(s), not imported"
        parts.append(kv_table(title, [(f"line {e.line}", e.reason) for e in report.errors]))
        parts.append(Text(f"{len(report.errors)} line(s) skipped, the rest imported: exit code 1.", style="yellow"))
    return Group(*parts)


def stats_view(data: Mapping[str, Any]) -> Group:
    """Per-user counts, and the retrieval log summary when present."""
    title = f"{data['store']} · embedder {data['fingerprint'].get('model') or data['fingerprint'].get('provider')}"
    parts: list[RenderableType] = [stats_table(data["users"], title=title)]
    if "retrievals" in data:
        pairs = [
            (ns, f"{s.retrievals} retrievals, hit rate {s.hit_rate:.0%}, p50 score {s.scores.p50}, dropped {s.dropped}")
            for ns, s in data["retrievals"].namespaces.items()
        ]
        parts.append(kv_table("retrieval log", pairs or [("(empty)", "")]))
    return Group(*parts)


def stats_table(rows: Sequence[Mapping[str, Any]], *, title: str) -> Table:
    """Per-user record counts by status and kind."""
    table = Table(title=title, title_justify="left")
    for name in ("user", "total", "active", "pending", "archived", "by kind"):
        table.add_column(name, overflow="fold")
    for row in rows:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(row["by_kind"].items()))
        st = row["by_status"]
        table.add_row(
            Text(row["user"]),
            str(row["total"]),
            *(str(st.get(s, 0)) for s in ("active", "pending", "archived")),
            kinds,
        )
    return table


# ---------------------------------------------------------------------- doctor
def doctor_view(report: Any) -> RenderableType:
    """The checklist, then each query's verdict for the memory and what was injected."""
    title = f"doctor: {report.target!r} of user {report.user_id!r} → {report.verdict}"
    checklist = Table(title=title, title_justify="left", show_header=False)
    checklist.add_column("ok")
    checklist.add_column("step", style="bold")
    checklist.add_column("finding", overflow="fold")
    for f in report.findings:
        checklist.add_row(Text("✓", style="green") if f.ok else Text("✗", style="red"), f.step, Text(f.message))
    parts: list[RenderableType] = [checklist]
    if report.checks:
        queries = Table(title="queries", title_justify="left")
        for name in ("origin", "query", "decision", "rank", "fused", "dense", "lexical", "slot", "injected"):
            queries.add_column(name, overflow="fold")
        for c in report.checks:
            lines = "\n".join(f"• {line}" for line in c.injected_lines) or "(nothing)"
            mark = "✓ " if c.injected else "✗ "
            queries.add_row(
                c.origin,
                Text(c.query),
                c.decision or "-",
                "" if c.rank is None else str(c.rank),
                "" if c.fused is None else f"{c.fused:.3f}",
                *(f"{c.channels.get(ch, 0.0):.2f}" for ch in ("dense", "lexical", "slot")),
                Text(mark + lines, style="green" if c.injected else ""),
            )
        parts.append(queries)
    return Group(*parts)
