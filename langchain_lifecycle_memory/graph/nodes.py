"""LangGraph adapters: ``extract → update → store`` and ``retrieve → inject``, one stage per node.

The user comes from ``config["configurable"]["user_id"]`` or the runtime context; the store is the one
given or the graph's own.
"""

from __future__ import annotations

import atexit
import hashlib
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypedDict

from langchain.agents import AgentState
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, HumanMessage, RemoveMessage, SystemMessage, convert_to_messages
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import merge_configs
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from typing_extensions import NotRequired

from langchain_lifecycle_memory.read.cues import attach_cues
from langchain_lifecycle_memory.read.injection import format_memories
from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever
from langchain_lifecycle_memory.schema import Fact, MemorySource, ensure_aware, utcnow
from langchain_lifecycle_memory.store.tenants import DEFAULT_NAMESPACE, namespace_for
from langchain_lifecycle_memory.write.update import UpdateConfig, UpdatePlan, UpdateResult, apply_plan, plan_updates
from langchain_lifecycle_memory.write.write_path import (
    check_messages,
    current_slots,
    episode_records,
    extract_safely,
    last_turn,
    prepare_episodes,
    resolve_extractor,
    user_id_from_config,
    wants_slots,
)

__all__ = [
    "MEMORY_MESSAGE_ID",
    "MemoryReaderState",
    "MemoryWriterState",
    "create_memory_agent",
    "create_memory_reader",
    "create_memory_writer",
    "with_memory_block",
]

MEMORY_MESSAGE_ID = "lifecycle-memory-block"
"""The injected system message's id: each turn's block replaces the last one (the thread keeps one)."""

_BACKGROUND = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lifecycle-memory-writer")
atexit.register(_BACKGROUND.shutdown, wait=True)


class MemoryWriterState(MessagesState, total=False):
    """Writer subgraph state (its extra keys stay inside the subgraph)."""

    memory_facts: list[Fact]
    memory_error: str | None
    memory_plan: UpdatePlan | None
    memory_result: UpdateResult | Future | None


class MemoryReaderState(TypedDict, total=False):
    """Reader state; ``messages`` has no reducer, so the reader's rewrite reaches the parent's reducer whole."""

    messages: list[AnyMessage]
    memory_documents: list[Document]
    memory_block: str
    memory_expired: int


def _now(config: RunnableConfig) -> Any:
    configurable = config.get("configurable") or {}
    return ensure_aware(configurable.get("memory_now")) or utcnow()


def _traced(config: RunnableConfig, user_id: str, namespace: tuple[str, ...], **extra: Any) -> RunnableConfig:
    """Config for a stage's run with LangSmith metadata: a hash of the user id, never the id."""
    digest = hashlib.sha256(user_id.encode()).hexdigest()[:12]
    meta = {"memory_user_hash": digest, "memory_namespace_depth": len(namespace), **extra}
    return merge_configs(config, {"metadata": meta})


def _store(store: Any, runtime: Runtime | None) -> Any:
    found = store if store is not None else (runtime.store if runtime is not None else None)
    if found is None or not hasattr(found, "put_records"):
        msg = (
            "The memory nodes need a ChromaMemoryStore: pass store=... to the factory or compile the "
            "graph with graph.compile(store=ChromaMemoryStore(...))."
        )
        raise ValueError(msg)
    return found


