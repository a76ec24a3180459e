"""Relative dates and lifetime hints in zh/en text, resolved against the conversation's time (never the clock).

The patterns decide what is a date ("三天前" -> 3 days back); ``dateparser`` only does the calendar arithmetic.
"""

from __future__ import annotations

import calendar
import functools
import re
import threading
from datetime import datetime, timedelta
from typing import Any

from langchain_lifecycle_memory.schema import ensure_aware, local_time
from langchain_lifecycle_memory.write._change import ENDED, ZH_CHANGED_TO

__all__ = [
    "ZH_WEEKS_AHEAD", "absolute_dates", "parse_model_date", "resolve_ttl_days", "resolve_valid_from", "says_ahead",
    "starts_ahead",
]  # fmt: skip

_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "several": 3,
}  # fmt: skip
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month", "年": "year"}

_EN_NUM = r"(\d+|a couple of|a few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_ZH_NUM = r"(\d+|[零一二两三四五六七八九十]+|几|半)"

# Fixed phrases, most specific first: (pattern, how many units back, unit = granularity).
_FIXED: tuple[tuple[re.Pattern[str], int, str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), n, unit)
    for p, n, unit in (
        (r"\bthe day before yesterday\b|大前天", 3, "day"),
        (r"前天", 2, "day"),
        (r"\byesterday\b|\blast night\b|昨天|昨晚|昨日|昨儿", 1, "day"),
        (r"上上(?:个)?(?:周|星期|礼拜)", 2, "week"),
        (r"\blast week\b|\ba week ago\b|上(?:个)?(?:周|星期|礼拜)(?![一二三四五六日天])", 1, "week"),
        (r"上上(?:个)?月", 2, "month"),
        (r"\blast month\b|上(?:个)?月", 1, "month"),
        (r"\bthe year before last\b|前年", 2, "year"),
        (r"\blast year\b|去年", 1, "year"),
    )
)
_EN_AGO = re.compile(_EN_NUM + r"\s+(day|week|month|year)s?\s+ago\b", re.IGNORECASE)
_ZH_AGO = re.compile(_ZH_NUM + r"\s*(?:个)?\s*(天|日|周|星期|礼拜|月|年)(?:之|以)?前")
_EN_LAST_WEEKDAY = re.compile(  # not "the last Thursday of the month", a day in each month
    r"(?<!the )\blast\s+(" + "|".join(_EN_WEEKDAYS) + r")\b(?!\s+(?:of|in)\b)", re.IGNORECASE
)
_ZH_LAST_WEEKDAY = re.compile(r"上(?:个)?(?:周|星期|礼拜)([一二三四五六日天])")
_SINCE_YEAR = re.compile(r"\bsince\s+((?:19|20)\d{2})\b|((?:19|20)\d{2})\s*年(?:起|开始|以来)", re.IGNORECASE)

# Lifetime hints: how long a statement stays true ("this week I'm craving Thai food").
_TTL_FIXED: tuple[tuple[re.Pattern[str], float], ...] = tuple(
    (re.compile(p, re.IGNORECASE), d)
    for p, d in (
        (r"\bthis weekend\b|这(?:个)?周末|本周末", 3),
        (r"\bthis week\b|\bfor the week\b|这(?:个)?(?:周|星期|礼拜)|本周", 7),
        (r"\bthis month\b|\bfor (?:a|the|one) month\b|这(?:个)?月|本月", 30),
        (r"\btoday\b|\btonight\b|\bfor the day\b|今天|今晚|今日", 1),
        (r"这几天|\bthese few days\b|\bfor a few days\b", 3),
        (r"\bfor now\b|\bfor the time being\b|\btemporarily\b|暂时", 14),
    )
)
_EN_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
              "november", "december")  # fmt: skip
