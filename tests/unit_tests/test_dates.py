"""Relative dates: the patterns decide what is a date, dateparser does the arithmetic from ``now``."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from langchain_lifecycle_memory.write._dates import absolute_dates, resolve_ttl_days, resolve_valid_from

NOW = datetime(2024, 3, 15, 10, 30, tzinfo=timezone.utc)  # a Friday


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我三天前开始学吉他", NOW - timedelta(days=3)),
        ("上上个月", datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)),
        ("前年", datetime(2022, 3, 15, 10, 30, tzinfo=timezone.utc)),
        ("昨晚", NOW - timedelta(days=1)),
        ("半个月前", NOW - timedelta(days=15)),
        ("上周三", NOW - timedelta(days=9)),
        ("上上周", NOW - timedelta(days=14)),
        ("十年前", datetime(2014, 3, 15, 10, 30, tzinfo=timezone.utc)),
        ("the year before last", datetime(2022, 3, 15, 10, 30, tzinfo=timezone.utc)),
        ("a couple of weeks ago", NOW - timedelta(days=14)),
        ("2019年以来", datetime(2019, 1, 1, tzinfo=timezone.utc)),
        ("since 2019", datetime(2019, 1, 1, tzinfo=timezone.utc)),
    ],
)
def test_forms_dateparser_cannot_read_alone_are_resolved(text: str, expected: datetime) -> None:
    assert resolve_valid_from(text, NOW) == expected


@pytest.mark.parametrize("text", ["I have 2 cats", "May I ask something?", "I'm 30", "I work at March Corp", "We met"])
def test_plain_numbers_and_words_are_not_dates(text: str) -> None:
    assert resolve_valid_from(text, NOW) is None
    assert absolute_dates(text, NOW, zh=False) == text


def test_the_clock_is_never_read_and_the_time_zone_and_time_of_day_are_kept() -> None:
    then = datetime(1999, 3, 31, 23, 59, 1, 500, tzinfo=ZoneInfo("Asia/Shanghai"))
    assert resolve_valid_from("last month", then) == datetime(1999, 2, 28, 23, 59, 1, 500, tzinfo=then.tzinfo)
    assert resolve_valid_from("last Friday", then) == datetime(1999, 3, 26, 23, 59, 1, 500, tzinfo=then.tzinfo)
    naive = datetime(2024, 5, 31)  # naive means UTC
    assert resolve_valid_from("3 months ago", naive) == datetime(2024, 2, 29, tzinfo=timezone.utc)


def test_an_offset_off_the_calendar_is_no_date_rather_than_an_error() -> None:
    assert resolve_valid_from("I was born 3000 years ago", NOW) is None
    assert absolute_dates("I was born 3000 years ago", NOW, zh=False) == "I was born 3000 years ago"


def test_concurrent_resolution_gives_each_caller_its_own_answer() -> None:
    cases = [(f"{n} days ago", NOW + timedelta(days=k)) for n in range(1, 9) for k in range(4)]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda case: resolve_valid_from(*case), cases))
    assert got == [now - timedelta(days=int(text.split()[0])) for text, now in cases]


def test_dateparser_is_imported_on_the_first_date_not_with_the_module() -> None:
    probe = (
        "import sys, json\nfrom langchain_lifecycle_memory.write import _dates\n"
        "print(json.dumps('dateparser' in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) is False


@pytest.mark.parametrize(
    ("said", "days"),
    [
        ("Next week I'm visiting my aunt in Windhoek.", 8.0),  # said on a Sunday: next week ends a week later
        ("I have a root canal appointment tomorrow at 9.", 2.0),
        ("我下个月要去乌镇看戏剧节。", 52.0),
        ("Starting tomorrow I'm vegan.", None),  # a time ahead that starts something sets no end
        ("From next week I work from home.", None),
        ("从下个月起我在宁德上班。", None),
    ],
)
def test_a_plan_lasts_until_its_time_is_past_and_a_start_has_no_end(said: str, days: float | None) -> None:
    assert resolve_ttl_days(said, datetime(2026, 5, 10)) == days


@pytest.mark.parametrize(
    ("said", "days"),
    [
        ("Until April I'm on a research stint in Tromsø.", 110.0),  # capitalised at the head of the sentence
        ("Till August the caravan stays parked at my cousin's.", 233.0),
        ("I'm on call until Thursday.", 5.0),  # said on a Sunday: to the end of the coming Thursday
        ("I'm on call until next Thursday.", 12.0),
        ("到四月我都住在房车营地。", 110.0),
        ("到下周二为止我都在外地培训。", 10.0),
    ],
)
def test_a_statement_lasts_until_the_month_or_weekday_it_names(said: str, days: float) -> None:
    assert resolve_ttl_days(said, datetime(2026, 1, 11)) == days


@pytest.mark.parametrize(
    "said", ["I teach Monday through Friday.", "I'm at the depot Monday until Friday.", "周一到周五我都在工地。"]
)
def test_a_range_of_weekdays_is_a_schedule_not_an_end(said: str) -> None:
    assert resolve_ttl_days(said, datetime(2026, 1, 11)) is None
