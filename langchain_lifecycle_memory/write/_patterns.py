"""The rule extractor's pattern machinery: candidates, rules, shared pattern pieces, slot naming.

Slot names come from the sentence's structure (the noun of "my <noun> is", the verb of "I <verb> ...");
the tables live in ``_patterns_en.py`` / ``_patterns_zh.py``, the words in ``_lexicon.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from langchain_lifecycle_memory.vocabulary import AttributeSpec
from langchain_lifecycle_memory.write._lexicon import (
    EN_VERBS,
    NOUN_ATTRIBUTES,
    VERB_CONCEPTS,
    ZH_VERBS,
    alternation,
    concept_attribute,
    is_term,
    lookup,
)
from langchain_lifecycle_memory.write._slot_names import spec_named
from langchain_lifecycle_memory.write._values import BAD_START, EN_TRAILING
from langchain_lifecycle_memory.write._values import clean as _clean

__all__ = ["Candidate", "Rule", "apply", "clean_value", "en_rule", "zh_rule"]

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
    cardinality: str | None = None
    """``set`` / ``single`` when the construction says so (verbs of habit); the vocabulary wins."""
    concept: str | None = None
    """The verb concept the attribute came from, when it came from one (``use``, ``play``...)."""
    change: bool = False
    """A change statement ("switched to X", "改用X"): it replaces the value of the concept's slot."""


_Handler = Callable[[re.Match[str], bool, dict[str, AttributeSpec]], Iterator[Candidate]]


@dataclass(frozen=True)
class Rule:
    """A pattern plus how to turn its match into candidates."""

    pattern: re.Pattern[str]
    attribute: str = "?"
    """A fixed name; ``?``: lexicon look-up (within ``cats``); ``?n``: the noun group; ``?verb``: the verb's concept."""
    cats: tuple[str, ...] | None = None
    fallback: str | None = None
    priority: int = 60
    kind: str | None = None
    weak: bool = False
    cap: bool = False
    """The value must start with a capital letter (names, brands, places)."""
    handler: _Handler | None = None
    cardinality: str | None = None


def en_rule(pattern: str, attribute: str = "?", **kw: Any) -> Rule:
    return Rule(re.compile(pattern, re.IGNORECASE), attribute, **kw)


def zh_rule(pattern: str, attribute: str = "?", **kw: Any) -> Rule:
    return Rule(re.compile(pattern), attribute, **kw)


# ---- shared pattern pieces ------------------------------------------------------------------

ADV = (
    r"(?:(?:really|just|also|mostly|mainly|usually|always|often|still|now|currently|only|actually|absolutely|"
    r"totally|generally|normally|typically|definitely|basically|recently|finally|officially|sometimes|"
    r"occasionally|honestly|personally|primarily|exclusively|kind of|sort of|pretty much|even|all|both|too|"
    r"regularly|mostly|daily|then)\s+)*"
)
EN_I = r"\bI\s+" + ADV
IAM = r"\bI am\s+" + ADV
V = r"(?P<v>[^,;!?]+?)"
CONJ = r"and|but|because|while|when|if|since|so|though|although|which|who|as|whenever|until|unless|that|where"
E_CLAUSE = r"(?=\s*(?:$|[,;!?(\u2014]|[.:](?:\s|$)|\s-\s|\b(?:" + CONJ + r")\b))"
E_PREP = (
    r"(?=\s*(?:$|[,;!?(\u2014]|[.:](?:\s|$)|\s-\s|\b(?:"
    + CONJ
    + r"|every|each|on|in|at|before|after|with|for|during|from|to|by"
    r"|instead|now|these days|right now|most|almost|every day|anymore|any more|again|lately|nowadays"
    r"|once|twice|\d+ times)\b))"
)
ZADV = (
    r"(?:现在|目前|最近|平时|平常|一般|通常|经常|常常|一直|从小|每天|每周|每个月|每年|周末|早上|晚上|中午|下午|"
    r"上午|也|都|还|就|特别|非常|很|超|真的|比较|挺|又|已经|刚刚|刚|主要|基本上|基本|总是|老是|偶尔|有时候?|"
    r"这周|这个月|今年|这几天|自己|上班|在家|工作日|天天|常|最|去年|前年|上个月|上周|昨天|前天|今天|刚才|之前|以前|后来|"
    r"从此|早就|终于|暂时|每天晚上|每天早上|每晚|每周末|下班后|睡前"
    r"|每?(?:周|星期|礼拜)[一二三四五六日天]|每隔?[一两二三四五六七八九十几]?(?:天|周|个月|年)"  # 每周三, 每两周
    r"|(?:跟|和|同)[\u4e00-\u9fff]{1,4}?(?:一起)?(?=去)"  # who with: 跟同事去…
    r"|从[\u4e00-\u9fff]{1,6}?(?=搬|调|转|跳槽|回)"  # where from: 从深圳搬到了…
    r")*"
)
ZS = r"我(?:们家|们|家)?" + ZADV
ZV = r"\s*(?P<v>[^，,。！!？?；;、]+?)"
ZEND = r"\s*(?=$|[，,。！!？?；;、~～]|了|呢|啦|吧|哦)"


