"""Export and import memory records as JSON lines: every field and the namespace, no vectors (import re-embeds)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from langgraph.store.base import GetOp, InvalidNamespaceError
from pydantic import BaseModel, Field, ValidationError, computed_field

from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus
from langchain_lifecycle_memory.store import chroma as C
from langchain_lifecycle_memory.store.slots import resolve_current

if TYPE_CHECKING:
    from langchain_lifecycle_memory.store.chroma_store import ChromaRecordStore as ChromaMemoryStore

__all__ = ["ImportIssue", "ImportReport", "export_records", "import_records", "record_line", "settle_versions"]

PathOrFile = str | os.PathLike[str] | IO[str]


class ImportIssue(BaseModel):
    """A line that was not imported."""

    line: int
    """1-based line number in the file."""
    reason: str


class ImportReport(BaseModel):
    """Outcome of :func:`import_records`: good lines are imported even when others fail."""

    imported: int = 0
    namespaces: list[tuple[str, ...]] = Field(default_factory=list)
    errors: list[ImportIssue] = Field(default_factory=list)
    """Lines not imported (nothing of them was written), with the reason."""
    archived: list[ImportIssue] = Field(default_factory=list)
    """Lines imported as archived, not active: the store had archived them, or their slot has a newer version."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        """Whether every non-blank line was imported."""
        return not self.errors


@contextlib.contextmanager
def _open(target: PathOrFile, mode: str) -> Iterator[IO[Any]]:
    if not isinstance(target, (str, os.PathLike)):
        yield target
        return
    if mode == "w":
        Path(target).parent.mkdir(parents=True, exist_ok=True)
    with open(target, mode, **({} if "b" in mode else {"encoding": "utf-8", "newline": "\n"})) as f:
        yield f


def record_line(record: MemoryRecord) -> str:
    """The JSON line of one record (no trailing newline).

    Example:
        >>> r = MemoryRecord(id="r1", namespace=("memories", "u1"), content="用户喜欢 Vim",
        ...                  created_at="2024-01-01T00:00:00Z", updated_at="2024-01-01T00:00:00Z",
        ...                  valid_from="2024-01-01T00:00:00Z")
        >>> record_line(r).startswith('{"id": "r1", "namespace": ["memories", "u1"], "content": "用户喜欢 Vim"')
        True
    """
    return json.dumps(record.model_dump(mode="json"), ensure_ascii=False)


def export_records(
    store: ChromaMemoryStore, path_or_file: PathOrFile, *, namespace_prefix: Sequence[str] | None = None
) -> int:
    """Stream every record (all statuses, no plain items) under ``namespace_prefix`` as JSON lines; returns how many."""
    count = 0
    with _open(path_or_file, "w") as f:
        for ns in store.namespaces(tuple(namespace_prefix or ())):
            # Page by page: memory grows only with the active slot records, which are held back
            # and written through the readers' rule (one current value per single-valued slot).
            heads: list[MemoryRecord] = []
            for record in store.iter_records(ns):
                if record.status is MemoryStatus.ACTIVE and record.slot is not None:
                    heads.append(record)
                    continue
                f.write(record_line(record) + "\n")
                count += 1
            for record in resolve_current(heads):
                f.write(record_line(record) + "\n")
                count += 1
    return count


def _lines(source: IO[Any]) -> Iterator[tuple[int, str | None, str | None]]:
    """``(number, text, problem)`` per line; only a line feed ends a line, bad UTF-8 is one bad line."""
    raw = getattr(source, "buffer", source)
    for number, line in enumerate(raw, start=1):
        if isinstance(line, str):
            yield number, line.removeprefix("\ufeff") if number == 1 else line, None
            continue
        try:  # a byte order mark before the first line (Notepad's UTF-8) is no part of it
            yield number, line.decode("utf-8-sig" if number == 1 else "utf-8"), None
        except UnicodeDecodeError as e:
            yield number, None, f"not UTF-8 text: byte {line[e.start]:#04x} at column {e.start + 1}"


def _parse(text: str, target: tuple[str, ...] | None) -> MemoryRecord | str:
    """A record from one line, or the reason it is not one (never an exception)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        return f"not JSON: {e.msg} at column {e.colno}"
    except RecursionError:
        return "not imported: the JSON is nested too deeply"
    except ValueError as e:  # e.g. an integer with too many digits
        return f"not JSON: {e}"
    if not isinstance(data, dict):
        return "expected a JSON object per line"
    if target is not None:
        data["namespace"] = list(target)
    try:
        record = MemoryRecord.model_validate(data)
        C.validate_namespace(record.namespace)
        C.validate_key(record.id)
        record_line(record).encode("utf-8")
        C.dumps_value(record.to_value())  # the size a store accepts
    except ValidationError as e:
        issues = e.errors(include_url=False)
        return "; ".join(f"{'.'.join(map(str, i['loc'])) or 'record'}: {i['msg']}" for i in issues)
    except UnicodeEncodeError as e:
        where = _surrogate_path(record.model_dump(mode="json")) or "a field"
        return f"{where}: lone surrogate U+{ord(e.object[e.start]):04X} is not valid Unicode text; fix the text"
    except RecursionError:
        return "not imported: the record is nested too deeply"
    except (InvalidNamespaceError, ValueError, TypeError) as e:
        return str(e)
    return record


