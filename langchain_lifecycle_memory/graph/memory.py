"""``LifecycleMemory``: the whole lifecycle behind one object, wired as the LangGraph nodes wire it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable

from langchain_lifecycle_memory.graph.store import ChromaMemoryStore
from langchain_lifecycle_memory.lifecycle import operations as lifecycle
from langchain_lifecycle_memory.read.cues import with_cues
from langchain_lifecycle_memory.read.injection import MemoryBlock, format_memories
from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever
from langchain_lifecycle_memory.schema import (
    Fact,
    MemoryRecord,
    MemorySource,
    MemoryStatus,
    ensure_aware,
    local_time,
    said_at,
)
from langchain_lifecycle_memory.store.tenants import DEFAULT_NAMESPACE, namespace_for
from langchain_lifecycle_memory.write.update import UpdateConfig, UpdateResult, reconcile
from langchain_lifecycle_memory.write.write_path import (
    as_messages,
    check_messages,
    current_slots,
    extract_safely,
    keep_failed_turn,
    prepare_episodes,
    resolve_extractor,
    wants_slots,
)

__all__ = ["LifecycleMemory"]


class LifecycleMemory:
    """Long-term memory with a lifecycle: add conversations, search, inject, forget.

    ``store`` defaults to embedded Chroma at ``path``; ``extractor`` is ``"rule"``, a chat model or a
    Runnable ``{"messages", "now"} -> list[Fact]``; ``cue_model`` writes ``num_cues`` cues per new fact.
    """

    def __init__(
        self,
        store: ChromaMemoryStore | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        extractor: Runnable | BaseChatModel | str | None = "rule",
        update: UpdateConfig | None = None,
        retriever: LifecycleRetriever | None = None,
        namespace_template: Sequence[str] = DEFAULT_NAMESPACE,
        max_tokens: int = 600,
        retrieval_log: Any | None = None,
        cue_model: BaseChatModel | None = None,
        num_cues: int = 4,
    ) -> None:
        if isinstance(store, (str, os.PathLike)):
            msg = f"LifecycleMemory's first argument is a store; for a folder write LifecycleMemory(path={store!r})."
            raise TypeError(msg)
        self.store = store if store is not None else ChromaMemoryStore(path)
        # The rule extractor is built on first write (compiling its patterns is wasted on a
        # read-only process such as `lifecycle-memory search`); anything else is checked now.
        self._extractor: Runnable | None = None
        self._extractor_spec = extractor
        if not (extractor is None or extractor == "rule"):
            self._extractor = resolve_extractor(extractor)
        self.extractor_name = "llm" if isinstance(extractor, BaseChatModel) else str(extractor or "rule")
        if isinstance(extractor, Runnable) and not isinstance(extractor, BaseChatModel):
            self.extractor_name = extractor.get_name()
        self.update_config = update or UpdateConfig()
        self.namespace_template = tuple(namespace_template)
        self.retriever = retriever or LifecycleRetriever(store=self.store, namespace_template=self.namespace_template)
        self.max_tokens = max_tokens
        self.retrieval_log = retrieval_log
        self.cue_model = cue_model
        self.num_cues = num_cues

    @property
    def extractor(self) -> Runnable:
        """The extraction runnable (``{"messages", "now"} -> list[Fact]``)."""
        if self._extractor is None:
            self._extractor = resolve_extractor(self._extractor_spec)
        return self._extractor

    @extractor.setter
    def extractor(self, value: Runnable) -> None:
        self._extractor = value

    # ------------------------------------------------------------------ write side
    def namespace(self, user_id: Any) -> tuple[str, ...]:
        """The namespace of ``user_id``."""
        return namespace_for(user_id, self.namespace_template)

    def add_messages(
        self, messages: Any, user_id: Any, *, at: datetime | str | None = None, thread_id: str | None = None
    ) -> UpdateResult:
        """Extract facts from a turn and reconcile them; on failure the messages are kept as ``episode`` records."""
        msgs = as_messages(messages)
        check_messages(msgs)
        ns = self.namespace(user_id)
        when = said_at(at)
        if not msgs:
            return UpdateResult()
        source = MemorySource(
            extractor=self.extractor_name, thread_id=thread_id, message_ids=[m.id for m in msgs if m.id]
        )
        slots = current_slots(self.store, ns) if wants_slots(self.extractor) else None
        local = local_time(at) or when  # "yesterday" and "today" as the user's calendar reads them
        facts, error = extract_safely(self.extractor, msgs, local, slots=slots)
        if error is not None:
            return keep_failed_turn(self.store, msgs, ns, when, source, self.update_config, error)
        return self.add_facts(facts, user_id, at=when, source=source)

    def add_facts(
        self,
        facts: Sequence[Fact | dict[str, Any]],
        user_id: Any,
        *,
        at: datetime | str | None = None,
        source: MemorySource | None = None,
    ) -> UpdateResult:
        """Reconcile already-extracted facts (e.g. from your own extractor)."""
        ns = self.namespace(user_id)
        parsed = [f if isinstance(f, Fact) else Fact.model_validate(f) for f in facts]
        # Plan and apply under the namespace's writer lock: threads never plan from the same state.
        cues = with_cues(self.cue_model, self.num_cues)  # written with the records they describe
        return reconcile(self.store, ns, parsed, at=at, source=source, config=self.update_config, before_apply=cues)

    def add_episode(
        self,
        text: str,
        user_id: Any,
        *,
        at: datetime | str | None = None,
        source_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        entity: str | None = None,
    ) -> MemoryRecord:
        """Store a raw turn as an ``episode`` record (no extraction); ``entity``: its speaker, if not the user."""
        when = said_at(at)
        source = MemorySource(extractor="episode", message_ids=[source_id] if source_id else [])
        record = MemoryRecord(
            namespace=self.namespace(user_id),
            content=text,
            entity=entity,
            kind="episode",
            confidence=1.0,
            source=source,
            created_at=when,
            updated_at=when,
            valid_from=when,
            metadata=metadata or {},
        )
        stored = self.store.put_record(prepare_episodes([record], self.update_config)[0])
        embed = getattr(self.retriever, "embed_episodes", None)
        if embed is not None:  # the episode encoder's vector now, not at the next search
            embed([stored.content])
        return stored

    # ------------------------------------------------------------------ use side
    def search(self, query: str, user_id: Any, **options: Any) -> list[Document]:
        """Hybrid retrieval for ``user_id`` (options: ``k``, ``now``, ``as_of``, ``min_score``...)."""
        return self.retriever.invoke(query, namespace=self.namespace(user_id), **options)

    def inject(self, query: str, user_id: Any, *, max_tokens: int | None = None, **options: Any) -> MemoryBlock:
        """The memory block to put in front of the model for ``query``."""
        docs, explanation = self.retriever.recall(query, namespace=self.namespace(user_id), **options)
        block = format_memories(
            docs,
            max_tokens=max_tokens or self.max_tokens,
            query=query,
            now=options.get("now"),
            expired=explanation.expired_matches,
        )
        if self.retrieval_log is not None:
            self.retrieval_log.record(
                namespace=self.namespace(user_id),
                query=query,
                returned=[(d.metadata.get("id"), d.metadata.get("score")) for d in docs],
                dropped=[(i, "cut_by_budget") for i in block.dropped],
                tokens=block.tokens,
            )
        return block

    def explain(self, query: str, user_id: Any, **options: Any) -> Any:
        """Every candidate with per-channel scores and why it was kept or dropped."""
        return self.retriever.explain(query, namespace=self.namespace(user_id), **options)

    # ------------------------------------------------------------------ inspect
    def history(
        self, user_id: Any, entity: str, attribute: str, *, now: datetime | str | None = None
    ) -> list[MemoryRecord]:
        """Every version of a slot, oldest first (as of ``now``: a temporary value past its deadline reads archived)."""
        return self.store.history(self.namespace(user_id), entity, attribute, now=now)

    def list(self, user_id: Any, *, statuses: Any = None) -> list[MemoryRecord]:
        """A user's records (all statuses by default), oldest first."""
        return self.store.list_records(self.namespace(user_id), statuses=statuses)

    def active(self, user_id: Any) -> list[MemoryRecord]:
        """A user's active records."""
        return self.list(user_id, statuses=MemoryStatus.ACTIVE)

    # ------------------------------------------------------------------ forget & manage
    def forget(self, user_id: Any, **target: Any) -> list[MemoryRecord]:
        """Archive memories by ``record_id``, slot (``entity``/``attribute``) or ``query``.

        A ``query`` ("忘掉我住哪", "forget where I work") that names no value, slot or close statement forgets what
        :meth:`search` finds first for the same words by their words or meaning; a miss archives nothing.
        """
        return lifecycle.forget(self.store, self.namespace(user_id), retriever=self.retriever, **target)

    def restore(self, user_id: Any, record_id: str) -> MemoryRecord:
        """Return a mistakenly archived record (a forget, a wrong supersede) to active; logged in its history."""
        return lifecycle.restore(self.store, self.namespace(user_id), record_id)

    def purge(self, user_id: Any) -> Any:
        """Hard-delete everything of ``user_id``: records, history and retrieval-log lines."""
        return lifecycle.purge(self.store, self.namespace(user_id), log=self.retrieval_log)

    def sweep(self, *, now: datetime | str | None = None) -> Any:
        """Archive expired records and delete old archived ones (retention policy)."""
        return lifecycle.sweep(self.store, now=ensure_aware(now), policy=self.update_config.policy)

    # ------------------------------------------------------------------ async (Chroma's client is synchronous)
    async def aadd_messages(self, messages: Any, user_id: Any, **options: Any) -> UpdateResult:
        """Async :meth:`add_messages`: the same call on a worker thread (the event loop is never blocked)."""
        return await asyncio.to_thread(self.add_messages, messages, user_id, **options)

    async def aadd_facts(self, facts: Sequence[Fact | dict[str, Any]], user_id: Any, **options: Any) -> UpdateResult:
        """Async :meth:`add_facts`."""
        return await asyncio.to_thread(self.add_facts, facts, user_id, **options)

    async def asearch(self, query: str, user_id: Any, **options: Any) -> list[Document]:
        """Async :meth:`search`."""
        return await self.retriever.ainvoke(query, namespace=self.namespace(user_id), **options)

    async def ainject(self, query: str, user_id: Any, **options: Any) -> MemoryBlock:
        """Async :meth:`inject`."""
        return await asyncio.to_thread(self.inject, query, user_id, **options)

    async def aforget(self, user_id: Any, **target: Any) -> list[MemoryRecord]:
        """Async :meth:`forget`."""
        return await asyncio.to_thread(self.forget, user_id, **target)
