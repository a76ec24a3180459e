"""Who a clause is about, and the clause as the patterns see it (in the first person).

The speaker ("I…", "我…"), a relative ("my sister Maya…", "我老婆小芳…"), or someone already spoken of by
name ("Felix 有哮喘").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from langchain_lifecycle_memory.schema import PERSON
from langchain_lifecycle_memory.vocabulary import RELATIONS
from langchain_lifecycle_memory.write._change import ZH_CHANGE, states_a_change
from langchain_lifecycle_memory.write._lexicon import (
    EN_FUNCTION_WORDS,
    EN_PRONOUNS,
    EN_RELATIONS,
    ZH_MY,
    ZH_RELATIONS,
    alternation,
    canonical_entity,
    chinese_spans,
    romanize,
)

__all__ = [
    "EN_FIRST_PERSON", "EN_INTRO", "ZH_PERSON", "ZH_REL", "Subject", "add_elided_i", "clause_subject",
    "names_a_condition",
]  # fmt: skip

EN_FIRST_PERSON = re.compile(r"\b(?:I|[Mm]y|[Mm]e|[Ww]e|[Oo]ur)\b")
EN_INTRO = re.compile(
    r"^(?:(?:by the way|btw|also|oh|so|and|well|anyway|fyi|actually|honestly|just so you know|fun fact|ok|okay|"
    r"yes|yeah|no|hi|hey|hello|please|note that|note|remember that|remember|don't forget that|don't forget)"
    r"[,!:.]?\s+)+",
    re.IGNORECASE,
)
_EN_CONTRACTIONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, flags), r)
    for p, r, flags in (
        (r"[’`]", "'", 0), (r"\bI'm\b", "I am", re.I), (r"\bI've\b", "I have", re.I), (r"\bI'd\b", "I would", re.I),
        (r"\bI'll\b", "I will", re.I), (r"\bwe're\b|\bwe are\b", "I am", re.I),
        (r"\bwe've\b|\bwe have\b", "I have", re.I),
        (r"\bwe\b|^We\b", "I", 0), (r"\bour\b|^Our\b", "my", 0),  # "Our Table Bakery" within a sentence: a name
        (r"\bdon't\b", "do not", re.I),
        (r"\bdoesn't\b", "does not", re.I), (r"\bcan't\b", "cannot", re.I), (r"\bhaven't\b", "have not", re.I),
    )
)  # fmt: skip
# Chat drops the "I" of a past-tense verb ("Got an e-bike last month", "Adopted a cat"): a sentence led by
# one, optionally after "just" / "recently" / an adverb ("Finally signed up for…"), is the speaker's.
_ELIDED_I = re.compile(
    r"^(?=(?:[Jj]ust |[Rr]ecently |[Ff]inally )?(?:[Mm]oved|[Ss]tarted|[Ss]witched|[Jj]oined|[Qq]uit|[Ss]topped"
    r"|[Gg]ot|[Bb]ought|[Ss]old|[Mm]ade|[Tt]ook|[Ww]ent|[Bb]egan|[Ff]ound|[Ll]ost|[Mm]et|[Ll]eft)\b)"
)
_ELIDED_PAST = re.compile(
    r"^(?![A-Za-z]+eed\b)(?=(?:(?:[Jj]ust|[Rr]ecently|[A-Za-z][a-z]+ly) [a-z]+ed|[A-Za-z][a-z]+ed)"
    r"\s+(?!(?:to|by|with|of|about|from|me|you|it)\b|up\b(?! (?:for|an?|the|some|my|our)\b))\w)"
)
_ELIDED_AM = re.compile(
    r"^(?!(?:[Uu]sed|[Nn]eed|[Nn]eeded|[Ww]anted|[Tt]ried|[Dd]ecided|[Pp]lanned|[Hh]oped)\s)"
    r"(?=[A-Za-z]+(?:ic|ed|ous|ant|ent|ive|ful|al)\s+(?:to|of|about|with|from)\b)"
)
_EN_REL = alternation(EN_RELATIONS)
_EN_PERSON = re.compile(
    r"^my\s+(?:other\s+|older\s+|younger\s+|little\s+|big\s+)?(?P<rel>(?:"
    + _EN_REL
    + r")(?:-in-law)?)(?:,)?(?:\s+(?P<name>(?-i:[A-Z])[a-z]+),?)?(?P<pos>'s)?\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
ZH_REL = alternation(ZH_RELATIONS)
_ZH_RANK = r"(?:[大小二三四五](?=儿子|女儿|闺女|孙子|孙女))?"
"""Which child or grandchild, by birth order ("我二女儿二妞", "小女儿"): still the son or the daughter."""
_ZH_REST = (
    r"(?P<rest>(?:的|是|在|每|用|喜欢|爱|喝|吃|开|住|养|叫|[今去明前后]年|[上下]个?月|[上下]周|这|那|昨天|前天|也|都|一直|最|上|学|做|"
    r"本来|原来|其实|一般|从来|倒|却|会|有|很|特别|平时|经常|常|"
    r"最近|刚|去|不|没|对|还|从小|打|踢|弹|拉|玩|看|读|听|已经|穿|戴|骑|坐|说|讲|收集|种|写|练|追|抽|戒|搬|"
    r"又|换|买|卖|给|终于|居然|竟然|突然|正在|总|老是|靠|从|[\u4e00-\u9fff](?:了|过|着)|" + ZH_CHANGE + r").*)$"
)
"""What follows whom a Chinese clause is about: a verb, an adverb or a time, and the rest of the clause."""
ZH_PERSON = re.compile(
    "^"
    + ZH_MY
    + _ZH_RANK
    + r"(?P<rel>"
    + ZH_REL
    + r")儿?(?P<name>[\u4e00-\u9fff]{1,3}?|\s*[A-Z][a-z]+\s*)??只?"
    + _ZH_REST
)
_ZH_NAME_FIRST = re.compile(r"^(?P<name>[阿小老][\u4e00-\u9fff])" + _ZH_REST)
"""A clause led by a given name with its diminutive ("阿杰喜欢打篮球", "小芳搬去成都了"): about that person."""
_ZH_NOT_NAMES = ("老家",)
"""Words shaped like a diminutive and a given name that name a place ("老家在河南")."""
_ZH_FAMILY_FIRST = re.compile(
    "^" + _ZH_RANK + "(?:" + "|".join(sorted((z for r in RELATIONS if r.family for z in r.words if not z.isascii()),
                                             key=len, reverse=True)) + ")"
)  # fmt: skip
_ZH_THIRD = r"她|(?<![吉其])[他它]"
"""A third person's pronoun; 吉他 (a guitar) and 其他/其它 (other) are no one."""
_ZH_NO_ONE_ELSE = (
    r"^(?![^，,；;]*(?:[你您们]|" + _ZH_THIRD + r"))"
    r"(?![^，,；;]*(?<![给跟和同帮替陪带为])(?<![给跟和同帮替陪带为][\u4e00-\u9fff])(?:" + ZH_REL + r"))"
)
"""A clause that names no one else as its subject: a relative after a coverb is who the speaker acts for or with
("给爸妈买了…", "跟同事去 KTV")."""
_ZH_NO_ONE = re.compile(_ZH_NO_ONE_ELSE)
_ZH_ASKED = re.compile(r"什么|哪[里儿个家些天位种样]|谁|几[个点时岁号]|怎么|怎样|多少|为什么|是否")
"""A question without its "？" ("用户喜欢什么编辑器"); "哪吒" is a name, not "哪里"."""
_ZH_REPLY = re.compile(
    r"^(?:好的|好吧|好啊|谢谢|多谢|不用了?|没事|没关系|行|嗯+|对|收到|知道了|明白了?|ok)(?:[，,。！!～~ ]|$)", re.I
)
"""A reply to the assistant ("好的，谢谢", "不用了", "没事，不着急"): the dialogue's, not a fact."""
_ZH_DROPPED = re.compile(_ZH_NO_ONE_ELSE + r".*(?:" + ZH_CHANGE + ")")
_ZH_CHANGE_FIRST = re.compile(r"(?:又|也|还|刚|已经)?(?:换|改|搬|调|转|跳槽|升职|晋升|离职|辞职|退休)")
"""A change verb first: the speaker did it ("换手机了"), where a noun first is what changed ("拉丁舞课改到…")."""
# Chinese drops the subject of an act as readily as of a change. A clause naming no one else is the speaker's
# act when its grammar needs an agent: a disposal "把…" or a one-character verb with its aspect ("开了…", "报过…")
# at its start (after a time word), a habit adverb before a verb ("通勤路上一直在听…", "平时都…"), or a
# completion adverb before one ("刚办下来…", "终于考过了"). "下雨了" and "面很好吃" have none of these.
_ZH_WHEN = (
    r"(?:(?:上|这|下)(?:周|个月|个星期)|去年|今年|前年|昨天|前天|今天|最近|周末|早上|晚上|白天|前阵子)?"
    r"(?:又|也|还|再|就|才)?"  # an adverb before the act ("又订了…", "也报了…")
)
_ZH_ACT_FIRST = re.compile(
    _ZH_NO_ONE_ELSE + _ZH_WHEN + r"(?:把|[\u4e00-\u9fff](?:了|过)(?![\u4e00-\u9fff]?[了吗呢吧]))"
)
# The same act after a topic or a beneficiary ("车位租了一个地下的", "给可可报了个口才班"): two or three characters
# before a one-character verb with 了 and its object ("雨下了一整夜" has no topic, "电脑坏了，…" no object).
_ZH_TOPIC_ACT = re.compile(
    _ZH_NO_ONE_ELSE + _ZH_WHEN + r"(?:[给帮替为][\u4e00-\u9fff]{1,3}?|[\u4e00-\u9fff]{2,3}?)[\u4e00-\u9fff]了"
    r"(?:个|[一两几][\u4e00-\u9fff])?[\u4e00-\u9fff]{2}"
)
_ZH_HABIT = r"(?:一直|平时|平常|每天|每晚|每周|每个月|每月|每年|经常|常常|总是)(?:都|在|会)?[\u4e00-\u9fff]"
_ZH_DONE = r"(?:刚刚?|终于|已经)(?:把|[\u4e00-\u9fff](?:了|过|下来|好|完|到))"
# Where the speaker works or studies, said with its place first ("白天在一家培训机构当助教"): 在 a place, then the
# role's verb.
_ZH_AT = r"^" + _ZH_WHEN + r"在[\u4e00-\u9fffA-Za-z0-9 ]{2,12}?(?:当|做|教|上班|工作|上学|读|实习|打工)"
_ZH_ACT = re.compile(_ZH_NO_ONE_ELSE + r"(?:.*(?:" + _ZH_HABIT + "|" + _ZH_DONE + ")|" + _ZH_AT + ")")
_NOT_NAME = re.compile(r"[说他她它们的是在和跟都也不很最就又还要会想刚去来把被给]")
_ONE_CHAR_ACT = re.compile(r"[\u4e00-\u9fff](?:了|过|着)")
"""A character and its aspect after one more: a two-character verb ("迷上了", "考过了"), not a name and a verb."""


