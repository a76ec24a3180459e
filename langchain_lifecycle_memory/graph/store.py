"""``ChromaMemoryStore``: the record store, with the lifecycle for items other tools put.

Items of the shape ``{"content": ...}`` (LangMem's tools, any ``BaseStore.put``) are extracted and reconciled
like the package's own writes, so "User prefers VS Code" archives "User prefers Vim"; the item keeps its key.
"""

from __future__ import annotations

import re
import uuid
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langgraph.store.base import Op, PutOp, Result

from langchain_lifecycle_memory.read import current_snapshot
from langchain_lifecycle_memory.schema import KINDS, Fact, MemoryRecord, MemorySource, MemoryStatus, utcnow
from langchain_lifecycle_memory.store import chroma as C
from langchain_lifecycle_memory.store.chroma_store import ChromaRecordStore
from langchain_lifecycle_memory.store.repair import writer_lock
from langchain_lifecycle_memory.write.update import UpdateConfig, UpdatePlan, apply_plan, plan_updates
from langchain_lifecycle_memory.write.write_path import as_messages, extract_safely, resolve_extractor

__all__ = ["ChromaMemoryStore", "item_text"]


BULK_WRITE = 64
"""A ``put_records`` call writing this many records into a namespace refreshes its search snapshot file."""
_EN_SUBJECT = re.compile(
    r"^(\s*)(?:the\s+)?user(?P<own>'s)?\s+(?P<adverbs>(?:(?:no\s+longer|not\s+yet|[A-Za-z]+ly|now|also|still|just|"
    r"never|often|already|even|only|always|sometimes|rarely|again|then|too|soon)\s+)*)(?P<verb>[A-Za-z]+)",
    re.IGNORECASE,
)
"""The subject "the user", the adverbs before its verb ("User no longer eats meat"), and the verb."""
_IRREGULAR = {"is": "am", "has": "have", "does": "do", "was": "was", "goes": "go"}
_MINE = {"their": "my", "theirs": "mine", "themselves": "myself", "themself": "myself"}
_THEIR = re.compile(r"\b(?:their|theirs|themselves|themself)\b", re.IGNORECASE)
"""The user, the subject, named again ("User uses Vim as their editor"); not in "User's kids love their school"."""


def first_person(text: str) -> str:
    """A memory written about "the user" as the user would say it ("User prefers Vim" -> "I prefer Vim").

    Other tools store memories in the third person; the rule extractor reads what a user says.
    """
    out = []
    for sentence in re.split(r"(?<=[.!?。！？])\s*", text):
        match = _EN_SUBJECT.match(sentence)
        if match and match.group("own"):
            sentence = f"{match.group(1)}My {match.group('adverbs')}{match.group('verb')}{sentence[match.end() :]}"
        elif match:
            lower = match.group("verb").lower()
            base = _IRREGULAR.get(lower) or _base_form(lower)
            rest = _THEIR.sub(lambda m: _MINE[m.group().lower()], sentence[match.end() :])  # the user's own: "mine"
            sentence = f"{match.group(1)}I {match.group('adverbs')}{base}{rest}"
        out.append(re.sub(r"^(\s*)用户", r"\1我", sentence))
    return " ".join(p for p in out if p)


