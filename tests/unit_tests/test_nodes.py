"""The facade and the LangGraph nodes, driven by a gold-replaying fake extractor."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_lifecycle_memory import ChromaMemoryStore, Fact, MemoryStatus
from langchain_lifecycle_memory.errors import ExtractionError, StoreUnavailableError
from langchain_lifecycle_memory.graph.memory import LifecycleMemory
from langchain_lifecycle_memory.graph.nodes import (
    MEMORY_MESSAGE_ID,
    create_memory_agent,
    create_memory_reader,
    create_memory_writer,
    wait_for_memory_writes,
)
from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever

GOLD = {
    "我喜欢使用 Vim 编辑器": Fact(
        entity="user",
        attribute="editor",
        value="Vim",
        content="用户喜欢使用 Vim 编辑器",
        kind="preference",
        confidence=0.9,
    ),
    "我现在改用 VS Code 了": Fact(
        entity="user",
        attribute="editor",
        value="VS Code",
        content="用户现在使用 VS Code 编辑器",
        kind="preference",
        confidence=0.9,
    ),
}


def _gold(inputs: dict[str, Any]) -> list[Fact]:
    return [GOLD[m.content] for m in inputs["messages"] if isinstance(m, HumanMessage) and m.content in GOLD]


gold_extractor = RunnableLambda(_gold, name="gold_extractor")


def _failing(inputs: dict[str, Any]) -> list[Fact]:
    raise ExtractionError("model returned malformed JSON twice")


def test_facade_seed_demo(mem_store: ChromaMemoryStore) -> None:
    memory = LifecycleMemory(mem_store, extractor=gold_extractor)
    memory.add_messages([("user", "我喜欢使用 Vim 编辑器"), ("ai", "好的")], "u1", at="2024-01-01T10:00:00Z")
    assert "Vim" in memory.inject("我适合用什么工具写 Python？", "u1", now="2024-01-04").text
    result = memory.add_messages([("user", "我现在改用 VS Code 了")], "u1", at="2024-03-01T10:00:00Z")
    assert result.summary() == "+1 added, 0 refreshed, 1 archived"
    block = memory.inject("我适合用什么工具写 Python？", "u1", now="2024-03-02")
    assert "VS Code" in block.text and "Vim" not in block.text
    assert [(r.value, r.status) for r in memory.history("u1", "user", "editor")] == [
        ("Vim", MemoryStatus.ARCHIVED),
        ("VS Code", MemoryStatus.ACTIVE),
    ]


def test_facade_extraction_failure_keeps_the_turn(mem_store: ChromaMemoryStore) -> None:
    memory = LifecycleMemory(mem_store, extractor=RunnableLambda(_failing))
    result = memory.add_messages([("user", "My cat is called Waffles")], "u1", at="2024-01-01")
    assert result.errors and "malformed" in result.errors[0]
    (episode,) = memory.list("u1")
    assert episode.kind == "episode" and episode.content == "My cat is called Waffles"


def test_facade_rejects_missing_user_and_empty_messages(mem_store: ChromaMemoryStore) -> None:
    memory = LifecycleMemory(mem_store, extractor=gold_extractor)
    with pytest.raises(ValueError, match="user id is required"):
        memory.add_messages([("user", "hi")], "")
    assert memory.add_messages([], "u1").summary() == "+0 added, 0 refreshed, 0 archived"
    with pytest.raises(TypeError, match="list of messages"):
        memory.add_messages(42, "u1")


def test_user_ids_with_dots_are_safe(mem_store: ChromaMemoryStore) -> None:
    memory = LifecycleMemory(mem_store, extractor=gold_extractor)
    memory.add_messages([("user", "我喜欢使用 Vim 编辑器")], "dana.whitfield@example.com", at="2024-01-01")
    assert memory.namespace("dana.whitfield@example.com") == ("memories", "dana%2Ewhitfield@example%2Ecom")
    assert memory.history("dana.whitfield@example.com", "user", "editor")[0].value == "Vim"


def _chat_graph(store: ChromaMemoryStore, replies: Iterator[Any], **writer_kw: Any) -> Any:
    model = GenericFakeChatModel(messages=replies)

    def chatbot(state: MessagesState) -> dict[str, Any]:
        visible = [m for m in state["messages"]]
        return {"messages": [model.invoke(visible)]}

    builder = StateGraph(MessagesState)
    builder.add_node("recall", create_memory_reader(store))
    builder.add_node("chatbot", chatbot)
    builder.add_node("remember", create_memory_writer(store, extractor=gold_extractor, **writer_kw))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "chatbot")
    builder.add_edge("chatbot", "remember")
    builder.add_edge("remember", END)
    return builder.compile(checkpointer=InMemorySaver())


def test_the_facade_async_methods_give_what_the_sync_ones_give(mem_store: ChromaMemoryStore) -> None:
    memory = LifecycleMemory(mem_store, extractor=gold_extractor)

    async def turns() -> tuple[Any, Any, Any]:
        await asyncio.gather(
            memory.aadd_messages([("user", "我喜欢使用 Vim 编辑器")], "a1", at="2024-01-01"),
            memory.aadd_messages([("user", "我现在改用 VS Code 了")], "a2", at="2024-01-01"),
        )
        block = await memory.ainject("我用什么编辑器？", "a1", now="2024-01-02")
        return (
            block,
            await memory.asearch("我用什么编辑器？", "a2", now="2024-01-02"),
            await memory.aforget("a1", entity="user", attribute="editor"),
        )

    block, found, forgotten = asyncio.run(turns())

    assert "Vim" in block.text and "VS Code" not in block.text
    assert [d.metadata["value"] for d in found] == ["VS Code"]
    assert [r.value for r in forgotten] == ["Vim"] and memory.active("a1") == []


def test_writer_and_reader_nodes_across_threads(mem_store: ChromaMemoryStore) -> None:
    graph = _chat_graph(mem_store, iter([AIMessage("ok"), AIMessage("ok"), AIMessage("ok")]))

    def cfg(thread: str, when: str) -> dict[str, Any]:
        return {"configurable": {"user_id": "u1", "thread_id": thread, "memory_now": when}}

    graph.invoke({"messages": [("user", "我喜欢使用 Vim 编辑器")]}, cfg("t1", "2024-01-01T10:00:00Z"))
    graph.invoke({"messages": [("user", "我现在改用 VS Code 了")]}, cfg("t2", "2024-03-01T10:00:00Z"))
    out = graph.invoke({"messages": [("user", "我适合用什么工具写 Python？")]}, cfg("t3", "2024-03-02T09:00:00Z"))
    memory_msgs = [m for m in out["messages"] if isinstance(m, SystemMessage)]
    assert len(memory_msgs) == 1 and memory_msgs[0].id == MEMORY_MESSAGE_ID
    assert "VS Code" in memory_msgs[0].content and "Vim" not in memory_msgs[0].content
    statuses = {r.value: r.status for r in mem_store.list_records(("memories", "u1"))}
    assert statuses == {"Vim": MemoryStatus.ARCHIVED, "VS Code": MemoryStatus.ACTIVE}


def test_a_turn_of_a_picture_without_a_caption_runs_and_recalls_nothing(mem_store: ChromaMemoryStore) -> None:
    graph = _chat_graph(mem_store, iter([AIMessage("ok"), AIMessage("Nice photo!")]))
    cfg = {"configurable": {"user_id": "u1", "thread_id": "t1", "memory_now": "2024-01-01T10:00:00Z"}}
    graph.invoke({"messages": [("user", "我喜欢使用 Vim 编辑器")]}, cfg)
    photo = HumanMessage(content=[{"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}])

    out = graph.invoke({"messages": [photo]}, cfg)

    assert out["messages"][-1].content == "Nice photo!"
    block = next(m for m in out["messages"] if m.id == MEMORY_MESSAGE_ID)
    assert "Vim" not in block.content
    assert [r.value for r in mem_store.list_records(("memories", "u1"))] == ["Vim"]


def test_the_block_dates_today_in_the_time_zone_the_graph_is_given(mem_store: ChromaMemoryStore) -> None:
    graph = _chat_graph(mem_store, iter([AIMessage("ok")] * 4))
    said = {"configurable": {"user_id": "u1", "thread_id": "t"}}
    graph.invoke({"messages": [("user", "我喜欢使用 Vim 编辑器")]}, said)
    seen = {}
    for zone in ("Pacific/Kiritimati", "Pacific/Pago_Pago"):  # 25 hours apart: never the same date
        cfg = {"configurable": {"user_id": "u1", "thread_id": zone, "memory_timezone": zone}}
        out = graph.invoke({"messages": [("user", "我适合用什么工具写 Python？")]}, cfg)
        block = next(m for m in out["messages"] if m.id == MEMORY_MESSAGE_ID).content
        seen[zone] = datetime.now(ZoneInfo(zone)).date().isoformat() in block

    assert seen == {"Pacific/Kiritimati": True, "Pacific/Pago_Pago": True}
    cfg = {"configurable": {"user_id": "u1", "thread_id": "t", "memory_timezone": "Mars/Olympus"}}
    with pytest.raises(ValueError, match="memory_timezone"):
        graph.invoke({"messages": [("user", "hi")]}, cfg)


def test_writer_needs_a_user_id(mem_store: ChromaMemoryStore) -> None:
    writer = create_memory_writer(mem_store, extractor=gold_extractor)
    with pytest.raises(ValueError, match="configurable"):
        writer.invoke({"messages": [("user", "我喜欢使用 Vim 编辑器")]})


def test_writer_user_id_from_runtime_context(mem_store: ChromaMemoryStore) -> None:
    writer = create_memory_writer(mem_store, extractor=gold_extractor)
    writer.invoke({"messages": [("user", "我喜欢使用 Vim 编辑器")]}, context={"user_id": "ctx-user"})
    assert [r.value for r in mem_store.list_records(("memories", "ctx-user"))] == ["Vim"]


def test_background_writes_in_a_checkpointed_graph_land_in_order(mem_store: ChromaMemoryStore) -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage("ok"), AIMessage("ok")]))
    builder = StateGraph(MessagesState)
    builder.add_node("chatbot", lambda state: {"messages": [model.invoke(state["messages"])]})
    builder.add_node("remember", create_memory_writer(mem_store, background=True))
    builder.add_edge(START, "chatbot").add_edge("chatbot", "remember").add_edge("remember", END)
    graph = builder.compile(checkpointer=InMemorySaver())  # the turn's state is checkpointed: no Future in it

    for thread, at, said in (("a", "2024-01-02", "I live in Yakima."), ("b", "2024-06-03", "I moved to Ellensburg.")):
        cfg = {"configurable": {"user_id": "bg", "thread_id": thread, "memory_now": at}}
        graph.invoke({"messages": [("user", said)]}, cfg)  # returns before the write lands
    results = wait_for_memory_writes(timeout=120)

    assert [[r.value for r in result.added] for result in results] == [["Yakima"], ["Ellensburg"]]
    statuses = {r.value: r.status for r in mem_store.list_records(("memories", "bg"))}
    assert statuses == {"Yakima": MemoryStatus.ARCHIVED, "Ellensburg": MemoryStatus.ACTIVE}


def test_a_failed_background_write_is_logged_and_raised_by_the_wait(
    mem_store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def down(*args: Any, **kwargs: Any) -> None:
        raise StoreUnavailableError("Chroma server at 127.0.0.1:8000 is unreachable")

    monkeypatch.setattr(mem_store, "put_records", down)
    writer = create_memory_writer(mem_store, background=True)
    out = writer.invoke({"messages": [("user", "I live in Yakima.")]}, {"configurable": {"user_id": "bg2"}})

    assert out["memory_result"] is None
    with pytest.raises(StoreUnavailableError, match="unreachable") as failed:
        wait_for_memory_writes(timeout=120)
    assert "1 of 1 background memory write(s) failed" in "".join(failed.value.__notes__)
    assert "background memory write failed" in caplog.text
    assert wait_for_memory_writes(timeout=1) == []  # reported once


def test_a_retriever_given_to_the_reader_searches_its_own_namespace(mem_store: ChromaMemoryStore) -> None:
    tenant = ("tenant-a", "{user_id}", "memories")
    memory = LifecycleMemory(mem_store, extractor=gold_extractor, namespace_template=tenant)
    memory.add_messages([("user", "我喜欢使用 Vim 编辑器")], "u1", at="2024-01-01")
    memory.add_messages([("user", "我现在改用 VS Code 了")], "shared", at="2024-01-01")

    def block(retriever: LifecycleRetriever, user: str) -> str:
        reader = create_memory_reader(mem_store, retriever=retriever, as_message=False)
        out = reader.invoke({"messages": [("user", "我用什么编辑器？")]}, {"configurable": {"user_id": user}})
        return out["memory_block"]

    assert "Vim" in block(LifecycleRetriever(store=mem_store, namespace_template=tenant), "u1")
    fixed = LifecycleRetriever(store=mem_store, namespace=("tenant-a", "shared", "memories"))
    assert "VS Code" in block(fixed, "u1") and "Vim" not in block(fixed, "u1")
    found = fixed.invoke("我用什么编辑器？", config={"configurable": {"user_id": "u1"}})  # the config's user: no
    assert [d.metadata["value"] for d in found] == ["VS Code"]


def test_writer_failure_keeps_raw_turn(mem_store: ChromaMemoryStore) -> None:
    writer = create_memory_writer(mem_store, extractor=RunnableLambda(_failing))
    out = writer.invoke({"messages": [("user", "I moved to Lisbon")]}, {"configurable": {"user_id": "u5"}})
    assert "malformed" in out["memory_error"]
    assert [r.content for r in mem_store.list_records(("memories", "u5"))] == ["I moved to Lisbon"]


def test_prebuilt_agent_uses_the_graph_store(mem_store: ChromaMemoryStore) -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage("noted"), AIMessage("You use VS Code.")]))
    agent = create_memory_agent(model, mem_store, extractor=gold_extractor, checkpointer=InMemorySaver())
    cfg = {"configurable": {"user_id": "u7", "thread_id": "a"}}
    agent.invoke({"messages": [("user", "我现在改用 VS Code 了")]}, cfg)
    out = agent.invoke(
        {"messages": [("user", "我适合用什么工具写 Python？")]},
        {**cfg, "configurable": {**cfg["configurable"], "thread_id": "b"}},
    )
    assert "VS Code" in out["memory_block"]
    assert out["messages"][-1].content == "You use VS Code."


def test_facade_retrieval_log_records_and_purge_removes_lines(mem_store: ChromaMemoryStore, tmp_path: Any) -> None:
    from langchain_lifecycle_memory.lifecycle.observability import RetrievalLog, retrieval_stats

    log = RetrievalLog(tmp_path / "retrievals.jsonl")
    memory = LifecycleMemory(mem_store, extractor=gold_extractor, retrieval_log=log)
    memory.add_messages([("user", "我喜欢使用 Vim 编辑器")], "u1", at="2024-01-01T10:00:00Z")
    memory.add_messages([("user", "我喜欢使用 Vim 编辑器")], "u2", at="2024-01-01T10:00:00Z")
    memory.inject("我适合用什么工具写 Python？", "u1", now="2024-01-02")
    memory.inject("明天会下雨吗？", "u2", now="2024-01-02")
    stats = retrieval_stats(log)
    assert len(list(log.events())) == 2 and stats is not None
    memory.purge("u1")
    remaining = list(log.events())
    assert len(remaining) == 1
    assert "u1" not in (tmp_path / "retrievals.jsonl").read_text()


def _echoing(inputs: dict[str, Any]) -> list[Fact]:
    """A small model's failure: its prompt's example instead of what was said."""
    said = next(m.content for m in inputs["messages"] if isinstance(m, HumanMessage))
    return [Fact(entity="user", attribute="editor", value="VS Code", content="The user uses VS Code.", evidence=said)]


@pytest.mark.parametrize("extractor", [RunnableLambda(_failing), RunnableLambda(_echoing)], ids=["error", "echo"])
def test_words_kept_for_a_failed_extraction_are_still_recalled_a_year_later(
    mem_store: ChromaMemoryStore, extractor: Any
) -> None:
    memory = LifecycleMemory(mem_store, extractor=extractor)
    said = "Finally got the Mazda CX-5 back from the shop, honestly I love that car."
    memory.add_messages([("user", said)], "u-kept", at="2025-02-03T10:00:00Z")
    block = memory.inject("What car do I drive?", "u-kept", now="2026-02-03T10:00:00Z")
    assert "Mazda CX-5" in block.text
    assert [r.status for r in memory.list("u-kept")] == [MemoryStatus.ACTIVE]


def test_a_graph_writers_failed_turn_is_kept_as_long_as_a_fact(mem_store: ChromaMemoryStore) -> None:
    writer = create_memory_writer(mem_store, extractor=RunnableLambda(_failing))
    cfg = {"configurable": {"user_id": "u-graph-kept"}}
    writer.invoke({"messages": [("user", "I moved to Lisbon")]}, cfg)
    (kept,) = mem_store.list_records(("memories", "u-graph-kept"), now="2027-01-01")
    assert (kept.content, kept.status, kept.expires_at) == ("I moved to Lisbon", MemoryStatus.ACTIVE, None)