_NAMED_BY_EN = re.compile(
    r"\b(?:says?|said) (?:that )?(?:it'?s|it is|it was)\b"  # "the doctor says it's X"
    r"|\b(?:says?|said) (?!(?:I|we|they|he|she|it|that|this)\b)(?:[a-z]+ )?(?!(?:is|are|was|were)\b)[a-z]+(?:[,.;]|$)"
    r"|\b(?:calls? it|called it|diagnosed)\b|\ba name (?:on|to|for) it\b",
    re.I,
)
_PRONOUN_FIRST = re.compile(r"\s*(?:she|he|they|we|I)\b", re.I)
_ADVICE_EN = re.compile(
    r"\b(?:you|should|must|need to|have to|has to|avoid|only|no|not|never|stop|keep|try|don't|can't|cannot)\b", re.I
)


def names_a_condition(clause: str) -> bool:
    """Whether a reported clause only names what someone has ("the optometrist says it's night blindness").

    A clause that advises or forbids ("the dentist says soft foods only") is what someone wants, not a fact.
    """
    by_someone_named = not _PRONOUN_FIRST.match(clause)  # "she said it rocks": whose words, about what, is unsaid
    return by_someone_named and bool(_NAMED_BY_EN.search(clause)) and not _ADVICE_EN.search(clause)


