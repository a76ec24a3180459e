"""Default slot context ("rename"): extraction sees only the conversation; stored slot names are offered afterwards.

A scripted model stands in for the LLM: its first reply is the extraction, a second one (only when an
extracted name is undecided) the rename answer.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from langchain_core.messages import HumanMessage

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory
from langchain_lifecycle_memory.schema import MemoryStatus
from langchain_lifecycle_memory.write.extraction import create_extractor
from tests.scripted_chat import ScriptedChatModel

NOW = datetime(2024, 3, 1, 10, tzinfo=timezone.utc)


def facts(*items: tuple[str, str, str]) -> str:
    return json.dumps(
        {"facts": [{"entity": e, "attribute": a, "value": v, "content": f"The user: {a} {v}."} for e, a, v in items]}
    )


def renames(*answers: tuple[int, str | None]) -> str:
    return json.dumps({"answers": [{"fact": i, "slot": slot} for i, slot in answers]})


def run(replies: list[Any], text: str, slots: list[tuple[str, str, str]]) -> tuple[list[Any], ScriptedChatModel]:
    model = ScriptedChatModel(replies=replies)
    out = create_extractor(model).invoke({"messages": [HumanMessage(text)], "now": NOW, "slots": slots})
    return [(f.entity, f.attribute, f.value) for f in out], model


def prompt_text(model: ScriptedChatModel, call: int, skip: int = 0) -> str:
    return "\n".join(m.text for m in model.prompts[call][skip:])


def test_a_drifted_name_is_renamed_onto_the_stored_slot_end_to_end(mem_store: ChromaMemoryStore) -> None:
    model = ScriptedChatModel(
        replies=[facts(("user", "editor", "Vim")), facts(("user", "tool", "VS Code")), renames((0, "editor"))]
    )
    memory = LifecycleMemory(mem_store, extractor=model)
    memory.add_messages([("user", "I like using the Vim editor")], "u1", at="2024-01-01T10:00:00Z")
    memory.add_messages([("user", "My go-to tool is VS Code now")], "u1", at="2024-03-01T10:00:00Z")
    assert model.calls == 3
    assert "Vim" not in prompt_text(model, 1, skip=1)  # the extraction call never sees the stored slots
    rename = prompt_text(model, 2)
    assert 'user.tool = "VS Code"' in rename and '"editor" (now: Vim)' in rename
    assert [(r.value, r.status) for r in memory.history("u1", "user", "editor")] == [
        ("Vim", MemoryStatus.ARCHIVED),
        ("VS Code", MemoryStatus.ACTIVE),
    ]


def test_no_rename_call_when_the_names_decide() -> None:
    slots = [("user", "editor", "Vim"), ("user", "drink", "tea"), ("sister_maya", "city", "Boston")]
    slots.append(("user", "running_shoes", "Nike Pegasus"))  # an invented name the store already holds
    # a stored name, a different vocabulary slot, a structural variant, a shortened entity, a vocabulary name
    # (canonical: never offered an invented one): one call each, no rename
    for reply, want in [
        (("user", "pet", "a cat"), ("user", "pet", "a cat")),
        (("user", "editor", "VS Code"), ("user", "editor", "VS Code")),
        (("user", "allergy", "penicillin"), ("user", "allergy", "penicillin")),
        (("user", "code_editor", "Emacs"), ("user", "editor", "Emacs")),
        (("maya", "city", "Denver"), ("sister_maya", "city", "Denver")),
    ]:
        got, model = run([facts(reply)], "some turn", slots)
        assert (got, model.calls) == ([want], 1)


def test_only_an_offered_name_is_taken_and_null_keeps_the_extracted_one() -> None:
    slots = [("user", "editor", "Vim")]
    extracted = facts(("user", "tool", "VS Code"), ("user", "gadget", "Kindle"))
    got, model = run([extracted, renames((0, "drink"), (1, None), (7, "editor"))], "VS Code and a Kindle", slots)
    assert got == [("user", "tool", "VS Code"), ("user", "gadget", "Kindle")]
    assert model.calls == 2


def test_a_failed_or_garbled_rename_keeps_every_extracted_fact() -> None:
    slots = [("user", "editor", "Vim")]
    for answer in [RuntimeError("server down"), "not json at all", '{"answers": "editor"}']:
        got, _ = run([facts(("user", "tool", "VS Code")), answer], "VS Code now", slots)
        assert got == [("user", "tool", "VS Code")]


def test_the_rename_answer_cannot_add_facts_or_values() -> None:
    slots = [("user", "editor", "Vim"), ("user", "drink", "black coffee")]
    answer = json.dumps(
        {"answers": [{"fact": 0, "slot": "editor", "value": "black coffee"}, {"fact": 1, "slot": "drink"}]}
    )
    got, _ = run([facts(("user", "tool", "VS Code")), answer], "VS Code now", slots)
    assert got == [("user", "editor", "VS Code")]


def test_another_users_slots_are_never_offered(mem_store: ChromaMemoryStore) -> None:
    model = ScriptedChatModel(replies=[facts(("user", "editor", "Vim")), facts(("user", "tool", "VS Code"))])
    memory = LifecycleMemory(mem_store, extractor=model)
    memory.add_messages([("user", "I like Vim")], "alice", at="2024-01-01")
    memory.add_messages([("user", "My tool is VS Code")], "bob", at="2024-01-02")
    assert model.calls == 2  # bob has no slots: nothing to offer, no rename call
    assert [r.value for r in memory.history("bob", "user", "tool")] == ["VS Code"]


async def test_the_async_path_renames_the_same_way() -> None:
    model = ScriptedChatModel(replies=[facts(("user", "tool", "VS Code")), renames((0, "editor"))])
    value = {"messages": [HumanMessage("VS Code now")], "now": NOW, "slots": [("user", "editor", "Vim")]}
    out = await create_extractor(model).ainvoke(value)
    assert [(f.attribute, f.value) for f in out] == [("editor", "VS Code")] and model.calls == 2


def test_a_change_filed_under_a_vocabulary_name_the_user_has_not_is_offered_the_stored_slots(
    mem_store: ChromaMemoryStore,
) -> None:
    """Words of a change mean an old value somewhere: a vocabulary name the user holds nothing under is asked about.

    A small model files "Bought a Brompton, now I ride it to the office" as ``job``; the stored slots are offered
    (one narrow call), the answer moves it onto ``commute`` and the tram is archived. The same name in words that
    state no change, or that speak of someone else, is taken as it is (no call).
    """
    model = ScriptedChatModel(
        replies=[
            facts(("user", "commute", "38 tram")),
            facts(("user", "job", "Brompton")),
            renames((0, "commute")),
        ]
    )
    memory = LifecycleMemory(mem_store, extractor=model)
    memory.add_messages([("user", "I take the 38 tram to the office.")], "u1", at="2024-01-08T08:00:00Z")
    memory.add_messages(
        [("user", "Bought a Brompton, now I ride it to the office every day.")], "u1", at="2024-04-02T08:00:00Z"
    )
    assert model.calls == 3 and '"commute" (now: 38 tram)' in prompt_text(model, 2)
    assert [(r.value, r.status) for r in memory.history("u1", "user", "commute")] == [
        ("38 tram", MemoryStatus.ARCHIVED),
        ("Brompton", MemoryStatus.ACTIVE),
    ]

    slots = [("user", "commute", "38 tram")]
    for said in ("I'm a locksmith.", "My neighbour bought a Brompton, now he rides it to the office."):
        got, model = run([facts(("user", "job", "Brompton"))], said, slots)
        assert (got, model.calls) == ([("user", "job", "Brompton")], 1), said
