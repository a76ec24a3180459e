"""Before an extracted fact archives a current value, it is checked against the words it came from.

The value must be in the words, the words must be about the fact's entity, and ``user.name`` changes only
where the user names themselves; a fact that fails is stored ``pending`` and nothing is archived.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_lifecycle_memory.schema import Fact, is_self_entity, normalize_value
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES
from langchain_lifecycle_memory.write._change import current_part
from langchain_lifecycle_memory.write._lexicon import (
    EN_FUNCTION_WORDS,
    EN_RELATIONS,
    ZH_MY,
    ZH_RELATIONS,
    alternation,
    lookup,
)

__all__ = [
    "AIMED_AT",
    "A_QUANTITY",
    "EXAMPLE_SLOT",
    "EXAMPLE_SLOT_TOPIC",
    "FILED_THRESHOLD",
    "NAME_ATTRIBUTE",
    "OWN_WORDS_LIMIT",
    "SAID_THRESHOLD",
    "SOMEONE_ELSE",
    "about_someone_else",
    "held_clause",
    "copied",
    "dropped_names",
    "filed_as_the_example",
    "grounded",
    "holding",
    "in_own_words",
    "mostly_said",
    "number_for_words",
    "relative_mentions",
    "retold",
    "speaks_of_someone_else",
    "value_said",
]

SOMEONE_ELSE = "what was said is about someone else"
A_QUANTITY = "a quantity, in a slot that holds none"
AIMED_AT = "what the user is working towards, not what they hold"
SAID_THRESHOLD = 0.15
"""Cosine (bundled encoder) below which an extracted statement is not in the turn it came from: a small
model's copy of the prompt's example ("The user now uses the VS Code editor."), from
``python benchmarks/said_calibration.py``."""

EXAMPLE_SLOT = "editor"
"""The slot of the extraction prompt's example answer (``_prompts._JSON_FORMAT``): a small model files there
what it cannot name ("Got an e-bike last month" as ``editor``)."""
EXAMPLE_SLOT_TOPIC = next(f"{a.name}: {a.description} ({a.zh})" for a in DEFAULT_ATTRIBUTES if a.name == EXAMPLE_SLOT)
FILED_THRESHOLD = 0.08
"""Cosine (bundled encoder) of a turn and :data:`EXAMPLE_SLOT_TOPIC` below which a fact filed in the example
slot, its value no known editor, is not about it. ``python benchmarks/said_calibration.py``: the development
turns with an editor fact reach 0.09 at least (8 turns); 88 % of the others stay below 0.08; the misfiled
turns seen ("Got an e-bike…", "华为 Mate 60") are at 0.03 and below."""

_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_EN_FORMS = alternation(EN_RELATIONS)
_RELATIVE_EN = re.compile(rf"\b(?:my|our)\s+(?:\w+\s+)?(?:{_EN_FORMS}|in-laws?|\w+-in-law)\b", re.IGNORECASE)
_RELATIVE_ZH = re.compile(ZH_MY + "(?:" + alternation(ZH_RELATIONS) + r"|表\w|堂\w)")
_NAMING = re.compile(
    r"\bmy name(?:'s| is)\b|\bcall me\b|\bi(?:'m| am) called\b|\bname(?:'s)? [A-Z]|我叫|我的名字|叫我|本人",
    re.IGNORECASE,
)
NAME_ATTRIBUTE = re.compile(r"(?:^|_)(?:name|nickname|first_name|full_name)$")


def value_said(value: str | None, evidence: str, share: float = 0.5) -> bool:
    """Whether ``value`` (or ``share`` of its words or characters) is in ``evidence``; no value: no."""
    return bool(value) and _value_said(str(value), evidence, share)


_TOKEN = re.compile(r"[\u3400-\u9fff]|[^\W\d_]{2,}|\d+")
"""A word that carries meaning: a Chinese character, a word of two letters or more, a number."""


def mostly_said(text: str, evidence: str, share: float = 0.5) -> bool:
    """Whether ``share`` of ``text``'s words (Chinese: characters) are in ``evidence``: a restatement of it."""
    said = normalize_value(evidence)
    tokens = _TOKEN.findall(normalize_value(text))
    return bool(tokens) and sum(t in said for t in tokens) >= share * len(tokens)


_SPEAKER = re.compile(r"用户的?|\bthe user(?:'s)?\b|\b(?:their|they)\b", re.IGNORECASE)


def copied(fact: Fact) -> bool:
    """Whether the fact's statement is the user's own words: a copy of (part of) the turn it came from."""
    return bool(fact.evidence) and normalize_value(fact.content) in normalize_value(str(fact.evidence))