_EN_UNTIL_MONTH = re.compile(
    r"\b(?i:for (?:all of |the whole of |the rest of |the month of )?|through(?:out)? |(?:until|till) (?:the end of )?)"
    r"(" + "|".join(m.capitalize() for m in _EN_MONTHS) + r")\b"
)  # the month capitalized: "may" is a verb
_ZH_UNTIL_MONTH = re.compile(
    r"(?:整个|一整个)" + _ZH_NUM + r"月|(?:到|至)" + _ZH_NUM + r"月底|" + _ZH_NUM + r"月底(?:前|之前)"
    r"|(?:到|至)" + _ZH_NUM + r"月(?:份)?(?=[^，。,.!?！？]*都)"  # "到三月我都在家办公": through March
)
_EN_UNTIL_WEEKDAY = re.compile(  # not a range of days ("Monday until Friday", "Monday through Friday": a schedule)
    r"(?<!day )\b(?:until|till|through)\s+(next\s+)?(" + "|".join(_EN_WEEKDAYS) + r")\b", re.IGNORECASE
)
_ZH_UNTIL_WEEKDAY = re.compile(  # nor "周一到周五我都…"
    r"(?<![一二三四五六日天])(?:到|至)(下)?(?:个)?(?:这|本)?(?:周|星期|礼拜)([一二三四五六日天])(?=[^，。,.!?！？]*都|为止)"
)


_WEEKDAY_EN = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend)"
_TIMES_AHEAD = (  # (English, Chinese, unit)
    (r"\bthe day after tomorrow\b", "后天", "day2"),
    (r"\btomorrow\b", "明天|明早|明晚|明儿", "day"),
    (rf"\bnext (?:week|{_WEEKDAY_EN})\b", "下(?:个)?(?:周|星期|礼拜)[一二三四五六日天]?", "week"),
    (r"\bnext month\b", "下(?:个)?月", "month"),
    (r"\bnext year\b", "明年", "year"),
)
_AHEAD: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(f"{en}|{zh}", re.IGNORECASE), unit) for en, zh, unit in _TIMES_AHEAD
)
"""A time ahead a statement is about ("Next week I'm visiting my parents", "明天要去复查"): once it has passed,
the statement no longer holds."""
ZH_WEEKS_AHEAD = "|".join(zh for _, zh, unit in _TIMES_AHEAD if unit in ("week", "month", "year"))
"""The Chinese times ahead from next week on ("下个月", "下周三", "明年"), for a pattern to allow before its verb."""


_FROM_AHEAD = re.compile(
    r"\b(?:starting|from|beginning|as of|effective)\s+(?:tomorrow|next)\b"
    r"|[从自](?:明天|后天|下个?(?:周|星期|礼拜|月)|明年)|(?:明天|后天|下个?(?:周|星期|礼拜|月)|明年)(?:起|开始)",
    re.IGNORECASE,
)
"""A time ahead that says when something starts ("Starting next week I work from home", "从下个月起"): no end."""


_CHANGE_AHEAD = re.compile(
    r"\b(?:mov(?:e|es|ing)|relocat(?:e|es|ing)|start(?:s|ing)?|begin(?:s|ning)?|join(?:s|ing)?|switch(?:es|ing)?)\b"
    r"|搬|入职|开始|加入|" + ZH_CHANGED_TO,
    re.IGNORECASE,
)
"""Verbs of a change, said of a time ahead ("I'm moving to Oslo next month", "下个月我搬到奥斯陆"): it holds from
then, and what it replaces holds until then."""


_TIME_AS_VALUE = re.compile(r"(?:\b(?:to|until|till|for)|到|至|成|为)\s*$", re.IGNORECASE)
"""Just before the time: the time is what changed ("the party was pushed to next Friday", "推到下周五"), not when."""


def _start_ahead(text: str, now: datetime) -> tuple[datetime, re.Match[str], str] | None:
    """When the change that ``text`` dates ahead starts: (midnight that day, the time phrase, its granularity)."""
    if not starts_ahead(text):
        return None
    found = next(((m, u) for pattern, u in _AHEAD if (m := pattern.search(text))), None)
    if found is None or _TIME_AS_VALUE.search(text[: found[0].start()]):
        return None
    m, unit = found
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit in ("day", "day2"):
        return today + timedelta(days=1 if unit == "day" else 2), m, "day"
    if unit == "week":  # "next week": its Monday; "next Friday", "下周五": that day
        day = re.search(r"[a-z]+day|weekend|(?<=[周期拜])[一二三四五六日天]", m.group(0), re.IGNORECASE)
        name = day.group(0).casefold() if day else ""
        offset = {**{d: i for i, d in enumerate(_EN_WEEKDAYS)}, "weekend": 5, **_ZH_WEEKDAYS}.get(name, 0)
        return _next_start(unit, today) + timedelta(days=offset), m, "day" if day else "week"
    return _next_start(unit, today), m, unit