def create_memory_writer(
    store: Any | None = None,
    *,
    extractor: Runnable | BaseChatModel | str | None = "rule",
    update: UpdateConfig | None = None,
    namespace_template: Sequence[str] = DEFAULT_NAMESPACE,
    background: bool = False,
    name: str = "memory_writer",
    cue_model: BaseChatModel | None = None,
    num_cues: int = 4,
) -> CompiledStateGraph:
    """A subgraph ``extract → update → store`` that remembers the last turn of ``messages``.

    ``background=True`` writes on a worker thread (``memory_result`` is a ``Future``); ``cue_model`` adds cues.
    """
    chain = resolve_extractor(extractor)
    slots_wanted = wants_slots(chain)
    extractor_name = "llm" if isinstance(extractor, BaseChatModel) else str(extractor or "rule")
    config_ = update or UpdateConfig()
    template = tuple(namespace_template)

    def extract_memories(state: MemoryWriterState, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        turn = last_turn(state["messages"])
        if not turn:
            return {"memory_facts": [], "memory_error": None}
        check_messages(turn, "last turn's messages")
        user = user_id_from_config(config, runtime.context)
        ns = namespace_for(user, template)
        traced = _traced(config, user, ns, memory_turn_messages=len(turn))
        slots = current_slots(_store(store, runtime), ns) if slots_wanted else None
        facts, error = extract_safely(chain, turn, _now(config), traced, slots=slots)
        return {"memory_facts": facts, "memory_error": error}

    def update_memories(state: MemoryWriterState, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        ns = namespace_for(user_id_from_config(config, runtime.context), template)
        at = _now(config)
        turn = last_turn(state["messages"])
        source = MemorySource(
            extractor=extractor_name,
            thread_id=(config.get("configurable") or {}).get("thread_id"),
            message_ids=[m.id for m in turn if m.id],
        )
        if state.get("memory_error"):
            episodes = prepare_episodes(episode_records(list(turn), ns, at, source), config_, lasting_as="fact")
            return {"memory_plan": UpdatePlan(namespace=ns, added=episodes)}
        plan = plan_updates(
            _store(store, runtime), ns, state.get("memory_facts") or [], at=at, source=source, config=config_
        )
        if cue_model is not None and plan.added:
            attach_cues(cue_model, plan.added, num_cues)
        return {"memory_plan": plan}

    def store_memories(state: MemoryWriterState, runtime: Runtime) -> dict[str, Any]:
        plan = state.get("memory_plan")
        if plan is None or plan.empty:
            return {"memory_result": UpdateResult()}
        target = _store(store, runtime)
        if background:
            return {"memory_result": _BACKGROUND.submit(apply_plan, target, plan)}
        return {"memory_result": apply_plan(target, plan)}

    builder = StateGraph(MemoryWriterState, input_schema=MessagesState, output_schema=MemoryWriterState)
    builder.add_sequence([extract_memories, update_memories, store_memories])
    builder.add_edge(START, "extract_memories").add_edge("store_memories", END)
    return builder.compile(name=name)


def with_memory_block(messages: Sequence[AnyMessage], block: str) -> list[AnyMessage]:
    """``messages`` with the memory block as a system message right after the app's own (any earlier block goes)."""
    rest = [m for m in convert_to_messages(messages) if m.id != MEMORY_MESSAGE_ID]
    lead = next((i for i, m in enumerate(rest) if not isinstance(m, SystemMessage)), len(rest))
    return [*rest[:lead], SystemMessage(content=block, id=MEMORY_MESSAGE_ID), *rest[lead:]]


def create_memory_reader(
    store: Any | None = None,
    *,
    retriever: LifecycleRetriever | None = None,
    namespace_template: Sequence[str] = DEFAULT_NAMESPACE,
    max_tokens: int = 600,
    as_message: bool = True,
    name: str = "memory_reader",
) -> CompiledStateGraph:
    """A subgraph ``retrieve → inject``: memories for the last human message as a leading system message.

    The block is also left in ``memory_block``; with ``as_message=False`` only there.
    """
    template = tuple(namespace_template)

    def retrieve_memories(state: MemoryReaderState, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        human = [m for m in convert_to_messages(state["messages"]) if isinstance(m, HumanMessage)]
        if not human:
            return {"memory_documents": []}
        query = human[-1].text if hasattr(human[-1], "text") else str(human[-1].content)
        user = user_id_from_config(config, runtime.context)
        ns = namespace_for(user, template)
        r = retriever or LifecycleRetriever(store=_store(store, runtime), namespace_template=template)
        docs, explanation = r.recall(query, _traced(config, user, ns), namespace=ns, now=_now(config))
        return {"memory_documents": docs, "memory_expired": explanation.expired_matches}

    def inject_memories(state: MemoryReaderState, config: RunnableConfig) -> dict[str, Any]:
        human = [m for m in convert_to_messages(state["messages"]) if isinstance(m, HumanMessage)]
        query = str(human[-1].content) if human else None
        block = format_memories(
            state.get("memory_documents") or [],
            max_tokens=max_tokens,
            query=query,
            now=_now(config),
            expired=state.get("memory_expired") or 0,
        )
        if not as_message:
            return {"memory_block": block.text}
        messages = with_memory_block(state["messages"], block.text)
        return {"memory_block": block.text, "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *messages]}

    builder = StateGraph(MemoryReaderState)
    builder.add_sequence([retrieve_memories, inject_memories])
    builder.add_edge(START, "retrieve_memories").add_edge("inject_memories", END)
    return builder.compile(name=name)


class MemoryAgentState(AgentState):
    """``create_agent``'s state, plus what the memory reader leaves for the prompt."""

    memory_block: NotRequired[str]
    memory_documents: NotRequired[list[Document]]
    memory_expired: NotRequired[int]


def create_memory_agent(
    model: BaseChatModel,
    store: Any,
    *,
    tools: Sequence[Any] = (),
    system_prompt: str | None = None,
    extractor: Runnable | BaseChatModel | str | None = "rule",
    checkpointer: Any = None,
    name: str = "memory_agent",
) -> CompiledStateGraph:
    """A prebuilt agent: recall → LangChain's ``create_agent`` (the block in its system prompt) → remember."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import ModelRequest, dynamic_prompt

    @dynamic_prompt
    def with_memories(request: ModelRequest) -> str:
        return "\n\n".join(p for p in (system_prompt, request.state.get("memory_block")) if p)

    agent = create_agent(model, list(tools), middleware=[with_memories], state_schema=MemoryAgentState, name="agent")
    builder = StateGraph(MemoryAgentState)
    recall, remember = create_memory_reader(store, as_message=False), create_memory_writer(store, extractor=extractor)
    builder.add_sequence([("recall", recall), ("agent", agent), ("remember", remember)])
    builder.add_edge(START, "recall").add_edge("remember", END)
    return builder.compile(checkpointer=checkpointer, store=store, name=name)
