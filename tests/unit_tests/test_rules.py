"""The rule extractor (no model): public and dev turns, seed demo, negation, questions, people, PII, dates."""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory
from langchain_lifecycle_memory.schema import ensure_aware, normalize_value
from langchain_lifecycle_memory.vocabulary import AttributeSpec
from langchain_lifecycle_memory.write._dates import (
    absolute_dates,
    parse_model_date,
    resolve_ttl_days,
    resolve_valid_from,
)
from langchain_lifecycle_memory.write.extraction import create_rule_extractor, extract_rule_facts

SCENARIOS = Path(__file__).resolve().parents[2] / ".." / "shared" / "scenarios" / "public.jsonl"
NOW = datetime(2024, 3, 15, 10, 0, tzinfo=timezone.utc)


def _public_file() -> bool:
    """Whether the public sample is here; in CI (``LIFECYCLE_MEMORY_REQUIRE_SHARED``) its absence is an error."""
    if SCENARIOS.exists():
        return True
    if os.environ.get("LIFECYCLE_MEMORY_REQUIRE_SHARED"):
        msg = f"{SCENARIOS} not found (LIFECYCLE_MEMORY_REQUIRE_SHARED is set: CI always has it)"
        raise FileNotFoundError(msg)
    return False


def _turns() -> list[dict[str, Any]]:
    if not _public_file():
        return []
    turns = []
    for line in SCENARIOS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            scenario = json.loads(line)
            turns += [{**s, "scenario": scenario["id"]} for s in scenario["steps"] if s["type"] == "turn"]
    return turns


def _probes() -> list[str]:
    if not _public_file():
        return []
    return [
        step["query"]
        for line in SCENARIOS.read_text(encoding="utf-8").splitlines()
        if line.strip()
        for step in json.loads(line)["steps"]
        if step.get("query")
    ]


def _slots(text: str, at: str | None = None) -> set[tuple[str | None, str | None, str]]:
    facts = extract_rule_facts(text, now=ensure_aware(at) if at else NOW)
    return {(f.entity, f.attribute, normalize_value(f.value)) for f in facts if f.operation == "assert"}


def _value_scores(turns: list[dict[str, Any]]) -> tuple[int, int, int]:
    """``(gold, extracted, matched)``: a fact matches a gold fact of its turn by operation, user-or-other
    entity and value (normalised, one containing the other), as ``benchmarks/rule_extraction_eval.py``.

    Slot facts only: a statement kept as said (no slot, no value) is no value extraction."""
    gold = extracted = matched = 0
    for turn in turns:
        expected = list(turn.get("facts") or [])
        got = [f for f in extract_rule_facts(turn["user"], now=ensure_aware(turn["at"])) if f.value is not None]
        gold, extracted = gold + len(expected), extracted + len(got)
        for fact in got:
            hit = next((g for g in expected if _same(fact, g)), None)
            if hit is not None:
                expected.remove(hit)
                matched += 1
    return gold, extracted, matched


def _same(fact: Any, gold: dict[str, Any]) -> bool:
    a, b = normalize_value(fact.value).replace(" ", ""), normalize_value(gold["value"]).replace(" ", "")
    return (
        fact.operation == gold.get("operation", "assert")
        and (fact.entity == "user") == (gold["entity"] == "user")
        and bool(a and b)
        and (a in b or b in a)
    )


TURNS = _turns()
DEV = Path(__file__).resolve().parents[1] / "scenarios" / "dev_rules.jsonl"


@pytest.mark.skipif(not TURNS, reason=f"scenario file not found at {SCENARIOS}")
def test_public_turns_values_precision_and_recall() -> None:
    gold, extracted, matched = _value_scores(TURNS)
    assert matched / gold >= 0.8, f"value-level recall {matched}/{gold}"
    assert matched / extracted >= 0.9, f"value-level precision {matched}/{extracted}"


def test_dev_corpus_values_precision_and_recall() -> None:
    turns = [
        {**step, "scenario": scenario["id"]}
        for line in DEV.read_text(encoding="utf-8").splitlines()
        if line.strip()
        for scenario in [json.loads(line)]
        for step in scenario["steps"]
        if step["type"] == "turn"
    ]
    gold, extracted, matched = _value_scores(turns)
    assert matched / gold >= 0.8, f"value-level recall {matched}/{gold}"
    assert matched / extracted >= 0.95, f"value-level precision {matched}/{extracted}"


@pytest.mark.skipif(not TURNS, reason=f"scenario file not found at {SCENARIOS}")
@pytest.mark.parametrize("query", _probes())
def test_scenario_probe_queries_state_no_facts(query: str) -> None:
    assert extract_rule_facts(query, now=NOW) == []


def test_seed_demo_zh_and_en() -> None:
    extractor = create_rule_extractor()
    turns = [
        ("我喜欢使用 Vim 编辑器", "好的，已记录你的编辑器偏好。", ("Vim", "用户喜欢使用 Vim 编辑器")),
        ("我现在改用 VS Code 了", "明白，已更新你的工具偏好。", ("VS Code", "用户现在改用 VS Code 了")),
        ("I like using the Vim editor", "Got it.", ("Vim", "The user likes using the Vim editor.")),
        ("I've switched to VS Code now", "Understood.", ("VS Code", "The user has switched to VS Code now.")),
    ]
    for user, assistant, (value, content) in turns:
        slots = [("user", "editor", "Vim")]  # what the write path passes: the namespace's current slots
        [fact] = extractor.invoke({"messages": [HumanMessage(user), AIMessage(assistant)], "now": NOW, "slots": slots})
        assert (fact.entity, fact.attribute, fact.kind) == ("user", "editor", "preference")
        assert (fact.value, fact.content) == (value, content)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("I no longer use Vim.", "Vim"),
        ("I don't use Emacs anymore.", "Emacs"),
        ("我不再用 Vim 了。", "Vim"),
        ("I've stopped drinking coffee altogether, doctor's orders.", "coffee"),
        ("我已经不喝咖啡了。", "咖啡"),
    ],
)
def test_no_longer_without_replacement_is_a_retraction(text: str, value: str) -> None:
    [fact] = extract_rule_facts(text, now=NOW)
    assert (fact.operation, fact.value) == ("retract", value)
    assert fact.attribute in ("uses", "drink")  # the slot of the verb ("use", "drink")
    slots = [("user", "editor", "Emacs, Vim"), ("user", "drink", "咖啡")]
    [fact] = extract_rule_facts(text, now=NOW, slots=slots)
    assert fact.attribute in ("editor", "drink")  # the slot that holds the value


@pytest.mark.parametrize(
    ("text", "value"),
    [("I quit Instagram.", "Instagram"), ("我戒了电子烟。", "电子烟"), ("医生让我停了阿司匹林。", "阿司匹林")],
)
def test_quitting_retracts_the_slot_that_holds_the_value(text: str, value: str) -> None:
    slots = [("user", "uses", "Instagram"), ("user", "smokes", "电子烟"), ("user", "medication", "阿司匹林, 二甲双胍")]
    [fact] = extract_rule_facts(text, now=NOW, slots=slots)
    assert (fact.operation, fact.value) == ("retract", value)
    assert fact.attribute == next(a for _, a, v in slots if value in v)


