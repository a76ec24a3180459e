"""LangGraph adapters: ``extract → update → store`` and ``retrieve → inject``, one stage per node.

The user comes from ``config["configurable"]["user_id"]`` or the runtime context; the store is the one
given or the graph's own.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, TypedDict
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

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

from langchain_lifecycle_memory.read.cues import with_cues
from langchain_lifecycle_memory.read.injection import format_memories
from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever
from langchain_lifecycle_memory.schema import Fact, MemorySource, ensure_aware, local_time, utcnow
from langchain_lifecycle_memory.store.tenants import DEFAULT_NAMESPACE, namespace_for
from langchain_lifecycle_memory.write.update import UpdateConfig, UpdateResult, reconcile
from langchain_lifecycle_memory.write.write_path import (
    check_messages,
    current_slots,
    extract_safely,
    keep_failed_turn,
    last_turn,
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
    "wait_for_memory_writes",
    "with_memory_block",
]

logger = logging.getLogger(__name__)

MEMORY_MESSAGE_ID = "lifecycle-memory-block"
"""The injected system message's id: each turn's block replaces the last one (the thread keeps one)."""


class _BackgroundWrites:
    """One worker thread for every background writer: turns are written in the order they were submitted."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lifecycle-memory-writer")
        self._lock = threading.Lock()
        self._futures: list[Future] = []
        atexit.register(self._executor.shutdown, wait=True)

    def submit(self, job: Callable[[], UpdateResult]) -> None:
        future = self._executor.submit(_logged, job)
        with self._lock:
            self._futures.append(future)

    def wait(self, timeout: float | None) -> list[UpdateResult]:
        with self._lock:
            futures, self._futures = self._futures, []
        _, running = wait(futures, timeout)
        if running:
            with self._lock:
                self._futures = [*futures, *self._futures]  # a later wait sees them again
            msg = f"{len(running)} background memory write(s) still running after {timeout} s."
            raise TimeoutError(msg)
        failed = [e for e in (f.exception() for f in futures) if e is not None]
        if failed:
            failed[0].add_note(f"{len(failed)} of {len(futures)} background memory write(s) failed; this is the first.")
            raise failed[0]
        return [f.result() for f in futures]


def _logged(job: Callable[[], UpdateResult]) -> UpdateResult:
    try:
        return job()
    except Exception as error:  # logged where it happens: no caller may ever wait for it
        logger.error(
            "A background memory write failed (%s: %s): the turn was not stored; wait_for_memory_writes() raises it.",
            type(error).__name__,
            error,
        )
        raise


_WRITES = _BackgroundWrites()


def wait_for_memory_writes(timeout: float | None = None) -> list[UpdateResult]:
    """Wait for every background write (``create_memory_writer(background=True)``) submitted so far.

    Returns their results in order; raises the first failure (a note says how many failed), or ``TimeoutError``.
    """
    return _WRITES.wait(timeout)


class MemoryWriterState(MessagesState, total=False):
    """Writer subgraph state (its extra keys stay inside the subgraph)."""

    memory_facts: list[Fact]
    memory_error: str | None
    memory_result: UpdateResult | None


class MemoryReaderState(TypedDict, total=False):
    """Reader state; ``messages`` has no reducer, so the reader's rewrite reaches the parent's reducer whole."""

    messages: list[AnyMessage]
    memory_documents: list[Document]
    memory_block: str
    memory_expired: int


def _now(config: RunnableConfig) -> Any:
    configurable = config.get("configurable") or {}
    return ensure_aware(configurable.get("memory_now")) or utcnow()