def _surrogate_path(value: Any, path: str = "") -> str | None:
    """The dotted path of the first string holding a lone surrogate."""
    if isinstance(value, str):
        return path if any(0xD800 <= ord(c) <= 0xDFFF for c in value) else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and (found := _surrogate_path(key, f"{path}.{key}".lstrip("."))) is not None:
            return found
        if (found := _surrogate_path(item, f"{path}.{key}".lstrip("."))) is not None:
            return found
    return None


def _newest_first(record: MemoryRecord) -> tuple[Any, ...]:
    return (record.valid_from, record.updated_at, record.created_at, record.id)


def settle_versions(
    incoming: Sequence[MemoryRecord], stored: Mapping[str, MemoryRecord]
) -> tuple[list[MemoryRecord], dict[str, str]]:
    """The records to write so an import never leaves a slot two current values, and why ids were archived.

    What the store archived stays archived; of a slot's active versions only the newest stays active.
    """
    notes: dict[str, str] = {}
    records: dict[str, MemoryRecord] = {}
    for r in incoming:
        old = stored.get(r.id)
        if old is not None and old.status is MemoryStatus.ARCHIVED and r.status is not MemoryStatus.ARCHIVED:
            keep = {k: getattr(old, k) for k in ("status", "valid_to", "superseded_by", "updated_at")}
            r = MemoryRecord.model_validate({**r.model_dump(), **keep})
            notes[r.id] = "the store had already archived this memory; it stays archived"
        records[r.id] = r
    write = dict(records)
    slots: dict[tuple[tuple[str, ...], str, str], dict[str, MemoryRecord]] = {}
    for r in [*stored.values(), *records.values()]:
        if r.slot is not None:
            slots.setdefault((r.namespace, *r.slot), {})[r.id] = records.get(r.id, r)
    for (_, entity, attribute), versions in slots.items():
        active = sorted((v for v in versions.values() if v.status is MemoryStatus.ACTIVE), key=_newest_first)
        for older, newer in zip(active, active[1:]):
            end = max(newer.valid_from, older.valid_from)
            write[older.id] = older.model_copy(
                update={"status": MemoryStatus.ARCHIVED, "valid_to": end, "superseded_by": newer.id}
            )
            if newer.supersedes is None:
                write[newer.id] = write.get(newer.id, newer).model_copy(update={"supersedes": older.id})
            if older.id in records:
                notes[older.id] = (
                    f"a newer version of {entity}.{attribute} exists ({newer.id}); imported as archived, "
                    "superseded by it"
                )
    return list(write.values()), notes


