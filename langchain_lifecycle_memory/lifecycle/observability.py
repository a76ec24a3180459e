"""Opt-in retrieval log (rotating JSON lines, one retrieval a line) and per-namespace retrieval statistics.

The log holds user queries: keep it under the store's access rules, or give it a ``Redactor``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from langchain_lifecycle_memory.schema import ensure_aware, utcnow
from langchain_lifecycle_memory.write.redaction import Redactor

if TYPE_CHECKING:
    from langchain_lifecycle_memory.read.fusion import RetrievalExplanation

__all__ = [
    "LoggedDrop",
    "LoggedHit",
    "NamespaceStats",
    "RetrievalEvent",
    "RetrievalLog",
    "RetrievalStats",
    "ScoreSummary",
    "retrieval_stats",
]

logger = logging.getLogger(__name__)
_Entry = TypeVar("_Entry", "LoggedHit", "LoggedDrop")


class LoggedHit(BaseModel):
    """A returned memory."""

    model_config = ConfigDict(frozen=True)

    id: str
    score: float | None = None


class LoggedDrop(BaseModel):
    """A candidate that was not returned, and why (``below_threshold``, ``archived``, ...)."""

    model_config = ConfigDict(frozen=True)

    id: str
    reason: str
    score: float | None = None


class RetrievalEvent(BaseModel):
    """One line of the retrieval log."""

    time: datetime
    namespace: tuple[str, ...]
    query: str
    returned: list[LoggedHit] = Field(default_factory=list)
    dropped: list[LoggedDrop] = Field(default_factory=list)
    tokens: int = 0
    """Tokens of the injected memory block (0 when nothing was injected)."""
    extra: dict[str, Any] = Field(default_factory=dict)


def _entries(model: type[_Entry], items: Iterable[Any]) -> list[_Entry]:
    """Log entries from models, ``{"id", ...}`` dicts, ``(id_or_record, [reason,] score)`` or objects with ``id``."""
    fields = [name for name in model.model_fields if name != "id"]  # (score) or (reason, score)
    out = []
    for item in items:
        if isinstance(item, model):
            out.append(item)
            continue
        if isinstance(item, Mapping):
            key, rest = str(item["id"]), [item[f] if f == "reason" else item.get(f) for f in fields]
        elif isinstance(item, (tuple, list)) or model is LoggedDrop:
            key, *rest = item
        else:
            key, rest = item, [getattr(item, "score", None)]
        data = {f: str(v) if f == "reason" else v for f, v in zip(fields, rest)}
        out.append(model(id=str(getattr(key, "id", key)), **data))
    return out


class RetrievalLog:
    """A JSON-lines log of retrievals, rotated at ``max_bytes`` into ``backups`` files ``.1`` ... ``.N``.

    Thread-safe within one process; give each process its own file. ``redactor`` masks PII in queries.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_bytes: int = 5_000_000,
        backups: int = 3,
        redactor: Redactor | None = None,
    ) -> None:
        if max_bytes <= 0 or backups < 0:
            msg = f"max_bytes must be > 0 and backups >= 0, got {max_bytes} and {backups}."
            raise ValueError(msg)
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.backups = backups
        self.redactor = redactor
        self._lock = threading.Lock()

    def files(self) -> list[Path]:
        """Existing log files, oldest first (``.N`` ... ``.1``, then the live file)."""
        # Discovered rather than derived from `backups`: a log opened with other settings
        # (a CLI reading stats, a purge) must still see every rotated file.
        rotated: list[tuple[int, Path]] = []
        if self.path.parent.is_dir():
            for p in self.path.parent.glob(self.path.name + ".*"):
                suffix = p.name[len(self.path.name) + 1 :]
                if suffix.isdigit() and p.is_file():
                    rotated.append((int(suffix), p))
        ordered = [p for _, p in sorted(rotated, reverse=True)]
        return [*ordered, self.path] if self.path.is_file() else ordered

    def _rotate(self) -> None:
        if self.backups == 0:
            self.path.write_bytes(b"")
            return
        for i in range(self.backups, 0, -1):
            src = self.path.with_name(f"{self.path.name}.{i - 1}") if i > 1 else self.path
            if src.is_file():
                os.replace(src, self.path.with_name(f"{self.path.name}.{i}"))

    def write(self, event: RetrievalEvent) -> RetrievalEvent:
        """Append one event (rotating first if it would not fit)."""
        line = (event.model_dump_json() + "\n").encode("utf-8")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            size = self.path.stat().st_size if self.path.is_file() else 0
            if size and size + len(line) > self.max_bytes:
                self._rotate()
            with open(self.path, "ab") as f:
                f.write(line)
        return event

    def record(
        self,
        namespace: Sequence[str],
        query: str,
        *,
        returned: Iterable[Any] = (),
        dropped: Iterable[Any] = (),
        tokens: int = 0,
        at: datetime | str | None = None,
        **extra: Any,
    ) -> RetrievalEvent:
        """Log one retrieval: ``returned`` as ``(id_or_record, score)``, ``dropped`` as ``(id, reason[, score])``.

        Dicts or objects with ``id``/``score`` work too; ``extra`` (JSON-safe) is kept under ``extra``.
        """
        text = self.redactor.redact(query).text if self.redactor is not None else query
        event = RetrievalEvent(
            time=ensure_aware(at) or utcnow(),
            namespace=tuple(namespace),
            query=text,
            returned=_entries(LoggedHit, returned),
            dropped=_entries(LoggedDrop, dropped),
            tokens=int(tokens),
            extra=dict(extra),
        )
        try:
            return self.write(event)
        except OSError as e:
            # A full disk or a read-only folder must not break the retrieval being logged.
            logger.warning("Retrieval log %s not written: %s", self.path, e)
            return event

    def record_explanation(self, explanation: RetrievalExplanation, *, tokens: int = 0, **extra: Any) -> RetrievalEvent:
        """Log a ``LifecycleRetriever.explain`` result: kept -> returned, the rest -> dropped with the verdict."""
        kept = [(c.record.id, round(c.fused, 6)) for c in explanation.kept()]
        dropped = [(c.record.id, c.decision, round(c.fused, 6)) for c in explanation.candidates if c.decision != "kept"]
        return self.record(
            explanation.namespace,
            explanation.query,
            returned=kept,
            dropped=dropped,
            tokens=tokens,
            at=explanation.now,
            **extra,
        )

    def events(self) -> Iterator[RetrievalEvent]:
        """Every readable event, oldest first (unreadable lines are skipped)."""
        for path in self.files():
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    try:
                        yield RetrievalEvent.model_validate_json(line)
                    except ValidationError:
                        continue

    def purge(self, namespace_prefix: Sequence[str]) -> int:
        """Remove every line about namespaces under ``namespace_prefix`` (torn ones naming it too); returns how many."""
        prefix = tuple(namespace_prefix)
        if not prefix:
            msg = "purge needs a non-empty namespace prefix such as ('memories', 'u1')."
            raise ValueError(msg)
        marker = json.dumps(list(prefix), ensure_ascii=False)[:-1]
        removed = 0
        with self._lock:
            for path in self.files():
                kept: list[str] = []
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.readlines()
                for line in lines:
                    try:
                        ns = json.loads(line).get("namespace")
                        # label for label and literally: a user's label is never a pattern
                        drop = isinstance(ns, list) and tuple(str(x) for x in ns[: len(prefix)]) == prefix
                    except (json.JSONDecodeError, AttributeError):
                        drop = marker in line
                    if drop:
                        removed += 1
                    else:
                        kept.append(line)
                if len(kept) != len(lines):
                    tmp = path.with_name(path.name + ".tmp")
                    tmp.write_text("".join(kept), encoding="utf-8")
                    os.replace(tmp, path)
        return removed


