"""An extracted fact checked against its own sentence before it may replace what the user holds.

A sentence that speaks of someone else in the third person ("小崔现在去开网约车了，她说比坐办公室自在", filed by a
small model as the user's ``job``) leaves the user's value: the sentence is kept as a statement, and still ends
what was said of that person. A relative kept under an id whose name has no romanization (``nephew_旺``) is found
by the name as written (阿旺). A value the user is working towards ("studying to become a patent agent", "在备考一级
注册结构工程师") is not one they hold yet: the job stays until they get there; an empty slot still takes a goal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory


def _told(embeddings: Any, tmp_path: Path, turns: list[tuple[str, str, dict[str, Any]]]) -> LifecycleMemory:
    """A memory told each turn's words, with the fact the model gives for them (``entity`` defaults to the user)."""
    facts = [{"entity": "user", "confidence": 0.9, **fact} for _, _, fact in turns]
    responses = [json.dumps({"facts": [fact]}) for fact in facts]
    memory = LifecycleMemory(
        ChromaMemoryStore(tmp_path / "m", embeddings=embeddings), extractor=FakeListChatModel(responses=responses)
    )
    for at, words, _ in turns:
        memory.add_messages([("user", words)], user_id="u", at=at)
    return memory


DESIGNER = (
    "2025-01-08",
    "我是做室内设计的。",
    {"attribute": "job", "value": "室内设计师", "content": "用户是室内设计师"},
)
NEPHEW = (
    "2025-02-16",
    "我外甥阿旺今年九岁，最近在学单簧管。",
    {"attribute": None, "value": None, "content": "用户的外甥阿旺今年九岁，最近在学单簧管"},
)
NEPHEW_NOW = (
    "2025-05-04",
    "阿旺现在改学小号了，他说更好玩。",
    {"attribute": "job", "value": "小号老师", "content": "阿旺现在改学小号了"},
)


def test_news_of_a_nephew_is_found_by_his_name_and_keeps_the_users_job(embeddings: Any, tmp_path: Path) -> None:
    memory = _told(embeddings, tmp_path, [DESIGNER, NEPHEW, NEPHEW_NOW])

    nephew = memory.inject("阿旺现在在学什么乐器？", user_id="u", now="2025-06-01").text
    job = memory.inject("我是做什么工作的？", user_id="u", now="2025-06-01").text

    assert "小号" in nephew
    assert "室内设计师" in job
    assert [r.status.value for r in memory.list("u", statuses=None) if r.value == "室内设计师"] == ["active"]


def _job(at: str, said: str, value: str, content: str) -> tuple[str, str, dict[str, str]]:
    """A turn and the model's fact for it: the user's job."""
    return at, said, {"attribute": "job", "value": value, "content": content}


PARALEGAL = _job(
    "2025-01-08", "I'm a paralegal at Quenby & Hart.", "paralegal", "The user is a paralegal at Quenby & Hart."
)
DRAFTER = _job("2025-01-08", "我在设计院画施工图，是结构设计员。", "结构设计员", "用户是结构设计员")
TEACHER = _job("2025-01-08", "我在一所小学教语文。", "小学语文老师", "用户是小学语文老师")
SURVEYOR = _job(
    "2025-01-08",
    "I work as a land surveyor for the county.",
    "land surveyor",
    "The user is a land surveyor for the county.",
)
LATER = "2025-04-02"


@pytest.mark.parametrize(
    ("first", "then", "question", "held"),
    [
        pytest.param(
            PARALEGAL,
            _job(LATER, "Studying to become a patent agent, flashcards all over my desk.", "patent agent",
                 "The user is a patent agent."),
            "What do I do for work?", "paralegal", id="goal-en",
        ),
        pytest.param(
            DRAFTER,
            _job(LATER, "最近在备考一级注册结构工程师，天天刷题。", "一级注册结构工程师", "用户是一级注册结构工程师"),
            "我现在是做什么的？", "结构设计员", id="goal-zh",
        ),
        pytest.param(
            TEACHER,
            _job(LATER, "最近在给学校编一本奥数习题集，周末都搭进去了。", "奥数习题编辑", "用户是奥数习题编辑"),
            "我是做什么工作的？", "小学语文老师", id="head-zh",
        ),
        pytest.param(
            SURVEYOR,
            _job(LATER, "Spent the whole week on a zoning appeal brief, so tired.", "zoning appeal attorney",
                 "The user is a zoning appeal attorney."),
            "What do I do for work?", "land surveyor", id="head-en",
        ),
    ],
)  # fmt: skip
def test_a_goal_or_an_unsaid_kind_does_not_replace_the_job(
    embeddings: Any, tmp_path: Path, first, then, question, held
) -> None:
    # A goal ("studying to become…") is not held yet; a kind the sentence never said (奥数习题编辑 from "编一本奥数
    # 习题集", a zoning appeal attorney from "a zoning appeal brief") is what the work was about, not the worker.
    memory = _told(embeddings, tmp_path, [first, then])

    block = memory.inject(question, user_id="u", now="2025-05-01").text

    assert held in block
    assert [r.status.value for r in memory.list("u", statuses=None) if r.value == held] == ["active"]


