"""Query understanding for the slot channel: attribute routing (topic cards), mentions, entity focus.

Routing bridges the semantic gap ("schedule a call with me" vs a night-shift nurse's ``job`` card);
entity focus keeps relatives' facts out of first-person questions, and the user's out of questions about others.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from langchain_lifecycle_memory.read.lexical import _stem, normalize_text, word_tokens
from langchain_lifecycle_memory.read.vectors import TextVectors, unit
from langchain_lifecycle_memory.schema import PERSON, is_self_entity, normalize_value
from langchain_lifecycle_memory.vocabulary import RELATIONS, AttributeSpec, card_phrases, humanize

__all__ = [
    "AttributeRouter",
    "asks_for_the_user",
    "attribute_mentioned",
    "entity_aliases",
    "humanize",
    "is_collective",
    "is_lookup",
    "is_other_person",
    "is_personal",
    "is_self_entity",
    "mentioned_attributes",
    "query_entities",
    "relatives_by_meaning",
    "value_in",
    "value_mentioned",
    "without_time",
]


# One tuple of forms per relation (vocabulary.RELATIONS). Family words name a person on their own
# ("老婆喜欢什么？"); social ones ("friends", "同事") and one-character forms only when possessed or named.
_FAMILY = tuple(r.forms() for r in RELATIONS if r.family)
_SOCIAL = tuple(r.forms() for r in RELATIONS if not r.family)
_SOCIAL_FORMS = frozenset(form for group in _SOCIAL for form in group)
_IN_LAW = re.compile(r"[_\s-]in[_\s-]law(?![a-z])")
_IN_LAW_FORMS = {r.key.removesuffix("_in_law"): r.forms() for r in RELATIONS if r.key.endswith("_in_law")}
"""An in-law by the words for them ("公公" is the ``father_in_law``; "爸" is not)."""
_EN_RELATION_FORMS = frozenset(f for group in (*_FAMILY, *_SOCIAL) for f in group if f.isascii())
_EN_PERSON_FORMS = _EN_RELATION_FORMS | {PERSON}  # ``person_kevin``: someone whose relation was not said
_ZH_RELATION_FORMS = tuple(f for group in (*_FAMILY, *_SOCIAL) for f in group if not f.isascii() and len(f) > 1)
_POSSESSIVES_EN = ("my", "our")
_POSSESSIVES_ZH = ("我的", "我家", "我们", "我")


_NAME_PREFIXES = {"小": "xiao", "老": "lao", "阿": "a", "大": "da"}
"""Diminutives before a Chinese given name, with their pinyin (``ajie`` is "阿杰": the 阿 is one of its syllables)."""
_SEPARATORS = re.compile(r"[_\-\s]+")
_VOWEL_GROUPS = re.compile(r"[aeiouv]+")


def is_other_person(entity: str | None) -> bool:
    """Whether an entity id names someone else in the user's life (``sister_maya``, ``老婆``; not ``maple``)."""
    if is_self_entity(entity):
        return False
    norm = normalize_text(str(entity))
    parts = set(_SEPARATORS.split(norm))
    return bool(parts & _EN_PERSON_FORMS) or any(zh in norm for zh in _ZH_RELATION_FORMS)


