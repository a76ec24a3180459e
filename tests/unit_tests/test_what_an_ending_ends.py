"""An ending ends what it names: "我现在不吃包子了" ends eating steamed buns, not helping at the bun shop.

A Chinese ending ("不…了") shares two characters with a remark that names a place after the thing it sells
(包子铺, 面包房): the place is not the thing, and the remark stays current. An ending that names what the remark
says still ends it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langchain_lifecycle_memory import LifecycleMemory
from tests.told import told


def current(memory: LifecycleMemory) -> list[str]:
    return [r.content for r in memory.active("u")]


@pytest.mark.parametrize(
    ("before", "ending", "kept"),
    [
        ("我周末在包子铺帮忙。", "我现在不吃包子了。", "包子铺"),
        ("我在一家面包房上班，天天闻着香味。", "我现在不吃面包了。", "面包房"),
    ],
    ids=["bun-shop", "bakery"],
)
def test_an_ending_that_names_a_food_leaves_the_shop_named_after_it(
    embeddings: Any, tmp_path: Path, before: str, ending: str, kept: str
) -> None:
    memory = told(embeddings, tmp_path, (before, "2026-02-01"), (ending, "2026-04-01"))

    shown = current(memory)
    assert any(kept in content for content in shown), shown
    assert any("不吃" in content for content in shown), shown  # the ending is kept as what holds now


@pytest.mark.parametrize(
    ("held", "ending", "gone"),
    [
        ("我周末在包子铺帮忙。", "包子铺那边我不去帮忙了。", "周末在包子铺帮忙"),
        ("我周末在洗车行打零工。", "我不在洗车行打零工了。", "周末在洗车行打零工"),  # 不…了 around the whole remark
    ],
    ids=["help", "whole-remark"],
)
def test_an_ending_that_names_the_help_ends_it(
    embeddings: Any, tmp_path: Path, held: str, ending: str, gone: str
) -> None:
    memory = told(embeddings, tmp_path, (held, "2026-02-01"), (ending, "2026-04-01"))

    assert not [content for content in current(memory) if gone in content]


@pytest.mark.parametrize(
    ("held", "ending", "attribute", "value"),
    [
        ("我住在克拉玛依。", "我不玩手游了。", "city", "克拉玛依"),
        ("我住在库尔勒。", "我现在不点外卖了。", "city", "库尔勒"),
        ("我开一辆二手飞度。", "我不去蹦迪了。", "car", "飞度"),
        ("我在中通快递上班。", "我不熬夜了。", "employer", "中通快递"),
    ],
    ids=["city-games", "city-takeout", "car", "employer"],
)
def test_a_habit_given_up_leaves_the_users_other_facts_current(
    embeddings: Any, tmp_path: Path, held: str, ending: str, attribute: str, value: str
) -> None:
    memory = told(embeddings, tmp_path, (held, "2026-02-01"), (ending, "2026-03-01"))

    assert [r.value for r in memory.active("u") if r.attribute == attribute] == [value]
    assert any(ending.removeprefix("我").rstrip("。") in content for content in current(memory))


@pytest.mark.parametrize(
    ("held", "news", "gone", "kept"),
    [
        (
            "I work the counter at a tackle shop, weekends too.",
            "Started at the county records office this month, no more tackle shop!",
            "counter at a tackle shop",
            "county records office",
        ),
        (
            "Most nights I walk dogs for a kennel out by the ring road.",
            "Signed on with a locksmith as an apprentice, so no more dog walking for me.",
            "dogs for a kennel",
            "locksmith",
        ),
        ("我在码头开吊车，三班倒。", "我去物流公司做客服了，现在不开吊车了。", "码头开吊车", "物流公司"),
    ],
    ids=["tackle-shop", "dog-walking", "crane-zh"],
)
def test_an_ending_inside_news_about_something_else_ends_what_it_names(
    embeddings: Any, tmp_path: Path, held: str, news: str, gone: str, kept: str
) -> None:
    """The news is mostly about the new job, so its words are not close to the old remark's as a whole."""
    memory = told(embeddings, tmp_path, (held, "2026-02-01"), (news, "2026-04-01"))

    shown = current(memory)
    assert not [content for content in shown if gone in content], shown
    assert any(kept in content for content in shown), shown


@pytest.mark.parametrize(
    ("held", "ending", "gone"),
    [
        ("My gym is Planet Fitness.", "I cancelled my Planet Fitness membership.", "Planet Fitness"),
        ("My phone carrier is Mint Mobile.", "Cancelled my Mint Mobile plan last week.", "Mint Mobile"),
    ],
    ids=["membership", "plan"],
)
def test_cancelling_what_holds_a_value_ends_it(
    embeddings: Any, tmp_path: Path, held: str, ending: str, gone: str
) -> None:
    """ "My X membership" holds X: the slot's value ends, as "I quit my gym" ends it."""
    memory = told(embeddings, tmp_path, (held, "2026-02-01"), (ending, "2026-04-01"))

    assert not [r.value for r in memory.active("u") if r.value == gone]
    assert [r.value for r in memory.list("u", statuses="archived") if r.value == gone] == [gone]


@pytest.mark.parametrize(
    ("held", "ending", "value", "said"),
    [
        ("I'm allergic to carmine.", "I'm no longer allergic to annatto.", "carmine", "annatto"),
        ("我对槐花过敏。", "我现在对艾草不过敏了。", "槐花", "艾草"),
    ],
    ids=["en", "zh"],
)
def test_an_ending_that_ends_nothing_held_is_kept_as_said(
    embeddings: Any, tmp_path: Path, held: str, ending: str, value: str, said: str
) -> None:
    """Nothing held is named: the held value stays, and the words are not lost."""
    memory = told(embeddings, tmp_path, (held, "2026-02-01"), (ending, None))

    assert [r.value for r in memory.active("u") if r.attribute == "allergy"] == [value]
    assert any(said in r.content for r in memory.active("u")), [r.content for r in memory.list("u")]


@pytest.mark.parametrize(
    ("held", "ending", "gone"),
    [
        ("I take buspirone twice a day.", "My psychiatrist took me off buspirone.", "buspirone"),
        (
            "I'm on levocetirizine for hay fever.",
            "The doctor finally took me off levocetirizine last month.",
            "levocetirizine",
        ),
    ],
    ids=["psychiatrist", "last-month"],
)
def test_being_taken_off_a_medicine_ends_it(embeddings: Any, tmp_path: Path, held: str, ending: str, gone: str) -> None:
    """Someone else ended it for the user: "took me off X" ends X as "I stopped taking X" does."""
    memory = told(embeddings, tmp_path, (held, "2026-02-01"), (ending, "2026-04-01"))

    assert not [r.value for r in memory.active("u") if r.value == gone]
    assert [r.value for r in memory.list("u", statuses="archived") if r.value == gone] == [gone]
