"""Existing slots reach the model after extraction, as a choice of names: "is ``tool`` your ``editor``?".

Listed in the extraction prompt, slots get copied back as facts by small models; so structure renames
first, and only undecided facts go to ONE narrow call per turn whose answer is a slot name, never a value.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from pydantic import BaseModel, Field

from langchain_lifecycle_memory.schema import Fact
from langchain_lifecycle_memory.vocabulary import AttributeSpec
from langchain_lifecycle_memory.write._change import states_a_change
from langchain_lifecycle_memory.write._grounding import (
    held_clause,
    number_for_words,
    speaks_of_someone_else,
    told_of_them,
)
from langchain_lifecycle_memory.write._slot_identity import resolve_entity
from langchain_lifecycle_memory.write._slot_names import attribute_relation, core
from langchain_lifecycle_memory.write._structured import PROMPTED, MethodChain, is_capability_error, loads_tolerant

logger = logging.getLogger("langchain_lifecycle_memory.write.extraction")

_MAX_CHOICES = 8


class SlotChoice(BaseModel):
    """The stored slot one new fact is about."""

    fact: int = Field(description="The new fact's number.")
    slot: str | None = Field(description="One of the names offered for that fact, or null for a new slot.")


class SlotChoices(BaseModel):
    """For each numbered new fact, the stored slot it gives a new value of (null when none)."""

    answers: list[SlotChoice] = Field(default_factory=list)


@dataclass(frozen=True)
class Question:
    fact: int
    entity: str
    choices: tuple[str, ...]


_SYSTEM = """NEW TASK (no extraction this time). You keep a user's long-term memory as named slots
(entity.attribute = value). New facts were just extracted under names that are not stored yet.
For each numbered new fact, compare its value with the current values of the stored slots offered for it.
If the new value is the same kind of thing as a stored slot's value, answer that slot's name: "VS Code" and
"Vim" are both code editors, so a new fact "tool = VS Code" answers "editor". If no offered slot holds that
kind of thing, answer null."""

_JSON_SHAPE = """
Reply with JSON only, in exactly this shape: {"answers": [{"fact": 0, "slot": "editor"}]}"""


def plan(
    facts: Sequence[Fact], slots: Sequence[tuple[str, str, str | None]], specs: dict[str, AttributeSpec], said: str = ""
) -> tuple[list[Fact], list[Question]]:
    """Facts with structural renames applied, and the questions left for the model.

    A vocabulary name is canonical and never offered an invented one, unless the user's words (``said``) state a
    change of theirs (:func:`_a_change_of_theirs`) and the user holds nothing under it: "Bought a Brompton, now I
    ride it to the office" filed as ``job`` ends an old value somewhere, so every stored slot is offered.
    """
    by_entity: dict[str, dict[str, list[str | None]]] = {}
    for entity, attribute, value in slots:
        by_entity.setdefault(entity, {}).setdefault(attribute, []).append(value)
    entities = list(by_entity)
    out, questions = list(facts), []
    for i, fact in enumerate(facts):
        if fact.slot is None:
            continue
        entity, _ = resolve_entity(fact.entity or "", entities)
        attribute = fact.attribute or ""
        stored = list(by_entity.get(entity, {}))
        if entity != fact.entity:
            out[i] = fact.model_copy(update={"entity": entity})
        if not stored or attribute in stored:
            continue
        changed = attribute in specs and _a_change_of_theirs(fact, said)
        if attribute in specs and not changed:  # a vocabulary name is the canonical one: never renamed onto another
            continue
        relations = {name: attribute_relation(attribute, name, specs) for name in stored}
        if same := [name for name, rel in relations.items() if rel == "same"]:
            best = max(same, key=lambda name: len(core(name) & core(attribute)))
            out[i] = out[i].model_copy(update={"attribute": best})
            continue
        held = by_entity[entity]  # a bare quantity is offered no slot that holds words ("年薪 33 万" is no job)
        open_ = (
            n for n, rel in relations.items() if (rel is None or changed) and not number_for_words(fact.value, held[n])
        )
        if choices := tuple(open_)[:_MAX_CHOICES]:
            questions.append(Question(i, entity, choices))
    return out, questions


def _a_change_of_theirs(fact: Fact, said: str) -> bool:
    """Whether the user's words state a change and the clause that holds the fact's value is not someone else's."""
    clause = held_clause(fact.value, said) or said
    return states_a_change(said) and not (speaks_of_someone_else(clause) or told_of_them(fact.value or "", said))