def retold(fact: Fact) -> bool:
    """Whether the fact's statement is the user's words, the speaker named in the third person.

    "蔡教练调去肇庆了，现在带用户的是冯教练" from "蔡教练调去肇庆了，现在带我的是冯教练".
    """
    return bool(fact.evidence) and mostly_said(_SPEAKER.sub(" ", fact.content), str(fact.evidence), share=0.8)


def _value_said(value: str, evidence: str, share: float = 0.6) -> bool:
    said = normalize_value(evidence)
    value = normalize_value(value)
    if not value or value.replace(" ", "") in said.replace(" ", ""):
        return True
    if _CJK.search(value):
        chars = [c for c in value if _CJK.match(c)]
        return sum(c in said for c in chars) >= share * len(chars)
    words = _WORD.findall(value)
    # A word is said in full, cut short ("Mon/Wed/Fri" for Monday, Wednesday and Friday; "hep A" for hepatitis A)
    # or inflected ("bike" said as "biking", "skate" as "skating").
    short = _short_words(said)
    return bool(words) and sum(_word_said(w, said, short) for w in words) >= share * len(words)


_ENDINGS = ("s", "es", "d", "ed", "ing")


def _short_words(said: str) -> set[str]:
    """The words of ``said`` that a value's word may be a cut-short or inflected form of (:func:`_word_said`)."""
    return {w for w in _WORD.findall(said) if len(w) >= 3 and not w.isdigit() and w not in EN_FUNCTION_WORDS}


_SLOT_ZH = {a.name: a.zh for a in DEFAULT_ATTRIBUTES}
_APPOSITION = re.compile(r"[,，(（]")


def _head_said(value: str, evidence: str, attribute: str) -> bool:
    """Whether the head of ``value``, the kind of thing it names (its last word), is said or is its slot's name.

    A model names a kind the words never did: "奥数习题编辑" from "编一本奥数习题集", "zoning appeal attorney" from
    "a zoning appeal brief" (most of the value said, not its head). A one-character suffix ("审计员" for "改做审计"),
    the slot's own name ("raw vegan diet" as ``diet``) or a place after a comma ("Porto Alegre, Brazil") adds none;
    an English word may be said inflected or cut short ("teacher" in "I teach"), a Chinese one only as written.
    """
    said = normalize_value(evidence)
    first = _APPOSITION.split(normalize_value(value))[0].strip()
    slot = {*attribute.casefold().split("_"), _SLOT_ZH.get(attribute, "")} - {""}
    if not first or first.replace(" ", "") in said.replace(" ", ""):
        return True
    if _CJK.search(first):  # the last two characters, or all but the last, said together ("编" is no "编辑")
        chars, compact = "".join(_CJK.findall(first)), said.replace(" ", "")
        return len(chars) < 3 or chars[-2:] in compact or chars[-3:-1] in compact or any(chars[-2:] in n for n in slot)
    words = _WORD.findall(first)
    short = _short_words(said)
    return len(words) < 2 or _word_said(words[-1], said, short) or words[-1] in slot


def _word_said(word: str, said: str, short: set[str]) -> bool:
    """Whether ``word`` is in ``said``, or one of its ``short`` words is ``word`` cut short or inflected."""
    stem = word[:-1] if word.endswith("e") and len(word) >= 4 else word  # "bike" -> "bik" + "ing"
    return word in said or any(word.startswith(s) or _inflected(s, stem) for s in short)


def _inflected(form: str, stem: str) -> bool:
    """Whether ``form`` is ``stem`` inflected, its last letter doubled or not ("runn" + "ing", "bik" + "ing")."""
    rest = form[len(stem) :] if form.startswith(stem) else None
    return rest is not None and (rest in _ENDINGS or rest[:1] == stem[-1:] and rest[1:] in _ENDINGS)


_NAMES = re.compile(r"\s*(?:(?:'s name|'s)?\s*(?:is|was|:|called|named|是|叫|名叫)?)?\s*", re.IGNORECASE)
"""What may stand between a relative and the value that names them ("my manager is Priya", "我同事叫小林")."""
_CLAUSE = re.compile(r"[.;!?。；！？，,\n]")
_I_EN = re.compile(r"\b(?:I|me)\b")
_MY_EN = re.compile(r"\b(?:my|our)\b", re.IGNORECASE)
_I_ZH = re.compile(r"我")
_WE_EN = re.compile(r"\b(?:we|us)\b", re.IGNORECASE)
_THIRD = re.compile(r"\b(?:he|she|him|his|her|hers)\b|(?<!其)[他她]", re.IGNORECASE)
"""Someone spoken of: "he", "she", 他, 她 (not 其他, "other")."""