@pytest.mark.parametrize(
    "text",
    [
        "I don't like Vim.",
        "I do not like coffee.",
        "I never liked tea.",
        "我不喜欢 Vim。",
        "我不太喜欢喝咖啡。",
        "I'm not allergic to peanuts.",
        "I'm not a fan of Liverpool.",
        "If I lived in Paris I would drink wine.",
        "如果我住在北京，我会天天喝豆浆。",
        "我对花生不过敏。",
    ],
)
def test_negated_or_hypothetical_statements_give_no_positive_fact(text: str) -> None:
    for fact in extract_rule_facts(text, now=NOW):
        if fact.slot is not None:
            assert fact.attribute == "dislikes"
        else:  # kept as said, its negation and all
            assert re.search(r"\bnot\b|\bnever\b|n't|不|没", fact.content), fact.content


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I have a bad knee from an old skiing accident.", "The user has a bad knee from an old skiing accident."),
        ("我有点怕高，坐飞机也紧张。", "用户有点怕高，坐飞机也紧张"),
        ("This week I'm only eating soup because of my tooth.", "This week the user is only eating soup"),
    ],
)
def test_a_statement_no_rule_understands_is_kept_as_said(text: str, kept: str) -> None:
    [fact] = extract_rule_facts(text, now=NOW)
    assert fact.slot is None and fact.content.startswith(kept)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Finally signed up for Crunchyroll so I can keep up.", "The user finally signed up for Crunchyroll"),
        ("Recently rejoined the climbing gym downtown.", "The user recently rejoined the climbing gym"),
    ],
)
def test_a_past_tense_act_led_by_an_adverb_is_the_speakers(text: str, kept: str) -> None:
    """Chat drops the "I" before "finally signed up…" as before "signed up…"."""
    assert any(f.content.startswith(kept) for f in extract_rule_facts(text, now=NOW))


def test_a_person_known_only_from_a_statement_kept_as_said_is_known_later() -> None:
    """ "Theo switched…" is about the son the user named before, though that statement filed no slot."""
    assert not extract_rule_facts("Theo switched to the Brightside after-school program.", now=NOW)
    slots = [("son_theo", "", None)]  # what the write path passes for a person with no slot yet
    facts = extract_rule_facts("Theo switched to the Brightside after-school program.", now=NOW, slots=slots)
    assert [f.entity for f in facts] == ["son_theo"] and "Brightside" in facts[0].content
    # Someone else of theirs is not them: "Carmen's mom is moving in" says nothing about Carmen.
    known = [("wife_carmen", "", None)]
    assert extract_rule_facts("Carmen's car is a Tesla.", now=NOW, slots=known)[0].entity == "wife_carmen"
    theirs = extract_rule_facts("Carmen's mom is moving in.", now=NOW, slots=known)
    assert all(f.entity != "wife_carmen" for f in theirs)


@pytest.mark.parametrize(
    "text",
    [
        "Thanks, that helps!",
        "I see.",
        "My friend says Vim is great.",
        "I would like a coffee please.",
        "我是不是应该换个编辑器",
    ],
)
def test_chit_chat_requests_and_reported_speech_are_not_kept(text: str) -> None:
    assert extract_rule_facts(text, now=NOW) == []


@pytest.mark.parametrize(
    ("text", "attribute", "value"),
    [
        ("我平时去的菜市场是东门菜场。", "菜市场", "东门菜场"),
        ("我在公司的导师是老孙。", "导师", "老孙"),
        ("我们家常用的快递是顺丰。", "快递", "顺丰"),
    ],
)
def test_what_stands_between_i_and_de_relates_a_thing_to_the_speaker(text: str, attribute: str, value: str) -> None:
    [fact] = extract_rule_facts(text, now=NOW)
    assert (fact.entity, fact.attribute, fact.value) == ("user", attribute, value)


@pytest.mark.parametrize("text", ["我觉得他的问题是太懒。", "我同事的车是特斯拉。", "我们家的保险都是找刘姐买的。"])
def test_an_opinion_someone_elses_thing_or_a_how_is_not_the_speakers_slot(text: str) -> None:
    assert all(f.entity != "user" or f.attribute is None for f in extract_rule_facts(text, now=NOW))


@pytest.mark.parametrize(
    ("text", "attribute", "value"),
    [
        ("I don't like Vim.", "dislikes", "Vim"),
        ("我不吃香菜。", "avoids", "吃香菜"),
        ("I never drink.", "avoids", "alcohol"),
    ],
)
def test_dislikes_and_standing_habits_are_their_own_slots(text: str, attribute: str, value: str) -> None:
    [fact] = extract_rule_facts(text, now=NOW)
    assert (fact.attribute, fact.value, fact.operation) == (attribute, value, "assert")


@pytest.mark.parametrize(
    "text",
    [
        "What editor do I use?",
        "我适合用什么工具写 Python？",
        "Can you recommend a good editor for me",
        "我是不是应该换个编辑器",
        "Thanks, that's helpful!",
        "I like that idea.",
        "I love it!",
        "I'd like a coffee please.",
        "I have a question about Python.",
        "I'm going to bed.",
        "我喜欢你。",
        "好的，谢谢！",
        "我在家。",
        "我去机场接人。",
        "忘掉我喝黑咖啡的习惯",
        "My friend says Vim is great.",
        "He lives in London.",
    ],
)
def test_questions_requests_and_chit_chat_yield_nothing(text: str) -> None:
    assert extract_rule_facts(text, now=NOW) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My sister Maya is a dentist.", ("sister_maya", "job", "dentist", "The user's sister Maya is a dentist.")),
        ("我太太小芳是小学老师。", ("wife_fang", "job", "小学老师", "用户的太太小芳是小学老师")),
        ("My colleague Li uses Cursor for everything.", ("colleague_li", "uses", "Cursor", None)),
        ("My brother-in-law Mark lives in Galway.", ("brother_in_law_mark", "city", "Galway", None)),
        ("我姐姐小云每天都喝普洱。", ("sister_yun", "tea", "普洱", "用户的姐姐小云每天都喝普洱")),
        ("我哥哥在深圳工作。", ("brother", "city", "深圳", "用户的哥哥在深圳工作")),
    ],
)
def test_other_people_get_their_own_entities(text: str, expected: tuple[str, str, str, str | None]) -> None:
    [fact] = extract_rule_facts(text, now=NOW)
    assert (fact.entity, fact.attribute, fact.value) == expected[:3]
    if expected[3]:
        assert fact.content == expected[3]


