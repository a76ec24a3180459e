"""A stated change supersedes the free-text fact it is about.

"I closed my Harborline account and moved everything to Meridian Trust", "she's who I see now",
"拉丁舞课改到每周四晚上了": a statement in the grammar of change (a change verb, "now", "no longer",
"new") replaces the most similar live statement about the same entity, when the extractor found no
slot to put either in. Statements that add ("also", "too", "也") replace nothing. A slot's value restated
with another number (:func:`restates_a_number`) is the update step's concern. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES
from langchain_lifecycle_memory.write._lexicon import EN_FUNCTION_WORDS, ZH_MEASURE, alternation, says_whole
from langchain_lifecycle_memory.write._slot_names import stem, words

__all__ = [
    "DEFAULT_CHANGE_THRESHOLD", "ENDED", "KEPT_WORDS", "NAMED_CHANGE_THRESHOLD", "ZH_CHANGED_TO", "change_parts",
    "current_part", "ended_part", "holds_now", "only_ends", "quantities", "restates_a_number", "restates_held",
    "split_parts", "states_a_change", "states_an_end", "superseded_by_change",
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
    r"|relocat(?:ed|ing)|promoted|upgraded|retired|closed|quit|stopped|instead|anymore|any more|no longer|nowadays"
    r"|raised|lowered|increased|decreased|went (?:up|down)|down to"
    r"|these days|now)\b"
    r"|\bleft(?= (?:the|my|his|her|our|their|a|an)\b|[,.;!]|$)",
    re.IGNORECASE,
)
_EN_NEW = re.compile(r"\bnew\b")  # lower case: "my new landlord", not "New York"
ENDED = (
    r"\b(?:quit|quitting|stopped|gave up|given up|giving up|retired|no longer|anymore|any more)\b"
    r"|戒|辞职|离职|退休|不再"
)
"""Words that end something ("I quit smoking", "我戒酒了"): what they end was true until then."""
_ENDS = re.compile(ENDED, re.IGNORECASE)
_EN_ADDITIVE = re.compile(r"\b(?:also|too|as well|another|in addition|besides)\b", re.IGNORECASE)
ZH_CHANGED_TO = r"(?:改|换|调|搬|转|挪)(?:到|成|为)"
"""A Chinese verb of change with its result ("改到", "换成", "搬到"): where something was changed to."""
_ZH_CHANGE_VERB = re.compile(
    ZH_CHANGED_TO + r"|换(?:了|去|用)|改(?![天日善进革造正编写装])[\u4e00-\u9fff]|(?:换|改)[\u4e00-\u9fff]{1,3}了"
    r"|调(?:去|回)|搬(?:去|家|了)|转(?:去|学|行|岗)|跳槽"
)
"""A Chinese verb of change: "换手机了", "改报了扎染班", "转行了", "搬去丽江了"."""
ZH_CHANGE = _ZH_CHANGE_VERB.pattern + r"|现在|如今|不再|退休|离职|辞职|新的|升职|晋升|(?:降|涨|升|提|加|减|跌)到"
"""Chinese words of change: a changed-to verb, "now", "no longer", leaving a job, "new"."""
_ZH_CHANGE = re.compile(ZH_CHANGE)
_ZH_NO_LONGER = re.compile(r"不[\u4e00-\u9fff]{1,4}了")
"""A Chinese negation ending in 了, "no longer" ("鱼油我不吃了", "乐高机器人不上了")."""
_ZH_ADDITIVE = re.compile(r"也|另外|还有|此外|又(?![换改搬调转])")  # "又换手机了" changed again
_CLAUSE = re.compile(r"[,;，；。！？!?]|\.(?:\s|$)|\s[—–-]\s")
_NUMBER = re.compile(r"(?<![\d.,])\d+(?:[.,:]\d+)*")
_DATE_PART = re.compile(r"\s*(?:年|月|日|号|st\b|nd\b|rd\b|th\b)")
_LATIN = re.compile(r"[A-Za-z][A-Za-z'-]+")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]{3,}")
_ZH_FUNCTION = re.compile(
    r"[的了是在也都很就还又吧啊呢呀嘛哦我你他她它们这那个一不没有和跟把被给到去来说要会能想用得过]"
)
_CJK_CHAR = re.compile(r"[\u4e00-\u9fff]")
_CJK_WORD = re.compile(r"[\u4e00-\u9fff]{2,}")
_DURABLE = frozenset({"fact", "preference", "profile"})
_SPECS = {spec.name: spec for spec in DEFAULT_ATTRIBUTES}
_FUNCTION = EN_FUNCTION_WORDS | {
    "user", "user's", "users", "their", "they", "them", "his", "her", "hers", "she", "him", "from", "into", "onto",
    "about", "over", "being", "these", "those", "then", "than", "who", "which", "what", "when", "where", "every",
    "each", "its", "all", "any", "some", "your", "you", "one",
}  # fmt: skip


def _adds(text: str) -> bool:
    return bool(_EN_ADDITIVE.search(text) or _ZH_ADDITIVE.search(text))


def states_a_change(text: str) -> bool:
    """Whether a clause of ``text`` is worded as a change of what held before, not as an addition to it.

    Clause by clause: "只好换到云栖酒店，日子也挪到11月8日了" changes the venue though its second clause adds.
    """
    return any(_changes(clause) for clause in _CLAUSE.split(text))


def _changes(clause: str) -> bool:
    if _adds(clause):
        return False
    return bool(
        _EN_CHANGE.search(clause)
        or _EN_NEW.search(clause)
        or _ZH_CHANGE.search(clause)
        or _ZH_NO_LONGER.search(clause)
        or _GONE.search(clause)
        or _AGAIN.search(clause)
    )


# What ends something the speaker had: a verb of ending or disposal ("closed my Quillfield account", "sold the
# dulcimer", "不用了", "卸了"), not a move to somewhere ("moved to Leeds", "调去上海" name where the speaker is now).
_GONE = re.compile(
    ENDED + r"|\b(?:closed|sold|ditched|cancell?ed|got rid of|gave away|uninstalled|deleted|moved out|passed away"
    r"|died|call(?:s|ed|ing)? off|f(?:a|e)ll(?:s|ing)? through)\b"
    r"|\bleft(?= (?:the|my|his|her|our|their|a|an)\b|[,.;!]|$)"
    r"|不[\u4e00-\u9fff]{0,4}了|(?:卖|卸|关|退|停|删|丢|扔|送人|砍|忘光|忘掉)(?:掉|载)?了|(?:搬|调|送)走|没了"
    r"|去世|过世|离世",
    re.IGNORECASE,
)
_PART = re.compile(
    r"(\s*[,;，；]\s*|(?<=[.!?])\s+|(?<=[。！？])\s*|\s+[—–-]\s+|\s+(?:and|so|but|then)\s+"
    r"|\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s*)"  # an emoji ends a clause as a comma would
)
_TRAILING = re.compile(r"(?:[\s,;，；—–-]|\b(?:and|so|but|then)\b|所以|然后|于是)*$", re.IGNORECASE)
_LEADING = re.compile(r"^(?:and|so|but|then|所以|然后|于是)\s*", re.IGNORECASE)


def split_parts(text: str) -> list[str]:
    """``text`` cut where one statement may end and another begin (commas, "and", "so", emoji...)."""
    return _PART.split(text)[::2]


def change_parts(text: str) -> list[str]:
    """The parts of ``text`` that state a change ("年会只好换到良渚君澜酒店", not "时间也推到下周五了" alone)."""
    return [part for part in split_parts(text) if _changes(part)]


def states_an_end(text: str) -> bool:
    """Whether ``text`` ends something with a verb of ending or disposal ("sold the dulcimer", "手风琴不拉了")."""
    return _GONE.search(text) is not None


def only_ends(text: str, old: str) -> bool:
    """Whether ``text`` only ends what ``old`` stated ("Cancelled the Corvane card, the annual fee was silly").

    Every part of it that states a change ends something, and it names no number or name ``old`` does not.
    """
    parts = _PART.split(text)[::2]
    if not any(_GONE.search(p) for p in parts) or any(_changes(p) and not _GONE.search(p) for p in parts):
        return False
    named = {w.casefold() for w in _LATIN.findall(old)}
    new_names = {w for w in _LATIN.findall(text)[1:] if w[0].isupper() and w.casefold() not in named}
    return not new_names and not quantities(text) - quantities(old)


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
    pieces = _PART.split(text)
    parts = pieces[::2]
    ended = _ended(parts)
    later = [i for i in range(len(parts)) if ended and i > ended[0] and i not in ended and _changes_or_starts(parts[i])]
    if not later:
        return text
    start = max(i for i in ended if i < later[0]) + 1
    return _LEADING.sub("", "".join(pieces[2 * start :]).strip())


_STARTS = re.compile(
    r"\b(?:took up|picked up|started|began|bought|got|adopted|signed up for|joined)\b"
    r"|^(?:又|就)?(?:开始|买了|入手了?|养了|报了|学起|迷上|爱上)",
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
    pieces = _PART.split(text)
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
    names = set().union(*(_names(r) for r in replaced if r))

    def named(part: str) -> bool:
        return bool(names & _names(part)) or any(says_whole(r, part) for r in replaced if r)

    def ends(part: str) -> bool:
        return not _NOW.search(part) and (not _changes(part) and named(part) or _speaks_of(part, replaced))

    return [i for i, part in enumerate(parts) if _GONE.search(part) or ends(part)]


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
    if olds and any(_about(word, p) for p in _PART.split(olds[0])[::2]):  # the statement's subject, not its value
        return False
    if not word.isascii():
        return any(word in r.replace("用户", " ") for r in olds)
    return word.casefold() in {w.casefold() for r in olds for w in _LATIN.findall(r)}


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
    return word in rest[:4] if not word.isascii() else word in _LATIN.findall(re.split(_CJK_CHAR, rest)[0])[:3]


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

    >>> restates_a_measure("我的静息心率降到 58 了", "体检时静息心率 72")
    True
    >>> restates_a_measure("I swim 40 laps on Sundays", "I cycle 30 miles on Saturdays")
    False
    """
    return restates_a_number(new, old) and bool(_measured(new) & _measured(old))


