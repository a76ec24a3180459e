"""A small namespace's read takes its documents from the SQLite file and equals Chroma's own read.

``store.read_small_namespace`` on an embedded store asks Chroma for the rows' vectors only
and reads their documents from the file (``_namespace_reads._small_rows``). What the
retriever gets must be exactly what one Chroma ``get`` of documents and vectors gives: the
same records and documents, every row's id and vector (extra vector rows and plain items
included), only the namespace's own rows, and Chroma's read when a write overlaps.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest

from langchain_lifecycle_memory import ChromaMemoryStore
from langchain_lifecycle_memory.store import _sqlite_read
from tests.fake_embeddings import CharEmbeddings
from tests.unit_tests.test_direct_read import CHILD, NS, OTHER, _seeded


def _store(path: Path, **kwargs: object) -> ChromaMemoryStore:
    store = ChromaMemoryStore(
        path,
        embeddings=CharEmbeddings(),
        collection_prefix="s" + uuid.uuid4().hex[:8],
        **kwargs,  # type: ignore[arg-type]
    )
    _seeded(store)
    # A plain item indexed on two fields: its second vector is an extra row without a document.
    store.put(NS, "two-fields", {"title": "kyoto tea house", "body": "a note on sencha"}, index=["title", "body"])
    return store


def _api_small(store: ChromaMemoryStore, ns: tuple[str, ...], limit: int) -> object:
    store.direct_reads = False
    try:
        return store.read_small_namespace(ns, limit)
    finally:
        store.direct_reads = True


def _same(got: object, expected: object) -> None:
    assert got is not None and expected is not None
    (records, documents, (ids, vectors)), (e_records, e_documents, (e_ids, e_vectors)) = got, expected  # type: ignore[misc]
    assert records == e_records and documents == e_documents
    assert ids == e_ids
    np.testing.assert_array_equal(vectors, e_vectors)


@pytest.mark.parametrize("buckets", [None, 1])
def test_the_small_read_from_the_file_equals_chromas_read(
    tmp_path: Path, layout: str, buckets: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    kwargs = {"buckets": buckets} if buckets and layout == "bucketed" else {}  # 1 bucket: all tenants share it
    store = _store(tmp_path / "db", **kwargs)
    reads: list[object] = []
    original = _sqlite_read.read_documents
    monkeypatch.setattr(
        "langchain_lifecycle_memory.store._namespace_reads.read_documents",
        lambda *a, **k: reads.append(a) or original(*a, **k),
    )
    for ns in (NS, OTHER, CHILD, ("memories", "nobody")):
        expected = _api_small(store, ns, 256)
        got = store.read_small_namespace(ns, 256)
        _same(got, expected)
        assert all(r.namespace == ns for r in got[0])  # type: ignore[index]
    assert len(reads) == 3  # the three namespaces with rows: documents from the file
    records, documents, (ids, _) = store.read_small_namespace(NS, 256)  # type: ignore[misc]
    assert len(records) == 113 and len(documents) == 113
    assert "two-fields" in ids and len(ids) > len(set(ids) & {r.id for r in records}) + 1  # plain item + its extra row


def test_a_namespace_over_the_limit_is_still_not_read_small(tmp_path: Path) -> None:
    store = _store(tmp_path / "db", layout="bucketed", buckets=1)
    assert store.read_small_namespace(OTHER, 29) is None
    _same(store.read_small_namespace(OTHER, 30), _api_small(store, OTHER, 30))


def test_a_write_between_the_two_reads_falls_back_to_one_chroma_read(
    tmp_path: Path, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_lifecycle_memory.store import _namespace_reads

    store = _store(tmp_path / "db")
    expected = _api_small(store, NS, 256)
    reads: list[object] = []
    original = _sqlite_read.read_documents
    monkeypatch.setattr(_namespace_reads, "read_documents", lambda *a, **k: reads.append(a) or original(*a, **k))
    counter = iter(range(1000))
    # A commit between Chroma's get and the file read: the stamps differ, the file's documents are not used.
    monkeypatch.setattr(_namespace_reads, "file_stamp", lambda path: (next(counter),))
    _same(store.read_small_namespace(NS, 256), expected)
    assert len(reads) == 1
    monkeypatch.setattr(_namespace_reads, "file_stamp", lambda path: None)  # a write in progress (a journal file)
    _same(store.read_small_namespace(NS, 256), expected)
    assert len(reads) == 1  # not even tried
    monkeypatch.setattr(_sqlite_read, "_stamp", lambda path: (next(counter),))  # the file read itself overlaps a write
    monkeypatch.setattr(_namespace_reads, "file_stamp", lambda path: ("same",))
    _same(store.read_small_namespace(NS, 256), expected)
    assert len(reads) == 2


def test_a_file_that_disagrees_with_chroma_on_the_rows_is_not_used(
    tmp_path: Path, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document missing from the file, or one Chroma does not return: Chroma's read instead."""
    from langchain_lifecycle_memory.store import _namespace_reads

    store = _store(tmp_path / "db")
    expected = _api_small(store, NS, 256)
    original = _sqlite_read.read_documents

    def missing_one(*a: object, **k: object) -> dict[str, str] | None:
        docs = original(*a, **k)  # type: ignore[arg-type]
        assert docs
        docs.pop(next(iter(docs)))
        return docs

    monkeypatch.setattr(_namespace_reads, "read_documents", missing_one)
    _same(store.read_small_namespace(NS, 256), expected)

    def one_more(*a: object, **k: object) -> dict[str, str] | None:
        docs = original(*a, **k)  # type: ignore[arg-type]
        assert docs
        return {**docs, "not-in-chroma": next(iter(docs.values()))}

    monkeypatch.setattr(_namespace_reads, "read_documents", one_more)
    _same(store.read_small_namespace(NS, 256), expected)


