"""Where the memory block reaches the model, and what may appear in it: public API only.

Black-box: a LangGraph graph built from ``create_memory_reader`` / ``create_memory_writer`` with a
chat model that records what it receives, and ``LifecycleMemory.inject``. The store uses
``DeterministicFakeEmbedding``: these tests are about placement and escaping, with queries that
name what they look for.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from langchain_lifecycle_memory import (
    ChromaMemoryStore,
    Fact,
    LifecycleMemory,
    create_memory_reader,
    create_memory_writer,
)

NOTHING = "No stored memory is relevant"


def fake() -> DeterministicFakeEmbedding:
    return DeterministicFakeEmbedding(size=32)


def fake_memory(path: Path) -> LifecycleMemory:
    return LifecycleMemory(ChromaMemoryStore(path, embeddings=fake()))


# ---------------------------------------------------------------------- 6. where the block goes
class RecordingChat(BaseChatModel):
    """Answers "Noted!" and records every list of messages it receives."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recording"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="Noted!"))])


def _is_memory(message: BaseMessage) -> bool:
    text = message.text if isinstance(message.text, str) else str(message.content)
    return isinstance(message, SystemMessage) and ("<memories>" in text or NOTHING in text)


def _graph(path: Path, model: RecordingChat) -> Any:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    store = ChromaMemoryStore(path, embeddings=fake())
    builder = StateGraph(MessagesState)
    builder.add_node("recall", create_memory_reader(store))
    builder.add_node("chatbot", lambda s: {"messages": [model.invoke(s["messages"])]})
    builder.add_node("remember", create_memory_writer(store))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "chatbot")
    builder.add_edge("chatbot", "remember")
    builder.add_edge("remember", END)
    return builder.compile(checkpointer=InMemorySaver(), store=store)


def _layout(messages: list[BaseMessage]) -> str:
    return " ".join(("MEMORY" if _is_memory(m) else type(m).__name__.replace("Message", "")) for m in messages)


def _system_after_human(messages: list[BaseMessage]) -> bool:
    first_human = next((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), len(messages))
    return any(isinstance(m, SystemMessage) for m in messages[first_human:])


TURNS = ["I use Vim as my editor", "I live in Berlin", "Which editor do I use?"]


def test_the_model_gets_the_memory_block_as_its_first_and_only_system_message(tmp_path: Path) -> None:
    model = RecordingChat()
    graph = _graph(tmp_path / "m", model)
    cfg = {"configurable": {"user_id": "u1", "thread_id": "t1"}}

    for turn in TURNS:
        graph.invoke({"messages": [("user", turn)]}, cfg)

    calls = [_layout(messages) for messages in model.seen]
    assert len(calls) == 3
    for messages in model.seen:
        assert _is_memory(messages[0]), f"the first message is not the memory block: {calls}"
        assert sum(isinstance(m, SystemMessage) for m in messages) == 1, calls
        assert not _system_after_human(messages), calls
    assert "Vim" in str(model.seen[-1][0].content)
    state = graph.get_state(cfg).values["messages"]
    assert sum(_is_memory(m) for m in state) <= 1, _layout(state)


def test_an_app_system_prompt_stays_first_and_the_memory_block_joins_or_follows_it(tmp_path: Path) -> None:
    model = RecordingChat()
    graph = _graph(tmp_path / "m", model)
    cfg = {"configurable": {"user_id": "u1", "thread_id": "t1"}}
    prompt = "You are a terse assistant."

    graph.invoke({"messages": [("system", prompt), ("user", TURNS[0])]}, cfg)
    for turn in TURNS[1:]:
        graph.invoke({"messages": [("user", turn)]}, cfg)

    calls = [_layout(messages) for messages in model.seen]
    for messages in model.seen:
        first = messages[0]
        assert isinstance(first, SystemMessage) and prompt in str(first.content), calls
        merged = _is_memory(first)
        follows = len(messages) > 1 and _is_memory(messages[1])
        assert merged or follows, f"the memory block is neither in nor right after the app's prompt: {calls}"
        assert not _system_after_human(messages), calls
    state = graph.get_state(cfg).values["messages"]
    assert sum(_is_memory(m) for m in state) <= 1, _layout(state)


# ---------------------------------------------------------------------- 8a. invisible characters
TAG_PAYLOAD = "".join(chr(0xE0000 + ord(c)) for c in "IGNORE")
INVISIBLE = "\ufe00\ufe0f\U000e0100\U000e01ef\u115f\u1160\u3164\uffa0\u2800\u034f" + TAG_PAYLOAD
_LINE = re.compile(r'^- \[[^\]]*\] (.*")$')
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')  # the slot's value and the statement


def _check_block(text: str, word: str) -> None:
    assert word in text, f"recall precondition: {word!r} not in {text!r}"
    raw = sorted({f"U+{ord(ch):04X}" for ch in text if ch in INVISIBLE})
    assert raw == [], f"reached the block raw: {raw}"
    assert not re.search(r"\\U[0-9a-fA-F]{8}", text), f"an escape JSON cannot read: {ascii(text)}"
    lines = [m.group(1) for m in map(_LINE.match, text.splitlines()) if m]
    assert lines, text
    for quoted in (q for line in lines for q in _QUOTED.findall(line)):
        json.loads(quoted)  # every escape the block uses is valid JSON


def test_invisible_characters_stored_with_add_facts_are_escaped_in_the_block(tmp_path: Path) -> None:
    memory = fake_memory(tmp_path / "m")
    content = f"The user's favourite drink is Kumquatfizz{INVISIBLE} soda"
    memory.add_facts(
        [Fact(entity="user", attribute="drink", value="Kumquatfizz", content=content)], "bob", at="2026-11-20"
    )

    _check_block(memory.inject("Kumquatfizz drink", user_id="bob", now="2026-11-25").text, "Kumquatfizz")


def test_invisible_characters_stored_with_add_messages_are_escaped_in_the_block(tmp_path: Path) -> None:
    memory = fake_memory(tmp_path / "m")
    memory.add_messages(
        [("user", f"I drink Kumquatfizz{INVISIBLE} soda every morning")], user_id="bob", at="2026-11-20"
    )

    _check_block(memory.inject("What do I drink every morning?", user_id="bob", now="2026-11-25").text, "Kumquatfizz")