def _measured(text: str) -> set[str]:
    """The words just before each quantity in ``text`` (Chinese: two characters), what it measures."""
    found: set[str] = set()
    text = text.replace("用户", "  ")  # the user is who, not what
    for m in _NUMBER.finditer(text):
        window = text[max(0, m.start() - 8) : m.start()]
        found |= {w.casefold() for w in _LATIN.findall(window) if len(w) > 3 and w.casefold() not in _FUNCTION}
        found |= {
            r[i : i + 2] for r in _CJK_WORD.findall(window) for i in range(len(r) - 1) if "我" not in r[i : i + 2]
        }
    return found - _COUNTED


_COUNTED = frozenset({"每天", "每周", "每月", "每年", "一天", "一周", "一个", "大概", "左右", "差不多"})
"""How often or how roughly, not what: "每天跑5公里" and "每天喝8杯水" measure different things."""


def restates_a_number(new: str, old: str) -> bool:
    """Whether ``new`` states numbers and none of them is among the numbers ``old`` states."""
    ours, theirs = quantities(new), quantities(old)
    return bool(ours and theirs and not ours & theirs) and not _adds(new)


def _names(text: str, *, first: bool = True) -> set[str]:
    """What can name a thing in ``text``: capitalized words, word pairs, runs of three Chinese characters.

    ``first=False`` skips the first word, capitalized only because it starts the sentence.
    """
    words = _LATIN.findall(text)
    content = [w.casefold() if len(w) > 2 and w.casefold() not in _FUNCTION else "" for w in words]
    pairs = {f"{a} {b}" for a, b in zip(content, content[1:]) if a and b}
    return _proper_names(text, first=first) | pairs


