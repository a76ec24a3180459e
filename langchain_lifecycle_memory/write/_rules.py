"""Rule-based fact extraction for Chinese and English: no model, deterministic, conservative.

First-person statements (or about "my sister Maya" / "我老婆小芳") run through the pattern tables in
``_patterns_en.py`` / ``_patterns_zh.py``; questions, hypotheticals and requests yield nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial

from langchain_lifecycle_memory.schema import Fact, local_time, normalize_value, utcnow
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES, AttributeSpec
from langchain_lifecycle_memory.write._cardinality import same_value
from langchain_lifecycle_memory.write._change import current_part, states_an_end
from langchain_lifecycle_memory.write._dates import absolute_dates, resolve_ttl_days, resolve_valid_from
from langchain_lifecycle_memory.write._denial import denial_rest, denied_values, swapped_values
from langchain_lifecycle_memory.write._lexicon import (
    VERB_CONCEPTS,
    ZH_TOPIC_VERBS,
    is_condition,
    is_language,
)
from langchain_lifecycle_memory.write._patterns import CONJ, Candidate, apply, clean_value
from langchain_lifecycle_memory.write._patterns_en import EN_APPOSITIVE, EN_RULES
from langchain_lifecycle_memory.write._patterns_zh import ZH_APPOSITIVE, ZH_RULES
from langchain_lifecycle_memory.write._restate import en_rewrite, kept_as_said, zh_rewrite
from langchain_lifecycle_memory.write._subjects import (
    EN_FIRST_PERSON,
    EN_INTRO,
    ZH_PERSON,
    Subject,
    clause_subject,
    names_a_condition,
)
from langchain_lifecycle_memory.write.redaction import Redactor

__all__ = ["clause_subjects", "extract_rule_facts", "shown", "statements"]

_CJK = re.compile(r"[\u3400-\u9fff]")
_SPACE_BY_CJK = re.compile(
    r"(?<=[\u3400-\u9fff\u3000-\u303f\uff00-\uffef])\s+|\s+(?=[\u3400-\u9fff\u3000-\u303f\uff00-\uffef])"
)
_SPLIT = re.compile(r"(?<=[。！？!?；;\n])|(?<=\.)(?=\s|$)")
_QUESTION_EN = re.compile(
    r"^(?:what|which|who|whom|whose|when|where|why|how)\b|^(?:do|does|did|can|could|should|would|will|is|are|am"
    r"|was|were|shall|may|might)\s+(?:i|you|he|she|it|we|they|there|this|that|these|those|my|your|his|her|our"
    r"|their|the|(?-i:[A-Z])\w*)\b",
    re.IGNORECASE,
)
"""A question without its "?": a question word, or an auxiliary before its subject ("did you see…"); an
auxiliary before an object is the speaker's, its "I" dropped ("did a pottery course…")."""
# Hypotheticals and requests to the assistant state no fact ("帮我挑点我爱喝的", "forget my email").
_NOT_A_STATEMENT = re.compile(
    r"^(?:if|suppose|imagine|maybe|perhaps|what if|I wonder|I wish|forget|delete|remove|tell me|give me|"
    r"show me|help me|find me|recommend|let's|let me know)\b|"
    r"^(?:如果|假如|要是|假设|也许|可能|我想知道|帮我|帮忙|给我|告诉我|忘掉|忘记|删除|删掉|推荐|查一下|搜一下|你)",
    re.IGNORECASE,
)
_REDACTOR = Redactor(mode="keep", keep_originals=True)
_PII_ATTRIBUTES = {
    "email": "email",
    "cn_id": "id_number",
    "cn_mobile": "phone",
    "phone": "phone",
    "bank_card": "bank_card",
}


# A full stop that ends no sentence (a title: "Dr. Okafor") and a comma that separates no clause
# (digit groups: "$1,450") are hidden from the patterns while they run, and given back in the facts.
_TITLE_DOT = re.compile(
    r"\b(Dr|Mr|Mrs|Ms|Mx|Prof|St|Mt|Jr|Sr|Capt|Lt|Col|Gen|Sgt|Rev|Fr|No|vs|approx)\.(?=\s)", re.IGNORECASE
)
_DIGIT_COMMA = re.compile(r"(?<=\d),(?=\d{3}\b)")
_HIDDEN = str.maketrans({"\u2024": ".", "\u066c": ","})


