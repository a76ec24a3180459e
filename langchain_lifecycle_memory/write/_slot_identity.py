"""Slot identity: which stored slot a new fact speaks about (how many values it holds: ``_cardinality.py``).

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

from langchain_lifecycle_memory.schema import PERSON, Fact, is_self_entity
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES, AttributeSpec
from langchain_lifecycle_memory.write._cardinality import with_cardinality
from langchain_lifecycle_memory.write._grounding import filed_as_the_example, held_clause, number_for_words
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
    "DEFAULT_SLOT_THRESHOLD", "STATEMENT_SLOT_THRESHOLD", "attribute_relation", "create_slot_judge", "predicate",
    "resolve_entity", "resolve_facts",
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

NAMELESS_STATEMENT = 0.5
"""Cosine (bundled encoder) of statements above which a fact in the prompt's example slot, its value of the kind a
stored slot holds (``alike``), is that slot's new value: its name says nothing ("Ported my number over to Mint
Mobile…" as ``editor`` beside "My phone plan is with T-Mobile…": 0.55). No pair of two slots of one entity in the
development files reaches 0.5 (``python benchmarks/slot_calibration.py``)."""
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
    alike: float | None = None,
) -> list[Fact]:
    """Rename each fact's entity/attribute to the stored slot it means (``catalogue``), and decide its cardinality.

    ``statements(entity)``: the current statement of each of that entity's slots, for names that only the
    statements relate (:data:`STATEMENT_SLOT_THRESHOLD`). ``changes(content)``: whether a statement is worded
    as a change; a change replaces the value of the slot whose statement it is closest to, among names that
    share a word too (:data:`CHANGE_SLOT_THRESHOLD`). ``alike``: cosine of two values of one kind, which lets a
    slot named nearly as alike as the nearest name win when only its values are of the new value's kind.
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
        said = _Said(fact.content, entity, statements, values.get(entity, {}), fact.value or "", alike)
        attribute, undecided = _resolve_attribute(
            fact.attribute or "", stored, spec_map, embedder, threshold, judge is not None, said
        )
        if attribute not in stored and stored and embedder is not None and statements is not None and not undecided:
            said_change = fact.switch or (changes is not None and any(map(changes, (fact.content, _own_words(fact)))))
            changed = fact.operation == "assert" and said_change  # a retraction ends the slot its words name
            nameless = filed_as_the_example(fact)  # the prompt's example slot: its name says nothing of the value
            attribute = _by_statement(said, attribute, stored, spec_map, embedder, changed=changed, nameless=nameless)
        out[i] = fact.model_copy(update={"entity": entity, "attribute": attribute})
        if judge is not None and (undecided or ambiguous):
            questions.append(Question(i, entity, attribute, undecided, ambiguous))
    if questions and judge is not None:
        out = ask_judge(judge, out, questions, catalogue)
    nearest = None
    if embedder is not None:
        nearest = partial(_nearest_spec, embedder=embedder, specs=spec_map, threshold=CARDINALITY_THRESHOLD)
    return with_cardinality(out, catalogue, spec_map, nearest, changes, statements)


def _resolve_attribute(
    attribute: str,
    stored: list[str],
    specs: dict[str, AttributeSpec],
    embedder: _Embedder | None,
    threshold: float | None,
    has_judge: bool,
    said: _Said,
) -> tuple[str, list[str]]:
    if attribute in stored or not stored:
        return attribute, []
    relations = {b: attribute_relation(attribute, b, specs) for b in stored}
    if same := [b for b, rel in relations.items() if rel == "same"]:
        # Prefer the stored name closest in structure (most shared core tokens).
        return max(same, key=lambda b: len(core(b) & core(attribute))), []
    open_ = [b for b, rel in relations.items() if rel is None and _can_hold(said, b)]
    if not open_ or embedder is None or threshold is None:
        return attribute, []
    scored = sorted(((name_similarity(attribute, b, embedder, specs), b) for b in open_), reverse=True)
    best_score, best = scored[0]
    if best_score >= threshold and not has_judge:
        near = [b for s, b in scored[1:] if s >= JOINT_NAME]
        return (_of_its_kind(best, near, said, embedder) if near else best), []
    undecided = [b for s, b in scored if s >= JUDGE_BAND][:3] if has_judge else []
    return attribute, undecided


