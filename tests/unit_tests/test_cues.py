"""Write-time cues (issue 13): one batched call per turn, matched by meaning, lifecycle kept.

The chat model is a scripted fake (the only fake allowed offline); store, embedder and
retrieval are the real ones.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.runnables import RunnableLambda

from langchain_lifecycle_memory import LifecycleMemory
from langchain_lifecycle_memory.read.cues import CUES_KEY, parse_cues

BALCONY = {
    "entity": "user",
    "attribute": "home_outdoor_space",
    "value": "north-facing balcony",
    "content": "The user's flat only has a small north-facing balcony and no yard.",
    "kind": "fact",
}
SEASICK = {
    "entity": "user",
    "attribute": "motion_sickness",
    "value": "seasick",
    "content": "The user gets seasick easily on boats.",
    "kind": "profile",
}
CUES = {
    "1": ["planning a garden", "growing plants and sunlight", "buying outdoor furniture", "种花种菜"],
    "2": ["booking a cruise", "boat trips and ferries", "whale watching tour", "坐船出游"],
}
GARDEN = "How should I plan my garden this spring?"
CRUISE = "We're thinking of booking a cruise for our honeymoon, thoughts?"


class CountingFake(FakeListChatModel):
    calls: int = 0

    def invoke(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return super().invoke(*args, **kwargs)


def _memory(store: Any, model: Any = None) -> LifecycleMemory:
    return LifecycleMemory(store=store, extractor=RunnableLambda(lambda _: []), cue_model=model)


def test_one_call_per_turn_and_cues_bridge_the_gap(mem_store: Any) -> None:
    model = CountingFake(responses=[json.dumps(CUES)])
    memory = _memory(mem_store, model)
    result = memory.add_facts([BALCONY, SEASICK], "u1", at="2025-03-01T09:00:00Z")
    assert model.calls == 1
    assert result.added[0].metadata[CUES_KEY][0] == "planning a garden"
    stored = mem_store.list_records(memory.namespace("u1"))
    assert all(r.metadata.get(CUES_KEY) for r in stored)

    garden = memory.inject(GARDEN, "u1", now="2025-03-02T10:00:00Z").text
    cruise = memory.inject(CRUISE, "u1", now="2025-03-02T10:00:00Z").text
    assert "north-facing balcony" in garden and "seasick" not in garden
    assert "seasick" in cruise and "balcony" not in cruise
    # unrelated questions still inject nothing
    assert memory.search("Who won the NBA Finals in 2016?", "u1", now="2025-03-02T10:00:00Z") == []


def test_without_cues_the_same_question_misses(mem_store: Any) -> None:
    memory = _memory(mem_store)
    memory.add_facts([BALCONY, SEASICK], "u2", at="2025-03-01T09:00:00Z")
    found = memory.search(GARDEN, "u2", now="2025-03-02T10:00:00Z")
    # the balcony may come as the user's general profile, not as the memory that answers the request
    assert not [d for d in found if "balcony" in d.page_content and not d.metadata.get("profile")]


def test_cues_are_archived_and_purged_with_their_fact(mem_store: Any) -> None:
    model = CountingFake(responses=[json.dumps({"1": CUES["1"]}), json.dumps({"1": ["planning a garden"]})])
    memory = _memory(mem_store, model)
    memory.add_facts([BALCONY], "u3", at="2025-03-01T09:00:00Z")
    moved = {**BALCONY, "value": "large sunny garden", "content": "The user now has a large sunny garden."}
    memory.add_facts([moved], "u3", at="2025-04-01T09:00:00Z")
    text = memory.inject(GARDEN, "u3", now="2025-04-02T10:00:00Z").text
    assert "large sunny garden" in text and "north-facing" not in text
    memory.purge("u3")
    assert memory.search(GARDEN, "u3", now="2025-04-02T10:00:00Z") == []


@pytest.mark.parametrize("reply", ["not json at all", '{"7": ["out of range"]}', '{"1": 42}'])
def test_a_bad_reply_costs_the_cues_not_the_fact(mem_store: Any, reply: str) -> None:
    memory = _memory(mem_store, CountingFake(responses=[reply]))
    result = memory.add_facts([BALCONY], "u4", at="2025-03-01T09:00:00Z")
    assert len(result.added) == 1 and CUES_KEY not in result.added[0].metadata
    assert "north-facing balcony" in memory.inject("Where do I live, balcony?", "u4", now="2025-03-02").text


def test_a_failing_model_costs_the_cues_not_the_fact(mem_store: Any) -> None:
    class Broken(FakeListChatModel):
        def invoke(self, *args: Any, **kwargs: Any) -> Any:
            raise TimeoutError("model unavailable")

    memory = _memory(mem_store, Broken(responses=[""]))
    assert len(memory.add_facts([BALCONY], "u5", at="2025-03-01T09:00:00Z").added) == 1


def test_parse_cues_accepts_fenced_json_and_numbered_lines() -> None:
    assert parse_cues('```json\n{"1": ["a", "a", " b "]}\n```', 1) == {0: ["a", "b"]}
    assert parse_cues("1: gardening; sunlight\n2) cruise | ferry", 2) == {
        0: ["gardening", "sunlight"],
        1: ["cruise", "ferry"],
    }


def test_the_graph_writer_adds_cues_in_one_call_per_turn(mem_store: Any) -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    from langchain_lifecycle_memory import create_memory_writer

    model = CountingFake(responses=[json.dumps({"1": CUES["1"]})])
    extractor = RunnableLambda(lambda _: [BALCONY])
    writer = create_memory_writer(mem_store, extractor=extractor, cue_model=model)
    turn = [HumanMessage("My flat only has a small north-facing balcony."), AIMessage("Noted.")]
    writer.invoke({"messages": turn}, {"configurable": {"user_id": "g1"}})
    assert model.calls == 1
    memory = _memory(mem_store)
    assert memory.list("g1")[0].metadata[CUES_KEY][0] == "planning a garden"
    assert "north-facing balcony" in memory.inject(GARDEN, "g1").text