def shown(text: str) -> str:
    """``text`` with the full stops and commas hidden from the patterns given back."""
    return text.translate(_HIDDEN)


def _shown(fact: Fact) -> Fact:
    fields = {
        k: v.translate(_HIDDEN)
        for k in ("value", "content", "evidence")
        if isinstance(v := getattr(fact, k, None), str)
    }
    return fact.model_copy(update=fields) if fields else fact


_EN_FIRST = re.compile(r"(?:I|I'm|I've|My|We|We're|Our)\s+[A-Za-z]")


def _chinese_frame(sentence: str) -> bool:
    """Whether a sentence is built in Chinese: "我每个月 grocery budget 是 600 dollars" is, "I'm learning 手语" not."""
    if sentence.lstrip().startswith("我"):  # the subject decides: "我哥哥 Felix 是 airline mechanic"
        return True
    if _EN_FIRST.match(sentence.lstrip()):  # and in English: "I love 酸辣粉, 每周都得吃一次"
        return False
    if re.search(r"[，,；;]\s*我", sentence):  # a later clause's: "入职 Quillfeather 了，我的 mentor 是…"
        return True
    chars = len(_CJK.findall(sentence))
    return chars > 0 and chars / 1.5 > len(re.findall(r"[A-Za-z]+(?:'[a-z]+)?", sentence))


_EN_CLAUSE_BREAK = re.compile(
    r"\s*;\s*|,?\s+(?:and|but|while|plus|so|whereas)\s+(?=(?:I|I'm|I've|I'd|my|we|we're|our)\b)"
    r"|,\s+(?=I\b|my\b|(?:she|he)\s|(?:they|it|there|that)(?:'[a-z]+)?\s)",
)
_ZH_TOPIC = r"[\u4e00-\u9fff]{1,5}" + ZH_TOPIC_VERBS + "的是"
"""A clause of topic and comment ("，手机用的是 X"): its subject is the sentence's."""
_ZH_CLAUSE_BREAK = re.compile(r"[，,；;]\s*(?=我|也|还|又|而且|并且|同时|另外|[她他](?![们的])|" + _ZH_TOPIC + ")")
_ZH_ELIDED = re.compile(r"^(?:而且|并且|同时|另外)?(?=也|还|又)|^(?=" + _ZH_TOPIC + ")")


def _clauses(sentence: str, zh: bool) -> list[str]:
    """One statement each ("I live in Berlin and I'm allergic to peanuts"); "…，也喜欢下棋" gets its "我" back."""
    parts = [p for p in (_ZH_CLAUSE_BREAK if zh else _EN_CLAUSE_BREAK).split(sentence) if p and p.strip()]
    if len(parts) < 2:
        return [sentence]
    if not zh:
        return parts
    about_speaker = parts[0].startswith("我") and not ZH_PERSON.match(parts[0])
    out = [parts[0]]
    for part in parts[1:]:
        if _ZH_ELIDED.match(part) and not part.startswith("我"):
            if not about_speaker:
                out[-1] += "，" + part
                continue
            part = "我" + _ZH_ELIDED.sub("", part)
        out.append(part)
    return out


_COORD = re.compile(r"\s*(?:,\s*and\s+|,\s*|、|和|跟|以及|及|\band\s+|&\s*)")
_AND = re.compile(r"\band\b|&|和|跟|及")
"""A conjunction that joins a list (a comma or 、 may only separate its items)."""
_CLAUSE_END = re.compile(r"[。.!?！？;；\n]")
_PLACED = re.compile(r"\s+(?:at|with|on|in|for|from|by|during|since|every)\s", re.IGNORECASE)
"""Where a member's own circumstances begin, in a list joined by "and" ("Tamil at home and Hakka with my grandma")."""
_KIND_OF_MEMBER = {"language": lambda v: is_language(v) or v[:1].isupper(), "medical_condition": is_condition}
"""Members of these sets are the same kind of thing as the first: "psoriasis on my elbows and knees" lists no knees."""
_LEADS_A_CLAUSE = re.compile(rf"(?:{CONJ})\b", re.IGNORECASE)


