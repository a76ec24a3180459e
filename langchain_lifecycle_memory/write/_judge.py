"""The conflict judge: an LLM that decides which stored free-text facts a new fact makes untrue (archive only)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from pydantic import BaseModel, Field

from langchain_lifecycle_memory.schema import MemoryRecord
from langchain_lifecycle_memory.write._structured import (
    METHODS,
    PROMPTED,
    MethodChain,
    Steps,
    adrive,
    drive,
    structured_call,
)

__all__ = ["ConflictVerdict", "create_conflict_judge"]


class ConflictVerdict(BaseModel):
    """The conflict judge's answer: ids of stored facts the new fact makes untrue."""

    superseded_ids: list[str] = Field(default_factory=list, description="ids of OLD facts that are no longer true")


_JUDGE_PROMPT = (
    "You maintain a user's long-term memory. A NEW fact was just learned. Decide which of the "
    "OLD facts it makes no longer true (replaced, contradicted or retracted). Only list ids of "
    "OLD facts that are clearly superseded; facts that can both be true stay. Answer with the ids.\n\n"
    "NEW: {new}\n\nOLD:\n{old}"
)
_JUDGE_JSON = '\n\nReply with JSON only: {"superseded_ids": ["<id>", ...]} (an empty list when none is superseded).'


def _offered_ids(answers: Sequence[str], offered: Sequence[str]) -> list[str]:
    """The offered ids that a judge's answers name: exactly, inside a longer answer, or by a unique 8+ prefix."""
    out: list[str] = []
    for answer in answers:
        text = str(answer).strip().casefold()
        named = [i for i in offered if i.casefold() == text] or [i for i in offered if i.casefold() in text]
        if not named:
            token = text.removeprefix("id=").removeprefix("id:").strip()
            prefixed = [i for i in offered if len(token) >= 8 and i.casefold().startswith(token)]
            named = prefixed if len(prefixed) == 1 else []
        out += [i for i in named if i not in out]
    return out


def create_conflict_judge(
    model: BaseChatModel, *, run_name: str = "judge_memory_conflicts", methods: Sequence[str] = METHODS
) -> Runnable:
    """An LLM judge for free-text facts: returns ``ConflictVerdict`` (it can only archive).

    Structured output falls back like extraction's; a failed call raises (the write path then archives nothing).

    Example:
        .. code-block:: python

            judge = create_conflict_judge(ChatOpenAI(model="gpt-4o-mini"))
            config = UpdateConfig(judge=judge)
    """
    chain = MethodChain(model, ConflictVerdict, tuple(methods))

    def steps(inputs: dict[str, Any]) -> Steps:
        candidates: list[MemoryRecord] = inputs["candidates"]
        old = "\n".join(f"- id={c.id}: {c.content}" for c in candidates)
        question = _JUDGE_PROMPT.format(new=inputs["new"], old=old)

        def build(method: str) -> list[BaseMessage]:
            return [HumanMessage(question + (_JUDGE_JSON if method in PROMPTED else ""))]

        verdict = yield from structured_call(chain, build, ConflictVerdict)
        return ConflictVerdict(superseded_ids=_offered_ids(verdict.superseded_ids, [c.id for c in candidates]))

    def _run(inputs: dict[str, Any], config: RunnableConfig) -> ConflictVerdict:
        return drive(steps(inputs), config)

    async def _arun(inputs: dict[str, Any], config: RunnableConfig) -> ConflictVerdict:
        return await adrive(steps(inputs), config)

    return RunnableLambda(_run, afunc=_arun).with_config(run_name=run_name)
