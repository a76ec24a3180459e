"""The batched slot judge: one model call per turn for slot names the offline resolution leaves undecided.

It can only map a new fact to a stored slot listed for it (or keep it new), never delete (``_slot_identity``).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableLambda

from langchain_lifecycle_memory.schema import Fact

__all__ = ["Question", "ask_judge", "create_slot_judge"]

logger = logging.getLogger(__name__)


@dataclass
class Question:
    """A fact whose slot or entity the offline resolution left undecided, with the stored candidates."""

    fact: int
    entity: str
    attribute: str
    candidates: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)


_SLOT_JUDGE_PROMPT = """You maintain a user's long-term memory as slots (entity, attribute) with values.
New facts were just extracted; some may name an EXISTING slot differently. For each numbered new fact,
answer which existing slot it is about (or null for a new slot), and whether that slot holds ONE value
(a new value replaces the old: city, employer, editor) or a SET of values (allergies, languages, pets).
You may only map a fact to a slot listed for it; you never delete anything.

Existing slots:
{slots}

New facts:
{facts}

Answer with JSON only: {{"decisions": [{{"fact": 0, "entity": "...", "attribute": "..." or null,
"cardinality": "single" or "set" or null}}]}}"""


def create_slot_judge(model: BaseChatModel, *, run_name: str = "judge_memory_slots") -> Runnable:
    """One LLM decision per turn: which stored slot each new fact means (it can only map, never delete).

    Example:
        .. code-block:: python

            config = UpdateConfig(slot_judge=create_slot_judge(ChatOpenAI(model="gpt-4o-mini")))
    """

    def _run(inputs: dict[str, Any]) -> list[dict[str, Any]]:
        reply = model.invoke(_SLOT_JUDGE_PROMPT.format(slots=inputs["slots"], facts=inputs["facts"]))
        text = reply.content if isinstance(reply.content, str) else json.dumps(reply.content)
        match = re.search(r"\{.*\}", text, re.DOTALL)
        data = json.loads(match.group(0)) if match else {}
        decisions = data.get("decisions", []) if isinstance(data, dict) else []
        return [d for d in decisions if isinstance(d, dict)]

    return RunnableLambda(_run).with_config(run_name=run_name)


def ask_judge(
    judge: Runnable, facts: list[Fact], questions: list[Question], catalogue: Sequence[dict[str, Any]]
) -> list[Fact]:
    """``facts`` with the judge's mappings applied (only to the candidates each question lists)."""
    slots = "\n".join(
        f"- ({r['entity']}, {r['attribute']}) = {r.get('value')!s} [{r.get('cardinality') or 'single'}]"
        for r in catalogue
    )
    lines = [
        f"{q.fact}. ({q.entity}, {q.attribute}) = {facts[q.fact].value}: {facts[q.fact].content!r}; could be: "
        + ", ".join([f"({q.entity}, {c})" for c in q.candidates] + [f"({e}, {q.attribute})" for e in q.entities])
        for q in questions
    ]
    try:
        decisions = judge.invoke({"slots": slots, "facts": "\n".join(lines)})
    except Exception:
        logger.exception("Slot judge failed; keeping the offline slot resolution")
        return facts
    allowed = {q.fact: q for q in questions}
    out = list(facts)
    for d in decisions:
        q = allowed.get(d.get("fact")) if isinstance(d.get("fact"), int) else None
        if q is None:
            continue
        entity = d.get("entity") if d.get("entity") in (q.entity, *q.entities) else q.entity
        attribute = d.get("attribute") if d.get("attribute") in (q.attribute, *q.candidates) else q.attribute
        update: dict[str, Any] = {"entity": entity, "attribute": attribute}
        if d.get("cardinality") in ("single", "set"):
            update["cardinality"] = d["cardinality"]
        out[q.fact] = out[q.fact].model_copy(update=update)
    return out