def _members(candidate: Candidate, text: str, zh: bool, specs: dict[str, AttributeSpec]) -> list[str]:
    """The values of a coordinated list for a set-valued slot ("peanuts and shellfish")."""
    spec = specs.get(candidate.attribute or "")
    cardinality = spec.cardinality if spec else candidate.cardinality
    if cardinality != "set" or candidate.operation != "assert":
        return [candidate.value]
    tail = text[candidate.position :]
    tail = tail[: m.start()] if (m := _CLAUSE_END.search(tail)) else tail
    if not normalize_value(tail).startswith(normalize_value(candidate.value)):
        tail = candidate.value
    tail = re.split(r"(?:也|还|都|又)*过敏|\s+(?:too|as well|also)\b", tail)[0]
    pieces = re.split(f"({_COORD.pattern})", tail)  # items, each followed by its separator
    joined = [bool(_AND.search(sep)) for sep in pieces[1::2]]
    parts = []
    for i, part in enumerate(clean_value(p, zh) for p in pieces[::2]):
        if any(joined[max(0, i - 1) : i + 1]):  # "Tamil at home and Hakka with my grandma": by "and", not a comma
            part = clean_value(_PLACED.split(part)[0], zh)
        clause = re.search(r"\b(?:is|are|was|were|am|has|have)\b", part) or _LEADS_A_CLAUSE.match(part)
        if not part or len(part.split()) > 4 or clause or re.match(r"(?:I|my|we|it|this|that|you|我)\b", part, re.I):
            break  # the list ends where a clause begins ("aerial yoga, it's a great way to ...", "rosacea, so …")
        if parts and not _KIND_OF_MEMBER.get(candidate.attribute or "", bool)(part):
            break
        parts.append(part)
    if len(parts) < 2 or not normalize_value(candidate.value).startswith(normalize_value(parts[0])):
        return [candidate.value]
    if not any(_AND.search(sep) or "、" in sep for sep in pieces[1 : 2 * len(parts) - 1 : 2]):
        # No conjunction between the members kept: "shellfish, shrimp especially" is no list, nor "kiwi now, the
        # peanut and shellfish allergies are gone" (its "and" joins a clause)
        return [candidate.value]
    return list(dict.fromkeys(parts))


def _not_a_statement(sentence: str, zh: bool) -> bool:
    body = sentence.rstrip("。.!！~～ ")
    if body.endswith(("?", "？")) or _NOT_A_STATEMENT.search(body.removeprefix("请") if zh else EN_INTRO.sub("", body)):
        return True
    if zh:  # questions, and suggestions to the assistant ("…给我讲个笑话吧")
        return bool(re.search(r"(?:吗|呢|么|嘛|没有|吧)$", body))
    return bool(_QUESTION_EN.search(EN_INTRO.sub("", body)))


def clause_subjects(
    text: str, speaker_entity: str = "user", known: Iterable[str] = ()
) -> Iterator[tuple[str, str, Subject | None, bool]]:
    """``(sentence, clause, subject or None, zh)`` for every clause of every statement in ``text``.

    ``known``: entities already spoken of (``sister_maya``); a clause led by one's name is about them.
    """
    people = {e.rsplit("_", 1)[-1]: e for e in known if "_" in e}
    last: Subject | None = None  # the person the clause before was about, if not the speaker
    text = _DIGIT_COMMA.sub("\u066c", _TITLE_DOT.sub("\\1\u2024", text))  # hidden from the patterns, see _HIDDEN
    for sentence in filter(None, map(str.strip, _SPLIT.split(text))):
        zh = _chinese_frame(sentence)
        if _not_a_statement(sentence, zh):  # no statement, but a pronoun after it means the person it names
            asked = clause_subject(sentence, zh, speaker_entity, people, last)  # "Tomasz sold the Subaru?? he…"
            last = asked if asked is not None and asked.entity != speaker_entity else last
            continue
        for clause in _clauses(sentence, zh):
            subject = clause_subject(clause, zh, speaker_entity, people, last)
            if subject is None and not zh and names_a_condition(clause):  # "Anosmia, the doctor called it."
                whom, mention = (last.entity, last.mention) if last else (speaker_entity, "")  # the clause before's
                subject = Subject(whom, clause, mention, reported=True)
            if subject is not None and "_" in subject.entity:
                people.setdefault(subject.entity.rsplit("_", 1)[-1], subject.entity)
            last = None if subject is None or subject.entity == speaker_entity else subject
            yield sentence, subject.restated if subject is not None and subject.restated else clause, subject, zh


