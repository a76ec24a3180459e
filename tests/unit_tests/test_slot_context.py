"""The LLM extractor is shown the namespace's existing slots, so a model reuses ``editor`` instead of ``tool``.

``slot_context="prompt"`` lists them in the extraction prompt; the default (``"rename"``) extracts from the
conversation alone and then offers the stored names for the extracted names that are undecided.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory
from langchain_lifecycle_memory.graph.nodes import create_memory_writer
from langchain_lifecycle_memory.schema import MemoryStatus
from langchain_lifecycle_memory.write.extraction import create_extractor, create_rule_extractor
from langchain_lifecycle_memory.write.write_path import wants_slots
from tests.scripted_chat import ScriptedChatModel

NOW = datetime(2024, 3, 1, 10, tzinfo=timezone.utc)
NOTE = "reuse exactly that entity and attribute name"


def reply(attribute: str, value: str, content: str, entity: str = "user") -> str:
    fact = {"entity": entity, "attribute": attribute, "value": value, "content": content, "kind": "preference"}
    return json.dumps({"facts": [fact]})


EMPTY = '{"facts": []}'


def _model(**script: Any) -> ScriptedChatModel:
    return ScriptedChatModel(default=EMPTY, **script)


def human_text(model: ScriptedChatModel, call: int) -> str:
    return "\n".join(m.text for m in model.prompts[call][1:])  # all but the fixed system prompt


def test_the_prompt_lists_existing_slots_with_their_current_values() -> None:
    model = _model()
    slots = [("user", "editor", "Vim"), {"entity": "sister_maya", "attribute": "city", "value": "Boston"}]
    create_extractor(model, slot_context="prompt").invoke(
        {"messages": [HumanMessage("I've switched to VS Code")], "now": NOW, "slots": slots}
    )
    human = human_text(model, 0)
    assert NOTE in human
    assert "- user.editor: Vim" in human and "- sister_maya.city: Boston" in human
    assert human.index("- user.editor: Vim") < human.index("[user] I've switched to VS Code")


def test_without_slots_the_prompt_has_no_slot_section() -> None:
    model = _model()
    create_extractor(model).invoke({"messages": [HumanMessage("I like Vim")], "now": NOW})
    assert NOTE not in human_text(model, 0)


def test_the_slot_section_is_capped() -> None:
    model = _model()
    slots = [("user", f"attribute_number_{i}", "a fairly long current value " * 3) for i in range(200)]
    create_extractor(model, slot_context="prompt").invoke(
        {"messages": [HumanMessage("hi, I like tea")], "now": NOW, "slots": slots}
    )
    lines = [line for line in human_text(model, 0).splitlines() if line.startswith("- user.attribute_number_")]
    assert 1 <= len(lines) <= 30
    assert sum(len(line) + 1 for line in lines) <= 600


def test_bad_slot_items_say_what_is_expected() -> None:
    extractor = create_extractor(_model())
    with pytest.raises(TypeError, match=r"\(entity, attribute, value\)"):
        extractor.invoke({"messages": [HumanMessage("I like tea")], "now": NOW, "slots": ["user.editor"]})


def test_the_facade_passes_the_stored_slots_to_the_llm_extractor(mem_store: ChromaMemoryStore) -> None:
    model = _model(
        replies=[reply("editor", "Vim", "The user likes Vim."), reply("editor", "VS Code", "The user uses VS Code.")]
    )
    memory = LifecycleMemory(mem_store, extractor=create_extractor(model, slot_context="prompt"))
    memory.add_messages([("user", "I like using the Vim editor")], "u1", at="2024-01-01T10:00:00Z")
    assert NOTE not in human_text(model, 0)  # nothing stored yet
    memory.add_messages([("user", "I've switched to VS Code now")], "u1", at="2024-03-01T10:00:00Z")
    assert "- user.editor: Vim" in human_text(model, 1)
    assert [(r.value, r.status) for r in memory.history("u1", "user", "editor")] == [
        ("Vim", MemoryStatus.ARCHIVED),
        ("VS Code", MemoryStatus.ACTIVE),
    ]


def test_another_users_slots_are_never_shown(mem_store: ChromaMemoryStore) -> None:
    model = _model(replies=[reply("city", "Lisbon", "The user lives in Lisbon."), '{"facts": []}'])
    memory = LifecycleMemory(mem_store, extractor=model)
    memory.add_messages([("user", "I live in Lisbon")], "alice", at="2024-01-01")
    memory.add_messages([("user", "I live in Oslo")], "bob", at="2024-01-02")
    assert "Lisbon" not in human_text(model, 1) and NOTE not in human_text(model, 1)


def test_the_graph_writer_passes_the_stored_slots_too(mem_store: ChromaMemoryStore) -> None:
    model = _model(
        replies=[
            reply("city", "Boston", "The user's sister Maya lives in Boston.", entity="sister_maya"),
            '{"facts": []}',
        ]
    )
    writer = create_memory_writer(mem_store, extractor=create_extractor(model, slot_context="prompt"))
    config = {"configurable": {"user_id": "u1", "memory_now": "2024-01-01T10:00:00Z"}}
    writer.invoke({"messages": [HumanMessage("My sister Maya lives in Boston")]}, config)
    writer.invoke({"messages": [HumanMessage("Maya moved to Denver")]}, config)
    assert "- sister_maya.city: Boston" in human_text(model, 1)


def test_a_copy_of_a_listed_slot_that_the_turn_does_not_mention_is_dropped() -> None:
    model = _model(
        replies=[
            json.dumps(
                {
                    "facts": [
                        {"entity": "user", "attribute": "diet", "value": "vegetarian", "content": "echo"},
                        {"entity": "user", "attribute": "car", "value": "Tesla Model 3", "content": "new"},
                    ]
                }
            )
        ]
    )
    slots = [("user", "diet", "vegetarian")]
    facts = create_extractor(model).invoke({"messages": [HumanMessage("I drive a Tesla Model 3")], "slots": slots})
    assert [(f.attribute, f.value) for f in facts] == [("car", "Tesla Model 3")]


def test_extractors_ask_for_slots() -> None:
    assert wants_slots(create_extractor(_model()))
    assert wants_slots(create_rule_extractor())  # "I quit X" retracts the slot that holds X
