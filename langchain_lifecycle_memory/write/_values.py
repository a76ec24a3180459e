"""Cleaning a matched value into a slot value (``_patterns`` and ``_rules`` use it)."""

from __future__ import annotations

import re

__all__ = ["BAD_START", "EN_TRAILING", "ZH_LEADING", "clean"]

EN_TRAILING = re.compile(
    r"(?:(?:^|\s+)(?:now|right now|these days|nowadays|at the moment|currently|lately|recently|again|too|as well|"
    r"anymore|any more|altogether|mostly|daily|all the time|fluently|well|online|a lot|every day|most (?:days|nights)|"
    r"for everything|every\s+\w+|each\s+\w+|on\s+\w+days?|"
    r"in the (?:morning|afternoon|evening)s?|at (?:work|home)|this (?:week|month|year|weekend)|last (?:week|"
    r"month|year)|today|yesterday|for now|instead|exclusively|only|badly|happily|mainly|though|(?:next|this|last) \w+|"
    r"(?:an?|one|two|three|four|five|six|a few|a couple of|several|\d+) (?:day|week|month|year)s? ago|for years))+$",
    re.IGNORECASE,
)
EN_LEADING = re.compile(
    r"^(?:(?:a little|a bit of|a|an|the|some|(?-i:my|our)|using|to use|only|really|also|fluent|basic|conversational)"
    r"\s+)+",  # "My Morning Jacket": a capital "My" within a sentence is part of a name
    re.IGNORECASE,
)
ZH_LEADING = re.compile(
    r"^了?(?:(?:[一两二三四五六七八九十几]|\d+)?(?:只|条|辆|名|位|个|家|台|部|款|种|杯|本|头|匹|盆|株|棵|双|件|把)|了"
    r"|一点点?儿?|一些|少许)"
)
ZH_TRAILING = re.compile(
    r"(?:(?:好几|十几|几|多|\d+|[一二三四五六七八九十两]+)(?:个)?(?:年|月|周|天|星期)(?:了|多|来)?|很久了?|好久了?|"
    r"(?:\d+|[一二三四五六七八九十两几]+)(?:公里|小时|分钟|次))+$"
)
BAD_START = re.compile(
    r"^(?:(?:that|this|these|those|it|its|your|his|her|their|you|him|them|one|so|too|much|a lot|lots|there|here|"
    r"what|how|when|where|why|which|who|with|on|in|at|for|to|by|from|about|and|but|or|not|no|as|like|up|out|"
    r"more|less|lot|bit|very|such|well|better|anything|something|everything|nothing|someone|everyone|myself|"
    r"yourself|doing|being|going|getting|trying|thinking|most|many|all|every|some|any|few)\b|"
    r"你|他|她|它|这|那|什么|怎么|哪|谁)",
    re.IGNORECASE,
)


def clean(value: str, zh: bool) -> str:
    """A raw value as a slot value: quotes, articles, trailing time words and particles removed."""
    value = value.strip().strip("\"'“”‘’「」")
    if zh:
        value = ZH_TRAILING.sub("", re.sub(r"(?:了|呢|啦|吧|哦|呀)+$", "", ZH_LEADING.sub("", value))).strip()
        return value.strip("《》〈〉 ") if value.startswith("《") else value
    value = EN_TRAILING.sub("", EN_LEADING.sub("", value.strip())).strip(" .,;:!-\u2014")
    return EN_LEADING.sub("", EN_TRAILING.sub("", value)).strip()