EN_VERB = alternation(EN_VERBS)
# A one-character verb that starts a longer word is no verb of habit ("打算", "开始", "看到", "说明").
_ZH_COMPOUND = (
    r"(?!(?<=打)[电工扫折针])"
    r"(?!车|算|扰|听|开|始|心|会|学|门|关|看|到|见|来|起|法|明|过|实|话|好|说|功|笑|惊|亏|苦|成|类|越|求|空|象|面|完|住|上|下)"
)
ZH_VERB = alternation(ZH_VERBS) + _ZH_COMPOUND


def en_concept(verb: str) -> str | None:
    """The concept of an English verb in any simple form ("plays", "playing", "played" -> ``play``)."""
    low = re.sub(r"\s+", " ", verb.casefold().strip())
    if low in EN_VERBS:
        return EN_VERBS[low]
    head, _, rest = low.partition(" ")
    for base in {head[:-3], head[:-3] + "e", head[:-1], head[:-2], head[:-3] + "y"}:
        key = f"{base} {rest}".strip()
        if base and key in EN_VERBS:
            return EN_VERBS[key]
    return None


def zh_concept(verb: str) -> str | None:
    return ZH_VERBS.get(verb.strip())


# ---- naming a slot ----------------------------------------------------------------------------

_NOUN_TRIM = re.compile(r"^(?:all-time|absolute|very|personal|current|new|top|own|usual)\s+")


def noun_attribute(noun: str, value: str, specs: dict[str, AttributeSpec], favorite: bool) -> str | None:
    """The attribute the noun of a copula names: vocabulary name, alias or Chinese name, else the noun itself."""
    noun = EN_TRAILING.sub("", _NOUN_TRIM.sub("", noun.strip().casefold())).strip()
    if noun in ("language", "programming language", "语言"):
        return "programming_language" if is_term("programming_language", value) else "native_language"
    named = NOUN_ATTRIBUTES.get(noun) or spec_named(noun, specs)
    if named and (not favorite or named.startswith("favorite_") or specs.get(named, _PREF).kind == "preference"):
        return named
    if re.fullmatch(r"[a-z][a-z\- ]{1,28}", noun) and len(noun.split()) <= 3:
        snake = re.sub(r"[\s\-]+", "_", noun)
    elif re.fullmatch(r"[\u4e00-\u9fff]{1,6}", noun):
        snake = noun
    else:
        return None
    return f"favorite_{snake}" if favorite else snake


_PREF = AttributeSpec("_", "", "", "preference")


_HEAD_EN = re.compile(r"^(?P<name>(?:[A-Z0-9][\w+#.'-]*\s+)+?)(?P<head>[a-z][a-z-]*(?: [a-z][a-z-]*)?)$")
_HEAD_ZH = re.compile(r"^(?P<name>[A-Za-z0-9][\w+#.' -]*?)\s*(?P<head>[\u4e00-\u9fff]{1,5})$")


def head_noun(value: str, specs: dict[str, AttributeSpec]) -> tuple[str, str] | None:
    """``(attribute, name)`` when a name is followed by a vocabulary noun: "Vim editor", "Vim 编辑器"."""
    m = _HEAD_EN.match(value.strip()) or _HEAD_ZH.match(value.strip())
    if m is None:
        return None
    attribute = spec_named(m.group("head"), specs)
    return (attribute, m.group("name").strip()) if attribute else None


def verb_slot(concept: str, value: str, specs: dict[str, AttributeSpec]) -> tuple[str | None, str, str | None]:
    """``(attribute, value, cardinality)`` for the object of a verb of ``concept``; no attribute: no fact."""
    if head := head_noun(value, specs):
        return head[0], head[1], None
    named = concept_attribute(concept, value)
    if named is None:
        return None, value, None
    return named[0], value, named[1] or None


# ---- evaluation -------------------------------------------------------------------------------