@pytest.mark.parametrize(
    ("text", "entity"),
    [("我女儿朵朵这学期报了拉丁舞。", "daughter_duoduo"), ("我儿子乐乐昨天学会了游泳。", "son_lele")],
)
def test_a_time_word_after_a_relatives_name_is_not_part_of_it(text: str, entity: str) -> None:
    """ "朵朵这学期…": the name ends where a time word ("这学期", "昨天") begins."""
    assert {f.entity for f in extract_rule_facts(text, now=NOW)} == {entity}


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("右手腱鞘炎又犯了，拿鼠标都疼。", "腱鞘炎"),  # no subject: the speaker's, in their words
        ("阳台漏水，物业说下周才能来修。", "阳台漏水"),
        ("老陈说他下个月要去成都出差。", None),  # names someone else
        ("今晚吃什么好呢？", None),  # a question
    ],
)
def test_a_chinese_statement_that_names_no_one_else_is_the_speakers(text: str, kept: str | None) -> None:
    facts = [f for f in extract_rule_facts(text, now=NOW) if f.entity in (None, "user")]
    assert [kept in f.content for f in facts] == ([True] if kept else [])


@pytest.mark.parametrize(
    ("text", "entity"),
    [
        ("我表哥转行做程序员了。", "cousin"),
        ("我舅舅跳槽去了私立医院。", "uncle"),
        ("我侄子小凯转学去了实验中学。", "nephew_kai"),
    ],
)
def test_a_change_verb_after_a_relation_is_what_they_did_not_their_name(text: str, entity: str) -> None:
    """ "表哥转行…" is the cousin changing careers, not a cousin named 转行."""
    assert {f.entity for f in extract_rule_facts(text, now=NOW)} == {entity}


@pytest.mark.parametrize(
    ("text", "attribute", "value"),
    [
        ("我的手机号是 13761245093，有急事打这个。", "phone", "13761245093"),
        (
            "My email is dana.whitfield@example.com if you need to send me anything.",
            "email",
            "dana.whitfield@example.com",
        ),
        ("我的身份证号是 110101199003074518，帮我填表的时候用。", "id_number", "110101199003074518"),
        ("My phone number is +1 415 555 0132.", "phone", "+1 415 555 0132"),
    ],
)
def test_contact_and_id_data_is_sensitive(text: str, attribute: str, value: str) -> None:
    [fact] = extract_rule_facts(text, now=NOW)
    assert (fact.attribute, fact.value, fact.kind) == (attribute, value, "sensitive")
    assert value in fact.content


def test_change_statements_land_on_the_same_slot() -> None:
    before = extract_rule_facts("我最近早上喝燕麦拿铁。", now=NOW)
    after = extract_rule_facts("我最近早上改喝黑咖啡了，不加奶不加糖。", now=NOW)
    assert [f.slot for f in before] == [f.slot for f in after] == [("user", "drink")]
    assert after[0].value == "黑咖啡"


def test_english_content_is_a_standalone_third_person_sentence() -> None:
    facts = extract_rule_facts("By the way, I work as a data analyst at a logistics company.", now=NOW)
    assert [f.content for f in facts] == ["The user works as a data analyst at a logistics company."]
    [fact] = extract_rule_facts("I play the cello in a community orchestra.", now=NOW)
    assert fact.content == "The user plays the cello in a community orchestra."


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("I basically live at the climbing gym these days.", "The user basically lives at the climbing gym"),
        ("I supply restaurants with herbs.", "The user supplies restaurants with herbs."),
        ("I rely on my bike.", "The user relies on their bike."),
    ],
)
def test_an_adverb_before_the_verb_stays_as_it_is(text: str, content: str) -> None:
    """Any "-ly" adverb sits between the subject and its verb; "supply" and "rely" are the verbs themselves."""
    assert [f.content for f in extract_rule_facts(text, now=NOW)][0].startswith(content)


def test_relative_dates_resolve_against_the_conversation_time() -> None:
    [moved] = extract_rule_facts("上个月我搬到了上海", now=NOW)
    assert moved.valid_from is not None and (moved.valid_from.year, moved.valid_from.month) == (2024, 2)
    assert moved.content == "2024年2月用户搬到了上海"
    [back] = extract_rule_facts("Moved back to Seattle last week, the assignment ended.", now=NOW)
    assert (back.value, back.valid_from) == ("Seattle", NOW - timedelta(days=7))
    [plain] = extract_rule_facts("I live in Oslo.", now=NOW)
    assert plain.valid_from == NOW


def test_lifetime_hints_set_ttl_but_start_verbs_do_not() -> None:
    [craving] = extract_rule_facts("This week I'm really craving Thai food.", now=NOW)
    assert (craving.attribute, craving.value, craving.ttl_days) == ("craving", "Thai food", 7)
    [sofa] = extract_rule_facts("For now I'm staying at my sister's place.", now=NOW)
    assert (sofa.attribute, sofa.ttl_days) == ("staying_at", 14)
    [job] = extract_rule_facts("I started at Northwind Analytics this week.", now=NOW)
    assert (job.attribute, job.ttl_days) == ("employer", None)


def test_user_defined_attributes_name_slots_from_nouns() -> None:
    snack = AttributeSpec("favorite_snack", "snack they like most", "零食", "preference")
    [fact] = extract_rule_facts("我最喜欢的零食是薯片。", now=NOW, attributes=[snack])
    assert (fact.attribute, fact.value, fact.kind) == ("favorite_snack", "薯片", "preference")


def test_speaker_entity_is_configurable() -> None:
    [fact] = extract_rule_facts("I live in Oslo.", now=NOW, speaker_entity="alice")
    assert fact.slot == ("alice", "city")


@pytest.mark.parametrize(
    ("text", "days"),
    [("昨天", -1), ("last week", -7), ("3 days ago", -3), ("两周前", -14), ("上周五", -7), ("last Friday", -7)],
)
def test_resolve_valid_from_day_offsets(text: str, days: int) -> None:
    assert resolve_valid_from(text, NOW) == NOW + timedelta(days=days)  # NOW is a Friday


def test_resolve_valid_from_months_years_and_nothing() -> None:
    assert resolve_valid_from("去年", NOW) == NOW.replace(year=2023)
    assert resolve_valid_from("a few months ago", datetime(2024, 5, 31, tzinfo=timezone.utc)) == datetime(
        2024, 2, 29, tzinfo=timezone.utc
    )
    assert resolve_valid_from("I live in Oslo", NOW) is None
    assert absolute_dates("I moved here last month", NOW, zh=False) == "I moved here in February 2024"


@pytest.mark.parametrize(
    ("text", "ttl"),
    [("today", 1), ("今天", 1), ("这周", 7), ("for a month", 30), ("for two weeks", 14), ("this weekend", 3)],
)
def test_resolve_ttl_days(text: str, ttl: float) -> None:
    assert resolve_ttl_days(text) == ttl


@pytest.mark.parametrize(
    "text", ["I quit smoking! 30 days smoke-free today.", "我今天正式戒酒了。", "I stopped eating meat this week."]
)
def test_an_ending_dated_by_today_is_not_temporary(text: str) -> None:
    assert resolve_ttl_days(text) is None