def _local_now(config: RunnableConfig) -> Any:
    """:func:`_now` in the user's zone: the one ``memory_now`` was given in, else ``memory_timezone`` (an IANA name).

    The user's "today" and "yesterday", in the block and in what the writer resolves.
    """
    configurable = config.get("configurable") or {}
    if (given := local_time(configurable.get("memory_now"))) is not None or not configurable.get("memory_timezone"):
        return given or _now(config)
    zone = configurable["memory_timezone"]
    try:
        return _now(config).astimezone(ZoneInfo(str(zone)))
    except (ZoneInfoNotFoundError, ValueError) as exc:
        msg = f'Unknown time zone {zone!r} in configurable["memory_timezone"]: an IANA name, such as "Asia/Shanghai".'
        raise ValueError(msg) from exc


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
    """A subgraph ``extract → update`` that remembers the last turn of ``messages``.

    Facts are planned and applied under the namespace's writer lock (two turns never plan from the same state).
    ``background=True`` extracts and writes on one worker thread, turn after turn in order, and returns at once
    (``memory_result`` is ``None``); :func:`wait_for_memory_writes` waits for them and raises what failed.
    ``cue_model`` adds cues.
    """
    chain = resolve_extractor(extractor)
    slots_wanted = wants_slots(chain)
    extractor_name = "llm" if isinstance(extractor, BaseChatModel) else str(extractor or "rule")
    config_ = update or UpdateConfig()
    template = tuple(namespace_template)
    cues = with_cues(cue_model, num_cues)

    def extract(target: Any, turn: list[AnyMessage], user: str, config: RunnableConfig) -> dict[str, Any]:
        ns = namespace_for(user, template)
        traced = _traced(config, user, ns, memory_turn_messages=len(turn))
        slots = current_slots(target, ns) if slots_wanted else None
        facts, error = extract_safely(chain, turn, _local_now(config), traced, slots=slots)
        return {"memory_facts": facts, "memory_error": error}

    def write(target: Any, turn: list[AnyMessage], user: str, config: RunnableConfig, found: dict) -> UpdateResult:
        ns, at = namespace_for(user, template), _now(config)
        source = MemorySource(
            extractor=extractor_name,
            thread_id=(config.get("configurable") or {}).get("thread_id"),
            message_ids=[m.id for m in turn if m.id],
        )
        if found.get("memory_error"):  # the turn itself is kept, to be read again
            return keep_failed_turn(target, turn, ns, at, source, config_, found["memory_error"])
        facts = found.get("memory_facts") or []
        return reconcile(target, ns, facts, at=at, source=source, config=config_, before_apply=cues)

    def turn_of(state: MemoryWriterState, config: RunnableConfig, runtime: Runtime) -> tuple[Any, list, str]:
        turn = last_turn(state["messages"])
        check_messages(turn, "last turn's messages")
        return _store(store, runtime), turn, user_id_from_config(config, runtime.context)

    def extract_memories(state: MemoryWriterState, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        target, turn, user = turn_of(state, config, runtime)
        if background or not turn:
            return {"memory_facts": [], "memory_error": None}
        return extract(target, turn, user, config)

    def update_memories(state: MemoryWriterState, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        target, turn, user = turn_of(state, config, runtime)
        if not turn:
            return {"memory_result": UpdateResult()}
        if background:  # the whole turn on the worker: the graph's turn does not wait for the model
            detached = {k: v for k, v in config.items() if k != "callbacks"}  # its own run, dated by the turn
            detached["configurable"] = {**(config.get("configurable") or {}), "memory_now": _local_now(config)}
            _WRITES.submit(lambda: write(target, turn, user, detached, extract(target, turn, user, detached)))
            return {"memory_result": None}
        return {"memory_result": write(target, turn, user, config, state)}

    builder = StateGraph(MemoryWriterState, input_schema=MessagesState, output_schema=MemoryWriterState)
    builder.add_sequence([extract_memories, update_memories])
    builder.add_edge(START, "extract_memories").add_edge("update_memories", END)
    return builder.compile(name=name)


def _last_human_text(messages: Sequence[AnyMessage]) -> str:
    """The text of the last human message ("" for none, or for one of images only), content blocks joined."""
    human = [m for m in convert_to_messages(messages) if isinstance(m, HumanMessage)]
    return human[-1].text.strip() if human else ""


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

    The block is also left in ``memory_block``; with ``as_message=False`` only there. A ``retriever`` given
    searches its own fixed namespace, or its own ``namespace_template`` filled with the user id. A message with no
    text (images only) recalls nothing; its block says so.
    """
    template = tuple(namespace_template)

    def retrieve_memories(state: MemoryReaderState, config: RunnableConfig, runtime: Runtime) -> dict[str, Any]:
        query = _last_human_text(state["messages"])
        if not query:  # no human message, or one without text (a photo sent without a caption)
            return {"memory_documents": []}
        user = user_id_from_config(config, runtime.context)
        ns = namespace_for(user, template)
        r = retriever or LifecycleRetriever(store=_store(store, runtime), namespace_template=template)
        whose = {} if r.namespace is not None else {"user_id": user}  # a retriever's own namespace or template
        docs, explanation = r.recall(query, _traced(config, user, ns), now=_now(config), **whose)
        return {"memory_documents": docs, "memory_expired": explanation.expired_matches}

    def inject_memories(state: MemoryReaderState, config: RunnableConfig) -> dict[str, Any]:
        block = format_memories(
            state.get("memory_documents") or [],
            max_tokens=max_tokens,
            query=_last_human_text(state["messages"]) or None,
            now=_local_now(config),  # in the zone it was given
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