def about_someone_else(value: str, evidence: str, *, person_value: bool = True) -> bool:
    """Whether the clause that holds the value speaks of a relative or friend, not of the speaker.

    ``person_value``: the value may be the relative itself ("add my coworker Tomas as an emergency contact");
    never so for the user's own name ("my son Leo" does not name the user).
    """
    clause, where = _clause_at(value, evidence)
    relatives = [*_RELATIVE_EN.finditer(clause), *_RELATIVE_ZH.finditer(clause)]
    if person_value and any(m.start() <= where and _NAMES.fullmatch(clause[m.end() : where]) for m in relatives):
        return False
    return speaks_of_someone_else(clause)


def told_of_them(value: str, evidence: str) -> bool:
    """Whether the sentence that holds the value speaks of someone as "he" or "she", and never of the speaker.

    "小崔现在去开网约车了，她说比坐办公室自在" is about 小崔, though no relative is named; "my manager says I'm
    escalation lead now" is the speaker's own news.
    """
    sentence = holding(value, _SENTENCE.split(evidence)) or evidence
    speaker = (_I_EN, _MY_EN, _WE_EN, _I_ZH)
    return bool(_THIRD.search(sentence)) and not any(p.search(sentence) for p in speaker)


_AIMING = re.compile(
    r"\b(?:study|studying|train|training|prepare|preparing|apply|applying|applied|aim|aiming|hope|hoping|want|wanting"
    r"|plan|planning)\s+(?:to\s+(?:become|be)|for)(?:\s+(?:an?|the|my))?\s*$"
    r"|(?:备考|准备考|想考|考取|申请|想当|想成为|想做|目标是)(?:了|个|一个|一名)?$",
    re.IGNORECASE,
)
"""Words right before a value that say the user works towards it: "studying to become a", "在备考", "想当"."""


def aimed_at(value: str, evidence: str) -> bool:
    """Whether the words just before ``value`` in its clause say the user is working towards it, not holding it.

    "Studying to become a patent agent", "最近在备考一级注册结构工程师": a goal; "I'm a patent agent now" holds.
    """
    clause, where = _clause_at(value, evidence)
    return where > 0 and _AIMING.search(clause[:where]) is not None


def _clause_at(value: str, evidence: str) -> tuple[str, int]:
    """The clause that holds ``value`` (the whole words when none does), and where the value starts in it (-1)."""
    clause = held_clause(value, evidence) or evidence
    return clause, clause.casefold().find(value.casefold())


def held_clause(value: str | None, evidence: str) -> str | None:
    """The clause of ``evidence`` (cut at punctuation and line breaks) that holds ``value`` (:func:`holding`)."""
    return holding(value, _CLAUSE.split(evidence))


def holding(value: str | None, parts: Sequence[str]) -> str | None:
    """The part that holds ``value``: word for word, else the one sharing most of its words (Chinese: characters).

    The first wins a tie; ``None`` when no part shares any. "大三学生" is held by "我表妹今年大三".
    """
    if not value:
        return None
    wanted = normalize_value(value)
    if literal := next((p for p in parts if wanted in normalize_value(p)), None):
        return literal
    tokens = set(_TOKEN.findall(wanted))
    shared = [len(tokens & set(_TOKEN.findall(normalize_value(p)))) for p in parts]
    best = max(shared, default=0)
    return parts[shared.index(best)] if best else None


_LATIN_OR_NUMBER = re.compile(r"[A-Za-z][\w'-]*|\d+(?:[.,:]\d+)*")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")


def dropped_names(content: str, evidence: str) -> list[str]:
    """Names and numbers in ``evidence`` that ``content`` leaves out.

    A name is a capitalised word inside a sentence ("… the new manager is Priya Raman"), or any Latin word in
    Chinese ("新的 manager 叫 Priya"); "I was reorganized into the payments group." leaves out ``Priya``.
    """
    cjk = bool(_CJK.search(evidence))
    said = normalize_value(content)
    found = []
    for sentence in _SENTENCE.split(evidence):
        for i, word in enumerate(_LATIN_OR_NUMBER.findall(sentence)):
            named = word[0].isupper() and i > 0 and not re.match(r"I(?:'|$)", word)
            if (word[0].isdigit() or named or (cjk and len(word) > 1)) and normalize_value(word) not in said:
                found.append(word)
    return found


