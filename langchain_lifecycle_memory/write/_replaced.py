"""What a statement worded as a change replaces: the live statement it is about, or a slot's value it ends.

"I closed my Harborline account", "Dr. Okafor retired", "I quit smoking", "signed up at Anytime Fitness
instead", "We called off the move": :func:`superseded_by_change` picks the one live record a change replaces,
by what the change names, the slot it ends, or how close its words are (``_change.py`` reads the wording).
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES
from langchain_lifecycle_memory.write._change import (
    AGAIN,
    CJK_CHAR,
    CJK_WORD,
    CLAUSE,
    ENDED,
    FUNCTION,
    GONE,
    KEPT_WORDS,
    LATIN,
    PART,
    ZH_NO_LONGER,
    change_parts,
    is_name,
    named_things,
    proper_names,
    restates_a_measure,
    restates_a_number,
    split_parts,
    states_a_change,
)
from langchain_lifecycle_memory.write._lexicon import ZH_MEASURE, alternation, says_whole
from langchain_lifecycle_memory.write._slot_names import stem, words

__all__ = ["entity_of", "restates_held", "superseded_by_change"]

_ENDS = re.compile(ENDED, re.IGNORECASE)
_DURABLE = frozenset({"fact", "preference", "profile"})
_SPECS = {spec.name: spec for spec in DEFAULT_ATTRIBUTES}
_ZH_FUNCTION = re.compile(
    r"[的了是在也都很就还又吧啊呢呀嘛哦我你他她它们这那个一不没有和跟把被给到去来说要会能想用得过]"
)


def _zh_pairs(text: str) -> set[str]:
    """Two Chinese characters side by side, neither a function word's: "台铃", "大行" name something."""
    runs = CJK_WORD.findall(_ZH_FUNCTION.sub(" ", text.replace("用户", " ")))
    return {run[i : i + 2] for run in runs for i in range(len(run) - 1)}


def _new_names(text: str, alike: bool) -> set[str]:
    """The names in the parts of ``text`` that do not end something: what it says holds instead.

    "quit Fitness First and signed up at Anytime Fitness" names Anytime Fitness. A capitalized first word
    ("Nowadays I hike…") or a run of Chinese characters may be a name only in words ``alike`` (as close as a
    change's threshold) to what they would replace: "现在每天早上跑五公里" and "我换了个发型" name no new car or
    phone, and "我不玩手游了" ends a habit.
    """
    kept = " ".join(part for part in split_parts(text) if not GONE.search(part))
    if alike:
        return proper_names(kept)
    return {m.group().casefold() for m in LATIN.finditer(kept) if is_name(m.group()) and not _starts(kept, m.start())}


def _starts(text: str, index: int) -> bool:
    """Whether a sentence starts at ``index`` of ``text``: a capitalized word there is no name."""
    return _SENTENCE_START.search(text[:index]) is not None


_SENTENCE_START = re.compile(r"(?:^|(?<!\b[A-Z][a-z])(?<!\b[A-Z][a-z]{2})[.!?]\s+)$")
"""What comes before a sentence's first word: nothing, or its end mark. Not a title's dot ("Dr. Ferreira")."""


def _word_named(value: str, text: str) -> bool:
    """Whether ``text`` names a word of ``value`` that names something, in any case.

    A Chinese word whole ("那台华为给我妈用了" names "华为Mate 60"), or a capitalized word ("sold the bambino"
    names "Breville Bambino").
    """
    if any(word in text for word in CJK_WORD.findall(value)):
        return True
    said = {w.casefold() for w in LATIN.findall(text)}
    return any(w[0].isupper() and len(w) > 3 and w.casefold() in said for w in LATIN.findall(value))


def _ends_value(value: str, text: str) -> bool:
    """Whether a clause of ``text`` that ends something names ``value`` whole ("my flatmate quit being vegan")."""
    return any(GONE.search(p) and says_whole(value, p) for p in _clause_parts(text))


def _clause_parts(text: str) -> list[str]:
    """Every part of every clause of ``text`` (:func:`split_parts` within sentences and dashes)."""
    return [p for clause in CLAUSE.split(text) for p in PART.split(clause)[::2]]


_NEGATION = frozenset({"doesn't", "don't", "didn't", "isn't", "aren't", "never", "now", "longer", "more"})
_HAVE = {"has": "have", "had": "have", "having": "have", "have": "have"}
_OBJECT_PRONOUNS = frozenset({"it", "them", "that", "this", "those", "these", "one", "ones"})
_ZH_SPEAKER = re.compile(r"用户|现在|如今|已经|再也")  # 不 and 了 go with the function characters