def statements(
    text: str, speaker_entity: str = "user", known: Iterable[str] = ()
) -> Iterator[tuple[str, str, Subject, bool]]:
    """``(sentence, clause, subject, zh)`` for every clause of ``text`` that states something about someone."""
    for sentence, clause, subject, zh in clause_subjects(text, speaker_entity, known):
        if subject is not None:
            yield sentence, clause, _spaced_as_read(subject, zh), zh


def _spaced_as_read(subject: Subject, zh: bool) -> Subject:
    """A Chinese subject's text as the patterns read it ("我在 Shopee 做运营" as "我在Shopee做运营")."""
    return Subject(subject.entity, _SPACE_BY_CJK.sub("", subject.text)) if zh else subject


def _named_changes(
    subject: Subject, zh: bool, specs: dict[str, AttributeSpec], slots: Slots
) -> list[tuple[Candidate, Subject | None]]:
    """What a clause no rule read as an end does to the values the speaker holds, by naming them.

    A swap ("把氨氯地平换成了缬沙坦") ends the held value and files the other in its slot; a denial ("其实我不对
    花生过敏，是对芒果过敏") ends it, and what the rest affirms of that slot holds (with those words, a ``Subject``).
    """
    out: list[tuple[Candidate, Subject | None]] = []
    for attribute, value, new in swapped_values(subject.text, subject.entity, slots, partial(clean_value, zh=zh)):
        out += [(Candidate(attribute, value, 90, confidence=0.8, operation="retract"), None)]
        out += [(Candidate(attribute, new, 90, change=True), None)]
    for attribute, value, index in denied_values(
        subject.text, subject.entity, slots, partial(_stated, zh=zh, specs=specs)
    ):
        out += [(Candidate(attribute, value, 90, confidence=0.8, operation="retract"), None)]
        said, news = _affirmed(denial_rest(subject.text, index), subject.entity, zh, specs, {attribute})
        out += [(c, said) for c in news]
    return out


def _what_holds_now(
    subject: Subject, zh: bool, specs: dict[str, AttributeSpec], ended: set[str]
) -> tuple[Subject, list[Candidate]]:
    """New values of the slots a clause ended, from its part that says what holds instead: changes.

    That part is read as said on its own ("I stopped playing badminton and took up tennis", "不打羽毛球了，改打网球").
    """
    now = current_part(subject.text)
    if now == subject.text or not ended:
        return subject, []
    return _affirmed(now, subject.entity, zh, specs, ended)


def _stated(text: str, *, zh: bool, specs: dict[str, AttributeSpec]) -> list[tuple[str, str]]:
    """The ``(attribute, value)`` pairs the rules read in ``text``."""
    rules = ZH_RULES if zh else EN_RULES
    return [(str(c.attribute), c.value) for r in rules for c in apply(r, text, zh, specs) if c.operation == "assert"]


def _affirmed(
    part: str, entity: str, zh: bool, specs: dict[str, AttributeSpec], slots: set[str]
) -> tuple[Subject, list[Candidate]]:
    """New values of ``slots`` that ``part`` (its subject left out) affirms, as changes, with its subject."""
    if zh:
        said = part if part.startswith("我") else "我" + part
    else:
        said = part if re.match(r"(?i)(?:I|my|we|our)\b", part) else "I " + part
    if not part.strip():
        return Subject(entity, said), []
    rules = ZH_RULES if zh else EN_RULES
    found = [c for r in rules for c in apply(r, said, zh, specs) if c.operation == "assert" and c.attribute in slots]
    return Subject(entity, said), [replace(c, change=True) for c in _select(found, said)]


