"""Slot identity and cardinality: which stored slot a new fact speaks about, and how many values it holds.

Entities match by name tokens when unique (``sister`` -> ``sister_linyue``); attributes by the vocabulary,
then stemmed name structure (``code_editor`` -> ``editor``), then embeddings, then one optional LLM call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

from cachetools import LRUCache
from langchain_core.runnables import Runnable

from langchain_lifecycle_memory.schema import PERSON, Fact, is_self_entity, normalize_value
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES, AttributeSpec, weekdays
from langchain_lifecycle_memory.write._lexicon import CJK, ZH_RELATIONS, chinese_spans, romanize, says_whole
from langchain_lifecycle_memory.write._slot_judge import Question, ask_judge, create_slot_judge
from langchain_lifecycle_memory.write._slot_names import (
    agent_and_field,
    attribute_relation,
    core,
    kin,
    modifies,
    same_head,
    stem,
    words,
)

__all__ = [
    "DEFAULT_SLOT_THRESHOLD", "STATEMENT_SLOT_THRESHOLD", "attribute_relation", "create_slot_judge",
    "decide_cardinality", "predicate", "renumbered", "resolve_facts", "same_value",
]  # fmt: skip

DEFAULT_SLOT_THRESHOLD = 0.68
"""Cosine (bundled USE encoder) above which two unrelated-looking attribute names are one slot."""
JUDGE_BAND = 0.45
"""Undecided pairs above this similarity are shown to the judge, when one is configured."""
STATEMENT_SLOT_THRESHOLD = 0.65
"""Cosine (bundled encoder) between a new fact's statement and a stored slot's current statement above which
a name that neither the vocabulary nor the names' structure relates is that slot ("expense_tracker" for
"bookkeeping_app": names 0.39, statements 0.67). Of 508 pairs of two slots of one entity in the development
files, none reaches 0.5 (``python benchmarks/slot_calibration.py``)."""
CARDINALITY_THRESHOLD = 0.75
"""Cosine (bundled encoder) from an attribute name outside the vocabulary to a vocabulary attribute (its name
and description) above which the name holds values as that attribute does: "spoken_language" 0.90 to
``language`` (a set), "side_project" 0.83 to ``project``; "pharmacy" is 0.70 to ``medication`` and is no set of
medicines. Higher than :data:`DEFAULT_SLOT_THRESHOLD`: a wrong set keeps a stale value current."""
CHANGE_SLOT_THRESHOLD = 0.45
"""As :data:`STATEMENT_SLOT_THRESHOLD`, when the new statement is worded as a change ("switched to", "现在"): it
replaces something, so a lower bar (``_change.DEFAULT_CHANGE_THRESHOLD``'s calibration:
two values of one slot have a median statement cosine of 0.56, 75 % reach 0.45)."""

UNRELATED_NAMES = 0.3
"""Names less alike than this (:func:`name_similarity`) share nothing the encoder sees: a statement about one is
no new value of the other unless it is worded as a change, however alike the statements ("practice_nights" /
"outrigger_club": names 0.25, "The user's outrigger club paddles on Monday evenings." / "The user paddles with
the Millrace Outrigger Club." 0.68: what they share is the topic, not the slot; ``python
benchmarks/slot_calibration.py`` prints both)."""
JOINT_NAME, JOINT_STATEMENT = 0.6, 0.55
"""Names at least this alike (:func:`name_similarity`) whose statements are at least this alike are one slot, below
:data:`STATEMENT_SLOT_THRESHOLD`: "mobile_device" and "phone" (names 0.67, statements 0.59). Pairs of two slots of
one entity in the development files never reach the statement bar alone (``python benchmarks/slot_calibration.py``)."""
_SET_CUE = re.compile(
    r"\b(?:also|too|as well|another|other|additionally|in addition|besides|both)\b|也|又|还(?!是|在|住)|另(?:外|一)",
    re.IGNORECASE,
)


_NAMES_THE_ONE = re.compile(
    r"(?:\b(?:my|our|his|her|their)|'s)\s+(?:[\w'-]+\s+){0,3}?(?:is|was)\b|的[^有，。,；;！!？?]{1,10}?(?:是|叫)",
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


# ---------------------------------------------------------------- entities


def _tokens(entity: str) -> frozenset[str]:
    return frozenset(words(entity)) - {PERSON}  # ``person_kevin`` is whoever Kevin turns out to be


def resolve_entity(entity: str, existing: Sequence[str]) -> tuple[str, list[str]]:
    """``(resolved name, ambiguous candidates)``; the name is kept when no unique match exists."""
    if entity in existing:
        return entity, []
    mine = _tokens(entity)
    if not mine or entity.casefold() == "user":
        return entity, []
    others = [x for x in existing if x.casefold() != "user"]
    if same := [x for x in others if x.casefold() == entity.casefold()]:
        return same[0], []
    matches = [x for x in others if mine <= _tokens(x) or _tokens(x) <= mine]
    if len(matches) == 1:
        match = matches[0]
        theirs = _tokens(match)
        # "sister_beth" into a stored "sister": only if no other stored sister has a name.
        if theirs < mine and any(theirs < _tokens(x) for x in others if x != match):
            return entity, []
        return match, []
    return entity, matches


# ---------------------------------------------------------------- resolution


class _Embedder:
    """Embeds slot names once per process (names repeat; encoding them per turn would dominate)."""

    _cache: LRUCache[tuple[int, str], list[float]] = LRUCache(maxsize=20_000)
    _owners: dict[int, Any] = {}  # the embedders cached, held so that no other object takes their id

    def __init__(self, embeddings: Any):
        self.embeddings = embeddings

    def vectors(self, texts: list[str]) -> list[list[float]]:
        key = id(self.embeddings)
        if key not in self._owners:
            if len(self._owners) >= 64:
                self._owners.clear()
                self._cache.clear()
            self._owners[key] = self.embeddings
        found = {t: self._cache.get((key, t)) for t in dict.fromkeys(texts)}
        if missing := [t for t, v in found.items() if v is None]:
            for t, v in zip(missing, self.embeddings.embed_documents(missing)):
                norm = sum(x * x for x in v) ** 0.5 or 1.0
                found[t] = self._cache[(key, t)] = [x / norm for x in v]
        return [found[t] for t in texts]  # type: ignore[misc]


def _texts(name: str, specs: dict[str, AttributeSpec]) -> list[str]:
    spec = specs.get(name)
    return [" ".join(words(name))] + ([spec.description, spec.zh] if spec else [])


def name_similarity(a: str, b: str, embedder: _Embedder, specs: dict[str, AttributeSpec]) -> float:
    """Best cosine between the two names (and their vocabulary descriptions and Chinese names: 电脑 meets laptop)."""
    ta, tb = _texts(a, specs), _texts(b, specs)
    vecs = embedder.vectors(ta + tb)
    va, vb = vecs[: len(ta)], vecs[len(ta) :]
    return max(sum(x * y for x, y in zip(u, v)) for u in va for v in vb)


def resolve_facts(
    facts: Sequence[Fact],
    catalogue: Sequence[dict[str, Any]],
    *,
    embeddings: Any = None,
    threshold: float | None = DEFAULT_SLOT_THRESHOLD,
    judge: Runnable | None = None,
    specs: Sequence[AttributeSpec] = DEFAULT_ATTRIBUTES,
    statements: Callable[[str], dict[str, str]] | None = None,
    changes: Callable[[str], bool] | None = None,
) -> list[Fact]:
    """Rename each fact's entity/attribute to the stored slot it means (``catalogue``), and decide its cardinality.

    ``statements(entity)``: the current statement of each of that entity's slots, for names that only the
    statements relate (:data:`STATEMENT_SLOT_THRESHOLD`). ``changes(content)``: whether a statement is worded
    as a change; a change replaces the value of the slot whose statement it is closest to, among names that
    share a word too (:data:`CHANGE_SLOT_THRESHOLD`).
    """
    spec_map = {s.name: s for s in specs}
    entities = list(dict.fromkeys(str(r["entity"]) for r in catalogue))
    by_entity: dict[str, dict[str, list[str]]] = {}
    values: dict[str, dict[str, list[str]]] = {}  # the live values of each entity's slots
    for r in catalogue:
        entity, attribute = str(r["entity"]), str(r["attribute"])
        by_entity.setdefault(entity, {}).setdefault(attribute, []).append(str(r.get("cardinality") or "single"))
        values.setdefault(entity, {}).setdefault(attribute, []).extend([str(r["value"])] if r.get("value") else [])
    embedder = _Embedder(embeddings) if embeddings is not None and threshold is not None else None
    out: list[Fact] = list(facts)
    questions: list[Question] = []
    for i, fact in enumerate(facts):
        if fact.slot is None:
            continue
        entity, ambiguous = resolve_entity(fact.entity or "", entities)
        if entity not in entities and not ambiguous:
            entity = _named_entity(fact.content, entity, entities)
        stored = list(by_entity.get(entity, {}))
        attribute, undecided = _resolve_attribute(
            fact.attribute or "", stored, spec_map, embedder, threshold, judge is not None
        )
        if attribute not in stored and stored and embedder is not None and statements is not None and not undecided:
            said_change = fact.switch or (changes is not None and changes(fact.content))
            changed = fact.operation == "assert" and said_change  # a retraction ends the slot its words name
            said = _Said(fact.content, entity, statements, values.get(entity, {}))
            attribute = _by_statement(said, attribute, stored, spec_map, embedder, changed=changed)
        out[i] = fact.model_copy(update={"entity": entity, "attribute": attribute})
        if judge is not None and (undecided or ambiguous):
            questions.append(Question(i, entity, attribute, undecided, ambiguous))
    if questions and judge is not None:
        out = ask_judge(judge, out, questions, catalogue)
    nearest = None
    if embedder is not None:
        nearest = partial(_nearest_spec, embedder=embedder, specs=spec_map, threshold=CARDINALITY_THRESHOLD)
    return _with_cardinality(out, catalogue, spec_map, nearest, changes, statements)


def _resolve_attribute(
    attribute: str,
    stored: list[str],
    specs: dict[str, AttributeSpec],
    embedder: _Embedder | None,
    threshold: float | None,
    has_judge: bool,
) -> tuple[str, list[str]]:
    if attribute in stored or not stored:
        return attribute, []
    relations = {b: attribute_relation(attribute, b, specs) for b in stored}
    if same := [b for b, rel in relations.items() if rel == "same"]:
        # Prefer the stored name closest in structure (most shared core tokens).
        return max(same, key=lambda b: len(core(b) & core(attribute))), []
    open_ = [b for b, rel in relations.items() if rel is None]
    if not open_ or embedder is None or threshold is None:
        return attribute, []
    scored = sorted(((name_similarity(attribute, b, embedder, specs), b) for b in open_), reverse=True)
    best_score, best = scored[0]
    if best_score >= threshold and not has_judge:
        return best, []
    undecided = [b for s, b in scored if s >= JUDGE_BAND][:3] if has_judge else []
    return attribute, undecided


_USER_WORDS = re.compile(r"\bthe user(?:'s)?\b|\buser's\b|用户的?|\b(?:his|her|their)\b", re.IGNORECASE)


def predicate(content: str, entity: str) -> str:
    """``content`` without the words that name its entity, which every statement about it shares.

    >>> predicate("The user's brother Felix is an airline mechanic.", "brother_felix")
    'is an airline mechanic.'
    """
    parts = [w for w in words(entity) if w not in ("user", "self")]
    names = [re.escape(w) for w in parts]
    pattern = _USER_WORDS.pattern + (r"|\b(?:" + "|".join(names) + r")\b" if names else "")
    if parts and CJK.search(content):  # "儿子小川用 iPad 上网课" for son_xiaochuan: the relation and the name
        said = sorted(_zh_words(parts) | _zh_names(content, parts), key=len, reverse=True)
        pattern += "".join(f"|{re.escape(w)}" for w in said)
    return " ".join(re.sub(pattern, " ", content, flags=re.IGNORECASE).split())


def _named_entity(content: str, entity: str, existing: Sequence[str]) -> str:
    """The one stored entity, known by a relation and a name, that ``content`` names in full; else ``entity``.

    A fact filed under "mil" whose statement says "the user's mother-in-law Ruth" is ``mother_in_law_ruth``.
    """
    if not content or is_self_entity(entity):
        return entity
    found = [x for x in existing if not is_self_entity(x) and _names(content, x)]
    return found[0] if len(found) == 1 else entity


def _names(content: str, entity: str) -> bool:
    """Whether ``content`` says every part (two at least) of an entity id: its relation and its name."""
    parts = [w for w in words(entity) if w != PERSON]
    if len(parts) < 2:
        return False
    said = set(words(content))
    if CJK.search(content):  # "用户的妹妹可可" names sister_keke
        said |= {w for w in parts if any(z in content for z in _zh_words([w]) | _zh_names(content, [w]))}
    return all(w in said for w in parts)


def _zh_words(parts: list[str]) -> set[str]:
    """The Chinese words of the relations among an entity id's parts (``son`` -> 儿子 and its colloquial forms)."""
    return {w for zh, (key, formal) in ZH_RELATIONS.items() if key in parts for w in (zh, formal)}