def test_parse_model_date_is_lenient() -> None:
    assert parse_model_date("2024-02", NOW) == datetime(2024, 2, 1, tzinfo=timezone.utc)
    assert parse_model_date("2024-02-10T08:00:00Z", NOW) == datetime(2024, 2, 10, 8, tzinfo=timezone.utc)
    assert parse_model_date("not a date", NOW) is None


def test_an_appositive_after_the_value_stays_in_the_content() -> None:
    """ "a rental, a white Kia Niro EV": the noun phrase right after the value describes it; a new clause does not."""
    [rental] = extract_rule_facts(
        "This week I'm driving a rental, a white Kia Niro EV, while mine is in the shop.", now=NOW
    )
    assert "Kia Niro EV" in rental.content and "shop" not in rental.content
    [job] = extract_rule_facts("I work at Acme, a small robotics startup in Lyon.", now=NOW)
    assert job.value == "Acme" and "robotics startup in Lyon" in job.content
    [car] = extract_rule_facts("我这周开的是租来的车，一辆白色的起亚。", now=NOW)
    assert "起亚" in car.content


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("我没有驾照，出门全靠公共交通。", "用户没有驾照"),
        ("I don't own a car.", "The user doesn't own a car"),
        ("We rent our flat.", "The user rents"),
    ],
)
def test_negations_and_short_statements_are_kept_as_said(text: str, kept: str) -> None:
    [fact] = extract_rule_facts(text, now=NOW)
    assert fact.slot is None and fact.content.startswith(kept), fact.content


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I honestly don't go skydiving anymore.", "The user honestly doesn't go skydiving"),
        ("I usually haven't eaten lunch by noon.", "The user usually hasn't eaten"),
        ("I really can't parallel park.", "The user really can't parallel park"),
    ],
)
def test_a_contracted_negation_after_an_adverb_reads_in_the_third_person(text: str, kept: str) -> None:
    statement = " ".join(f.content for f in extract_rule_facts(text, now=NOW))
    assert statement.startswith(kept), statement  # not "dons't" / "havens't"


@pytest.mark.parametrize(
    "text", ["不用了，谢谢。", "没事，不着急。", "I like your idea.", "Play something relaxing for me.", "你说得对。"]
)
def test_replies_and_requests_to_the_assistant_are_not_kept(text: str) -> None:
    assert extract_rule_facts(text, now=NOW) == []


def test_a_statement_led_by_a_known_name_is_about_that_person() -> None:
    slots = [("son_theo", "school", "Kingsley Primary")]
    [zh] = extract_rule_facts("Theo 有哮喘，随身带着喷雾。", now=NOW, slots=slots)
    [en] = extract_rule_facts("Theo plays the cello in the school orchestra.", now=NOW, slots=slots)
    assert (zh.entity, en.entity) == ("son_theo", "son_theo")
    # Named earlier in the same message
    facts = extract_rule_facts("My sister Ines is a nurse. Ines works nights at the county hospital.", now=NOW)
    assert [f.entity for f in facts] == ["sister_ines", "sister_ines"]
    # A name nobody spoke of is not the user's: someone whose relation was not said
    kevin = extract_rule_facts("Kevin rides his bike to the county hospital.", now=NOW, slots=slots)
    assert [f.entity for f in kevin] == ["person_kevin"]


@pytest.mark.parametrize(
    ("text", "attribute", "value"),
    [
        ("Also allergic to sesame, found out the hard way.", "allergy", "sesame"),  # the copula's subject elided
        ("我还会说一点俄语。", "language", "俄语"),  # a quantity word is not the value
    ],
)
def test_elided_subjects_and_quantity_words(text: str, attribute: str, value: str) -> None:
    [fact] = extract_rule_facts(text, now=NOW)
    assert (fact.entity, fact.attribute, fact.value) == ("user", attribute, value)


@pytest.mark.parametrize("typed", ["Traded my banjo at a pawnshop", "traded my banjo at a pawnshop"])
def test_a_past_verb_with_its_subject_dropped_is_the_speakers_in_lower_case_too(typed: str) -> None:
    [fact] = extract_rule_facts(typed, now=NOW)
    assert fact.content == "The user traded their banjo at a pawnshop."
    assert extract_rule_facts("need a new banjo", now=NOW) == []  # a wish, not a past verb


@pytest.mark.parametrize(
    ("text", "entity"),
    [
        ("我二女儿二妞在学手风琴。", "daughter_erniu"),  # which child, by birth order
        ("小女儿二妞在学手风琴。", "daughter_erniu"),  # and with the speaker left out
        ("我爷爷前年做了白内障手术。", "grandfather"),  # a time word after the relation is no name
        ("我老公倒没啥毛病。", "husband"),  # nor an adverb
    ],
)
def test_a_relative_is_who_the_relation_word_names_whatever_comes_before_or_after_it(text: str, entity: str) -> None:
    [fact] = extract_rule_facts(text, now=NOW)
    assert fact.entity == entity


def test_a_role_at_a_workplace_described_not_named_is_a_job() -> None:
    [fact] = extract_rule_facts("I'm a sous-chef at a ski lodge now", now=NOW)
    assert (fact.attribute, fact.value) == ("job", "sous-chef")
    assert all(f.attribute is None for f in extract_rule_facts("I'm a sucker for a good thriller", now=NOW))
    assert all(f.attribute is None for f in extract_rule_facts("I'm a regular at the ski lodge", now=NOW))


def test_a_past_verb_keeps_its_form_in_the_statement() -> None:
    [fact] = extract_rule_facts("I found a decent tailor across town", now=NOW)
    assert fact.content == "The user found a decent tailor across town."


@pytest.mark.parametrize("text", ["I'm not actually allergic to rye", "I'm NOT really allergic to rye after all"])
def test_a_negated_allergy_with_an_adverb_between_ends_the_allergy_and_asserts_none(text: str) -> None:
    [fact] = extract_rule_facts(text, now=NOW, slots=[("user", "allergy", "rye")])
    assert (fact.operation, fact.attribute, fact.value) == ("retract", "allergy", "rye")
    assert not any(f.operation == "assert" and f.attribute for f in extract_rule_facts(text, now=NOW))


def test_an_auxiliary_before_an_object_is_a_statement_before_a_subject_a_question() -> None:
    facts = extract_rule_facts("did a pottery course last spring, I'd never touched clay before", now=NOW)
    said = [f.content for f in facts]
    assert said == ["The user did a pottery course last spring.", "The user had never touched clay before."]
    assert extract_rule_facts("did you see the pottery course schedule", now=NOW) == []


def test_a_held_value_named_first_and_then_ended_is_retracted() -> None:
    slots = [("user", "instrument", "手风琴")]
    [fact] = extract_rule_facts("手风琴我好几年没碰，早就忘光了。", now=NOW, slots=slots)
    assert (fact.operation, fact.attribute, fact.value) == ("retract", "instrument", "手风琴")
    assert all(f.operation == "assert" for f in extract_rule_facts("手风琴我还在练。", now=NOW, slots=slots))