def _base_form(verb: str) -> str:
    """A third-person verb's base form: prefers -> prefer, watches -> watch, studies -> study."""
    if verb.endswith("ies") and len(verb) > 4:
        return verb[:-3] + "y"
    if verb.endswith(("shes", "ches", "sses", "xes", "zes", "oes")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") and not verb.endswith("ss") else verb


def item_text(value: Any) -> str | None:
    """The memory text of an item in LangMem's shape (``{"content": str}``, ``kind`` optional), else ``None``."""
    if not isinstance(value, dict) or not value.keys() <= {"content", "kind"}:
        return None
    content = value.get("content")
    if isinstance(content, dict) and content.keys() == {"content"}:
        content = content["content"]
    return content if isinstance(content, str) and content.strip() else None


class ChromaMemoryStore(ChromaRecordStore):
    """A LangGraph ``BaseStore`` over Chroma whose memories have a lifecycle, whoever writes them.

    Items in LangMem's shape go through ``extractor`` and ``update`` (``item_lifecycle=False``: stored plain);
    ``kwargs`` are ``ChromaRecordStore``'s (``persist_directory``, ``client``, ``host``/``port``, ``embeddings``...).
    """

    def __init__(
        self,
        persist_directory: Any = None,
        *,
        extractor: Runnable | BaseChatModel | str | None = "rule",
        item_lifecycle: bool = True,
        update: UpdateConfig | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(persist_directory, **kwargs)
        self.item_lifecycle = item_lifecycle
        self.update_config = update or UpdateConfig()
        self._extractor_spec = extractor
        self._extractor: Runnable | None = None

    @property
    def extractor(self) -> Runnable:
        """The extraction runnable items go through (built on first use)."""
        if self._extractor is None:
            self._extractor = resolve_extractor(self._extractor_spec)
        return self._extractor

    def put_records(self, records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
        """``ChromaRecordStore.put_records``; a bulk write also brings its namespaces' search snapshot files up to date.

        A namespace that gets ``BULK_WRITE`` records or more in one call (an import) has its file refreshed, so a fresh
        process's first search loads it instead of reading every row (namespaces under 1,000 records get no file).
        """
        written = super().put_records(records)
        for namespace, n in Counter(r.namespace for r in written).items():
            if n >= BULK_WRITE:
                current_snapshot(self, namespace)
        return written

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """``BaseStore.batch``; puts of items in LangMem's shape go through extract → update, in the ops' order."""
        ops = list(ops)
        if not self.item_lifecycle:
            return super().batch(ops)
        for op in ops:
            self._validate_op(op)
        results: list[Result] = [None] * len(ops)
        plain: list[int] = []  # a run of other ops, written and read together as ``batch`` does

        def flush() -> None:
            deleted: dict[tuple[str, ...], set[str]] = {}
            for op in (ops[i] for i in plain):
                if isinstance(op, PutOp) and op.value is None:
                    deleted.setdefault(tuple(op.namespace), set()).add(op.key)
            current = {ns: self._holding(ns, keys) for ns, keys in deleted.items()}
            for i, result in zip(plain, super(ChromaMemoryStore, self).batch([ops[i] for i in plain])):
                results[i] = result
            for ns, keys in deleted.items():
                self._surface_restated(ns, keys, current[ns])
            plain.clear()

        for i, op in enumerate(ops):
            if _is_memory_item(op):
                flush()
                self._ingest(op)  # type: ignore[arg-type]
            else:
                plain.append(i)
        flush()
        return results

    def _ingest(self, op: PutOp) -> None:
        """One item through extract → update: it becomes one record, under the item's key, masked as facts are."""
        ns, at = tuple(op.namespace), utcnow()
        value = self._masked(dict(op.value or {}))
        text = str(item_text(value))
        facts, _ = extract_safely(self.extractor, as_messages([("user", first_person(text))]), at)
        kind = str(value.get("kind") or "").strip().lower()
        primary = _primary(facts, text, kind if kind in KINDS else None)
        with writer_lock(self, ns):
            plan = plan_updates(
                self, ns, [primary], at=at, source=MemorySource(extractor="item"), config=self.update_config
            )
            apply_plan(self, _keyed(plan, self.get_record(ns, op.key), op.key, value, at))

    def _masked(self, value: dict[str, Any]) -> dict[str, Any]:
        """The item with its text masked by the update config's redactor (what is stored is what is read back)."""
        redactor = self.update_config.redactor
        text = item_text(value)
        if redactor is None or text is None:
            return value
        masked = redactor.redact(text).text
        inner = value.get("content")
        content = {**inner, "content": masked} if isinstance(inner, dict) else masked
        return {**value, "content": content}

    def _holding(self, ns: tuple[str, ...], keys: set[str]) -> set[str]:
        """Those of ``keys`` whose record is a current value (live, in a slot)."""
        records = (self.get_record(ns, key) for key in keys)
        return {r.id for r in records if r is not None and r.slot is not None and r.status is not MemoryStatus.ARCHIVED}

    def _surface_restated(self, ns: tuple[str, ...], keys: set[str], current: set[str] = frozenset()) -> None:
        """After ``keys`` are deleted, the newest item kept as each one's restatement takes its place.

        A deleted current value that restated nothing gives its place back to the value it replaced ("User prefers
        VS Code" deleted: "User prefers Vim" holds again), as if it had never been written.
        """
        kept: dict[str, list[MemoryRecord]] = {}
        replaced: list[MemoryRecord] = []
        for r in self.list_records(ns, statuses=MemoryStatus.ARCHIVED):  # one read for the whole batch
            if r.metadata.get(RESTATES) in keys and isinstance(r.metadata.get("item"), dict):
                kept.setdefault(str(r.metadata[RESTATES]), []).append(r)
            elif r.superseded_by in current:
                replaced.append(r)
        for restated in kept.values():
            self._surface(restated)
        back = {"status": MemoryStatus.ACTIVE, "valid_to": None, "superseded_by": None, "updated_at": utcnow()}
        if revived := [r.model_copy(update=back) for r in replaced if r.superseded_by not in kept]:
            self.put_records(revived)

    def _surface(self, kept: list[MemoryRecord]) -> None:
        newest, *others = sorted(kept, key=lambda r: r.updated_at, reverse=True)
        metadata = {k: v for k, v in newest.metadata.items() if k != RESTATES}
        back = newest.model_copy(
            update={"status": MemoryStatus.ACTIVE, "valid_to": None, "superseded_by": None, "metadata": metadata}
        )
        moved = [
            r.model_copy(update={"superseded_by": back.id, "metadata": {**r.metadata, RESTATES: back.id}})
            for r in others
        ]
        self.put_records([back, *moved])


RESTATES = "restates"
"""Metadata key of an item that said again what another item holds: that item's key."""


def _is_memory_item(op: Op) -> bool:
    """A put of an item in LangMem's shape, with LangGraph's default TTL and index (they are the caller's otherwise)."""
    return isinstance(op, PutOp) and op.ttl is None and op.index is None and item_text(op.value) is not None


def _primary(facts: list[Fact], text: str, kind: str | None) -> Fact:
    """The one fact an item's record holds: its first fact with a slot, else its first fact, else its text.

    An item that says several things is one record (its key's): the statement is then the item's own text.
    """
    slotted = [f for f in facts if f.slot is not None]
    fact = (slotted or facts or [Fact(content=text, kind=kind or "fact", confidence=0.8)])[0]
    if len(facts) > 1:
        fact = fact.model_copy(update={"content": text})
    return fact.model_copy(update={"kind": kind}) if kind else fact


def _keyed(plan: UpdatePlan, old: MemoryRecord | None, key: str, value: dict[str, Any], at: Any) -> UpdatePlan:
    """The plan with the primary fact's record renamed to the item's key and carrying the item."""
    item = {"item": value}
    if plan.added:
        rename = {plan.added[0].id: key}
        if old is not None:  # the item's earlier version stays in history under an id of its own
            rename[key] = str(uuid.uuid4())
            if not any(r.id == key for r in plan.archived):
                plan.refreshed = [r for r in plan.refreshed if r.id != key]
                kept = old.transition(MemoryStatus.ARCHIVED, at=at, superseded_by=plan.added[0].id)
                plan.archived.append(old if old.status is MemoryStatus.ARCHIVED else kept)
        for bucket in (plan.added, plan.refreshed, plan.archived, plan.repaired):
            bucket[:] = [
                r.model_copy(
                    update={k: rename.get(getattr(r, k), getattr(r, k)) for k in ("id", "supersedes", "superseded_by")}
                )
                for r in bucket
            ]
        first = plan.added[0]
        plan.added[0] = first.model_copy(
            update={"metadata": {**first.metadata, **item}, "created_at": old.created_at if old else first.created_at}
        )
        return plan
    if any(r.id == key for r in plan.refreshed):
        plan.refreshed = [
            r.model_copy(update={"metadata": {**r.metadata, **item}}) if r.id == key else r for r in plan.refreshed
        ]
        return plan
    content = item_text(value) or C.dumps_value(value)
    created = old.created_at if old else at
    if not plan.refreshed:  # it only ended something ("User no longer eats meat"): what holds now, in its words
        record = MemoryRecord(id=key, namespace=plan.namespace, content=content, metadata=item, valid_from=at)
        plan.added.append(record.model_copy(update={"created_at": created, "updated_at": at}))
        return plan
    # The item restates a memory already held (refreshed above): it is kept as history of it.
    same = plan.refreshed[0].id
    plan.added.append(
        MemoryRecord(
            id=key, namespace=plan.namespace, content=content, status=MemoryStatus.ARCHIVED, superseded_by=same,
            metadata={**item, RESTATES: same}, created_at=created, updated_at=at, valid_from=at, valid_to=at,
        )
    )  # fmt: skip
    return plan