def _zh_pairs(text: str) -> set[str]:
    """Two Chinese characters side by side, neither a function word's: "台铃", "大行" name something."""
    runs = _CJK_WORD.findall(_ZH_FUNCTION.sub(" ", text.replace("用户", " ")))
    return {run[i : i + 2] for run in runs for i in range(len(run) - 1)}


def _proper_names(text: str, *, first: bool = True) -> set[str]:
    """Capitalized words and runs of three Chinese characters: names, not the words around them."""
    words = _LATIN.findall(text)
    found = {w.casefold() for w in words[0 if first else 1 :] if w[0].isupper() and len(w) > 3 and w != "User"}
    for run in _CJK_RUN.findall(text.replace("用户", " ")):
        found |= {run[i : i + 3] for i in range(len(run) - 2)}
    return found


def _new_names(text: str, alike: bool) -> set[str]:
    """The names in the parts of ``text`` that do not end something: what it says holds instead.

    "quit Fitness First and signed up at Anytime Fitness" names Anytime Fitness. A capitalized first word
    ("Nowadays I hike…") or a run of Chinese characters may be a name only after a Chinese verb of change
    ("换了辆零跑T03") or in words ``alike`` (as close as a change's threshold) to what they would replace:
    "现在每天早上跑五公里" names no new car, and "我不玩手游了" ends a habit.
    """
    kept = " ".join(part for part in split_parts(text) if not _GONE.search(part))
    if alike or _ZH_CHANGE_VERB.search(kept):
        return _proper_names(kept)
    return {m.group().casefold() for m in _LATIN.finditer(kept) if m.group()[0].isupper() and len(m.group()) > 3
            and m.group() != "User" and not _SENTENCE_START.search(kept[: m.start()])}  # fmt: skip


