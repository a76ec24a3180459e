"""Query understanding for the slot channel: attribute routing (topic cards), mentions, whom a question is for.

Routing bridges the semantic gap ("schedule a call with me" vs a night-shift nurse's ``job`` card); whom a
question is about by name or relation is ``people``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from langchain_lifecycle_memory.read.lexical import _stem, normalize_text, word_tokens
from langchain_lifecycle_memory.read.vectors import TextVectors, unit
from langchain_lifecycle_memory.schema import is_self_entity, normalize_value
from langchain_lifecycle_memory.vocabulary import AttributeSpec, card_phrases, humanize

__all__ = [
    "AttributeRouter",
    "asks_for_the_user",
    "attribute_mentioned",
    "humanize",
    "is_collective",
    "is_lookup",
    "is_personal",
    "is_self_entity",
    "mentioned_attributes",
    "said_as_a_noun",
    "speaks_of_the_user",
    "value_in",
    "value_mentioned",
    "without_time",
]


_FIRST_PERSON = frozenset("i me my mine myself im ive id we us our ours".split())
_EN_PERSONAL = _FIRST_PERSON | frozenset(
    "user users give put recommend suggest help find book order remind plan pick choose get buy tell worth".split()
)
_ZH_PERSONAL = (
    *("我", "俺", "咱", "用户", "帮", "给", "推荐", "替", "提醒", "安排", "挑", "选", "订", "来点", "放点"),
    *("值得", "适合"),
)
# Shapes of a request that is the speaker's without saying "I" (closed word classes, not topics): the
# speaker is left out before a verb of intent or a done deed ("想换辆新车…", "网上买了个书架", "Thinking
# about a sofa…"), before their home or company ("家里…", "一起去…"), or before a choice or a lapse of memory
# ("该设哪儿", "用哪个", "去哪补货", "找谁", "是哪家来着": a verb that asks where or which, not 是/在/出自哪, which
# ask of a thing), before a bare verb asked as yes-or-no after an invitation ("…，去吗"), or between a time
# and 能/可以…吗 ("这周六上午能…吗"); or it asks the assistant for advice ("你觉得…", "…怎么办", "any ideas…").
# A time word alone is not one: "明天会下雨吗？" asks about the world, and "猫能吃巧克力吗？" names its subject.
_ZH_WHEN = (
    r"(?:今天|明天|后天|今晚|明晚|(?:这|下)个?(?:周|星期|礼拜)[一二三四五六日天末]?|(?:周|星期|礼拜)[一二三四五六日天末]"
    r"|上午|下午|晚上|早上|中午|一早)+"
)
_ELIDED_SPEAKER = re.compile(
    r"(?:^|[，,。；;！!？?、\s])[^，,。；;！!？?\s他她它你您]{0,6}?(?<![思理感梦幻猜])(?:想|打算|准备|计划|考虑|要去)"
    r"|^[^，,。？?]{0,6}?了个|家里|在家|回家|家中|一起|一块儿|\bat home\b"
    r"|(?:该|得|用|找|选|写)[\u4e00-\u9fff]?谁|来着"  # "找谁", "是哪家来着"
    r"|(?:^|[，,。；;！!？?\s])[^，,。；;！!？?\s他她它]*?[\u4e00-\u9fff](?<![是在有从于自属])哪"  # "去哪补", "用哪个"
    r"|[，,]\s*(?:要|该|能)?(?![对是有])[\u4e00-\u9fff]吗"  # "朋友约周五去喝一杯，去吗": not "…，对吗"
    r"|(?:^|[，,])" + _ZH_WHEN + r"(?:能|可以)[^，,。？?]{1,15}吗"  # "这周六上午能约中介看房吗": a time, no subject
    r"|^\s*(?:just\s+)?(?:thinking|planning|going|heading|hoping|trying|looking|wanting|gonna|want to|need to)\b",
    re.IGNORECASE,
)
# A question that opens on a time or a meal of the speaker's days and asks what, where or who ("中午吃点啥好？",
# "下周去新加坡，行李里带啥？"), or a clause that opens on a verb asked as yes-or-no ("今晚聚会，去不去？"):
# the speaker is left out. "明天会下雨吗？", "今天是什么节日？" and "明天股市开不开？" ask about the world.
_ZH_TIMED_ASK = re.compile(
    r"^(?:" + _ZH_WHEN + r"|周末|[早午晚][饭餐]|[这下]个?月)[^。？?]{0,24}?(?<!是)(?:啥|什么|哪|谁)"
    r"|(?:^" + _ZH_WHEN + r"|[，,])\s*([\u4e00-\u9fff])不\1"
    r"|^(?:" + _ZH_WHEN + r"|周末|[这下]个?月)(?=[^。？?]{0,40}?(?:怎么|咋|吗|么|tips|([\u4e00-\u9fff])不\2))"
    r"[^。？?]{0,40}?"
    r"(?:要|想|能|可以|有空|有个|去|约|该|打算|准备|tips)"
)
"""A question that starts with when and has the speaker act, their subject left out: "周五晚上有空去练琴吗",
"下周有个体检，有什么 tips"; not a forecast ("后天杭州会下雪吗": no one acts)."""
_ADVICE = re.compile(
    r"你(?:觉得|看|说)|建议|怎么办|咋(?:办|整)|比较好|合适|行吗|可以吗|行不行|可不可以|要注意|准备什么"
    r"|\bwhat do you think\b|\bany (?:\w+ ){0,2}(?:ideas|suggestions|tips|advice)\b|\b(?:recommendations|suggestions)\b"
    r"|\bwould (?:it )?be (?:best|better|smartest|wise)\b|\ba good (?:time|night|day|idea|moment) (?:to|for)\b"
    r"|^(?:which|what|where|who)\b[^?.]*\bshould\b",
    re.IGNORECASE,
)


# "the US" is no "us": the pronoun is never written in capitals or with dots.
_COUNTRY = re.compile(r"\bU\.?S\.?(?:A\b\.?)?(?![\w'])")


def is_personal(query: str) -> bool:
    """Whether the query is about or for the user, not general knowledge.

    It says so ("my", "I", "我", "帮我", "recommend..."), leaves out its subject before a verb of intent
    ("想换辆新车…") or asks the assistant for advice ("…你觉得怎么样？").
    """
    if any(w.split("'")[0] in _EN_PERSONAL for w in _en_words(query)) or any(m in query for m in _ZH_PERSONAL):
        return True
    asks = _ELIDED_SPEAKER.search(query) or _ADVICE.search(query) or _ZH_TIMED_ASK.search(query.strip())
    return asks is not None


_NOT_A_TOPIC = frozenset(
    "what which who whom whose where when why how is are was were do does did can could should would will "
    "the a an of to for in on at with about and or not no yes thanks thank hi hello hey ok okay please".split()
)
_ZH_ASKING = re.compile(r"[吗呢吧啊呀嘛么谁哪几]|什么|怎么|如何|多少|谢谢|你好")


def is_lookup(query: str) -> bool:
    """Whether ``query`` is a bare topic, as an agent's memory-search tool asks ("occupation", "饮食禁忌").

    No question, request or greeting; at most three words (six Chinese characters).
    """
    text = query.strip()
    if not text or "?" in text or "？" in text:
        return False
    words = re.findall(r"[A-Za-z']+", text)
    han = re.findall(r"[\u4e00-\u9fff]", text)
    if han:
        return not words and len(han) <= 6 and _ZH_ASKING.search(text) is None
    return 0 < len(words) <= 3 and not any(w.casefold() in _NOT_A_TOPIC for w in words)


_COLLECTIVE = re.compile(r"\b(?:we|us|our|family|kids|children)\b|我们|咱们|全家|一家|家人|孩子们", re.IGNORECASE)


def is_collective(query: str) -> bool:
    """Whether the request is for the user's household too ("Should we take the kids…", "我们想全家一起…")."""
    return _COLLECTIVE.search(query) is not None


