"""What a LangSmith user sees: the memory nodes' named run tree, captured by an in-memory tracer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_lifecycle_memory import ChromaMemoryStore, Fact
from langchain_lifecycle_memory.graph.nodes import create_memory_agent, create_memory_reader, create_memory_writer

VIM = {
    "entity": "user",
    "attribute": "editor",
    "value": "Vim",
    "content": "用户喜欢使用 Vim 编辑器",
    "kind": "preference",
    "confidence": 0.9,
}
TELL, ASK = "我喜欢使用 Vim 编辑器", "我适合用什么工具写 Python？"


class RunCollector(BaseTracer):
    """Keeps every finished root run, children included, in memory (no LangSmith account needed)."""

    def __init__(self) -> None:
        super().__init__()
        self.roots: list[Run] = []

    def _persist_run(self, run: Run) -> None:
        self.roots.append(run)


def _gold(inputs: dict[str, Any]) -> list[Fact]:
    said = [m.content for m in inputs["messages"] if isinstance(m, HumanMessage)]
    return [Fact.model_validate(VIM)] if TELL in said else []


def _extractor(kind: str) -> tuple[Any, str]:
    """The extractor to give the writer, and the name its run must have in the trace."""
    if kind == "rule":
        return "rule", "rule_extract_memories"
    if kind == "gold":
        return RunnableLambda(_gold, name="gold_extractor"), "gold_extractor"
    replies = [json.dumps({"facts": [VIM]}, ensure_ascii=False), json.dumps({"facts": []})]
    return FakeListChatModel(responses=replies), "llm_extract_memories"


def _graph(store: ChromaMemoryStore, extractor: Any) -> Any:
    model = GenericFakeChatModel(messages=iter([AIMessage("好的，记住了。"), AIMessage("Vim.")]))

    def chatbot(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("recall", create_memory_reader(store))
    builder.add_node("chatbot", chatbot)
    builder.add_node("remember", create_memory_writer(store, extractor=extractor))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "chatbot")
    builder.add_edge("chatbot", "remember")
    builder.add_edge("remember", END)
    return builder.compile(name="memory_chat")


def _config(when: str, tracer: RunCollector) -> dict[str, Any]:
    return {"configurable": {"user_id": "u1", "thread_id": "t1", "memory_now": when}, "callbacks": [tracer]}


def _walk(run: Run) -> Iterator[Run]:
    yield run
    for child in run.child_runs:
        yield from _walk(child)


def _one(run: Run, name: str) -> Run:
    found = [r for r in _walk(run) if r.name == name]
    assert len(found) == 1, f"expected one run named {name!r} under {run.name!r}, got {len(found)}"
    return found[0]


def _children(run: Run) -> list[str]:
    return [c.name for c in sorted(run.child_runs, key=lambda c: c.start_time)]


def _assert_turn(root: Run, extractor_run: str) -> None:
    """The named tree of one recall → chatbot → remember turn."""
    assert root.name == "memory_chat"
    assert _children(root) == ["recall", "chatbot", "remember"]

    reader = _one(root, "memory_reader")
    assert _children(reader) == ["retrieve_memories", "inject_memories"]
    retrievers = [r for r in _walk(_one(reader, "retrieve_memories")) if r.run_type == "retriever"]
    assert len(retrievers) == 1, "retrieve_memories should hold exactly one retriever run"
    metadata = retrievers[0].extra["metadata"]
    assert metadata["ls_retriever_name"] == "lifecycle_memory"
    assert metadata["ls_vector_store_provider"] == "Chroma"
    assert metadata["ls_embedding_provider"]
    # the user is identifiable across runs by a hash, never by the raw id
    assert len(metadata["memory_user_hash"]) == 12
    assert all(str(v) != "u1" for v in metadata.values())

    writer = _one(root, "memory_writer")
    assert _children(writer) == ["extract_memories", "update_memories"]
    extract = next(c for c in writer.child_runs if c.name == "extract_memories")
    assert extractor_run in [r.name for r in _walk(extract) if r is not extract]
    extractor = next(r for r in _walk(extract) if r.name == extractor_run)
    assert extractor.extra["metadata"]["memory_user_hash"] == metadata["memory_user_hash"]

    model_run = next(r for r in _walk(root) if r.run_type == "llm" and r.name == "GenericFakeChatModel")
    assert reader.end_time <= model_run.start_time <= model_run.end_time <= writer.start_time


@pytest.mark.parametrize("kind", ["rule", "gold", "llm"])
def test_writer_and_reader_turn_has_a_named_run_tree(mem_store: ChromaMemoryStore, kind: str) -> None:
    extractor, extractor_run = _extractor(kind)
    graph = _graph(mem_store, extractor)
    tracer = RunCollector()
    graph.invoke({"messages": [("user", TELL)]}, _config("2024-01-01T10:00:00Z", tracer))
    graph.invoke({"messages": [("user", ASK)]}, _config("2024-01-04T09:00:00Z", tracer))

    assert len(tracer.roots) == 2, "each turn should be one root run"
    for root in tracer.roots:
        _assert_turn(root, extractor_run)

    # The second turn's retriever run returns the remembered fact with its scores.
    retriever = next(r for r in _walk(tracer.roots[1]) if r.run_type == "retriever")
    assert retriever.inputs["query"] == ASK
    docs = retriever.outputs["documents"]
    assert [d.page_content for d in docs] == [VIM["content"]]
    assert docs[0].metadata["score"] >= 0.3 and set(docs[0].metadata["scores"]) >= {"dense", "lexical", "slot"}
    # ... and the injected block is the reader's output.
    inject = _one(tracer.roots[1], "inject_memories")
    assert "Vim" in inject.outputs["memory_block"]


def test_llm_extractor_run_holds_the_model_call_and_a_hidden_parser(mem_store: ChromaMemoryStore) -> None:
    extractor, _ = _extractor("llm")
    tracer = RunCollector()
    _graph(mem_store, extractor).invoke({"messages": [("user", TELL)]}, _config("2024-01-01T10:00:00Z", tracer))
    node = next(c for c in _one(tracer.roots[0], "memory_writer").child_runs if c.name == "extract_memories")
    [llm_extractor] = node.child_runs
    assert {r.run_type for r in llm_extractor.child_runs} >= {"llm"}
    parser = next(r for r in llm_extractor.child_runs if r.name == "parse_facts")
    assert "langsmith:hidden" in (parser.tags or [])


async def test_async_turn_has_the_same_tree(mem_store: ChromaMemoryStore) -> None:
    graph = _graph(mem_store, "rule")
    tracer = RunCollector()
    await graph.ainvoke({"messages": [("user", TELL)]}, _config("2024-01-01T10:00:00Z", tracer))
    [root] = tracer.roots
    _assert_turn(root, "rule_extract_memories")


def test_prebuilt_agent_traces_reader_agent_writer(mem_store: ChromaMemoryStore) -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage("noted")]))
    agent = create_memory_agent(model, mem_store)
    tracer = RunCollector()
    agent.invoke({"messages": [("user", TELL)]}, _config("2024-01-01T10:00:00Z", tracer))
    [root] = tracer.roots
    assert root.name == "memory_agent"
    assert _children(root) == ["recall", "agent", "remember"]
    assert _children(_one(root, "memory_reader")) == ["retrieve_memories", "inject_memories"]
    writer = _one(root, "memory_writer")
    assert _children(writer) == ["extract_memories", "update_memories"]
    assert "rule_extract_memories" in [r.name for r in _walk(writer)]
