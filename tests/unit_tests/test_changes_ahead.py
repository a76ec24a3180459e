"""A change the user dates ahead ("I'm moving to Stavanger next month") holds from then, not from when it is said.

What it replaces stays the answer until the change starts, both are shown meanwhile (each with its date), the
history reads the two in turn, and a change called off before it starts leaves the old value current.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from langchain_lifecycle_memory import LifecycleMemory, MemoryRecord
from langchain_lifecycle_memory.store.slots import resolve_current
from langchain_lifecycle_memory.write._dates import absolute_dates, resolve_valid_from
from tests.told import told


def shown(memory: LifecycleMemory, question: str, **options: Any) -> str:
    block = memory.inject(question, user_id="u", **options).text
    return "\n".join(ln for ln in block.splitlines() if ln.startswith("- "))


MOVES = [
    ("I live in Tromsø.", "I'm moving to Stavanger next month.", "Which city do I live in?", "Tromsø", "Stavanger"),
    ("I live in Tromsø.", "Next month I move to Stavanger.", "Which city do I live in?", "Tromsø", "Stavanger"),
    ("I live in Tromsø.", "Starting next month I live in Stavanger.", "Where do I live?", "Tromsø", "Stavanger"),
    ("我住在特罗姆瑟。", "下个月我搬到斯塔万格。", "我住在哪个城市？", "特罗姆瑟", "斯塔万格"),
    ("我住在特罗姆瑟。", "我下个月要搬去斯塔万格了。", "我住在哪个城市？", "特罗姆瑟", "斯塔万格"),
    ("我住在特罗姆瑟。", "从下个月起我就住在斯塔万格了。", "我住在哪里？", "特罗姆瑟", "斯塔万格"),
]


@pytest.mark.parametrize(("home", "move", "question", "old", "new"), MOVES)
def test_a_move_dated_ahead_takes_effect_on_its_date(
    embeddings: Any, tmp_path: Path, home: str, move: str, question: str, old: str, new: str
) -> None:
    memory = told(embeddings, tmp_path, (home, "2026-03-10"), (move, "2026-04-10"))

    before = shown(memory, question, now="2026-04-20", as_of="2026-04-20")
    after = shown(memory, question, now="2026-05-20")
    assert old in before and new not in before, before
    assert new in after and old not in after, after
    versions = memory.history("u", "user", "city")
    assert [(r.value, r.valid_from.date().isoformat()) for r in versions] == [(old, "2026-03-10"), (new, "2026-05-01")]
    assert versions[0].valid_to is None or versions[0].valid_to.date().isoformat() == "2026-05-01"


def test_until_the_move_both_cities_are_shown_and_the_old_one_is_current(embeddings: Any, tmp_path: Path) -> None:
    said = [(datetime.now(timezone.utc) - timedelta(minutes=m)).isoformat() for m in (2, 1)]
    memory = told(embeddings, tmp_path, ("I live in Tromsø.", said[0]), ("I'm moving to Stavanger next year.", said[1]))

    lines = shown(memory, "Which city do I live in?").splitlines()
    assert [ln for ln in lines if "Tromsø" in ln] and [ln for ln in lines if "Stavanger" in ln], lines
    start = f"{datetime.now(timezone.utc).year + 1}-01-01"
    assert any(start in ln and "Stavanger" in ln for ln in lines), lines  # the plan with the date it starts
    assert {r.value: r.status.value for r in memory.list("u") if r.attribute == "city"} == {
        "Tromsø": "active",
        "Stavanger": "active",
    }


@pytest.mark.parametrize(
    ("home", "move", "off", "question", "old"),
    [
        ("I live in Tromsø.", "I'm moving to Stavanger next month.", "I'm not moving to Stavanger after all.",
         "Which city do I live in?", "Tromsø"),
        ("我住在特罗姆瑟。", "我下个月要搬去斯塔万格了。", "搬去斯塔万格的事取消了。", "我住在哪个城市？", "特罗姆瑟"),
        # called off without naming where it was going
        ("I live in Kirkenes.", "I'm moving to Ålesund next month.", "We called off the move.",
         "Which city do I live in?", "Kirkenes"),
        ("I live in Kirkenes.", "I'm moving to Ålesund next month.", "Our move fell through.",
         "Which city do I live in?", "Kirkenes"),
        ("我住在希尔克内斯。", "我下个月要搬去奥勒松了。", "我们不搬了，房东给续了约。",
         "我住在哪个城市？", "希尔克内斯"),
        # called off in the fewest words
        ("我住在伊宁。", "我下个月要搬去喀什了。", "我不搬了。", "我住在哪个城市？", "伊宁"),
        ("I live in Bodø.", "I'm moving to Hammerfest next month.", "We're not moving after all.",
         "Which city do I live in?", "Bodø"),
    ],
    ids=["en", "zh", "called-off", "fell-through", "zh-unnamed", "zh-short", "not-after-all"],
)  # fmt: skip
def test_a_move_called_off_before_it_starts_leaves_the_city_as_it_was(
    embeddings: Any, tmp_path: Path, home: str, move: str, off: str, question: str, old: str
) -> None:
    memory = told(embeddings, tmp_path, (home, "2026-03-10"), (move, "2026-04-10"), (off, "2026-04-20"))

    assert old in shown(memory, question, now="2026-06-01")
    assert [r.value for r in memory.list("u") if r.attribute == "city" and r.status.value == "active"] == [old]


def test_a_visit_dated_ahead_is_no_move(embeddings: Any, tmp_path: Path) -> None:
    memory = told(
        embeddings, tmp_path, ("I live in Tromsø.", "2026-03-10"),
        ("Next week I'm visiting my godmother in Stavanger.", "2026-04-10"),
    )  # fmt: skip

    assert "Tromsø" in shown(memory, "Which city do I live in?", now="2026-06-01")
    assert [r.value for r in memory.list("u") if r.attribute == "city"] == ["Tromsø"]


@pytest.mark.parametrize(
    ("said", "start", "spelled"),
    [
        ("I start at the ferry office next Friday.", "2026-01-16", "I start at the ferry office on 2026-01-16."),
        ("Starting next weekend I coach the under-12s.", "2026-01-17", "Starting on 2026-01-17 I coach the under-12s."),
        ("下周三开始我在仓库值夜班。", "2026-01-14", "2026年1月14日开始我在仓库值夜班。"),
        ("明年我加入港务局。", "2027-01-01", "2027年我加入港务局。"),
        ("Tomorrow I switch to the early shift.", "2026-01-12", "On 2026-01-12 I switch to the early shift."),
    ],
)
def test_a_change_dated_ahead_starts_on_the_day_it_names(said: str, start: str, spelled: str) -> None:
    said_on = datetime(2026, 1, 11, 15, tzinfo=timezone.utc)  # a Sunday

    assert resolve_valid_from(said, said_on).date().isoformat() == start
    assert absolute_dates(said, said_on, zh=not said.isascii()) == spelled


def test_a_plan_and_what_it_replaces_are_one_chain_only_where_they_overlap() -> None:
    def version(value: str, start: str, **more: Any) -> MemoryRecord:
        return MemoryRecord(
            namespace=("memories", "u"), content=f"lives in {value}", entity="user", attribute="city", value=value,
            valid_from=start, created_at="2026-01-01", **more,
        )  # fmt: skip

    lapsing = version("Tromsø", "2025-01-01", expires_at="2026-05-01")
    plan = version("Stavanger", "2026-05-01", supersedes=lapsing.id)
    assert [r.status.value for r in resolve_current([lapsing, plan])] == ["active", "active"]

    lasting = version("Tromsø", "2025-01-01")
    assert [r.status.value for r in resolve_current([lasting, plan])] == ["archived", "active"]


@pytest.mark.parametrize("said", ["The book club moved to next Thursday.", "读书会改到下周四了。", "婚礼推迟到明年。"])
def test_a_time_a_thing_was_moved_to_is_its_new_value_not_when_the_change_starts(said: str) -> None:
    assert resolve_valid_from(said, datetime(2026, 1, 11, 15, tzinfo=timezone.utc)) is None


@pytest.mark.parametrize(
    ("change", "now_at", "current"),
    [
        ("Change of plans: I'm moving to Narvik next month instead.", "2026-05-20", "Narvik"),
        ("Plans changed, I moved to Narvik yesterday.", "2026-04-25", "Narvik"),
    ],
    ids=["another-plan", "a-move-now"],
)
def test_a_plan_overtaken_by_another_change_never_holds(
    embeddings: Any, tmp_path: Path, change: str, now_at: str, current: str
) -> None:
    memory = told(
        embeddings, tmp_path, ("I live in Tromsø.", "2026-03-10"),
        ("I'm moving to Stavanger next month.", "2026-04-10"), (change, "2026-04-20"),
    )  # fmt: skip

    block = shown(memory, "Which city do I live in?", now=now_at)
    assert current in block and "Stavanger" not in block, block
    assert [r.value for r in memory.history("u", "user", "city") if r.status.value == "active"] == [current]


@pytest.mark.parametrize(
    ("said", "question", "place"),
    [
        ("下个月开始我在阿伯丁出差三个月。", "我最近在哪儿出差？", "阿伯丁"),
        ("Starting next month I'm on a three-month secondment in Swansea.", "Where is my secondment?", "Swansea"),
    ],
    ids=["zh", "en"],
)
def test_a_stay_dated_ahead_lasts_as_long_as_it_says_from_its_start(
    embeddings: Any, tmp_path: Path, said: str, question: str, place: str
) -> None:
    memory = told(embeddings, tmp_path, (said, "2026-03-10"))  # from April 1, for three months

    assert place in shown(memory, question, now="2026-06-20")
    assert place not in shown(memory, question, now="2026-08-01")