_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|march|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?"
    r"|nov(?:ember)?|dec(?:ember)?)"
)
_PART = r"(?:early|mid|late|the start of|the beginning of|the end of|the middle of|spring|summer|fall|autumn|winter)"
# When a question is asked of the past (``as_of``), its time phrase has done its work as a filter; left in
# the text, "2022年元旦那会儿" or "in mid-2022" outweighs the words that say what is asked about.
_TIME = re.compile(
    r"(?:19|20)\d{2}\s*年(?:初|底|末|中|上半年|下半年|[春夏秋冬](?!节)天?|\d{1,2}\s*月(?:份|初|底|中)?)?|"
    rf"\b(?:back\s+)?(?:in|during|around|at|by|as of|since|from|before|after)?\s*(?:{_PART}(?:\s+of)?[\s-]*)?"
    rf"(?:{_MONTH}\s*,?\s*)?(?:19|20)\d{{2}}\b|\b(?:in|during)\s+{_MONTH}\b|\bback then\b|\bat (?:that|the) time\b"
    r"|\blast (?:year|month|week|spring|summer|fall|autumn|winter)\b|\b\w+ (?:years?|months?|weeks?) ago\b"
    r"|\d{1,2}\s*月(?:份|初|底|中)?|元旦|春节|国庆|年初|年底|年末|上半年|下半年|去年|前年"
    r"|那(?:会儿?|时候?|阵子?)|当时|的时候|以前|之前",
    re.IGNORECASE,
)