def _can_hold(said: _Said, name: str) -> bool:
    """Whether slot ``name`` can take the new value: a bare quantity is no new value of a slot that holds words.

    "年薪 33 万" beside ``job`` = 游戏原画 ("我是做游戏原画的，年薪大概 28 万") is a salary, named by the model's own
    name, not a new job (:func:`number_for_words`, which the update also checks).
    """
    return not number_for_words(said.value, said.values.get(name, []))


def _own_words(fact: Fact) -> str:
    """The clause of the user's words (``evidence``) that holds the fact's value; ``""`` without them.

    "These days I shoot at Foxhollow instead" says a change that the model's "The user shoots at Foxhollow." leaves
    out; another clause of the same message ("…, I also joined a choir") says nothing of this value.
    """
    return (held_clause(fact.value, fact.evidence) or "") if fact.evidence else ""


def _of_its_kind(best: str, near: list[str], said: _Said, embedder: _Embedder) -> str:
    """``best``, the nearest name, unless another slot's values are of the new value's kind and none of its own.

    The other slot's name must be alike enough for statements to decide (:data:`JOINT_NAME`). "泳队 = 海豚泳队" is
    nearer by name to 游泳教练 (0.72) than to 游泳俱乐部 (0.68): 周指导 is no swim club (values 0.09), 蓝鲸游泳俱乐部
    is (0.50); a change of club must not archive the coach.
    """
    if said.alike is None or _of_a_kind(said, best, embedder, unknown=True):
        return best
    kin = ((_nearest_value(said.value, said.values[b], embedder), b) for b in near if said.values.get(b))
    score, other = max(kin, default=(-1.0, best))
    return other if score >= said.alike else best


def _nearest_value(value: str, values: list[str], embedder: _Embedder) -> float:
    """Cosine from ``value`` to the nearest of a slot's live ``values`` (two of one kind at ``alike``)."""
    new, *old = embedder.vectors([value, *values])
    return max(_cos(new, v) for v in old)


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
    """A new statement about ``entity`` with its value, and what is stored about the entity.

    Each slot's current statement (``statements``) and live values; ``alike``: the cosine of two values of one kind.
    """

    content: str
    entity: str
    statements: Callable[[str], dict[str, str]] | None
    values: dict[str, list[str]]
    value: str = ""
    alike: float | None = None


def _by_statement(
    said: _Said,
    attribute: str,
    stored: list[str],
    specs: dict[str, AttributeSpec],
    embedder: _Embedder,
    *,
    changed: bool = False,
    nameless: bool = False,
) -> str:
    """The stored slot whose current statement says what ``said.content`` says, among names nothing else relates.

    Names that share a word and their last one ("work_laptop" / "company_laptop") are candidates too; names that
    share only a modifier ("mortgage_rate" / "mortgage_payment") only for a statement worded as a change
    (``changed``: it is about some stored slot, a lower bar). A statement that names a slot's current value
    ("阿强的烧烤店在铁西区" beside "阿强开烧烤店") builds on that slot: it is not its new value. Below
    :data:`STATEMENT_SLOT_THRESHOLD`, names and statements that are both alike decide (:data:`JOINT_NAME`), and so do
    statements alike without their values whose values are two of one kind (``said.alike``: "lives in Drammen, in a
    flat by the river" beside "lives in Lillehammer", 0.61 and 0.39 for names that share nothing); a
    change whose statement is near none replaces the slot whose name is nearest its own, at :data:`JOINT_NAME`
    ("用户现在完全吃纯素" as ``dietary_preference`` replaces ``diet``: names 0.65, statements 0.25 across languages).
    The nearest statement counts as near when it is near without the values of both (:func:`_frame`: "team lead
    at the warehouse is now Raúl" and "shift supervisor at the warehouse is Donna"), unless the new statement
    names the same kind of thing qualified otherwise (:func:`_keeps_qualifier`). A ``nameless`` fact (filed in the
    prompt's example slot, its value no editor) is placed by its statement and its kind of value alone.
    """
    open_ = [
        b
        for b, rel in ((b, attribute_relation(attribute, b, specs)) for b in stored)
        if (rel is None or (kin(attribute, b, specs) and (changed or same_head(attribute, b)))) and _can_hold(said, b)
    ]
    current = said.statements(said.entity) if open_ and said.statements is not None else {}
    builds_on = {b for b in open_ if any(says_whole(v, said.content) for v in said.values.get(b, ()))}
    candidates = [b for b in open_ if current.get(b) and (changed or b not in builds_on)]
    if not candidates:
        return attribute
    texts = [predicate(said.content, said.entity), *(predicate(current[b], said.entity) for b in candidates)]
    new, *old = embedder.vectors(texts)
    score, best = max((_cos(new, v), b) for v, b in zip(old, candidates))
    bare = -1.0  # the nearest statement, compared without the values ("lives in Spokane" / "lives in Boise")
    if attribute_relation(attribute, best, specs) is None and _keeps_qualifier(best, current[best], said.content):
        # Names tell a kin slot apart (work and personal phone), so only for names that nothing else relates.
        said_frame, best_frame = embedder.vectors(
            [_frame(texts[0], [said.value]), _frame(texts[1 + candidates.index(best)], said.values.get(best, []))]
        )
        bare = _cos(said_frame, best_frame)
    framed = max(score, bare)
    if nameless:  # "Joined Crunch Fitness…" as ``editor``: statements 0.63 and values 0.61 alike to the gym's
        return best if framed >= NAMELESS_STATEMENT and _of_a_kind(said, best, embedder) else attribute
    if framed >= (CHANGE_SLOT_THRESHOLD if changed else STATEMENT_SLOT_THRESHOLD):
        return best if changed or name_similarity(attribute, best, embedder, specs) >= UNRELATED_NAMES else attribute
    if changed:  # it replaces something: the stored name nearest its own, when no statement is near enough
        named, nearest = max((name_similarity(attribute, b, embedder, specs), b) for b in candidates)
        return nearest if named >= JOINT_NAME else attribute
    alike = score >= JOINT_STATEMENT and name_similarity(attribute, best, embedder, specs) >= JOINT_NAME
    return best if alike or (bare >= JOINT_STATEMENT and _of_a_kind(said, best, embedder)) else attribute