OWN_WORDS_LIMIT = 400
"""Longest turn (characters) kept as a fact's statement when the model's statement leaves out its names."""


def in_own_words(facts: list[Fact]) -> list[Fact]:
    """A model's one fact from a turn says it in the turn's words when its statement leaves out a name.

    The words of what holds now (:func:`current_part`): a name the turn says ended is left out on purpose.

    "I was reorganized into the payments group." for "Reorg 之后我被分到 payments 组了，新的 manager 叫 Priya
    Raman": what the model left out (a name, a number) is still in the block.
    """
    if len(facts) != 1 or not (f := facts[0]).evidence or len(f.evidence) > OWN_WORDS_LIMIT:
        return facts
    said = value_said(f.value, f.evidence) or mostly_said(f.content, f.evidence)  # not a copy of the prompt
    now = current_part(f.evidence)  # "quit being vegan, she's doing keto now": what ended is not what holds
    return [f.model_copy(update={"content": now})] if said and dropped_names(f.content, now) else facts


def relative_mentions(clause: str) -> list[re.Match[str]]:
    """Where ``clause`` names a relative or friend of the speaker ("my sister", "我老婆"), in order."""
    return sorted([*_RELATIVE_EN.finditer(clause), *_RELATIVE_ZH.finditer(clause)], key=lambda m: m.start())


def speaks_of_someone_else(clause: str) -> bool:
    """Whether ``clause`` names a relative or friend ("my sister", "我老婆") and not the speaker as well.

    The speaker is in it as "I"/"me", or as the owner of something that is not a person ("my emergency
    contacts are my sister Noor", "我的车是…"): "my sister" alone makes it about the sister.
    """
    if not (_RELATIVE_EN.search(clause) or _RELATIVE_ZH.search(clause)):
        return False
    own = any(_RELATIVE_EN.match(clause, m.start()) is None for m in _MY_EN.finditer(clause))
    own_zh = any(_RELATIVE_ZH.match(clause, m.start()) is None for m in _I_ZH.finditer(clause))
    return not (_I_EN.search(clause) or own or own_zh)


def grounded(fact: Fact, *, opening: bool = False) -> str | None:
    """Why ``fact`` may not replace a stored value, or with ``opening`` fill an empty slot (``None``: it may).

    Opening a slot asks less: half the value's words said (a model may normalise "吃素" to 素食), and a name
    from an introduction ("Hi, I'm Marek"); only a change of name needs the user to name themselves.
    """
    evidence = fact.evidence
    if not evidence or fact.value is None:
        return None
    if not _value_said(fact.value, evidence, 0.5 if opening else 0.6):
        return f"the value {fact.value!r} is not in what was said"
    if not opening and not _head_said(fact.value, evidence, fact.attribute or ""):
        return f"the kind of thing {fact.value!r} names is not in what was said"
    self_fact = is_self_entity(fact.entity)
    name = bool(NAME_ATTRIBUTE.search(fact.attribute or ""))
    if self_fact and (
        about_someone_else(fact.value, evidence, person_value=not name) or told_of_them(fact.value, evidence)
    ):
        return SOMEONE_ELSE
    if not opening and aimed_at(fact.value, evidence):  # a goal fills an empty slot, never replaces a held value
        return AIMED_AT
    if self_fact and name and not opening and not _NAMING.search(evidence):
        return "a name changes only where the user names themselves"
    return None


_QUANTITY = re.compile(r"[$¥€£]?\s*\d[\d,.]*\s*[^\d\s,.]?")
"""A bare number with at most one mark of its unit or size: "4850", "33 万", "2400m", "$2,600", "85k" (not "42 bus",
"470 双人艇", "极氪001": names that hold a number)."""


def number_for_words(value: str | None, held: Sequence[str | None]) -> bool:
    """Whether ``value`` is a bare quantity for a slot whose current values have no digit at all.

    A slot holds one kind of thing: "年薪 33 万" filed under ``job`` (游戏原画) is a salary the model misfiled, not a
    new job, and must not archive the job. The other way round stays possible ("job = 4850" corrected by a job).
    """
    words = [v for v in held if v]
    quantity = bool(value) and _QUANTITY.fullmatch(str(value).strip()) is not None
    return quantity and bool(words) and not any(c.isdigit() for v in words for c in v)


def filed_as_the_example(fact: Fact) -> bool:
    """Whether ``fact`` is in the prompt's example slot with a value no lexicon knows as one (check its words)."""
    return fact.attribute == EXAMPLE_SLOT and bool(fact.evidence) and lookup(fact.value or "", [EXAMPLE_SLOT]) is None