def without_time(query: str) -> str:
    """``query`` without its time phrases ("2023年底我在哪个部门？" -> "我在哪个部门？"); kept if nothing is left."""
    rest = re.sub(r"\s+", " ", _TIME.sub(" ", query)).strip()
    return rest if re.search(r"\w", rest) else query


_HOW_TO = re.compile(
    r"^\s*how (?:\w+ )?(?:do|can|would|should|to) (?:i|we|you|one)?|^[^我，,]*?(?:怎么|如何)(?:做|制作|煮|炒|烤|烧)",
    re.IGNORECASE,
)
_POSSESSED = re.compile(r"\b(?:my|our|me|us|mine)\b", re.IGNORECASE)
_ZH_POSSESSED = re.compile(r"[我咱俺]们?(?:的|家|那)")
"""The speaker's own in Chinese: "我的", "我家那个小家伙", "咱们家", "我那台机器"."""
_ASKS_NAME = re.compile(r"叫什么|什么名字|名字是|\bname\b|\bcalled\b", re.IGNORECASE)
_ASKS_LANGUAGE = re.compile(
    r"什么是|是什么意思|翻译|解释一下|有什么区别"
    r"|\b(?:what does \S+ mean|translate|explain|define|difference between)\b",
    re.IGNORECASE,
)


def asks_for_the_user(query: str) -> bool:
    """Whether general facts about the user can serve a request.

    Not a how-to about the world, a name question, nor a question about words or the world ("什么是通货膨胀",
    "translate…"): for those, facts about the user are noise unless a search matched them.
    """
    possessed = bool(_POSSESSED.search(query) or _ZH_POSSESSED.search(query))
    if _HOW_TO.match(query):
        return possessed
    if _ASKS_LANGUAGE.search(query) and not possessed:
        return False
    return is_personal(query) and (possessed or not _ASKS_NAME.search(query))


def _en_words(query: str) -> list[str]:
    """The English words of a query, lower case ("the US" left out: it is no "us")."""
    return re.findall(r"[a-z']+", normalize_text(_COUNTRY.sub(" ", query)))


def speaks_of_the_user(query: str) -> bool:
    """Whether a query speaks of the user ("can I give saffron some cheese?"), so a name in it may be theirs.

    A how-to's "I" is anyone's ("How can I tell if a mango is ripe?").
    """
    said = any(w.split("'")[0] in _FIRST_PERSON for w in _en_words(query)) or re.search("[我咱俺]", query)
    return bool(said) and not (_HOW_TO.match(query) and not _POSSESSED.search(query))


def said_as_a_noun(value: str, content: str, query: str) -> bool:
    """Whether ``query`` says a thing's name only as the common noun it also is.

    "How much grated nutmeg…" names no cat called Nutmeg, "wild mustangs" no Ford Mustang: a name is a capitalised
    latin word of the value, capitalised in its statement too; said in lower case or in the plural, it is the noun.
    ``False`` when the query says no such word or says one as written. Ask :func:`speaks_of_the_user` first: a
    question about the user may mean theirs.
    """
    said = False
    for word in re.findall(r"\b[A-Z][a-z]{2,}\b", value):
        if word not in content:
            continue
        stem = word[:-1] if word.endswith("y") else word
        for m in re.finditer(rf"\b{stem}(y|ies|s|es)?\b" if stem != word else rf"\b{word}(s|es)?\b", query, re.I):
            if m.group() == word:
                return False
            said = True
    return said