def _of_a_kind(said: _Said, name: str, embedder: _Embedder, *, unknown: bool = False) -> bool:
    """Whether the new value and one of slot ``name``'s live values are two of one kind (``said.alike``).

    ``unknown``: the answer when that cannot be told (no threshold, no new value, nothing held).
    """
    if said.alike is None or not said.value or not said.values.get(name):
        return unknown
    return _nearest_value(said.value, said.values[name], embedder) >= said.alike


def _keeps_qualifier(name: str, statement: str, new: str) -> bool:
    """Whether ``new``, naming the kind of thing slot ``name`` holds, qualifies it as ``statement`` does.

    "The user's personal phone is a Pixel" says "phone" without the "work" of ``work_phone``'s own statement:
    another phone. A statement that does not name the head at all ("team lead" for ``shift_supervisor``) is
    left to its meaning.
    """
    *modifiers, head = [stem(w) for w in words(name)] or [""]
    said_old, said_new = ({stem(w) for w in words(text)} for text in (statement, new))
    qualifiers = set(modifiers) & core(name) & said_old
    return head not in said_new or qualifiers <= said_new


def _cos(u: list[float], v: list[float]) -> float:
    return sum(x * y for x, y in zip(u, v))


def _frame(statement: str, values: Sequence[str]) -> str:
    """``statement`` without its values: what it says of its slot, whichever value ("lives in ." for any city).

    >>> _frame("lives in Spokane, in a house with a yard.", ["Spokane"])
    'lives in , in a house with a yard.'
    """
    for value in sorted((v for v in values if v), key=len, reverse=True):
        statement = re.sub(re.escape(value), " ", statement, flags=re.IGNORECASE)
    return " ".join(statement.split())


def _nearest_spec(
    attribute: str, *, embedder: _Embedder, specs: dict[str, AttributeSpec], threshold: float
) -> AttributeSpec | None:
    """The vocabulary attribute closest to ``attribute`` by name and description, if it clears ``threshold``.

    Not the field an agent noun names: the user has one podiatrist, whatever the set of their foot problems; nor a
    noun that only qualifies the name's own (:func:`modifies`): one plant nursery, however many plants. Below the
    threshold, a name of one word is the kind of the one vocabulary name that ends in it ("condition":
    ``medical_condition``, 0.63 alike by the encoder); a qualified one ("allergy_medication") narrows its kind.
    """
    names = [name for name in specs if not (agent_and_field(attribute, name) or modifies(attribute, name))]
    score, name = max((name_similarity(attribute, name, embedder, specs), name) for name in names)
    if score >= threshold:
        return specs[name]
    headed = [name for name in names if len(words(attribute)) == 1 and same_head(attribute, name)]
    return specs[headed[0]] if len(headed) == 1 else None
