"""Cardinality: whether a slot holds one value or a set, and whether a new value is one more or a replacement.

In order: the vocabulary (its attributes, then relation words of people one has many of), the extractor, the
stored slot, then the fact's own words ("also", "bought a", "持有", things on other days of the week); otherwise
single (a wrong set keeps a stale value current).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from langchain_lifecycle_memory.schema import Fact, MemoryRecord, MemoryStatus, normalize_value
from langchain_lifecycle_memory.vocabulary import RELATIONS, AttributeSpec, weekdays
from langchain_lifecycle_memory.write._change import names_a_successor
from langchain_lifecycle_memory.write._lexicon import CJK
from langchain_lifecycle_memory.write._slot_names import attribute_relation, same_head, stem, words

__all__ = [
    "DEFAULT_ALIKE_THRESHOLD", "alike", "decide_cardinality", "held_by", "holds_one_of", "kind_of", "renumbered",
    "rival_choices", "same_use", "same_value", "says_only", "set_cue", "with_cardinality",
]  # fmt: skip

_SET_CUE = re.compile(
    r"\b(?:also|too|as well|another|other|additionally|in addition|besides|both)\b|也|又|还(?!是|在|住)|另(?:外|一)",
    re.IGNORECASE,
)


_ONLY = re.compile(r"(?<!\bnot )\bonly\b|(?<![一两二三四五六七八九十几\d这那每])(?:只|仅)(?![要是])", re.IGNORECASE)
"""A restriction: "only", 只/仅 (not "not only", nor the measure word of "一只", nor 只要/只是)."""


def says_only(content: str, value: str | None) -> bool:
    """Whether ``content`` says its set holds only ``value``: a restriction before it, in its clause.

    "I'm only allergic to okra now" of okra; not "…only allergic to okra now, the lychee allergy is gone" of lychee.
    """
    found = _ONLY.search(content)
    at = content.casefold().find(str(value).casefold(), found.end()) if found and value else -1
    return at >= 0 and not re.search(r"[,;，；。.!?！？]", content[found.end() : at])  # type: ignore[union-attr]


_NAMES_THE_ONE = re.compile(
    r"(?:\b(?:my|our|his|her|their)|'s)\s+(?:[\w'-]+\s+){0,3}?(?:is|was)\b|的[^有了，。,；;！!？?]{1,10}?(?:是|叫)",
    re.IGNORECASE,
)
_CLASSIFIER = r"[一两几]\s*[台张个款只盆家辆部件把双套份门项本枚块]"
_HOLDS = re.compile(
    r"\b(?:ha(?:s|ve|d)\b(?!\s+(?:the|to|been|had|got)\b)|owns?|owned|holds?|held|bought|got|purchased"
    r"|subscribes?|subscribed|signed up|joined|pays? for|paid for|picked up|earned|collects?)\b"
    r"|\b(?!(?:is|was|has)\b)[a-z]+(?:s|ed)\s+an?\s+(?!(?:month|week|year|day|lot|bit|little|few)\b)"
    r"|持有|拥有|买了|入手|开通|订阅|办了|报了|报名|注册了|加入了|养了|种了|添了|有" + _CLASSIFIER + "|" + _CLASSIFIER,
    re.IGNORECASE,
)


def set_cue(text: str | None) -> bool:
    """Whether a statement adds to what is known ("also", "too", "另外", "也", "又"...)."""
    return bool(text and _SET_CUE.search(text))


def holds_one_of(text: str | None) -> bool:
    """Whether a statement says the subject has or got one more thing, not who fills a role.

    "has a monstera", "bought a used PS5", "subscribes to Apple TV+", "持有中信银行信用卡", "有一台破壁机" hold
    one of possibly many; "my dentist is Dr. Ruiz", "用户的私教是阿凯", "banks with Harborline" name the one.
    """
    return bool(text and _HOLDS.search(text) and not _NAMES_THE_ONE.search(text))


def _acronym_match(short: list[str], long: list[str]) -> bool:
    i = 0
    for token in short:
        if i < len(long) and token == long[i]:
            i += 1
            continue
        n = len(token)
        if n >= 2 and i + n <= len(long) and "".join(w[0] for w in long[i : i + n]) == token:
            i += n
            continue
        return False
    return i == len(long)


def same_value(a: str | None, b: str | None) -> bool:
    """One value in two spellings: case/width, spacing ("VSCode"), plurals, initials ("VS Code")."""
    na, nb = normalize_value(a), normalize_value(b)
    if na == nb:
        return True
    if not na or not nb:
        return False
    if re.sub(r"[\W_]+", "", na) == re.sub(r"[\W_]+", "", nb):
        return True
    wa, wb = words(a or ""), words(b or "")
    if [stem(w) for w in wa] == [stem(w) for w in wb]:
        return True
    short, long = (wa, wb) if len(wa) < len(wb) else (wb, wa)
    return len(short) < len(long) and _acronym_match(short, long)


def kind_of(held: str | None, ended: str | None) -> bool:
    """Whether a held value is a kind of what a retraction ends (its last words).

    "美式咖啡" and "两罐可乐" of 咖啡 and 可乐, "black coffee" of "coffee".
    """
    held, ended = normalize_value(held), normalize_value(ended)
    if not held or not ended:
        return False
    if CJK.search(ended):
        return held.endswith(ended)
    return held.split()[-len(ended.split()) :] == ended.split()


_HOLDING = re.compile(
    r"\s*(?:membership|subscription|account|card|plan|pass|contract|policy|lease)s?|的?(?:会员卡?|年卡|月卡|卡|账户|账号|套餐)",
    re.IGNORECASE,
)
"""What holds a thing, said after its name: "my Planet Fitness membership", "山姆会员"."""


def held_by(held: str | None, ended: str | None) -> bool:
    """Whether a retraction ends ``held`` by what holds it ("cancelled my Planet Fitness membership")."""
    held, ended = normalize_value(held), normalize_value(ended)
    return bool(held) and ended.startswith(held) and _HOLDING.fullmatch(ended[len(held) :]) is not None


def decide_cardinality(
    fact: Fact,
    attribute: str,
    stored: Sequence[str],
    specs: dict[str, AttributeSpec],
    nearest: Callable[[str], AttributeSpec | None] | None = None,
    *,
    values: Sequence[str | None] = (),
    replaces: Callable[[str], bool] | None = None,
    held: str | None = None,
) -> str:
    """Single- or set-valued, in order: vocabulary, extractor, stored slot, the fact's words, single.

    ``values``: the slot's live values; ``replaces(content)``: whether a statement is worded as a change. A name
    outside the vocabulary that holds another value takes a second one as a member when the statement says the
    user has one more such thing (:func:`holds_one_of`) and is not worded as a change.

    ``nearest(attribute)``: the vocabulary attribute a name means by embeddings ("spoken_language" holds a set
    like ``language``), consulted after the names' structure.
    """
    if fact.operation == "assert" and "set" in stored and any(same_value(v, fact.value) for v in values if v):
        return "set"  # a member said again ("仍在听《忽左忽右》") confirms it; the others stay beside it
    spec = specs.get(attribute) or next(
        (s for s in specs.values() if attribute_relation(attribute, s.name, specs) == "same"), None
    )
    if spec is not None:
        if spec.kind == "preference" and fact.operation == "assert" and set_cue(fact.content) and not fact.switch:
            return "set"  # "also into the Lex Fridman podcast": a taste held beside the others
        return spec.cardinality
    if _people_of_a_kind(attribute):  # "classmate", "neighbours", "同事": a second one is one more person…
        took_over = fact.switch or names_a_successor(fact.content) or _NAMES_THE_ONE.search(fact.content)
        return "single" if took_over and not set_cue(fact.content) else "set"  # …not "my new mentor", "my mentor is"
    if nearest is not None and (near := nearest(attribute)) is not None and near.cardinality == "set":
        return "set"  # a name that means a set-valued attribute; a single-valued one decides nothing alone
    if fact.cardinality:
        return fact.cardinality
    changes = replaces is not None and fact.operation == "assert" and replaces(fact.content)
    if "set" in stored and changes and not set_cue(fact.content):
        return "single"  # "现在开一条 J/24": a change ends the values a name outside the vocabulary held together
    if "set" in stored or set_cue(fact.content):
        return "set"
    another = values and fact.operation == "assert" and not any(same_value(v, fact.value) for v in values)
    if replaces is not None and another:
        # A second value stated as one more thing held ("bought a", "持有") and not as a change joins the first.
        # ``held``: the slot's current statement; "holds a CPR certificate" makes "passed the ham radio exam" one more.
        # A value that is a current one in a new state (:func:`_new_state`) is not one more.
        restates = any(_new_state(fact.value, v) for v in values if v)
        one_more = holds_one_of(fact.content) or holds_one_of(held) or _on_other_days(fact, held)
        adds = one_more and not fact.switch and not replaces(fact.content) and not restates
        return "set" if adds else "single"
    return "single"


_MANY = frozenset(w.casefold() for r in RELATIONS if not r.one for w in r.words)
"""The words of the relations one can have many of (vocabulary ``Relation.one``): classmates, neighbours, 同事."""


def _people_of_a_kind(attribute: str) -> bool:
    """Whether a slot's name is a relation one has many of ("classmate", "neighbours", "同事"), not a landlord."""
    name = attribute.casefold().replace("_", " ").strip()
    return name in _MANY or (name.endswith("s") and name[:-1] in _MANY)