_FOR_THE_SPEAKER = re.compile(r"\b(?:for|to|with) (?:me|us|them)\b", re.IGNORECASE)
"""Whom an ending is for ("no more dog walking for me", restated "…for them"): the speaker, not what ends."""
_GRAMMAR = (FUNCTION | _NEGATION | {"do", "does", "did", "got", "after", "i'm", "we're"}) - set(_HAVE)


def _ends_its_words(old: str, text: str, *, ending: re.Pattern[str] = _ENDS, least: int = 2) -> bool:
    """Whether a part of ``text`` that ends something says nothing but what ``old`` says.

    "The user no longer has a cat." beside "The user has a cat named Pumpkin.", "用户现在不养猫了" beside
    "用户养了一只猫，叫南瓜": the cat goes, though the ending does not name it. Its verb included ("I no longer
    have a bike" does not end "works at a bike shop"), and at least one English word of three letters, or
    ``least`` Chinese characters, beyond grammar and the words of ending (``ending``, in English).
    """
    said_old = {_HAVE.get(w, stem(w)) for w in map(str.casefold, LATIN.findall(old))}
    for part in _clause_parts(text):
        if not (GONE.search(part) or ZH_NO_LONGER.search(part)):
            continue
        if CJK_CHAR.search(part):
            chars = set(CJK_CHAR.findall(_ZH_FUNCTION.sub("", _ZH_SPEAKER.sub("", _ENDS.sub("", part)))))
            if len(chars) >= least and chars <= set(old):
                return True
            continue
        said = {w.casefold() for w in LATIN.findall(ending.sub(" ", _FOR_THE_SPEAKER.sub(" ", part)))}
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
    return stem(head[0]) in {stem(w.casefold()) for w in LATIN.findall(text)}


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


_MOVED = re.compile(
    r"\b(?:moved|shifted|switched|changed|transferred|rescheduled|pushed)\s+(?P<what>(?:the|my|our|his|her|their)"
    r"\s+[^,.;!?]+?)\s+(?:over\s+|back\s+)?to\b",
    re.IGNORECASE,
)
_ZH_MOVED = re.compile(r"把(?P<what>[^，,。！？!?把]{1,10}?)(?:改|换|搬|挪|调|转|移)(?:到|成|去)")
_WHO_MOVES = frozenset({"family", "household", "kids", "children", "everyone", "everything", "stuff", "things"})
_ZH_WHO_MOVES = ("家", "我们", "孩子")
"""What moves with the person: moving it is moving house ("moved the whole family to Lahti", "把家搬到嘉兴");
moving anyone else ("moved my parents to Lahti") is not."""


OBJECT_OF_SLOT = 0.15
"""Cosine (bundled encoder) of what a change moved and a slot's statement at or above which the change is about
that slot: "vehicle coverage" and "The user's pickup is insured with Allstate." 0.29, "gym membership" and "The
user goes to PureGym." 0.20; "team standup", "book club", "office", "parents", "savings" and "The user lives in
Tampere." 0.08 at most."""


def _moves_another(text: str, old: MemoryRecord, related: Callable[[str, str], float] | None = None) -> bool:
    """Whether ``text`` moves something it names that is not ``old``'s: "moved the team standup to Thursdays".

    A change that says what it moved changes that thing, not the slot beside it (the user's city). What moves
    with the person (their family, their things), names the slot or its value ("switched my gym to…") or means
    what its statement holds (``related``: "switched my vehicle coverage over to…" for a pickup's insurer) is the
    slot's.
    """
    moved = [m["what"] for pattern in (_MOVED, _ZH_MOVED) for m in pattern.finditer(text)]
    return any(
        not _the_slots(what, old) and (related is None or related(what, old.content) < OBJECT_OF_SLOT) for what in moved
    )


def _the_slots(what: str, old: MemoryRecord) -> bool:
    """Whether ``what`` a change moved is the person's household or names ``old``'s slot or value."""
    spec = _SPECS.get(old.attribute or "")
    if CJK_CHAR.search(what):
        return (
            any(w in what for w in _ZH_WHO_MOVES)
            or bool(spec and spec.zh and spec.zh in what)
            or (str(old.value) in what)
        )
    own = {stem(w) for w in words(old.attribute or "")}
    if spec is not None:
        own |= {stem(w) for noun in (spec.description.split()[0], *spec.aliases) for w in words(noun)}
    said = [w.casefold() for w in LATIN.findall(what)]
    return bool({stem(w) for w in said} & own or set(said) & _WHO_MOVES) or _word_named(str(old.value), what)


def entity_of(record: MemoryRecord) -> str:
    """Whom ``record`` is about: its entity, the user when it has none (words kept for the user's facts)."""
    return record.entity or "user"