_SENTENCE_START = re.compile(r"(?:^|(?<!\b[A-Z][a-z])(?<!\b[A-Z][a-z]{2})[.!?]\s+)$")
"""Where a sentence starts: a capitalized word after it is no name. Not after a title ("Dr. Ferreira", "Mrs. Ng")."""


def _word_named(value: str, text: str) -> bool:
    """Whether ``text`` names a word of ``value`` that names something, in any case.

    A Chinese word whole ("那台华为给我妈用了" names "华为Mate 60"), or a capitalized word ("sold the bambino"
    names "Breville Bambino").
    """
    if any(word in text for word in _CJK_WORD.findall(value)):
        return True
    said = {w.casefold() for w in _LATIN.findall(text)}
    return any(w[0].isupper() and len(w) > 3 and w.casefold() in said for w in _LATIN.findall(value))


def _ends_value(value: str, text: str) -> bool:
    """Whether a clause of ``text`` that ends something names ``value`` whole ("my flatmate quit being vegan")."""
    return any(_GONE.search(p) and says_whole(value, p) for p in _clause_parts(text))


def _clause_parts(text: str) -> list[str]:
    """Every part of every clause of ``text`` (:func:`split_parts` within sentences and dashes)."""
    return [p for clause in _CLAUSE.split(text) for p in _PART.split(clause)[::2]]


_NEGATION = frozenset({"doesn't", "don't", "didn't", "isn't", "aren't", "never", "now", "longer", "more"})
_ZH_NOT_ANY_MORE = re.compile(r"不[\u4e00-\u9fff]{1,8}了")  # "不养六角恐龙了": its object as long as it is
_HAVE = {"has": "have", "had": "have", "having": "have", "have": "have"}
_OBJECT_PRONOUNS = frozenset({"it", "them", "that", "this", "those", "these", "one", "ones"})
_ZH_SPEAKER = re.compile(r"用户|现在|如今|已经|再也")  # 不 and 了 go with the function characters


_GRAMMAR = (_FUNCTION | _NEGATION | {"do", "does", "did"}) - set(_HAVE)


def _ends_its_words(old: str, text: str) -> bool:
    """Whether a part of ``text`` that ends something says nothing but what ``old`` says.

    "The user no longer has a cat." beside "The user has a cat named Pumpkin.", "用户现在不养猫了" beside
    "用户养了一只猫，叫南瓜": the cat goes, though the ending does not name it. Its verb included ("I no longer
    have a bike" does not end "works at a bike shop"), and at least one English word of three letters, or two
    Chinese characters, beyond grammar and the words of ending.
    """
    said_old = {_HAVE.get(w, stem(w)) for w in map(str.casefold, _LATIN.findall(old))}
    for part in _clause_parts(text):
        if not (_GONE.search(part) or _ZH_NOT_ANY_MORE.search(part)):
            continue
        if _CJK_CHAR.search(part):
            chars = set(_CJK_CHAR.findall(_ZH_FUNCTION.sub("", _ZH_SPEAKER.sub("", _ENDS.sub("", part)))))
            if len(chars) >= 2 and chars <= set(old):
                return True
            continue
        said = {w.casefold() for w in _LATIN.findall(_ENDS.sub(" ", part))}
        if said & _OBJECT_PRONOUNS:  # "I don't play it anymore": what ends is named elsewhere
            continue
        said -= _GRAMMAR  # the verb stays: "no longer has a bike" does not end "works at a bike shop"
        if any(len(w) >= 3 and w not in _HAVE for w in said) and {_HAVE.get(w, stem(w)) for w in said} <= said_old:
            return True
    return False