@dataclass(frozen=True)
class Subject:
    entity: str
    text: str  # the sentence as the patterns see it: first person ("My sister Maya is ..." -> "I am ...")
    mention: str = ""  # how the sentence names the person ("My sister Maya", "我女儿 Luna", "Felix")
    restated: str = ""  # a clause led by a pronoun, with the person named instead ("she plays…" -> "Maya plays…")
    reported: bool = False  # someone else's name for what the person has ("the optometrist says it's night blindness")


def add_elided_i(text: str) -> str:
    text = _unshouted(text)
    lead = text.split(maxsplit=1)[0] if text.strip() else ""
    changed = lead.casefold().endswith("ed") and states_a_change(lead)  # "Upgraded to…" is done, not undergone
    if _ELIDED_I.match(text) or _ELIDED_IRREGULAR.match(text) or changed:  # "Moved to Leeds", "had my teeth out"
        return "I " + text[:1].lower() + text[1:]
    if _ELIDED_AM.match(text) or _ELIDED_DOING.match(text):  # "Allergic to sesame", "Still restoring the…"
        return "I am " + text[:1].lower() + text[1:]
    return "I " + text[:1].lower() + text[1:] if _ELIDED_PAST.match(text) else text  # "Adopted a cat"


_ELIDED_IRREGULAR = re.compile(
    r"^(?:(?:just|finally|recently|also) )?(?:had|did|saw|ran|won|wrote|paid|spent|kept|built|broke|caught|taught"
    r"|brought|tried|passed|failed|finished)\s+(?!(?:you|he|she|they|it|we|I|to|by|of)\b)\w",
    re.IGNORECASE,
)
"""A past verb that carries an object, its "I" dropped ("had my wisdom teeth out", "Did my first 10k")."""
_ELIDED_DOING = re.compile(
    r"^(?:(?:still|also|just|mostly|currently|now|really|finally) )?(?<![A-Za-z])[A-Za-z]{2,}ing\s+"
    r"(?=(?:to|about|on|at|for|a|an|the|my|our|some|up|out|in|with|into|through|this|that|more|less|back|off"
    r"|over|like|\d+)\b|(?-i:[A-Z]))(?![^,.;!?]*\b(?:is|are|was|were|takes|(?-i:I))\b)",
    re.IGNORECASE,
)
"""A clause led by what the speaker is doing ("Still restoring the Bonneville…", "Planning to repaint…"), not a
noun ending in -ing ("Wedding prep is…": a copula follows; "Morning run done": no object), nor a lead before the
clause's own "I" ("Starting in May I live in Oslo"), nor a doing that is the subject (:data:`_DOING_TAKES`)."""
_THE_PLAN_OFF = re.compile(
    r"^the\s+(?:[a-z]+\s+){1,3}?(?:(?:is|was|got|has\s+been)\s+(?:cancell?ed|called\s+off|scrapped)|fell\s+through)\b",
    re.IGNORECASE,
)
"""A clause that calls off something it names with "the" ("The move got cancelled."): said to the assistant,
the speaker's news, as "Our move fell through" is."""
_DOING_TAKES = re.compile(r"^(?<![A-Za-z])[A-Za-z]{2,}ing\b[^,.;!?]*?\btakes\b", re.IGNORECASE)
"""A clause whose subject is a doing, measured by the time it takes ("Cycling to the office takes 20 minutes"):
said to the assistant without naming anyone, the doing is the speaker's."""
_SHOUTED = re.compile(r"\b[A-Z]{2,}\b")