def _stored(store: ChromaMemoryStore, batch: Sequence[MemoryRecord]) -> dict[str, MemoryRecord]:
    """The store's records with the batch's ids, and every version of the batch's slots."""
    found: dict[str, MemoryRecord] = {}
    by_ns: dict[tuple[str, ...], list[MemoryRecord]] = {}
    for r in batch:
        by_ns.setdefault(r.namespace, []).append(r)
    for ns, records in by_ns.items():
        items = store.batch([GetOp(ns, r.id) for r in records])
        for item in items:
            if item is not None and (old := _as_record(ns, item.value)) is not None:
                found[old.id] = old
        for entity, attribute in sorted({r.slot for r in records if r.slot is not None}):
            for old in store.list_records(ns, entity=entity, attribute=attribute):
                found[old.id] = old
    return found


def _as_record(namespace: tuple[str, ...], value: Any) -> MemoryRecord | None:
    try:
        return MemoryRecord.from_value(namespace, value)
    except (ValidationError, ValueError, TypeError):
        return None


def import_records(
    store: ChromaMemoryStore,
    path_or_file: PathOrFile,
    *,
    namespace: Sequence[str] | None = None,
    batch_size: int = 256,
) -> ImportReport:
    """Validate and upsert records from JSON lines (:func:`export_records`'s); bad lines are reported, not written.

    Ids are kept (a second import updates); ``namespace`` puts every record there instead of the file's.
    """
    target = C.validate_namespace(tuple(namespace)) if namespace is not None else None
    report = ImportReport()
    seen: set[tuple[str, ...]] = set()
    batch: list[MemoryRecord] = []
    line_of: dict[str, int] = {}
    first_line: dict[tuple[tuple[str, ...], str], int] = {}

    def write(records: list[MemoryRecord]) -> None:
        try:
            store.put_records(records)
        except Exception:  # find the culprit(s): one record at a time, the rest still land
            for r in records:
                try:
                    store.put_records([r])
                except Exception as e:
                    if r.id in line_of:
                        report.errors.append(ImportIssue(line=line_of[r.id], reason=f"{type(e).__name__}: {e}"))
                    else:
                        raise

    def flush() -> None:
        if not batch:
            return
        records, notes = settle_versions(batch, _stored(store, batch))
        failed = len(report.errors)
        write(records)
        bad = {issue.line for issue in report.errors[failed:]}
        landed = [r for r in batch if line_of[r.id] not in bad]
        report.imported += len(landed)
        seen.update(r.namespace for r in landed)
        report.archived += [ImportIssue(line=line_of[i], reason=n) for i, n in notes.items() if line_of[i] not in bad]
        batch.clear()
        line_of.clear()

    with _open(path_or_file, "rb") as f:
        for number, text, problem in _lines(f):
            if problem is None and text is not None and not text.strip():
                continue
            if number == 1 and (text or "").lstrip().startswith("["):
                reason = "a JSON array, not JSON Lines: put one record per line (`jq -c '.[]' FILE`); nothing imported"
                report.errors.append(ImportIssue(line=number, reason=reason))
                break
            parsed = problem or _parse(text or "", target)
            if isinstance(parsed, str):
                report.errors.append(ImportIssue(line=number, reason=parsed))
                continue
            earlier = first_line.setdefault((parsed.namespace, parsed.id), number)
            if earlier != number:  # never merge two lines into one memory silently
                reason = (
                    f"duplicate id {parsed.id!r} (first on line {earlier}); not imported: give each memory its own id"
                )
                report.errors.append(ImportIssue(line=number, reason=reason))
                continue
            batch.append(parsed)
            line_of[parsed.id] = number
            if len(batch) >= batch_size:
                flush()
    flush()
    report.errors.sort(key=lambda issue: issue.line)
    report.archived.sort(key=lambda issue: issue.line)
    report.namespaces = sorted(seen)
    return report
