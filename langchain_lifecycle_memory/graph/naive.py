"""The naive baseline: the seed article's memory engine on a LangGraph store.

Append-only (nothing archived or expired), dense-only with a fixed ``min_score`` (the article's
``top_k=5, min_score=0.3``), no forget; purge deletes the namespace. Blocks use ``format_memories``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from langchain_core.embeddings import Embeddings
from langchain_core.messages import convert_to_messages
from langgraph.store.base import BaseStore, SearchItem

from langchain_lifecycle_memory.graph.store import ChromaMemoryStore
from langchain_lifecycle_memory.read.injection import MemoryBlock, format_memories
from langchain_lifecycle_memory.schema import Fact

__all__ = ["NaiveEngine", "NaiveMemory", "ScenarioEngine", "fresh_store"]

_CLIENT: Any = None


class ScenarioEngine(Protocol):
    """What the scenario runner drives: one engine holds one scenario's store."""

    name: str

    def turn(
        self, user_id: str, at: datetime, user: str | None, assistant: str | None, facts: list[dict[str, Any]]
    ) -> None:
        """Learn from one exchange (gold ``facts`` or extraction from the text)."""

    def probe(self, query: str, user_id: str, *, now: datetime, as_of: datetime | None = None) -> MemoryBlock:
        """The block injected for ``query``."""

    def sweep(self, *, now: datetime) -> None:
        """Maintenance at ``now``."""

    def forget(self, user_id: str, *, now: datetime, **target: Any) -> None:
        """Forget by ``query`` or ``entity``/``attribute``."""

    def purge(self, user_id: str) -> None:
        """Hard-delete everything of ``user_id``."""

    def close(self) -> None:
        """Drop the scenario's collections."""


def _ephemeral_client() -> Any:
    global _CLIENT
    if _CLIENT is None:
        import chromadb

        _CLIENT = chromadb.EphemeralClient()
    return _CLIENT


def fresh_store(embeddings: Embeddings | None = None, **kwargs: Any) -> ChromaMemoryStore:
    """An empty ``ChromaMemoryStore`` in process memory, under a collection prefix of its own."""
    prefix = f"ev{uuid.uuid4().hex[:12]}"
    return ChromaMemoryStore(client=_ephemeral_client(), embeddings=embeddings, collection_prefix=prefix, **kwargs)


def drop_store(store: ChromaMemoryStore) -> None:
    """Delete every collection of a store made by :func:`fresh_store`."""
    for col in store.client.list_collections():
        name = col if isinstance(col, str) else col.name
        if name.startswith(store.prefix + "."):
            store.client.delete_collection(name)


class NaiveMemory:
    """Append-only, dense-only memory over a ``BaseStore`` indexed on ``content``: top ``k`` at cosine ``min_score``."""

    def __init__(self, store: BaseStore, *, k: int = 5, min_score: float = 0.3, max_tokens: int = 600) -> None:
        self.store = store
        self.k = k
        self.min_score = min_score
        self.max_tokens = max_tokens

    @staticmethod
    def namespace(user_id: str) -> tuple[str, ...]:
        """Where a user's statements live."""
        return ("naive", str(user_id).replace(".", "_"))

    def add(self, contents: Sequence[str], user_id: str, *, at: datetime | str, confidence: float = 0.8) -> None:
        """Append statements (no reconciliation, no expiry)."""
        stamp = at.isoformat() if isinstance(at, datetime) else str(at)
        for content in contents:
            value = {"content": content, "valid_from": stamp, "confidence": confidence, "source": "naive"}
            self.store.put(self.namespace(user_id), uuid.uuid4().hex, value)

    def search(self, query: str, user_id: str) -> list[SearchItem]:
        """Top ``k`` by cosine, those at or above ``min_score``."""
        hits = self.store.search(self.namespace(user_id), query=query, limit=self.k)
        return [h for h in hits if h.score is not None and h.score >= self.min_score]

    def inject(self, query: str, user_id: str, *, now: datetime | None = None) -> MemoryBlock:
        """The retrieved statements formatted as the package formats its own."""
        return format_memories(self.search(query, user_id), max_tokens=self.max_tokens, query=query, now=now)

    def purge(self, user_id: str) -> None:
        """Delete every statement of ``user_id``."""
        ns = self.namespace(user_id)
        while items := self.store.search(ns, limit=1000):
            for item in items:
                self.store.delete(ns, item.key)


class NaiveEngine:
    """Drives :class:`NaiveMemory` through a scenario (see the module docstring)."""

    name = "naive"

    def __init__(
        self,
        *,
        extractor: str = "gold",
        embeddings: Embeddings | None = None,
        k: int = 5,
        min_score: float = 0.3,
        llm: Any | None = None,
    ) -> None:
        self.extractor = extractor
        self.llm = llm
        self.store = fresh_store(embeddings, index={"fields": ["content"]})
        self.memory = NaiveMemory(self.store, k=k, min_score=min_score)

    def turn(
        self, user_id: str, at: datetime, user: str | None, assistant: str | None, facts: list[dict[str, Any]]
    ) -> None:
        """Append the turn's statements (gold facts, or extracted by the LLM or the rule extractor)."""
        turn = {
            "messages": convert_to_messages([("user", user or "")] + ([("ai", assistant)] if assistant else [])),
            "now": at,
        }
        if self.extractor == "gold":
            parsed = [Fact.model_validate(f) for f in facts]
        elif self.extractor == "llm" and self.llm is not None:
            try:
                parsed = list(self.llm.invoke(turn))
            except Exception:  # the package keeps such a turn as an episode; the article's engine loses it
                parsed = []
        else:
            from langchain_lifecycle_memory.write.extraction import create_rule_extractor

            parsed = create_rule_extractor().invoke(turn)
        for fact in parsed:
            if fact.operation == "assert":
                self.memory.add([fact.content], user_id, at=fact.valid_from or at, confidence=fact.confidence)

    def probe(self, query: str, user_id: str, *, now: datetime, as_of: datetime | None = None) -> MemoryBlock:
        """Inject for ``query`` (``as_of`` is ignored: an append-only store has no history)."""
        return self.memory.inject(query, user_id, now=now)

    def sweep(self, *, now: datetime) -> None:
        """Nothing expires in an append-only store."""

    def forget(self, user_id: str, *, now: datetime, **target: Any) -> None:
        """The article's engine has no forget."""

    def purge(self, user_id: str) -> None:
        """Delete the user's namespace."""
        self.memory.purge(user_id)

    def close(self) -> None:
        """Drop the scenario's collections."""
        drop_store(self.store)