def _unshouted(text: str) -> str:
    """A sentence in capitals ("FINALLY PASSED MY SCUBA CERTIFICATION!!") in sentence case: its words are the same."""
    words = re.findall(r"[A-Za-z]{2,}", text)
    if len(words) < 3 or len(_SHOUTED.findall(text)) < 0.8 * len(words):
        return text
    return text[:1] + text[1:].lower()


def _third_to_first(rest: str) -> str:
    verb, _, tail = rest.partition(" ")
    low = verb.casefold()
    if low in (irregular := {"is": "am", "'s": "am", "has": "have", "does": "do"}):
        verb = irregular[low]
    elif re.search(r"(?:ch|sh|ss|x|o)es$", low):
        verb = verb[:-2]
    elif low.endswith("ies"):
        verb = verb[:-3] + "y"
    elif low.endswith("s") and not low.endswith("ss") and low != "was":
        verb = verb[:-1]
    return f"I {verb} {tail}".strip()


_NAMED = re.compile(r"^(?P<name>[A-Z][a-z]+|[\u4e00-\u9fff]{2,3}?)(?P<pos>'s|的)?\s*(?P<rest>\S.*)$")


_EN_ONES_VERB = re.compile(
    r"^(?:is|has|[a-z]+[^\Ws]s)\b(?![:,])(?!\s+(?:are|were|have|had|do|did|can|will|would|got|went|paid|took|made|came|won|kept|grew|began"
    r"|[a-z]+ed)\b)"
)
"""A verb that agrees with one person ("wears", "takes", "is"), not "'s" ("Weight's at 185") nor a past, nor a
plural noun before the verb ("Winter lessons paid off": the name was a word that starts the sentence)."""
_EN_OWNED = re.compile(r"^[a-z]+(?<!ing)(?<!ed)\b")
"""A possessed noun after "'s" ("Hazel's swim lessons"), not a verb ("Comet's doing great", "Spokane's been")."""


