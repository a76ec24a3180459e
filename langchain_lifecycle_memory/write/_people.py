"""Whose fact it is: an extracted fact about someone the user spoke of goes under that person, not the user.

A small model files "My sister Kasia lives in Wrocław" and, months later, "Kasia just moved to Poznań" as the
user's own city. The words say whose it is. The clause that holds the fact's value is read as the rule
extractor reads it: a relative ("my sister Kasia", "我女儿小满"), someone already spoken of by name ("Kasia
just moved…"), or a pronoun after either ("…, she plays viola"). The fact is re-filed under that person,
where a later move replaces the earlier one and the user's own city stays.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from langchain_lifecycle_memory.schema import Fact, is_self_entity, normalize_value
from langchain_lifecycle_memory.write._grounding import (
    NAME_ATTRIBUTE,
    about_someone_else,
    holding,
    relative_mentions,
    speaks_of_someone_else,
    value_said,
)
from langchain_lifecycle_memory.write._lexicon import CJK, EN_FUNCTION_WORDS, canonical_entity, romanize
from langchain_lifecycle_memory.write._rules import clause_subjects, shown
from langchain_lifecycle_memory.write._slot_identity import resolve_entity
from langchain_lifecycle_memory.write._subjects import EN_FIRST_PERSON, Subject

__all__ = ["as_known", "canonical_entity", "is_about", "named_person", "refile", "whose"]

_PART = re.compile(r"[,;，；、]")
_AS_SPEAKER = (
    (re.compile(r"\bthe user's\b", re.IGNORECASE), "my"),
    (re.compile(r"\bthe user\b", re.IGNORECASE), "I"),
    (re.compile(r"用户的"), "我的"),
    (re.compile(r"用户"), "我"),
)


def _first_person(clause: str) -> bool:
    return bool(EN_FIRST_PERSON.search(clause)) or "我" in clause


def _people_in(text: str, known: Iterable[str]) -> list[tuple[str, str | None]]:
    """``(clause, person)`` for each clause of ``text``; ``person``: who it is about, ``None`` for the speaker."""
    return [(shown(clause), _person(subject)) for _, clause, subject, _ in clause_subjects(text, "user", known)]


def _person(subject: Subject | None) -> str | None:
    return None if subject is None or is_self_entity(subject.entity) else subject.entity


def _first_stated(text: str, known: Iterable[str]) -> tuple[str, str | None]:
    """The first clause of ``text`` that states something of someone, and who (``None``: the speaker).

    Past any lead-in: "lol plot twist, my flatmate quit…" is about the flatmate.
    """
    clauses = list(clause_subjects(text, "user", known))
    first = clauses[0] if clauses else ("", "", None, False)
    _, clause, subject, _ = next((c for c in clauses if c[2] is not None), first)
    return shown(clause), _person(subject)


def as_known(facts: Sequence[Fact], known: Sequence[str]) -> list[Fact]:
    """``facts`` about someone else under the stored person they name, when one alone fits.

    "我爸又换手机了" comes back as ``father`` where ``father_周建国`` is stored: the same man, so a change he
    states can replace what was stored of him, with or without a slot.
    """
    return [
        f if is_self_entity(f.entity) else f.model_copy(update={"entity": resolve_entity(f.entity or "", known)[0]})
        for f in facts
    ]


def whose(fact: Fact, known: Iterable[str] = ()) -> str | None:
    """The person a user fact's own words are about (an entity id such as ``sister_kasia``), or ``None``.

    Only for facts filed under the user. A slot fact is read at the clause that holds its value; a statement
    (no value) at its own sentence. A clause that names the speaker too ("my wife and I moved") stays theirs,
    and so does a value that is the person ("my manager is Priya").
    """
    if not is_self_entity(fact.entity):
        return None
    known = list(known)
    clauses = _people_in(fact.evidence or "", known) if fact.value else []
    value = normalize_value(fact.value)
    held = [(c, p) for c, p in clauses if value in normalize_value(c)] or [
        (c, p)
        for c, p in clauses
        if value_said(fact.value, c)  # "Argentine tango teacher" for "改教 Argentine tango"
    ]
    if held:
        clause, person = held[0]
    else:  # a statement, or a value the words do not hold: the fact's own sentence
        text = fact.content
        for pattern, repl in _AS_SPEAKER:
            text = pattern.sub(repl, text)
        clause, person = _first_stated(text, known)
    if person is None and clause:  # "过年回家发现我爸周建国在用…": the relative is named inside the clause
        person = _named_inside(clause, fact.value, known)
    if person is None:
        return None
    if value and value in normalize_value(person.replace("_", " ")):
        # The value is the person: their name filed as the user's ("my brother Tomasz…" as user.name) is theirs;
        # any other slot of the user's that names them ("my manager is Priya") stays the user's.
        return person if NAME_ATTRIBUTE.search(fact.attribute or "") else None
    if held:  # the part that holds the value: "…, she plays viola", "…，上幼儿园大班" continue the person
        clause = holding(fact.value, _PART.split(clause)) or clause
    if not _first_person(clause):
        return person  # led by the person's name, by a pronoun, or continuing their clause
    # "my sister Kasia lives in…"; not "my manager is Priya", nor "my wife and I…"
    said = about_someone_else(fact.value, clause) if held else speaks_of_someone_else(clause)
    return person if said else None


def _named_inside(clause: str, value: str | None, known: list[str]) -> str | None:
    """The relative a clause names last before its value (a statement: first), read from that mention on."""
    at = clause.casefold().find(value.casefold()) if value else -1  # offsets in the clause itself
    mentions = [m for m in relative_mentions(clause) if m.start() > 0 and (at < 0 or m.start() <= at)]
    if not mentions:
        return None
    mention = mentions[-1] if value else mentions[0]  # a statement is about the first person it names
    return next(iter(_people_in(clause[mention.start() :], known)), ("", None))[1]


def refile(facts: Sequence[Fact], known: Iterable[str] = ()) -> list[Fact]:
    """``facts`` with each one about someone else under that person (``known``: entities already stored)."""
    people = list(dict.fromkeys(known))
    out = []
    for fact in facts:
        person = whose(fact, people)
        if person is not None:
            fact = fact.model_copy(update={"entity": person})
            people.append(person)
        elif fact.entity and not is_self_entity(fact.entity):
            people.append(fact.entity)
        out.append(fact)
    return out


_PERSON_EN = re.compile(
    r"^(?:(?:everything|anything|all)\s+)?(?:my\s+(?:[a-z-]+\s+){0,2})?"
    r"(?P<name>(?:[A-Z][\w'-]+)(?:\s+[A-Z][\w'-]+)?)\s*[.!]*$"
)
_PERSON_ZH = re.compile(
    r"^(?:关于)?(?P<name>(?!我)[\u4e00-\u9fff]{2,4}?)(?:的(?:一切|所有|全部|事情?|信息|资料))?[。！!]*$"
)


def named_person(topic: str) -> str | None:
    """The name a forget request is all about ("everything about Priya", "忘掉关于阿杰的一切"), else ``None``."""
    match = _PERSON_EN.match(topic) or _PERSON_ZH.match(topic)
    name = match.group("name") if match else None
    if name is None or name.casefold() in EN_FUNCTION_WORDS or (CJK.search(name) and romanize(name) == name):
        return None  # a Chinese word whose characters are not a given name's ("地址", "密码") names no one
    return name


def is_about(entity: str | None, content: str, name: str) -> bool:
    """Whether a record is about the person ``name``: filed under them, or its statement says their name."""
    parts = set() if is_self_entity(entity) else set(str(entity or "").casefold().split("_"))
    if {w.casefold() for w in name.split()} <= parts or romanize(name).casefold() in parts:
        return True
    if CJK.search(name):
        return name in content
    return re.search(rf"\b{re.escape(name)}\b", content) is not None