_LEAD_IN = re.compile(r"^(?:我的?|我家的?|那个|那只|那台|那把|my\s+|the\s+|our\s+)", re.IGNORECASE)


def _ends_what_it_names_first(clause: str, entity: str, slots: Slots) -> list[Candidate]:
    """A value the speaker holds, named first and then ended ("手风琴我好几年没碰，早就忘光了", "围棋不下了").

    Not when the clause goes on to what holds now ("…卸了，现在改用 X"): a statement of change keeps that.
    """
    if not states_an_end(clause) or current_part(clause) != clause:
        return []
    head = normalize_value(_LEAD_IN.sub("", clause.strip()))
    for e, attribute, stored in slots:
        for value in (stored or "").split(", ") if e == entity else ():
            if len(normalize_value(value)) >= 2 and head.startswith(normalize_value(value)):
                return [Candidate(attribute, value, 90, 0, confidence=0.8, operation="retract")]
    return []


def _sensitive(sentence: str) -> Iterator[Candidate]:
    for match in _REDACTOR.find(sentence):
        if (attribute := _PII_ATTRIBUTES.get(match.kind)) and match.original:
            yield Candidate(attribute, match.original, 95, match.start, "sensitive", 0.95)


def _select(candidates: list[Candidate], text: str) -> list[Candidate]:
    """The best candidate per slot (and per value: one value is one fact, under its best-placed rule)."""
    strong = [c for c in candidates if not c.weak]
    best: dict[tuple[str, str], Candidate] = {}
    for c in strong or candidates:
        key = (c.attribute or "", c.operation if c.attribute else normalize_value(c.value))
        if key not in best or (c.priority, c.position) >= (best[key].priority, best[key].position):
            best[key] = c
    by_value: dict[str, Candidate] = {}
    for c in best.values():
        key = normalize_value(c.value)
        if key not in by_value or (c.priority, c.position) > (by_value[key].priority, by_value[key].position):
            by_value[key] = c
    kept: list[Candidate] = []
    for c in sorted(by_value.values(), key=lambda c: -c.priority):  # one span of words is one value, best read
        if not any(k.priority > c.priority and _shared_words(text, c.value, k.value) for k in kept):
            kept.append(c)
    return sorted(kept, key=lambda c: c.position)


def _shared_words(text: str, a: str, b: str) -> bool:
    """Whether values ``a`` and ``b`` were read from overlapping words of ``text``, neither holding the other."""
    i, j = text.find(a), text.find(b)
    if i < 0 or j < 0 or a in b or b in a:
        return False
    return i < j + len(b) and j < i + len(a)


Slots = Sequence[tuple[str, str, "str | None"]]


def _holds(stored: str | None, value: str) -> bool:
    """Whether a stored slot value (a set joined by ", ") holds ``value``."""
    v = normalize_value(value)
    return any(
        (p := normalize_value(part))
        and (same_value(part, value) or len(min(p, v, key=len)) >= 2 and (p in v or v in p))
        for part in (stored or "").split(", ")
    )


def _with_slots(c: Candidate, entity: str, slots: Slots) -> Candidate:
    """A retraction lands on the slot holding its value; a change to a named thing on the kin slot it replaces."""
    mine = [(attribute, value) for e, attribute, value in slots if e == entity]
    if c.operation == "retract":
        held = next((a for a, v in mine if _holds(v, c.value)), None)
        return replace(c, attribute=held) if held else c
    if c.change and c.concept:
        concept = VERB_CONCEPTS[c.concept]
        family = {concept.attribute, *concept.lexicons}
        if (
            c.attribute == concept.attribute
            and _names_a_thing(c.value)
            and (slot := next((a for a, _ in mine if a in family), None))
        ):
            return replace(c, attribute=slot, kind=None)
    return c