def _changed_again(new: MemoryRecord, similar: Sequence[tuple[MemoryRecord, float]]) -> MemoryRecord | None:
    """The latest live statement of the change ``new`` says was made again ("又调了" after "调去西宁了")."""
    if (m := AGAIN.search(new.content)) is None:
        return None
    verb = (m.group(1) or m.group(2)).casefold()
    same = [
        old
        for old, _ in similar
        if old.id != new.id and old.slot is None and old.kind in _DURABLE and entity_of(old) == entity_of(new)
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
    related: Callable[[str, str], float] | None = None,
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
        related: Cosine of two texts, for what a change says it moved (:func:`_moves_another`).

    Returns:
        The most similar durable statement of the same entity that has no slot; a slot's value only
        when ``new`` has no slot and names that value ("Dr. Okafor retired"), ends the slot it names
        ("I quit smoking" ends ``smoke``), or names something else for a single-valued slot ("signed up at
        Anytime Fitness instead" for ``gym``), at least as close as ``named``; a plan not started yet when
        ``new`` calls it off in its own words (:func:`_calls_off`), among all of ``similar``.
    """
    if not (states_a_change(new.content) or said):  # ``said``: the words ended something, whatever now holds
        return None
    if (again := _changed_again(new, similar)) is not None:
        return again
    if new.slot is None:  # a plan called off by its own words, however the encoder ranks the two
        plans = (old for old, _ in similar if old.slot is not None and entity_of(old) == entity_of(new))
        if (plan := next((old for old in plans if _calls_off(old, new)), None)) is not None:
            return plan
        # "…, no more tackle shop!" in news of a new job: an ending in nothing but a remark's words ends it
        remarks = (old for old, _ in similar if old.slot is None and old.id != new.id and _durable_of(old, new))
        if (remark := next((old for old in remarks if _ends_its_words(old.content, new.content)), None)) is not None:
            return remark
    names = named_things(new.content) | (named_things(said) if said else set())
    pairs = _zh_pairs(new.content)
    new_names = {alike: _new_names(new.content, alike) for alike in (False, True)}
    for old, score in similar:
        if score < min(threshold, named):
            return None
        if old.id == new.id or not _durable_of(old, new):
            continue
        if old.slot is not None:  # a slot's value goes when the change names it, ends its slot, or names another
            named_value = names & named_things(str(old.value)) or _word_named(str(old.value), said or new.content)
            named_value = (
                named_value or _ends_value(str(old.value), new.content) or _ends_its_words(old.content, new.content)
            )
            ends = _ends_slot(new.content, old.attribute) or _changes_slot(new.content, old.attribute)
            # "signed up at Anytime Fitness instead" beside "gym: Fitness First": a new name for the one it holds
            renamed = (
                another
                and old.cardinality == "single"
                and bool(new_names[score >= threshold] - named_things(old.content))
                and not _moves_another(new.content, old, related)
            )
            if new.slot is None and (named_value or ends or renamed):
                return old
        elif (
            score >= threshold
            or names & named_things(old.content, first=False)
            or pairs & _zh_pairs(old.content)
            or restates_a_measure(new.content, old.content)
        ) and not _names_its_place(new.content, old.content):
            return old
    return None


def _durable_of(old: MemoryRecord, new: MemoryRecord) -> bool:
    """Whether ``old`` is a lasting statement (or words kept for the facts they state) of ``new``'s entity."""
    return bool(old.kind in _DURABLE or old.metadata.get(KEPT_WORDS)) and entity_of(old) == entity_of(new)


def _calls_off(plan: MemoryRecord, new: MemoryRecord) -> bool:
    """Whether ``new`` ends ``plan``, a change that has not started yet, by a word of the change itself.

    "We called off the move" / "Our move fell through" / "我们不搬了" before "The user is moving to Ålesund in
    May": the plan is off though the words do not name where it was going. Every word of the ending beyond
    grammar is the plan's (:func:`_ends_its_words`, its verb of ending left out; "我不上夜班了" does not call
    off "下个月搬到上海").
    """
    return plan.valid_from > new.valid_from and _ends_its_words(plan.content, new.content, ending=GONE, least=1)


_ZH_PLACE = re.compile(r"[店馆铺房厅厂院所站室场园校司行部吧]")
"""The last character of a Chinese place named after what it sells or does: 包子铺, 面包房, 咖啡馆, 驾校."""


def _names_its_place(text: str, old: str) -> bool:
    """Whether a Chinese ending in ``text`` shares with ``old`` only the start of a place's name there.

    "我现在不吃包子了" and "我周末在包子铺帮忙": 包子 is, in the remark, the bun shop, which the ending does not
    name. Every run of two or more characters the two share is followed in ``old`` by a place's last character
    the ending does not have; "包子铺那边我不去帮忙了" shares 帮忙 and ends the help.
    """
    for ending in (m.group() for p in change_parts(text) for m in ZH_NO_LONGER.finditer(p)):
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
            and CJK_WORD.fullmatch(phrase[start : start + size])
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
