from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import chromadb
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_lifecycle_memory import ChromaMemoryStore, EmbeddingMismatchError, MemoryRecord
from langchain_lifecycle_memory.lifecycle.operations import ReindexError, reindex
from langchain_lifecycle_memory.read.fusion import E5_CALIBRATION, ScoreCalibration
from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever
from langchain_lifecycle_memory.store.embeddings import E5SmallEmbeddings

U1 = ("memories", "u1")
U2 = ("memories", "u2")
DOCS = ("docs", "shared")


class FailingEmbedding(DeterministicFakeEmbedding):
    """Fails on the n-th ``embed_documents`` call, like a provider outage mid-migration."""

    fail_on: int = 2
    calls: int = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls >= self.fail_on:
            msg = "embedding provider unavailable"
            raise ConnectionAbortedError(msg)
        return super().embed_documents(texts)


def _open(backend: str, tmp_path: Path, embeddings: Any, prefix: str, client: Any = None) -> ChromaMemoryStore:
    if backend == "embedded":
        return ChromaMemoryStore(tmp_path / "chroma", embeddings=embeddings, collection_prefix=prefix)
    return ChromaMemoryStore(client=client, embeddings=embeddings, collection_prefix=prefix)


@pytest.fixture(params=["embedded", "memory"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Any, str]:
    client = chromadb.EphemeralClient() if request.param == "memory" else None
    return str(request.param), client, f"r{uuid.uuid4().hex[:10]}"


def _fill(store: ChromaMemoryStore) -> None:
    store.put_records([MemoryRecord(namespace=U1, id=f"a{i}", content=f"user one fact {i}") for i in range(300)])
    store.put_records([MemoryRecord(namespace=U2, id="b0", content="用户喜欢使用 Vim 编辑器", status="archived")])
    store.put(DOCS, "d1", {"title": "ignored by the index", "text": "indexed text of d1"}, index=["text"])
    store.put(DOCS, "d2", {"text": "never indexed"}, index=False)


def _names(store: ChromaMemoryStore, generation: int) -> list[str]:
    start = f"{store.prefix}.g{generation}."
    return [c.name for c in store.client.list_collections() if c.name.startswith(start)]


def test_reindex_moves_everything_to_the_new_embedder(setup: tuple[str, Any, str], tmp_path: Path) -> None:
    backend, client, prefix = setup
    old, new = DeterministicFakeEmbedding(size=16), DeterministicFakeEmbedding(size=24)
    store = _open(backend, tmp_path, old, prefix, client)
    _fill(store)

    report = reindex(store, new, progress=False)

    assert (report.old_generation, report.new_generation) == (0, 1)
    assert report.namespaces == 3 and report.items == 303 and report.embedded == 302
    assert store.generation == 1 and store.dims == 24 and store.embeddings is new
    assert _names(store, 0) == [] and _names(store, 1) and len(store.namespaces()) == 3
    assert store.count_records(U1) == 300 and store.count_records(U2) == 1
    top = store.search_records(U1, "user one fact 17", k=1)
    assert top[0][0].id == "a17" and top[0][1] == pytest.approx(1.0, abs=1e-5)
    assert store.get_record(U2, "b0").status.value == "archived"  # type: ignore[union-attr]
    hits = store.search(DOCS, query="indexed text of d1")
    assert hits[0].key == "d1" and hits[0].score == pytest.approx(1.0, abs=1e-5)
    # d2 is still unindexed: as in InMemoryStore it only fills the page, unscored
    unscored = [(h.key, h.score is None) for h in store.search(DOCS, query="never indexed")]
    assert unscored == [("d1", False), ("d2", True)]
    assert store.get(DOCS, "d2").value == {"text": "never indexed"}  # type: ignore[union-attr]

    with pytest.raises(EmbeddingMismatchError, match="reindex"):
        _open(backend, tmp_path, DeterministicFakeEmbedding(size=16), prefix, client)
    reopened = _open(backend, tmp_path, DeterministicFakeEmbedding(size=24), prefix, client)
    assert reopened.generation == 1 and reopened.count_records(U1) == 300
    assert reopened.search_records(U1, "user one fact 42", k=1)[0][0].id == "a42"


def test_failed_reindex_keeps_the_old_generation(setup: tuple[str, Any, str], tmp_path: Path) -> None:
    backend, client, prefix = setup
    old = DeterministicFakeEmbedding(size=16)
    store = _open(backend, tmp_path, old, prefix, client)
    _fill(store)
    failing = FailingEmbedding(size=24, fail_on=3)

    with pytest.raises(ReindexError, match="still in use") as info:
        reindex(store, failing, progress=False)

    assert isinstance(info.value.__cause__, ConnectionAbortedError)
    assert store.generation == 0 and store.embeddings is old and store.dims == 16
    assert _names(store, 1) == [] and _names(store, 0) and len(store.namespaces()) == 3
    assert store.search_records(U1, "user one fact 5", k=1)[0][0].id == "a5"
    reopened = _open(backend, tmp_path, DeterministicFakeEmbedding(size=16), prefix, client)
    assert reopened.generation == 0 and reopened.count_records(U1) == 300

    report = reindex(store, DeterministicFakeEmbedding(size=24), progress=False)  # a rerun starts clean
    assert report.new_generation == 1 and store.count_records(U1) == 300


def test_reindex_ignores_leftovers_of_an_interrupted_run(setup: tuple[str, Any, str], tmp_path: Path) -> None:
    backend, client, prefix = setup
    store = _open(backend, tmp_path, DeterministicFakeEmbedding(size=16), prefix, client)
    _fill(store)
    stale = store.client.create_collection(store._buckets.bucket_name(1, U1), embedding_function=None)
    stale.add(ids=["ghost"], embeddings=[[0.0] * 8], documents=["{}"])  # a half-built next generation

    reindex(store, DeterministicFakeEmbedding(size=8), progress=True)

    assert store.count_records(U1) == 300 and store.get_record(U1, "ghost") is None


def test_reindex_from_a_store_opened_for_the_migration(setup: tuple[str, Any, str], tmp_path: Path) -> None:
    backend, client, prefix = setup
    _fill(_open(backend, tmp_path, DeterministicFakeEmbedding(size=16), prefix, client))
    new = DeterministicFakeEmbedding(size=24)
    location: dict[str, Any] = {"client": client} if client is not None else {"persist_directory": tmp_path / "chroma"}
    migrating = ChromaMemoryStore(**location, embeddings=new, collection_prefix=prefix, verify_fingerprint=False)

    report = reindex(migrating, new, progress=False)

    assert report.old_fingerprint["dims"] == 16 and report.new_fingerprint["dims"] == 24
    assert migrating.search_records(U1, "user one fact 3", k=1)[0][0].id == "a3"


def test_reindex_keeps_one_vector_per_list_element(tmp_path: Path) -> None:
    from tests.fake_embeddings import CharEmbeddings

    index: Any = {"fields": ["messages[*].content"]}
    store = ChromaMemoryStore(tmp_path / "db", embeddings=CharEmbeddings(16), index=index, collection_prefix="mvx")
    filler = [{"content": f"small talk number {i} about lunch"} for i in range(5)]
    store.put(("chat",), "long", {"messages": [*filler, {"content": "zqzq"}]})
    store.put(("chat",), "short", {"messages": [{"content": "about lunch"}]})
    report = reindex(store, CharEmbeddings(24), progress=False)
    assert report.items == 2
    hits = store.search(("chat",), query="zqzq")
    assert hits[0].key == "long" and hits[0].score == pytest.approx(1.0, abs=1e-5)


def test_a_store_reindexed_by_another_process_refuses_its_old_embedder(tmp_path: Path) -> None:
    prefix = f"r{uuid.uuid4().hex[:10]}"
    running = _open("embedded", tmp_path, DeterministicFakeEmbedding(size=16), prefix)  # an app that stays up
    _fill(running)
    assert running.search_records(U1, "user one fact 3", k=1)[0][0].id == "a3"
    new = DeterministicFakeEmbedding(size=24)
    migrating = ChromaMemoryStore(
        tmp_path / "chroma", embeddings=new, collection_prefix=prefix, verify_fingerprint=False
    )
    reindex(migrating, new, progress=False)  # its own client, as `lifecycle-memory reindex` in a shell has

    with pytest.raises(EmbeddingMismatchError, match="reindexed elsewhere"):
        running.search_records(U1, "user one fact 3", k=1)  # it read nothing, silently
    with pytest.raises(EmbeddingMismatchError, match="Open the store again"):
        running.put_records([MemoryRecord(namespace=U1, id="late", content="said after the reindex")])
    reopened = ChromaMemoryStore(tmp_path / "chroma", embeddings=new, collection_prefix=prefix)
    assert reopened.get_record(U1, "late") is None  # no write went to the retired generation, or anywhere
    assert reopened.search_records(U1, "user one fact 3", k=1)[0][0].id == "a3"


def test_a_retriever_scores_by_the_calibration_of_the_embedder_its_store_moved_to(tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "chroma", embeddings=DeterministicFakeEmbedding(size=16))
    store.put_records([MemoryRecord(namespace=U1, content="The user lives in Berlin.")])
    default = LifecycleRetriever(store=store, namespace=U1)
    chosen = LifecycleRetriever(store=store, namespace=U1, calibration=ScoreCalibration(dense_floor=0.5))

    reindex(store, E5SmallEmbeddings(), progress=False)  # in this process, with the retrievers in use
    default.invoke("where do I live?")
    chosen.invoke("where do I live?")

    assert default.calibration == E5_CALIBRATION  # it kept the old encoder's: every memory passed
    assert chosen.calibration.dense_floor == 0.5  # one the user gave stays
