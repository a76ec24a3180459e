"""Rich tables and JSON output for the CLI; user text is always ``rich.text.Text``, never markup."""

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


def note(message: str | Text) -> None:
    """One line on stderr (when stdout carries data, e.g. ``export -``), printed verbatim, never as markup."""
    Console(stderr=True, soft_wrap=True).print(Text(message) if isinstance(message, str) else message)


def error_line(message: str) -> None:
    """One red line on stderr."""
    note(Text.assemble(("Error: ", "bold red"), " ".join(str(message).split())))


def short(record_id: str | None) -> str:
    """The first 8 characters of an id (what tables show; commands accept unique prefixes)."""
    return (record_id or "")[:8]


def _when(value: datetime | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return value.strftime(fmt) if value is not None else ""


def _channel(score: float | None) -> str:
    """A channel's score; "–" when it did not fire (a slot hit needs neither dense nor lexical)."""
    return "–" if not score else f"{score:.2f}"


CHANNEL_NOTE = "– : the channel did not match this memory (scores are calibrated; below its floor reads –)."


def _status(record: MemoryRecord, *, restored: bool = False) -> Text:
    text = Text(record.status.value, style=_STATUS_STYLE.get(record.status.value, ""))
    marks = record.metadata.get("restored") if restored and isinstance(record.metadata, dict) else None
    return Text.assemble(text, f" (restored {str(marks[-1].get('at', ''))[:10]})") if marks else text


def _slot(record: MemoryRecord) -> str:
    return f"{record.entity}.{record.attribute}" if record.slot else ""


def _table(title: str, columns: Iterable[str], rows: Iterable[Sequence[Any]]) -> Table:
    """A table with its title on the left and folding columns."""
    table = Table(title=title, title_justify="left")
    for name in columns:
        table.add_column(name, overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def _compact(title: str, tight: Sequence[str], loose: Mapping[str, tuple[int | None, int]], **options: Any) -> Table:
    """The narrow style (fits 80 columns): ``tight`` columns never wrap, ``loose`` ones fold (ratio, min width)."""
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, **options)
    table.collapse_padding, table.caption_justify = True, "left"
    for name in tight:
        table.add_column(name, no_wrap=True)
    for name, (ratio, width) in loose.items():
        table.add_column(name, overflow="fold", ratio=ratio, min_width=width)
    return table


def records_table(records: Sequence[MemoryRecord], *, title: str) -> Table:
    """One row per record: id, status, kind, valid from, slot=value, content (``show`` has every field)."""
    table = _compact(title, ("id", "status", "kind", "from"), {"slot=value": (1, 10), "content": (2, 16)})
    for r in records:
        slot = Text(f"{_slot(r)}={r.value or ''}") if r.slot else Text("")
        table.add_row(short(r.id), _status(r), r.kind, _when(r.valid_from, "%Y-%m-%d"), slot, Text(r.content))
    return table


def record_table(record: MemoryRecord) -> Table:
    """Every field of one record."""
    pairs = [(k, v if isinstance(v, (dict, list)) else str(v or "")) for k, v in jsonable(record).items()]
    return kv_table(f"memory {record.id}", [(k, _status(record) if k == "status" else v) for k, v in pairs])


def history_table(records: Sequence[MemoryRecord], *, title: str) -> Table:
    """Versions of a slot, oldest first, with the links between them."""
    columns = ("id", "status", "value", "valid from", "valid to", "superseded by", "content")
    rows = [
        (short(r.id), _status(r, restored=True), Text(r.value or ""), _when(r.valid_from), _when(r.valid_to))
        + (short(r.superseded_by), Text(r.content))
        for r in records
    ]
    return _table(title, columns, rows)


def update_table(result: Any) -> Table:
    """What an update step did: added / refreshed / archived records."""
    done = (("added", result.added), ("refreshed", result.refreshed), ("archived", result.archived))
    rows = [(a, short(r.id), _status(r), _slot(r), Text(r.value or ""), Text(r.content)) for a, rs in done for r in rs]
    return _table(result.summary(), ("action", "id", "status", "slot", "value", "content"), rows)


def docs_table(docs: Sequence[Any], *, title: str) -> Table:
    """Retrieved documents with their fused and per-channel scores."""
    columns = ("#", "id", "score", "dense", "lexical", "slot", "valid from")
    table = _compact(title, columns, {"content": (None, 16)}, caption=CHANNEL_NOTE if docs else None)
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
    columns = ("decision", "fused", "dense", "lex", "slot", "id")
    table = _compact(title, columns, {"content": (1, 12), "reason": (1, 10)}, caption=CHANNEL_NOTE)
    order = sorted(explanation.candidates, key=lambda c: (c.decision != "kept", c.rank or 0, -c.fused))  # kept first
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
    rows = []
    for m in matches:
        r, score = (m.record if hasattr(m, "record") else m), getattr(m, "score", None)
        score_text = "" if score is None else f"{score:.3f}"
        rows.append((short(r.id), getattr(m, "reason", ""), score_text, _status(r), _slot(r), Text(r.content)))
    return _table(title, ("id", "matched by", "score", "status", "slot", "content"), rows)


def kv_table(title: str, pairs: Iterable[tuple[str, Any]]) -> Table:
    """A two-column report (sweep, purge, reindex, import...)."""
    table = Table(title=title, title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", overflow="fold")
    for key, value in pairs:
        shown = json.dumps(jsonable(value), ensure_ascii=False) if isinstance(value, (dict, list, tuple)) else value
        table.add_row(key, value if isinstance(value, Text) else Text(str(shown)))
    return table


def sweep_view(report: Any, records: Mapping[str, MemoryRecord] | None = None) -> Group:
    """A lifecycle ``SweepReport``, then which memories it archived / deleted (or would)."""
    dry = " (dry run)" if report.dry_run else ""
    verb = ("would archive", "would delete") if report.dry_run else ("archived", "deleted")
    pairs = [("now", _timestamp(report.now)), ("namespaces scanned", report.scanned_namespaces)]
    pairs += [(verb[0], report.archived), (verb[1], report.deleted), ("repaired", report.repaired)]
    rows = []
    for ns in report.namespaces:
        user = Text(ns.namespace[-1] if ns.namespace else "")
        for action, record_id in [*((verb[0], i) for i in ns.archived), *((verb[1], i) for i in ns.deleted)]:
            r = (records or {}).get(record_id)
            rows.append((action, user, short(record_id), r.kind if r else "", Text(r.content if r else "")))
    table = _table(f"memories {verb[0]} / {verb[1].split()[-1]}", ("action", "user", "id", "kind", "content"), rows)
    return Group(kv_table("sweep" + dry, pairs), *([table] if rows else []))


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
    cells = []
    for row in data["users"]:
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(row["by_kind"].items()))
        counts = [str(row["by_status"].get(s, 0)) for s in ("active", "pending", "archived")]
        cells.append((Text(row["user"]), str(row["total"]), *counts, kinds))
    columns = ("user", "total", "active", "pending", "archived", "by kind")
    parts: list[RenderableType] = [_table(title, columns, cells)]
    if "retrievals" in data:
        pairs = [
            (ns, f"{s.retrievals} retrievals, hit rate {s.hit_rate:.0%}, p50 score {s.scores.p50}, dropped {s.dropped}")
            for ns, s in data["retrievals"].namespaces.items()
        ]
        parts.append(kv_table("retrieval log", pairs or [("(empty)", "")]))
    return Group(*parts)


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
    rows = []
    for c in report.checks:
        lines = "\n".join(f"• {line}" for line in c.injected_lines) or "(nothing)"
        scores = ["" if c.rank is None else str(c.rank), "" if c.fused is None else f"{c.fused:.3f}"]
        scores += [f"{c.channels.get(ch, 0.0):.2f}" for ch in ("dense", "lexical", "slot")]
        injected = Text(("✓ " if c.injected else "✗ ") + lines, style="green" if c.injected else "")
        rows.append((c.origin, Text(c.query), c.decision or "-", *scores, injected))
    columns = ("origin", "query", "decision", "rank", "fused", "dense", "lexical", "slot", "injected")
    return Group(checklist, *([_table("queries", columns, rows)] if rows else []))