def test_what_someone_did_to_the_speaker_is_kept_as_the_speakers_statement() -> None:
    [fact] = extract_rule_facts("the dentist put me in a night guard", now=NOW)
    assert fact.content == "The dentist put the user in a night guard."
    assert extract_rule_facts("It reminded me of the botanical garden", now=NOW) == []  # no one acted on the speaker


def test_a_chinese_change_with_its_subject_dropped_is_the_speakers() -> None:
    [fact] = extract_rule_facts("陶艺课改到每周日下午了。", now=NOW)
    assert fact.entity is None and fact.content == "用户的陶艺课改到每周日下午了"
    assert extract_rule_facts("他搬到上海了。", now=NOW) == []  # someone else's move
    [remark] = extract_rule_facts("今天天气不错。", now=NOW)  # no change, no one: a remark that ends with the day
    assert remark.ttl_days == 1 and remark.slot is None


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("今年调薪了，现在月薪两万二。", "两万二"),  # "now" in a later clause
        ("健身房换了一家，如今每周去四次。", "四次"),
    ],
)
def test_a_chinese_statement_of_now_with_no_subject_is_the_speakers(text: str, kept: str) -> None:
    facts = extract_rule_facts(text, now=NOW)
    assert any(kept in f.content for f in facts), facts
    assert extract_rule_facts("她现在在杭州读研。", now=NOW) == []  # someone else's
    assert extract_rule_facts("我妹妹现在在杭州读研。", now=NOW)[0].entity == "sister"


@pytest.mark.parametrize(
    ("text", "entity", "kept"),
    [
        ("我哥哥 Felix 是 airline mechanic。", "brother_felix", "用户的哥哥 Felix 是 airline mechanic"),
        ("我的 e-reader 是 Boox Palma。", "user", "用户的 e-reader 是 Boox Palma"),  # an English noun names the slot
    ],
)
def test_a_mixed_sentence_is_read_in_the_language_of_its_subject(text: str, entity: str | None, kept: str) -> None:
    [fact] = extract_rule_facts(text, now=NOW)
    assert (fact.entity, fact.content) == (entity, kept)


@pytest.mark.parametrize(
    ("text", "employer"),
    [
        ("我跳槽去 Kestrelworks 了。", "Kestrelworks"),
        ("我入职星河科技了，试用期三个月。", "星河科技"),
        ("我去 Tallowmere 上班了。", "Tallowmere"),
        ("我去超市了。", None),  # going somewhere is no job
        ("我去一家冷链公司做客服了，挺累的。", "冷链公司"),
    ],
)
def test_a_chinese_move_to_a_new_employer_files_the_employer(text: str, employer: str | None) -> None:
    found = [f.value for f in extract_rule_facts(text, now=NOW) if f.attribute == "employer"]
    assert found == ([employer] if employer else [])


@pytest.mark.parametrize(
    ("text", "job", "place"),
    [
        ("我现在去采购部当主管了。", "主管", "采购部"),  # where, as 在采购部当主管 says it
        ("我去冷库当司机了。", "司机", "冷库"),
        ("我去医院做检查了。", None, None),  # an errand: what is done there is no occupation
        ("我去理发店做头发了。", None, None),
    ],
)
def test_going_to_work_somewhere_as_an_occupation_files_the_job(text: str, job: str | None, place: str | None) -> None:
    facts = extract_rule_facts(text, now=NOW)
    assert [f.value for f in facts if f.attribute == "job"] == ([job] if job else [])
    assert [f.value for f in facts if f.attribute == "employer"] == ([place] if place else [])