def test_the_log_check_looks_only_past_the_segments_applied_position(tmp_path: Path) -> None:
    """``_caught_up``: is any write logged for the collection after what its metadata segment applied?"""
    import sqlite3

    conn = sqlite3.connect(tmp_path / "log.sqlite3")
    conn.execute("CREATE TABLE max_seq_id (segment_id TEXT PRIMARY KEY, seq_id INTEGER)")
    conn.execute("CREATE TABLE embeddings_queue (seq_id INTEGER PRIMARY KEY, topic TEXT NOT NULL)")
    topic = "persistent://default/default/{}"
    assert _sqlite_read._caught_up(conn, "c1", "s1")  # nothing logged, nothing applied
    conn.executemany("INSERT INTO embeddings_queue VALUES (?, ?)", [(i, topic.format("c1")) for i in range(1, 6)])
    assert not _sqlite_read._caught_up(conn, "c1", "s1")  # logged, never applied
    conn.execute("INSERT INTO max_seq_id VALUES ('s1', 5)")
    assert _sqlite_read._caught_up(conn, "c1", "s1")
    conn.executemany("INSERT INTO embeddings_queue VALUES (?, ?)", [(i, topic.format("c2")) for i in range(6, 50)])
    assert _sqlite_read._caught_up(conn, "c1", "s1")  # later writes of another collection only
    assert not _sqlite_read._caught_up(conn, "c2", "s2")
    conn.execute("INSERT INTO embeddings_queue VALUES (50, ?)", (topic.format("c1"),))
    assert not _sqlite_read._caught_up(conn, "c1", "s1")  # one more of its own, not applied yet
    conn.execute("UPDATE max_seq_id SET seq_id = 50 WHERE segment_id = 's1'")
    assert _sqlite_read._caught_up(conn, "c1", "s1")
    conn.execute("INSERT INTO embeddings_queue VALUES (51, ?)", (topic.format("c1"),))
    assert _sqlite_read._caught_up(conn, "1", "s1")  # the whole id after the last "/": "c1" is not "1"
