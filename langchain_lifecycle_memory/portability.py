"""Export and import memory records as JSON lines (backups, migrations, "download my data").

One record per line, every field (status, history links, bi-temporal dates, source,
metadata) and the namespace, no vectors: an import re-embeds with the target store's
embedder, so a file moves between stores with different models. Export order is fixed
(namespace, then ``created_at``, ``valid_from``, ``id``), so export -> import -> export
gives the same bytes.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from langgraph.store.base import InvalidNamespaceError
from pydantic import BaseModel, Field, ValidationError, computed_field

from langchain_lifecycle_memory import _chroma as C
from langchain_lifecycle_memory._maintenance import namespaces
from langchain_lifecycle_memory.schema import MemoryRecord

if TYPE_CHECKING:
    from langchain_lifecycle_memory.store import ChromaMemoryStore

__all__ = ["ImportIssue", "ImportReport", "export_records", "import_records", "record_line"]

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

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        """Whether every non-blank line was imported."""
        return not self.errors


@contextlib.contextmanager
def _open(target: PathOrFile, mode: str) -> Iterator[IO[str]]:
    if isinstance(target, (str, os.PathLike)):
        path = Path(target)
        if "w" in mode:
            path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, mode, encoding="utf-8", newline="\n") as f:
            yield f
    else:
        yield target


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
    """Write every record (all statuses) under ``namespace_prefix`` as JSON lines; returns how many.

    Namespaces in order, each one's records in storage order, streamed page by page
    (memory does not grow with the number of records).

    Items that are not memory records (plain LangGraph ``store.put`` values) are skipped.

    Example:
        .. code-block:: python

            from langchain_lifecycle_memory.portability import export_records, import_records

            n = export_records(store, "u1.jsonl", namespace_prefix=("memories", "u1"))
            report = import_records(other_store, "u1.jsonl")
            assert report.imported == n
    """
    count = 0
    with _open(path_or_file, "w") as f:
        for ns, _ in sorted(namespaces(store, tuple(namespace_prefix or ())), key=lambda p: p[0]):
            for record in store.iter_records(ns):  # page by page: constant memory
                f.write(record_line(record) + "\n")
                count += 1
    return count


def _reason(error: ValidationError) -> str:
    parts = []
    for e in error.errors(include_url=False):
        loc = ".".join(str(x) for x in e["loc"]) or "record"
        parts.append(f"{loc}: {e['msg']}")
    return "; ".join(parts)


def import_records(
    store: ChromaMemoryStore,
    path_or_file: PathOrFile,
    *,
    namespace: Sequence[str] | None = None,
    batch_size: int = 256,
) -> ImportReport:
    """Validate and upsert records from JSON lines (as written by :func:`export_records`).

    Each line is checked on its own; a bad one is reported with its line number and
    reason and the good ones are still imported. Records keep their ids, so importing
    the same file twice updates rather than duplicates.

    Args:
        store: The target store (records are embedded with its embedder).
        path_or_file: A path or an open text file.
        namespace: Put every record into this namespace instead of the one in the file
            (e.g. restoring a user's export under a new user id).
        batch_size: Records per write.

    Example:
        .. code-block:: python

            report = import_records(store, "backup.jsonl")
            for issue in report.errors:
                print(f"line {issue.line}: {issue.reason}")
    """
    target = C.validate_namespace(tuple(namespace)) if namespace is not None else None
    report = ImportReport()
    seen: set[tuple[str, ...]] = set()
    batch: list[MemoryRecord] = []

    def flush() -> None:
        if batch:
            store.put_records(batch)
            report.imported += len(batch)
            batch.clear()

    with _open(path_or_file, "r") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                report.errors.append(ImportIssue(line=number, reason=f"not JSON: {e.msg} at column {e.colno}"))
                continue
            if not isinstance(data, dict):
                report.errors.append(ImportIssue(line=number, reason="expected a JSON object per line"))
                continue
            if target is not None:
                data["namespace"] = list(target)
            try:
                record = MemoryRecord.model_validate(data)
                C.validate_namespace(record.namespace)
            except ValidationError as e:
                report.errors.append(ImportIssue(line=number, reason=_reason(e)))
                continue
            except InvalidNamespaceError as e:
                report.errors.append(ImportIssue(line=number, reason=str(e)))
                continue
            batch.append(record)
            seen.add(record.namespace)
            if len(batch) >= batch_size:
                flush()
    flush()
    report.namespaces = sorted(seen)
    return report