def test_a_chinese_sentence_with_english_nouns_files_what_its_copula_names(embeddings: Any, tmp_path: Path) -> None:
    """ "入职 Quillfeather 了，我的 mentor 是…" is built in Chinese (its later clause's subject is 我) though most of
    its words are English: the copula files the mentor, and the next mentor replaces the first in ``history()``."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_messages([("user", "入职 Quillfeather 了，我的 mentor 是 Wrenfield，人很 nice。")], "u", at="2024-02-05")
    memory.add_messages([("user", "调组了，我的 mentor 是 Thornbury 了。")], "u", at="2024-09-12")

    history = memory.history("u", "user", "mentor")
    assert [(r.value, r.status.value) for r in history] == [("Wrenfield", "archived"), ("Thornbury", "active")]
    block = memory.inject("我现在的 mentor 是谁？", "u", now="2024-09-20")
    assert "Thornbury" in block.text and "Wrenfield" not in block.text, block.text


@pytest.mark.parametrize(
    ("text", "pets"),
    [
        ("I work from my flat in Leeds.", []),
        ("My folks live in Tucson, I go home for Christmas every year.", []),
        ("My favourite band Queen is touring.", []),
        ("Say hi to my hamster Mochi!", ["Mochi"]),
        ("My tortoise's name is Sheldon.", ["Sheldon"]),
        ("I have a parrot named Kiwi.", ["Kiwi"]),
        ("I also have an iguana called Zephyr.", ["Zephyr"]),  # an adverb between "I" and the verb
        ("I still own two rabbits.", ["rabbit"]),
    ],
)
def test_a_name_after_my_is_a_pet_only_after_a_pet_word_or_a_naming_verb(text: str, pets: list[str]) -> None:
    assert [f.value for f in extract_rule_facts(text, now=NOW) if f.attribute == "pet"] == pets


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "My sister Kasia lives in Wrocław, she plays viola in a string quartet.",
            ("sister_kasia", "instrument", "viola", "The user's sister Kasia plays viola in a string quartet."),
        ),
        ("My brother Tom is a nurse. He lives in Leeds.", ("brother_tom", "city", "Leeds", None)),
        ("我女儿 Luna 也换了号，她现在用联通。", ("daughter_luna", "uses", "联通", "用户的女儿 Luna现在用联通")),
    ],
)
def test_a_pronoun_continues_the_person_before_it(text: str, expected: tuple[str, str, str, str | None]) -> None:
    entity, attribute, value, content = expected
    [fact] = [f for f in extract_rule_facts(text, now=NOW) if f.value == value]
    assert (fact.entity, fact.attribute) == (entity, attribute)
    assert content is None or fact.content == content  # the person is named, not "she"


@pytest.mark.parametrize(
    ("text", "entity"),
    [
        ("Update on Kasia: she plays viola in the youth orchestra now.", "sister_kasia"),
        ("晓雯的消息：她现在在浙大读研了。", "cousin_xiaowen"),
        ("刚收到晓雯的消息：她搬去杭州了。", "cousin_xiaowen"),
        ("Reminder: I play the cello on Sundays.", "user"),
        ("News from Kasia and Xiaowen: she moved to Lyon.", None),  # a heading naming two names no one
    ],
)
def test_a_pronoun_under_a_heading_is_the_person_the_heading_names(text: str, entity: str | None) -> None:
    known = [("sister_kasia", "city", "Wrocław"), ("cousin_xiaowen", "school", "复旦")]
    assert {f.entity for f in extract_rule_facts(text, now=NOW, slots=known)} == ({entity} if entity else set())


def test_a_pronoun_with_no_person_before_it_is_nobodys_fact() -> None:
    assert [f.value for f in extract_rule_facts("I met Anna yesterday, she is a dentist.", now=NOW)] == [None]


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Got an e-bike last month.", "The user got an e-bike in February 2024."),
        ("Moved to Leeds in May.", "The user moved to Leeds in May."),
        ("Bought a Tesla Model 3.", "The user bought a Tesla Model 3."),
        ("Finally started running again.", "The user finally started running again."),
        ("Allergic to sesame, found out the hard way.", "The user is allergic to sesame, found out the hard way."),
        ("Picked up a pothos at the farmers market.", "The user picked up a pothos at the farmers market."),
    ],
)
def test_a_sentence_led_by_a_past_tense_verb_is_the_speakers(text: str, content: str) -> None:
    assert [f.content for f in extract_rule_facts(text, now=NOW)][:1] == [content]


@pytest.mark.parametrize(
    ("text", "slots"),
    [
        ("I'm a sous-chef at Marlowe's Bistro.", [("job", "sous-chef"), ("employer", "Marlowe's Bistro")]),
        ("I'm an actuary at Aviva.", [("job", "actuary"), ("employer", "Aviva")]),
        ("I'm a regular at Joe's Cafe.", []),
    ],
)
def test_a_role_at_a_named_organisation_is_a_job(text: str, slots: list[tuple[str, str]]) -> None:
    assert [(f.attribute, f.value) for f in extract_rule_facts(text, now=NOW) if f.attribute] == slots


@pytest.mark.parametrize(
    "text",
    [
        "报了个周末的陶艺班，每周六下午上课。",  # a one-character verb with its aspect opens the clause
        "上个月把旧的 Kindle 送人了。",  # a disposal "把…": it has an agent, and no one else is named
        "下班路上一直在听《三体》的有声书。",  # a habit adverb before a verb
        "终于拿到驾照了，C1 的。",  # a completion adverb before a verb
        "车位租了一个地下的，每月三百。",  # a topic before the act, the act with its object
        "给豆豆报了个游泳班，周六上午。",  # a beneficiary before it
        "又订了一份《读者》，每月一本。",  # an adverb before the act
        "白天在一家物流公司做调度，晚上跑滴滴。",  # where the speaker works, the place first
    ],
)
def test_a_chinese_act_with_its_subject_dropped_is_the_speakers(text: str) -> None:
    facts = extract_rule_facts(text)
    assert facts, text
    assert all(f.entity in (None, "user") and f.content.startswith("用户") for f in facts), facts


def test_a_chinese_clause_about_someone_else_is_not_the_speakers() -> None:
    assert [f for f in extract_rule_facts("他每天都加班到十点。") if f.entity in (None, "user")] == []


@pytest.mark.parametrize("text", ["今天好冷啊。", "这家咖啡店的拿铁挺好喝的。", "地铁又晚点了。", "雨下了一整夜。"])
def test_a_chinese_remark_with_no_subject_is_the_speakers_weakest_evidence(text: str) -> None:
    """Said to the assistant with no subject, it is the speaker's remark; only the dropped subject says whose,
    so it ranks below every statement that names its speaker ("我每天都加班到十点")."""
    [remark] = extract_rule_facts(text)
    [named] = extract_rule_facts("我每天都加班到十点。")
    assert remark.entity is None and remark.confidence < named.confidence


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("我跑步一直穿 Brooks Ghost，缓震特别好。", "Brooks Ghost"),  # "特别" is no "别" (don't)
        ("我从小在家跟奶奶说闽南语。", "闽南语"),  # speaking a language is no reported speech
        ("我的韩语日常交流没问题。", "韩语"),  # "没问题" that ends a statement is a fact, not a reply
    ],
)
def test_a_chinese_statement_is_kept_when_its_words_only_look_like_doubt_or_reported_speech(
    text: str, kept: str
) -> None:
    assert any(kept in f.content for f in extract_rule_facts(text))


@pytest.mark.parametrize("text", ["没问题", "别告诉别人", "我妈说她下周来", "他说明天下雨"])
def test_replies_prohibitions_and_reported_speech_still_give_nothing(text: str) -> None:
    assert [f for f in extract_rule_facts(text) if f.entity in (None, "user")] == []


@pytest.mark.parametrize(
    ("text", "car"),
    [
        ("我开了B站大会员。", None),
        ("我开了一家花店。", None),
        ("我现在开比亚迪了。", "比亚迪"),
        ("I drive a Subaru.", "Subaru"),
    ],
)
def test_a_verb_that_also_means_open_names_a_car_only_when_its_object_is_one(text: str, car: str | None) -> None:
    assert next((f.value for f in extract_rule_facts(text) if f.attribute == "car"), None) == car


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("我手机是小米14，拍照还行。", ("smartphone", "小米14")),
        ("我生日是三月五号。", ("birthday", "三月五号")),
        ("我觉得他是好人。", None),  # no noun of the vocabulary before 是
        ("我今天是开车来的。", None),
    ],
)
def test_a_possession_without_de_names_the_slot_when_its_noun_is_known(text: str, slot: tuple[str, str] | None) -> None:
    """ "我手机是…" says what "我的手机是…" says; only a noun the vocabulary names makes it a slot."""
    found = [(f.attribute, f.value) for f in extract_rule_facts(text) if f.attribute]
    assert found == ([slot] if slot else [])


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Lately I've been going to Fenwick Pottery Studio on Thursdays.", "Fenwick Pottery Studio"),  # a habit
        ("We were going to the Alder Street farmers market every Sunday until it closed.", "Alder Street"),
    ],
)
def test_a_habit_of_going_somewhere_is_no_plan(text: str, kept: str) -> None:
    assert any(kept in f.content for f in extract_rule_facts(text))


@pytest.mark.parametrize("text", ["I'm going to sell my kayak.", "We're going to adopt a cat next spring."])
def test_a_plan_is_still_no_statement(text: str) -> None:
    assert extract_rule_facts(text) == []


def test_a_chinese_statement_without_its_subject_keeps_the_words_as_typed() -> None:
    """The speaker is put back as the subject; the rest is as typed (a model number keeps its space)."""
    (fact,) = extract_rule_facts("网球课改到 Court 3 了。")
    assert "改到 Court 3 了" in fact.content and fact.content.startswith("用户")
    assert fact.evidence == "网球课改到 Court 3 了。"


@pytest.mark.parametrize(
    ("text", "kept", "left_out"),
    [
        ("这几天我膝盖疼，医生说别爬楼梯。", "膝盖疼", "爬楼梯"),  # what the doctor said is reported, not stated
        ("这周我出差在成都，可能周五才回来。", "出差在成都", "周五"),  # the guess after it is no statement
    ],
)
def test_a_chinese_statement_is_kept_without_the_reported_or_doubted_part_after_it(
    text: str, kept: str, left_out: str
) -> None:
    (fact,) = extract_rule_facts(text)
    assert kept in fact.content and left_out not in fact.content
    assert fact.evidence in text  # the whole clause, as said


@pytest.mark.parametrize(
    ("text", "kept", "left_out"),
    [
        ("体检说我缺铁，现在每天吃一片铁剂。", "每天吃一片铁剂", "缺铁"),  # what the user does after the report
        ("医生说我尿酸高，我就戒了啤酒。", "戒了啤酒", "尿酸"),
    ],
)
def test_a_chinese_statement_after_a_leading_report_is_kept(text: str, kept: str, left_out: str) -> None:
    facts = extract_rule_facts(text)
    assert any(kept in f.content for f in facts) and all(left_out not in f.content for f in facts)


@pytest.mark.parametrize("text", ["如果明天下雨，我就不去爬山了。", "可能下个月，我会换工作。"])
def test_a_chinese_statement_that_opens_with_doubt_is_still_not_kept(text: str) -> None:
    assert extract_rule_facts(text) == []


@pytest.mark.parametrize(
    ("text", "entity", "slot"),
    [
        ("老公最近在学滑雪。", "husband", ("learning", "滑雪")),
        ("姐姐在京东上班，做采购。", "sister", ("employer", "京东")),
    ],
)
def test_a_chinese_family_word_with_no_one_before_it_is_the_speakers_relative(
    text: str, entity: str, slot: tuple[str, str]
) -> None:
    """Chinese leaves out the 我 of 我老公: the statement is about the speaker's relative, not dropped."""
    found = [(f.entity, (f.attribute, f.value)) for f in extract_rule_facts(text) if f.attribute]
    assert (entity, slot) in found, found