def _ends_slot(text: str, attribute: str | None) -> bool:
    """Whether ``text`` ends the slot it names by its head word, stemmed ("I quit smoking" ends ``smoke``)."""
    head = words(attribute or "")[-1:]
    if not head or len(head[0]) < 3 or not _ENDS.search(text):
        return False
    return stem(head[0]) in {stem(w.casefold()) for w in _LATIN.findall(text)}


_HEAD_ENDS = (
    r"(?=\s*(?:$|[,.;!?—–-]|\b(?:last|this|yesterday|today|recently|again|now|too|and|but|because|so|for|from|since"
    r"|at|in|on|with)\b))"
)
"""After the noun its phrase ends: "a new phone last week" changes the phone, "my editor theme" the theme."""
_ZH_HEAD_ENDS = r"(?=了|啦|$|[，,。！!；;]|以后|之后)"  # "换手机了", not "换手机壳"


def _changes_slot(text: str, attribute: str | None) -> bool:
    """Whether ``text`` changes the thing its slot names ("换手机了", "got a new phone"): its value goes."""
    spec = _SPECS.get(attribute or "")
    if spec is None:
        return False
    nouns = {spec.name.replace("_", " "), spec.description.split()[0], *spec.aliases} - {""}
    en = (
        r"\b(?:switched|changed|replaced|upgraded|new)\s+(?:my\s+|our\s+|the\s+|a\s+)?(?:"
        + alternation(nouns)
        + r")s?\b"
        + _HEAD_ENDS
    )
    zh = None
    if spec.zh:  # "换手机了", or the thing first: "手机换成 realme 了", "车也换了"
        zh = r"(?:换|改|新)了?" + ZH_MEASURE + "?" + re.escape(spec.zh) + _ZH_HEAD_ENDS
        zh += "|" + re.escape(spec.zh) + r"(?:也|又)?(?:换|改)(?:成|了)"
    return bool(re.search(en, text, re.IGNORECASE) or (zh and re.search(zh, text)))


def _entity(record: MemoryRecord) -> str:
    return record.entity or "user"


_AGAIN = re.compile(
    r"又(换|改|搬|调|转)|\b(mov|switch|chang|transferr|relocat)(?:ed|ing)\b(?=[^.,;!?]*\bagain\b)", re.IGNORECASE
)
"""The same change made again ("又调了", "moved again"): it replaces the last statement of that change."""


def _changed_again(new: MemoryRecord, similar: Sequence[tuple[MemoryRecord, float]]) -> MemoryRecord | None:
    """The latest live statement of the change ``new`` says was made again ("又调了" after "调去西宁了")."""
    if (m := _AGAIN.search(new.content)) is None:
        return None
    verb = (m.group(1) or m.group(2)).casefold()
    same = [
        old
        for old, _ in similar
        if old.id != new.id and old.slot is None and old.kind in _DURABLE and _entity(old) == _entity(new)
        and verb in old.content.casefold() and states_a_change(old.content)
    ]  # fmt: skip
    return max(same, key=lambda old: old.valid_from, default=None)


def superseded_by_change(
    new: MemoryRecord,
    similar: Sequence[tuple[MemoryRecord, float]],
    threshold: float,
    named: float,
    said: str | None = None,
    *,
    another: bool = True,
) -> MemoryRecord | None:
    """The one live statement that ``new`` (worded as a change) replaces, if any.

    Args:
        new: The record just planned; its content must state a change (:func:`states_a_change`).
        similar: Live records with their cosine similarity to ``new``'s content, best first.
        threshold: The least similarity for "about the same thing".
        named: The least similarity when ``new`` names what ``old`` named ("closed my Harborline account").
        said: The words that say what ended, when ``new``'s content keeps only what holds now
            (:func:`ended_part`): what they name counts as named.
        another: Whether a new name ends a single-valued slot (off when the words belong to a fact that has a
            slot of its own: "These days I live in Lisbon" is no new birthplace).

    Returns:
        The most similar durable statement of the same entity that has no slot; a slot's value only
        when ``new`` has no slot and names that value ("Dr. Okafor retired"), ends the slot it names
        ("I quit smoking" ends ``smoke``), or names something else for a single-valued slot ("signed up at
        Anytime Fitness instead" for ``gym``), at least as close as ``named``.
    """
    if not (states_a_change(new.content) or said):  # ``said``: the words ended something, whatever now holds
        return None
    if (again := _changed_again(new, similar)) is not None:
        return again
    names = _names(new.content) | (_names(said) if said else set())
    pairs = _zh_pairs(new.content)
    for old, score in similar:
        if score < min(threshold, named):
            return None
        durable = old.kind in _DURABLE or old.metadata.get(KEPT_WORDS)  # words kept for the facts they state
        if old.id == new.id or not durable or _entity(old) != _entity(new):
            continue
        if old.slot is not None:  # a slot's value goes when the change names it, ends its slot, or names another
            named_value = names & _names(str(old.value)) or _word_named(str(old.value), said or new.content)
            named_value = (
                named_value or _ends_value(str(old.value), new.content) or _ends_its_words(old.content, new.content)
            )
            ends = _ends_slot(new.content, old.attribute) or _changes_slot(new.content, old.attribute)
            # "signed up at Anytime Fitness instead" beside "gym: Fitness First": a new name for the one it holds
            renamed = (
                another
                and old.cardinality == "single"
                and bool(_new_names(new.content, score >= threshold) - _names(old.content))
            )
            if new.slot is None and (named_value or ends or renamed or _calls_off(old, new)):
                return old
        elif (
            score >= threshold
            or names & _names(old.content, first=False)
            or pairs & _zh_pairs(old.content)
            or restates_a_measure(new.content, old.content)
        ) and not _names_its_place(new.content, old.content):
            return old
    return None


