"""Who a query is about: the people in the user's life by their names and relation words.

Entity focus keeps relatives' facts out of first-person questions, and the user's out of questions about others:
"my sister" is ``sister_maya``, 公公 the ``father_in_law``, "my hubby" the husband by meaning, "my niece" is found
through the sibling whose daughter she is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from langchain_lifecycle_memory.read.lexical import normalize_text, word_tokens
from langchain_lifecycle_memory.read.vectors import TextVectors
from langchain_lifecycle_memory.schema import PERSON, is_self_entity
from langchain_lifecycle_memory.vocabulary import DIMINUTIVES, RELATIONS

__all__ = ["RELATION_NEAR", "entity_aliases", "is_other_person", "query_entities", "relatives_by_meaning"]

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
            # an id written as a phrase, "老郑的女儿", is also said without 的 or with 家: "老郑女儿", "老郑家女儿"
            names |= {part, *(part.replace("的", x) for x in ("", "家") if "的" in part[1:-1])}
        elif "\u4e00" <= part <= "\u9fff":  # "阿旺" kept as ``nephew_旺``: the diminutive the id dropped
            names.update(prefix + part for prefix in DIMINUTIVES)
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
