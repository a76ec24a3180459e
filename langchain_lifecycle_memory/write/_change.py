"""How a change is worded: whether a statement states a change, what it says ended and what holds now.

"I closed my Harborline account and moved everything to Meridian Trust", "she's who I see now",
"拉丁舞课改到每周四晚上了": the grammar of change (a change verb, "now", "no longer", "new"), of ending ("quit",
"sold", "不…了") and of addition ("also", "too", "也": no change), read clause by clause, and the words and
numbers that name things in a statement. What a change replaces is ``_replaced.py``'s concern. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_lifecycle_memory.vocabulary import RELATIONS
from langchain_lifecycle_memory.write._lexicon import EN_FUNCTION_WORDS, says_whole

__all__ = [
    "AGAIN", "CJK_CHAR", "CJK_WORD", "CLAUSE", "DEFAULT_CHANGE_THRESHOLD", "ENDED", "FUNCTION", "GONE", "KEPT_WORDS",
    "LATIN", "NAMED_CHANGE_THRESHOLD", "PART", "ZH_CHANGED_TO", "ZH_NO_LONGER", "change_parts", "current_part",
    "ended_part", "holds_now", "is_name", "named_things", "names_a_successor", "proper_names",
    "quantities", "restates_a_measure", "restates_a_number", "says_now", "split_parts", "states_a_change",
    "states_an_end",
]  # fmt: skip

KEPT_WORDS = "kept_words"
"""``metadata`` key of an ``episode`` that keeps a message whose extraction failed: it stands for the facts the
message states, so a later change replaces it as it would them."""
DEFAULT_CHANGE_THRESHOLD = 0.45
"""Bundled encoder, statement to statement (``python benchmarks/change_calibration.py``): on the development
files' gold facts, 12 pairs of one slot with two values have a median cosine of 0.56 (75 % reach 0.45); of
621 pairs of two slots of one entity, 3.7 % reach 0.45."""

NAMED_CHANGE_THRESHOLD = 0.3
"""The same when the change names what the old statement named (a word pair, a capitalized word, three
Chinese characters): "banks with Harborline" / "closed my Harborline account" is 0.37 (same command)."""

_EN_CHANGE = re.compile(
    r"\b(?:switch(?:ed|ing)?|chang(?:ed|ing)|mov(?:ed|ing)|transferr(?:ed|ing)|replac(?:ed|ing)|swapp(?:ed|ing)"
    r"|relocat(?:ed|ing)|promoted|upgraded|retired|closed|quit|stopped|instead|anymore|any more|no (?:longer|more)"
    r"|nowadays"
    r"|raised|lowered|increased|decreased|went (?:up|down)|down to"
    r"|these days|now)\b"
    r"|\bleft(?= (?:the|my|his|her|our|their|a|an)\b|[,.;!]|$)",
    re.IGNORECASE,
)
_EN_NEW = re.compile(r"\bnew\b")  # lower case: "my new landlord", not "New York"
_ZH_NEW = re.compile(
    "新(?:"
    + "|".join(
        sorted({w for r in RELATIONS for w in r.words if not w.isascii() and len(w) > 1}, key=lambda w: (-len(w), w))
    )
    + ")"
)
"""新 before a relation word ("新室友", "新房东"), as "my new landlord" is said: someone took over ("新弟子" is no
new 弟: one-character forms are left out)."""
ENDED = (
    r"\b(?:quit|quitting|stopped|gave up|given up|giving up|retired|no longer|no more|anymore|any more)\b"
    r"|戒|辞职|离职|退休|不再"
)
"""Words that end something ("I quit smoking", "我戒酒了"): what they end was true until then."""
_EN_ADDITIVE = re.compile(r"\b(?:also|too|as well|another|in addition|besides)\b", re.IGNORECASE)
ZH_CHANGED_TO = r"(?:改|换|调|搬|转|挪)(?:到|成|为)"
"""A Chinese verb of change with its result ("改到", "换成", "搬到"): where something was changed to."""
ZH_CHANGE = (
    ZH_CHANGED_TO + r"|换(?:了|去|用)|改(?![天日善进革造正编写装])[\u4e00-\u9fff]|(?:换|改)[\u4e00-\u9fff]{1,3}了"
    r"|调(?:去|回)|搬(?:去|家|了)"
    r"|转(?:去|学|行|岗)|跳槽|现在|如今|不再|退休|离职|辞职|新的|升职|晋升|(?:降|涨|升|提|加|减|跌)到"
)
"""Chinese words of change: a changed-to verb ("换手机了"), "now", "no longer", leaving a job, "new"."""
_ZH_CHANGE = re.compile(ZH_CHANGE)
ZH_NO_LONGER = re.compile(r"不[\u4e00-\u9fff]{1,8}了")
"""A Chinese negation ending in 了, "no longer", its object as long as it is ("鱼油我不吃了", "不养六角恐龙了")."""
_ZH_ADDITIVE = re.compile(r"也|另外|还有|此外|又(?![换改搬调转])")  # "又换手机了" changed again
CLAUSE = re.compile(r"[,;，；。！？!?]|\.(?:\s|$)|\s[—–-]\s")
_NUMBER = re.compile(r"(?<![\d.,])\d+(?:[.,:]\d+)*")
_DATE_PART = re.compile(r"\s*(?:年|月|日|号|st\b|nd\b|rd\b|th\b)")
LATIN = re.compile(r"[A-Za-z][A-Za-z'-]+")
CJK_RUN = re.compile(r"[\u4e00-\u9fff]{3,}")
CJK_CHAR = re.compile(r"[\u4e00-\u9fff]")
CJK_WORD = re.compile(r"[\u4e00-\u9fff]{2,}")
FUNCTION = EN_FUNCTION_WORDS | {
    "user", "user's", "users", "their", "they", "them", "his", "her", "hers", "she", "him", "from", "into", "onto",
    "about", "over", "being", "these", "those", "then", "than", "who", "which", "what", "when", "where", "every",
    "each", "its", "all", "any", "some", "your", "you", "one",
}  # fmt: skip


AGAIN = re.compile(
    r"又(换|改|搬|调|转)|\b(mov|switch|chang|transferr|relocat)(?:ed|ing)\b(?=[^.,;!?]*\bagain\b)", re.IGNORECASE
)
"""The same change made again ("又调了", "moved again"): it replaces the last statement of that change."""


def _adds(text: str) -> bool:
    return bool(_EN_ADDITIVE.search(text) or _ZH_ADDITIVE.search(text))


def states_a_change(text: str) -> bool:
    """Whether a clause of ``text`` is worded as a change of what held before, not as an addition to it.

    Clause by clause: "只好换到云栖酒店，日子也挪到11月8日了" changes the venue though its second clause adds.
    """
    return any(_changes(clause) for clause in CLAUSE.split(text))


def says_now(text: str) -> bool:
    """Whether a clause of ``text`` says what holds from now on, not as an addition ("now also plays…").

    "The user now plays the sousaphone", "用户现在练太极扇": what a set of one holds now (``_planner._join_set``).
    """
    return any(_NOW.search(clause) and not _adds(clause) for clause in CLAUSE.split(text))


def names_a_successor(text: str) -> bool:
    """Whether ``text`` says someone or something new took the place ("my new landlord", "新室友", "现在和…合租")."""
    return bool(_EN_NEW.search(text) or _ZH_NEW.search(text) or _NOW.search(text))


def _changes(clause: str) -> bool:
    if _adds(clause):
        return False
    return bool(
        _EN_CHANGE.search(clause)
        or _EN_NEW.search(clause)
        or _ZH_NEW.search(clause)
        or _ZH_CHANGE.search(clause)
        or ZH_NO_LONGER.search(clause)
        or GONE.search(clause)
        or AGAIN.search(clause)
    )


# What ends something the speaker had: a verb of ending or disposal ("closed my Quillfield account", "sold the
# dulcimer", "不用了", "卸了"), not a move to somewhere ("moved to Leeds", "调去上海" name where the speaker is now).
GONE = re.compile(
    ENDED + r"|\b(?:closed|sold|ditched|cancell?ed|got rid of|gave away|uninstalled|deleted|moved out|passed away"
    r"|died|call(?:s|ed|ing)? off|f(?:a|e)ll(?:s|ing)? through|(?:took|taken) (?:me|them|him|her|us) off)\b"
    r"|\bnot\b(?=[^.,;!?]*\bafter all\b)"  # "we're not moving after all": the plan is off
    r"|\bleft(?= (?:the|my|his|her|our|their|a|an)\b|[,.;!]|$)"
    r"|不[\u4e00-\u9fff]{0,4}了|(?:卖|卸|关|退|停|删|丢|扔|送人|砍|忘光|忘掉|取消)(?:掉|载)?了|(?:搬|调|送)走|没了"
    r"|去世|过世|离世",
    re.IGNORECASE,
)
PART = re.compile(
    r"(\s*[,;，；]\s*|(?<=[.!?])\s+|(?<=[。！？])\s*|\s+[—–-]\s+|\s+(?:and|so|but|then)\s+"
    r"|\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s*)"  # an emoji ends a clause as a comma would
)
_TRAILING = re.compile(r"(?:[\s,;，；—–-]|\b(?:and|so|but|then)\b|所以|然后|于是)*$", re.IGNORECASE)
_LEADING = re.compile(r"^(?:and|so|but|then|所以|然后|于是)\s*", re.IGNORECASE)


def split_parts(text: str) -> list[str]:
    """``text`` cut where one statement may end and another begin (commas, "and", "so", emoji...)."""
    return PART.split(text)[::2]


def change_parts(text: str) -> list[str]:
    """The parts of ``text`` that state a change ("年会只好换到良渚君澜酒店", not "时间也推到下周五了" alone)."""
    return [part for part in split_parts(text) if _changes(part)]


def states_an_end(text: str) -> bool:
    """Whether ``text`` ends something with a verb of ending or disposal ("sold the dulcimer", "手风琴不拉了")."""
    return GONE.search(text) is not None


def ended_part(text: str) -> str:
    """The words before :func:`current_part`: what a statement of change says ended (``""`` when none)."""
    now = current_part(text)
    return "" if now == text else _TRAILING.sub("", text[: text.rfind(now)])


def current_part(text: str) -> str:
    """What a statement of change says holds now: the parts after the one that ends something.

    Only when a later part states the change ("卸了，现在改用 X" -> "现在改用 X"); else ``text`` whole.

    >>> current_part("I closed my Quillfield account and moved everything over to Bramwell Savings")
    'moved everything over to Bramwell Savings'
    >>> current_part("I moved to Berlin, and now I work at Zalando")  # nothing ended: both hold
    'I moved to Berlin, and now I work at Zalando'
    """
    pieces = PART.split(text)
    parts = pieces[::2]
    ended = _ended(parts)
    later = [i for i in range(len(parts)) if ended and i > ended[0] and i not in ended and _changes_or_starts(parts[i])]
    if not later or any(_STARTS.search(part.strip()) for part in parts[: ended[0]]):
        return text  # "landed a support gig, no more docks, alarm's at 7:15 these days": the gig holds too
    start = max(i for i in ended if i < later[0]) + 1
    return _LEADING.sub("", "".join(pieces[2 * start :]).strip())


_STARTS = re.compile(
    r"\b(?:took up|picked up|started|began|bought|got|adopted|sign(?:ed|ing) (?:up|on)|joined|landed|enrolled)\b"
    r"|^(?:又|就)?(?:开始|买了|入手了?|养了|报了|学起|迷上|爱上|入职|加入)",
    re.IGNORECASE,
)
"""A part that begins something after a part that ended something ("sold the Corolla and bought a Tesla",
"不打羽毛球了，买了…"): what holds now, as a change would say it."""


def _changes_or_starts(part: str) -> bool:
    return _changes(part) or _STARTS.search(part.strip()) is not None


def holds_now(text: str, *replaced: str) -> str:
    """``text`` without its parts that say what ended, when another part states the change.

    A part ends something when it says so ("quit", "不…了"), names what ``replaced`` (the statement and value
    the change replaces) named without stating a change itself, or begins with a name ``replaced`` said, not as
    its subject, and says nothing of now (:func:`_speaks_of`):

    >>> holds_now("Kelly改主意了，Iceland太贵了，现在改成去Patagonia徒步", "她想去Iceland看极光")
    'Kelly改主意了，现在改成去Patagonia徒步'
    >>> holds_now("蔡教练调去肇庆了，现在带我的是冯教练", "我的游泳私教是蔡教练")
    '现在带我的是冯教练'
    """
    pieces = PART.split(text)
    parts = pieces[::2]
    ended = _ended(parts, *replaced)
    if not ended or not any(i not in ended and (_changes(part) or _NOW.search(part)) for i, part in enumerate(parts)):
        return text
    kept = "".join(piece for i, piece in enumerate(pieces) if i // 2 not in ended)
    return _LEADING.sub("", _TRAILING.sub("", kept).strip())


def _ended(parts: list[str], *replaced: str) -> list[int]:
    """The parts that end something.

    A verb of ending, naming what ``replaced`` named without a change, or speaking of it (:func:`_speaks_of`)
    without saying what holds now.
    """
    names = set().union(*(named_things(r) for r in replaced if r))

    def named(part: str) -> bool:
        return bool(names & named_things(part)) or any(says_whole(r, part) for r in replaced if r)

    def ends(part: str) -> bool:
        return not _NOW.search(part) and (not _changes(part) and named(part) or _speaks_of(part, replaced))

    return [i for i, part in enumerate(parts) if GONE.search(part) or ends(part)]


_NOW = re.compile(r"\b(?:now|nowadays|these days|instead)\b|现在|如今|目前|以后|今后|改|换成", re.IGNORECASE)
"""Words that say what holds from now on: a part with one states the new, whatever else it names."""
_OWNER = re.compile(r"^(?:(?:the user's|the user|user's|my|our|his|her|their|the)\s+|用户的?|我们的?|我的)", re.I)
_LEAD = re.compile(r"[A-Za-z][\w'-]*|[\u4e00-\u9fff]{2}")


def _speaks_of(part: str, replaced: Sequence[str]) -> bool:
    """Whether ``part`` begins with a name ``replaced`` said, not as its subject: it tells what became of that.

    "蔡教练调去肇庆了" beside "我的游泳私教是蔡教练", "Ozias moved to Truro" beside "the furnace is serviced by
    Ozias"; not "阿满换了马术教练" beside "我女儿阿满开始学马术了" (阿满 is who both are about).
    """
    word = _lead(part)
    if not word or (word.isascii() and (len(word) < 3 or not word[0].isupper())):
        return False
    olds = [r for r in replaced if r]
    if olds and any(_about(word, p) for p in PART.split(olds[0])[::2]):  # the statement's subject, not its value
        return False
    if not word.isascii():
        return any(word in r.replace("用户", " ") for r in olds)
    return word.casefold() in {w.casefold() for r in olds for w in LATIN.findall(r)}


def _lead(part: str) -> str:
    """The first word of ``part`` after its owner ("the user's", "我的"): a name, when it begins with one."""
    lead = _LEAD.match(_OWNER.sub("", part.strip()))
    return lead.group() if lead else ""


def _about(word: str, part: str) -> bool:
    """Whether ``word`` names who ``part`` is about.

    Among its first three words before any Chinese ("My friend Ilsabet is…"), or its first four characters
    ("女儿阿满开始…").
    """
    rest = _OWNER.sub("", part.strip())
    return word in rest[:4] if not word.isascii() else word in LATIN.findall(re.split(CJK_CHAR, rest)[0])[:3]


def quantities(text: str) -> set[str]:
    """The numbers ``text`` states, separators dropped; years and calendar days are dates, not quantities.

    >>> sorted(quantities("In March 2024 the rent went from 4,200 to 4850 yuan, paid on the 5th"))
    ['4200', '4850']
    """
    found = set()
    for m in _NUMBER.finditer(text):
        number = m.group().replace(",", "")
        if _DATE_PART.match(text, m.end()) or (len(number) == 4 and number[:2] in ("19", "20")):
            continue
        found.add(number)
    return found


def restates_a_measure(new: str, old: str) -> bool:
    """Whether ``new`` gives other numbers for what ``old`` measured: a word before them is the same.

    A number whose words name nothing ("I'm up to 40 minutes a go now", "Pushed it to 2400m per session now")
    measures what the old one measured in its unit; one that names its own thing ("Now I walk 8 km") does not.

    >>> restates_a_measure("我的静息心率降到 58 了", "体检时静息心率 72")
    True
    >>> restates_a_measure("I swim 40 laps on Sundays", "I cycle 30 miles on Saturdays")
    False
    >>> restates_a_measure("Pushed it to 2400m per session now", "each time 1500 meters")
    True
    """
    if not restates_a_number(new, old):
        return False
    named = _measured(new)
    return bool(named & _measured(old)) if named else bool(_units(new) & _units(old))


def _measured(text: str) -> set[str]:
    """The words just before each quantity in ``text`` (Chinese: two characters), what it measures."""
    found: set[str] = set()
    text = text.replace("用户", "  ")  # the user is who, not what
    for m in _NUMBER.finditer(text):
        window = text[max(0, m.start() - 8) : m.start()]
        found |= {w.casefold() for w in LATIN.findall(window) if len(w) > 3 and w.casefold() not in FUNCTION}
        found |= {r[i : i + 2] for r in CJK_WORD.findall(window) for i in range(len(r) - 1) if "我" not in r[i : i + 2]}
    return found - _COUNTED


_UNIT = re.compile(
    r"\s?(?:(?P<length>km|kilomet(?:er|re)s?|met(?:er|re)s?|m|miles?|mi|feet|foot|ft|yards?|公里|千米|米)"
    r"|(?P<mass>kg|kilos?|kilograms?|grams?|lbs?|pounds?|公斤|千克|克|斤)"
    r"|(?P<time>min(?:ute)?s?|hours?|hrs?|h|seconds?|secs?|分钟|小时|秒)"
    r"|(?P<volume>ml|lit(?:er|re)s?|毫升|升)"
    r"|(?P<energy>kcal|cal(?:orie)?s?|大卡|千卡)"
    r"|(?P<money>dollars?|bucks|euros?|yuan|rmb|usd|元|块))(?![A-Za-z])",
    re.IGNORECASE,
)
"""A unit of measure right after a number, by what it measures (a closed class: length, mass, time…)."""
_CURRENCY = re.compile(r"[$€£¥]\s?$")


def _units(text: str) -> set[str]:
    """What the units of ``text``'s quantities measure ("2400m" and "1500 meters": length; "$48": money)."""
    found: set[str] = set()
    for m in _NUMBER.finditer(text):
        if unit := _UNIT.match(text, m.end()):
            found.add(str(unit.lastgroup))
        if _CURRENCY.search(text, 0, m.start()):
            found.add("money")
    return found