@pytest.mark.parametrize("text", ["同事说明天下雨。", "妈说她下周来。"])
def test_what_a_relative_or_colleague_says_is_still_no_statement(text: str) -> None:
    assert extract_rule_facts(text) == []


@pytest.mark.parametrize("text", ["换了小区以后，快递都寄到门卫了。", "我换工作了，通勤远了一点。"])
def test_what_huan_replaced_is_no_value(text: str) -> None:
    # 换 + a bare noun names the kind of thing replaced, not what the speaker has now
    facts = extract_rule_facts(text, now=NOW)
    assert facts and all(f.value is None for f in facts), [(f.attribute, f.value) for f in facts]


@pytest.mark.parametrize(
    ("text", "value"), [("我换了台 Kestrel 400 跑步机", "Kestrel 400"), ("我换成 Thornbury 了", "Thornbury")]
)
def test_what_huan_brings_in_is_the_value(text: str, value: str) -> None:
    assert [f.value for f in extract_rule_facts(text, now=NOW) if f.value] == [value]


def test_a_chinese_change_verb_first_is_what_the_speaker_did() -> None:
    (fact,) = extract_rule_facts("换工作了，通勤远了一点。", now=NOW)
    assert fact.content.startswith("用户换工作了"), fact.content  # not "用户的换工作了"


def test_a_clause_after_a_comma_led_by_they_is_a_clause_of_its_own() -> None:
    # "…, they know exactly what I want": the wish word belongs to the second clause, the first is still kept
    facts = extract_rule_facts("I buy my sourdough at Wrenfold Bakery, they know exactly what I want.", now=NOW)
    assert any("Wrenfold Bakery" in f.content and "want" not in f.content for f in facts), [f.content for f in facts]


def test_an_english_subject_frames_a_mixed_sentence_and_its_chinese_tail_is_kept() -> None:
    (fact,) = extract_rule_facts("I love 肠粉, 每周都得吃一次。", now=NOW)
    assert (fact.attribute, fact.value) == ("likes", "肠粉")
    assert fact.content == "The user loves 肠粉, 每周都得吃一次.", fact.content  # not "用户I love 肠粉"
    (car,) = extract_rule_facts("My car is an old Sentra, 自动挡的, 我爸退休那年给我的。", now=NOW)
    assert "自动挡" in car.content and "我" not in car.content, car.content


def test_a_topic_and_comment_clause_names_the_slot_by_its_topic() -> None:
    facts = extract_rule_facts("我平时在家办公，笔记本电脑用的是华硕灵耀 14。", now=NOW)
    assert [(f.entity, f.attribute) for f in facts if f.attribute] == [("user", "laptop")], facts
    assert [f.attribute for f in extract_rule_facts("我的笔记本电脑用的是灵耀 14", now=NOW)] == ["laptop"]
    # after a clause about a relative, the topic clause is still theirs, not the speaker's
    (mom,) = extract_rule_facts("我妈刚退休，笔记本电脑用的是我淘汰的灵耀。", now=NOW)
    assert mom.entity != "user" and mom.attribute is None, mom


def test_a_plural_noun_before_a_verb_makes_the_first_word_no_name() -> None:
    # "Autumn classes started": a word that starts the sentence, not a person called Autumn
    assert not [
        f for f in extract_rule_facts("Autumn classes started again at the weaving studio.", now=NOW) if f.entity
    ]
    (fact,) = extract_rule_facts("Marisela teaches origami on Tuesdays.", now=NOW)
    assert fact.entity == "person_marisela", fact


def test_chinese_words_that_only_look_like_a_prohibition_or_an_object_keep_the_statement() -> None:
    # 别扭 is awkward, not 别 (don't); 听不惯 says how it sounds, it has no object
    (fact,) = extract_rule_facts("我是夜猫子，早起总觉得别扭。", now=NOW)
    assert "夜猫子" in fact.content, fact
    (fact,) = extract_rule_facts("收音机最近换成粤剧台了，那个评书我听不惯。", now=NOW)
    assert fact.value is None and "粤剧台" in fact.content, fact


def test_a_relative_after_a_coverb_leaves_the_speaker_as_the_subject() -> None:
    # "给爸妈买了…", "跟同事去…": the speaker acts for or with them
    (fact,) = extract_rule_facts("给爸妈订了粤剧的年票，一人一张。", now=NOW)
    assert fact.entity in (None, "user") and fact.content.startswith("用户给爸妈"), fact
    (mom,) = extract_rule_facts("妈妈订了粤剧的年票。", now=NOW)
    assert mom.entity == "mother", mom


@pytest.mark.parametrize("text", ["我妈订了粤剧的年票。", "我哥刚换过工作。"])
def test_a_relatives_act_with_any_verb_and_its_aspect_is_theirs(text: str) -> None:
    assert {f.entity for f in extract_rule_facts(text, now=NOW)} - {"mother", "brother"} == set(), text


def test_a_subjectless_chinese_act_is_the_speakers_though_a_later_clause_names_someone() -> None:
    # the first clause decides who acted: "又办了故宫年卡，孩子特别喜欢" is the speaker's act
    (fact,) = extract_rule_facts("又办了故宫年卡，孩子特别喜欢去。", now=NOW)
    assert fact.entity in (None, "user") and "故宫年卡" in fact.content, fact
    assert extract_rule_facts("孩子又办了故宫年卡。", now=NOW)[0].entity == "child"


