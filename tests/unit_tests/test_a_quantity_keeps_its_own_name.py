"""A bare quantity is never taken as a new value of a slot that holds words.

A model tells "I'm a saddler, my day rate is around $240" as one statement under ``job``. When the user later
says the rate went up, the new fact (``day_rate = $310``) reads close to that statement, and a rename step or
a model's answer can put it under ``job``: the update then refuses it (a number is no job), and the rise was
kept as a statement with no slot. The quantity keeps the name the model gave it, so it opens its own slot and
the job stays as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory


class _Scripted(FakeListChatModel):
    """Answers each extraction with the next canned facts; a rename question gets ``rename`` as its answer."""

    rename: str = '{"answers": []}'

    def _call(self, messages: list[Any], *args: Any, **kwargs: Any) -> str:
        if messages and str(messages[-1].content).startswith("New facts:"):
            return self.rename
        return super()._call(messages, *args, **kwargs)


def _told(
    embeddings: Any,
    tmp_path: Path,
    first: tuple[str, dict[str, Any]],
    then: tuple[str, dict[str, Any]],
    *,
    rename: str = '{"answers": []}',
) -> LifecycleMemory:
    """A memory told ``first`` in January and ``then`` in April, each turn's words with the fact the model gives."""
    said = [(*first, "2025-01-10"), (*then, "2025-04-02")]
    responses = [json.dumps({"facts": [{**fact, "entity": "user", "confidence": 0.9}]}) for _, fact, _ in said]
    model = _Scripted(responses=responses, rename=rename)
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings), extractor=model)
    for words, _, at in said:
        memory.add_messages([("user", words)], user_id="u", at=at)
    return memory


DOORS = (
    "我做门窗安装的，日薪大概 380。",
    {"attribute": "job", "value": "门窗安装", "content": "用户做门窗安装，日薪大概 380"},
)
SOUSAPHONES = (
    "I repair sousaphones for a living.",
    {"attribute": "job", "value": "sousaphone repairer", "content": "The user repairs sousaphones for a living."},
)
BENCH_RATE = (
    "I bill $95 an hour for bench work.",
    {"attribute": "hourly_rate", "value": "$95", "content": "The user bills $95 an hour for bench work."},
)
RIDE = (
    "现在每天骑车 12 公里去工地。",
    {"attribute": "commute", "value": "骑车", "content": "用户现在每天骑车 12 公里去工地"},
)
SAWMILL_PAY = (
    "The sawmill pays me $5,200 a month.",
    {"attribute": "monthly_pay", "value": "$5,200", "content": "The sawmill pays the user $5,200 a month."},
)
HANGAR = ("My hangar spot costs $140 a month now.", {"attribute": "value", "value": "$140", "content": "$140 a month"})