def _resolve(
    rule: Rule, m: re.Match[str], value: str, zh: bool, specs: dict[str, AttributeSpec]
) -> tuple[str | None, str, bool, str | None] | None:
    """``(attribute, value, weak, concept)`` for a match, or ``None`` to drop it."""
    code, groups = rule.attribute, m.groupdict()
    if not code.startswith("?"):
        return code, value, rule.weak, None
    if code == "?":
        if head := head_noun(value, specs):
            return head[0], head[1], rule.weak, None
        if found := lookup(value, rule.cats):
            return found[0], found[1], rule.weak, None
        return (rule.fallback, value, rule.weak, None) if rule.fallback else None
    if code in ("?n", "?fn"):
        if zh:
            value = owner(value)
        favorite = groups.get("f") not in (None, "main") or bool(re.search(r"最喜欢|最爱", m.group(0)))
        if _ADJECTIVE.fullmatch(value):
            return None  # "my job is stressful": an opinion, not a value
        attribute = noun_attribute(groups["n"], value, specs, favorite)
        return (attribute, value, False, None) if attribute else None
    if code == "?verb":
        concept = (zh_concept if zh else en_concept)(groups.get("verb") or "")
        if concept is None:
            return None
        attribute, value, _ = verb_slot(concept, value, specs)
        return (attribute, value, rule.weak, concept) if attribute else None
    msg = f"Unknown attribute code {code!r} in a rule."
    raise AssertionError(msg)


_ENDED_STATE = re.compile(
    r"(?:all |completely |finally )?(?:gone|over|cured|healed|resolved|cleared up|a thing of the past)", re.IGNORECASE
)
"""What a copula says of a thing that has ended: "my peanut allergy is gone" (not "history": a subject)."""


def _ended(noun: str, specs: dict[str, AttributeSpec], position: int) -> Candidate:
    """The end of what ``noun`` names.

    Its vocabulary head's value ("peanut allergy": ``allergy`` = peanut), or the slot holding the whole noun.
    """
    *modifiers, head = noun.split() or [""]
    attribute = spec_named(head, specs) if modifiers else None
    value = " ".join(modifiers) if attribute else noun
    return Candidate(attribute, value, 90, position, confidence=0.8, operation="retract")


_ADJECTIVE = re.compile(r"[a-z]+(?:ful|ous|ive|able|ible|ic|less|some|ing|ed)")


def owner(value: str) -> str:
    """The value without a trailing 的, or the maker before 的: "飞利浦的" -> "飞利浦", "LG 的 27 寸屏" -> "LG"."""
    if m := re.match(r"^([A-Za-z0-9][\w .+&-]*?)\s*的", value):
        return m.group(1)
    return value.removesuffix("的")


_SECOND_PERSON = re.compile(r"\b(?:you|your|yours)\b|你|您", re.IGNORECASE)


_EN_NOT_A_VALUE = re.compile(
    r"\b(?:this|that|these|those|it|them|him|her|us|me|myself|themselves)\b|"
    r"^(?:was|were|is|are|am|be|been|has|have|had|will|would|can|could|should|do|does|did|truly|really|so|quite|"
    r"pretty|super|totally|absolutely|great|good|bad|awesome|amazing|key|fine|ok|okay|important|nice|cool|hard|"
    r"tough|easy|fun|ready|done|over|worth|paying|going|coming|getting|down|little|together|again|alone|finally|"
    r"almost|completely|already|still|just|always|never|even|currently|ton|bunch|off)\b|(?-i:\bI\b)|"
    r"\b(?:what|how|why)\b|"
    r"\s(?:is|are|was|were|am|'s)\s",
    re.IGNORECASE,
)


def acceptable(value: str, zh: bool) -> bool:
    """A value worth keeping: not empty, not a pronoun or a clause, not about the listener, not a mood."""
    if not value or BAD_START.match(value) or len(value.split()) > 8 or len(value) > 60:
        return False
    if _SECOND_PERSON.search(value) or not zh and _EN_NOT_A_VALUE.search(value):
        return False
    return not (zh and (len(value) < 2 and not re.search(r"[A-Za-z0-9]", value) or value.endswith("的")))


def apply(rule: Rule, text: str, zh: bool, specs: dict[str, AttributeSpec]) -> Iterator[Candidate]:
    for m in rule.pattern.finditer(text):
        if rule.handler is not None:
            yield from rule.handler(m, zh, specs)
            continue
        value = _clean(m.group("v"), zh)
        if rule.attribute in ("?n", "?fn") and not zh and _ENDED_STATE.fullmatch(value):
            yield _ended(m.group("n"), specs, m.start("v"))  # "my peanut allergy is gone"
            continue
        if not acceptable(value, zh) or rule.cap and not value[:1].isupper():
            continue
        if zh and "的" in value and rule.attribute != "?n":
            continue
        resolved = _resolve(rule, m, value, zh, specs)
        if resolved is None:
            continue
        attribute, value, weak, concept = resolved
        cardinality = (
            None if attribute in specs else rule.cardinality or (concept and VERB_CONCEPTS[concept].cardinality)
        )
        kind = rule.kind or (VERB_CONCEPTS[concept].kind if concept and attribute not in specs else None)
        change, confidence = bool(m.groupdict().get("change")), 0.6 if weak or attribute is None else 0.75
        yield Candidate(attribute, value, rule.priority, m.start("v"), kind, confidence, "assert", weak, cardinality,
                        concept, change)  # fmt: skip
