"""Corrections and swaps: words that deny or replace a value the speaker holds, by naming it.

A denial ("I never said I live in Paris", "其实我不对花生过敏") ends only a value the speaker holds and names
in the denying part; the part after it that affirms something ("…，是对芒果过敏") says what holds instead.
A swap ("把氨氯地平换成了缬沙坦", "replaced the Corolla with a Tesla") ends the held value it names and puts
the other in its slot.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain_lifecycle_memory.schema import MemoryRecord, normalize_value
from langchain_lifecycle_memory.write._cardinality import same_value
from langchain_lifecycle_memory.write._change import split_parts
from langchain_lifecycle_memory.write._lexicon import says_whole, whole_words

__all__ = ["correction", "denial_rest", "denied_values", "meant_instead", "swapped_values"]

_CORRECTION = re.compile(
    r"\b(?:actually|in fact|that's wrong|that is wrong|not true|you got it wrong|you're wrong|wrong)\b"
    r"|其实|不对|错了|记错|搞错|弄错|说错|并不|并没",
    re.IGNORECASE,
)
"""Words that correct what was said or remembered: with them a plain negation denies it."""
_NEVER = re.compile(
    r"\bnever\b|\b(?:didn't|did not|don't|do not) (?:ever )?(?:say|said|tell|told)\b"
    r"|从来没有?|从没有?|从未|没有?[\u4e00-\u9fff]{1,4}过",
    re.IGNORECASE,
)
"""A denial on its own: never, never said it, "没…过" (never once)."""
_NEGATION = re.compile(
    r"\b(?:do|does|did)(?:n't| not) (?=\w)|\b(?:not|never) |n't\b|(?:从来|从)?(?:没有?|不|未)(?=[\u4e00-\u9fff])",
    re.IGNORECASE,
)
_CONTRAST = re.compile(r"^\s*(?:but|rather|instead|而是|是|但是|其实是)\s*", re.IGNORECASE)


def denied_values(
    text: str, entity: str, slots: Sequence[tuple[str, str, str]], reads: Callable[[str], list[tuple[str, str]]]
) -> list[tuple[str, str, int]]:
    """``(attribute, value, part index)`` of each value ``entity`` holds that a part of ``text`` denies.

    A part denies a value it names when it says "never" or corrects ("其实", "that's wrong") with a negation,
    or when, its negation taken out, it states that very value (``reads``: the slots and values a text states):
    "我对花生不过敏" denies the peanut allergy; "I don't like Paris" is no denial of living in Paris.
    """
    corrects = _NEVER.search(text) is not None or _CORRECTION.search(text) is not None
    out = []
    for index, part in enumerate(split_parts(text)):
        if not _NEGATION.search(part):
            continue
        held = [(a, v) for e, a, stored in slots if e == entity for v in (stored or "").split(", ")]
        named = [(a, v) for a, v in held if len(normalize_value(v)) >= 2 and says_whole(v, part)]
        if named and not corrects:
            stated = reads(_NEGATION.sub("", part))
            named = [(a, v) for a, v in named if any(a == b and same_value(v, w) for b, w in stated)]
        out += [(a, v, index) for a, v in named]
    return out


def denial_rest(text: str, index: int) -> str:
    """The parts of ``text`` after its denying part ``index``, without a leading contrast ("是对芒果过敏")."""
    rest = " ".join(p.strip() for p in split_parts(text)[index + 1 :] if p.strip())
    return _CONTRAST.sub("", rest)


_SWAP_ZH = re.compile(r"把(?P<old>[^，。,；;！!？?]{1,12}?)(?:换|改|调)(?:成|为)了?(?P<new>[^，。,；;！!？?]{1,16})")
_SWAP_EN = re.compile(
    r"\b(?:replaced|swapped|switched|traded) (?:out )?(?:my |the |our )?(?P<old>[^,.;!?]{1,40}?) "
    r"(?:for|with) (?:a |an |the |some )?(?P<new>[^,.;!?]{1,40})",
    re.IGNORECASE,
)


def swapped_values(
    text: str, entity: str, slots: Sequence[tuple[str, str, str]], clean: Callable[[str], str]
) -> list[tuple[str, str, str]]:
    """``(attribute, held value, new value)`` for each held value ``text`` says was swapped for another."""
    out = []
    for m in (*_SWAP_ZH.finditer(text), *_SWAP_EN.finditer(text)):
        old, new = m.group("old"), clean(m.group("new"))
        for holder, attribute, stored in slots:
            for value in (stored or "").split(", ") if holder == entity and new else ():
                if len(normalize_value(value)) >= 2 and (says_whole(value, old) or says_whole(old.strip(), value)):
                    out.append((attribute, value, new))
    return out


_MEANT_EN = re.compile(
    r"^(?:(?:sorry|oops|no|wait|actually|correction|my bad)\W+)*(?:I meant|I mean|make (?:that|it)\b)"
    r"|^(?:sorry|oops|no|wait|actually|correction|my bad)\W+(?:it's|it is|it was)",  # "it's a cat, not a dog" alone
    re.IGNORECASE,  # may be about anything in sight
)
_NOT = re.compile(r"\s+(?P<new>[^,;.!?]{1,40}?),?\s+not\s+(?P<old>[^,;.!?]{3,40}?)\W*$", re.IGNORECASE)
_MEANT_ZH = re.compile(
    r"(?:^|[，,])(?:应该)?是(?P<new>[^，,。！!？?]{1,12}?)[，,]?\s*(?:而)?不是(?P<old>[^，,。！!？?]{2,12}?)[。！!~～]*$"
    r"|(?:^|[，,])不是(?P<old2>[^，,。！!？?]{2,12}?)[，,]\s*(?:而)?是(?P<new2>[^，,。！!？?]{1,12}?)[。！!~～]*$"
)


def meant_instead(text: str) -> tuple[str, str] | None:
    """``(meant, said)`` of a correction by one word: "Sorry, I meant Tuesday, not Thursday", "是周二，不是周四".

    The words name no slot: what they correct is the statement that says the word they deny (:func:`correction`).
    """
    text = text.strip()
    if (lead := _MEANT_EN.search(text)) and (m := _NOT.match(text, lead.end())):
        return m.group("new").strip(), m.group("old").strip()
    if m := _MEANT_ZH.search(text):
        return (m.group("new") or m.group("new2")).strip(), (m.group("old") or m.group("old2")).strip()
    return None


def correction(held: Sequence[MemoryRecord], meant: str, said: str) -> tuple[MemoryRecord, dict[str, Any]] | None:
    """The latest of ``held`` that says the word ``said``, and its fields said with ``meant`` instead."""
    named = [r for r in held if says_whole(said, r.content) and not (r.value and says_whole(meant, r.value))]
    if not named:
        return None
    old = max(named, key=lambda r: r.updated_at)
    value = _corrected(old.value, said, meant) if old.value else None
    fields = {"content": _corrected(old.content, said, meant), "value": value, "valid_from": old.valid_from}
    return old, fields | {
        "entity": old.entity,
        "attribute": old.attribute,
        "kind": old.kind,
        "cardinality": old.cardinality,
    }


def _corrected(text: str, said: str, meant: str) -> str:
    return re.sub(whole_words(said), meant.replace("\\", r"\\"), text, flags=re.IGNORECASE)