def test_what_someone_did_for_the_speaker_is_a_statement_not_a_request() -> None:
    (fact,) = extract_rule_facts("公司给我配了一张 Wembley 年卡。", now=NOW)
    assert "Wembley" in fact.content, fact
    assert extract_rule_facts("给我讲讲 Wembley 的历史", now=NOW) == []


def test_a_clause_that_states_one_fact_keeps_all_it_says_about_it() -> None:
    # The name and place after the value are what a later question asks for ("我的工作室叫什么？")
    [studio] = extract_rule_facts("我开了家蜡染工作室，叫青布坊，就在古镇东头。", now=NOW)
    assert "青布坊" in studio.content and "古镇东头" in studio.content, studio.content
    [phone] = extract_rule_facts("My phone is a Pixel, the 8a, bought it used.", now=NOW)
    assert phone.value == "Pixel" and "8a" in phone.content, phone.content
    # Two facts in one clause: each keeps its own part
    facts = extract_rule_facts("I live in Tromsø, my sister lives in Bergen.", now=NOW)
    assert [f.content for f in facts] == ["The user lives in Tromsø.", "The user's sister lives in Bergen."]


@pytest.mark.parametrize("text", ["其他都挺好，就是最近在练竖笛", "其它还行，最近在练竖笛，嘴都吹麻了"])
def test_a_word_that_holds_a_pronoun_character_names_no_one(text: str) -> None:
    """其他 and 其它 ("other") hold 他 and 它 without meaning "he" or "it": the remark is still the speaker's."""
    facts = extract_rule_facts(text)
    assert facts and all(f.entity in (None, "user") for f in facts) and "竖笛" in facts[0].content


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("My cheeks flush red whenever I'm warm. The dermatologist says it's rosacea.", "rosacea"),
        ("My hands shake when I hold a pen. Essential tremor, the neurologist called it.", "tremor"),
        ("Shins ache after every run. The coach finally said shin splints.", "shin splints"),
        ("老是头晕耳鸣，医生说是梅尼埃病。", "梅尼埃病"),
    ],
)
def test_a_reported_name_for_what_the_speaker_has_is_kept_as_theirs(text: str, name: str) -> None:
    facts = extract_rule_facts(text, now=NOW)
    assert any(name in f.content and f.entity is None for f in facts), [f.content for f in facts]


def test_a_reported_name_after_a_relatives_news_is_theirs() -> None:
    facts = extract_rule_facts("My son coughs like a seal at night. The pediatrician says it's croup.", now=NOW)
    [croup] = [f for f in facts if "croup" in f.content]
    assert croup.entity == "son"


@pytest.mark.parametrize(
    "text",
    [
        "The dentist says no chewing gum this week.",
        "My sleep tracker says I got five hours again.",
        "She said it rocks.",
    ],
)
def test_a_report_that_advises_measures_or_judges_is_not_a_fact_about_the_speaker(text: str) -> None:
    assert extract_rule_facts(text, now=NOW) == []


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("I finally picked up the mandolin in January.", ("instrument", "mandolin")),
        ("Took up badminton with the neighbours last month.", ("sport", "badminton")),
        ("I got into rock climbing this year.", ("sport", "rock climbing")),
        ("I started learning the oboe.", ("instrument", "oboe")),
    ],
)
def test_taking_something_up_files_it_by_what_the_lexicon_says_it_is(text: str, slot: tuple[str, str]) -> None:
    assert [(f.attribute, f.value) for f in extract_rule_facts(text, now=NOW) if f.slot] == [slot]


@pytest.mark.parametrize("text", ["I picked up a lamp at a yard sale.", "I picked up my nephew from practice."])
def test_picking_up_what_no_lexicon_knows_files_no_slot(text: str) -> None:
    assert all(f.slot is None for f in extract_rule_facts(text, now=NOW))


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Still restoring the Triumph Bonneville in the garage", "The user is still restoring the Triumph Bonneville"),
        ("Planning to repaint the Bonneville tank in the spring", "The user is planning to repaint the Bonneville"),
        ("had my wisdom teeth out this morning", "The user had their wisdom teeth out this morning"),
        ("FINALLY PASSED MY SCUBA CERTIFICATION!!", "The user finally passed their scuba certification"),
    ],
)
def test_what_the_speaker_is_doing_or_did_without_an_i_is_theirs(text: str, content: str) -> None:
    [fact] = extract_rule_facts(text, now=NOW)
    assert fact.entity in (None, "user") and fact.content.startswith(content), fact.content


@pytest.mark.parametrize("text", ["Morning run done", "Wedding prep is exhausting", "Did you see the eclipse?"])
def test_a_noun_ending_in_ing_or_a_question_is_no_act_of_the_speaker(text: str) -> None:
    assert extract_rule_facts(text, now=NOW) == []


def test_a_statement_for_a_named_month_lasts_to_its_end() -> None:
    [fact] = extract_rule_facts("I'm doing a no-takeout challenge for all of March.", now=datetime(2025, 3, 2))
    assert fact.ttl_days == 30
    [zh] = extract_rule_facts("整个四月我都在宜宾出差。", now=datetime(2025, 3, 2))
    assert zh.ttl_days == 60


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("我去年买了一条皮划艇", "用户2025年买了一条皮划艇"),  # 去年 is a date, not "off I go"
        ("I sold my old upright piano two years ago.", "The user sold their old upright piano in 2024."),
    ],
)
def test_a_statement_no_rule_reads_is_kept_with_its_date_spelled_out(said: str, stored: str) -> None:
    facts = extract_rule_facts(said, now=datetime(2026, 2, 1, tzinfo=timezone.utc))
    assert [f.content for f in facts] == [stored]


def test_a_weekday_of_every_month_is_no_date() -> None:
    [fact] = extract_rule_facts(
        "Our quiz night moved to the last Friday of the month.", now=datetime(2026, 2, 1, tzinfo=timezone.utc)
    )
    assert "last Friday of the month" in fact.content


@pytest.mark.parametrize(
    ("said", "job"),
    [
        ("我是 geotechnical engineer", "geotechnical engineer"),  # longer than a Chinese title: it was dropped
        ("我是 Robotics Engineer。", "Robotics Engineer"),
    ],
)
def test_an_english_title_in_a_chinese_sentence_is_the_job_as_in_english(said: str, job: str) -> None:
    assert [(f.attribute, f.value) for f in extract_rule_facts(said, now=NOW)] == [("job", job)]


def test_an_english_title_and_a_workplace_after_the_comma_are_the_job_and_the_employer() -> None:
    facts = extract_rule_facts("我是 petroleum geologist，在 Shell 工作", now=NOW)
    assert [(f.attribute, f.value) for f in facts] == [("job", "petroleum geologist"), ("employer", "Shell")]


def test_a_subject_named_history_is_a_value_not_an_ending() -> None:
    [fact] = extract_rule_facts("My favourite subject is history.", now=NOW)
    assert (fact.operation, fact.value) == ("assert", "history")
