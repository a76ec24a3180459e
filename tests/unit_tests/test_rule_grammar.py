"""Grammar the rule extractor reads in any topic: what one speaks, a worker's role, lists, dropped and adverbial "I"."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from langchain_lifecycle_memory.write._lexicon import condition_form, medicine_form
from langchain_lifecycle_memory.write.extraction import extract_rule_facts

NOW = datetime(2025, 4, 1, 9, 0, tzinfo=timezone.utc)


def _slots(text: str) -> set[tuple[str | None, str | None, str | None]]:
    return {(f.entity, f.attribute, f.value) for f in extract_rule_facts(text, now=NOW) if f.attribute}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I speak Yoruba.", {("user", "language", "Yoruba")}),
        ("My landlady speaks Gujarati.", {("landlord", "language", "Gujarati")}),
        (
            "I speak Yoruba at church and Hausa with my cousins.",
            {("user", "language", "Yoruba"), ("user", "language", "Hausa")},
        ),
    ],
)
def test_what_someone_speaks_named_by_a_proper_noun_is_a_language(text: str, expected: set) -> None:
    assert _slots(text) == expected


def test_speaking_ones_mind_is_no_language() -> None:
    assert _slots("I speak my mind at meetings.") == set()


def test_a_list_joined_by_commas_ends_where_a_member_has_circumstances() -> None:
    # "in a brass band, loud and proud": the comma after the circumstance ends the list; no "loud" instrument
    assert _slots("I play the sousaphone in a marching band, loud and proud lol") == {
        ("user", "instrument", "sousaphone")
    }


@pytest.mark.parametrize(
    ("text", "job"),
    [
        ("I'm a cost estimator for a roofing company, mostly commercial jobs.", "cost estimator"),
        ("I'm a skylight installer for the county.", "skylight installer"),
    ],
)
def test_a_compound_agent_noun_working_for_someone_is_a_job(text: str, job: str) -> None:
    assert ("user", "job", job) in _slots(text)


@pytest.mark.parametrize("text", ["I'm a total pushover for a sad movie.", "I'm a huge sucker for a rainy day."])
def test_an_intensified_weakness_for_something_is_no_job(text: str) -> None:
    assert _slots(text) == set()


def test_a_relatives_compound_role_for_an_organisation_is_their_job() -> None:
    assert ("cousin_wilhelmina", "job", "county vineyard inspector") in _slots(
        "My cousin Wilhelmina is a county vineyard inspector for the state."
    )


def test_a_former_role_is_no_current_job() -> None:
    assert _slots("I'm a former night porter for a hotel.") == set()


def test_where_someone_lives_on_their_own_is_their_city() -> None:
    assert _slots("My aunt lives on her own in Kirkwall.") == {("aunt", "city", "Kirkwall")}


@pytest.mark.parametrize("text", ["我每周五晚上跟表哥去打壁球。", "我每周三去打壁球。"])
def test_a_weekday_and_company_before_a_sport_leave_it_the_speakers(text: str) -> None:
    assert _slots(text) == {("user", "sport", "壁球")}


def test_a_role_at_an_organisation_counted_by_any_measure_word_is_a_job() -> None:
    assert ("user", "job", "职高会计老师") in _slots("我在一所职高当会计老师。")


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("In case I ever lose the umbrella, it's the green one.", "the user ever loses the umbrella"),
        ("I even bake the bread for the school fair.", "The user even bakes the bread"),
        ("Relocated to the Geelong office in May, bigger team.", "The user relocated to the Geelong office"),
    ],
)
def test_an_adverb_or_a_dropped_i_before_a_verb_reads_in_the_third_person(text: str, content: str) -> None:
    contents = [f.content for f in extract_rule_facts(text, now=NOW)]
    assert any(content in c for c in contents), contents


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I was diagnosed with sarcoidosis in the spring.", {("user", "medical_condition", "sarcoidosis")}),
        ("I've got bursitis in both hips.", {("user", "medical_condition", "bursitis")}),
        ("我确诊了桥本，每天早上吃药。", {("user", "medical_condition", "桥本")}),
        ("我叔叔有高血脂。", {("uncle", "medical_condition", "高血脂")}),
    ],
)
def test_a_diagnosis_or_a_condition_someone_has_is_a_medical_condition(text: str, expected: set) -> None:
    assert _slots(text) == expected


@pytest.mark.parametrize("text", ["I have a haircut appointment on Friday.", "我有点累。", "我得了一等奖。"])
def test_having_what_is_no_condition_files_none(text: str) -> None:
    assert not any(attribute == "medical_condition" for _, attribute, _ in _slots(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm on bisoprolol for my heart.", {("user", "takes", "bisoprolol")}),
        ("I started taking pravastatin in March.", {("user", "takes", "pravastatin")}),
        ("My dad is on rivaroxaban.", {("father", "takes", "rivaroxaban")}),
        ("我每天吃坎地沙坦。", {("user", "takes", "坎地沙坦")}),  # a medicine eaten is no food
        ("我一直在服用雷贝拉唑肠溶片。", {("user", "takes", "雷贝拉唑肠溶片")}),
    ],
)
def test_a_medicine_named_by_its_generic_form_is_taken(text: str, expected: set) -> None:
    assert _slots(text) == expected


@pytest.mark.parametrize("text", ["I'm on the night shift this month.", "I'm on a tight budget."])
def test_being_on_or_taking_what_is_no_medicine_files_no_medicine(text: str) -> None:
    assert not any(attribute == "takes" for _, attribute, _ in _slots(text))


def test_coming_off_a_medicine_ends_it() -> None:
    (fact,) = extract_rule_facts("I came off escitalopram in the autumn.", now=NOW)
    assert (fact.operation, fact.value) == ("retract", "escitalopram")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我开一辆二手凯美瑞，开了八年了。", {("user", "car", "凯美瑞")}),  # 辆 says a vehicle, whatever its make
        ("我哥开一辆艾瑞泽。", {("brother", "car", "艾瑞泽")}),
        ("我开了一家豆花店。", {("user", "business", "豆花店")}),  # 家: a business
    ],
)
def test_what_one_drives_is_named_by_the_measure_word_for_vehicles(text: str, expected: set) -> None:
    assert _slots(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("家里还养了只雪貂叫麻团。", {("user", "pet", "麻团")}),  # the home, not "I", keeps it: the speaker's
        ("家里有两头小香猪。", {("user", "pet", "小香猪")}),
    ],
)
def test_an_animal_kept_at_home_is_the_speakers_pet(text: str, expected: set) -> None:
    assert _slots(text) == expected


def test_members_of_a_condition_list_are_conditions_and_a_clause_ends_the_list() -> None:
    assert _slots("I've got bursitis on my ankles and shins, so stairs hurt.") == {
        ("user", "medical_condition", "bursitis")
    }
    assert _slots("I've got sarcoidosis, so long hikes are out.") == {("user", "medical_condition", "sarcoidosis")}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My cousin moved out to Killarney last spring.", ("cousin", "city", "Killarney")),
        ("我表姐从丽水搬到了南浔。", ("cousin", "city", "南浔")),
        ("我每天开货车上班。", ("user", "commute", "开货车")),
    ],
)
def test_a_move_or_a_commute_with_a_particle_or_where_from_is_read(text: str, expected: tuple) -> None:
    assert expected in _slots(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm taking the monorail to the office these days.", ("user", "commute", "monorail")),
        ("Lately I've been riding a water taxi to work.", ("user", "commute", "water taxi")),
        ("I started skating to campus in May.", ("user", "commute", "skate")),
    ],
)
def test_a_commute_is_read_in_the_progressive_and_after_started(text: str, expected: tuple) -> None:
    slots = _slots(text)
    assert expected in slots
    assert not any(attribute == "takes" for _, attribute, _ in slots)


def test_a_change_inside_what_follows_a_verb_is_no_object() -> None:
    assert _slots("我喝豆浆都改去楼下那家了。") == set()


@pytest.mark.parametrize(
    ("value", "medicine", "condition"),
    [
        ("rosuvastatin 10 mg", "statin", None),
        ("valsartan", "sartan", None),
        ("insulin", "insulin", None),
        ("鼻窦炎", None, "炎"),
        ("bursitis", None, "itis"),
        ("a nice long walk", None, None),
    ],
)
def test_a_name_s_form_says_which_ending_makes_it_a_medicine_or_a_condition(value, medicine, condition) -> None:
    assert (medicine_form(value), condition_form(value)) == (medicine, condition)


def test_a_mixed_sentence_whose_part_that_holds_now_is_english_is_restated_in_english() -> None:
    facts = extract_rule_facts("晨泳不搞了，膝盖受不了, now I eat dinner at 6 again.", now=NOW)
    assert [f.content for f in facts] == ["Now the user eats dinner at 6 again."], facts
