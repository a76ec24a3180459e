"""What a write leaves behind: compact record documents, fewer Chroma calls, freed heap returned.

Every record's stored document is its ``to_value``; fields at their empty default are left
out (a plain record's document is about half as long), and documents written with every
field (by earlier versions) must still read the same. A write that creates a namespace
reads no rows it would replace, and without a reader following the namespace it reads no
revision token. After a write batch the store has glibc return the heap it keeps free, at
most once per interval, unless turned off.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langgraph.store.base import PutOp

from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord
from langchain_lifecycle_memory.read import retrieval
from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever
from langchain_lifecycle_memory.store import memtrim
from langchain_lifecycle_memory.store._records import RECORD_INDEX

DIMS = 16


class HashEmbeddings:
    fingerprint = {"provider": "tests.HashEmbeddings", "model": "hash16", "dims": DIMS, "version": 1}

    def _one(self, text: str) -> list[float]:
        rows = [np.random.default_rng(zlib.crc32(t.encode())).standard_normal(DIMS) for t in text.lower().split()]
        return (np.sum(rows, axis=0) + 1e-3).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def _store(path: Path, layout: str) -> ChromaMemoryStore:
    return ChromaMemoryStore(path, embeddings=HashEmbeddings(), collection_prefix="foot", layout=layout)  # type: ignore[arg-type]


def _document(store: ChromaMemoryStore, ns: tuple[str, ...], rid: str) -> dict[str, Any]:
    got = store._col(ns).get(ids=[rid], include=["documents"])  # type: ignore[union-attr]
    return json.loads(got["documents"][0])


@pytest.mark.parametrize("layout", ["bucketed", "collection"])
def test_stored_documents_leave_out_empty_fields_and_read_back_equal(tmp_path: Path, layout: str) -> None:
    store = _store(tmp_path / "s", layout)
    ns = ("memories", "u1")
    plain = MemoryRecord(namespace=ns, content="The user likes green tea")
    full = MemoryRecord(
        namespace=ns,
        content="The user's editor is Vim",
        entity="user",
        attribute="editor",
        value="Vim",
        source={"extractor": "llm", "thread_id": "t1", "message_ids": ["m1"]},
        metadata={"note": None, "tags": []},
        supersedes="older",
    )
    store.put_records([plain, full])
    doc = _document(store, ns, plain.id)
    assert set(doc) == {"id", "content", "kind", "status", "confidence", "created_at", "updated_at", "valid_from"}
    assert (
        len(json.dumps(doc, ensure_ascii=False))
        < len(json.dumps(plain.model_dump(mode="json", exclude={"namespace", "cardinality"}), ensure_ascii=False))
        * 0.65
    )
    slot_doc = _document(store, ns, full.id)
    assert slot_doc["cardinality"] == "single"  # a slot record keeps the field that marks it in the catalogue
    assert slot_doc["metadata"] == {"note": None, "tags": []}  # a user's own values are kept as given
    assert store.get_record(ns, plain.id) == plain
    assert store.get_record(ns, full.id) == full
    assert store.get(ns, plain.id).value == plain.to_value()  # type: ignore[union-attr]
    assert [r.id for r in store.list_records(ns, attribute="editor")] == [full.id]
    assert [r["value"] for r in store.slot_catalogue(ns)] == ["Vim"]


@pytest.mark.parametrize("layout", ["bucketed", "collection"])
def test_documents_written_with_every_field_still_read(tmp_path: Path, layout: str) -> None:
    retrieval._SNAPSHOTS.clear()
    store = _store(tmp_path / "s", layout)
    ns = ("memories", "u1")
    old = MemoryRecord(namespace=ns, content="The user drinks oolong tea every morning")
    every_field = old.model_dump(mode="json", exclude={"namespace", "cardinality"})  # the earlier stored form
    assert every_field["valid_to"] is None and every_field["metadata"] == {}
    store.batch([PutOp(ns, old.id, every_field, index=RECORD_INDEX)])
    assert _document(store, ns, old.id) == every_field
    new = MemoryRecord(namespace=ns, content="The user plays the cello")
    store.put_record(new)
    assert store.get_record(ns, old.id) == old
    assert {r.id for r in store.list_records(ns)} == {old.id, new.id}
    hits = LifecycleRetriever(store=store, k=5, min_score=0.0).invoke("oolong tea morning", namespace=ns)
    assert old.id in [d.metadata["id"] for d in hits]
    # rewriting the old record stores the compact form and drops nothing it had
    store.put_record(old.transition("archived"))
    assert "valid_to" in _document(store, ns, old.id) and "metadata" not in _document(store, ns, old.id)
    assert store.get_record(ns, old.id).status.value == "archived"  # type: ignore[union-attr]


class _Calls:
    """Counts ``get``/``upsert`` calls on Chroma collections, by collection name."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from chromadb.api.models.Collection import Collection

        self.seen: list[tuple[str, str]] = []
        for method in ("get", "upsert"):
            real = getattr(Collection, method)

            def wrapped(col: Any, *args: Any, _real: Any = real, _m: str = method, **kwargs: Any) -> Any:
                self.seen.append((_m, col.name))
                return _real(col, *args, **kwargs)

            monkeypatch.setattr(Collection, method, wrapped)

    def count(self, method: str, part: str) -> int:
        return sum(m == method and part in name for m, name in self.seen)


