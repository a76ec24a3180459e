"""Restating what the user said: in the third person, and as said when no rule understood it.

"I switched to…" reads "The user switched to…", "我…" reads "用户…"; a statement no pattern reads is kept whole
(no slot) unless it is negated, conditional, asked or reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import Any

from langchain_lifecycle_memory.schema import Fact
from langchain_lifecycle_memory.write._change import GONE, current_part
from langchain_lifecycle_memory.write._lexicon import CJK, EN_FUNCTION_WORDS, EN_PRONOUNS, ZH_MY, ZH_RELATIONS
from langchain_lifecycle_memory.write._subjects import ZH_REL, Subject, add_elided_i

__all__ = ["en_rewrite", "kept_as_said", "zh_rewrite"]

# ---- content: the sentence restated about "the user" / "用户" --------------------------------

_MODALS = frozenset(
    "can could will would should shall may might must did was had used went got made took ran swam drove bought "
    "began became came gave grew kept knew left lost met paid put quit said sat saw sold sent spent stood taught "
    "thought told won wore wrote just found brought caught felt fell built broke ate drank fed led heard held fought "
    "flew hung hid lent meant rode rang shot slept spoke stole struck threw understood woke".split()
)
"""Modals and past forms: the verb after "I" as it is ("I found" is "the user found", not "founds")."""
_EN_ADV = (
    r"(?:(?:no longer|really|just|also|mostly|mainly|usually|always|often|still|now|currently|only|actually|sometimes|"
    r"never|ever|even|already|once|recently|finally|[a-z]{4,}(?<!p)ly)\s+)*"  # any "-ly" adverb; not "supply", "rely"
)
_EN_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, flags), r)
    for p, r, flags in (
        (r"[’`]", "'", 0), (r"\b(?:I am|I'm|[Ww]e are|[Ww]e're)\b", "the user is", 0),
        (r"\b(?:I was|[Ww]e were)\b", "the user was", 0),
        (r"\b(?:I have|I've|[Ww]e have|[Ww]e've)\b", "the user has", 0),
        (r"\bI'd(?=\s+(?:never\s+|just\s+|already\s+)?(?:\w+ed|\w+en|been|done|gone|had|made|got|met|left|lost)\b)",
         "the user had", 0),  # "I'd never touched clay": had
        (r"\b(?:I would|I'd)\b", "the user would", 0), (r"\b(?:I will|I'll)\b", "the user will", 0),
        (r"\b(?:I do not|I don't|[Ww]e don't|[Ww]e do not)\b", "the user doesn't", 0),
        (r"\bmyself\b", "themselves", re.I), (r"\b(?:my|our|mine)\b", "the user's", re.I),
    )
)  # fmt: skip
_EN_I_VERB = re.compile(r"\b(?:I|[Ww]e)\s+(" + _EN_ADV + r")([A-Za-z]+n't|[A-Za-z]+)")


def _conjugate(verb: str) -> str:
    low = verb.casefold()
    irregular = {"have": "has", "do": "does", "go": "goes", "am": "is", "be": "is"}
    if low in irregular:
        return irregular[low]
    if low.endswith("n't"):  # "I basically don't drive": "doesn't", "haven't": "hasn't", "can't" as it is
        return {"don't": "doesn't", "haven't": "hasn't", "aren't": "isn't", "weren't": "wasn't"}.get(low, verb)
    if low in _MODALS or low.endswith("ed"):
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    return verb[:-1] + "ies" if re.search(r"[^aeiou]y$", low) else verb + "s"


def en_rewrite(text: str, names: Iterable[str] = ()) -> str:
    """An English statement about "the user"; ``names`` stay as written."""
    text, held = _set_aside(add_elided_i(text), names)
    for pattern, repl in _EN_REWRITES:
        text = pattern.sub(repl, text)
    text = _EN_I_VERB.sub(lambda m: f"the user {m.group(1)}{_conjugate(m.group(2))}", text)
    text = re.sub(r"\b(?:me|us)\b", "\x00them", text)
    # Only the first mention names "the user"; later ones read as "their" / "them".
    first = re.search(r"the user|\x00them", text)
    head, tail = (text[: first.end()], text[first.end() :]) if first else ("", text)
    text = head.replace("\x00them", "the user") + tail.replace("the user's", "their").replace("\x00them", "them")
    text = _zh_person(text) if CJK.search(text) else text  # "…, 这个对我很重要", "…, 我爸…"
    text = text.strip(" ,;:-!?.。")
    return _put_back(text[:1].upper() + text[1:] + ".", held)


_TITLE = re.compile(r"《[^》]*》")
_SPEAKER = re.compile(r"我|\b(?:I|[Mm]y|[Oo]ur|[Mm]e|[Ww]e|[Uu]s)\b")
_HELD = re.compile("\x01(\\d+)\x02")


def _set_aside(text: str, names: Iterable[str]) -> tuple[str, list[str]]:
    """``text`` with its titles and the ``names`` in it that hold a word for the speaker replaced by markers.

    A name is what the user called something (我爱我家, My Morning Jacket): restating the speaker as "the user"
    must not reach into it. ``names`` are set aside in the order given (the caller's best reading first).
    """
    held: list[str] = []

    def mark(span: str) -> str:
        held.append(span)
        return f"\x01{len(held) - 1}\x02"

    text = _TITLE.sub(lambda m: mark(m.group()), text)
    for name in names:
        if name and _SPEAKER.search(name) and name in text:
            text = text.replace(name, mark(name))
    return text, held


def _put_back(text: str, held: list[str]) -> str:
    return _HELD.sub(lambda m: held[int(m.group(1))], text)


def zh_rewrite(text: str, names: Iterable[str] = ()) -> str:
    """A Chinese statement about "用户"; titles and ``names`` stay as written."""
    text, held = _set_aside(text, names)
    return _put_back(_zh_person(text), held)


def _zh_person(text: str) -> str:
    text = re.sub(ZH_MY + "(" + ZH_REL + r")", lambda m: "用户的" + ZH_RELATIONS[m.group(1)][1], text)
    text = re.sub(r"^(?:请|麻烦)?(?:记住|记一下|别忘了|注意)[，,：:]?", "", text.strip())
    text = text.replace("我的", "用户的").replace("我家", "用户家").replace("我们", "用户").replace("我", "用户")
    return text.strip(" ，,;；:：。！!~～")


# ---- statements kept as said --------------------------------------------------------------

_SAID, _INFERRED = 0.6, 0.5
"""Confidence of a statement kept as said, and of one whose speaker only a dropped subject implies: the least
that is still active (``UpdateConfig.pending_below``), so it is the last of the user's facts to be shown unasked."""
_MIN_SAID = {True: 3, False: 2}  # characters (zh) or content words (en) a statement needs to be kept as said


def kept_as_said(
    clause: str, subject: Subject, zh: bool, stamp: tuple[datetime, float | None], seen: set[Any]
) -> list[Fact]:
    """A statement no rule understood, kept as said (no slot) unless negated, conditional, asked or reported."""
    evidence = clause
    if zh:  # "这几天我嗓子发炎，医生说别吃辣的": what is reported after the statement is left out, not the statement
        clause = _zh_statement(clause)
    if (now := current_part(clause)) != clause:  # "卸了，现在改用微信输入法": what holds now, not what ended
        lead = now.split()[0].casefold()  # "upgraded to…" gets its "I" back; "our new landlord is…" has its subject
        led = not re.match(r"[a-z]", now) or lead in EN_PRONOUNS | EN_FUNCTION_WORDS or _EN_SUBJECT.search(now)
        clause = now if zh or led else "I " + now
        if zh and not CJK.search(clause):  # "轻断食不搞了, now I eat breakfast at 7:30": English holds now
            zh, subject = False, replace(subject, text=clause)
    named = subject.reported  # reported, but a name for what the person has
    if not clause or (not zh and not named and _NOT_SAID_EN.search(clause)):
        return []
    # An ending ("我不搬了", "Hal's retired now") is kept however short and whoever it is about: what it ends
    # is what it says (``_replaced.py`` archives that), so a character fewer and no first-person subject
    ends = bool(GONE.search(clause))
    if not (zh or named or _EN_SUBJECT.search(subject.text) or _DONE_TO_ME.search(subject.text) or ends):
        return []
    body = (
        re.sub(r"[我的了是在也都很就还又吧啊呢呀嘛哦]", "", clause)
        if zh
        else " ".join(w for w in re.findall(r"[A-Za-z0-9']+", clause) if w.casefold() not in EN_FUNCTION_WORDS)
    )
    # Chinese characters and, in a mixed sentence, its Latin words ("我是 airline mechanic")
    size = len(re.findall(r"[\u3400-\u9fff]|[A-Za-z]{2,}", body)) if zh else len(body.split())
    if size < _MIN_SAID[zh] - ends:
        return []
    dropped = zh and "我" not in clause and subject.entity == "user"  # "拉丁舞课改到…": the speaker's, unsaid
    # The subject put back ("我" or "我的") on the words as typed: "小米 14" keeps its space
    said = ("我的" if subject.text.startswith("我的") else "我") + clause if dropped else clause
    content = zh_rewrite(said) if zh else en_rewrite(said)
    key = ("said", None, content, subject.entity)
    if key in seen:
        return []
    seen.add(key)
    entity = None if subject.entity == "user" else subject.entity
    # Whose it is was inferred from nothing but the missing subject ("天太热了，空调开一整天"): the weakest evidence.
    confidence = _INFERRED if dropped and not subject.text.startswith("我") else _SAID
    fact = Fact(
        entity=entity, content=content, kind="fact", confidence=confidence, valid_from=stamp[0], ttl_days=stamp[1]
    )
    return [fact.model_copy(update={"evidence": evidence})]


def _zh_statement(clause: str) -> str:
    """The clause's leading comma-separated parts that state something, after a leading report ("体检说…，").

    ``""`` when the first does not, or when the clause asks or requests anything ("周末去茶城，帮我挑点…").
    """
    if _ZH_ASKS.search(clause):
        return ""
    parts = re.split(r"(?<=[，,])", clause)
    if len(parts) > 1 and _REPORT_ZH.search(parts[0]) and not _NOT_SAID_ZH.search(_REPORT_ZH.sub("", parts[0])):
        parts = parts[1:]  # "体检说我血脂有点高，现在每天吃一粒鱼油": the report left out, what the user does kept
        if _TOLD_ZH.match(parts[0]):
            return ""  # "医生说…，让我每天补一粒": still what was said to them
    text, end = "".join(parts), 0
    for part in parts:  # each part searched with the end of what was kept (linear in a long run-on text)
        if _NOT_SAID_ZH.search(text, max(0, end - _REACH), end + len(part)):
            break
        end += len(part)
    return text[:end].rstrip("，, ")


_REACH = 8
"""How far back into the kept parts a word that ends a statement may start ("，没问题"); ``^`` stays the clause's."""


_TOLD_ZH = re.compile(r"\s*(?:让|叫|要|劝|建议)")


# A negation is kept as said ("I don't own a car", "我没有驾照": facts too). Not kept: doubt, wishes, reported
# speech, what is said to the assistant or about the conversation ("I like that idea", "我喜欢你"), and
# requests ("Put on some music for me": no first-person subject).
_NOT_SAID_EN = re.compile(
    r"\b(?:if|unless|would|should|could|might|maybe|perhaps|please|wonder|not sure|no idea|never mind|"
    r"says?|said|told|tells|think|want|wanted|wish|hope|let me|will|gonna|"
    r"(?:am|'m|are|'re|is|'s) going to(?!\s+(?:the|a|my|our)\s|\s+(?-i:[A-Z]))|"  # "going to Japan" is a plan
    r"don't know|doesn't matter|"
    r"you|your|(?:that|this|a|the) (?:idea|question|suggestion|answer|point|one))\b|\?",
    re.IGNORECASE,
)
_EN_SUBJECT = re.compile(r"\b(?:I|my|we|our)\b", re.IGNORECASE)
_DONE_TO_ME = re.compile(r"^(?!(?:it|this|that)\b)[\w' -]{1,30}?\b[a-z]+(?:ed|ut|ot|ave)\s+(?:me|us)\b", re.I)
"""Someone's past act on the speaker ("the dentist put me in a night guard", "they moved us to nights"): the
statement is about the speaker, though "I" is not its subject."""
_REPORT_ZH = re.compile(r"说(?![\u4e00-\u9fff]{0,3}语|是)")
"""Reported speech ("医生说…"); 说 before a language's name ("说闽南语") is speaking it, and "说是…" names what
something is ("医生说是乳糖不耐受"): a statement, not what someone wants."""
_ZH_ASKING = r"(?:帮|给)我(?![\u4e00-\u9fff]{1,2}[了过])|请|你|您|吗|？|\?"
"""Words that make a clause a question or a request to the assistant, wherever they stand."""
_NOT_SAID_ZH = re.compile(
    r"(?<![特区分个级类识差告])别(?![人扭致墅针])|不(?:知道|清楚|确定|客气)|没(?:关系|想好)|(?:^|[，,])没问题"
    r"|[是要能会该有](?:不|没)[是要能会该有]|应该|"
    + _ZH_ASKING
    + r"|如果|假如|要是|假设|是否|"
    + _REPORT_ZH.pattern
    + r"|觉得|想要|希望|打算|也许|可能|呢"
    r"|^我(?:马上|正|等会儿?)?(?:去(?!年)|来|回|出门)|^我现在(?:去|来|回|出门)(?!.*了[。！!]?$)"  # off to do now,
)  # not who they are ("我去年…" is a date); "现在…了" states a new situation: "我现在去采购部当主管了"
_ZH_ASKS = re.compile(_ZH_ASKING)