def _names_a_thing(value: str) -> bool:
    """Whether a value no lexicon knows is written as a name (a capital or a digit: "Zed", "Pixel 8", "OPPO").

    Only a named thing may take a held slot of its verb's kin ("switched to Zed" replaces the editor); a common
    word ("switched to decaf", "换了个发型") names something else the user changed, and archives nothing.
    """
    return any(ch.isupper() or ch.isdigit() for ch in value)


# ---- content: the sentence restated about "the user" / "用户" --------------------------------

_SUBORDINATE = re.compile(r"(?:if|because|while|when|although|though|but)\s")


def _content(sentence: str, value: str, zh: bool, whole: bool = False, names: Sequence[str] = ()) -> str:
    """The statement of a fact: the clauses from its subject to its value and what describes the value.

    ``whole``: the clause states this fact alone, so all of it stays (in English, up to a subordinate clause:
    "…, while mine is in the shop"). ``names``: values read from the clause, kept as written (我爱我家).
    """
    body = sentence if zh else EN_INTRO.sub("", sentence.strip())
    splitter = r"\s*[，,;；]\s*" if zh else r"\s*[,;:]\s*|\s+(?=" + _SUBORDINATE.pattern + ")"
    clauses = [c for c in re.split(splitter, body) if c.strip()] or [body]
    marker = re.compile(r"我") if zh else EN_FIRST_PERSON
    needle = normalize_value(value)
    words = (needle, needle.split(" ")[0] if needle else "")  # the whole value, else its first word
    index = next((i for w in words for i, c in enumerate(clauses) if w and w in normalize_value(c)), None)
    start = index or 0
    while start and not marker.search(clauses[start]):
        start -= 1
    end = len(clauses) if index is None else index + 1  # no value found: the whole body, nothing to extend
    while end < len(clauses) and (
        (ZH_APPOSITIVE if zh else EN_APPOSITIVE).match(clauses[end])
        or (not zh and _CJK.match(clauses[end]))
        or (whole and not _SUBORDINATE.match(clauses[end]))
    ):
        end += 1  # an appositive, a Chinese clause going on about it ("an old Civic, 手动挡的"), or the rest
    chosen = body if index is None or whole and zh else ("，" if zh else ", ").join(clauses[start:end])
    return zh_rewrite(chosen, names) if zh else en_rewrite(chosen, names)


def _one_member(content: str, members: list[str], value: str, zh: bool) -> str:
    """The content restated for one member: "allergic to peanuts and shellfish" -> "allergic to shellfish"."""
    pattern = (_COORD.pattern + r"\s*").join(r"(?:a little |some )?" + re.escape(m) for m in members)
    return re.sub(pattern, lambda _: value, content, count=1, flags=re.IGNORECASE)


def _kind(candidate: Candidate, specs: dict[str, AttributeSpec]) -> str:
    if candidate.kind or candidate.attribute is None:
        return candidate.kind or "preference"
    if spec := specs.get(candidate.attribute):
        return spec.kind
    if candidate.attribute.startswith("favorite_"):
        return "preference"
    return VERB_CONCEPTS[candidate.concept].kind if candidate.concept else "fact"