CASES = [
    pytest.param(
        (
            "I'm a saddler, I make and repair saddles, and my day rate is around $240.",
            {
                "attribute": "job", "value": "saddler",
                "content": "The user is a saddler who makes and repairs saddles, with a day rate of around $240.",
            },
        ),
        (
            "Raised my day rate this spring, it's $310 now.",
            {"attribute": "day_rate", "value": "$310", "content": "The user's day rate as a saddler is now $310."},
        ),
        "What's my day rate these days?",
        id="en",
    ),
    pytest.param(
        DOORS,
        (
            "老板给涨了，现在日薪 450。",
            {"attribute": "日薪", "value": "450", "content": "用户做门窗安装，现在日薪 450"},
        ),
        "我现在日薪多少？",
        id="zh",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("job", "rise", "question"), CASES)
def test_a_rise_opens_its_own_slot_beside_the_job(
    embeddings: Any, tmp_path: Path, job: tuple[str, dict[str, Any]], rise: tuple[str, dict[str, Any]], question: str
) -> None:
    memory = _told(embeddings, tmp_path, job, rise)
    rate = rise[1]
    assert [r.value for r in memory.history("u", "user", rate["attribute"])] == [rate["value"]]
    assert [r.value for r in memory.history("u", "user", "job")] == [job[1]["value"]]
    assert rate["value"] in memory.inject(question, user_id="u", now="2025-04-20").text


def test_a_model_that_answers_the_job_for_a_rate_is_not_followed(embeddings: Any, tmp_path: Path) -> None:
    """The narrow rename call is offered no slot that holds words for a bare number, whatever the model would say."""
    memory = _told(embeddings, tmp_path, SOUSAPHONES, BENCH_RATE, rename='{"answers": [{"fact": 0, "slot": "job"}]}')
    assert [r.value for r in memory.history("u", "user", "hourly_rate")] == ["$95"]
    assert [r.value for r in memory.active("u") if r.attribute == "job"] == ["sousaphone repairer"]


SPLIT_CASES = [
    pytest.param(
        ("I'm a saddler, earning $240 a day.",
         {"attribute": "job", "value": "saddler", "content": "The user is a saddler, earning $240 a day."}),
        ("Raised my prices this spring, I'm earning $310 a day now.",
         {"attribute": "day_rate", "value": "$310", "content": "The user is now earning $310 a day."}),
        "What do I do for a living?", "$240", "How much was I earning a day in February?",
        id="en",
    ),
    pytest.param(
        DOORS,
        ("老板给涨了，现在日薪 450。", {"attribute": "日薪", "value": "450", "content": "用户现在日薪 450"}),
        "我是做什么工作的？", "380", "二月份我日薪多少？",
        id="zh",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("job", "rise", "question", "old", "then_question"), SPLIT_CASES)
def test_a_new_rate_takes_the_old_one_out_of_the_job_statement(
    embeddings: Any,
    tmp_path: Path,
    job: tuple[str, dict[str, Any]],
    rise: tuple[str, dict[str, Any]],
    question: str,
    old: str,
    then_question: str,
) -> None:
    """The job holds and is still shown; the rate it was told with is history, replaced by the new one."""
    memory = _told(embeddings, tmp_path, job, rise)
    block = memory.inject(question, user_id="u", now="2025-04-20").text
    assert job[1]["value"] in block
    assert old not in block
    assert [r.value for r in memory.active("u") if r.attribute == "job"] == [job[1]["value"]]
    then = [r for r in memory.list("u", statuses=("archived",)) if old in r.content]
    assert len(then) == 1
    assert then[0].valid_to is not None and then[0].valid_to.date().isoformat() == "2025-04-02"
    assert old in memory.inject(then_question, user_id="u", now="2025-04-20", as_of="2025-02-15").text


def test_a_change_of_another_measure_leaves_the_statement_whole(embeddings: Any, tmp_path: Path) -> None:
    memory = _told(embeddings, tmp_path, DOORS, RIDE)
    assert [r.content for r in memory.active("u") if r.attribute == "job"] == ["用户做门窗安装，日薪大概 380"]
    assert memory.list("u", statuses=("archived",)) == []


def test_a_fact_filed_under_a_field_name_is_kept_as_said(embeddings: Any, tmp_path: Path) -> None:
    """A small model answers ``"attribute": "value"`` when it has no name: the statement is kept, in no slot."""
    memory = _told(embeddings, tmp_path, SAWMILL_PAY, HANGAR)
    assert [r.value for r in memory.history("u", "user", "monthly_pay")] == ["$5,200"]
    said = [r for r in memory.active("u") if "$140" in r.content]
    assert [(r.attribute, r.value) for r in said] == [(None, None)]


def test_a_rate_corrected_in_the_same_turn_leaves_an_added_job_without_it(embeddings: Any, tmp_path: Path) -> None:
    """Both facts of one turn: the job is reported as added, in its trimmed words, and the old rate as history."""
    model = _Scripted(
        responses=[
            json.dumps({"facts": [
                {"entity": "user", "attribute": "job", "value": "saddler", "confidence": 0.9,
                 "content": "The user is a saddler, earning $240 a day."},
                {"entity": "user", "attribute": "day_rate", "value": "$310", "confidence": 0.9,
                 "content": "The user is now earning $310 a day."},
            ]})
        ]
    )  # fmt: skip
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings), extractor=model)
    said = "I'm a saddler, earning $240 a day back then; since the spring I'm earning $310 a day now."
    result = memory.add_messages([("user", said)], user_id="u", at="2025-04-02")
    assert sorted(r.content for r in result.added) == ["The user is a saddler.", "The user is now earning $310 a day."]
    assert [r.content for r in result.archived] == ["earning $240 a day"]
    assert result.refreshed == []