def test_a_goal_reached_replaces_the_job(embeddings: Any, tmp_path: Path) -> None:
    then = _job(
        "2025-09-12",
        "Passed the exam! I'm a registered patent agent now.",
        "registered patent agent",
        "The user is now a registered patent agent.",
    )
    memory = _told(embeddings, tmp_path, [PARALEGAL, then])

    block = memory.inject("What do I do for work?", user_id="u", now="2025-10-01").text

    assert "registered patent agent" in block
    assert "paralegal" not in block


def test_news_of_another_replaces_what_was_said_of_them(embeddings: Any, tmp_path: Path) -> None:
    # A small model gives the daughter's name as the user's (``name`` = 小穗) and her new class as the user's job:
    # both fail their check and are kept as the user's statements; the second replaces the first, not the job.
    said_before = "我的女儿小穗今年六岁，上小学一年级，最近在学陶笛。"
    now = "小穗现在改学架子鼓了，每周日下午上课，她说比之前那个带劲。"
    memory = _told(
        embeddings,
        tmp_path,
        [
            DESIGNER,
            ("2025-02-16", said_before, {"attribute": "name", "value": "小穗", "content": said_before}),
            (
                "2025-05-04",
                now,
                {"attribute": "job", "value": "架子鼓老师", "content": "小穗现在改学架子鼓了，每周日下午上课。"},
            ),
        ],
    )

    block = memory.inject("小穗现在周末在学什么？", user_id="u", now="2025-06-01").text
    job = memory.inject("我是做什么工作的？", user_id="u", now="2025-06-01").text

    assert "架子鼓" in block
    assert "陶笛" not in block
    assert "室内设计师" in job
    assert [r.status.value for r in memory.list("u", statuses=None) if r.content == said_before] == ["archived"]


def test_a_goal_with_nothing_before_it_opens_its_slot(embeddings: Any, tmp_path: Path) -> None:
    # Only a value the user holds is protected from a goal; a goal slot with nothing in it takes the goal.
    said = "I'm training for the Coniston End to End swim this summer."
    memory = _told(
        embeddings,
        tmp_path,
        [("2025-03-02", said, {"attribute": "goal", "value": "Coniston End to End swim", "content": said})],
    )

    goals = [r for r in memory.list("u") if r.attribute == "goal"]

    assert [r.value for r in goals] == ["Coniston End to End swim"]


TALLY_CLERK = (
    "2025-02-10",
    "我在一家物流公司的仓库做理货员。",
    {"attribute": "job", "value": "理货员", "content": "用户在物流公司的仓库做理货员"},
)
SUPPORT = (
    "2025-02-10",
    "I'm a support engineer at Quorvane.",
    {"attribute": "job", "value": "support engineer", "content": "The user is a support engineer at Quorvane."},
)


@pytest.mark.parametrize(
    ("first", "then", "question", "mine", "hers"),
    [
        pytest.param(
            TALLY_CLERK,
            (
                "2025-05-06",
                "小崔现在去开网约车了，她说比坐办公室自在多了。",
                {"attribute": "job", "value": "网约车司机", "content": "用户现在开网约车"},
            ),
            "我现在是做什么工作的？",
            "理货员",
            "网约车",
            id="zh-she",
        ),
        pytest.param(
            SUPPORT,
            (
                "2025-05-06",
                "Bexley quit the bakery, he drives for a moving company now and says the night jobs pay double.",
                {
                    "attribute": "job",
                    "value": "moving company driver",
                    "content": "The user drives for a moving company.",
                },
            ),
            "What do I do for work?",
            "support engineer",
            "moving company",
            id="en-he",
        ),
    ],
)
def test_a_third_person_sentence_leaves_the_users_job(
    embeddings: Any, tmp_path: Path, first, then, question, mine, hers
) -> None:
    memory = _told(embeddings, tmp_path, [first, then])

    block = memory.inject(question, user_id="u", now="2025-06-01").text

    assert mine in block
    records = memory.list("u", statuses=None)
    assert [r.status.value for r in records if r.value == mine] == ["active"]
    assert not [r for r in records if r.value and hers in r.value]  # no slot of the user's holds it
    assert [r.status.value for r in records if hers in r.content] == ["active"]  # what was said is kept