_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def renumbered(value: str | None, current: str | None) -> bool:
    """Whether two values differ only in their numbers: "AIDA3" and "AIDA 2", "nifedipine 60 mg" and "… 30mg"."""
    new, old = normalize_value(str(value or "")), normalize_value(str(current or ""))
    shape = _NUMBER.sub("#", new).replace(" ", "")
    return (
        new != old
        and bool(_NUMBER.search(new))
        and shape == _NUMBER.sub("#", old).replace(" ", "")
        and any(ch.isalpha() for ch in shape)
    )


def _new_state(value: str | None, current: str) -> bool:
    """Whether ``value`` is the current one's thing in a new state, not one more thing.

    It extends its words (居留许可 -> 居留许可续到2027年), ends in the same word ("red sash" after "green sash") or
    differs only in its numbers (:func:`renumbered`).
    """
    new, old = normalize_value(str(value or "")), normalize_value(current)
    if old in new or renumbered(new, old):
        return True
    return len(words(new)) > 1 and len(words(old)) > 1 and same_head(new, old)


def _on_other_days(fact: Fact, held: str | None) -> bool:
    """Whether two things each recur on their own days of the week, so run side by side.

    "拉丁舞每周六上午" and "口才班周日下午" are both taken; on the same day one took the other's place. A value
    that is itself the day ("yoga on Mondays") decides nothing.
    """
    if held is None or weekdays(str(fact.value or "")):
        return False
    new, old = weekdays(fact.content), weekdays(held)
    return bool(new and old) and not new & old


