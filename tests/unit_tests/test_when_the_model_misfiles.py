"""A small model's misfiled slot gives way to the rules' reading of the same words.

A 1.5B model files what it cannot name under the prompt's example slot: "I take the funicular to work" and
"Got a longboard…" as ``editor``. Those slots fail their check against the words (``_grounding.py``) and used to be kept
as statements without a slot, so the later way to work never replaced the earlier one: both stayed current. When
the rules read a slot from the same words, that reading stands in, with no extra model call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory
from tests.told import told


class _Misfiling(FakeListChatModel):
    """Answers each extraction with the next canned facts; keeps every name when asked to rename slots."""

    def _call(self, messages: list[Any], *args: Any, **kwargs: Any) -> str:
        if messages and str(messages[-1].content).startswith("New facts:"):
            return '{"answers": []}'
        return super()._call(messages, *args, **kwargs)


def _memory(embeddings: Any, tmp_path: Path, *answers: list[dict[str, Any]]) -> LifecycleMemory:
    model = _Misfiling(responses=[json.dumps({"facts": facts}) for facts in answers])
    return LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings), extractor=model)


def _fact(attribute: str, value: str, content: str, entity: str = "user") -> dict[str, Any]:
    return {"entity": entity, "attribute": attribute, "value": value, "content": content, "confidence": 0.9}


def test_a_way_to_work_misfiled_by_the_model_still_replaces_the_last(embeddings: Any, tmp_path: Path) -> None:
    first = "I take the funicular to work every morning, it's a short ride."
    later = "Got a longboard in March. Skating to the office takes twelve minutes and it's the best part of my day."
    memory = _memory(
        embeddings,
        tmp_path,
        [_fact("editor", "funicular", "The user rides the funicular every morning.")],
        [_fact("editor", "longboard", later)],
    )
    memory.add_messages([("user", first)], user_id="u", at="2025-02-03")
    memory.add_messages([("user", later)], user_id="u", at="2025-04-09")

    commute = [(r.value, r.status.value) for r in memory.history("u", "user", "commute")]
    assert ("funicular", "archived") in commute
    assert [r.content for r in memory.active("u") if r.attribute == "commute"] == [later]
    assert not any(r.attribute == "editor" for r in memory.list("u", statuses=("active", "archived")))
    block = memory.inject("How do I get to work now?", user_id="u", now="2025-04-20").text
    assert "longboard" in block
    assert "funicular" not in block


@pytest.mark.parametrize(
    ("before", "after", "now"),
    [
        (
            "I drive to work, there's free parking behind the depot.",
            "Running to work takes me 25 minutes, I shower at the gym there.",
            "run",
        ),
        (
            "I carpool to the office with two coworkers.",
            "Biking to the office takes 18 minutes now that the new lane is open.",
            "bike",
        ),
    ],
    ids=["drive-then-run", "carpool-then-bike"],
)
def test_a_way_to_work_said_as_what_it_takes_replaces_the_last(
    embeddings: Any, tmp_path: Path, before: str, after: str, now: str
) -> None:
    memory = told(embeddings, tmp_path, (before, "2025-01-06"), (after, "2025-05-12"))
    assert [r.value for r in memory.active("u") if r.attribute == "commute"] == [now]
    assert len(memory.history("u", "user", "commute")) == 2


@pytest.mark.parametrize(
    ("held", "news", "query", "new", "old"),
    [
        (
            _fact("gym", "Planet Fitness", "My gym membership is at Planet Fitness, $10 a month."),
            _fact("editor", "Crunch Fitness", "Joined Crunch Fitness yesterday for the spin classes, $25 a month."),
            "Which gym do I go to?",
            "Crunch",
            "Planet",
        ),
        (
            _fact("broadband", "电信", "我的宽带是电信的，200 兆一个月 99。"),
            _fact("editor", "联通", "宽带换成联通了，500 兆一个月 129。"),
            "我家宽带是哪家的？",
            "联通",
            "电信",
        ),
    ],
    ids=["gym", "宽带"],
)
def test_a_value_filed_as_the_example_goes_where_its_words_and_kind_belong(
    embeddings: Any, tmp_path: Path, held: dict[str, Any], news: dict[str, Any], query: str, new: str, old: str
) -> None:
    """The example slot's name says nothing of a value no editor is: the statement and the kind of value decide.

    "Joined Crunch Fitness…" filed as ``editor`` is a new value of ``gym`` (statements 0.63, values 0.61 alike), so the
    old gym is archived; a fact of another kind (the job) is left alone.
    """
    job = _fact("job", "hospice chaplain", "I'm a hospice chaplain, so some weeks are heavy.")
    memory = _memory(embeddings, tmp_path, [held], [job], [news])
    for fact, at in ((held, "2025-01-06"), (job, "2025-02-03"), (news, "2025-05-12")):
        memory.add_messages([("user", fact["content"])], user_id="u", at=at)

    assert [r.value for r in memory.active("u") if r.attribute == held["attribute"]] == [news["value"]]
    assert [r.value for r in memory.active("u") if r.attribute == "job"] == ["hospice chaplain"]
    block = memory.inject(query, user_id="u", now="2025-06-01").text
    assert new in block and old not in block, block