def test_a_sentence_where_the_user_speaks_too_still_changes_the_job(embeddings: Any, tmp_path: Path) -> None:
    then = (
        "2025-05-06",
        "My manager finally signed off, she says I'm escalation lead from this week.",
        {"attribute": "job", "value": "escalation lead", "content": "The user is now escalation lead."},
    )
    memory = _told(embeddings, tmp_path, [SUPPORT, then])

    block = memory.inject("What do I do for work?", user_id="u", now="2025-06-01").text

    assert "escalation lead" in block
    assert "support engineer" not in block


_FARTHER = "Pushed it to 9 km per outing now, coach says my stroke is cleaner."


@pytest.mark.parametrize(
    "fact",
    [
        pytest.param({"attribute": None, "value": None, "content": _FARTHER}, id="statement"),
        pytest.param(  # the prompt's example echoed, not in the words: dropped, the words kept in its place
            {"attribute": "editor", "value": "VS Code", "content": "The user now uses the VS Code editor."},
            id="words-kept",
        ),
    ],
)
def test_a_distance_said_again_ends_the_clause_that_gave_it_in_another_language(
    embeddings: Any, tmp_path: Path, fact: dict[str, Any]
) -> None:
    rowing = (
        "2025-01-06",
        "我每周划四次船，每次 6 公里。",
        {"attribute": "sport", "value": "划船", "content": "The user rows four mornings a week, each time 6 km."},
    )
    memory = _told(embeddings, tmp_path, [rowing, ("2025-04-20", _FARTHER, fact)])

    block = memory.inject("How far do I row each time?", user_id="u", now="2025-05-01").text

    assert "9 km" in block and "6 km" not in block, block
    assert [r.status.value for r in memory.list("u", statuses=None) if r.value == "划船"] == ["active"]
    assert any("6 km" in r.content for r in memory.list("u", statuses=None)), "the old distance is kept as history"


@pytest.mark.parametrize(
    ("first", "then", "question", "now", "before"),
    [
        pytest.param(
            (
                "2025-01-08",
                "我是一家超市的会计。",
                {"attribute": "job", "value": "会计", "content": "用户是超市的会计"},
            ),
            (
                "2025-04-02",
                "我现在改做审计了。",
                {"attribute": "job", "value": "审计员", "content": "用户现在做审计员"},
            ),
            "我是做什么工作的？",
            "审计员",
            "会计",
            id="zh-suffix",
        ),
        pytest.param(
            (
                "2025-01-08",
                "I've been pescatarian for years.",
                {"attribute": "diet", "value": "pescatarian", "content": "The user is pescatarian."},
            ),
            (
                "2025-04-02",
                "I eat strictly raw vegan now.",
                {"attribute": "diet", "value": "raw vegan diet", "content": "The user now eats a raw vegan diet."},
            ),
            "What should I order for dinner?",
            "raw vegan",
            "pescatarian",
            id="en-slot-name",
        ),
    ],
)
def test_a_value_that_only_adds_a_suffix_or_its_slot_replaces(
    embeddings: Any, tmp_path: Path, first, then, question, now, before
) -> None:
    memory = _told(embeddings, tmp_path, [first, then])

    block = memory.inject(question, user_id="u", now="2025-05-01").text

    assert now in block
    assert [r.status.value for r in memory.list("u", statuses=None) if r.value == before] == ["archived"]


def test_a_relative_whose_name_has_no_romanization_is_found_by_it_when_no_statement_says_it(
    embeddings: Any, tmp_path: Path
) -> None:
    """``niece_粟`` (小粟: the diminutive dropped, 粟 has no pinyin here) is asked about as 小粟.

    A small model's statements need not keep the name ("The user's niece is learning horse riding.", "改练跳水了"):
    the id itself says it was one of 小/阿/老 and the character, so those forms name her.
    """
    niece = (
        "2025-02-16",
        "我外甥女小粟在学马术，每周六去马场。",
        {"attribute": "hobby", "value": "马术", "content": "The user's niece is learning horse riding."},
    )
    niece_now = (
        "2025-05-04",
        "小粟不学马术了，改练跳水了。",
        {"attribute": "hobby", "value": "跳水", "content": "改练跳水了"},
    )
    memory = _told(embeddings, tmp_path, [DESIGNER, niece, niece_now])

    block = memory.inject("小粟现在在学什么？", user_id="u", now="2025-06-01").text
    assert "跳水" in block, block
    assert "室内设计师" not in memory.inject("小粟现在在学什么？", user_id="u", now="2025-06-01").text
