"""The rule extractor's patterns: one table per language, plus handlers for multi-part matches.

A rule is a regex over one first-person sentence with a ``v`` (value) group and a way to
name the slot: a fixed attribute, a lexicon look-up, or a code (``?n``: the noun before
"is"/"是"...) resolved in :func:`_resolve`. ``_rules.py`` runs them; ``_lexicon.py`` holds the words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from langchain_lifecycle_memory.schema import normalize_value
from langchain_lifecycle_memory.vocabulary import AttributeSpec
from langchain_lifecycle_memory.write._lexicon import (
    CITY_SUFFIX,
    LEX,
    NOT_OCCUPATION,
    NOUN_ATTRIBUTES,
    ORG_SUFFIX,
    is_term,
    lookup,
)
from langchain_lifecycle_memory.write._values import BAD_START, EN_TRAILING, ZH_LEADING
from langchain_lifecycle_memory.write._values import clean as _clean
from langchain_lifecycle_memory.write._values import singular as _singular

__all__ = ["EN_RULES", "ZH_RULES", "Candidate", "Rule", "apply", "clean_value"]

clean_value = _clean
"""A raw value as a slot value (``_values.clean``)."""


@dataclass(frozen=True)
class Candidate:
    """One possible fact from one sentence; the best candidate per slot becomes a ``Fact``."""

    attribute: str | None
    value: str
    priority: int
    position: int = 0
    kind: str | None = None
    confidence: float = 0.75
    operation: str = "assert"
    weak: bool = False
    """Dropped when the sentence yields any other fact ("我写 Java 一直用 IDEA" is about the IDE)."""


_Handler = Callable[[re.Match[str], bool], Iterator[Candidate]]


@dataclass(frozen=True)
class Rule:
    """A pattern plus how to turn its match into candidates."""

    pattern: re.Pattern[str]
    attribute: str = "?"
    """A fixed name; ``?`` looks the value up in the lexicons (limited to ``cats``); ``?n`` maps the noun group."""
    cats: tuple[str, ...] | None = None
    fallback: str | None = None
    priority: int = 60
    kind: str | None = None
    weak: bool = False
    cap: bool = False
    """The value must start with a capital letter (names, brands, places)."""
    fix: Callable[[str, re.Match[str]], str] | None = None
    handler: _Handler | None = None


# ---- shared pattern pieces ------------------------------------------------------------------

_ADV = (
    r"(?:(?:really|just|also|mostly|mainly|usually|always|often|still|now|currently|only|actually|absolutely|"
    r"totally|generally|normally|typically|definitely|basically|recently|finally|officially|sometimes|"
    r"occasionally|honestly|personally|primarily|exclusively|kind of|sort of|pretty much|even|all|both)\s+)*"
)
_I = r"\bI\s+" + _ADV
_IAM = r"\bI am\s+" + _ADV
_V = r"(?P<v>[^,;!?]+?)"
_E_PUNCT = r"(?=\s*(?:$|[,;!?]|\.(?:\s|$)))"
_CONJ = r"and|but|because|while|when|if|since|so|though|although|which|who|as|whenever"
_E_CLAUSE = r"(?=\s*(?:$|[,;!?]|\.(?:\s|$)|\b(?:" + _CONJ + r")\b))"
_E_PREP = (
    r"(?=\s*(?:$|[,;!?]|\.(?:\s|$)|\b(?:" + _CONJ + r"|every|each|on|in|at|before|after|with|for|during|from|to|by"
    r"|instead|now|these days|right now)\b))"
)
_ZADV = (
    r"(?:现在|目前|最近|平时|平常|一般|通常|经常|常常|一直|从小|每天|每周|每个月|每年|周末|早上|晚上|中午|下午|"
    r"上午|也|都|还|就|特别|非常|很|超|真的|比较|挺|又|已经|刚刚|刚|主要|基本上|基本|总是|老是|偶尔|有时候?|"
    r"这周|这个月|今年|这几天|自己|上班|在家|工作日|天天|常|最|去年|前年|上个月|上周|昨天|前天|今天|刚才|之前|以前|后来|"
    r"从此|早就|终于)*"
)
_ZS = r"我(?:们|家)?" + _ZADV
_ZV = r"\s*(?P<v>[^，,。！!？?；;、]+?)"
_ZEND = r"\s*(?=$|[，,。！!？?；;、~～]|了|呢|啦|吧|哦)"


def _alt(lex: str, cjk: bool = True) -> str:
    terms = sorted((t for t in LEX[lex] if bool(re.search(r"[\u3400-\u9fff]", t)) == cjk), key=len, reverse=True)
    return "(?:" + "|".join(map(re.escape, terms)) + ")"


def _en(pattern: str, attribute: str = "?", **kw: Any) -> Rule:
    return Rule(re.compile(pattern, re.IGNORECASE), attribute, **kw)


def _zh(pattern: str, attribute: str = "?", **kw: Any) -> Rule:
    return Rule(re.compile(pattern), attribute, **kw)


# ---- handlers for rules that need more than a lookup ----------------------------------------


def _job(m: re.Match[str], zh: bool) -> Iterator[Candidate]:
    value = _clean(m.group("v"), zh)
    if not value or normalize_value(value) in NOT_OCCUPATION or not is_term("occupation", value, "<"):
        return
    level = r"^(?:初级|中级|高级|资深|首席|助理|junior|senior|staff|principal|lead|chief|head)"
    promoted = re.search(r"升职|晋升|升为|转管理|提拔|promoted|promotion", m.string, re.IGNORECASE)
    attribute = "job_title" if re.search(level, value, re.IGNORECASE) or promoted else "job"
    yield Candidate(attribute, value, 80, m.start("v"))


def _zh_workplace(m: re.Match[str], zh: bool) -> Iterator[Candidate]:
    place = _clean(m.group("v"), zh)
    if not place:
        return
    if place in LEX["city"] or CITY_SUFFIX.search(place):
        yield Candidate("city", place, 75, m.start("v"))
    elif place in LEX["company"] or ORG_SUFFIX.search(place) or re.fullmatch(r"[A-Z][\w&.\- ]+", place):
        yield Candidate("employer", place, 80, m.start("v"))


def _zh_generic_job(m: re.Match[str], zh: bool) -> Iterator[Candidate]:
    industry = re.sub(r"(?:公司|企业|单位)$", "", m.group("ind").strip())
    yield Candidate("job", industry + _clean(m.group("role"), zh), 80, m.start("ind"))
    if city := m.group("place"):
        yield Candidate("city", city, 75, m.start("place"))


def _zh_city(m: re.Match[str], zh: bool) -> Iterator[Candidate]:
    value = _clean(m.group("v"), zh)
    prefix = next((c for c in sorted(LEX["city"], key=len, reverse=True) if value.startswith(c)), None)
    if prefix:
        yield Candidate("city", prefix, 75, m.start("v"))
    elif re.search(r"[区县镇]$", value):
        yield Candidate("district", value, 75, m.start("v"))
    elif 2 <= len(value) <= 6:
        yield Candidate("city", value, 70, m.start("v"))


def _pet(m: re.Match[str], zh: bool) -> Iterator[Candidate]:
    desc = (m.group("desc") or "").strip()
    name = m.groupdict().get("name")
    if zh:
        desc = ZH_LEADING.sub("", desc)
    elif desc.casefold().endswith("s") and not is_term("pet", desc, "<") and not is_term("dog_breed", desc, "<"):
        desc = desc[:-1]
    if not (is_term("pet", desc, "<") or is_term("dog_breed", desc, "<")):
        return
    yield Candidate("pet", name.strip() if name else desc, 85 if name else 70, m.start())
    breed = (m.groupdict().get("breed") or "").strip()
    if breed and normalize_value(desc) in ("dog", "puppy", "狗", "狗狗", "小狗"):
        yield Candidate("dog_breed", _clean(breed, zh), 80, m.start("breed"))
    elif is_term("dog_breed", desc, "<"):
        yield Candidate("dog_breed", desc, 75, m.start("desc"))


_VERB_ATTRIBUTES = {
    "drink": "drink", "drinking": "drink", "喝": "drink", "eat": "food", "eating": "food", "吃": "food",
    "drive": "car", "driving": "car", "开": "car", "listen to": "music", "listening to": "music", "听": "music",
    "work at": "employer", "live in": "city", "speak": "language", "take": "medication", "allergic to": "allergy",
    "过敏": "allergy", "说": "language", "讲": "language",
}  # fmt: skip


def _retract(m: re.Match[str], zh: bool) -> Iterator[Candidate]:
    value = _clean(m.group("v"), zh)
    verb = (m.groupdict().get("verb") or "").casefold()
    found = lookup(value)
    attribute = found[0] if found else _VERB_ATTRIBUTES.get(verb)
    if value and attribute:
        yield Candidate(attribute, value, 90, m.start("v"), operation="retract", confidence=0.8)


def _noun(noun: str, value: str, specs: dict[str, AttributeSpec], favorite: bool) -> str | None:
    noun = re.sub(r"^(?:all-time|absolute|very|personal|current|new|top)\s+", "", noun.strip().casefold())
    noun = EN_TRAILING.sub("", noun).strip()
    if noun in ("language", "programming language", "语言"):
        return "programming_language" if is_term("programming_language", value) else "native_language"
    if noun in NOUN_ATTRIBUTES:
        return NOUN_ATTRIBUTES[noun]
    for spec in specs.values():
        if noun in (spec.name.replace("_", " "), spec.zh) and (not favorite or spec.kind == "preference"):
            return spec.name
    if re.fullmatch(r"[a-z][a-z\- ]{1,28}", noun) and len(noun.split()) <= 3:
        snake = re.sub(r"[\s\-]+", "_", noun)
        return f"favorite_{snake}" if favorite else snake
    return None


# ---- the rules --------------------------------------------------------------------------------
# Higher priority wins a slot within one sentence; the later mention wins a tie.

_NOT_NOUN = re.compile(
    r"^(?:question|problem|point|guess|plan|goal|bad|fault|pleasure|day|week|life|head|back|stomach|mind|turn|"
    r"idea|opinion|concern|issue|hope|dream|wish|bet|excuse|apologies|house|place|dog|cat|puppy|kitten|parrot|"
    r"family|kids?|children|own|way|god|friends?|husband|wife|partner|sister|brother|mom|dad|parents?)$"
)

_TOOLS = ("editor", "programming_language", "smartphone", "laptop", "watch", "car")

EN_RULES: tuple[Rule, ...] = (
    _en(_I + r"(?:have )?(?:switched|changed|converted|moved over)(?: over)? (?:from \S+(?: \S+)? )?to " + _V + _E_PREP,
        priority=90),
    _en(_I + r"(?:have )?(?:moved|relocated) (?:back )?to " + _V + _E_PREP, "city", priority=85, cap=True),
    _en(_I + r"no longer (?P<verb>use|drink|eat|play|drive|listen to|work at|live in|speak|take|have|own) " + _V
        + _E_PREP, handler=_retract),
    _en(_IAM + r"no longer (?P<verb>allergic to) " + _V + _E_CLAUSE, handler=_retract),
    _en(_IAM + r"not (?P<verb>allergic to) " + _V + r"\s+any ?more", handler=_retract),
    _en(r"\bI (?:have )?(?:stopped|quit|given up|gave up) (?P<verb>using|drinking|eating|playing|driving|listening to) "
        + _V + _E_PREP, handler=_retract),
    _en(r"\bI do not (?P<verb>use|drink|eat|play|drive|speak|take|have|own) " + _V + r"\s+any ?more",
        handler=_retract),
    _en(r"\b(?<!not )(?<!no longer )allergic to " + _V + _E_CLAUSE, "allergy", priority=85),
    _en(_I + r"have an? " + _V + r" allergy", "allergy", priority=85),
    _en(_IAM + r"(?P<v>(?:lactose|gluten|fructose|dairy)[ -]intolerant|celiac|coeliac)", "diet_restriction",
        priority=85),
    _en(_IAM + r"(?:an? )?(?P<v>vegetarian|vegan|pescatarian|pescetarian|keto|paleo)\b", "diet", priority=85),
    _en(_I + r"work (?P<shift>nights |days )?(?:part-time |full-time |remotely )?as (?:an? |the )?" + _V + _E_PREP,
        "job", priority=80, fix=lambda v, m: ("night-shift " if m.group("shift") == "nights " else "") + v),
    _en(_IAM + r"(?:an? |the )" + _ADV + _V + _E_PREP, handler=_job),
    _en(_IAM + r"an? [\w -]+? (?:at|for) (?P<v>(?-i:[A-Z])[^,;!?]*?)" + _E_PREP, "employer", priority=75),
    _en(_I + r"teach " + _V + _E_PREP, "job", priority=75, fix=lambda v, m: v.split()[-1] + " teacher"),
    _en(r"\bI (?:have been |was |got |just got )?promoted to (?:an? )?" + _V + _E_PREP, "job_title", priority=85),
    _en(_I + r"(?:work|am working) (?:at|for) (?P<v>(?-i:[A-Z])[^,;!?]*?)" + _E_PREP, "employer", priority=80),
    _en(_I + r"(?:joined|started at|started working at|started a new job at|got a job at) " + _V + _E_PREP,
        "employer", priority=80, cap=True),
    _en(_IAM + r"at (?P<v>(?-i:[A-Z])[^,;!?]*?)" + _E_PREP, "employer", priority=75,
        fix=lambda v, m: v if ORG_SUFFIX.search(v) or re.search(r"\bjob\b", m.string, re.I) else ""),
    _en(_I + r"(?:live|am living|am based|reside) (?:in|near) " + _V + _E_PREP, "city", priority=75, cap=True,
        fix=lambda v, m: v.split(",")[0]),
    _en(_I + r"drive an? " + _V + _E_PREP, "car", priority=70, cap=True),
    _en(_I + r"(?P<v>bike|cycle|walk|drive|run|skate|carpool) to (?:work|the office|school|campus)", "commute",
        priority=75),
    _en(_I + r"commute (?:by|on|via|with) " + _V + _E_PREP, "commute", priority=75),
    _en(_I + r"(?:ride|take) (?:my |a |the )?(?P<v>bike|bicycle|scooter|e-scooter|motorcycle|motorbike|train|bus|"
        r"subway|metro|tube|ferry) to (?:work|the office|school|campus)", "commute", priority=75),
    _en(r"\bI (?:do not|never) (?P<v>drink(?: alcohol)?|smoke)(?=\s*(?:$|[,;.!?]|\b(?:at all|anymore)\b))",
        "?smoke", priority=85, fix=lambda v, m: "doesn't " + ("drink alcohol" if v.startswith("drink") else "smoke")),
    _en(_I + r"take the (?P<v>subway|train|bus|metro|tube|ferry) to (?:work|the office|school)", "commute",
        priority=75),
    _en(_I + r"play the " + _V + _E_PREP, cats=("instrument",), priority=75),
    _en(_I + r"play " + _V + _E_PREP, cats=("sport", "instrument", "hobby"), fallback="hobby", priority=70),
    _en(_I + r"go (?P<v>\w+ing)\b", cats=("sport", "hobby"), fallback="hobby", priority=60, weak=True),
    _en(_IAM + r"(?:learning|studying) " + _V + _E_PREP, "?learn", priority=75),
    _en(_IAM + r"reading " + _V + _E_CLAUSE, "current_book", priority=70),
    _en(_I + r"read " + _V + _E_PREP, cats=("book_genre",), priority=65),
    _en(_I + r"(?:am\s+" + _ADV + r")?listen(?:ing)? (?:only )?to " + _V + _E_PREP, cats=("podcast", "music"),
        fallback="music", priority=70),
    _en(r"\bmy (?:(?:all-time|absolute|very|personal|current|new|top) )*(?P<f>favou?rite|go-to|preferred|main) "
        r"(?P<n>[a-z][\w -]{1,30}?) (?:is|are) " + _V + _E_CLAUSE, "?fn", priority=80),
    _en(r"^(?:(?:[\w ]+), )?(?P<v>[^,;]+?) (?:is|are) my (?:(?:all-time|absolute|very|personal|current|new|top) )*"
        r"(?P<f>favou?rite|go-to|preferred|main) (?P<n>[a-z][\w -]{1,30}?)" + _E_CLAUSE, "?fn", priority=80),
    _en(r"\b(?:for|when) (?P<act>[a-z]+ing),? I " + _ADV + r"(?:wear|use) (?:my )?(?P<v>[^,;!?]+?) "
        r"(?P<gear>boots|shoes|sneakers|trainers|skis|helmet)\b", "?gear", priority=80),
    _en(_I + r"run (?:[\w-]+ ){0,3}in (?P<v>[^,;!?]+?)" + _E_PREP, "running_shoes", priority=75,
        fix=lambda v, m: _singular(v) if is_term("shoe", v, ">") else ""),
    _en(_I + r"(?:track|log|record|measure) (?:my )?[\w ]{0,20}? (?:with|on|using) " + _V + _E_PREP,
        cats=("watch", "smartphone"), priority=70),
    _en(_I + r"volunteer (?:at|with|for) " + _V + _E_PREP, "volunteering", priority=75),
    _en(_I + r"keep (?:all )?my (?P<n>notes|to-?dos|tasks|passwords|photos|recipes) in " + _V + _E_PREP, "?app",
        priority=75),
    _en(_I + r"(?:like to |prefer to )?(?:get my workouts? (?:done|in)|work ?out|exercise|hit the gym|go to the gym) "
        r"(?P<v>(?:before|after|at|around|by) [\w: ]+?|in the (?:morning|evening|afternoon)s?)" + _E_PUNCT,
        "workout_time", priority=80),
    _en(_IAM + r"(?:planning|going on|taking|organizing|booking) (?:an? |my )?(?:[\w-]+ ){0,3}?"
        r"(?:trip|vacation|holiday|getaway) to " + _V + _E_PREP, "travel_plan", priority=75, kind="event"),
    _en(_IAM + r"(?:planning|going) to (?:go to|visit|travel to|fly to) " + _V + _E_PREP, "travel_plan", priority=70,
        kind="event"),
    _en(_IAM + r"(?:craving|in the mood for) " + _V + _E_PREP, "?crave", priority=65),
    _en(_IAM + r"(?:an? )?(?:(?:lifelong|huge|big|die-hard|diehard|massive|loyal) )*" + _V + r" (?:fan|supporter)\b",
        cats=("football_team",), priority=75),
    _en(r"\b(?:my name is|call me|I am called|I go by) (?P<v>(?-i:[A-Z])[\w'-]*(?: (?-i:[A-Z])[\w'-]*)?)", "name",
        priority=90),
    _en(_IAM + r"(?P<v>\d{1,3})(?: years old| yrs old)?" + _E_CLAUSE, "age", priority=80),
    _en(_IAM + r"an? native (?P<v>\w+) speaker", "native_language", priority=80),
    _en(_I + r"(?:speak|can speak|can get by in|am fluent in) " + _V + _E_PREP, "language", priority=75,
        fix=lambda v, m: v if is_term("language", v.split()[-1]) else ""),
    _en(r"\bI (?:have|have got|got|own|adopted|just got|just adopted) (?:an?|two|three|\d+) "
        r"(?P<desc>[a-z][a-z -]{1,40}?),? (?:named|called) (?P<name>(?-i:[A-Z])[\w'-]+(?: (?-i:[A-Z])[\w'-]+)?)",
        handler=_pet),
    _en(r"\bmy (?P<desc>[a-z][a-z -]{0,30}?) (?P<name>(?-i:[A-Z])[\w'-]+)(?: is an? (?P<breed>[a-z][a-z -]+?))?"
        + _E_CLAUSE, handler=_pet),
    _en(r"\bmy (?P<desc>[a-z]+)(?:'s name)? is (?:named |called )?(?P<name>(?-i:[A-Z])[\w'-]+)", handler=_pet),
    _en(r"\bmy (?P<desc>dog|puppy) is an? (?P<breed>[a-z][a-z -]+?)" + _E_CLAUSE, handler=_pet),
    _en(r"\bI (?:have|own|got) (?:an?|two|three|\d+) (?P<desc>[a-z][a-z -]{1,30}?)" + _E_CLAUSE, handler=_pet),
    _en(r"\bmy (?!(?:all-time |absolute )?(?:favou?rite|go-to|preferred|main)\b)(?P<n>(?-i:[a-z][a-z -]{1,30}?)) "
        r"(?:is|are) (?:called |named )?(?:an? |the )?" + _V + _E_CLAUSE, "?n", priority=65),
    _en(_I + r"(?:like|love|enjoy|prefer|adore|am into) (?:using |to use |working with |coding in |writing in )?"
        + _V + _E_PREP, fallback="", priority=60),
    _en(_I + r"(?:use|am using|have been using|swear by|rely on|stick with|code in|program in|develop in|"
        r"do everything in) " + _V + _E_PREP, cats=_TOOLS, priority=70),
    _en(_I + r"(?:write|build|make|develop|code|program)(?: [\w-]+){0,3}? (?:in|with|using) " + _V + _E_PREP,
        cats=("programming_language", "editor"), priority=55, weak=True),
    _en(_I + r"write " + _V + _E_PREP, cats=("programming_language",), priority=55, weak=True),
    _en(_I + r"(?:drink|sip) " + _V + _E_PREP, cats=("tea", "drink"), fallback="drink", priority=65),
    _en(_I + r"(?:grab|have|order|get|make) (?!been\b|\w+(?:ed|ing)\b)(?:an? |the |some |my )?" + _V + _E_PREP,
        cats=("tea", "drink"),
        priority=65),
)  # fmt: skip

_ZPET = "(?:" + "|".join(sorted((t for t in LEX["pet"] | LEX["dog_breed"] if re.search(r"[\u4e00-\u9fff]", t)),
                                key=len, reverse=True)) + ")"  # fmt: skip
_ZNUM = r"(?:(?:[一两二三四五六七八九十几]|\d+)?(?:只|条|头|匹|个))?"
_ZTIMES = r"(?:(?:[一两二三四五六七八九十几]|\d+)次)?"

ZH_RULES: tuple[Rule, ...] = (
    _zh(_ZS + r"(?:改用|换成了?|换用|转用|改成了?|开始用|用上了?)" + _ZV + _ZEND, priority=90),
    _zh(_ZS + r"(?:改喝|换喝|开始喝)" + _ZV + _ZEND, cats=("tea", "drink"), fallback="drink", priority=90),
    _zh(_ZS + r"(?:不再|再也不|再不)(?P<verb>用|使用|喝|吃|玩|听|开)" + _ZV + _ZEND, handler=_retract),
    _zh(_ZS + r"不(?P<verb>用|使用|喝|吃|玩|听|开)" + _ZV + r"了", handler=_retract),
    _zh(_ZS + r"(?:戒了|戒掉了)" + _ZV + _ZEND, handler=_retract),
    _zh(_ZS + r"(?:不再|已经不|再也不)对\s*(?P<v>[^，,。！!？?]+?)\s*(?P<verb>过敏)", handler=_retract),
    _zh(_ZS + r"对\s*(?P<v>[^，,。！!？?]+?)\s*(?:已经)?(?:不再|不)(?P<verb>过敏)了", handler=_retract),
    _zh(_ZS + r"对\s*(?P<v>[^，,。！!？?]+?)\s*" + _ZADV + r"(?<![不没])过敏", "allergy", priority=85),
    _zh(_ZS + r"(?P<v>[^不没，,。\s][\u4e00-\u9fff]{0,5}?)" + _ZADV + r"(?<![不没])过敏", "allergy", priority=80),
    _zh(_ZS + r"(?P<v>吃(?:全)?素|是素食(?:主义)?者?)", "diet", priority=85, fix=lambda v, m: "素食"),
    _zh(_ZS + r"(?P<v>(?:不太|不怎么|不大|不|很|特别|比较|超)?能吃辣|不吃辣|无辣不欢|怕辣|吃不了辣)", "spice_tolerance",
        priority=85),
    _zh(_ZS + r"(?P<v>不喝酒|滴酒不沾|不抽烟|不吸烟|戒酒了?|戒烟了?)", "?smoke", priority=85),
    _zh(_ZS + r"是(?:做|搞|干)(?P<v>[^，,。]+?)的", "job", priority=80),
    _zh(r"(?:" + _ZS + r"|(?:^|[，,])(?:现在|目前|如今)?)(?:是|当)(?:一名|一个|一位|个|名|位)?\s*"
        r"(?P<v>[^，,。！!？?；;、]{2,12}?)" + _ZEND, handler=_job),
    _zh(_ZS + r"在(?P<place>" + _alt("city") + r")?(?:的)?一家(?P<ind>[^，,。]+?)(?:做|当|干)(?P<role>[^，,。]+?)"
        + _ZEND, handler=_zh_generic_job),
    _zh(_ZS + r"在(?P<v>[^，,。一\s在]{2,12}?)(?:做|当|干|上班|工作|任职|实习)", handler=_zh_workplace),
    _zh(r"\bbase\s*(?P<v>" + _alt("city") + r"|[A-Z][a-z]+)", "city", priority=75),
    _zh(_ZS + r"(?:住在|生活在|定居在?|搬到了?|搬去了?|搬家到了?|搬回了?|回到了?)" + _ZV + _ZEND,
        handler=_zh_city),
    _zh(r"我(?:家)?" + _ZADV + r"(?:养了|养着|养|有|新养了)" + _ZNUM + r"(?P<desc>" + _ZPET + r")"
        r"(?:[，,]?\s*(?:它|她|他)?(?:叫|名叫|名字叫|取名叫?|叫做)(?P<name>[^，,。！!？?\s]{1,8}))?", handler=_pet),
    _zh(r"我家(?:的)?(?P<desc>" + _ZPET + r")(?:叫|名叫|名字叫)(?P<name>[^，,。！!？?\s]{1,8})", handler=_pet),
    _zh(_ZS + r"开(?:的是|着)?" + _ZV + _ZEND, cats=("car",), priority=70),
    _zh(_ZS + r"(?P<verb>坐|乘|搭|骑|开车|走路|打车)(?P<v>[^，,。]{0,6}?)(?:通勤|上班|上学|去公司)", "commute",
        priority=75, fix=lambda v, m: v if m.group("verb") in "坐乘搭" else m.group("verb") + v),
    _zh(_ZS + r"去" + _ZTIMES + r"(?P<v>[\u4e00-\u9fff]{1,4}?)(?P<suf>馆|房|场)", "?venue", priority=70),
    _zh(_ZS + r"(?:打|踢|玩|练|去)?" + _ZTIMES + r"(?P<v>" + _alt("sport") + r")", "sport", priority=65),
    _zh(r"(?:玩|搞|爱好是)(?P<v>" + _alt("hobby") + r")", "hobby", priority=65),
    _zh(_ZS + r"(?:去|玩|搞)" + _ZTIMES + r"(?P<v>" + _alt("hobby") + r")", "hobby", priority=65),
    _zh(_ZS + r"(?:会|在)?(?:弹|拉|吹|打)(?P<v>" + _alt("instrument") + r")", "instrument", priority=70),
    _zh(_ZS + r"(?:在)?(?:自学|学习|学)" + _ZV + _ZEND, "?learn", priority=75),
    _zh(_ZS + r"(?:会说|会讲|能说|说|讲)" + _ZV + _ZEND, "language", priority=70,
        fix=lambda v, m: v if is_term("language", v) or re.fullmatch(r"[\u4e00-\u9fff]{1,3}[语文](?:和.+)?", v)
        else ""),
    _zh(_ZS + r"(?:在)?(?:看|读)\s*《(?P<v>[^》]+)》", "current_book", priority=70),
    _zh(_ZS + r"(?:打算|计划|准备)(?:明年|今年|下个月|下周|月底|年底|暑假|寒假|国庆|春节|五一|十一|过年|周末|"
        r"下半年|上半年)?去" + _ZV + _ZEND, "travel_plan", priority=75, kind="event"),
    _zh(r"(?:^|[，,])我叫(?P<v>[\u4e00-\u9fffA-Za-z]{1,10})", "name", priority=90),
    _zh(r"上(?P<v>(?:小学|初中|高中)?[一二三四五六]年级|初[一二三]|高[一二三]|大[一二三四]|研[一二三])", "grade",
        priority=80),
    _zh(_ZS + r"(?:今年)?(?P<v>\d{1,3})岁", "age", priority=80),
    _zh(r"我(?:的|用的|开的|养的|穿的|戴的|最喜欢的|最爱的)(?P<n>[\u4e00-\u9fff]{1,6}?)(?:是|叫)" + _ZV + _ZEND,
        "?n", priority=75),
    _zh(r"(?P<d>奶茶|咖啡|茶|果汁|拿铁|美式)(?:只|就|都)?(?:点|喝|要)(?P<v>[\u4e00-\u9fff]{1,4}?)的", "drink",
        priority=75, fix=lambda v, m: v + m.group("d")),
    _zh(_ZS + r"(?:喜欢|爱|偏爱|钟爱|热爱|喜爱|迷上了?|爱上了?)(?P<verb>使用|用|喝|吃|听|玩|打|踢|弹|出去|去)?" + _ZV
        + _ZEND, "?like", priority=60),
    _zh(_ZS + r"(?:(?:写|做|编|开发|打|画|剪)[^，,。]{0,12}?)?" + _ZADV + r"(?:常用|爱用|一直在用|在用|用的是|使用|用)"
        + _ZV + _ZEND, cats=_TOOLS, priority=70),
    _zh(_ZS + r"写\s*(?P<v>[A-Za-z][\w+#]*)", cats=("programming_language",), priority=55, weak=True),
    _zh(_ZS + r"(?:喝|只喝|爱喝|常喝)" + _ZV + _ZEND, cats=("tea", "drink"), fallback="drink", priority=65),
)  # fmt: skip


# ---- evaluation -------------------------------------------------------------------------------


def _like_zh(verb: str, value: str) -> tuple[str | None, str, bool] | None:
    if value.startswith("的"):
        return None
    by_verb: dict[str, tuple[str, ...]] = {
        "喝": ("tea", "drink"), "吃": (), "听": ("music",), "弹": ("instrument",), "玩": ("sport", "hobby"),
        "打": ("sport", "hobby"), "踢": ("sport",), "使用": ("editor", "programming_language", "smartphone", "laptop"),
    }  # fmt: skip
    cats = by_verb.get(verb.replace("用", "使用") if verb == "用" else verb)
    found = lookup(value, cats) if cats != () else None
    if found:
        return found[0], found[1], False
    fallback = {"喝": "drink", "吃": "food", "听": "favorite_audio", "弹": "instrument", "玩": "hobby", "打": "hobby"}
    if verb in fallback:
        return fallback[verb], value, False
    if len(value) <= 4 and not re.search(r"[A-Za-z]", value):
        return "hobby", value, True
    return None, value, True


def _resolve(
    rule: Rule, m: re.Match[str], value: str, zh: bool, specs: dict[str, AttributeSpec]
) -> tuple[str | None, str, bool] | None:
    """``(attribute, value, weak)`` for a match, or ``None`` to drop it."""
    code, groups = rule.attribute, m.groupdict()
    if not code.startswith("?"):
        return code, value, rule.weak
    if code == "?":
        found = lookup(value, rule.cats)
        if found:
            return found[0], found[1], rule.weak
        if rule.fallback == "" and not zh:
            return ("hobby", value, True) if re.fullmatch(r"[a-z]+ing", value) else (None, value, True)
        return (rule.fallback, value, rule.weak) if rule.fallback else None
    if code in ("?n", "?fn"):
        favorite = groups.get("f", "main") != "main" if code == "?fn" else bool(re.search(r"最喜欢|最爱", m.group(0)))
        noun = groups["n"]
        if not zh and _NOT_NOUN.match(noun.casefold()):
            return None
        attribute = _noun(noun, value, specs, favorite)
        if zh and (brand := re.match(r"([A-Za-z][\w\- ]*?)\s*的", value)):
            value = f"{brand.group(1)} {noun}"
        if attribute and attribute.endswith(("shoes", "boots")):
            value = _singular(value)
        return (attribute, value, False) if attribute else ((None, value, True) if favorite else None)
    if code == "?gear":
        return f"{groups['act'].casefold()}_{groups['gear'].casefold()}", value, False
    if code == "?app":
        return re.sub(r"\W", "", groups["n"].casefold()).removesuffix("s") + "s_app", value, False
    if code == "?smoke":
        return ("alcohol" if "酒" in value or "drink" in value else "smoking"), value, False
    if code == "?venue":
        if is_term("sport", value):
            return "sport", value, False
        return ("workout", value + groups["suf"], False) if value in ("健身", "体育", "运动") else None
    if code == "?learn":
        if len(value) < 2 or re.match(r"[到会习过得了]", value):
            return None
        if is_term("language", value) or re.fullmatch(r"[\u4e00-\u9fff]{1,4}[语文]", value):
            return "learning_language", value, False
        return ("instrument" if is_term("instrument", value) else "learning"), value, False
    if code == "?crave":
        return ("cuisine" if is_term("cuisine", value.split()[0]) else "food"), value, False
    if code == "?like":
        return _like_zh(groups.get("verb") or "", value)
    msg = f"Unknown attribute code {code!r} in a rule."
    raise AssertionError(msg)


def apply(rule: Rule, text: str, zh: bool, specs: dict[str, AttributeSpec]) -> Iterator[Candidate]:
    for m in rule.pattern.finditer(text):
        if rule.handler is not None:
            yield from rule.handler(m, zh)
            continue
        value = _clean(m.group("v"), zh)
        if rule.fix is not None and value:
            value = _clean(rule.fix(value, m), zh)
        if not value or BAD_START.match(value) or len(value.split()) > 8 or len(value) > 60:
            continue
        if rule.cap and not value[:1].isupper() or (zh and "的" in value and rule.attribute != "?n"):
            continue
        resolved = _resolve(rule, m, value, zh, specs)
        if resolved is None:
            continue
        attribute, value, weak = resolved
        confidence = 0.6 if weak or attribute is None else 0.75
        yield Candidate(attribute, value, rule.priority, m.start("v"), rule.kind, confidence, weak=weak)
