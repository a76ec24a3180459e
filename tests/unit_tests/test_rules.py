"""The rule extractor (no model): public scenario turns, seed demo, negation, questions, people, PII, dates."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

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


def _turns() -> list[dict[str, Any]]:
    if not SCENARIOS.exists():
        return []
    turns = []
    for line in SCENARIOS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            scenario = json.loads(line)
            turns += [{**s, "scenario": scenario["id"]} for s in scenario["steps"] if s["type"] == "turn"]
    return turns


def _probes() -> list[str]:
    if not SCENARIOS.exists():
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


TURNS = _turns()
STATED = [t for t in TURNS if any(f["kind"] in ("preference", "profile") for f in t.get("facts", []))]


@pytest.mark.skipif(not TURNS, reason=f"scenario file not found at {SCENARIOS}")
@pytest.mark.parametrize("turn", STATED, ids=[f"{t['scenario']}:{t['user'][:24]}" for t in STATED])
def test_public_preference_and_profile_turns_reach_their_gold_slots(turn: dict[str, Any]) -> None:
    predicted = _slots(turn["user"], turn["at"])
    for gold in turn["facts"]:
        if gold["kind"] in ("preference", "profile"):
            slot = (gold["entity"], gold["attribute"])
            assert slot in {p[:2] for p in predicted}, f"{turn['user']!r} missed {slot}; got {predicted}"


@pytest.mark.skipif(not TURNS, reason=f"scenario file not found at {SCENARIOS}")
def test_public_turns_slot_values_precision_and_recall() -> None:
    gold = predicted = hits = 0
    for turn in TURNS:
        expected = {(f["entity"], f["attribute"], normalize_value(f["value"])) for f in turn.get("facts", [])}
        got = _slots(turn["user"], turn["at"])
        gold, predicted, hits = gold + len(expected), predicted + len(got), hits + len(expected & got)
    assert hits / gold >= 0.95, f"value-level recall {hits}/{gold}"
    assert hits / predicted >= 0.95, f"value-level precision {hits}/{predicted}"


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
        [fact] = extractor.invoke({"messages": [HumanMessage(user), AIMessage(assistant)], "now": NOW})
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
    assert fact.attribute in ("editor", "drink")


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
    ],
)
def test_negated_or_hypothetical_statements_give_no_positive_fact(text: str) -> None:
    assert extract_rule_facts(text, now=NOW) == []


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
        ("我老婆小芳是小学老师。", ("wife_fang", "job", "小学老师", "用户的妻子小芳是小学老师")),
        ("My colleague Li swears by Cursor for everything.", ("colleague_li", "editor", "Cursor", None)),
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
    [fact] = extract_rule_facts("I track my runs with a Garmin Forerunner.", now=NOW)
    assert fact.content == "The user tracks their runs with a Garmin Forerunner."


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
    assert (craving.attribute, craving.value, craving.ttl_days) == ("cuisine", "Thai food", 7)
    [tea] = extract_rule_facts("这周我在控糖，奶茶只点无糖的。", now=NOW)
    assert (tea.value, tea.ttl_days) == ("无糖奶茶", 7)
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


def test_parse_model_date_is_lenient() -> None:
    assert parse_model_date("2024-02", NOW) == datetime(2024, 2, 1, tzinfo=timezone.utc)
    assert parse_model_date("2024-02-10T08:00:00Z", NOW) == datetime(2024, 2, 10, 8, tzinfo=timezone.utc)
    assert parse_model_date("not a date", NOW) is None
