"""Slot names: an attribute name's words, stems and meaning-bearing core, and what names' structure says.

Whether two names are one slot by the vocabulary and their structure alone (``attribute_relation``), and
whether two compounds share their head or only a modifier.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from langchain_lifecycle_memory.vocabulary import AttributeSpec
from langchain_lifecycle_memory.write._lexicon import CJK, says_whole

_STOP = frozenset(
    "a an the of or and in at on to for with by they their them use used is are who what where which how that "
    "do does".split()
)


def words(name: str) -> list[str]:
    """``codeEditor`` / ``code_editor`` / ``code-editor`` → ``["code", "editor"]``."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w for w in re.split(r"[^0-9a-z\u3400-\u9fff]+", text.casefold()) if w]


def stem(word: str) -> str:
    """A light English stemmer, enough to match ``living``/``live``, ``allergies``/``allergy``."""
    if CJK.search(word):
        return word
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if len(word) > len(suffix) + 2 and word.endswith(suffix) and not word.endswith("ss"):
            word = word[: -len(suffix)] + repl
            break
    return word.rstrip("e") if len(word) > 3 else word


_QUALIFIERS = frozenset(
    stem(w)
    for w in (
        "current main primary preferred favorite favourite fav usual default present new my actual personal own "
        "daily regular name now latest today model brand make type kind"
    ).split()
)


def core(name: str) -> frozenset[str]:
    """The meaning-bearing stems of a slot name (qualifiers dropped unless nothing else is left)."""
    stems = [stem(w) for w in words(name) if w not in _STOP]
    kept = frozenset(s for s in stems if s not in _QUALIFIERS)
    return kept or frozenset(stems)


@lru_cache(maxsize=4096)
def _concept(name: str, description: str, zh: str, aliases: tuple[str, ...]) -> frozenset[str]:
    described = {stem(w) for text in (description, *aliases) for w in words(text) if w not in _STOP}
    return core(name) | described | ({zh} if zh else set())


def _spec_names(spec: AttributeSpec) -> tuple[str, ...]:
    """The words that name a vocabulary attribute: its name (also with spaces), its Chinese name, its aliases."""
    return (spec.name.replace("_", " "), spec.name, spec.zh, *spec.aliases)


def spec_named(noun: str, specs: dict[str, AttributeSpec]) -> str | None:
    """The vocabulary attribute a noun names (its name, an alias or its Chinese name), if any."""
    low = noun.casefold().strip()
    for spec in specs.values():
        if low in _spec_names(spec):
            return spec.name
    singular = low[:-1] if low.endswith("s") and not low.endswith("ss") else None
    return spec_named(singular, specs) if singular else None


def spec_said(spec: AttributeSpec | None, text: str) -> bool:
    """Whether ``text`` names the attribute (:func:`spec_named`'s words), plurals too: "my hobbies are…"."""
    if spec is None:
        return False
    stems = {stem(w) for w in words(text)}
    return any(n and (says_whole(n, text) or stem(n) in stems) for n in _spec_names(spec))


def concept(name: str, specs: dict[str, AttributeSpec]) -> frozenset[str]:
    """``core(name)`` plus the stems of its vocabulary description, aliases and Chinese name.

    A name the vocabulary knows (:func:`spec_named`: an alias, a Chinese name, a plural) means what its attribute
    means: "residence" (an alias of ``city``) is "home_city" too.
    """
    spec = specs.get(spec_named(name, specs) or "")
    if spec is None:
        return core(name)
    return core(name) | _concept(spec.name, spec.description, spec.zh, spec.aliases)


def attribute_relation(a: str, b: str, specs: dict[str, AttributeSpec]) -> str | None:
    """``"same"``, ``"different"`` or ``None`` (no evidence) from the vocabulary and the names' structure."""
    if a == b:
        return "same"
    if a in specs and b in specs:
        return "different"
    if sorted(re.findall(r"\d+", a)) != sorted(re.findall(r"\d+", b)):
        return "different"  # numbers in names tell instances apart: phone1 / phone2, child_1 / child_2
    if _zh_heads_differ(a, b) or agent_and_field(a, b) or agent_and_field(b, a):
        return "different"
    ca, cb = core(a), core(b)
    if ca == cb:
        return "same"
    ka, kb = concept(a, specs), concept(b, specs)
    if ca & cb:
        return "same" if (ca - cb) <= kb and (cb - ca) <= ka else "different"
    if ca <= kb or cb <= ka:
        return "same"
    return None


_AGENT = re.compile(r"(?:ist|ian|er|or)$")


def agent_and_field(a: str, b: str) -> bool:
    """``a`` names one who does what ``b`` names: "podiatrist" / "podiatry", "counselor" / "counseling".

    The person and the thing share a stem, so the names look alike to an encoder, yet a doctor is not the
    condition they treat: the user's podiatrist is no member of a set of foot problems.

    >>> agent_and_field("podiatrist", "podiatry"), agent_and_field("podiatrist", "foot_clinic")
    (True, False)
    """
    wa, wb = words(a), words(b)
    agent = _AGENT.search(wa[0]) if len(wa) == 1 == len(wb) else None
    root = wa[0][: agent.start()] if agent else ""
    return len(root) >= 4 and wb[0].startswith(root) and _AGENT.search(wb[0]) is None


def modifies(a: str, b: str) -> bool:
    """``b`` only qualifies what ``a`` names by another noun: "plant_nursery" is no plant, "pill_box" no pill.

    Names are head-last; a last word in the plural or a participle ("pet_names", "languages_spoken") still names
    ``b``'s things.

    >>> modifies("plant_nursery", "plant"), modifies("spoken_language", "language"), modifies("pet_names", "pet")
    (True, False, False)
    """
    wa, wb = words(a), words(b)
    if len(wa) < 2 or not wb or same_head(a, b) or re.search(r"(?:ed|en|s)$", wa[-1]):
        return False
    return stem(wb[-1]) in {stem(w) for w in wa[:-1]}


_ZH_NAME = re.compile(r"[\u3400-\u9fff]{3,}")


def _zh_heads_differ(a: str, b: str) -> bool:
    """Two Chinese compounds that share their modifier and end in heads with no character in common.

    The head comes last: "围棋教练" / "围棋协会" are a coach and a club. (A shared head says less: "房贷银行"
    and "按揭银行" are one bank.)
    """
    if not (_ZH_NAME.fullmatch(a) and _ZH_NAME.fullmatch(b)):
        return False
    shared = len(os.path.commonprefix([a, b]))
    return shared >= 2 and bool(a[shared:]) and bool(b[shared:]) and not set(a[shared:]) & set(b[shared:])


def same_head(a: str, b: str) -> bool:
    """Two English compound names that end in the same word ("company_laptop" / "work_laptop")."""
    wa, wb = words(a), words(b)
    return bool(wa and wb) and not CJK.search(a + b) and stem(wa[-1]) == stem(wb[-1])


def kin(a: str, b: str, specs: dict[str, AttributeSpec]) -> bool:
    """Names that share a meaning-bearing word and differ by another ("work_laptop" / "company_laptop").

    Two vocabulary slots, or two numbered instances, are never kin.
    """
    if a in specs and b in specs:
        return False
    return sorted(re.findall(r"\d+", a)) == sorted(re.findall(r"\d+", b)) and bool(core(a) & core(b))