# ---------------------------------------------------------------------- stats
class ScoreSummary(BaseModel):
    """Distribution of the scores of returned memories."""

    count: int = 0
    min: float | None = None
    p50: float | None = None
    p90: float | None = None
    max: float | None = None


class NamespaceStats(BaseModel):
    """Retrieval statistics of one namespace (or of all, in :attr:`RetrievalStats.total`)."""

    retrievals: int = 0
    hits: int = 0
    """Retrievals that returned at least one memory."""
    hit_rate: float = 0.0
    returned: int = 0
    dropped: dict[str, int] = Field(default_factory=dict)
    """Dropped candidates per reason."""
    tokens_mean: float = 0.0
    scores: ScoreSummary = Field(default_factory=ScoreSummary)


class RetrievalStats(BaseModel):
    """Per-namespace statistics; keys are namespaces joined with ``/`` (``memories/u1``)."""

    namespaces: dict[str, NamespaceStats] = Field(default_factory=dict)
    total: NamespaceStats = Field(default_factory=NamespaceStats)


def _quantile(sorted_values: list[float], q: float) -> float:
    pos = (len(sorted_values) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _summarise(events: list[RetrievalEvent]) -> NamespaceStats:
    scores = sorted(h.score for e in events for h in e.returned if h.score is not None)
    dropped: dict[str, int] = {}
    for e in events:
        for d in e.dropped:
            dropped[d.reason] = dropped.get(d.reason, 0) + 1
    hits = sum(1 for e in events if e.returned)
    summary = ScoreSummary(count=len(scores))
    if scores:
        summary = ScoreSummary(
            count=len(scores), min=scores[0], p50=_quantile(scores, 0.5), p90=_quantile(scores, 0.9), max=scores[-1]
        )
    return NamespaceStats(
        retrievals=len(events),
        hits=hits,
        hit_rate=hits / len(events) if events else 0.0,
        returned=sum(len(e.returned) for e in events),
        dropped=dict(sorted(dropped.items())),
        tokens_mean=sum(e.tokens for e in events) / len(events) if events else 0.0,
        scores=summary,
    )


def retrieval_stats(
    source: RetrievalLog | str | os.PathLike[str], *, namespace_prefix: Sequence[str] | None = None
) -> RetrievalStats:
    """Counts, hit rate and score distribution per namespace, from a log (all rotated files)."""
    log = source if isinstance(source, RetrievalLog) else RetrievalLog(source)
    prefix = tuple(namespace_prefix or ())
    groups: dict[str, list[RetrievalEvent]] = {}
    everything: list[RetrievalEvent] = []
    for event in log.events():
        if event.namespace[: len(prefix)] != prefix:
            continue
        groups.setdefault("/".join(event.namespace), []).append(event)
        everything.append(event)
    return RetrievalStats(
        namespaces={ns: _summarise(evs) for ns, evs in sorted(groups.items())},
        total=_summarise(everything),
    )