def _next_start(unit: str, day: datetime) -> datetime:
    """Midnight that starts the week (a Monday), month or year after ``day`` 's."""
    day = day.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "week":
        return day + timedelta(days=7 - day.weekday())
    if unit == "month" and day.month < 12:
        return day.replace(month=day.month + 1, day=1)
    return day.replace(year=day.year + 1, month=1, day=1)


def starts_ahead(text: str) -> bool:
    """Whether ``text`` dates a change ahead ("I'm moving to Oslo next month"): it holds from then on."""
    return bool(_FROM_AHEAD.search(text) or (_CHANGE_AHEAD.search(text) and says_ahead(text)))


def says_ahead(text: str) -> bool:
    """Whether ``text`` is about a time ahead ("I'm starting a new job at Google next month", "从下个月起…")."""
    return any(pattern.search(text) for pattern, _ in _AHEAD)


def _ahead_days(text: str, now: datetime | None) -> float | None:
    """Days until the end of the time ahead that ``text`` names (the day after it, the end of next week...)."""
    unit = next((u for pattern, u in _AHEAD if pattern.search(text)), None)
    if unit is None or _FROM_AHEAD.search(text) or _CHANGE_AHEAD.search(text):
        return None  # a change from then on, no end
    if unit in ("day", "day2"):
        return 2.0 if unit == "day" else 3.0
    if now is None:
        return {"week": 14.0, "month": 62.0, "year": 731.0}[unit]
    today = _aware(now).replace(hour=0, minute=0, second=0, microsecond=0)
    return float((_next_start(unit, _next_start(unit, today)) - today).days)  # the end of the week, month… ahead


def _until_weekday(text: str, now: datetime) -> float | None:
    """Days to the end of the weekday a statement lasts to ("in Lisbon until Friday", "到下周三都在出差")."""
    if m := _EN_UNTIL_WEEKDAY.search(text):
        day, later = _EN_WEEKDAYS.index(m.group(2).lower()), bool(m.group(1))
    elif m := _ZH_UNTIL_WEEKDAY.search(text):
        day, later = _ZH_WEEKDAYS[m.group(2)], bool(m.group(1))
    else:
        return None
    return float((day - _aware(now).weekday()) % 7 + 7 * later + 1)


def _until_month(text: str) -> int | None:
    """The month a statement lasts to the end of ("for all of March", "整个三月", "到五月底"), if it names one."""
    if m := _EN_UNTIL_MONTH.search(text):
        return _EN_MONTHS.index(m.group(1).lower()) + 1
    if (m := _ZH_UNTIL_MONTH.search(text)) and (n := _zh_number(next(g for g in m.groups() if g))) in range(1, 13):
        return int(n)
    return None


_EN_FOR_N = re.compile(r"\bfor\s+(?:the\s+next\s+)?" + _EN_NUM + r"\s+(day|week|month)s?\b", re.IGNORECASE)
_ZH_FOR_N = re.compile(r"(?:接下来|未来|这)" + _ZH_NUM + r"\s*(?:个)?\s*(天|周|星期|礼拜|月)")
# "I started at Northwind this week", "I quit smoking, 30 days smoke-free today": the hint dates a change or
# an ending, it does not limit a lifetime.
_STARTED = re.compile(
    r"\b(?:started|start|joined|moved|began|signed|bought|got|switched|hired|promoted)\b"
    r"|入职|搬|开始|买了|换了|改用|升职|加入|来到|" + ENDED,
    re.IGNORECASE,
)