def _calls_off(plan: MemoryRecord, new: MemoryRecord) -> bool:
    """Whether ``new`` ends ``plan``, a change that has not started yet, by a word of the change itself.

    "We called off the move" / "Our move fell through" / "我们不搬了" before "The user is moving to Ålesund in
    May": the plan is off though the words do not name where it was going. Every word of the ending beyond
    grammar is the plan's ("我不上夜班了" does not call off "下个月搬到上海").
    """
    if plan.valid_from <= new.valid_from:
        return False
    planned = {stem(w.casefold()) for w in _LATIN.findall(plan.content)} | set(plan.content)
    for part in _clause_parts(new.content):
        if _GONE.search(part):
            said = {stem(w) for w in map(str.casefold, _LATIN.findall(_GONE.sub(" ", part))) if w not in _GRAMMAR}
            said = {w for w in said if len(w) >= 3} | set(
                _CJK_CHAR.findall(_ZH_FUNCTION.sub("", _ZH_SPEAKER.sub("", part)))
            )
            if said and said <= planned:
                return True
    return False


_ZH_PLACE = re.compile(r"[店馆铺房厅厂院所站室场园校司行部吧]")
"""The last character of a Chinese place named after what it sells or does: 包子铺, 面包房, 咖啡馆, 驾校."""


def _names_its_place(text: str, old: str) -> bool:
    """Whether a Chinese ending in ``text`` shares with ``old`` only the start of a place's name there.

    "我现在不吃包子了" and "我周末在包子铺帮忙": 包子 is, in the remark, the bun shop, which the ending does not
    name. Every run of two or more characters the two share is followed in ``old`` by a place's last character
    the ending does not have; "包子铺那边我不去帮忙了" shares 帮忙 and ends the help.
    """
    for ending in (m.group() for p in change_parts(text) for m in _ZH_NOT_ANY_MORE.finditer(p)):
        shared = _shared_runs(ending, old)
        if shared and all(_ZH_PLACE.fullmatch(old[i : i + 1]) and old[i] not in ending for i in shared):
            return True
    return False


def _shared_runs(phrase: str, old: str) -> list[int]:
    """Where in ``old`` each longest run of two or more CJK characters it shares with ``phrase`` ends."""
    ends, start = [], 0
    while start < len(phrase) - 1:
        size = 2
        while (
            start + size <= len(phrase)
            and phrase[start : start + size] in old
            and _CJK_WORD.fullmatch(phrase[start : start + size])
        ):
            size += 1
        run = phrase[start : start + size - 1]
        if len(run) >= 2:
            ends += [m.end() for m in re.finditer(re.escape(run), old)]
        start += max(1, len(run))
    return ends


def restates_held(words: str | None, keep: MemoryRecord, card: str) -> bool:
    """Whether ``words`` restate ``keep``'s single value with a number ``keep``'s statement does not have."""
    return (
        card == "single"
        and keep.status is MemoryStatus.ACTIVE
        and bool(words)
        and restates_a_number(str(words), keep.content)
    )