def _zh_names(content: str, parts: list[str]) -> set[str]:
    """The Chinese names in ``content`` that an id's romanised name spells ("可可" for ``daughter_keke``)."""
    return {w for w in chinese_spans(content) if romanize(w).casefold() in parts}


class _Said(NamedTuple):
    """A new statement about ``entity``, and what is stored about it: each slot's current statement and values."""

    content: str
    entity: str
    statements: Callable[[str], dict[str, str]]
    values: dict[str, list[str]]


def _by_statement(
    said: _Said,
    attribute: str,
    stored: list[str],
    specs: dict[str, AttributeSpec],
    embedder: _Embedder,
    *,
    changed: bool = False,
) -> str:
    """The stored slot whose current statement says what ``said.content`` says, among names nothing else relates.

    Names that share a word and their last one ("work_laptop" / "company_laptop") are candidates too; names that
    share only a modifier ("mortgage_rate" / "mortgage_payment") only for a statement worded as a change
    (``changed``: it is about some stored slot, a lower bar). A statement that names a slot's current value
    ("阿强的烧烤店在铁西区" beside "阿强开烧烤店") builds on that slot: it is not its new value. Below
    :data:`STATEMENT_SLOT_THRESHOLD`, names and statements that are both alike decide (:data:`JOINT_NAME`); a
    change whose statement is near none replaces the slot whose name is nearest its own, at :data:`JOINT_NAME`
    ("用户现在完全吃纯素" as ``dietary_preference`` replaces ``diet``: names 0.65, statements 0.25 across languages).
    """
    open_ = [
        b
        for b, rel in ((b, attribute_relation(attribute, b, specs)) for b in stored)
        if rel is None or (kin(attribute, b, specs) and (changed or same_head(attribute, b)))
    ]
    current = said.statements(said.entity) if open_ else {}
    builds_on = {b for b in open_ if any(says_whole(v, said.content) for v in said.values.get(b, ()))}
    candidates = [b for b in open_ if current.get(b) and (changed or b not in builds_on)]
    if not candidates:
        return attribute
    texts = [predicate(said.content, said.entity), *(predicate(current[b], said.entity) for b in candidates)]
    new, *old = embedder.vectors(texts)
    score, best = max((sum(x * y for x, y in zip(new, v)), b) for v, b in zip(old, candidates))
    if score >= (CHANGE_SLOT_THRESHOLD if changed else STATEMENT_SLOT_THRESHOLD):
        return best if changed or name_similarity(attribute, best, embedder, specs) >= UNRELATED_NAMES else attribute
    if changed:  # it replaces something: the stored name nearest its own, when no statement is near enough
        named, nearest = max((name_similarity(attribute, b, embedder, specs), b) for b in candidates)
        return nearest if named >= JOINT_NAME else attribute
    alike = score >= JOINT_STATEMENT and name_similarity(attribute, best, embedder, specs) >= JOINT_NAME
    return best if alike else attribute


def _nearest_spec(
    attribute: str, *, embedder: _Embedder, specs: dict[str, AttributeSpec], threshold: float
) -> AttributeSpec | None:
    """The vocabulary attribute closest to ``attribute`` by name and description, if it clears ``threshold``.

    Not the field an agent noun names: the user has one podiatrist, whatever the set of their foot problems; nor a
    noun that only qualifies the name's own (:func:`modifies`): one plant nursery, however many plants.
    """
    names = [name for name in specs if not (agent_and_field(attribute, name) or modifies(attribute, name))]
    score, name = max((name_similarity(attribute, name, embedder, specs), name) for name in names)
    return specs[name] if score >= threshold else None


def _with_cardinality(
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