def _names_someone(key: str, pos: str | None, rest: str) -> bool:
    """Whether a capitalized word at a sentence's start is someone's name (see :func:`_known_person`)."""
    if key in EN_PRONOUNS or key in EN_FUNCTION_WORDS or key in EN_RELATIONS or canonical_entity(key) != key:
        return False
    if states_a_change(key):  # "Switched gyms to Jetts.": the speaker's news, its "I" dropped
        return False
    if EN_FIRST_PERSON.search(rest):  # "Big news: I got elected chair": the speaker's, under a heading
        return False
    word = rest.split(" ", 1)[0]
    if pos:
        return bool(_EN_OWNED.match(rest)) and word not in EN_FUNCTION_WORDS
    return bool(_EN_ONES_VERB.match(rest))


_RELATIVE_FIRST = re.compile(r"^(?:(?:" + _EN_REL + r")(?:-in-law)?s?\b|(?:" + ZH_REL + "))", re.IGNORECASE)


def _known_person(sentence: str, zh: bool, people: dict[str, str]) -> Subject | None:
    """A statement led by the name of someone the speaker already spoke of ("Felix 有哮喘", "Mia uses Lyft").

    In English, also a name not spoken of before, when the verb after it agrees with one person ("Kevin wears
    Le Labo", "Hazel's swim lessons are on Thursdays"): filed under the name until a relation is said.
    """
    m = _NAMED.match(sentence.strip() if zh else EN_INTRO.sub("", sentence.strip()))  # "so Tomasz sold…"
    key = romanize(m.group("name")).casefold() if m else ""
    entity = people.get(key)
    if entity is None and m is not None and not zh and _names_someone(key, m.group("pos"), m.group("rest")):
        entity = f"{PERSON}_{key}"
    if m is None or entity is None:
        return None
    rest, mention = m.group("rest"), m.group("name")
    if m.group("pos") and _RELATIVE_FIRST.match(rest):
        return None  # "Carmen's mom is moving in": about another person, not Carmen
    if zh:
        return Subject(entity, ("我的" if m.group("pos") else "我") + rest, mention)
    return Subject(entity, "my " + rest if m.group("pos") else _third_to_first(rest), mention)


_HEADED = re.compile(r"^\s*(?P<head>[^:：,，.。!！?？]{2,40})[:：]\s*(?P<rest>\S.*)$", re.DOTALL)
"""A sentence under a short heading ("news from Nadia: she dropped out…", "晓雯的消息：她…")."""


def _named_in(head: str, people: dict[str, str]) -> Subject | None:
    """The one known person a heading names, as the person a pronoun after it means."""
    said = re.findall(r"[A-Za-z]+", head) + [w for w in chinese_spans(head) if len(w) > 1]
    found = {(people[key], "", word) for word in said if (key := romanize(word).casefold()) in people}
    return Subject(*found.pop()) if len(found) == 1 else None


_PRONOUN_IS = re.compile(r"^((?:(?:and|but|so)\s+)?(?:she|he))'s\b(?!\s+(?:got|been)\b)", re.IGNORECASE)
_PRONOUN = re.compile(r"^(?:(?:and|but|so)\s+)?(?:she|he)\s+(?P<rest>\S.*)$|^[她他](?P<zh>[^们的].*)$", re.IGNORECASE)


def _pronoun(sentence: str, zh: bool, last: Subject | None) -> Subject | None:
    """A clause led by "she"/"he"/"她"/"他", about the person of the clause before ("…, she plays viola")."""
    sentence = _PRONOUN_IS.sub(r"\1 is", sentence.strip())  # "she's doing keto now"
    if last is None or not last.mention or (m := _PRONOUN.match(sentence)) is None:
        return None
    if m.group("zh"):
        return Subject(last.entity, "我" + m.group("zh"), last.mention, f"{last.mention}{m.group('zh')}")
    rest = m.group("rest")
    if zh or rest is None:
        return None
    return Subject(last.entity, _third_to_first(rest), last.mention, f"{last.mention} {rest}")


_ZH_OBJECT = re.compile(_ZH_THIRD)
"""A third person inside a clause: someone else acts on them ("下周回去看她")."""


def _first_part(sentence: str) -> str:
    return re.split(r"[，,；;]", sentence, maxsplit=1)[0]