def with_cardinality(
    facts: list[Fact],
    catalogue: Sequence[dict[str, Any]],
    specs: dict[str, AttributeSpec],
    nearest: Callable[[str], AttributeSpec | None] | None,
    replaces: Callable[[str], bool] | None,
    statements: Callable[[str], dict[str, str]] | None = None,
) -> list[Fact]:
    stored: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in catalogue:
        stored.setdefault((str(r["entity"]), str(r["attribute"])), []).append(r)
    values: dict[tuple[str, str], set[str]] = {}
    for f in facts:
        if f.slot is not None and f.operation == "assert":
            values.setdefault(f.slot, set()).add(normalize_value(f.value))
    out = []
    for f in facts:
        if f.slot is not None:
            rows = stored.get(f.slot, [])
            cards = [str(r.get("cardinality") or "single") for r in rows]
            live = [r.get("value") for r in rows if r.get("status") != "pending"]
            held = statements(f.slot[0]).get(f.slot[1]) if statements is not None and live else None
            card = decide_cardinality(f, f.slot[1], cards, specs, nearest, values=live, replaces=replaces, held=held)
            if card == "single" and len(values.get(f.slot, ())) > 1 and f.slot[1] not in specs:
                card = "set"  # two values of one slot stated together hold together
            f = f.model_copy(update={"cardinality": card})
        out.append(f)
    return out


