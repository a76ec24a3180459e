"""A namespace read straight from an embedded store's SQLite file equals Chroma's own read."""

from __future__ import annotations

import random
import uuid
from datetime import timedelta
from pathlib import Path

import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever, MemoryRecord
from langchain_lifecycle_memory.read import retrieval as R
from langchain_lifecycle_memory.store import _sqlite_read
from tests.conftest import drop_store_collections, make_store
from tests.fake_embeddings import CharEmbeddings
from tests.unit_tests.test_scale import NS, T0, _slot_record

OTHER = (NS[0], NS[1] + "x")  # a tenant whose label extends ours: a literal compare keeps them apart
CHILD = (*NS, "deeper")


def _filled(path: Path, **kwargs: object) -> ChromaMemoryStore:
    return _seeded(
        ChromaMemoryStore(path, embeddings=CharEmbeddings(), collection_prefix="t" + uuid.uuid4().hex[:8], **kwargs)  # type: ignore[arg-type]
    )


def _api_read(store: ChromaMemoryStore, ns: tuple[str, ...]) -> tuple[list, list[str]]:
    store.direct_reads = False
    try:
        return store.read_namespace(ns)
    finally:
        store.direct_reads = True


@pytest.mark.parametrize("buckets", [None, 1])
def test_direct_read_equals_chromas_read_in_every_layout(
    tmp_path: Path, layout: str, buckets: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    kwargs = {"buckets": buckets} if buckets and layout == "bucketed" else {}  # 1 bucket: all tenants share it
    store = _filled(tmp_path / "db", **kwargs)
    calls: list[tuple[str, ...]] = []
    original = store._raw_documents  # Chroma's API read
    monkeypatch.setattr(store, "_raw_documents", lambda ns, *a: calls.append(ns) or original(ns, *a))
    for ns in (NS, OTHER, CHILD, ("memories", "nobody")):
        expected = _api_read(store, ns)
        assert calls.pop() == ns
        got = store.read_namespace(ns)
        assert calls == []  # read from the file, not through Chroma's API
        assert got == expected
        assert all(r.namespace == ns for r in got[0])
    assert len(store.read_namespace(NS)[0]) == 113 and len(store.read_namespace(OTHER)[0]) == 30


def test_a_read_that_overlaps_a_write_goes_through_chroma(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _filled(tmp_path / "db")
    expected = _api_read(store, NS)
    counter = iter(range(1000))
    monkeypatch.setattr(_sqlite_read, "_stamp", lambda path: (next(counter),))  # the file changes during every read
    assert _sqlite_read.read_documents(str(store._local_db), str(store._col(NS).id)) is None
    assert store.read_namespace(NS) == expected
    monkeypatch.setattr(_sqlite_read, "_stamp", lambda path: None)  # a write in progress (a journal file)
    assert store.read_namespace(NS) == expected


def test_the_retrievers_first_search_after_another_process_wrote_sees_every_record(tmp_path: Path) -> None:
    writer = _filled(tmp_path / "db", layout="bucketed")
    reader = ChromaMemoryStore(tmp_path / "db", embeddings=CharEmbeddings(), collection_prefix=writer.prefix)
    R._SNAPSHOTS.clear()
    retriever = LifecycleRetriever(store=reader, namespace=NS, k=200, min_score=0.0)
    docs = retriever.invoke("Where does Maya live?")
    assert docs
    live = {r.id for r in writer.list_records(NS, statuses="active")}
    assert {d.metadata["id"] for d in docs} <= live
    new = MemoryRecord(namespace=NS, content="Maya moved to Lisbon", kind="episode")
    writer.put_record(new)  # another process's write: the reader's next search reads the file again
    docs = retriever.invoke("Where does Maya live?")
    assert new.id in {d.metadata["id"] for d in docs}


def _seeded(store: ChromaMemoryStore) -> ChromaMemoryStore:
    rng = random.Random(3)
    records = [_slot_record(rng, i) for i in range(120)]
    store.put_records(records)
    for ns in (OTHER, CHILD):
        store.put_records([r.model_copy(update={"namespace": ns, "id": f"{ns[-1]}-{r.id}"}) for r in records[:30]])
    store.delete_records(NS, [r.id for r in records[:7]])
    store.put_records([records[9].transition("archived", at=T0 + timedelta(minutes=50))])
    store.put(NS, "plain-item", {"note": "not a memory record"})  # a plain BaseStore item: skipped by both
    return store


@pytest.mark.parametrize("backend", ["embedded", "memory", "server"])
def test_a_big_namespace_of_a_bucket_is_searched_unfiltered_and_sees_only_its_rows(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counted in the SQLite file (embedded) or through Chroma's API (in-memory and server clients)."""
    from langchain_lifecycle_memory.store import _bucket_query

    monkeypatch.setattr(_bucket_query, "BUCKET_NAMESPACE_ROWS", 1)
    # Fetch budget 50: NS (114 of 174 rows: 35 rows for 10 of its own) goes unfiltered, OTHER and
    # CHILD (30 rows each: 88 rows for 10) stay filtered.
    monkeypatch.setattr(_bucket_query, "MAX_UNFILTERED_FETCH", 50)
    store = _seeded(make_store(backend, tmp_path, CharEmbeddings(), layout="bucketed", buckets=1))  # type: ignore[arg-type]
    try:
        emb = store.embeddings
        calls: list[int] = []
        bucket = store._col(NS)._col
        original = type(bucket).nearest_own
        monkeypatch.setattr(type(bucket), "nearest_own", lambda self, v, f: calls.append(f) or original(self, v, f))
        for query in ("Where does Maya live?", "我用什么编辑器？", "tea"):
            vector = emb.embed_query(query)
            for ns in (NS, OTHER, CHILD):
                own = set(store._col(ns).query(query_embeddings=[vector], n_results=10)["ids"][0])
                got = store.nearest_ids(ns, vector, 10)
                assert {i for i, _ in got} == own  # the filtered query's answer
                assert len(got) == 10
        assert calls == [35, 35, 35]  # only NS skipped the filter
        monkeypatch.setattr(_bucket_query, "MAX_UNFILTERED_FETCH", 1500)  # the shipped budget: all three do
        store.__dict__.pop("_bucket_shares", None)
        for ns in (OTHER, CHILD):
            vector = emb.embed_query("tea")
            own = set(store._col(ns).query(query_embeddings=[vector], n_results=10)["ids"][0])
            assert {i for i, _ in store.nearest_ids(ns, vector, 10)} == own
        assert calls[3:] == [88, 88]
        got = store.nearest_ids(NS, emb.embed_query("tea"), 500)  # more than it holds: its own rows, all of them
        assert {i for i, _ in got} == {r.id for r in store.list_records(NS)} | {"plain-item"}
    finally:
        if backend == "server":
            drop_store_collections(store)


def test_store_and_record_searches_of_a_namespace_that_fills_its_bucket_match_the_filtered_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``search_records`` and BaseStore ``search`` take the unfiltered bucket query too: same answers, own rows only."""
    from langchain_lifecycle_memory.store import _bucket_query

    monkeypatch.setattr(_bucket_query, "BUCKET_NAMESPACE_ROWS", 1)
    store = _filled(tmp_path / "db", layout="bucketed", buckets=1)  # NS: 114 of 174 rows; the others 30 each
    bucket = store._col(NS)._col
    calls: list[int] = []
    original = type(bucket).query_own
    monkeypatch.setattr(type(bucket), "query_own", lambda self, v, f, i: calls.append(f) or original(self, v, f, i))

    def answers() -> list[object]:
        out: list[object] = []
        for query in ("Where does Maya live?", "我用什么编辑器？", "tea"):
            for ns in (NS, OTHER, CHILD):
                out.append([(r.id, r.namespace) for r, _ in store.search_records(ns, query, k=8)])
                out.append([(i.key, i.namespace) for i in store.search(ns, query=query, limit=8)])
        return out

    unfiltered = answers()
    assert calls  # NS (over a quarter of the bucket) took the unfiltered query
    monkeypatch.setattr(_bucket_query, "BUCKET_NAMESPACE_ROWS", 10**9)  # every query filtered by tenant
    assert answers() == unfiltered
    for result in unfiltered:
        assert result and all(tuple(ns) in (NS, OTHER, CHILD) for _, ns in result)  # type: ignore[union-attr]
    own = {(i.key, tuple(i.namespace)) for i in store.search(NS, query="tea", limit=200)}
    assert {ns for _, ns in own} == {NS, CHILD}  # a prefix search: NS and below, never OTHER's rows


def test_a_database_replaced_at_the_same_path_is_read_afresh(tmp_path: Path) -> None:
    import os

    first, second = _filled(tmp_path / "a", layout="collection"), _filled(tmp_path / "b", layout="collection")
    path, first_id, second_id = str(first._local_db), str(first._col(NS).id), str(second._col(NS).id)
    assert len(_sqlite_read.read_documents(path, first_id) or {}) == 114  # 113 records and a plain item
    os.replace(str(second._local_db), path)  # another database file at the same path
    assert _sqlite_read.read_documents(path, first_id) is None  # not the old file's rows
    docs = list((_sqlite_read.read_documents(path, second_id) or {}).values())
    assert len(docs) == 114 and set(_api_read(second, NS)[1]) < set(docs)  # b's records and its plain item


def test_connections_to_deleted_databases_are_closed_once_many_are_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    monkeypatch.setattr(_sqlite_read, "_KEEP", 1)
    first = _filled(tmp_path / "a", layout="collection")
    assert first.stored_documents(NS)
    path = str(first._local_db)
    assert path in _sqlite_read._connections
    shutil.rmtree(tmp_path / "a")  # its database is gone (a test's temporary folder, say)
    second = _filled(tmp_path / "b", layout="collection")
    assert second.stored_documents(NS)
    assert path not in _sqlite_read._connections and str(second._local_db) in _sqlite_read._connections
