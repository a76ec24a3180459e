"""Chinese rule table: general constructions, one rule each (see ``_patterns`` for the machinery)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from langchain_lifecycle_memory.schema import normalize_value
from langchain_lifecycle_memory.vocabulary import AttributeSpec
from langchain_lifecycle_memory.write._change import ZH_CHANGED_TO
from langchain_lifecycle_memory.write._dates import ZH_WEEKS_AHEAD, starts_ahead
from langchain_lifecycle_memory.write._lexicon import (
    CITY_SUFFIX,
    LEX,
    NOT_OCCUPATION,
    ORG_SUFFIX,
    ZH_MEASURE,
    ZH_RELATIONS,
    ZH_TOPIC_VERBS,
    alternation,
    is_condition,
    is_term,
    lookup,
)
from langchain_lifecycle_memory.write._patterns import (
    ZADV,
    ZEND,
    ZH_VERB,
    ZS,
    ZV,
    Candidate,
    Rule,
    acceptable,
    head_noun,
    noun_attribute,
    owner,
    verb_slot,
    zh_concept,
    zh_rule,
)
from langchain_lifecycle_memory.write._patterns_en import occupation as english_job
from langchain_lifecycle_memory.write._slot_names import spec_named
from langchain_lifecycle_memory.write._values import ZH_LEADING, clean

__all__ = ["ZH_APPOSITIVE", "ZH_RULES"]

ZH_APPOSITIVE = re.compile("一" + ZH_MEASURE)
"""A noun phrase right after a fact's value, which describes it: "租来的车，一辆白色的起亚"."""

Specs = dict[str, AttributeSpec]
_GRADE = r"大[一二三四五]|研[一二三]|高[一二三]|初[一二三]|(?:小学|初中|高中)?[一二三四五六]年级"


def _alt(lex: str) -> str:
    terms = sorted((t for t in LEX[lex] if re.search(r"[\u3400-\u9fff]", t)), key=len, reverse=True)
    return "(?:" + "|".join(map(re.escape, terms)) + ")"


# ---- handlers ---------------------------------------------------------------------------------


_ROLE_CHANGE = re.compile(r"升职|晋升|升为|转(?:了)?[\u4e00-\u9fff]{0,3}岗|提拔|调岗|入职")
"""A change of role in the sentence: what follows "现在是" is the new title."""


_EN_TITLE = r"[A-Za-z][A-Za-z .&/-]{1,40}?"
"""An English title in a Chinese sentence, as long as English titles are ("我是 software engineer")."""