_EN_SPAN = re.compile(_EN_NUM + r"[- ](day|week|month|year)s?(?:[- ]long)?\b(?!\s+ago)", re.IGNORECASE)
_ZH_SPAN = re.compile(_ZH_NUM + r"\s*(?:个)?\s*(天|周|星期|礼拜|月|年)(?![了前后以多级底初])")
_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def _span(text: str) -> float | None:
    """How long a change said to start ahead lasts, in days ("a three-month secondment", "出差三个月")."""
    if m := (_EN_FOR_N.search(text) or _EN_SPAN.search(text)):
        return _en_number(m.group(1)) * _DAYS[m.group(2).lower()]
    if (m := _ZH_SPAN.search(text)) and (amount := _zh_number(m.group(1))) is not None:
        return amount * _DAYS[_UNITS[m.group(2)]]
    return None


def _aware(now: datetime) -> datetime:
    return local_time(now) or now


def _zh_number(text: str) -> float | None:
    if text.isdigit() or text in ("半", "几"):
        return {"半": 0.5, "几": 3.0}.get(text) or float(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return float((_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0) if ones else 0))
    return float(_ZH_DIGITS[text]) if text in _ZH_DIGITS else None


def _en_number(text: str) -> float:
    text = " ".join(text.lower().split())
    return float(text) if text.isdigit() else float(_EN_NUMBERS[text])


_DATEPARSER_LOCK = threading.Lock()  # dateparser keeps per-process state and is not documented as thread-safe


@functools.lru_cache(maxsize=256)  # a sentence's date is resolved for its valid_from, then for its content
def _back(when: datetime, amount: float, unit: str) -> datetime | None:
    """``when`` minus ``amount`` ``unit`` s by calendar (2024-05-31 minus 3 months: 2024-02-29); ``None`` off it."""
    if unit == "year":
        amount, unit = amount * 12, "month"
    if unit == "month" and amount != int(amount):
        amount, unit = amount * 30, "day"
    if unit == "week":
        amount, unit = amount * 7, "day"
    if unit == "day" and amount != int(amount):
        amount, unit = amount * 24, "hour"
    settings: Any = {"RELATIVE_BASE": when.replace(tzinfo=None), "RETURN_AS_TIMEZONE_AWARE": False}
    import dateparser  # imported on the first date: it costs ~0.2 s and most sentences have none

    with _DATEPARSER_LOCK:
        moment = dateparser.parse(f"{round(amount)} {unit}s ago", languages=["en"], settings=settings)
    return moment.replace(tzinfo=when.tzinfo) if moment is not None else None


def resolve_valid_from(text: str, now: datetime) -> datetime | None:
    """When the fact stated in ``text`` became true, if it is dated relative to ``now`` (naive means UTC).

    A change dated ahead ("I'm moving to Oslo next month") becomes true then: the first of next month.

    Example:
        >>> from datetime import datetime, timezone
        >>> resolve_valid_from("上个月我搬到了上海", datetime(2024, 3, 15, tzinfo=timezone.utc)).date()
        datetime.date(2024, 2, 15)
    """
    found = _find_relative(text, _aware(now))
    return found[0] if found else None


def _offset(text: str, when: datetime) -> tuple[re.Match[str], float, str] | None:
    """The first relative date in ``text``: (match, how many units before ``when``, unit)."""
    if m := _ZH_LAST_WEEKDAY.search(text):  # "上周五": the Friday of last week
        return m, when.weekday() + 7 - _ZH_WEEKDAYS[m.group(1)], "day"
    if m := _EN_LAST_WEEKDAY.search(text):  # "last Friday" said on a Friday means a week ago, never today
        return m, (when.weekday() - _EN_WEEKDAYS.index(m.group(1).lower())) % 7 or 7, "day"
    if m := _EN_AGO.search(text):
        return m, _en_number(m.group(1)), m.group(2).lower()
    if (m := _ZH_AGO.search(text)) and (amount := _zh_number(m.group(1))) is not None:
        return m, amount, _UNITS[m.group(2)]
    for pattern, n, unit in _FIXED:
        if m := pattern.search(text):
            return m, n, unit
    return None


