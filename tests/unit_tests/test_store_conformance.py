"""LangGraph's store contract, run on every backend with ``InMemoryStore`` beside them.

Our own versions of the generic tests in LangGraph's store test files
(``libs/checkpoint/tests/test_store.py``, and ``test_store.py`` / ``test_ttl.py`` of
``checkpoint-sqlite`` and ``checkpoint-postgres``): the same behaviours, asserted on
``ChromaMemoryStore`` embedded (``PersistentClient``), in memory (``EphemeralClient``)
and on a ``chroma run`` server, and on LangGraph's ``InMemoryStore`` as the reference.
Where we differ on purpose, the test says so and the README lists it
("Differences from LangGraph's InMemoryStore").

Vectors come from a deterministic character-frequency embedder (no model), so scores
are exact and cheap; a query that shares the characters of one indexed text scores ~1.
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from langchain_lifecycle_memory import ChromaMemoryStore
from langchain_lifecycle_memory.store import chroma as C
from tests.conftest import SERVER_ENV, server_address
from tests.fake_embeddings import CharEmbeddings

DIMS = 64
BACKENDS = ["embedded", "memory", "server", "reference"]


EMB = CharEmbeddings()


def cosine(a: str, b: str) -> float:
    x, y = np.asarray(EMB.embed_query(a)), np.asarray(EMB.embed_query(b))
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


Factory = Callable[..., BaseStore]


@pytest.fixture(params=BACKENDS)
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    """``make(fields=..., ttl=..., index=True)`` builds a fresh store of the backend."""
    kind = str(request.param)
    made: list[ChromaMemoryStore] = []
    if kind == "server" and server_address() is None:
        pytest.skip(f"server backend: set {SERVER_ENV}=host:port to a `chroma run` server")

    def factory(fields: list[str] | None = None, ttl: dict[str, Any] | None = None, index: bool = True) -> BaseStore:
        config: Any = {"dims": DIMS, "embed": EMB, "fields": fields or ["$"]} if index else None
        if kind == "reference":
            if ttl is not None:
                pytest.skip("InMemoryStore has no TTL (supports_ttl=False)")
            return InMemoryStore(index=config)
        prefix = f"c{uuid.uuid4().hex[:12]}"
        kwargs: dict[str, Any] = {"collection_prefix": prefix, "index": config if index else False, "ttl": ttl}
        if not index:
            kwargs["embeddings"] = EMB
        if kind == "embedded":
            store = ChromaMemoryStore(tmp_path / f"chroma-{len(made)}", **kwargs)
        elif kind == "memory":
            store = ChromaMemoryStore(client=chromadb.EphemeralClient(), **kwargs)
        else:
            host, port = server_address()  # type: ignore[misc]
            store = ChromaMemoryStore(host=host, port=port, **kwargs)
        made.append(store)
        return store

    yield factory
    for store in made:
        store.stop_ttl_sweeper()
        if kind != "embedded":
            for col in store.client.list_collections():
                if col.name.startswith(store.prefix + "."):
                    store.client.delete_collection(col.name)


@pytest.fixture
def store(make: Factory) -> BaseStore:
    return make()


def is_reference(store: BaseStore) -> bool:
    return isinstance(store, InMemoryStore)


def keys(items: list[Any]) -> list[str]:
    return [i.key for i in items]


# ---------------------------------------------------------------------- batch
def test_batch_mixed_ops_answer_in_input_order(store: BaseStore) -> None:
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        [
            GetOp(("test", "foo"), "key1"),
            PutOp(("test", "bar"), "key2", {"data": "value2"}),
            SearchOp(("test",), filter={"data": "value1"}, limit=10),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            GetOp(("test",), "key3"),
        ]
    )
    assert isinstance(results[0], Item) and results[0].value == {"data": "value1"}
    assert results[0].namespace == ("test", "foo")
    assert results[1] is None
    assert keys(results[2]) == ["key1"]  # type: ignore[arg-type]
    assert {("test", "foo"), ("test", "bar")} <= set(results[3])  # type: ignore[arg-type]
    assert results[4] is None
    again = store.batch(
        [
            SearchOp(("test",), limit=5),
            GetOp(("test", "bar"), "key2"),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
            PutOp(("test",), "key3", {"data": "value3"}),
            GetOp(("test", "foo"), "key1"),
        ]
    )
    assert len(again[0]) >= 2  # type: ignore[arg-type]
    assert again[1].value == {"data": "value2"}  # type: ignore[union-attr]
    assert again[3] is None
    assert again[4].value == {"data": "value1"}  # type: ignore[union-attr]
    assert store.get(("test",), "key3").value == {"data": "value3"}  # type: ignore[union-attr]


def test_batch_reads_and_puts_of_one_key(store: BaseStore) -> None:
    """A documented difference: the reference answers reads before its puts, we after."""
    out = store.batch([GetOp(("ord",), "k"), PutOp(("ord",), "k", {"v": 1}), GetOp(("ord",), "k")])
    if is_reference(store):
        assert out[0] is None and out[2] is None
    else:
        assert out[0].value == {"v": 1} and out[2].value == {"v": 1}  # type: ignore[union-attr]
    assert store.get(("ord",), "k").value == {"v": 1}  # type: ignore[union-attr]


def test_batch_gets_puts_deletes(store: BaseStore) -> None:
    assert store.batch(
        [
            PutOp(("test",), "key1", {"data": "value1"}),
            PutOp(("test",), "key2", {"data": "value2"}),
            PutOp(("test",), "key3", None),
        ]
    ) == [None, None, None]
    got = store.batch([GetOp(("test",), "key1"), GetOp(("test",), "key2"), GetOp(("test",), "key3")])
    assert [g.key if g else None for g in got] == ["key1", "key2", None]  # type: ignore[union-attr]


def test_batch_searches(store: BaseStore) -> None:
    store.put(("test", "foo"), "key1", {"data": "value1", "tag": "a"})
    store.put(("test", "bar"), "key2", {"data": "value2", "tag": "a"})
    store.put(("test", "baz"), "key3", {"data": "value3", "tag": "b"})
    tagged, two, one = store.batch(
        [
            SearchOp(("test",), filter={"tag": "a"}, limit=10),
            SearchOp(("test",), limit=2),
            SearchOp(("test", "foo"), limit=10),
        ]
    )
    assert sorted(keys(tagged)) == ["key1", "key2"]  # type: ignore[arg-type]
    assert len(two) == 2  # type: ignore[arg-type]
    assert [i.namespace for i in one] == [("test", "foo")]  # type: ignore[union-attr]


def test_batch_list_namespaces(store: BaseStore) -> None:
    data = [("test", "documents", "public"), ("test", "documents", "private"), ("test", "images", "public")]
    data.append(("prod", "documents", "public"))
    for ns in data:
        store.put(ns, "doc", {"content": "x"})
    everything, shallow, public = store.batch(
        [
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            ListNamespacesOp(match_conditions=None, max_depth=2, limit=10, offset=0),
            ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("public",)),), limit=10, offset=0),
        ]
    )
    assert sorted(everything) == sorted(data)  # type: ignore[arg-type]
    assert sorted(shallow) == [("prod", "documents"), ("test", "documents"), ("test", "images")]  # type: ignore[arg-type]
    assert all(ns[-1] == "public" for ns in public) and len(public) == 3  # type: ignore[union-attr,arg-type]


async def test_abatch_and_async_methods(store: BaseStore) -> None:
    await store.aput(("a", "b"), "k", {"text": "async hello"})
    assert (await store.aget(("a", "b"), "k")).value == {"text": "async hello"}  # type: ignore[union-attr]
    assert keys(await store.asearch(("a",), query="hello")) == ["k"]
    assert await store.alist_namespaces(prefix=("a",)) == [("a", "b")]
    out = await store.abatch([GetOp(("a", "b"), "k"), SearchOp(("a",), limit=1)])
    assert out[0].key == "k" and keys(out[1]) == ["k"]  # type: ignore[union-attr,arg-type]
    await store.adelete(("a", "b"), "k")
    assert await store.aget(("a", "b"), "k") is None


# ---------------------------------------------------------------------- basic ops
def test_put_get_update_delete(store: BaseStore) -> None:
    ns = ("test", "documents")
    store.put(ns, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(ns, "doc1")
    assert item is not None and item.namespace == ns and item.key == "doc1"
    assert item.value == {"title": "Test Document", "content": "Hello, World!"}
    assert item.created_at is not None and item.updated_at is not None
    store.put(ns, "doc1", {"title": "Updated", "content": "Hello, LangGraph!"})
    updated = store.get(ns, "doc1")
    assert updated is not None and updated.value["title"] == "Updated"
    assert updated.updated_at >= item.updated_at
    assert store.get(("test", "other_documents"), "doc1") is None
    store.put(ns, "doc2", {"title": "Another", "content": "Greetings!"})
    assert sorted(keys(store.search(("test",), limit=10))) == ["doc1", "doc2"]
    assert ("test", "documents") in store.list_namespaces(prefix=("test",))
    store.delete(ns, "doc1")
    store.delete(ns, "doc2")
    store.delete(ns, "never-existed")
    assert store.get(ns, "doc1") is None and store.search(("test",)) == []


def test_invalid_namespaces_raise(store: BaseStore) -> None:
    for bad in [(), ("the", "thing.about"), ("some", "fun", "")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "foo", {"foo": "bar"})
    with pytest.raises(InvalidNamespaceError):
        store.put(("langgraph", "foo"), "bar", {"foo": "bar"})
    ns = ("foo", "langgraph", "foo")  # only the root label is reserved
    store.put(ns, "bar", {"foo": "bar"})
    assert store.get(ns, "bar").value == {"foo": "bar"}  # type: ignore[union-attr]
    assert store.search(ns, query="bar")[0].value == {"foo": "bar"}
    store.delete(ns, "bar")
    assert store.get(ns, "bar") is None


def test_langgraph_root_through_batch(store: BaseStore) -> None:
    """A documented difference: a raw ``PutOp`` under 'langgraph' passes the reference."""
    op = PutOp(("langgraph", "foo"), "bar", {"foo": "bar"})
    if is_reference(store):
        store.batch([op])
        assert store.get(("langgraph", "foo"), "bar") is not None
    else:
        with pytest.raises(InvalidNamespaceError):
            store.batch([op])


# ---------------------------------------------------------------------- list_namespaces
NAMESPACES = [
    ("a", "b", "c"),
    ("a", "b", "d", "e"),
    ("a", "b", "d", "i"),
    ("a", "b", "f"),
    ("a", "c", "f"),
    ("b", "a", "f"),
    ("users", "123"),
    ("users", "456", "settings"),
    ("admin", "users", "789"),
]


def test_list_namespaces_prefix_suffix_depth_paging(store: BaseStore) -> None:
    assert store.list_namespaces() == []
    for i, ns in enumerate(NAMESPACES):
        store.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})
    ab = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "b"))) == ab
    assert sorted(store.list_namespaces(suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert sorted(store.list_namespaces(prefix=("a",), suffix=("f",))) == [("a", "b", "f"), ("a", "c", "f")]
    assert sorted(store.list_namespaces(prefix=("a", "b"), max_depth=3)) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == ab[:2]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == ab[2:]
    assert sorted(store.list_namespaces(prefix=("a", "*", "f"))) == [("a", "b", "f"), ("a", "c", "f")]
    assert sorted(store.list_namespaces(suffix=("*", "f"))) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]
    assert sorted(store.list_namespaces()) == sorted(NAMESPACES)
    assert sorted(store.list_namespaces(max_depth=2)) == sorted({ns[:2] for ns in NAMESPACES})


def test_list_namespaces_wildcards(store: BaseStore) -> None:
    for i, ns in enumerate(
        [
            ("users", "123"),
            ("users", "456"),
            ("users", "789", "settings"),
            ("admin", "users", "789"),
            ("guests", "123"),
            ("guests", "456", "preferences"),
        ]
    ):
        store.put(ns, f"id_{i}", {"data": i})
    assert sorted(store.list_namespaces(prefix=("users", "*"))) == [
        ("users", "123"),
        ("users", "456"),
        ("users", "789", "settings"),
    ]
    assert store.list_namespaces(suffix=("*", "preferences")) == [("guests", "456", "preferences")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []


def test_list_namespaces_pagination_is_sorted(store: BaseStore) -> None:
    for i in range(12):
        store.put(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": i})
    pages = [store.list_namespaces(prefix=("namespace",), limit=5, offset=o) for o in (0, 5, 10)]
    assert pages == [[("namespace", f"sub_{i:02d}") for i in range(o, min(o + 5, 12))] for o in (0, 5, 10)]


def test_list_namespaces_deep_wildcards(store: BaseStore) -> None:
    p = "pfx"
    spaces = [
        (p, "test", "documents", "public", p),
        (p, "test", "documents", "private", p),
        (p, "test", "images", "public", p),
        (p, "test", "images", "private", p),
        (p, "prod", "documents", "public", p),
        (p, "prod", "documents", "some", "nesting", "public", p),
        (p, "prod", "documents", "private", p),
    ]
    for ns in spaces:
        store.put(ns, "dummy", {"content": "dummy"})
    assert len(store.list_namespaces(prefix=(p, "test"))) == 4
    assert len(store.list_namespaces(prefix=(p, "test", "documents"))) == 2
    assert len(store.list_namespaces(suffix=("public", p))) == 4
    assert len(store.list_namespaces(prefix=(p, "test"), suffix=("public", p))) == 2
    assert len(store.list_namespaces(prefix=(p, "*", "documents"))) == 5
    assert len(store.list_namespaces(suffix=("*", "public", p))) == 4
    assert store.list_namespaces(suffix=("some", "*", "public", p)) == [spaces[5]]
    depth4 = store.list_namespaces(max_depth=4, prefix=(p, "*", "documents"))
    assert len(set(depth4)) == len(depth4) == 5
    assert len(store.list_namespaces(prefix=(p,), offset=3)) == len(spaces) - 3
    assert set(store.list_namespaces(prefix=(p,))) == set(spaces)


def test_list_namespaces_segment_boundaries(store: BaseStore) -> None:
    for ns in [
        ("foo",),
        ("foo", "child"),
        ("foobar",),
        ("foobar", "baz"),
        ("uid", "users", "alice"),
        ("uid", "users", "malice"),
        ("uid", "a", "b", "alice"),
    ]:
        store.put(ns, "k", {"v": 1})
    assert set(store.list_namespaces(prefix=["foo"], limit=100)) == {("foo",), ("foo", "child")}
    assert set(store.list_namespaces(suffix=["alice"], limit=100)) == {
        ("uid", "users", "alice"),
        ("uid", "a", "b", "alice"),
    }
    assert set(store.list_namespaces(prefix=["uid", "*", "alice"], limit=100)) == {("uid", "users", "alice")}
    assert len(store.list_namespaces(prefix=["uid"], limit=100)) == 3


def test_list_namespaces_after_last_delete(store: BaseStore) -> None:
    """A documented difference: the reference still lists a namespace it emptied (SQLite and
    Postgres stores don't); we follow SQLite/Postgres."""
    store.put(("gone",), "k", {"v": 1})
    store.put(("kept",), "k", {"v": 1})
    store.delete(("gone",), "k")
    assert store.list_namespaces() == ([("gone",), ("kept",)] if is_reference(store) else [("kept",)])


# ---------------------------------------------------------------------- search scope & filters
def test_search_prefix_stops_at_label_boundaries(store: BaseStore) -> None:
    spaces = {("foo",), ("foo", "child"), ("foo", "child", "deep"), ("foobar",), ("foobar", "baz"), ("foo2",)}
    for ns in spaces:
        store.put(ns, "k", {"v": 1})

    def found(prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
        return {i.namespace for i in store.search(prefix, limit=100)}

    assert found(("foo",)) == {("foo",), ("foo", "child"), ("foo", "child", "deep")}
    assert found(("foobar",)) == {("foobar",), ("foobar", "baz")}
    assert found(("foo2",)) == {("foo2",)}
    assert found(("fo",)) == set()
    assert found(()) == spaces


def test_search_prefix_labels_are_literal_and_case_sensitive(store: BaseStore) -> None:
    for ns in [("user_1",), ("user_1", "child"), ("userX1",), ("a%b",), ("axxb",), ("Foo",), ("foo",)]:
        store.put(ns, "k", {"v": 1})

    def found(prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
        return {i.namespace for i in store.search(prefix, limit=100)}

    assert found(("user_1",)) == {("user_1",), ("user_1", "child")}
    assert found(("a%b",)) == {("a%b",)}
    assert found(("foo",)) == {("foo",)} and found(("Foo",)) == {("Foo",)}


def test_a_star_in_a_search_prefix_is_a_literal_label(store: BaseStore) -> None:
    """LangGraph matches search prefixes literally (wildcards belong to ``list_namespaces``)."""
    for ns in [("star*",), ("starX",), ("docs",)]:
        store.put(ns, "k", {"v": 1})
    assert {i.namespace for i in store.search(("star*",))} == {("star*",)}
    assert store.search(("*",)) == []


def test_labels_with_a_trailing_newline_are_distinct(store: BaseStore) -> None:
    store.put(("users", "alice"), "k", {"v": 1})
    store.put(("users", "alice\n"), "k", {"v": 2})
    assert set(store.list_namespaces(suffix=["alice"], limit=100)) == {("users", "alice")}
    assert set(store.list_namespaces(prefix=["users", "alice"], limit=100)) == {("users", "alice")}
    assert store.get(("users", "alice\n"), "k").value == {"v": 2}  # type: ignore[union-attr]


def test_search_without_query_filters_and_pages(store: BaseStore) -> None:
    base = "items"
    data = [
        ((base, "documents", "user1"), {"title": "Doc 1", "author": "John Doe", "tags": ["important"]}),
        ((base, "documents", "user2"), {"title": "Doc 2", "author": "Jane Smith", "tags": ["draft"]}),
        ((base, "reports", "department1"), {"title": "Report A", "author": "John Doe", "tags": ["final"]}),
        ((base, "reports", "department2"), {"title": "Report B", "author": "Alice Johnson", "tags": ["draft"]}),
    ]
    for ns, value in data:
        store.put(ns, f"item_{ns[-1]}", value)
    assert len(store.search((base, "documents"))) == 2
    assert {i.namespace[1] for i in store.search((base, "reports"))} == {"reports"}
    first, second = store.search((base,), limit=2), store.search((base,), limit=2, offset=2)
    assert len(first) == len(second) == 2 and set(keys(first)).isdisjoint(keys(second))
    assert len(store.search((base,))) == 4
    assert len(store.search((base,), offset=3)) == 1
    assert {i.value["author"] for i in store.search((base,), filter={"author": "John Doe"})} == {"John Doe"}
    assert len(store.search((base,), filter={"author": "John Doe"})) == 2
    assert len(store.search((base,), filter={"tags": ["draft"]})) == 2


def test_search_without_query_is_newest_first(store: BaseStore) -> None:
    for k in ("a", "b", "c"):
        store.put(("order",), k, {"k": k})
        time.sleep(0.002)
    store.put(("order",), "a", {"k": "a2"})
    got = keys(store.search(("order",)))
    if is_reference(store):
        assert sorted(got) == ["a", "b", "c"]  # the reference keeps insertion order
    else:
        assert got == ["a", "c", "b"]


def test_filter_operators_and_value_types(store: BaseStore) -> None:
    for k, price in (("item1", 10), ("item2", 20), ("item3", 30), ("item4", -10)):
        store.put(("items",), k, {"price": price, "flag": price > 15, "name": f"n{price}"})

    def found(flt: dict[str, Any]) -> list[str]:
        return sorted(keys(store.search(("items",), filter=flt, limit=10)))

    assert found({"price": {"$gt": 15}}) == ["item2", "item3"]
    assert found({"price": {"$gte": 20, "$lt": 30}}) == ["item2"]
    assert found({"price": {"$lte": 10}}) == ["item1", "item4"]
    assert found({"price": {"$ne": 10}}) == ["item2", "item3", "item4"]
    assert found({"price": {"$eq": 30}}) == ["item3"]
    assert found({"price": {"$lt": float("inf")}}) == ["item1", "item2", "item3", "item4"]
    assert found({"price": {"$gt": float("-inf")}}) == ["item1", "item2", "item3", "item4"]
    assert found({"price": {"$eq": float("nan")}}) == []
    assert found({"price": {"$lt": 10**100}}) == ["item1", "item2", "item3", "item4"]
    assert found({"price": {"$lt": 0}}) == ["item4"]
    assert found({"flag": True}) == ["item2", "item3"]
    assert found({"flag": False}) == ["item1", "item4"]
    assert found({"missing": 1}) == []


def test_filter_values_are_data_not_syntax(store: BaseStore) -> None:
    store.put(("docs",), "doc1", {"access": "public", "title": "Public"})
    store.put(("docs",), "doc2", {"access": "private", "title": "Private"})
    store.put(("docs",), "doc3", {"title": "O'Brien's Document", "access": "public"})
    for hostile in ("public' OR '1'='1", "public'; --", "public\x00' OR '1'='1", "''''", "public' OR 'א'='א"):
        assert store.search(("docs",), filter={"access": hostile}) == []
    assert keys(store.search(("docs",), filter={"title": "O'Brien's Document"})) == ["doc3"]


def test_filter_keys_with_hyphens_digits_and_nesting(store: BaseStore) -> None:
    store.put(("docs",), "hyphen", {"access-level": "public", "user": {"access-level": "nested"}})
    store.put(("docs",), "digit", {"123abc": "ok", "user": {"123abc": "ok2"}})
    assert keys(store.search(("docs",), filter={"access-level": "public"})) == ["hyphen"]
    assert keys(store.search(("docs",), filter={"123abc": "ok"})) == ["digit"]
    assert keys(store.search(("docs",), filter={"user": {"123abc": "ok2"}})) == ["digit"]


# ---------------------------------------------------------------------- vector search
def test_vector_insert_and_rank(store: BaseStore) -> None:
    docs = {
        "doc1": {"text": "short text"},
        "doc2": {"text": "longer text document"},
        "doc3": {"text": "longest text document here"},
        "doc4": {"description": "text in description field"},
        "doc5": {"content": "text in content field"},
    }
    for k, v in docs.items():
        store.put(("test",), k, v)
    got = store.search(("test",), query="long text")
    assert {"doc2", "doc3"} <= set(keys(got))
    scores = [i.score for i in got]
    assert all(s is not None for s in scores) and scores == sorted(scores, reverse=True)  # type: ignore[type-var]


def test_vector_update_reembeds_and_index_false(store: BaseStore) -> None:
    store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("test",), "doc2", {"text": "something about dogs"})
    store.put(("test",), "doc3", {"text": "text about birds"})
    first = store.search(("test",), query="Zany Xerxes")
    assert first[0].key == "doc1"
    store.put(("test",), "doc1", {"text": "new text about dogs"})
    after = next(i.score for i in store.search(("test",), query="Zany Xerxes") if i.key == "doc1")
    assert after < first[0].score  # type: ignore[operator]
    store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    top = store.search(("test",), query="new text about dogs", limit=3)
    assert "doc4" not in keys(top)
    everything = store.search(("test",), query="new text about dogs", limit=10)
    assert everything[-1].key == "doc4" and everything[-1].score is None


def test_vector_search_with_filters(store: BaseStore) -> None:
    docs = {
        "doc1": {"text": "red apple", "color": "red", "score": 4.5},
        "doc2": {"text": "red car", "color": "red", "score": 3.0},
        "doc3": {"text": "green apple", "color": "green", "score": 4.0},
        "doc4": {"text": "blue car", "color": "blue", "score": 3.5},
    }
    for k, v in docs.items():
        store.put(("test",), k, v)
    assert keys(store.search(("test",), query="apple", filter={"color": "red"})) == ["doc1", "doc2"]
    assert store.search(("test",), query="car", filter={"color": "red"})[0].key == "doc2"
    high = store.search(("test",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
    assert sorted(keys(high)) == ["doc1", "doc3", "doc4"] and high[0].key == "doc4"
    assert store.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})[0].key == "doc3"


def test_vector_search_pagination(store: BaseStore) -> None:
    for i in range(5):
        store.put(("test",), f"doc{i}", {"text": f"test document number {i}"})
    page1 = store.search(("test",), query="test", limit=2)
    page2 = store.search(("test",), query="test", limit=2, offset=2)
    assert len(page1) == len(page2) == 2 and set(keys(page1)).isdisjoint(keys(page2))
    assert page1[0].score >= page1[1].score >= page2[0].score >= page2[1].score  # type: ignore[operator]
    assert len(store.search(("test",), query="test", limit=10)) == 5


def test_vector_search_odd_queries(store: BaseStore) -> None:
    store.put(("test",), "doc1", {"text": "test document"})
    for query in ("", None, "test " * 100, "test!@#$%^&*()"):
        assert keys(store.search(("test",), query=query)) == ["doc1"]


def test_score_is_the_cosine_of_the_indexed_text(make: Factory) -> None:
    store = make(fields=["key0"])
    store.put(("test",), "doc", {"key0": "aaa"}, index=["key0", "key1"])
    for query in ("aaa", "bbb", "abcd", "poisson"):
        (hit,) = store.search((), query=query)
        assert hit.score == pytest.approx(cosine("aaa", query), abs=1e-3)


def test_several_fields_are_embedded_separately(make: Factory) -> None:
    store = make(fields=["key0", "key1", "key3"])
    store.put(("test",), "doc1", {"key1": "xxx", "key2": "yyy", "key3": "zzz"})  # no key0: fine
    store.put(("test",), "doc2", {"key0": "uuu", "key1": "vvv", "key2": "www", "key3": "xxx"})
    both = store.search(("test",), query="xxx")
    assert sorted(keys(both)) == ["doc1", "doc2"]
    assert both[0].score == pytest.approx(1.0, abs=1e-5) and both[1].score == pytest.approx(1.0, abs=1e-5)
    uuu = store.search(("test",), query="uuu")
    assert uuu[0].key == "doc2" and uuu[0].score == pytest.approx(1.0, abs=1e-5)
    assert uuu[0].score > uuu[1].score  # type: ignore[operator]
    zzz = store.search(("test",), query="zzz")
    assert zzz[0].key == "doc1" and zzz[0].score > zzz[1].score  # type: ignore[operator]
    assert all(i.score < 0.99 for i in store.search(("test",), query="www"))  # type: ignore[operator]


def test_operation_level_fields(make: Factory) -> None:
    store = make(fields=["key17"])
    store.put(("test",), "doc3", {"key0": "aaa", "key1": "bbb", "key2": "ccc", "key3": "ddd"}, index=["key0", "key1"])
    store.put(("test",), "doc4", {"key0": "eee", "key1": "bbb", "key2": "fff", "key3": "ggg"}, index=["key1", "key3"])
    aaa = store.search(("test",), query="aaa")
    assert aaa[0].key == "doc3" and aaa[0].score > aaa[1].score  # type: ignore[operator]
    ggg = store.search(("test",), query="ggg")
    assert ggg[0].key == "doc4" and ggg[0].score > ggg[1].score  # type: ignore[operator]
    bbb = store.search(("test",), query="bbb")
    assert sorted(keys(bbb)) == ["doc3", "doc4"] and bbb[0].score == pytest.approx(bbb[1].score, abs=1e-5)
    assert all(i.score < 0.99 for i in store.search(("test",), query="ccc"))  # type: ignore[operator]
    store.put(("test",), "doc5", {"key0": "hhh", "key1": "iii"}, index=False)
    hhh = store.search(("test",), query="hhh")
    assert len(hhh) == 3 and next(i for i in hhh if i.key == "doc5").score is None
    assert len(store.search(("test",))) == 3


def test_list_elements_are_embedded_separately(make: Factory) -> None:
    """``messages[*].content``: one vector per element, an item scores by its best line."""
    store = make(fields=["messages[*].content"])
    filler = [{"content": f"small talk number {i} about weather and lunch"} for i in range(8)]
    store.put(("chat",), "long", {"messages": [*filler, {"content": "zqzq"}]})
    store.put(("chat",), "short", {"messages": [{"content": "about lunch"}]})
    hits = store.search(("chat",), query="zqzq")
    assert hits[0].key == "long" and hits[0].score == pytest.approx(1.0, abs=1e-5)


def test_an_update_or_delete_drops_the_old_element_vectors(make: Factory) -> None:
    store = make(fields=["messages[*].content"])
    store.put(("chat",), "a", {"messages": [{"content": "about lunch"}, {"content": "zqzq"}, {"content": "vwvw"}]})
    store.put(("chat",), "b", {"messages": [{"content": "weather talk"}]})
    assert store.search(("chat",), query="vwvw")[0].score == pytest.approx(1.0, abs=1e-5)
    store.put(("chat",), "a", {"messages": [{"content": "about lunch"}]})
    if is_reference(store):  # a documented difference: the reference keeps the removed elements' vectors
        assert store.search(("chat",), query="vwvw")[0].score == pytest.approx(1.0, abs=1e-5)
        return
    assert all(i.score < 0.99 for i in store.search(("chat",), query="vwvw"))  # type: ignore[operator]
    assert all(i.score < 0.99 for i in store.search(("chat",), query="zqzq"))  # type: ignore[operator]
    store.delete(("chat",), "a")
    assert keys(store.search(("chat",), query="about lunch")) == ["b"]
    if isinstance(store, ChromaMemoryStore):
        assert store._view(("chat",)).count() == 1  # type: ignore[union-attr]  # no vector row outlives its item


def test_non_ascii_text_and_labels(store: BaseStore) -> None:
    texts = {"1": "这是中文", "2": "これは日本語です", "3": "이건 한국어야", "4": "Это русский", "5": "यह रूसी है"}
    for k, t in texts.items():
        store.put(("user_123", "memories"), k, {"text": t})
    for k, t in texts.items():
        assert store.search(("user_123", "memories"), query=t)[0].key == k
    store.put(("用户", "記憶"), "ключ", {"text": "ok"})
    assert store.get(("用户", "記憶"), "ключ").value == {"text": "ok"}  # type: ignore[union-attr]
    assert ("用户", "記憶") in store.list_namespaces()


def test_store_without_index_searches_by_filter_only(make: Factory) -> None:
    store = make(index=False)
    store.put(("plain",), "k1", {"text": "hello", "n": 1})
    store.put(("plain",), "k2", {"text": "world", "n": 2})
    got = store.search(("plain",), query="hello", filter={"n": {"$gte": 1}})
    assert sorted(keys(got)) == ["k1", "k2"] and all(i.score is None for i in got)


async def test_concurrent_async_writes_then_searches(store: BaseStore) -> None:
    colors, things = ["red", "blue", "green", "yellow", "purple"], ["apple", "car", "house", "book", "phone"]
    docs = [
        (f"doc{i}", {"text": f"{colors[i % 5]} {things[i % 5]}", "color": colors[i % 5], "index": i}) for i in range(30)
    ]
    await asyncio.gather(*[store.aput(("test",), k, v) for k, v in docs])
    await asyncio.gather(*[store.adelete(("test",), k) for k, _ in docs[::2]])
    await asyncio.gather(*[store.aput(("test",), k, v) for k, v in docs[::2]])
    queries = [("apple", {"color": "red"}), ("car", {"color": "blue"}), ("phone", {"index": {"$lte": 10}})]
    results = await asyncio.gather(*[store.asearch(("test",), query=q, filter=f) for q, f in queries])
    for hits, (_, flt) in zip(results, queries):
        assert hits
        for hit in hits:
            if "color" in flt:
                assert hit.value["color"] == flt["color"]
            if "index" in flt:
                assert hit.value["index"] <= 10
    assert len(await store.asearch(("test",), limit=100)) == 30


# ---------------------------------------------------------------------- TTL
def expire_now(store: BaseStore, ns: tuple[str, ...], key: str) -> None:
    """Move an item's deadline into the past without deleting it (an unswept item)."""
    assert isinstance(store, ChromaMemoryStore)
    view = store._view(ns)
    assert view is not None
    view.update(ids=[key], metadatas=[{C.SYS_EXPIRES: time.time() - 60}])


def expires(store: BaseStore, ns: tuple[str, ...], key: str) -> float:
    assert isinstance(store, ChromaMemoryStore)
    view = store._view(ns)
    assert view is not None
    return float(view.get(ids=[key], include=["metadatas"])["metadatas"][0][C.SYS_EXPIRES])


def test_ttl_sweep_custom_and_default(make: Factory) -> None:
    store = make(ttl={"default_ttl": 5.0})
    store.put(("test",), "short", {"v": 1}, ttl=1.0)
    store.put(("test",), "default", {"v": 2})
    store.put(("test",), "forever", {"v": 3}, ttl=None)
    assert store.sweep_ttl() == 0  # type: ignore[attr-defined]
    assert expires(store, ("test",), "default") - expires(store, ("test",), "short") == pytest.approx(240, abs=5)
    expire_now(store, ("test",), "short")
    assert store.sweep_ttl() == 1  # type: ignore[attr-defined]
    assert store.get(("test",), "short") is None
    assert store.get(("test",), "default") is not None and store.get(("test",), "forever") is not None
    assert keys(store.search(("test",), filter={"v": 2})) == ["default"]


def test_ttl_refresh_on_read(make: Factory) -> None:
    store = make(ttl={"default_ttl": 1.0, "refresh_on_read": True})
    store.put(("test",), "k", {"v": 1})
    store.put(("test",), "s", {"v": 2})
    before_k, before_s = expires(store, ("test",), "k"), expires(store, ("test",), "s")
    time.sleep(0.05)
    store.get(("test",), "k", refresh_ttl=False)
    assert expires(store, ("test",), "k") == before_k
    store.get(("test",), "k")
    assert expires(store, ("test",), "k") > before_k
    store.search(("test",), filter={"v": 2})
    assert expires(store, ("test",), "s") > before_s


def test_ttl_sweeper_thread(make: Factory) -> None:
    store = make(ttl={"default_ttl": 1.0, "sweep_interval_minutes": 0.002})
    store.put(("test",), "k", {"v": 1})
    expire_now(store, ("test",), "k")
    store.start_ttl_sweeper()  # type: ignore[attr-defined]
    deadline = time.time() + 10
    while store.get(("test",), "k", refresh_ttl=False) is not None and time.time() < deadline:
        time.sleep(0.05)
    assert store.stop_ttl_sweeper(timeout=5)  # type: ignore[attr-defined]
    assert store.get(("test",), "k", refresh_ttl=False) is None


def test_omit_expired_hides_unswept_items_everywhere(make: Factory) -> None:
    store = make(ttl={"default_ttl": 10.0, "omit_expired": True})
    store.put(("omit", "expired"), "e", {"data": "gone"})
    store.put(("omit", "control"), "c", {"data": "keep"}, ttl=None)
    expire_now(store, ("omit", "expired"), "e")
    assert store.get(("omit", "expired"), "e") is None
    assert store.get(("omit", "control"), "c") is not None
    assert store.search(("omit", "expired")) == [] and store.search(("omit", "expired"), query="gone") == []
    assert keys(store.search(("omit", "control"))) == ["c"]
    spaces = store.list_namespaces(prefix=("omit",))
    assert ("omit", "expired") not in spaces and ("omit", "control") in spaces


def test_expired_items_stay_visible_without_omit(make: Factory) -> None:
    store = make(ttl={"default_ttl": 10.0})
    store.put(("keep",), "k", {"data": "still-here"})
    expire_now(store, ("keep",), "k")
    assert store.get(("keep",), "k", refresh_ttl=False) is not None
    assert keys(store.search(("keep",), refresh_ttl=False)) == ["k"]
    assert ("keep",) in store.list_namespaces(prefix=("keep",))


def test_omit_expired_refresh_does_not_resurrect(make: Factory) -> None:
    store = make(ttl={"default_ttl": 10.0, "omit_expired": True})
    for k in ("expired", "live_get", "live_search"):
        store.put(("refresh",), k, {"n": k})
    expire_now(store, ("refresh",), "expired")
    dead = expires(store, ("refresh",), "expired")
    live_get, live_search = expires(store, ("refresh",), "live_get"), expires(store, ("refresh",), "live_search")
    time.sleep(0.05)
    assert store.get(("refresh",), "expired", refresh_ttl=True) is None
    assert "expired" not in keys(store.search(("refresh",), refresh_ttl=True))
    assert expires(store, ("refresh",), "expired") == dead
    assert store.get(("refresh",), "live_get", refresh_ttl=True) is not None
    assert expires(store, ("refresh",), "live_get") > live_get
    assert expires(store, ("refresh",), "live_search") > live_search


def test_omit_expired_pages_count_live_items_only(make: Factory) -> None:
    store = make(ttl={"default_ttl": 10.0, "omit_expired": True})
    for k in ("c", "b", "expired", "a"):  # newest first: a, expired, b, c
        store.put(("page",), k, {"k": k})
        time.sleep(0.002)
    expire_now(store, ("page",), "expired")
    assert keys(store.search(("page",), limit=2)) == ["a", "b"]
    assert keys(store.search(("page",), limit=2, offset=2)) == ["c"]


def test_nan_is_not_a_number_anyone_can_store(store: BaseStore) -> None:
    """Values must be JSON; the reference keeps NaN in memory, we refuse it clearly."""
    if is_reference(store):
        store.put(("n",), "k", {"x": math.nan})
        return
    with pytest.raises(TypeError, match="JSON"):
        store.put(("n",), "k", {"x": math.nan})


def test_a_query_search_returns_items_put_without_an_index(store: BaseStore) -> None:
    store.put(("ledger",), "unindexed", {"text": "quarterly invoice totals"}, index=False)
    found = store.search(("ledger",), query="invoice totals")
    assert [(i.key, i.score) for i in found] == [("unindexed", None)]


def test_deleting_a_key_never_put_leaves_no_namespace_behind(store: BaseStore) -> None:
    store.put(("ledger", "a"), "k", {"text": "quarterly invoice totals"})
    store.delete(("ledger", "b"), "never-put")  # cleanup loops delete whether or not the key exists
    store.delete(("ledger", "a"), "never-put-either")
    assert keys(store.search(("ledger",), query="invoice")) == ["k"]
    if isinstance(store, ChromaMemoryStore):  # InMemoryStore lists it (a defaultdict's side effect)
        assert store.list_namespaces() == [("ledger", "a")]


def test_ttl_none_never_expires_under_a_default_ttl(make: Factory) -> None:
    store = make(ttl={"default_ttl": 0.001})  # 60 ms
    store.put(("test",), "forever", {"v": 1}, ttl=None)  # LangGraph: None means no expiration
    store.put(("test",), "default", {"v": 2})
    time.sleep(0.2)
    assert store.sweep_ttl() == 1  # type: ignore[attr-defined]
    assert store.get(("test",), "forever") is not None and store.get(("test",), "default") is None