DEFAULT_ALIKE_THRESHOLD = 0.35
"""Bundled encoder, values alone: Vim / VS Code 0.44 are alike; an editor and a drink (0.09-0.22) are not."""


def alike(embeddings: Any, value: str | None, members: Sequence[MemoryRecord], threshold: float) -> list[MemoryRecord]:
    """The members whose value is of the same kind as ``value`` (the values alone at least ``threshold`` alike)."""
    if not members or not value:
        return []
    vectors = np.asarray(embeddings.embed_documents([value, *(str(r.value) for r in members)]))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True).clip(1e-12)
    return [r for r, cos in zip(members, vectors[1:] @ vectors[0]) if cos >= threshold]


def rival_choices(
    record: MemoryRecord, held: Sequence[MemoryRecord], embeddings: Any, threshold: float | None
) -> list[MemoryRecord]:
    """The current values in ``held`` (another slot's) that ``record`` replaces as the same choice.

    A preference among alternatives (``replaces_alike``: "prefers = VS Code") and a slot of one kind ("editor =
    Neovim") hold one choice, whichever was said second: values of the same kind (:func:`alike`), both tastes,
    never facts of the user's life ("prefers Lisbon" is no new home city).
    """
    if threshold is None or not record.value or record.slot is None or record.kind != "preference":
        return []
    rivals = [
        r for r in held
        if r.kind == "preference" and r.status is MemoryStatus.ACTIVE and r.id != record.id and r.slot is not None
    ]  # fmt: skip
    return alike(embeddings, record.value, rivals, threshold)


_USE_END = re.compile(r"[,;，；。.!?！？]|\s(?:and|but|while|since|because)\s|[和但]", re.IGNORECASE)
_EN_USE = re.compile(r"^(?:for|to)\s+(.+)$", re.IGNORECASE)
_ZH_USE = re.compile(r"^(?:来|去)?([\u4e00-\u9fff]{2,})$")
_NOT_THE_USE = frozenset({"the", "a", "an", "my", "our", "their", "his", "her", "your", "user", "user's"})


def _use(content: str, value: str) -> frozenset[str]:
    """What ``content`` says ``value`` is used for: "for news" or "to edit my photos" right after it, in its clause.

    >>> sorted(_use("The user uses Lightroom for photos and Bitwarden for passwords.", "Lightroom"))
    ['photo']
    """
    at = content.casefold().find(value.casefold()) if value else -1
    if at < 0:
        return frozenset()
    rest = _USE_END.split(content[at + len(value) :], maxsplit=1)[0].strip()
    rest = re.sub(r"(?:了|的|now|these days|instead)\s*$", "", rest, flags=re.IGNORECASE).strip()
    if found := _ZH_USE.match(rest):
        return frozenset({found.group(1)})
    found = _EN_USE.match(rest)
    return frozenset(stem(w) for w in words(found.group(1)) if w not in _NOT_THE_USE) if found else frozenset()


def _shared_use(new: str, old: str) -> str:
    """The Chinese words two values of a set end with alike, a name before each ("背单词": 百词斩背单词, 扇贝背单词).

    The rule extractor keeps "用X背单词" whole when nothing marks where the name stops.
    """
    if not (CJK.search(new) and CJK.search(old)):
        return ""
    n = 0
    while n < min(len(new), len(old)) - 2 and new[-1 - n] == old[-1 - n]:
        n += 1
    return new[len(new) - n :] if n >= 2 and CJK.fullmatch(new[-1]) else ""


def same_use(new: MemoryRecord, old: MemoryRecord) -> bool | None:
    """Whether ``new`` and ``old``, two values of a set, are said to be for the same use (``None``: a use unsaid).

    "I switched to Inoreader for news" and "I use Feedly for news": one use, so the switch replaces Feedly
    whatever the encoder knows of either name; "…Bitwarden for passwords" is for another use and stays.
    """
    if not new.value or not old.value:
        return None
    if _shared_use(str(new.value), str(old.value)):
        return True
    mine, theirs = _use(new.content, str(new.value)), _use(old.content, str(old.value))
    return (mine == theirs) if mine and theirs else None