_COUNTED = frozenset({"每天", "每周", "每月", "每年", "一天", "一周", "一个", "大概", "左右", "差不多"})
"""How often or how roughly, not what: "每天跑5公里" and "每天喝8杯水" measure different things."""


def restates_a_number(new: str, old: str) -> bool:
    """Whether ``new`` states numbers and none of them is among the numbers ``old`` states."""
    ours, theirs = quantities(new), quantities(old)
    return bool(ours and theirs and not ours & theirs) and not _adds(new)


def named_things(text: str, *, first: bool = True) -> set[str]:
    """What can name a thing in ``text``: capitalized words, word pairs, runs of three Chinese characters.

    ``first=False`` skips the first word, capitalized only because it starts the sentence.
    """
    words = LATIN.findall(text)
    content = [w.casefold() if len(w) > 2 and w.casefold() not in FUNCTION else "" for w in words]
    pairs = {f"{a} {b}" for a, b in zip(content, content[1:]) if a and b}
    return proper_names(text, first=first) | pairs


def is_name(word: str) -> bool:
    """Whether a Latin word may name something: capitalized, longer than three letters, not "User"."""
    return word[0].isupper() and len(word) > 3 and word != "User"


def proper_names(text: str, *, first: bool = True) -> set[str]:
    """Capitalized words and runs of three Chinese characters: names, not the words around them."""
    words = LATIN.findall(text)
    found = {w.casefold() for w in words[0 if first else 1 :] if is_name(w)}
    for run in CJK_RUN.findall(text.replace("用户", " ")):
        found |= {run[i : i + 3] for i in range(len(run) - 2)}
    return found
