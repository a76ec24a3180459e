"""ChromaMemoryStore as a LangGraph BaseStore, on three real Chroma backends.

Where LangGraph's ``InMemoryStore`` is the reference, the same assertions run on it too
(``any_store``), so differences show up as named test ids.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode
from langgraph.store.base import BaseStore, InvalidNamespaceError, PutOp
from langgraph.store.memory import InMemoryStore

from langchain_lifecycle_memory import ChromaMemoryStore, EmbeddingMismatchError, StoreUnavailableError
from tests.conftest import make_store


@pytest.fixture(params=["chroma-embedded", "chroma-memory", "chroma-server", "langgraph-inmemory"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path, embeddings: Any) -> BaseStore:
    kind = str(request.param)
    if kind == "langgraph-inmemory":
        return InMemoryStore(index={"dims": 512, "embed": embeddings, "fields": ["$"]})
    return make_store(kind.split("-", 1)[1], tmp_path, embeddings)


def test_put_get_roundtrip_nested(any_store: BaseStore) -> None:
    value = {"content": "I like Vim", "nested": {"a": [1, {"b": None}], "c": 1.5}, "tags": ["x", "y"], "ok": True}
    any_store.put(("memories", "u1"), "k1", value)
    item = any_store.get(("memories", "u1"), "k1")
    assert item is not None
    assert item.value == value
    assert item.namespace == ("memories", "u1")
    assert any_store.get(("memories", "u1"), "missing") is None


def test_delete(any_store: BaseStore) -> None:
    any_store.put(("memories", "u1"), "k1", {"content": "x"})
    any_store.delete(("memories", "u1"), "k1")
    assert any_store.get(("memories", "u1"), "k1") is None
    assert any_store.search(("memories", "u1")) == []


def test_created_at_survives_update(any_store: BaseStore) -> None:
    any_store.put(("memories", "u1"), "k1", {"content": "v1"})
    first = any_store.get(("memories", "u1"), "k1")
    time.sleep(0.01)
    any_store.put(("memories", "u1"), "k1", {"content": "v2"})
    second = any_store.get(("memories", "u1"), "k1")
    assert first is not None and second is not None
    assert second.updated_at > first.updated_at
    if isinstance(any_store, InMemoryStore):
        # The reference resets created_at on every put: the bug we don't copy.
        assert second.created_at > first.created_at
    else:
        assert second.created_at == first.created_at


def test_namespace_prefix_isolation(any_store: BaseStore) -> None:
    any_store.put(("memories", "u1"), "a", {"content": "u1 likes Vim"})
    any_store.put(("memories", "u1", "work"), "b", {"content": "u1 works at Acme"})
    any_store.put(("memories", "u2"), "c", {"content": "u2 likes Emacs"})
    any_store.put(("other", "u1"), "d", {"content": "not a memory"})
    keys = {i.key for i in any_store.search(("memories", "u1"), query="editor", limit=10)}
    assert keys == {"a", "b"}
    assert {i.key for i in any_store.search(("memories", "u2"), limit=10)} == {"c"}
    assert {i.key for i in any_store.search(("memories",), limit=10)} == {"a", "b", "c"}
    assert any_store.get(("memories", "u2"), "a") is None


def test_filters_all_operators(any_store: BaseStore) -> None:
    ns = ("memories", "f")
    for i in range(5):
        any_store.put(ns, f"k{i}", {"content": f"fact {i}", "n": i, "kind": "even" if i % 2 == 0 else "odd"})

    def keys(flt: dict[str, Any]) -> set[str]:
        return {i.key for i in any_store.search(ns, filter=flt, limit=20)}

    assert keys({"kind": "even"}) == {"k0", "k2", "k4"}
    assert keys({"n": {"$eq": 3}}) == {"k3"}
    assert keys({"n": {"$ne": 3}}) == {"k0", "k1", "k2", "k4"}
    assert keys({"n": {"$gt": 2}}) == {"k3", "k4"}
    assert keys({"n": {"$gte": 2}}) == {"k2", "k3", "k4"}
    assert keys({"n": {"$lt": 2}}) == {"k0", "k1"}
    assert keys({"n": {"$lte": 2}}) == {"k0", "k1", "k2"}
    # several keys at once (Chroma's where needs $and; LangGraph filters don't)
    assert keys({"kind": "even", "n": {"$gt": 0}}) == {"k2", "k4"}
    # filter with a semantic query
    hits = any_store.search(ns, query="fact 4", filter={"kind": "even"}, limit=20)
    assert {i.key for i in hits} == {"k0", "k2", "k4"}


def test_semantic_ranking_and_cosine_scores(any_store: BaseStore) -> None:
    ns = ("memories", "s")
    any_store.put(ns, "vim", {"content": "The user edits code in the Vim editor"})
    any_store.put(ns, "cat", {"content": "The user has a cat named Waffles"})
    any_store.put(ns, "tea", {"content": "用户最喜欢喝铁观音"})
    hits = any_store.search(ns, query="Which text editor do I use?", limit=3)
    assert hits[0].key == "vim"
    scores = [h.score for h in hits]
    assert all(s is not None and -1.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]


def test_limit_offset(any_store: BaseStore) -> None:
    ns = ("memories", "p")
    for i in range(6):
        any_store.put(ns, f"k{i}", {"content": f"note number {i}"})
    first = any_store.search(ns, query="note", limit=3)
    second = any_store.search(ns, query="note", limit=3, offset=3)
    assert len(first) == 3 and len(second) == 3
    assert not {i.key for i in first} & {i.key for i in second}


def test_list_namespaces(any_store: BaseStore) -> None:
    for ns in [("memories", "u1"), ("memories", "u1", "work"), ("memories", "u2"), ("docs", "u1")]:
        any_store.put(ns, "k", {"content": "x"})
    assert set(any_store.list_namespaces(prefix=("memories",))) == {
        ("memories", "u1"),
        ("memories", "u1", "work"),
        ("memories", "u2"),
    }
    assert set(any_store.list_namespaces(suffix=("u1",))) == {("memories", "u1"), ("docs", "u1")}
    assert set(any_store.list_namespaces(prefix=("*", "u1"))) == {
        ("memories", "u1"),
        ("memories", "u1", "work"),
        ("docs", "u1"),
    }
    assert set(any_store.list_namespaces(prefix=("memories",), max_depth=2)) == {("memories", "u1"), ("memories", "u2")}
    assert len(any_store.list_namespaces(limit=2)) == 2


def test_batch_results_in_input_order(store: ChromaMemoryStore) -> None:
    from langgraph.store.base import GetOp, ListNamespacesOp, SearchOp

    store.put(("memories", "u1"), "a", {"content": "alpha"})
    res = store.batch(
        [
            GetOp(("memories", "u1"), "a"),
            PutOp(("memories", "u1"), "b", {"content": "beta"}),
            SearchOp(("memories", "u1"), limit=10),
            ListNamespacesOp(),
            GetOp(("memories", "u1"), "zzz"),
        ]
    )
    assert res[0].value == {"content": "alpha"}
    assert res[1] is None
    assert {i.key for i in res[2]} == {"a", "b"}
    assert res[3] == [("memories", "u1")]
    assert res[4] is None


async def test_async_batch(store: ChromaMemoryStore) -> None:
    await store.aput(("memories", "u1"), "a", {"content": "alpha"})
    item = await store.aget(("memories", "u1"), "a")
    assert item is not None and item.value["content"] == "alpha"
    assert [i.key for i in await store.asearch(("memories", "u1"), query="alpha")] == ["a"]


def test_ttl_sweep_really_deletes(store: ChromaMemoryStore) -> None:
    ns = ("memories", "ttl")
    store.put(ns, "short", {"content": "expires"}, ttl=0.001)  # 0.06 s
    store.put(ns, "long", {"content": "stays"}, ttl=60)
    store.put(ns, "none", {"content": "no ttl"})
    time.sleep(0.2)
    assert store.sweep_ttl() == 1
    assert store.get(ns, "short") is None
    assert {i.key for i in store.search(ns)} == {"long", "none"}


def test_ttl_omit_expired(tmp_path: Path, embeddings: Any) -> None:
    store = make_store("memory", tmp_path, embeddings, ttl={"omit_expired": True, "default_ttl": 0.001})
    store.put(("memories", "u"), "k", {"content": "soon gone"})
    time.sleep(0.2)
    assert store.get(("memories", "u"), "k") is None
    assert store.search(("memories", "u")) == []


def test_persistence_across_reopen(tmp_path: Path, embeddings: Any) -> None:
    store = ChromaMemoryStore(tmp_path / "db", embeddings=embeddings)
    store.put(("memories", "u1"), "k", {"content": "我喜欢使用 Vim 编辑器"})
    del store
    reopened = ChromaMemoryStore(persist_directory=tmp_path / "db")
    item = reopened.get(("memories", "u1"), "k")
    assert item is not None and item.value["content"] == "我喜欢使用 Vim 编辑器"
    assert reopened.search(("memories", "u1"), query="编辑器")[0].key == "k"


def test_embedding_mismatch_names_the_fix(tmp_path: Path, embeddings: Any) -> None:
    ChromaMemoryStore(tmp_path / "db", embeddings=embeddings).put(("m", "u"), "k", {"content": "x"})
    with pytest.raises(EmbeddingMismatchError, match="reindex"):
        ChromaMemoryStore(tmp_path / "db", embeddings=DeterministicFakeEmbedding(size=512))
    assert issubclass(EmbeddingMismatchError, ValueError)


@pytest.mark.parametrize(
    ("namespace", "match"),
    [
        ((), "empty"),
        (("memories", "a.b"), r"'\.'"),
        (("memories", 1), "strings"),
        (("memories", "nul\x00"), "NUL"),
        (("memories", ""), "empty"),
        ("memories", "tuple"),
        (("langgraph", "x"), "reserved"),
    ],
)
def test_bad_namespaces_raise_clearly(mem_store: ChromaMemoryStore, namespace: Any, match: str) -> None:
    with pytest.raises(InvalidNamespaceError, match=match):
        mem_store.batch([PutOp(namespace, "k", {"content": "x"})])


def test_bad_values_raise_and_nothing_is_half_written(mem_store: ChromaMemoryStore) -> None:
    ns = ("memories", "u1")
    with pytest.raises(TypeError, match="JSON"):
        mem_store.batch([PutOp(ns, "good", {"content": "ok"}), PutOp(ns, "bad", {"when": {1, 2}})])
    assert mem_store.get(ns, "good") is None
    with pytest.raises(ValueError, match="NUL"):
        mem_store.put(ns, "k\x00", {"content": "x"})
    with pytest.raises(TypeError, match="dict"):
        mem_store.batch([PutOp(ns, "k", ["not", "a", "dict"])])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="operator"):
        mem_store.search(ns, filter={"n": {"$regex": "x"}})


def test_one_megabyte_text_roundtrips(mem_store: ChromaMemoryStore) -> None:
    big = "记忆" * 500_000  # 1M characters
    mem_store.put(("memories", "u1"), "big", {"content": big, "n": 1})
    item = mem_store.get(("memories", "u1"), "big")
    assert item is not None and item.value["content"] == big
    assert [i.key for i in mem_store.search(("memories", "u1"), filter={"n": 1})] == ["big"]


def test_server_down_is_a_clear_error(embeddings: Any) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(StoreUnavailableError, match="chroma run"):
        ChromaMemoryStore(host="127.0.0.1", port=port, embeddings=embeddings)


def test_graph_node_and_injected_store_tool_see_the_store(store: ChromaMemoryStore) -> None:
    from langchain_core.messages import AIMessage

    store.put(("memories", "u1"), "editor", {"content": "The user uses VS Code"})

    @tool
    def recall(query: str, store: Annotated[Any, InjectedStore()]) -> str:
        """Recall memories about the user."""
        return "; ".join(i.value["content"] for i in store.search(("memories", "u1"), query=query))

    def node(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        found = store.search(("memories", "u1"), query="editor")
        call = {"name": "recall", "args": {"query": "editor"}, "id": "call1"}
        return {"messages": [AIMessage(content=f"node saw: {found[0].value['content']}", tool_calls=[call])]}

    builder = StateGraph(MessagesState)
    builder.add_node("node", node)
    builder.add_node("tools", ToolNode([recall]))
    builder.add_edge(START, "node")
    builder.add_edge("node", "tools")
    graph = builder.compile(store=store)
    out = graph.invoke({"messages": [("user", "what editor?")]})
    texts = [m.content for m in out["messages"]]
    assert "node saw: The user uses VS Code" in texts
    assert "The user uses VS Code" in texts[-1]


def test_runtime_store_in_node(mem_store: ChromaMemoryStore) -> None:
    from langgraph.runtime import Runtime

    mem_store.put(("memories", "u9"), "k", {"content": "likes tea"})

    def node(state: MessagesState, runtime: Runtime) -> dict[str, Any]:
        assert runtime.store is not None
        item = runtime.store.get(("memories", "u9"), "k")
        return {"messages": [("ai", item.value["content"] if item else "nothing")]}

    builder = StateGraph(MessagesState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    out = builder.compile(store=mem_store).invoke({"messages": [("user", "hi")]})
    assert out["messages"][-1].content == "likes tea"


def test_a_reader_never_answers_from_a_snapshot_another_writer_made_stale(
    backend: str, tmp_path: Path, embeddings: Any
) -> None:
    """Two store objects on the same data (two workers; on the server, two HTTP clients)."""
    from langchain_lifecycle_memory import LifecycleRetriever, MemoryRecord

    writer = make_store(backend, tmp_path, embeddings)
    reader = make_store(backend, tmp_path, embeddings, collection_prefix=writer.prefix)
    if backend == "memory":  # two EphemeralClients need not share data: share the client instead
        reader = ChromaMemoryStore(client=writer.client, embeddings=embeddings, collection_prefix=writer.prefix)
    ns = ("memories", "u1")
    retriever = LifecycleRetriever(store=reader, namespace=ns)
    try:
        assert reader.revision(ns).token == "absent"
        vim = MemoryRecord(
            namespace=ns, content="用户喜欢使用 Vim 编辑器", entity="user", attribute="editor", value="Vim"
        )
        writer.put_record(vim)
        assert [d.page_content for d in retriever.invoke("我用什么编辑器？")] == [vim.content]
        before = reader.revision(ns)
        code = MemoryRecord(
            namespace=ns, content="用户现在使用 VS Code 编辑器", entity="user", attribute="editor", value="VS Code"
        )
        writer.put_records(
            [vim.transition("archived", superseded_by=code.id), code.model_copy(update={"supersedes": vim.id})]
        )
        assert reader.revision(ns) != before
        assert [d.page_content for d in retriever.invoke("我用什么编辑器？")] == [code.content]
        writer.delete_records(ns, [code.id])
        assert retriever.invoke("我用什么编辑器？") == []
    finally:
        if backend != "embedded":
            from tests.conftest import drop_store_collections

            drop_store_collections(writer)


def test_a_revision_stamp_that_fails_says_the_write_landed(
    mem_store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_lifecycle_memory import LifecycleRetriever, MemoryRecord

    ns = ("memories", "u1")
    first = MemoryRecord(namespace=ns, content="用户养了一条叫旺财的狗", entity="user", attribute="pet", value="旺财")
    mem_store.put_record(first)
    retriever = LifecycleRetriever(store=mem_store, namespace=ns)
    assert [d.page_content for d in retriever.invoke("我家狗叫什么名字？")] == [first.content]

    def down(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("connection refused")

    # The server goes away between the write and the stamp of its revision.
    from langchain_lifecycle_memory.store._buckets import Buckets

    monkeypatch.setattr(Buckets, "record_write", lambda *a, **k: mem_store._client(down))
    cat = MemoryRecord(namespace=ns, content="用户养了一只叫咪咪的猫", entity="user", attribute="cat", value="咪咪")
    with pytest.raises(StoreUnavailableError, match="reached Chroma.*Retry the write"):
        mem_store.put_record(cat)
    assert mem_store.get_record(ns, cat.id) is not None  # the record itself was written
    monkeypatch.undo()
    mem_store.put_record(cat)  # the retry stamps a revision; readers see the cat
    assert cat.content in [d.page_content for d in retriever.invoke("我家猫叫什么名字？")]
