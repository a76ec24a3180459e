"""Small namespaces: the dense channel scored in-process from the vectors read with the records.

``store.read_small_namespace`` reads a namespace's records and every row's vector in one
``get``; the retriever then ranks rows by an exact cosine instead of asking Chroma for the
nearest ids. It must return what ``store.nearest_ids`` (Chroma's query) returns, only the
namespace's own rows, and the retriever's answers must not change.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord
from langchain_lifecycle_memory.read import retrieval
from langchain_lifecycle_memory.read._small import dense_rows
from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever

DIMS = 32
WORDS = "vim tea tesla kyoto cello rust latte running spanish thinkpad sourdough piano hangzhou climbing".split()


class HashEmbeddings:
    """Deterministic, distinct vectors per text (no ties between rows)."""

    fingerprint = {"provider": "tests.HashEmbeddings", "model": "hash32", "dims": DIMS, "version": 1}

    def _one(self, text: str) -> list[float]:
        rows = [np.random.default_rng(zlib.crc32(t.encode())).standard_normal(DIMS) for t in text.lower().split()]
        return (np.sum(rows, axis=0) + 1e-3).tolist()  # not unit length: the store must normalise

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def _store(path: Path, layout: str, **kwargs: object) -> ChromaMemoryStore:
    return ChromaMemoryStore(path, embeddings=HashEmbeddings(), collection_prefix="small", layout=layout, **kwargs)  # type: ignore[arg-type]


def _fill(store: ChromaMemoryStore, users: int = 6, per: int = 12) -> list[tuple[str, ...]]:
    rng = np.random.default_rng(3)
    spaces = [("memories", f"u{u}") for u in range(users)]
    for ns in spaces:
        texts = [" ".join(rng.choice(WORDS, size=3)) + f" {ns[1]} note {i}" for i in range(per)]
        store.put_records([MemoryRecord(namespace=ns, content=t) for t in texts])
    # Rows that are not records: an item with two indexed fields (an extra vector row) and an unindexed one.
    store.put(spaces[0], "doc", {"title": "kyoto tea", "body": "rust cello"}, index=["title", "body"])
    store.put(spaces[0], "plain", {"n": 1}, index=False)
    return spaces


@pytest.mark.parametrize("layout", ["bucketed", "collection"])
def test_in_process_nearest_rows_equal_chromas_query(tmp_path: Path, layout: str) -> None:
    extra = {"buckets": 1} if layout == "bucketed" else {}  # every namespace in one shared collection
    store = _store(tmp_path / "s", layout, **extra)
    spaces = _fill(store)
    emb = HashEmbeddings()
    for ns in spaces:
        small = store.read_small_namespace(ns, 256)
        assert small is not None
        records, documents, (ids, vectors) = small
        assert {r.namespace for r in records} == {ns} and len(documents) == len(records)
        assert set(ids) == set(store._col(ns).get(include=[])["ids"])  # type: ignore[union-attr]
        rows = dense_rows(ids, vectors)
        for query in ("kyoto tea", "rust running piano", f"{ns[1]} note 3", "nothing"):
            vector = emb.embed_query(query)
            for n in (1, 5, len(ids)):
                ours = rows.nearest(vector, n)
                chroma = store.nearest_ids(ns, vector, n)
                assert [i for i, _ in ours] == [i for i, _ in chroma]
                np.testing.assert_allclose([s for _, s in ours], [s for _, s in chroma], atol=1e-5)


def test_a_namespace_over_the_limit_is_not_read_small(tmp_path: Path) -> None:
    store = _store(tmp_path / "s", "bucketed", buckets=1)
    spaces = _fill(store, users=2, per=12)
    assert store.read_small_namespace(spaces[1], 11) is None
    assert store.read_small_namespace(spaces[1], 12) is not None
    empty = store.read_small_namespace(("memories", "nobody"), 12)
    assert empty is not None and empty[0] == [] and empty[2][0] == []


@pytest.mark.parametrize("layout", ["bucketed", "collection"])
def test_retriever_answers_the_same_with_and_without_the_small_path(
    tmp_path: Path, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path / "s", layout, **({"buckets": 1} if layout == "bucketed" else {}))
    spaces = _fill(store)
    queries = ["kyoto tea", "What about rust and running?", "u3 note 7", "spanish piano"]

    def answers() -> list[list[tuple[str, str, float]]]:
        retrieval._SNAPSHOTS.clear()
        retriever = LifecycleRetriever(store=store, k=5, min_score=0.05)
        out = []
        for ns in spaces:
            for q in queries:
                docs = retriever.invoke(q, namespace=ns)
                assert all(tuple(d.metadata["namespace"]) == ns for d in docs)  # never another tenant's row
                out.append([(d.metadata["id"], d.page_content, round(d.metadata["score"], 6)) for d in docs])
        return out

    small = answers()
    assert any(small), "the queries must retrieve something"
    monkeypatch.setattr(retrieval, "SMALL_NAMESPACE", 0)  # every namespace through nearest_ids
    plain = answers()
    for a, b in zip(small, plain, strict=True):
        assert [i for i, _, _ in a] == [i for i, _, _ in b], (a, b)
        np.testing.assert_allclose([s for _, _, s in a], [s for _, _, s in b], atol=1e-5)


def test_a_write_after_a_small_snapshot_is_seen_by_the_next_search(tmp_path: Path) -> None:
    store = _store(tmp_path / "s", "bucketed", buckets=1)
    spaces = _fill(store, users=2, per=5)
    retriever = LifecycleRetriever(store=store, k=10, min_score=0.05)
    before = retriever.invoke("climbing hangzhou", namespace=spaces[0])
    assert retrieval._SNAPSHOTS[(id(store), spaces[0])].dense is not None
    new = MemoryRecord(namespace=spaces[0], content="climbing hangzhou climbing")
    store.put_record(new)
    after = retriever.invoke("climbing hangzhou", namespace=spaces[0])
    assert new.id in [d.metadata["id"] for d in after] and new.id not in [d.metadata["id"] for d in before]
    store.delete_records(spaces[0], [new.id])
    assert new.id not in [d.metadata["id"] for d in retriever.invoke("climbing hangzhou", namespace=spaces[0])]
    assert not retriever.invoke("climbing hangzhou", namespace=spaces[1]) or all(
        tuple(d.metadata["namespace"]) == spaces[1] for d in retriever.invoke("climbing hangzhou", namespace=spaces[1])
    )


def test_writes_are_journaled_only_for_namespaces_a_reader_follows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retrieval, "SMALL_NAMESPACE", 0)  # a snapshot that journal deltas update
    retrieval._SNAPSHOTS.clear()
    store = _store(tmp_path / "s", "bucketed")
    spaces = _fill(store, users=3, per=4)
    assert len(store._journal) == 0  # written, never searched: nothing would read a journal
    retriever = LifecycleRetriever(store=store, k=5, min_score=0.05)
    retriever.invoke("kyoto tea", namespace=spaces[0])
    store.put_record(MemoryRecord(namespace=spaces[0], content="kyoto tea again"))
    store.put_record(MemoryRecord(namespace=spaces[1], content="kyoto tea elsewhere"))
    assert list(store._journal) == [spaces[0]]
    assert "kyoto tea again" in [d.page_content for d in retriever.invoke("kyoto tea again", namespace=spaces[0])]
    store.follow(spaces[0], False)
    assert len(store._journal) == 0


def test_rows_carry_only_the_metadata_that_filters_use(tmp_path: Path) -> None:
    store = _store(tmp_path / "s", "bucketed")
    ns = ("memories", "u1")
    plain = MemoryRecord(namespace=ns, content="The user likes green tea")
    slot = MemoryRecord(
        namespace=ns, content="born 1990-05-01T08:00", entity="user", attribute="birthday", value="1990-05-01T08:00Z"
    )
    store.put_records([plain, slot])
    got = store._col(ns).get(ids=[plain.id], include=["metadatas"])  # type: ignore[union-attr]
    keys = set(got["metadatas"][0]) - {"_ns"}
    assert keys == {"_key", "_created", "_updated", "_idx", "_fields", "v.kind", "v.status"} | {
        "t.created_at",
        "t.updated_at",
        "t.valid_from",
    }
    # what the filters need is all there: the slot catalogue (a value that looks like an instant), attribute
    # and status filters, point-in-time search
    assert [r["value"] for r in store.slot_catalogue(ns)] == ["1990-05-01T08:00Z"]
    assert [r.id for r in store.list_records(ns, attribute="birthday", statuses="active")] == [slot.id]
    assert [r.id for r, _ in store.search_records(ns, "green tea", k=1, as_of=plain.valid_from)] == [plain.id]


def test_a_first_search_on_an_embedded_store_reads_no_revision_and_sees_later_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    retrieval._SNAPSHOTS.clear()
    store = _store(tmp_path / "s", "bucketed", buckets=1)
    spaces = _fill(store, users=2, per=5)
    revisions: list[tuple[str, ...]] = []
    revision = store.revision
    monkeypatch.setattr(store, "revision", lambda ns: revisions.append(ns) or revision(ns))
    retriever = LifecycleRetriever(store=store, k=10, min_score=0.05)
    first = [d.metadata["id"] for d in retriever.invoke("climbing hangzhou", namespace=spaces[0])]
    assert revisions == []  # dated by the database file's stamp
    assert [d.metadata["id"] for d in retriever.invoke("climbing hangzhou", namespace=spaces[0])] == first
    assert revisions == []  # nothing committed since: the same snapshot

    # Another store object (another worker) writes to the same database: the stamp moves.
    other = _store(tmp_path / "s", "bucketed")
    new = MemoryRecord(namespace=spaces[0], content="climbing hangzhou climbing")
    other.put_record(new)
    after = [d.metadata["id"] for d in retriever.invoke("climbing hangzhou", namespace=spaces[0])]
    assert new.id in after and revisions == [spaces[0]]
    other.put_record(MemoryRecord(namespace=spaces[1], content="climbing hangzhou elsewhere"))
    assert [d.metadata["id"] for d in retriever.invoke("climbing hangzhou", namespace=spaces[0])] == after
    assert all(
        tuple(d.metadata["namespace"]) == spaces[1] for d in retriever.invoke("climbing hangzhou", namespace=spaces[1])
    )


def test_a_read_without_the_registry_lookup_sees_nothing_of_an_unregistered_namespace(tmp_path: Path) -> None:
    retrieval._SNAPSHOTS.clear()
    store = _store(tmp_path / "s", "bucketed", buckets=1)  # every namespace in the one bucket
    spaces = _fill(store, users=3, per=4)
    retriever = LifecycleRetriever(store=store, k=10, min_score=0.0)
    other = _store(tmp_path / "s", "bucketed")
    assert other.purge(spaces[0]) == 7  # 4 records; an item with its extra vector row; a plain item
    fresh = _store(tmp_path / "s", "bucketed")  # knows no namespace yet
    for s in (store, fresh):
        for ns in (spaces[0], ("memories", "never"), ("memories",)):
            read = s.read_small_namespace(ns, 256)
            assert read is not None and read[0] == [] and read[2][0] == []
    assert retriever.invoke("kyoto tea", namespace=spaces[0]) == []
    kept = fresh.read_small_namespace(spaces[1], 256)
    assert kept is not None and {r.namespace for r in kept[0]} == {spaces[1]} and len(kept[2][0]) == 4