def _named_first(sentence: str) -> Subject | None:
    """The person a Chinese clause led by a diminutive name is about (``person_jie``: whose relation was not said)."""
    m = _ZH_NAME_FIRST.match(sentence)
    if m is None or m.group("name") in _ZH_NOT_NAMES:
        return None
    name = romanize(m.group("name"))
    if not name.isascii() or not name.isalpha():  # "小区", "老板": no given name's characters
        return None
    # No mention: a clause after it without a subject ("老马把铺子关了，现在锔钉都在网上买") is not taken as theirs.
    return Subject(f"{PERSON}_{name.casefold()}", "我" + m.group("rest"))


def clause_subject(
    sentence: str, zh: bool, speaker: str, people: dict[str, str], last: Subject | None = None
) -> Subject | None:
    """Who ``sentence`` is about (``last``: the person the clause before was about, for a pronoun)."""
    if (m := _HEADED.match(sentence)) and (topic := _named_in(m.group("head"), people)) is not None:
        return clause_subject(m.group("rest"), zh, speaker, people, topic)  # "news from Nadia: she dropped out…"
    if (known := _known_person(sentence, zh, people)) is not None:
        return known
    if (continued := _pronoun(sentence, zh, last)) is not None:
        return continued
    if zh:
        if "我" not in sentence and _ZH_FAMILY_FIRST.match(sentence):
            # A family word with no one's before it is the speaker's own: "孩子转到新学校了" is 我孩子.
            mine = clause_subject("我" + sentence, zh, speaker, people, last)
            return mine if mine is None or mine.restated else replace(mine, restated="我" + sentence)
        if "我" not in sentence and last is not None and last.mention and not _ZH_OBJECT.search(_first_part(sentence)):
            # A relative's news goes on without a subject: "我姐跳槽了！上周已经正式入职阿里" (not "…，下周去看她")
            return Subject(last.entity, "我" + sentence, last.mention, f"{last.mention}{sentence}")
        if "我" not in sentence and (named := _named_first(sentence)) is not None:
            return named
        if "我" not in sentence:
            # Chinese drops the subject it shares with the conversation: "拉丁舞课改到每周四晚上了" is the
            # speaker's news when it states a change and names no one else.
            if _ZH_ACT_FIRST.search(sentence) or _ZH_TOPIC_ACT.search(sentence):
                return Subject(speaker, "我" + sentence)
            if _ZH_DROPPED.search(sentence):  # "拉丁舞课改到每周四了": what changed is the speaker's
                acts = _ZH_CHANGE_FIRST.match(sentence)  # "换手机了": the speaker changed it
                return Subject(speaker, ("我" if acts else "我的") + sentence)
            if _ZH_ACT.search(sentence):
                return Subject(speaker, "我" + sentence)
            # Anything else said to the assistant that names no one else is the speaker's too, in their words
            # ("今天牙疼得厉害", "家里的路由器放在客厅"): kept as said when no rule reads it.
            remark = _ZH_NO_ONE.match(sentence) and not _ZH_ASKED.search(sentence) and not _ZH_REPLY.match(sentence)
            return Subject(speaker, sentence) if remark else None
        if m := ZH_PERSON.match(sentence):
            name, rest, start = m.group("name") or "", m.group("rest"), m.start("rest")
            if _NOT_NAME.search(name):
                return None
            if len(name) == 1 and _ONE_CHAR_ACT.match(rest):  # "我妈迷上了…": 迷上 is the verb, not a name
                name, rest, start = "", name + rest, m.start("name")
            rel = ZH_RELATIONS[m.group("rel")][0]
            name = romanize(name.strip()).casefold()  # "小芳" -> "fang", " Felix " -> "felix"
            mention = sentence[:start].rstrip()
            return Subject(f"{rel}_{name}" if name else rel, "我" + rest, mention)
        return Subject(speaker, sentence)
    text = EN_INTRO.sub("", sentence.strip())
    for pattern, repl in _EN_CONTRACTIONS:
        text = pattern.sub(repl, text)
    text = add_elided_i(text)
    if not EN_FIRST_PERSON.search(text):
        return Subject(speaker, text) if _DOING_TAKES.match(text) or _THE_PLAN_OFF.match(text) else None
    if m := _EN_PERSON.match(text):
        rel = canonical_entity(m.group("rel")) or ""  # "my mom" and "my mother" are one person
        name = (m.group("name") or "").casefold()
        rest = "my " + m.group("rest") if m.group("pos") else _third_to_first(m.group("rest"))
        mention = text[: m.end("name") if m.group("name") else m.end("rel")]
        return Subject(f"{rel}_{name}" if name else rel, rest, mention)
    return Subject(speaker, text)