_EN_PERSONAL = frozenset(
    "i me my mine myself im ive id we us our ours user users "
    "give put recommend suggest help find book order remind plan pick choose get buy tell worth".split()
)
_FIRST_PERSON = frozenset("i me my mine myself im ive id we us our ours".split())
_ZH_PERSONAL = (
    *("我", "俺", "咱", "用户", "帮", "给", "推荐", "替", "提醒", "安排", "挑", "选", "订", "来点", "放点"),
    *("值得", "适合"),
)
# Shapes of a request that is the speaker's without saying "I" (closed word classes, not topics): the
# speaker is left out before a verb of intent or a done deed ("想换辆新车…", "网上买了个书架", "Thinking
# about a sofa…"), before their home or company ("家里…", "一起去…"), or before a choice or a lapse of memory
# ("该设哪儿", "用哪个", "找谁", "是哪家来着"), or between a time and 能/可以…吗 ("这周六上午能…吗"); or it asks
# the assistant for advice ("你觉得…", "…怎么办", "any ideas…"). A time word alone is not one: "明天会下雨吗？"
# asks about the world, and "猫能吃巧克力吗？" names its subject.
_ZH_WHEN = (
    r"(?:今天|明天|后天|今晚|明晚|(?:这|下)个?(?:周|星期|礼拜)[一二三四五六日天末]?|(?:周|星期|礼拜)[一二三四五六日天末]"
    r"|上午|下午|晚上|早上|中午|一早)+"
)
_ELIDED_SPEAKER = re.compile(
    r"(?:^|[，,。；;！!？?、\s])[^，,。；;！!？?\s他她它你您]{0,6}?(?<![思理感梦幻猜])(?:想|打算|准备|计划|考虑|要去)"
    r"|^[^，,。？?]{0,6}?了个|家里|在家|回家|家中|一起|一块儿|\bat home\b"
    r"|(?:该|得|用|找|选|写)[\u4e00-\u9fff]?(?:哪|谁)|来着"  # "该设哪儿", "用哪个", "找谁", "是哪家来着"
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
    words = re.findall(r"[a-z']+", normalize_text(_COUNTRY.sub(" ", query)))
    if any(w.split("'")[0] in _EN_PERSONAL for w in words) or any(m in query for m in _ZH_PERSONAL):
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
    possessed = bool(_POSSESSED.search(query)) or "我的" in query
    if _HOW_TO.match(query):
        return possessed
    if _ASKS_LANGUAGE.search(query) and not possessed:
        return False
    return is_personal(query) and (possessed or not _ASKS_NAME.search(query))


def said_as_a_noun(value: str, content: str, query: str) -> bool:
    """Whether ``query`` says a thing's name only as the common noun it also is.

    "How much grated nutmeg…" names no cat called Nutmeg, "wild mustangs" no Ford Mustang: a name is a capitalised
    latin word of the value, capitalised in its statement too; said in lower case or in the plural, it is the noun.
    ``False`` when the query says no such word, says one as written, or speaks of the user (a how-to's "I" is
    anyone's).
    """
    words = re.findall(r"[a-z']+", normalize_text(_COUNTRY.sub(" ", query)))
    speaks = any(w.split("'")[0] in _FIRST_PERSON for w in words) or re.search("[我咱俺]", query)
    if speaks and not (_HOW_TO.match(query) and not _POSSESSED.search(query)):
        return False  # "can I give saffron some cheese?": the user's own may be meant ("how can I tell…": anyone's)
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


def entity_aliases(entity: str, contents: Iterable[str] = ()) -> tuple[set[str], set[str]]:
    """``(names, relations)`` by which a query can refer to ``entity``.

    Names come from the id (``sister_claire`` -> ``claire``), from the capitalised word after an English relation
    word ("my brother Raj" -> ``raj``) and, in Chinese statements, from the characters after the relation word,
    one per romanised syllable (``daughter_keke``, "女儿可可..." -> ``可可``).
    """
    contents = list(contents)  # read twice
    norm = normalize_text(_unaccented(entity))
    in_law = bool(_IN_LAW.search(norm))
    norm = _IN_LAW.sub("", norm)  # not the names "in", "law"
    names: set[str] = set()
    relations: set[str] = set()
    romanized = ""
    for part in (p for p in _SEPARATORS.split(norm) if p and p != PERSON):  # "person" names no one
        if forms := _forms_of({part}):
            relations |= {f"{part} in law", *_IN_LAW_FORMS.get(part, ())} if in_law else forms
            continue
        if len(part) >= 2:
            names.add(part)
        elif "\u4e00" <= part <= "\u9fff":  # "阿旺" kept as ``nephew_旺``: the name as its statements say it
            prefixed = re.compile(f"[{''.join(_NAME_PREFIXES)}]{part}")
            names.update(m.group() for content in contents for m in prefixed.finditer(content))
        if re.fullmatch(r"[a-z]+", part) and len(_VOWEL_GROUPS.findall(part)) > len(_VOWEL_GROUPS.findall(romanized)):
            romanized = part
    if not relations and names:  # a bare name ("jonas"): how the statements introduce them ("roommate Jonas")
        relations = _introduced_as(norm, contents)
    zh_relations = [r for r in relations if not r.isascii() and len(r) > 1]
    en_relations = "|".join(sorted((re.escape(r) for r in relations if r.isascii()), key=len, reverse=True))
    after_en = re.compile(rf"\b(?i:{en_relations})(?:-in-law)?,?(?:\s+([A-Z][a-z]+)\b|\s*([\u4e00-\u9fff]+))")
    for content in contents:
        for latin, chinese in after_en.findall(content) if en_relations else ():
            # "The user's brother Raj lives in Winnipeg", "the user's niece 小桐 loves…": the name after the relation
            names.update([normalize_text(_unaccented(latin))] if latin else _given_name(chinese, romanized))
        text = normalize_text(content)
        for rel in zh_relations if romanized else ():
            start = text.find(rel)
            tail = text[start + len(rel) :] if start >= 0 else ""
            names.update(_given_name(tail, romanized))  # the name right after the relation
            names.update(n for n in _given_name(tail[1:], romanized) if len(n) > 1)  # or after a surname ("周小禾")
    return names, relations


_RELATION_FORMS = "|".join(
    sorted({re.escape(f) for group in (*_FAMILY, *_SOCIAL) for f in group if len(f) > 1}, key=len, reverse=True)
)


def _introduced_as(name: str, contents: Iterable[str]) -> set[str]:
    """The forms of the relation word right before ``name`` in its statements ("The user's coworker Raj …")."""
    said = re.compile(rf"(?<![a-z])({_RELATION_FORMS})\s*{re.escape(name)}(?![a-z])")
    found = {m.group(1) for content in contents for m in said.finditer(normalize_text(_unaccented(content)))}
    return _forms_of(found)


def _forms_of(words: set[str]) -> set[str]:
    """Every form of the relations ``words`` name ("roommate": roommate, flatmate, 室友…)."""
    return {form for group in (*_FAMILY, *_SOCIAL) if words.intersection(group) for form in group}


def _unaccented(text: str) -> str:
    """``text`` without combining accents, so "Joaquín" and ``joaquin`` name the same person either way round."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def _given_name(text: str, romanized: str) -> list[str]:
    """The Chinese name ``text`` starts with, one character per syllable of ``romanized`` (a diminutive extra)."""
    prefix = _NAME_PREFIXES.get(text[:1])
    size = len(_VOWEL_GROUPS.findall(romanized)) + (1 if prefix and not romanized.startswith(prefix) else 0)
    name = text[:size]
    return [name] if name and len(name) == size and all("\u4e00" <= ch <= "\u9fff" for ch in name) else []


def query_entities(query: str, aliases: Mapping[str, tuple[set[str], set[str]]]) -> set[str]:
    """The non-self entities a query is about (empty: the user); ``aliases``: entity id -> ``entity_aliases``."""
    query = _unaccented(query)
    text, words = normalize_text(query), word_tokens(query)
    word_set = set(words) | {a + b for a, b in pairwise(words)}  # a name written in syllables: "Wei Jie", ``weijie``
    said = f" {' '.join(words)} "  # for relations of several words ("father in law")
    found: set[str] = set()
    for entity, (names, relations) in aliases.items():
        if any((n in word_set) if n.isascii() else (n in text) for n in names):
            found.add(entity)
            continue
        for rel in relations:
            loose = rel in _SOCIAL_FORMS or len(rel) == 1
            if rel.isascii() and " " in rel:  # "father in law"
                hit = f" {rel} " in said
                possessed = any(f" {p} {rel} " in said for p in _POSSESSIVES_EN)
            elif rel.isascii():
                forms = (rel, rel + "s")
                at = [i for i, w in enumerate(words) if w in forms and words[i + 1 : i + 3] != ["in", "law"]]
                hit = bool(at)
                possessed = any(i > 0 and words[i - 1] in _POSSESSIVES_EN for i in at)
            else:
                hit = rel in text
                possessed = any(p + rel in text for p in _POSSESSIVES_ZH)
            if hit and (possessed or not loose):
                found.add(entity)
                break
    found |= _called_so_by_the_children(words, text, aliases, found)
    return found | _named_through_another(words, text, aliases, found)


_KEYED = {r.key: r for r in RELATIONS}
_CHILDS_WORDS = tuple(
    (
        frozenset(_KEYED[grand].forms()),
        frozenset({*_KEYED[parent].words, *_KEYED[f"{parent}_in_law"].words, f"{parent} in law"}),
    )
    for grand, parent in (("grandfather", "father"), ("grandmother", "mother"))
)
"""A grandparent's words, and the words for the user's parent or parent-in-law whom the children call so."""
_CHILDREN = frozenset(f for key in ("child", "son", "daughter") for f in _KEYED[key].forms())


def _called_so_by_the_children(
    words: Sequence[str], text: str, aliases: Mapping[str, tuple[set[str], set[str]]], found: set[str]
) -> set[str]:
    """The user's parents or in-laws named by the children's word for them ("带女儿去找外公", "the kids… grandpa").

    Only beside a word for the children, and only when no grandparent of the user's own is among ``found``
    ("我爷爷以前是做什么的？" asks about the user's grandfather).
    """
    if not any(_says(form, words, text) for form in _CHILDREN):
        return set()
    out: set[str] = set()
    for grand, parents in _CHILDS_WORDS:
        if any(_says(form, words, text) for form in grand) and not any(aliases[e][1] & grand for e in found):
            out |= {e for e, (_, relations) in aliases.items() if relations & parents}
    return out


_THROUGH = tuple(
    (frozenset(_KEYED[named].forms()), frozenset(f for key in through for f in _KEYED[key].forms()))
    for named, through in (
        *((n, ("brother", "sister")) for n in ("nephew", "niece")),
        *((n, ("son", "daughter")) for n in ("grandson", "granddaughter", "grandchild")),
        ("cousin", ("aunt", "uncle")),
    )
)
"""A relative's words, and the words for the one they are named through: a niece is a sibling's daughter."""


def _named_through_another(
    words: Sequence[str], text: str, aliases: Mapping[str, tuple[set[str], set[str]]], found: set[str]
) -> set[str]:
    """The siblings for "my niece", the children for "my grandson": whom a relative is named through.

    Only when no one stored is called so: then the answer is in their facts ("The user's sister has a daughter").
    """
    out: set[str] = set()
    for named, through in _THROUGH:
        if any(_says(form, words, text) for form in named) and not any(aliases[e][1] & named for e in found):
            out |= {e for e, (_, relations) in aliases.items() if relations & through}
    return out


RELATION_NEAR = 0.72
"""Cosine (bundled encoder) from a pet name the user possesses to a relation word of a stored person above which
it names them: "hubby" is 0.81 to husband, "roomie" 0.75 to roommate, "wifey" 0.94 to wife, "kiddo" 0.81 to
kid; "my family" is 0.69 to parents, "my nanny" 0.69 to child, "my party" 0.47 to partner."""
_PET_NAME = re.compile(r"\b(?:my|our)\s+([a-z]{2,}(?:y|ie|ey|o))\b", re.IGNORECASE)
"""A possessed word with a diminutive ending ("my hubby", "our roomie", "my kiddo"), as pet names for people are
made; "my flatshare", "my friendship", "my tenant" end otherwise and are not looked up."""


def relatives_by_meaning(
    queries: Sequence[str], aliases: Mapping[str, tuple[set[str], set[str]]], embeddings: Any
) -> set[str]:
    """The people a pet name the relation vocabulary lacks names by its meaning ("my hubby": the husband)."""
    said = {m.group(1).casefold() for q in queries for m in _PET_NAME.finditer(_unaccented(q))} - _EN_PERSON_FORMS
    relations = sorted({r for _, rels in aliases.values() for r in rels if r.isascii() and " " not in r} - {PERSON})
    if not said or not relations:
        return set()
    words = sorted(said)
    matrix = TextVectors.of(embeddings).matrix([*words, *relations])
    near = matrix[: len(words)] @ matrix[len(words) :].T >= RELATION_NEAR
    named = {relations[j] for j in np.flatnonzero(near.any(axis=0))}
    return {e for e, (_, rels) in aliases.items() if rels & named}


def _says(form: str, words: Sequence[str], text: str) -> bool:
    """Whether a query says a relation word: a whole English word, or Chinese characters anywhere."""
    return form in words if form.isascii() else form in text


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
