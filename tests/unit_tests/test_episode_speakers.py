"""Conversation episodes with a speaker: a question naming one person prefers that person's own turns."""

from __future__ import annotations

from pathlib import Path

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory

# Bob's turn addresses Alice by name and shares the question's words; Alice's own turn answers it.
TURNS = [
    ("Bob", "Alice, do you still love hiking in the hills every weekend?"),
    ("Alice", "I love hiking, but these days I mostly go kayaking on the lake."),
    ("Bob", "I took up pottery and love it."),
]


def _memory(tmp_path: Path, embeddings: object, *, speakers: bool) -> LifecycleMemory:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "mem", embeddings=embeddings), retrieval_log=None)
    for speaker, text in TURNS:
        memory.add_episode(f"{speaker}: {text}", "chat-1", entity=speaker if speakers else None)
    return memory


def test_a_named_speakers_own_turn_comes_first(tmp_path: Path, embeddings: object) -> None:
    memory = _memory(tmp_path, embeddings, speakers=True)
    docs = memory.search("What does Alice love doing outdoors?", "chat-1", k=3, min_score=0.0)
    assert docs[0].page_content.startswith("Alice:")
    assert docs[0].metadata["entity"] == "Alice"
    # a question naming nobody is about everyone: no turn is damped
    both = memory.search("Who loves hiking?", "chat-1", k=3, min_score=0.0)
    assert {d.metadata["entity"] for d in both} == {"Alice", "Bob"}


def test_without_speakers_the_turn_that_names_her_wins(tmp_path: Path, embeddings: object) -> None:
    memory = _memory(tmp_path, embeddings, speakers=False)
    docs = memory.search("What does Alice love doing outdoors?", "chat-1", k=3, min_score=0.0)
    assert docs[0].page_content.startswith("Bob:")