def prompt(
    facts: Sequence[Fact],
    questions: Sequence[Question],
    slots: Sequence[tuple[str, str, str | None]],
    *,
    head: Sequence[BaseMessage] = (),
    json_shape: bool,
) -> list[BaseMessage]:
    """The rename call's messages: ``head`` (the extraction's cached prefix), the task, the numbered facts."""
    values = {(e, a): v for e, a, v in slots}
    lines = []
    for q in questions:
        f = facts[q.fact]
        offered = ", ".join(
            f'"{name}"' + (f" (now: {' '.join(str(v).split())[:40]})" if (v := values.get((q.entity, name))) else "")
            for name in q.choices
        )
        lines.append(
            f'{q.fact}. {q.entity}.{f.attribute} = "{f.value}" ({f.content}) -- choose from: {offered}, or null'
        )
    system = _SYSTEM + (_JSON_SHAPE if json_shape else "")
    return [*head, SystemMessage(system), HumanMessage("New facts:\n" + "\n".join(lines))]


def answers_of(output: object) -> list[SlotChoice]:
    """The model's answers from structured output, a tool call or JSON text (malformed -> ``[]``)."""
    data: object = output
    if isinstance(output, dict) and "raw" in output:
        data = output.get("parsed")
        if data is None:
            raw = output.get("raw")
            calls = getattr(raw, "tool_calls", None) or []
            data = calls[0].get("args") if calls else getattr(raw, "text", None)
    elif isinstance(output, BaseMessage):
        calls = getattr(output, "tool_calls", None) or []
        data = calls[0].get("args") if calls else output.text
    try:
        if isinstance(data, BaseModel):
            data = data.model_dump()
        if isinstance(data, str):
            data = loads_tolerant(data)
        if isinstance(data, list):
            data = {"answers": data}
        return SlotChoices.model_validate(data).answers
    except (ValueError, TypeError) as e:
        logger.info("Slot rename answer unusable (%s); the extracted names are kept", e)
        return []


def apply(facts: Sequence[Fact], questions: Sequence[Question], answers: Sequence[SlotChoice]) -> list[Fact]:
    """Rename the facts whose answer is one of the names offered to them; nothing else changes."""
    offered = {q.fact: q.choices for q in questions}
    out = list(facts)
    for answer in answers:
        choices = offered.get(answer.fact, ())
        if answer.slot in choices:
            out[answer.fact] = out[answer.fact].model_copy(update={"attribute": answer.slot})
    return out


def rename(
    renamer: MethodChain,
    rejected: dict[str, str],
    head: Callable[[str], list[BaseMessage]],
    facts: list[Fact],
    slots: Sequence[tuple[str, str, str | None]],
    specs: dict[str, AttributeSpec],
    said: str = "",
) -> Generator[tuple[Runnable[Any, Any], Any], Any, list[Fact]]:
    """The rename step as :data:`Steps`, skipping the ``rejected`` methods; any failure keeps the extracted names.

    ``said``: the user's words in the turn (:func:`plan`).
    """
    if not slots:
        return facts
    facts, questions = plan(facts, slots, specs, said)
    while questions:
        for method in rejected:
            if renamer.method == method and not renamer.exhausted:
                renamer.reject(method, NotImplementedError(rejected[method]))
        try:
            method, step = renamer.step()
        except NotImplementedError:
            return facts
        try:
            output = yield step, prompt(facts, questions, slots, head=head(method), json_shape=method in PROMPTED)
        except Exception as e:  # a capability error falls back; any other failure keeps the extracted names
            if method != renamer.methods[-1] and is_capability_error(e):
                renamer.reject(method, e)
                continue
            logger.warning("Slot rename call failed (%s: %s); the extracted names are kept", type(e).__name__, e)
            return facts
        return apply(facts, questions, answers_of(output))
    return facts
