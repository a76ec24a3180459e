"""A memory that was told some words, in turn: the user paths' tests start from one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory


def told(embeddings: Any, tmp_path: Path, *turns: tuple[str, str | None]) -> LifecycleMemory:
    """A memory of user ``u`` that was told each ``(words, date)`` in turn (``None``: now)."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    for words, at in turns:
        memory.add_messages([("user", words)], user_id="u", at=at)
    return memory