def extract_rule_facts(
    text: str,
    *,
    now: datetime | None = None,
    speaker_entity: str = "user",
    attributes: Sequence[AttributeSpec] = DEFAULT_ATTRIBUTES,
    slots: Slots = (),
) -> list[Fact]:
    """Extract entity-keyed facts from what one speaker said, with rules only (zh and en).

    Args:
        text: The speaker's message; questions, hypotheticals and chit-chat yield nothing.
        now: The conversation's timestamp, for relative dates and ``valid_from`` (default: now).
        speaker_entity: Entity for the speaker's own facts; others get keys such as ``sister_maya``.
        attributes: Vocabulary naming slots from nouns and picking each fact's kind.
        slots: Current ``(entity, attribute, value)`` slots: "I quit X" retracts the slot holding X.

    Returns:
        Facts in the order stated; "I no longer use X" gives an ``operation="retract"`` fact.

    Example:
        >>> [(f.attribute, f.value, f.content) for f in extract_rule_facts("我喜欢使用 Vim 编辑器")]
        [('editor', 'Vim', '用户喜欢使用 Vim 编辑器')]
        >>> slots = [("user", "editor", "Vim")]  # the namespace's current slots, from the write path
        >>> [(f.attribute, f.value) for f in extract_rule_facts("我现在改用 VS Code 了", slots=slots)]
        [('editor', 'VS Code')]
    """
    when = local_time(now) or utcnow()  # dates said relative to it read on the user's calendar
    specs = {spec.name: spec for spec in attributes}
    facts: list[Fact] = []
    seen: set[tuple[str, str | None, str, str]] = set()
    for sentence, clause, subject, zh in clause_subjects(text, speaker_entity, (e for e, _, _ in slots)):
        if subject is None:  # about no one known, unless led by what the speaker has ("Biscuit passed away")
            ended = _ends_what_it_names_first(clause, speaker_entity, slots)
            subject = Subject(speaker_entity, clause) if ended else None
        if subject is None:
            continue
        subject = _spaced_as_read(subject, zh)
        rules = ZH_RULES if zh else EN_RULES
        found = [*_sensitive(clause), *(c for r in rules for c in apply(r, subject.text, zh, specs))]
        found += _ends_what_it_names_first(clause, subject.entity, slots) if not found else []
        # A verb's object that cannot be what the verb says ("我说实话") is no fact.
        candidates = [c for c in found if c.attribute or c.operation == "retract" or not c.concept]
        stamp = (resolve_valid_from(sentence, when) or when, resolve_ttl_days(sentence, when))
        before = len(facts)
        chosen = _select(candidates, subject.text)
        changes = [] if any(c.operation == "retract" for c in chosen) else _named_changes(subject, zh, specs, slots)
        chosen = [c for c in chosen if not any(same_value(c.value, e.value) for e, _ in changes)]  # "never said I…"
        whole = len(chosen) == 1  # the clause states one fact: its statement keeps all the clause says about it
        names = [c.value for c in sorted(chosen, key=lambda c: -c.priority)]  # kept as written, best read first
        for c in chosen:
            c = _with_slots(c, subject.entity, slots)
            facts += _facts(c, clause, subject, zh, specs, when, stamp, seen, whole, names)
        ended = {str(c.attribute) for c in chosen if c.operation == "retract"}
        instead, news = _what_holds_now(subject, zh, specs, ended)
        changes += [(c, instead) for c in news]
        for c, said in changes:  # what the clause ends and what holds instead, each with its own words
            words = clause if said is None else said.text
            facts += _facts(c, words, said or subject, zh, specs, when, stamp, seen, c.operation == "assert", [c.value])
        if len(facts) == before:  # nothing understood, or what a rule read did not hold: kept as said
            kept = kept_as_said(clause, subject, zh, stamp, seen)  # its date spelled out, as in a slot's statement
            facts += [f.model_copy(update={"content": absolute_dates(f.content, when, zh=zh)}) for f in kept]
    return [_shown(f) for f in facts]


def _facts(
    c: Candidate,
    clause: str,
    subject: Subject,
    zh: bool,
    specs: dict[str, AttributeSpec],
    when: datetime,
    stamp: tuple[datetime, float | None],
    seen: set[tuple[str, str | None, str, str]],
    whole: bool = False,
    names: Sequence[str] = (),
) -> list[Fact]:
    """One fact per value of candidate ``c`` (several for a coordinated set), duplicates skipped."""
    out = []
    members = _members(c, subject.text, zh, specs)
    for value in members:
        key = (subject.entity, c.attribute, normalize_value(value), c.operation)
        if key in seen:
            continue
        seen.add(key)
        content = _content(absolute_dates(clause, when, zh=zh), c.value, zh, whole, names)
        if len(members) > 1:
            content = _one_member(content, members, value, zh)
        out.append(Fact(
            entity=subject.entity, attribute=c.attribute, value=value, content=content, kind=_kind(c, specs),
            confidence=c.confidence, valid_from=stamp[0], ttl_days=stamp[1],
            operation="retract" if c.operation == "retract" else "assert",
            cardinality=None if c.attribute in specs else c.cardinality, evidence=clause, switch=c.change,
        ))  # fmt: skip
    return out
