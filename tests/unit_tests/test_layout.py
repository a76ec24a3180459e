"""Storage layouts: recorded in the store, isolated in shared buckets, migrated atomically."""

from __future__ import annotations

import json
from pathlib import Path

import chromadb
import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord
from langchain_lifecycle_memory.lifecycle.operations import purge
from langchain_lifecycle_memory.store import _layout
from langchain_lifecycle_memory.store.embeddings import embedding_fingerprint
from tests.fake_embeddings import CharEmbeddings


def open_store(path: Path, **kwargs: object) -> ChromaMemoryStore:
    return ChromaMemoryStore(path, embeddings=CharEmbeddings(), collection_prefix="lay", **kwargs)  # type: ignore[arg-type]


def names(store: ChromaMemoryStore) -> set[str]:
    return {c.name for c in store.client.list_collections() if c.name.startswith(store.prefix + ".")}


def test_new_stores_are_bucketed_and_reopen_in_their_layout(tmp_path: Path) -> None:
    store = open_store(tmp_path / "a")
    assert store.layout == _layout.DEFAULT_LAYOUT == "bucketed"
    store.put(("memories", "u1"), "k", {"text": "hello"})
    assert open_store(tmp_path / "a").layout == "bucketed"  # no argument: the recorded layout
    old = open_store(tmp_path / "b", layout="collection")
    old.put(("memories", "u1"), "k", {"text": "hello"})
    assert open_store(tmp_path / "b").layout == "collection"
    with pytest.raises(ValueError, match="migrate_layout"):
        open_store(tmp_path / "b", layout="bucketed")
    with pytest.raises(ValueError, match="migrate_layout"):
        open_store(tmp_path / "a", buckets=4)
    with pytest.raises(ValueError, match="Unknown layout"):
        open_store(tmp_path / "c", layout="sharded")


def test_a_store_from_before_layouts_opens_as_one_collection_per_namespace(tmp_path: Path) -> None:
    client = chromadb.PersistentClient(path=str(tmp_path / "old"))
    meta = {"fingerprint": json.dumps(embedding_fingerprint(CharEmbeddings()), sort_keys=True), "generation": 0}
    client.create_collection("lay.meta", metadata=meta, embedding_function=None)
    store = open_store(tmp_path / "old")
    assert store.layout == "collection"
    store.put(("memories", "u1"), "k", {"text": "hello"})
    assert any(".g0." in n and not n.endswith(("namespaces", "b0000")) for n in names(store))


def test_namespaces_sharing_one_bucket_never_see_each_other(tmp_path: Path) -> None:
    store = open_store(tmp_path / "one", buckets=1)  # every namespace in the same collection
    spaces = [("a", "b"), ("a", "b", "c"), ("a", "bc"), ("a", "*"), ("a", "%2E"), ("a", "ü" * 300)]
    for ns in spaces:
        store.put(ns, "k", {"text": f"note of {ns[-1][:5]}"})
        store.put(ns, "only-" + ns[-1][:5], {"text": "x"})
    assert {n for n in names(store) if ".b" in n} == {"lay.g0.b0000"}
    for ns in spaces:
        assert store.get(ns, "k").value == {"text": f"note of {ns[-1][:5]}"}  # type: ignore[union-attr]
        assert {i.key for i in store.search(ns) if i.namespace == ns} == {"k", "only-" + ns[-1][:5]}
    assert {tuple(i.namespace) for i in store.search(("a", "b"), limit=50)} == {("a", "b"), ("a", "b", "c")}
    assert {tuple(i.namespace) for i in store.search(("a", "*"), limit=50)} == {("a", "*")}
    store.delete(("a", "b"), "k")
    assert store.get(("a", "b"), "k") is None
    assert all(store.get(ns, "k") is not None for ns in spaces[1:])
    assert store.purge(("a", "b")) == 3  # ("a","b")'s last item and ("a","b","c")'s two
    assert sorted(store.list_namespaces()) == sorted(spaces[2:])
    assert store.revision(("a", "b")) == "absent" and store.revision(("a", "bc")) not in ("absent", "initial")


@pytest.mark.parametrize(("start", "goal"), [("collection", "bucketed"), ("bucketed", "collection")])
def test_migrate_layout_keeps_every_record_and_switches_atomically(start: str, goal: str, tmp_path: Path) -> None:
    store = open_store(tmp_path / "m", layout=start)
    records = [
        MemoryRecord(namespace=("memories", user), content=f"{user} lives in {city}", entity="user", attribute="city")
        for user, city in (("u1", "Oslo"), ("u2", "Lima"), ("*", "Kyiv"))
    ]
    store.put_records(records)
    store.put(("docs", "x"), "d", {"title": "alpha", "body": "beta"}, index=["title", "body"])  # two vectors
    before = {r.id: r for ns in store.list_namespaces() for r in store.list_records(ns)}
    revision = store.revision(("memories", "u1"))

    report = store.migrate_layout(goal)

    assert store.layout == goal and report.items == 4 and report.new_generation == 1
    reopened = open_store(tmp_path / "m")
    assert reopened.layout == goal and reopened.generation == 1
    after = {r.id: r for ns in reopened.list_namespaces() for r in reopened.list_records(ns)}
    assert after == before  # ids, contents, timestamps unchanged
    hits = reopened.search_records(("memories", "*"), "Kyiv")
    assert [r.content for r, _ in hits] == ["* lives in Kyiv"]
    assert [i.key for i in reopened.search(("docs",), query="beta")] == ["d"]
    assert store.revision(("memories", "u1")) != revision  # readers rebuild their snapshots
    assert not [n for n in names(reopened) if ".g0." in n]  # the old layout is gone


def test_a_failed_migration_leaves_the_old_layout_in_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_lifecycle_memory.errors import ReindexError
    from langchain_lifecycle_memory.store import maintenance

    store = open_store(tmp_path / "f", layout="collection")
    store.put(("memories", "u1"), "k", {"text": "hello"})

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(maintenance, "_copy_rows", broken)
    with pytest.raises(ReindexError, match="still in use"):
        store.migrate_layout("bucketed")
    reopened = open_store(tmp_path / "f")
    assert reopened.layout == "collection" and reopened.generation == 0
    assert reopened.get(("memories", "u1"), "k") is not None
    assert not [n for n in names(reopened) if ".g1." in n]


def test_purge_also_removes_the_leftovers_of_an_interrupted_migration(tmp_path: Path) -> None:
    store = open_store(tmp_path / "p")
    store.put(("memories", "u1"), "k", {"text": "mine"})
    store.put(("memories", "u2"), "k", {"text": "theirs"})
    leftover = _layout.BucketedLayout(4).open(store, ("memories", "u1"), create=True, generation=1)
    leftover.add(ids=["k"], embeddings=[[1.0] + [0.0] * 63], documents=["{}"], metadatas=[{"x": 1}])
    report = purge(store, ("memories", "u1"))
    assert report.items_deleted == 2
    assert leftover.count() == 0
    assert store.get(("memories", "u2"), "k") is not None