def _find_relative(text: str, when: datetime) -> tuple[datetime, re.Match[str], str | None] | None:
    """The first relative date in ``text``: (moment, match, granularity or None if already absolute)."""
    if found := _offset(text, when):
        m, amount, unit = found
        moment = _back(when, amount, unit)
        return (moment, m, unit) if moment is not None else None
    if (m := _SINCE_YEAR.search(text)) and (year := int(m.group(1) or m.group(2))) <= when.year:
        return when.replace(year=year, month=1, day=1, hour=0, minute=0, second=0, microsecond=0), m, None
    return _start_ahead(text, when)


def absolute_dates(text: str, now: datetime, *, zh: bool) -> str:
    """``text`` with its relative date spelled out, so a stored sentence stays true later.

    Example:
        >>> from datetime import datetime, timezone
        >>> absolute_dates("上个月我搬到了上海", datetime(2024, 3, 15, tzinfo=timezone.utc), zh=True)
        '2024年2月我搬到了上海'
        >>> absolute_dates("I moved here last week", datetime(2024, 3, 15, tzinfo=timezone.utc), zh=False)
        'I moved here in the week of 2024-03-08'
    """
    found = _find_relative(text, _aware(now))
    if found is None:
        return text
    when, m, granularity = found
    if granularity is None:
        return text
    if zh:
        day = f"{when.year}年{when.month}月{when.day}日"
        phrase = {"day": day, "week": day + "那周", "month": f"{when.year}年{when.month}月", "year": f"{when.year}年"}
    else:
        phrase = {"day": f"on {when.date().isoformat()}", "week": f"in the week of {when.date().isoformat()}",
                  "month": f"in {when.strftime('%B')} {when.year}", "year": f"in {when.year}"}  # fmt: skip
    said = phrase[granularity]
    return text[: m.start()] + (said[:1].upper() + said[1:] if m.start() == 0 else said) + text[m.end() :]


def resolve_ttl_days(text: str, now: datetime | None = None) -> float | None:
    """How many days the statement in ``text`` is meant to last ("this week" → 7), unless a start verb is near.

    With ``now``, also until the end of a named month ("for all of March", "整个三月", "到三月我都…"), the next one
    on or after ``now``'s month, or of a named weekday ("until Friday", "到下周三为止").

    Example:
        >>> resolve_ttl_days("This week I'm really craving Thai food."), resolve_ttl_days("我住在苏州")
        (7.0, None)
        >>> resolve_ttl_days("No takeout for all of March", datetime(2025, 3, 2))
        30.0
    """
    if starts_ahead(text) and (days := _span(text)) is not None:  # "下个月开始我在深圳出差三个月": from its start
        return days
    if _STARTED.search(text):
        return None
    if now is not None and (month := _until_month(text)) is not None:
        now = _aware(now)
        year = now.year + (month < now.month)
        end = datetime(year, month, calendar.monthrange(year, month)[1], tzinfo=now.tzinfo) + timedelta(days=1)
        return float((end - now.replace(hour=0, minute=0, second=0, microsecond=0)).days)
    if now is not None and (days := _until_weekday(text, now)) is not None:
        return days
    if m := _EN_FOR_N.search(text):
        return _en_number(m.group(1)) * {"day": 1, "week": 7, "month": 30}[m.group(2).lower()]
    if (m := _ZH_FOR_N.search(text)) and (amount := _zh_number(m.group(1))) is not None:
        return amount * {"天": 1, "周": 7, "星期": 7, "礼拜": 7, "月": 30}[m.group(2)]
    for pattern, days in _TTL_FIXED:
        if pattern.search(text):
            return float(days)
    return _ahead_days(text, now)


_PARTIAL_DATE = re.compile(r"^\s*((?:19|20)\d{2})(?:-(\d{1,2}))?\s*$")


def parse_model_date(value: object, now: datetime) -> datetime | None:
    """Read a date a model wrote (ISO date or datetime, ``YYYY-MM``, ``YYYY``, or words); unreadable: ``None``."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return ensure_aware(value)
    text = str(value).strip()
    if m := _PARTIAL_DATE.match(text):
        return datetime(int(m.group(1)), int(m.group(2) or 1), 1, tzinfo=_aware(now).tzinfo)
    try:
        return ensure_aware(text)
    except (TypeError, ValueError):
        return resolve_valid_from(text, now)