def value_mentioned(query: str, value: str | None) -> bool:
    """The slot value appears in the query (whole words for latin values)."""
    return bool(value) and value_in(normalize_value(str(value)), normalize_value(query))


def value_in(needle: str, haystack: str) -> bool:
    """``value_mentioned`` for an already normalised value and query."""
    if len(needle) < 2 or needle not in haystack:  # the substring test is cheap; the regex only confirms
        return False
    return not needle.isascii() or re.search(rf"(?<![a-z0-9]){re.escape(needle)}(?![a-z0-9])", haystack) is not None


def _names(attribute: str, spec: AttributeSpec | None) -> list[tuple[bool, tuple[str, ...] | str]]:
    """How a query can name an attribute: latin stem runs, or CJK substrings (its Chinese name)."""
    out: list[tuple[bool, tuple[str, ...] | str]] = []
    for name in [humanize(attribute), *([spec.zh] if spec is not None and spec.zh else [])]:
        words = word_tokens(name)
        if words and all(re.fullmatch(r"[a-z0-9]+", w) for w in words):
            out.append((True, tuple(_stem(w) for w in words)))
        elif len(normalize_text(name)) >= 2:
            out.append((False, normalize_text(name)))
    return out


def _contains_run(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return n > 0 and any(tuple(haystack[i : i + n]) == tuple(needle) for i in range(len(haystack) - n + 1))


def attribute_mentioned(query: str, attribute: str, spec: AttributeSpec | None) -> bool:
    """The query names the attribute itself ("编辑器", "editor", "running shoes")."""
    return bool(mentioned_attributes([query], [attribute], {attribute: spec} if spec else {}))


def mentioned_attributes(
    queries: Sequence[str], attributes: Iterable[str], specs: Mapping[str, AttributeSpec]
) -> set[str]:
    """The attributes that some query names (``attribute_mentioned`` for many at once)."""
    found: set[str] = set()
    for query in queries:
        stems, text = [_stem(w) for w in word_tokens(query)], normalize_text(query)
        for attribute in attributes:
            names = [] if attribute in found else _names(attribute, specs.get(attribute))
            if any(_contains_run(stems, n) if latin else n in text for latin, n in names):  # type: ignore[arg-type]
                found.add(attribute)
    return found


class AttributeRouter:
    """How much a query is about each attribute: mean cosine of its two best card phrases (unknown ones discounted)."""

    unknown_discount = 0.05

    def __init__(self, embeddings: object, vocabulary: Sequence[AttributeSpec]) -> None:
        self.embeddings = embeddings
        self.vocabulary = tuple(vocabulary)
        self.specs = {spec.name: spec for spec in self.vocabulary}
        self._stacked: tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def _stack(self, attributes: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        if self._stacked is not None and self._stacked[0] == attributes:
            return self._stacked[1:]
        cards = [card_phrases(a, self.specs.get(a)) for a in attributes]
        counts = np.array([len(c) for c in cards], dtype=np.int64)
        matrix = TextVectors.of(self.embeddings).matrix([p for card in cards for p in card])
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        known = np.array([a in self.specs for a in attributes], dtype=bool)
        self._stacked = (attributes, matrix, counts, starts, known)
        return matrix, counts, starts, known

    def score_array(self, query_vector: Sequence[float], attributes: Sequence[str]) -> np.ndarray:
        """Route score of each of ``attributes`` (distinct names) for the query."""
        names = tuple(attributes)
        if not names:
            return np.zeros(0)
        matrix, counts, starts, known = self._stack(names)
        sims = (matrix @ unit(query_vector)).astype(np.float64)
        owner = np.repeat(np.arange(len(names)), counts)
        best = np.maximum.reduceat(sims, starts)
        first = np.minimum.reduceat(np.where(sims == best[owner], np.arange(len(sims)), len(sims)), starts)
        masked = sims.copy()
        masked[first] = -np.inf
        second = np.maximum.reduceat(masked, starts)
        mean = np.where(counts > 1, (best + second) / 2, best)
        return np.where(known, mean, mean - self.unknown_discount)