def _identity(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """我是(一名)X / 我是做X的: an occupation (by its word or ending), a diet, where the speaker is from."""
    if job := m.group("job"):
        yield Candidate("job", clean(job, zh), 80, m.start("job"), "profile")
        return
    value = clean(m.group("v"), zh)
    if not acceptable(value, zh) or normalize_value(value) in NOT_OCCUPATION:
        return
    if origin := re.fullmatch(r"([\u4e00-\u9fff]{2,4})人", value):
        yield Candidate("hometown", origin.group(1), 70, m.start("v"), "profile")
    elif is_term("diet", value):
        yield Candidate("diet", value, 85, m.start("v"), "profile")
    elif major := re.fullmatch(r"(.+?)专业(?:的)?(?:学生)?", value):
        yield Candidate("major", major.group(1), 75, m.start("v"), "profile")
    elif is_term("occupation", value, "<") or m.group("one") or _ROLE_CHANGE.search(m.string) or english_job(value):
        yield Candidate("job", value, 80, m.start("v"), "profile")  # "高级工程师" too: a level is part of the job


def _workplace(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """在X上班/工作/做Y: a city, or an organisation."""
    place = clean(m.group("v"), zh)
    if not acceptable(place, zh):
        return
    if place in LEX["city"] or CITY_SUFFIX.search(place):
        yield Candidate("city", place, 75, m.start("v"), "profile")
    else:  # an organisation or a place of work: one slot, where they work
        named = place in LEX["company"] or ORG_SUFFIX.search(place) or re.fullmatch(r"[A-Z][\w&.\- ]+", place)
        yield Candidate("employer", place, 80 if named else 70, m.start("v"), "profile")
    if role := m.group("role"):
        role = clean(role, zh)
        if acceptable(role, zh):
            yield Candidate("job", role, 75, m.start("role"), "profile")


def _job_taken(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """去X做Y了: where they work and as what, as 在X做Y says it, when Y is an occupation.

    "去物流公司做客服了", "去采购部当主管了"; not an errand ("去医院做检查了").
    """
    if is_term("occupation", clean(m.group("role"), zh), "<"):
        yield from _workplace(m, zh, specs)


def _condition(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """确诊/患有 X: whatever the diagnosis names; 有/得了/查出 X: X if it is a health condition (高血压, 胆结石)."""
    value = clean(m.group("v"), zh)
    if acceptable(value, zh) and (m.group("dx") or is_condition(value)):
        yield Candidate("medical_condition", value, 75, m.start("v"), "profile", cardinality="set")


def _generic_job(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """在(城市)一家/一所/一个<行业>(公司)做<角色>: the role in its industry, and the city."""
    industry = re.sub(r"(?:公司|企业|单位)$", "", m.group("ind").strip())
    role = clean(m.group("role"), zh)
    if acceptable(role, zh):
        yield Candidate("job", industry + role, 80, m.start("ind"), "profile")
    if city := m.group("place"):
        yield Candidate("city", city, 75, m.start("place"), "profile")


def _home(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """住在 / 搬到 X: the city (a known city or X市), else the district (X区), else X itself."""
    value = clean(m.group("v"), zh)
    if not acceptable(value, zh):
        return
    if prefix := next((c for c in sorted(LEX["city"], key=len, reverse=True) if value.startswith(c)), None):
        yield Candidate("city", prefix, 75, m.start("v"), "profile")
    elif re.search(r"[区县镇]$", value):
        yield Candidate("district", value, 75, m.start("v"), "profile")
    elif 2 <= len(value) <= 6:
        yield Candidate("city", value, 70, m.start("v"), "profile")


_ZH_AHEAD = f"(?:{ZH_WEEKS_AHEAD})?"
"""A time ahead between the speaker and the verb ("我下个月搬到…")."""


def _moving(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """要搬到 X: where the user is about to move (an event); the city from the date it names ("下个月要搬去X")."""
    for c in _home(m, zh, specs):
        yield c if starts_ahead(m.string) else Candidate("moving_to", c.value, c.priority, c.position, "event")


def _pet(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """养了一只X(，叫Y) / 我家X叫Y: an animal by its measure word (只/条/头/匹) or its name."""
    desc = ZH_LEADING.sub("", (m.group("desc") or m.groupdict().get("desc2") or "").strip())
    if not desc:
        return
    name = m.groupdict().get("name")
    yield Candidate("pet", name.strip() if name else desc, 85 if name else 70, m.start(), "profile")
    if is_term("dog_breed", desc, "<"):
        yield Candidate("dog_breed", desc, 75, m.start("desc"), "profile")


_PLANT = re.compile(r"^(?:[一两二三四五六七八九十几]|\d+)?(?:盆|株|棵)")
_BRAND_THING = re.compile(r"^(?P<brand>[^的]{2,12}?)的[\u4e00-\u9fff]{1,3}$")
_NAME_THEN_PURPOSE = re.compile(r"^(?P<name>[A-Za-z0-9][\w+#.' -]*?)\s*(?:来|去)?[\u4e00-\u9fff]{2,}$")


_DEST = re.compile(r"(?P<dest>通勤|上班|上学|去公司|去学校|回家|回老家)$")
_MODES = ("坐", "乘", "搭", "骑", "开", "开车", "走路", "打车", "骑车")


_CHANGED = re.compile(ZH_CHANGED_TO + r"|改去|换去")
"""A change inside an object ends it: "喝早茶都改去陶陶居" names no drink."""
_NEW_THING = re.compile(r"了?\s*(?:[一两]?" + ZH_MEASURE + "|[A-Z0-9])")
"""After 换: a measure word or a name starts the new thing ("换了台 Triumph"); a bare noun is what was replaced."""


def _habit(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """我(不再/改/每天/在/会)<动词>X: the verb's concept names the slot; 不再 retracts, 改 / 换成 replaces."""
    groups = m.groupdict()
    if groups.get("neg"):
        yield from _retract(m, zh, specs)
        return
    verb, raw = groups.get("verb") or "", m.group("v").strip()
    if verb in _MODES and (dest := _DEST.search(raw)):
        value = clean(raw[: dest.start()], zh)
        value = value if verb in "坐乘搭" else verb + value
        work = dest.group("dest") in ("通勤", "上班", "上学", "去公司", "去学校")
        if acceptable(value, zh):
            yield Candidate("commute" if work else "travel_mode", value, 75, m.start(), "fact")
        return
    if groups.get("change") == "换" and not verb and not _NEW_THING.match(raw):
        return  # "换工作到上海了", "换了 telco": 换 names what was replaced; "换成 X", "换了台 X", "改当 X" the new
    concept = zh_concept(verb) if verb else ("use" if groups.get("change") else None)
    if concept is not None:
        yield from _verb_object(m, zh, specs, verb, raw, concept)


def _verb_object(m: re.Match[str], zh: bool, specs: Specs, verb: str, raw: str, concept: str) -> Iterator[Candidate]:
    value = clean(raw, zh)
    if is_term("diet", verb + value):
        yield Candidate("diet", verb + value, 85, m.start("verb"), "profile")
        return
    if (brand := _BRAND_THING.match(value)) or (head_noun(value, specs) is None and _NAME_THEN_PURPOSE.match(value)):
        value = (brand or _NAME_THEN_PURPOSE.match(value)).group(1).strip()  # type: ignore[union-attr]
    if not acceptable(value, zh) or "的" in value or spec_named(value, specs) or value[0] in "不得":
        return  # "换手机了": the kind of thing changed; "听不惯": how it goes, no object
    if _CHANGED.search(value):
        return
    if verb == "养" and re.match(r"了?(?:[一两二三四五六七八九十几]|\d+)?(?:只|条|头|匹)", raw):
        return  # an animal: the pet rule names it
    if verb in ("养", "种") and _PLANT.match(raw.removeprefix("了")):
        yield Candidate("plant", value, 70, m.start("v"), "fact", cardinality="set", concept=concept)
        return
    if verb == "开" and re.match(r"了?(?:一)?(?:家|间)", raw):
        yield Candidate("business", value, 70, m.start("v"), "profile")
        return
    if verb == "开" and re.match(r"了?(?:一)?辆", raw):  # the measure word of vehicles: a car, whatever its make
        yield Candidate("car", re.sub(r"^二手", "", value), 70, m.start("v"), "fact")
        return
    change = bool(m.group("change"))
    attribute, value, cardinality = verb_slot(concept, value, specs)
    if change and not verb and not (head_noun(value, specs) or lookup(value)):
        attribute = "uses"
    if attribute in specs:
        cardinality = None
    yield Candidate(attribute, value, 90 if change else 65, m.start("v"), None, 0.75, "assert", False, cardinality,
                    concept, change)  # fmt: skip


def _like(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """喜欢 / 爱 (动词) X, or 不喜欢 / 讨厌 X."""
    value = clean(m.group("v"), zh)
    if not acceptable(value, zh) or "的" in value:
        return
    if m.group("neg") and m.string[m.end("v") :].lstrip().startswith("了"):
        # "我不喜欢看恐怖片了": the liking ended (不…了, as 不再), whatever slot holds it
        yield Candidate(None, value, 90, m.start("v"), confidence=0.8, operation="retract")
        return
    if m.group("neg"):
        yield Candidate("dislikes", value, 60, m.start("v"), "preference", cardinality="set")
        return
    if concept := zh_concept(m.group("verb") or ""):
        attribute, value, cardinality = verb_slot(concept, value, specs)
    elif found := head_noun(value, specs) or lookup(value):
        (attribute, value), cardinality = found, None
    else:
        attribute, cardinality = ("prefers" if m.group("pref") else "likes"), "set"
    if attribute in specs:
        cardinality = None
    yield Candidate(attribute, value, 60, m.start("v"), "preference", cardinality=cardinality, concept=concept)


def _retract(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """不再X / 不X了 / 戒了X / 停了X / 对X不过敏了: the value stopped being true."""
    groups = m.groupdict()
    if groups.get("neg") == "不" and not (groups.get("le") and groups.get("verb")):
        return  # "我不吃香菜" is a standing habit (see _avoid); "我不X了" without a verb of habit is anything
    value = clean(m.group("v"), zh)
    if not acceptable(value, zh) or "过敏" in value:
        return
    concept = zh_concept(groups.get("verb") or "")
    attribute: str | None
    if concept:
        attribute, value, _ = verb_slot(concept, value, specs)
    else:
        found = head_noun(value, specs) or lookup(value)
        attribute, value = found if found else (None, value)
    yield Candidate(attribute, value, 90, m.start("v"), confidence=0.8, operation="retract", concept=concept)


def _avoid(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """我不吃/不喝/不抽X (no 了): a standing habit of not doing something."""
    value = m.group("verb") + clean(m.group("v"), zh)
    if acceptable(value, zh):
        yield Candidate("avoids", value, 80, m.start("verb"), "profile", cardinality="set")


def _group(m: re.Match[str], *names: str) -> tuple[str, str]:
    """The first of ``names`` that matched, and its text (alternatives of one rule name their groups apart)."""
    return next(((n, m.group(n)) for n in names if m.groupdict().get(n)), (names[0], ""))


def _study(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """在读X / 上X (grade or school) / 学的是X / 专业是X (major) / 辅修X (minor)."""
    name, raw = _group(m, "v", "v2")
    value = clean(raw, zh)
    if not acceptable(value, zh):
        return
    word = m.group("w2") or ""
    if word == "辅修":
        attribute = "minor"
    elif word:
        attribute = "major"
    else:
        attribute = "grade" if re.fullmatch(_GRADE, value) else "school"
    yield Candidate(attribute, value, 80, m.start(name), "profile")


def _retract_object(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """戒了X / 停了X / 把X戒了 / 戒烟了 / X我戒了: X stopped, whatever slot holds it (its lexicon, else its slot)."""
    name, raw = _group(m, "v", "v2", "v3", "v4")
    value = clean(raw, zh)
    if not (acceptable(value, zh) or name == "v3" and value):  # 戒烟, 戒酒: one character is the whole object
        return
    found = head_noun(value, specs) or lookup(value)
    attribute, value = found if found else (None, value)
    yield Candidate(attribute, value, 90, m.start(name), confidence=0.8, operation="retract")


def _allergy(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """对X过敏 (assert), 不再对X过敏 / 对X不过敏了 (retract), 对X不过敏 (nothing)."""
    groups = m.groupdict()
    value = clean(m.group("v"), zh)
    if not acceptable(value, zh):
        return
    if groups.get("neg") or groups.get("neg2") and groups.get("le"):
        yield Candidate("allergy", value, 90, m.start("v"), confidence=0.8, operation="retract")
    elif not groups.get("neg2"):
        yield Candidate("allergy", value, 85, m.start("v"), "profile")


# What stands between 我 and 的 makes the thing someone else's or an opinion ("我同事的车", "我觉得他的问题").
_NOT_MINE = re.compile(r"[他她它你您]|觉得|认为|以为|想|说|" + alternation(ZH_RELATIONS))


def _copula(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """我(…)的N是X / X是我(最喜欢)的N: the noun names the slot; 我叫X: the name.

    Between 我 and 的 may stand what relates the thing to the speaker: "我常去的理发店", "我在健身房的私教".
    """
    name, raw = _group(m, "v", "v2", "v3")
    value = owner(clean(raw, zh))
    if not acceptable(value, zh):
        return
    if name == "v3":
        yield Candidate("name", value, 90, m.start(name), "profile")
        return
    mod = m.groupdict().get("mod") or ""
    if _NOT_MINE.search(mod) or (mod and raw.endswith("的")):
        return  # "我觉得他的问题是…", "我同事的车是…": not the speaker's own; "我们家的保险是找刘姐买的": how, not what
    noun = m.group("n") or m.group("n2")
    favorite = bool(re.search(r"最喜欢|最爱", m.group(0)))
    if attribute := noun_attribute(noun, value, specs, favorite):
        yield Candidate(attribute, value, 75, m.start(name))


def _bare_copula(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """我N是X without 的 ("我手机是小米14"): only for a noun the vocabulary names ("我现在是" names nothing)."""
    value = owner(clean(m.group("v"), zh))
    if (attribute := spec_named(m.group("n"), specs)) is not None and acceptable(value, zh):
        yield Candidate(attribute, value, 75, m.start("v"))


def _commute(m: re.Match[str], zh: bool, specs: Specs) -> Iterator[Candidate]:
    """坐/骑/开车 X 上班 (commute) or 回家/回老家 (how the speaker travels home)."""
    verb, value = m.group("verb"), clean(m.group("v") or "", zh)
    value = value if verb in "坐乘搭" else verb + value
    if acceptable(value, zh):
        work = m.group("dest") in ("通勤", "上班", "上学", "去公司", "去学校")
        yield Candidate("commute" if work else "travel_mode", value, 75, m.start(), "fact")


# ---- the rules --------------------------------------------------------------------------------

_ZPET = "(?:" + "|".join(sorted((t for t in LEX["pet"] | LEX["dog_breed"] if re.search(r"[\u4e00-\u9fff]", t)),
                                key=len, reverse=True)) + ")"  # fmt: skip
_ZNUM = r"(?:(?:[一两二三四五六七八九十几]|\d+)?(?:只|条|头|匹|个))?"
_ZNUMERAL = r"\d{1,3}|[一二三四五六七八九十两百]{1,4}"
_ZH_USED = "(?:" + ZH_TOPIC_VERBS + "的)?"
"""Topic and comment: "手机用的是 X", "车开的是 X" name the slot by the topic noun, as "手机是 X" does."""
_NOT_LE = r"\s*(?=$|[，,。！!？?；;、~～]|呢|啦|吧|哦)"

ZH_RULES: tuple[Rule, ...] = (
    # negation and retraction without a verb of habit; standing habits of not doing something
    zh_rule(ZS + r"(?:把(?P<v>[^，,。]{1,10}?)(?:戒|停)(?:了|掉了)|(?:戒了|戒掉了|停了|停掉了)"
            + ZV.replace("v>", "v2>") + ZEND + r"|戒(?P<v3>[\u4e00-\u9fff])(?:了|掉了))"
            r"|(?:^|[，,])(?P<v4>[^，,。！!？?我]{1,10}?)(?<![让叫要劝帮给])我(?:已经|早就|早)?(?:戒|停)(?:了|掉了)",
            handler=_retract_object),
    zh_rule(ZS + r"(?:从来|从不|一直)?不(?:太|怎么|大)?(?:能)?(?P<verb>吃|喝|抽)"
            r"(?P<v>(?:(?!了)[\u4e00-\u9fffA-Za-z]){1,8}?)" + _NOT_LE, handler=_avoid),
    # copula and possession, names, ages, allergies, conditions
    zh_rule(r"我(?P<mod>(?:们家|家)?[^，,。！!？?；;、是的\s]{0,8}?)的"  # "我常去的理发店是…", "我的 mentor 是…"
            r"(?P<n>[\u4e00-\u9fff]{1,6}?|\s*[A-Za-z][A-Za-z -]{0,24}?\s*)(?:都|也|就|还)?" + _ZH_USED
            + r"(?:是|叫)" + ZV + ZEND
            + r"|(?:^|[，,])(?P<v2>[^，,。是]{1,12}?)是我(?:最喜欢|最爱)?的(?P<n2>[\u4e00-\u9fff]{1,6})" + ZEND
            + r"|(?:^|[，,])我叫(?P<v3>[\u4e00-\u9fffA-Za-z]{1,10})", handler=_copula),
    zh_rule(r"(?:^|[，,])我(?P<n>[\u4e00-\u9fff]{2,5}?)" + _ZH_USED + "是" + ZV + ZEND, handler=_bare_copula),
    zh_rule(r"(?:" + ZS + r"|(?:^|[，,])(?:现在|目前|如今)?)(?:是|当)(?P<one>一名|一位|名|位)?(?:一个|个)?\s*"
            r"(?:(?:做|搞|干)(?P<job>[^，,。]+?)的|(?P<v>" + _EN_TITLE + r"|[^，,。！!？?；;、]{2,12}?)" + ZEND + ")",
            handler=_identity),
    zh_rule(ZS + r"(?P<neg>不再|已经不|再也不)?(?:只|仅)?对\s*(?P<v>[^，,。！!？?]+?)\s*" + ZADV
            + r"(?P<neg2>不再|不)?过敏(?P<le>了)?", handler=_allergy),
    zh_rule(ZS + r"(?P<v>[^不没，,。\s][\u4e00-\u9fff]{0,5}?)" + ZADV + r"(?<![不没])过敏", "allergy", priority=80),
    zh_rule(ZS + r"(?:(?P<dx>确诊(?:了|为)?|被诊断(?:为|出)?|患有|患上了?)|有(?!点|些|一点)|得了|查出(?:了|来)?)\s*"
            r"(?P<v>[^，,。！!？?；;]{1,12}?)" + ZEND, handler=_condition),
    zh_rule(ZS + r"(?:今年)?(?P<v>" + _ZNUMERAL + r")岁", "age", priority=80, kind="profile"),
    # pets
    zh_rule(r"(?:我(?:家里?)?|(?:^|[，,])家里)" + ZADV + r"(?:养了|养着|养|有|新养了|领养了)"
            r"(?:(?P<num>[一两二三四五六七八九十几]|\d+)?"
            r"(?:只|条|头|匹)(?P<desc2>[\u4e00-\u9fff]{1,4}?)(?=$|[，,。！!？?\s]|叫|名叫|它|她|他)|" + _ZNUM
            + r"(?P<desc>" + _ZPET + r"))"
            r"(?:[，,]?\s*(?:它|她|他)?(?:叫|名叫|名字叫|取名叫?|叫做)(?P<name>[^，,。！!？?\s]{1,8}))?", handler=_pet),
    zh_rule(r"我家(?:的)?(?P<desc>" + _ZPET + r")(?:叫|名叫|名字叫)(?P<name>[^，,。！!？?\s]{1,8})", handler=_pet),
    # work, study, home
    zh_rule(ZS + r"在(?P<place>" + _alt("city") + r")?(?:的)?一[家个所间座](?P<ind>[^，,。]+?)(?:做|当|干)"
            r"(?P<role>[^，,。]+?)" + ZEND, handler=_generic_job),
    # "我是工程师，在谷歌工作": the subject of the clause before carries on after its comma
    zh_rule(r"(?:" + ZS + r"|(?<=[，,]))在(?P<v>[^，,。一\s在]{2,12}?)(?:(?:做|当|干)(?P<role>[^，,。]{2,8}?)" + ZEND
            + r"|上班|工作|任职|实习)", handler=_workplace),
    # a new employer: "跳槽到X", "入职X", "去X上班了" (then "，做Y" the role)
    zh_rule(ZS + r"(?:(?:跳槽|跳)(?:去|到)了?|入职(?:了)?)\s*(?P<v>[^，,。！!？?\s在去]{2,12}?)\s*了?"
            r"(?:[，,]\s*(?:做|当|干)(?P<role>[^，,。]{2,8}?))?" + ZEND, handler=_workplace),
    zh_rule(ZS + r"去(?P<v>[^，,。！!？?\s在去]{2,12}?)\s*上班了(?P<role>)" + ZEND, handler=_workplace),
    zh_rule(ZS + r"去(?P<v>[^，,。！!？?\s在去做当干]{2,12}?)\s*(?:做|当|干)(?P<role>[^，,。！!？?\s了]{2,8}?)了"
            + ZEND, handler=_job_taken),
    zh_rule(r"(?:" + ZS + r"(?:在读|读|上)(?P<v>" + _GRADE + r"|高中|初中|小学|大学|研究生|博士|硕士|"
            r"[\u4e00-\u9fff]{2,10}?(?:大学|学院|中学|小学|学校))|(?:^|[，,]|我)(?:的)?(?P<w2>学的是|专业是|主修|辅修)"
            + ZV.replace("v>", "v2>") + ZEND + ")", handler=_study),
    zh_rule(ZS + _ZH_AHEAD + r"(?:住在|生活在|定居在?|搬到了?|搬去了?|搬家到了?|搬回了?|回到了?)" + ZV + ZEND,
            handler=_home),
    zh_rule(ZS + _ZH_AHEAD + r"就?(?:要|准备|打算|将|会)搬(?:家)?(?:到|去|回)" + ZV + ZEND, handler=_moving),
    zh_rule(r"我(?:的)?老家(?:是|在)" + ZV + ZEND, "hometown", priority=75, kind="profile"),
    # verbs of use and habit (with polarity and change), likes and dislikes
    zh_rule(ZS + r"(?:每周|每天|经常|常常|常|周末|平时|每个月|每周末)+(?:都)?去(?:[一两二三四五六七八九十几\d]+次)?"
            r"(?P<v>[\u4e00-\u9fff]{2,6}?)" + ZEND, "goes_to", priority=60, kind="preference", cardinality="set"),
    zh_rule(ZS + r"去?(?:练|打|踢|玩|搞)?(?P<v>" + _alt("sport") + "|" + _alt("hobby") + ")", cats=("sport", "hobby"),
            priority=65),
    zh_rule(ZS + r"(?:(?:写|做|画|剪|编|拍|记)[^，,。用]{1,12}?" + ZADV + r")?(?:(?P<neg>不再|再也不|再不|已经不|不)"
            r"|(?P<change>换成了?|改成了?|用上了?|换用|转用|改|换|开始))?(?:会)?(?:在|会|能)?(?P<verb>" + ZH_VERB
            + r"|开车|走路|打车|骑车|坐|乘|搭)?(?(neg)|(?(change)|(?(verb)|(?!))))(?:的是|着|过)?" + ZV + r"(?P<le>了)?"
            + ZEND, handler=_habit),
    zh_rule(ZS + r"(?:(?P<neg>不喜欢|不太喜欢|不爱|讨厌|受不了|反感)|(?P<pref>更喜欢|更爱|偏爱|偏好)"
            r"|喜欢|爱|钟爱|热爱|喜爱|迷上了?|爱上了?)"
            r"(?P<verb>使用|" + ZH_VERB + r"|出去)?" + ZV + ZEND, handler=_like),
)  # fmt: skip