def test_a_write_that_creates_a_namespace_reads_neither_old_rows_nor_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path / "s", "bucketed")
    ns = ("memories", "u1")
    calls = _Calls(monkeypatch)
    first = MemoryRecord(namespace=ns, content="The user likes green tea")
    store.put_record(first)
    assert calls.count("get", ".b") == 0  # no rows to replace in a namespace this write registered
    assert calls.count("get", "namespaces") == 1  # is it registered? (no revision token read after the rows)
    assert calls.count("upsert", "namespaces") == 2  # registered before the rows, stamped after
    calls.seen.clear()
    again = first.model_copy(update={"content": "The user likes green tea a lot"})
    store.put_record(again)
    assert calls.count("get", ".b") == 1  # an existing namespace: the rows it replaces are read
    assert store.get_record(ns, first.id).content == again.content  # type: ignore[union-attr]
    stored = store._col(ns).get(ids=[first.id], include=["metadatas"])["metadatas"][0]  # type: ignore[union-attr]
    assert stored["_created"] < stored["_updated"]  # the item's creation time survived the rewrite


def test_a_followed_namespace_still_journals_its_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retrieval, "SMALL_NAMESPACE", 0)
    retrieval._SNAPSHOTS.clear()
    store = _store(tmp_path / "s", "bucketed")
    ns = ("memories", "u1")
    store.put_record(MemoryRecord(namespace=ns, content="The user likes green tea"))
    retriever = LifecycleRetriever(store=store, k=5, min_score=0.05)
    retriever.invoke("green tea", namespace=ns)
    before = store.revision(ns)
    store.put_record(MemoryRecord(namespace=ns, content="The user likes kyoto in spring"))
    assert store.changes_between(ns, before, store.revision(ns)) is not None
    assert "The user likes kyoto in spring" in [d.page_content for d in retriever.invoke("kyoto spring", namespace=ns)]


class _Trims:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.n = 0
        monkeypatch.setattr(memtrim, "_trim", self)
        monkeypatch.setattr(memtrim, "_last", None)
        monkeypatch.setattr(memtrim, "_reads", 0)

    def __call__(self, pad: int) -> int:
        assert pad == 0
        self.n += 1
        return 1


def test_a_write_returns_the_free_heap_at_most_once_per_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path / "s", "bucketed")
    trims = _Trims(monkeypatch)
    ns = ("memories", "u1")
    store.put_record(MemoryRecord(namespace=ns, content="The user likes green tea"))
    assert trims.n == 1
    store.put_record(MemoryRecord(namespace=ns, content="The user likes oolong tea"))
    store.search(ns, query="tea")  # a search is not a namespace read
    assert trims.n == 1  # within the interval
    monkeypatch.setattr(memtrim, "_last", memtrim._last - memtrim.INTERVAL)  # type: ignore[operator]
    store.put_record(MemoryRecord(namespace=ns, content="The user likes black tea"))
    assert trims.n == 2
    assert len(store.list_records(ns)) == 3  # nothing was lost


def test_namespace_reads_return_the_free_heap_every_so_many_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process serving many users reads each namespace once: every READS_PER_TRIM such reads trim."""
    monkeypatch.setattr(memtrim, "READS_PER_TRIM", 3)
    store = _store(tmp_path / "s", "bucketed")
    spaces = [("memories", f"u{i}") for i in range(7)]
    for ns in spaces:
        store.put_record(MemoryRecord(namespace=ns, content=f"The user {ns[1]} likes green tea"))
    trims = _Trims(monkeypatch)
    retrieval._SNAPSHOTS.clear()
    retriever = LifecycleRetriever(store=store, k=5, min_score=0.0)
    for ns in spaces[:2]:
        assert retriever.invoke("green tea", namespace=ns)
    assert trims.n == 0  # two first reads
    assert retriever.invoke("green tea", namespace=spaces[0])  # a warm search: not a read
    assert trims.n == 0
    assert retriever.invoke("green tea", namespace=spaces[2])
    assert trims.n == 1  # the third read
    monkeypatch.setattr(memtrim, "_last", memtrim._last - memtrim.INTERVAL)  # type: ignore[operator]
    store.trim_memory = False
    for ns in spaces[3:6]:
        assert retriever.invoke("green tea", namespace=ns)
    assert trims.n == 1  # off for this store
    store.trim_memory = True
    store.read_namespace(spaces[6])
    store.read_namespace(spaces[5])
    assert trims.n == 1
    store.read_namespace(spaces[4])  # a full read counts as well
    assert trims.n == 2
    assert [len(store.list_records(ns)) for ns in spaces] == [1] * 7  # nothing was lost


def test_trimming_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path / "s", "bucketed")
    trims = _Trims(monkeypatch)
    ns = ("memories", "u1")
    store.trim_memory = False
    store.put_record(MemoryRecord(namespace=ns, content="The user likes green tea"))
    assert trims.n == 0
    store.trim_memory = True
    monkeypatch.setenv(memtrim.ENV, "0")
    store.put_record(MemoryRecord(namespace=ns, content="The user likes oolong tea"))
    assert trims.n == 0
    monkeypatch.delenv(memtrim.ENV)
    store.put_record(MemoryRecord(namespace=ns, content="The user likes black tea"))
    assert trims.n == 1


def test_without_glibc_trimming_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memtrim, "_trim", False)
    monkeypatch.setattr(memtrim, "_last", None)
    assert memtrim.release_free_memory() is False
    assert memtrim.maybe_release() is False


def test_the_real_trim_runs_on_this_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memtrim, "_trim", None)
    import platform

    ran = memtrim.release_free_memory()
    assert ran is (memtrim._trim is not False)
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert ran
