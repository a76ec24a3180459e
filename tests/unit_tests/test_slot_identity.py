"""Set-valued slots, slot identity across naming drift, one statement per fact (issue 11)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import chromadb
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory, LifecycleRetriever, MemoryStatus
from langchain_lifecycle_memory.write._cardinality import holds_one_of, same_value
from langchain_lifecycle_memory.write._slot_identity import create_slot_judge
from langchain_lifecycle_memory.write.update import UpdateConfig


def _memory(embeddings: Any, **kwargs: Any) -> LifecycleMemory:
    store = ChromaMemoryStore(
        client=chromadb.EphemeralClient(), embeddings=embeddings, collection_prefix=f"s{uuid.uuid4().hex[:10]}"
    )
    return LifecycleMemory(store, **kwargs)


def _active(memory: LifecycleMemory, entity: str, attribute: str) -> list[str]:
    return sorted(r.value or "" for r in memory.history("u", entity, attribute) if r.status is MemoryStatus.ACTIVE)


def _say(memory: LifecycleMemory, text: str, at: str) -> None:
    memory.add_messages([("user", text), ("ai", "Noted.")], "u", at=at)


def _fact(entity: str, attribute: str, value: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"entity": entity, "attribute": attribute, "value": value, "content": content, "confidence": 0.9, **extra}


# ---------------------------------------------------------------- cardinality, rule extractor


def test_allergies_accumulate_and_one_is_retracted_en(embeddings: Any) -> None:
    memory = _memory(embeddings)
    _say(memory, "I'm allergic to peanuts and shellfish.", "2024-05-01T09:00:00Z")
    assert _active(memory, "user", "allergy") == ["peanuts", "shellfish"]
    _say(memory, "Oh, and I'm also allergic to penicillin.", "2024-05-02T09:00:00Z")
    assert _active(memory, "user", "allergy") == ["peanuts", "penicillin", "shellfish"]
    assert {r.cardinality for r in memory.history("u", "user", "allergy")} == {"set"}
    contents = [r.content for r in memory.history("u", "user", "allergy")]
    assert "The user is allergic to shellfish." in contents  # one statement per fact
    memory.add_facts(
        [_fact("user", "allergy", "peanuts", "The user is no longer allergic to peanuts.", operation="retract")],
        "u",
        at="2024-09-01T09:00:00Z",
    )
    assert _active(memory, "user", "allergy") == ["penicillin", "shellfish"]
    block = memory.inject("What should I avoid eating at the seafood restaurant?", "u", now="2024-09-02T09:00:00Z")
    assert "shellfish" in block.text and "allergic to peanuts" not in block.text


def test_allergies_accumulate_zh(embeddings: Any) -> None:
    memory = _memory(embeddings)
    _say(memory, "我对花生过敏。", "2024-05-01T09:00:00Z")
    _say(memory, "我对青霉素也过敏。", "2024-05-02T09:00:00Z")
    assert _active(memory, "user", "allergy") == ["花生", "青霉素"]


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        (["I play the guitar. I also play the piano."], ["guitar", "piano"]),
        (["I play the guitar.", "I also play the piano."], ["guitar", "piano"]),
        (["我会弹吉他。", "我还会弹钢琴。"], ["吉他", "钢琴"]),
    ],
)
def test_instruments_are_a_set(embeddings: Any, turns: list[str], expected: list[str]) -> None:
    memory = _memory(embeddings)
    for day, text in enumerate(turns, start=1):
        _say(memory, text, f"2024-05-0{day}T09:00:00Z")
    assert _active(memory, "user", "instrument") == expected


@pytest.mark.parametrize(
    ("first", "moved", "old", "new"),
    [
        ("I live in Berlin and I'm allergic to peanuts", "I moved to Munich", "Berlin", "Munich"),
        ("我住在柏林，我对花生过敏。", "我搬到慕尼黑了。", "柏林", "慕尼黑"),
    ],
)
def test_superseded_city_survives_in_no_other_record(
    embeddings: Any, first: str, moved: str, old: str, new: str
) -> None:
    memory = _memory(embeddings)
    _say(memory, first, "2024-01-01T09:00:00Z")
    _say(memory, moved, "2024-06-01T09:00:00Z")
    assert _active(memory, "user", "city") == [new]
    live = memory.store.list_records(memory.namespace("u"), statuses=MemoryStatus.ACTIVE)
    assert all(old not in r.content for r in live)
    for query in ("Where do I live?", "Any food I should avoid?", "我住在哪？"):
        assert old not in memory.inject(query, "u", now="2024-06-02T09:00:00Z").text


def test_single_valued_slot_still_supersedes(embeddings: Any) -> None:
    memory = _memory(embeddings)
    _say(memory, "I live in Austin.", "2024-01-01T09:00:00Z")
    _say(memory, "I moved to Seattle.", "2024-06-01T09:00:00Z")
    assert _active(memory, "user", "city") == ["Seattle"]


# ---------------------------------------------------------------- cardinality of unknown attributes


def test_unknown_attribute_joins_with_also_and_supersedes_without(embeddings: Any) -> None:
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", "collection", "黑胶唱片", "用户收集黑胶唱片")], "u", at="2024-01-01")
    memory.add_facts([_fact("user", "collection", "老邮票", "用户也收集老邮票")], "u", at="2024-01-02")
    assert _active(memory, "user", "collection") == ["老邮票", "黑胶唱片"]
    memory.add_facts([_fact("user", "gym", "Fitness First", "The user's gym is Fitness First.")], "u", at="2024-01-01")
    memory.add_facts([_fact("user", "gym", "Anytime", "The user goes to Anytime now.")], "u", at="2024-02-01")
    assert _active(memory, "user", "gym") == ["Anytime"]


def test_two_values_in_one_turn_hold_together(embeddings: Any) -> None:
    memory = _memory(embeddings)
    facts = [_fact("user", "spoken_tongue", v, f"The user speaks {v}.") for v in ("Spanish", "Portuguese")]
    memory.add_facts(facts, "u", at="2024-01-01")
    assert _active(memory, "user", "spoken_tongue") == ["Portuguese", "Spanish"]


def test_extractor_cardinality_is_used_for_unknown_attributes(embeddings: Any) -> None:
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", "board_game", "Go", "The user plays Go.", cardinality="set")], "u", at="2024-01-01")
    memory.add_facts([_fact("user", "board_game", "Chess", "The user plays chess.")], "u", at="2024-02-01")
    assert _active(memory, "user", "board_game") == ["Chess", "Go"]


def test_an_unknown_name_close_to_a_vocabulary_set_holds_a_set(embeddings: Any) -> None:
    """ "kids" is not in the vocabulary and shares no word with it; its meaning is ``child`` (a set)."""
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", "kids", "Mia", "The user has a daughter, Mia.")], "u", at="2024-01-01")
    memory.add_facts([_fact("user", "kids", "Leo", "The user has a son, Leo.")], "u", at="2024-02-01")
    assert _active(memory, "user", "kids") == ["Leo", "Mia"]
    block = memory.inject("Plan a rainy-day activity for my kids", "u", now="2024-02-02")
    assert "Mia" in block.text and "Leo" in block.text


def test_a_name_only_loosely_like_a_vocabulary_set_stays_single(embeddings: Any) -> None:
    """ "dentist" is near ``medical_condition`` in topic, not in meaning: the second dentist replaces the first."""
    memory = _memory(embeddings)
    memory.add_facts(
        [_fact("user", "dentist", "Dr. Alvarez", "The user's dentist is Dr. Alvarez.")], "u", at="2024-01-01"
    )
    memory.add_facts([_fact("user", "dentist", "Dr. Chu", "The user's dentist is Dr. Chu.")], "u", at="2024-05-01")
    assert _active(memory, "user", "dentist") == ["Dr. Chu"]


def test_a_name_that_only_qualifies_a_vocabulary_set_stays_single(embeddings: Any) -> None:
    """ "allergy_medication" is near ``allergy`` (a set) by its words but names a medication: a new one replaces it."""
    memory = _memory(embeddings)
    first = _fact("user", "allergy_medication", "Zyrtec", "The user takes Zyrtec for a runny nose in spring.")
    memory.add_facts([first], "u", at="2024-03-01")
    then = _fact("user", "allergy_medication", "Allegra", "The user takes Allegra for a runny nose in spring.")
    memory.add_facts([then], "u", at="2024-06-01")
    assert _active(memory, "user", "allergy_medication") == ["Allegra"]


_JOINS = [
    ("game_console", ("Switch", "The user has a Nintendo Switch."), ("PS5", "The user bought a used PS5.")),
    ("credit_card", ("招商银行", "用户持有招商银行信用卡。"), ("中信银行", "用户持有中信银行信用卡。")),
    ("kitchen_gadget", ("空气炸锅", "用户家里有一台空气炸锅"), ("破壁机", "用户家里有一台破壁机")),
    ("streaming_app", ("Mubi", "The user subscribes to Mubi."), ("Max", "The user subscribes to Max.")),
    ("card", ("Amex", "The user holds an Amex card."), ("Chase", "The user uses a Chase card for groceries.")),
    # each on its own days of the week: they run side by side
    (
        "weekly_activity",
        ("choir", "The user sings in a choir on Tuesday evenings."),
        ("pottery", "The user does pottery every Saturday."),
    ),
    ("周末活动", ("合唱团", "用户每周一晚上去合唱团排练"), ("陶艺课", "用户周五下午学陶艺")),
]
_REPLACES = [
    ("bank", ("Harborline", "The user banks with Harborline."), ("Meridian", "The user banks with Meridian.")),
    ("ski_pass", ("Epic", "The user has the Epic Pass."), ("Ikon", "The user has the Ikon Pass this season.")),
    ("tablet", ("iPad", "The user has an iPad."), ("Galaxy Tab", "The user switched to a Galaxy Tab.")),
    ("私教", ("小周", "用户的私教是小周"), ("阿凯", "用户的私教是阿凯")),
    ("console", ("Switch", "The user has a Switch."), ("PS5", "The user's console is a PS5 now.")),
    # on the same day one took the other's place; a value that is the day itself is no activity of its own
    (
        "piano_teacher",
        ("Ms. Reyes", "Ms. Reyes teaches the user piano on Thursdays."),
        ("Mr. Oduya", "Mr. Oduya teaches the user piano on Thursdays."),
    ),
    ("yoga_day", ("Mondays", "The user does yoga on Mondays."), ("Wednesdays", "The user does yoga on Wednesdays.")),
    # one thing in a new state: the same head word with another modifier, other numbers in the same words
    ("kungfu_sash", ("green sash", "The user has a green sash in kung fu."), ("red sash", "The user has a red sash.")),
    ("vitamin_d", ("1000IU", "The user has a 1000IU capsule daily."), ("2000 IU", "The user has a 2000 IU capsule.")),
    ("freediving_level", ("AIDA 2", "The user earned the AIDA 2 card."), ("AIDA3", "The user earned AIDA3.")),
]


@pytest.mark.parametrize(
    ("attribute", "first", "second", "joins"),
    [(*case, True) for case in _JOINS] + [(*case, False) for case in _REPLACES],
)
def test_a_second_value_of_an_unknown_name_joins_or_replaces_by_its_statement(
    embeddings: Any, attribute: str, first: tuple[str, str], second: tuple[str, str], joins: bool
) -> None:
    """One more thing held ("has a", "bought a", "uses a", "持有", "有一台") joins the first; a role filled
    ("banks with", "has the", "用户的私教是") or a change replaces it, and the first stays in the history."""
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", attribute, *first)], "u", at="2024-01-01")
    memory.add_facts([_fact("user", attribute, *second)], "u", at="2024-03-01")
    expected = sorted([first[0], second[0]]) if joins else [second[0]]
    assert _active(memory, "user", attribute) == expected
    assert first[0] in {r.value for r in memory.history("u", "user", attribute)}


def test_a_value_replaced_only_by_default_is_held_again_once_the_slot_holds_several(embeddings: Any) -> None:
    """The second value read as a replacement (nothing said either way); the third says "also": the first is
    current again from where it was closed, the closed version stays in the history, and the prompt lists all three."""
    memory = _memory(embeddings)
    places = [
        ("Café Luma", "The user works from Café Luma most mornings."),
        ("Beanery", "The user works from Beanery on Fridays."),
        ("Halcyon", "The user also works from Halcyon when it rains."),
    ]
    for month, (value, content) in enumerate(places, start=1):
        memory.add_facts([_fact("user", "work_spot", value, content)], "u", at=f"2024-0{month}-01")
    assert _active(memory, "user", "work_spot") == ["Beanery", "Café Luma", "Halcyon"]
    luma = [r for r in memory.history("u", "user", "work_spot") if r.value == "Café Luma"]
    assert [r.status for r in luma] == [MemoryStatus.ARCHIVED, MemoryStatus.ACTIVE]
    assert luma[0].valid_to == luma[1].valid_from
    block = memory.inject("Which cafés do I work from?", "u", now="2024-04-01").text
    assert all(p in block for p in ("Luma", "Beanery", "Halcyon"))
    then = memory.inject("Which cafés did I work from?", "u", now="2024-04-01", as_of="2024-02-15").text
    assert "Luma" in then and "Halcyon" not in then


def test_a_value_replaced_by_a_stated_change_stays_replaced_when_the_slot_holds_several(embeddings: Any) -> None:
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", "club", "chess club", "The user is in the chess club.")], "u", at="2024-01-01")
    switched = _fact("user", "club", "go club", "The user switched from the chess club to the go club.")
    memory.add_facts([switched], "u", at="2024-02-01")
    also = _fact("user", "club", "rowing club", "The user also joined the rowing club.")
    memory.add_facts([also], "u", at="2024-03-01")
    assert _active(memory, "user", "club") == ["go club", "rowing club"]


def test_a_member_of_a_set_said_again_with_other_numbers_is_that_members_new_state(embeddings: Any) -> None:
    """Medications are a set; "nifedipine 60mg" after "nifedipine 30mg" is the dose changed, not a second
    medicine: the 30mg is archived, the other medicine stays current."""
    memory = _memory(embeddings)
    facts = [
        _fact("user", "medication", "nifedipine 30mg", "The user takes nifedipine 30mg daily."),
        _fact("user", "medication", "pantoprazole", "The user takes pantoprazole before breakfast."),
    ]
    memory.add_facts(facts, "u", at="2024-01-10")
    memory.add_facts([_fact("user", "medication", "nifedipine 60 mg", "The user takes nifedipine 60 mg daily.")], "u")
    assert _active(memory, "user", "medication") == ["nifedipine 60 mg", "pantoprazole"]
    assert "nifedipine 30mg" in {r.value for r in memory.history("u", "user", "medication")}


def test_a_second_value_joins_a_slot_whose_statement_holds_one_of_several(embeddings: Any) -> None:
    """A card the user "holds" is one of possibly many: the next one passed joins it; a value that extends the
    held one's words is its new state ("work permit" -> "work permit renewed until 2027")."""
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", "diving_cert", "PADI Open Water", "The user holds a PADI Open Water card.")], "u")
    memory.add_facts([_fact("user", "diving_cert", "Nitrox", "The user passed the Nitrox course.")], "u")
    assert _active(memory, "user", "diving_cert") == ["Nitrox", "PADI Open Water"]
    memory.add_facts([_fact("user", "permit", "work permit", "The user holds a work permit.")], "u", at="2024-01-01")
    renewed = _fact("user", "permit", "work permit renewed until 2027", "The user's work permit runs until 2027.")
    memory.add_facts([renewed], "u", at="2024-05-01")
    assert _active(memory, "user", "permit") == ["work permit renewed until 2027"]


def _two_podcasts(embeddings: Any) -> LifecycleMemory:
    """A podcast, then one more stated as one more ("also"): the vocabulary's single preference holds both."""
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", "podcast", "Radiolab", "The user listens to Radiolab.")], "u", at="2024-01-01")
    also = _fact("user", "podcast", "99% Invisible", "The user also listens to 99% Invisible.")
    memory.add_facts([also], "u", at="2024-02-01")
    return memory


def test_a_taste_stated_as_one_more_joins_the_vocabularys_single_preference(embeddings: Any) -> None:
    memory = _two_podcasts(embeddings)
    assert _active(memory, "user", "podcast") == ["99% Invisible", "Radiolab"]
    memory.add_facts([_fact("user", "city", "Austin", "The user lives in Austin.")], "u", at="2024-01-01")
    memory.add_facts([_fact("user", "city", "Denver", "The user also lives in Denver.")], "u", at="2024-02-01")
    assert _active(memory, "user", "city") == ["Denver"]  # where one lives is not a taste: one value


def test_a_member_said_again_keeps_the_others_beside_it(embeddings: Any) -> None:
    """ "Still listening to Radiolab" confirms one podcast; it does not make it the only one."""
    memory = _two_podcasts(embeddings)
    again = _fact("user", "podcast", "Radiolab", "The user is still listening to Radiolab every week.")
    memory.add_facts([again], "u", at="2024-03-01")
    assert _active(memory, "user", "podcast") == ["99% Invisible", "Radiolab"]
    changed = _fact("user", "podcast", "Serial", "The user switched to Serial, nothing else.", switch=True)
    memory.add_facts([changed], "u", at="2024-04-01")
    assert _active(memory, "user", "podcast") == ["Serial"]  # a new value stated as a change still replaces


def test_a_set_found_by_one_member_is_injected_whole(embeddings: Any) -> None:
    """The question reaches one citizenship by its words; the prompt gets every current one."""
    memory = _memory(embeddings)
    facts = [
        _fact("user", "nationality", "Canadian", "The user is a Canadian citizen by birth.", cardinality="set"),
        _fact("user", "nationality", "Irish", "The user holds an Irish passport.", cardinality="set"),
        _fact("user", "nationality", "New Zealand", "The user also became a New Zealand citizen.", cardinality="set"),
        _fact("user", "city", "Wellington", "The user lives in Wellington."),
    ]
    memory.add_facts(facts, "u", at="2024-01-01")
    block = memory.inject("Which passports can I use for the Brazil trip?", "u", now="2024-02-01")
    assert all(v in block.text for v in ("Canadian", "Irish", "New Zealand")), block.text
    alone = LifecycleMemory(memory.store, retriever=LifecycleRetriever(store=memory.store, set_members=False))
    text = alone.inject("Which passports can I use for the Brazil trip?", "u", now="2024-02-01").text
    assert not all(v in text for v in ("Canadian", "Irish", "New Zealand"))  # each member scored alone


# ---------------------------------------------------------------- slot identity


@pytest.mark.parametrize(
    ("first", "second", "slot"),
    [
        (("user", "editor", "Vim"), ("user", "code_editor", "VS Code"), ("user", "editor")),
        (("user", "editor", "Vim"), ("user", "ide", "VS Code"), ("user", "editor")),
        (("user", "employer", "Acme"), ("user", "employer_name", "Globex"), ("user", "employer")),
        (("user", "city", "Austin"), ("user", "residence", "Seattle"), ("user", "city")),
        (("aunt", "residence", "Lerwick"), ("aunt", "home_city", "Inverness"), ("aunt", "residence")),
        (("user", "smartphone", "Pixel 7"), ("user", "mobile", "iPhone 15"), ("user", "smartphone")),
        (("sister_linyue", "city", "杭州"), ("sister", "current_city", "成都"), ("sister_linyue", "city")),
        (("sister_linyue", "city", "杭州"), ("linyue", "city", "成都"), ("sister_linyue", "city")),
        (("wife_fang", "employer", "腾讯"), ("wife", "employer", "阿里"), ("wife_fang", "employer")),
    ],
)
def test_drifted_names_supersede_the_stored_slot(
    embeddings: Any, first: tuple[str, str, str], second: tuple[str, str, str], slot: tuple[str, str]
) -> None:
    memory = _memory(embeddings)
    memory.add_facts([_fact(*first, f"{first[2]}")], "u", at="2024-01-01")
    memory.add_facts([_fact(*second, f"{second[2]}")], "u", at="2024-03-01")
    versions = memory.history("u", *slot)
    assert [(r.value, r.status) for r in versions] == [
        (first[2], MemoryStatus.ARCHIVED),
        (second[2], MemoryStatus.ACTIVE),
    ]


@pytest.mark.parametrize("other", ["hometown", "birthplace", "vacation_city"])
def test_narrower_or_other_places_are_not_the_city(embeddings: Any, other: str) -> None:
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", "city", "Lisbon", "The user lives in Lisbon.")], "u", at="2024-01-01")
    memory.add_facts([_fact("user", other, "Porto", f"The user's {other} is Porto.")], "u", at="2024-02-01")
    assert _active(memory, "user", "city") == ["Lisbon"]
    assert _active(memory, "user", other) == ["Porto"]


def test_a_statement_on_the_same_topic_under_an_unrelated_name_keeps_the_stored_slot(embeddings: Any) -> None:
    """The two statements are alike (0.68) because both are about the club; the names share nothing (0.25)."""
    memory = _memory(embeddings)
    club = "The user paddles with the Millrace Outrigger Club."
    nights = "The user's outrigger club paddles on Monday evenings."
    memory.add_facts([_fact("user", "outrigger_club", "Millrace Outrigger Club", club)], "u", at="2024-01-01")
    memory.add_facts([_fact("user", "practice_nights", "Monday evenings", nights)], "u", at="2024-02-01")
    assert _active(memory, "user", "outrigger_club") == ["Millrace Outrigger Club"]
    assert _active(memory, "user", "practice_nights") == ["Monday evenings"]


def test_two_named_sisters_stay_two_people(embeddings: Any) -> None:
    memory = _memory(embeddings)
    memory.add_facts([_fact("sister_anna", "city", "Boston", "Anna lives in Boston.")], "u", at="2024-01-01")
    memory.add_facts([_fact("sister_beth", "city", "Chicago", "Beth lives in Chicago.")], "u", at="2024-01-02")
    assert _active(memory, "sister_anna", "city") == ["Boston"]
    assert _active(memory, "sister_beth", "city") == ["Chicago"]
    memory.add_facts([_fact("sister", "city", "Denver", "My sister lives in Denver.")], "u", at="2024-01-03")
    assert _active(memory, "sister_anna", "city") == ["Boston"]  # ambiguous: nobody is overwritten
    assert _active(memory, "sister_beth", "city") == ["Chicago"]


def test_value_variant_is_a_refresh(embeddings: Any) -> None:
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", "editor", "VS Code", "The user uses VS Code.")], "u", at="2024-01-01")
    result = memory.add_facts([_fact("user", "editor", "Visual Studio Code", "Uses VSC.")], "u", at="2024-02-01")
    assert len(result.refreshed) == 1 and not result.added
    assert [r.value for r in memory.history("u", "user", "editor")] == ["VS Code"]


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("VS Code", "Visual Studio Code", True),
        ("VSCode", "vs code", True),
        ("peanut", "peanuts", True),
        ("NYC", "New York City", True),
        ("iPhone 15", "iPhone 15 Pro", False),
        ("Vim", "Neovim", False),
    ],
)
def test_same_value(a: str, b: str, same: bool) -> None:
    assert same_value(a, b) is same


def test_resolution_can_be_switched_off(embeddings: Any) -> None:
    memory = _memory(embeddings, update=UpdateConfig(resolve_slots=False))
    memory.add_facts([_fact("user", "editor", "Vim", "Vim")], "u", at="2024-01-01")
    memory.add_facts([_fact("user", "code_editor", "VS Code", "VS Code")], "u", at="2024-02-01")
    assert _active(memory, "user", "editor") == ["Vim"]


# ---------------------------------------------------------------- the batched judge


def test_slot_judge_is_called_once_per_turn_and_only_maps(embeddings: Any) -> None:
    answer = {
        "decisions": [
            {"fact": 0, "entity": "sister_anna", "attribute": "city", "cardinality": "single"},
            {"fact": 1, "entity": "brother_sam", "attribute": "city"},
            {"fact": 2, "entity": "someone_else", "attribute": "city"},  # not offered: ignored
        ]
    }
    model = FakeListChatModel(responses=[json.dumps(answer)] * 5)
    memory = _memory(embeddings, update=UpdateConfig(slot_judge=create_slot_judge(model)))
    stored = [
        _fact("sister_anna", "city", "Boston", "Anna lives in Boston."),
        _fact("sister_beth", "city", "Chicago", "Beth lives in Chicago."),
        _fact("brother_tom", "city", "Denver", "Tom lives in Denver."),
        _fact("brother_sam", "city", "Austin", "Sam lives in Austin."),
    ]
    memory.add_facts(stored, "u", at="2024-01-01")
    assert model.i == 0  # nothing was undecided
    before = memory.store.count_records(memory.namespace("u"))
    memory.add_facts(
        [
            _fact("sister", "city", "Miami", "My sister moved to Miami."),
            _fact("brother", "city", "Reno", "My brother moved to Reno."),
            _fact("sister", "city", "Miami", "My sister moved to Miami."),
        ],
        "u",
        at="2024-02-01",
    )
    assert model.i == 1
    assert _active(memory, "sister_anna", "city") == ["Miami"]
    assert _active(memory, "brother_sam", "city") == ["Reno"]
    assert _active(memory, "sister_beth", "city") == ["Chicago"]
    assert memory.store.count_records(memory.namespace("u")) >= before  # never deletes


# ---------------------------------------------------------------- the CLI shows a set as one slot


def test_cli_history_shows_a_set_as_one_slot(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from langchain_lifecycle_memory.cli.main import app

    runner = CliRunner()

    def cli(*args: str) -> Any:
        return runner.invoke(app, ["--path", str(tmp_path / "mem"), *args], env={"COLUMNS": "200"})

    assert cli("add", "I live in Berlin and I'm allergic to peanuts", "-u", "bob", "--at", "2024-01-01").exit_code == 0
    assert cli("add", "I'm also allergic to penicillin.", "-u", "bob", "--at", "2024-02-01").exit_code == 0
    assert cli("add", "I moved to Munich", "-u", "bob", "--at", "2024-03-01").exit_code == 0
    history = cli("history", "allergy", "--user", "bob")
    assert history.exit_code == 0, history.output
    assert "a set: 2 active values" in history.output
    assert "peanuts" in history.output and "penicillin" in history.output
    search = cli("search", "where do I live and what can't I eat?", "-u", "bob", "--now", "2024-03-02", "--block")
    assert search.exit_code == 0, search.output
    assert "Munich" in search.output and "Berlin" not in search.output


def test_repair_leaves_set_members_active(embeddings: Any) -> None:
    from langchain_lifecycle_memory.write.update import repair_slots

    memory = _memory(embeddings)
    _say(memory, "I'm allergic to peanuts and shellfish.", "2024-05-01T09:00:00Z")
    assert repair_slots(memory.store, memory.namespace("u")) == []
    assert _active(memory, "user", "allergy") == ["peanuts", "shellfish"]


@pytest.mark.parametrize(
    ("turns", "left"),
    [
        (["I'm allergic to peanuts and shellfish.", "I'm no longer allergic to peanuts."], ["shellfish"]),
        (["我对花生和海鲜过敏。", "我对花生已经不过敏了。"], ["海鲜"]),
    ],
)
def test_no_longer_retracts_one_member(embeddings: Any, turns: list[str], left: list[str]) -> None:
    memory = _memory(embeddings)
    for day, text in enumerate(turns, start=1):
        _say(memory, text, f"2024-05-0{day}T09:00:00Z")
    assert _active(memory, "user", "allergy") == left


def test_as_of_lists_the_members_of_the_set_at_that_time(embeddings: Any) -> None:
    memory = _memory(embeddings)
    _say(memory, "I'm allergic to peanuts.", "2024-05-01T09:00:00Z")
    _say(memory, "I'm also allergic to penicillin.", "2024-06-01T09:00:00Z")
    ns = memory.namespace("u")

    def members(at: str) -> list[str]:
        hits = memory.store.search_records(ns, "allergies", k=10, as_of=at)
        return sorted(r.value or "" for r, _ in hits if r.attribute == "allergy")

    assert members("2024-05-15T00:00:00Z") == ["peanuts"]
    assert members("2024-06-15T00:00:00Z") == ["peanuts", "penicillin"]


# ---------------------------------------------------------------- names only the statements relate


def test_a_slot_named_anew_is_found_by_what_its_statement_says(embeddings: Any) -> None:
    memory = _memory(embeddings)
    kit = _fact("user", "meal_kit", "HelloFresh", "The user orders weekly meal kits from HelloFresh.")
    memory.add_facts([kit], "u", at="2024-01-01")
    memory.add_facts(
        [_fact("user", "dinner_box_service", "Gousto", "The user orders weekly meal kits from Gousto now.")],
        "u",
        at="2024-03-01",
    )
    assert _active(memory, "user", "meal_kit") == ["Gousto"]
    assert [r.value for r in memory.history("u", "user", "meal_kit")] == ["HelloFresh", "Gousto"]


def test_what_a_relative_has_in_common_is_their_name_not_one_slot(embeddings: Any) -> None:
    memory = _memory(embeddings)
    memory.add_facts([_fact("brother_omar", "job", "airline pilot", "The user's brother Omar flies airliners.")], "u")
    memory.add_facts([_fact("brother_omar", "condition", "asthma", "The user's brother Omar has asthma.")], "u")
    memory.add_facts([_fact("brother_omar", "hobby", "chess", "The user's brother Omar plays chess online.")], "u")
    assert _active(memory, "brother_omar", "job") == ["airline pilot"]
    assert _active(memory, "brother_omar", "condition") == ["asthma"]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            ("bike_model", "Trek FX 2", "The user rides a Trek FX 2 bike."),
            ("road_bike", "Canyon Endurace", "The user now rides a Canyon Endurace bike."),
        ),
        (
            ("yoga_studio", "Lotus Flow", "The user practises yoga at Lotus Flow."),
            ("studio_for_yoga_classes", "Sun Salutation Loft", "用户现在在 Sun Salutation Loft 上瑜伽课。"),
        ),
        (  # "relocated", "升职": verbs of change too
            ("city", "Denver", "The user lives in Denver for work."),
            ("home_city", "Portland", "The user relocated to Portland for work."),
        ),
        (("job_title", "Junior Analyst", "用户是初级分析师"), ("position", "Senior Analyst", "用户升职为高级分析师")),
    ],
)
def test_a_change_finds_the_slot_it_replaces_under_another_name(
    embeddings: Any, first: tuple[str, str, str], second: tuple[str, str, str]
) -> None:
    """Worded as a change, a statement replaces the slot closest to it among names that share a word."""
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", *first)], "u", at="2024-01-01")
    memory.add_facts([_fact("user", *second)], "u", at="2024-06-01")
    assert _active(memory, "user", first[0]) == [second[1]]
    assert [r.value for r in memory.history("u", "user", first[0])] == [first[1], second[1]]


def test_a_change_is_compared_with_the_slots_statement_without_their_values(embeddings: Any) -> None:
    """Names apart (0.32) and statements apart with their two people in them (0.32), alike once both go (0.54)."""
    memory = _memory(embeddings)
    said = "The user's shift supervisor at the warehouse is Donna Keel."
    first = _fact("user", "shift_supervisor", "Donna Keel", said)
    second = _fact("user", "floor_lead", "Raúl Ibáñez", "The user's team lead at the warehouse is now Raúl Ibáñez.")
    memory.add_facts([first], "u", at="2024-01-01")
    memory.add_facts([second], "u", at="2024-06-01")
    assert _active(memory, "user", "shift_supervisor") == ["Raúl Ibáñez"]
    block = memory.inject("Who do I ask for a day off?", "u", now="2024-06-05")
    assert "Raúl Ibáñez" in block.text and "Donna Keel" not in block.text


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            ("office_chair", "Steelcase Leap", "The user's office chair is a Steelcase Leap."),
            ("seat", "Herman Miller Aeron", "The user's gaming chair is a Herman Miller Aeron."),
        ),
        (
            ("work_tablet", "Surface Go", "The user's work tablet is a Surface Go."),
            ("device", "Galaxy Tab S9", "The user's home tablet is a Galaxy Tab S9."),
        ),
    ],
)
def test_the_same_kind_of_thing_qualified_otherwise_is_another_slot(
    embeddings: Any, first: tuple[str, str, str], second: tuple[str, str, str]
) -> None:
    """Without their values the two statements differ by one word ("office"/"gaming"): both chairs stay current."""
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", *first)], "u", at="2024-01-01")
    memory.add_facts([_fact("user", *second)], "u", at="2024-06-01")
    assert _active(memory, "user", first[0]) == [first[1]]
    assert _active(memory, "user", second[0]) == [second[1]]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("tea", "Keemun", "The user's favourite tea is Keemun"), ("prefers", "Dianhong", "The user prefers Dianhong")),
        (("prefers", "Keemun", "The user prefers Keemun"), ("tea", "Dianhong", "The user's favourite tea is Dianhong")),
    ],
)
def test_a_preference_and_a_slot_of_its_kind_hold_one_choice(
    embeddings: Any, first: tuple[str, str, str], second: tuple[str, str, str]
) -> None:
    """ "prefers = Dianhong" after "tea = Keemun" (or the other way round) left two current teas."""
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", *first, kind="preference")], "u", at="2024-01-01")
    memory.add_facts([_fact("user", *second, kind="preference")], "u", at="2024-03-01")
    assert _active(memory, "user", first[0]) == []
    assert _active(memory, "user", second[0]) == ["Dianhong"]


def test_a_preference_never_ends_a_fact_of_the_users_life(embeddings: Any) -> None:
    """ "The user prefers Rovinj" is a taste of the same kind as their city, and no move."""
    memory = _memory(embeddings)
    city = _fact("user", "city", "Zagreb", "The user lives in Zagreb.", kind="profile")
    memory.add_facts([city], "u", at="2024-01-01")
    memory.add_facts([_fact("user", "prefers", "Rovinj", "The user prefers Rovinj.", kind="preference")], "u")
    assert _active(memory, "user", "city") == ["Zagreb"]
    assert _active(memory, "user", "prefers") == ["Rovinj"]


def test_without_a_change_a_name_sharing_a_word_is_another_slot(embeddings: Any) -> None:
    """Statements that say different things (0.5 apart) keep two slots though the names share a word."""
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", "work_laptop", "ThinkPad X1", "The user's work laptop is a ThinkPad X1.")], "u")
    memory.add_facts([_fact("user", "gaming_laptop", "ROG Zephyrus", "The user games on a ROG Zephyrus laptop.")], "u")
    assert _active(memory, "user", "work_laptop") == ["ThinkPad X1"]
    assert _active(memory, "user", "gaming_laptop") == ["ROG Zephyrus"]


def test_a_name_sharing_a_word_joins_the_slot_whose_statement_it_restates(embeddings: Any) -> None:
    """ "season_ticket" then "ticket": the statements say the same thing of another season (no change word)."""
    memory = _memory(embeddings)
    first = _fact("user", "season_ticket", "Row 12", "The user has the Row 12 season ticket for the 2023-24 season.")
    second = _fact("user", "ticket", "Row 30", "The user has the Row 30 season ticket for the 2024-25 season.")
    memory.add_facts([first], "u", at="2023-09-01")
    memory.add_facts([second], "u", at="2024-09-01")
    assert _active(memory, "user", "season_ticket") == ["Row 30"]


def test_names_keep_resolving_once_the_name_cache_is_full(embeddings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-running process fills the cache of embedded slot names; writing goes on (it raised KeyError)."""
    from cachetools import LRUCache

    from langchain_lifecycle_memory.write import _slot_identity

    monkeypatch.setattr(_slot_identity._Embedder, "_cache", LRUCache(maxsize=3))
    memory = _memory(embeddings)
    for i, name in enumerate(("home_city", "hometown", "favourite_tea", "tea_choice", "dentist", "dental_clinic")):
        memory.add_facts([_fact("user", name, f"v{i}", f"The user's {name.replace('_', ' ')} is v{i}.")], "u")
    assert memory.search("What is my favourite tea?", "u")


def test_a_chinese_name_finds_the_vocabulary_slot_it_translates(embeddings: Any) -> None:
    """电脑 is near laptop's Chinese name (笔记本电脑): one slot, the new computer replaces the old."""
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", "laptop", "ThinkPad X1", "The user works on a ThinkPad X1.")], "u", at="2024-01-01")
    memory.add_facts([_fact("user", "电脑", "MacBook Air", "用户的电脑是 MacBook Air")], "u", at="2024-06-01")
    assert _active(memory, "user", "laptop") == ["MacBook Air"]


def test_a_relatives_chinese_name_says_nothing_of_which_slot_a_statement_is_about(embeddings: Any) -> None:
    """Every statement about 朵朵 names her: the name is no evidence that her new class is her teacher."""
    memory = _memory(embeddings)
    _say(memory, "我女儿朵朵这学期报了拉丁舞，每周六上午上课。", "2023-09-05")
    _say(memory, "朵朵的班主任是刘老师，教语文的。", "2023-09-06")
    _say(memory, "朵朵开始学乐高机器人了，周三放学后去。", "2024-03-02")
    assert _active(memory, "daughter_duoduo", "班主任") == ["刘老师"]
    block = memory.inject("朵朵的班主任是谁？", "u", now="2024-03-03").text
    assert "刘老师" in block


def test_signing_up_for_a_class_is_one_more_held() -> None:
    assert holds_one_of("给朵朵报了个少儿口才班，周日下午。")


def test_one_more_named_as_it_came_is_held_not_the_one_named(embeddings: Any) -> None:
    """ "添了盆…叫…" names what was added, not who fills a role ("用户家的家政阿姨是小琴"): the orchid joins the
    plants, and the first one stays."""
    assert holds_one_of("用户的阳台添了盆蝴蝶兰叫小紫")
    assert not holds_one_of("用户家的家政阿姨是小琴")
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", "阳台盆栽", "三角梅", "用户的阳台上种着一盆三角梅")], "u", at="2024-01-01")
    memory.add_facts([_fact("user", "阳台盆栽", "蝴蝶兰", "用户的阳台添了盆蝴蝶兰叫小紫")], "u", at="2024-02-01")
    assert _active(memory, "user", "阳台盆栽") == ["三角梅", "蝴蝶兰"]


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        (
            ("car", "Honda Fit", "The user drives a Honda Fit."),
            ("car_model", "Mazda CX-30", "The user drives a Mazda CX-30."),
            "Honda Fit",
            "Mazda CX-30",
        ),
        (
            ("camera_brand", "Canon", "The user shoots with a Canon."),
            ("camera", "Fujifilm X-T5", "The user now shoots with a Fujifilm X-T5."),
            "Canon",
            "Fujifilm X-T5",
        ),
    ],
)
def test_a_name_that_adds_only_a_facet_word_is_the_same_slot(
    embeddings: Any, first: tuple[str, str, str], later: tuple[str, str, str], old: str, new: str
) -> None:
    """A name that is car_model is the car, camera_brand the camera: a facet word (model, brand, make, type, kind) names
    no second slot, so the later value archives the first and only it is injected."""
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", *first)], "u", at="2024-01-01")
    memory.add_facts([_fact("user", *later)], "u", at="2024-06-01")
    live = memory.store.list_records(memory.namespace("u"), statuses=MemoryStatus.ACTIVE)
    assert [r.value for r in live] == [new]
    assert old not in memory.inject("What should I know about my gear?", "u", now="2024-06-02").text


def test_chinese_names_with_one_modifier_and_different_heads_are_different_slots(embeddings: Any) -> None:
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", "陶笛社团", "青年宫陶笛社", "用户每周去青年宫陶笛社吹陶笛")], "u", at="2024-03-01")
    memory.add_facts([_fact("user", "陶笛老师", "苏老师", "用户跟苏老师学陶笛")], "u", at="2024-04-01")
    assert _active(memory, "user", "陶笛社团") == ["青年宫陶笛社"]  # the teacher is not a second club
    assert _active(memory, "user", "陶笛老师") == ["苏老师"]


def test_names_and_statements_both_alike_make_one_slot(embeddings: Any) -> None:
    """Names 0.65 apart and statements 0.64 apart: neither clears its bar alone, together they are one slot."""
    memory = _memory(embeddings)
    first = _fact("user", "wristwatch", "Seiko Presage", "The user's everyday watch is a Seiko Presage.")
    second = _fact("user", "timepiece", "Tudor Black Bay", "The user's everyday watch is a Tudor Black Bay.")
    memory.add_facts([first], "u", at="2024-01-01")
    memory.add_facts([second], "u", at="2024-06-01")
    assert _active(memory, "user", "wristwatch") == ["Tudor Black Bay"]
    assert [r.value for r in memory.history("u", "user", "wristwatch")] == ["Seiko Presage", "Tudor Black Bay"]


def test_a_statement_that_names_a_slots_value_builds_on_it(embeddings: Any) -> None:
    """ "His cheese shop is in Ostrava" says where the shop is: the shop stays his job, the place is a new slot."""
    memory = _memory(embeddings)
    job = _fact("uncle_bartholomew", "job", "cheese shop", "The user's uncle Bartholomew runs a cheese shop.")
    place = _fact(
        "uncle_bartholomew", "shop_location", "Ostrava", "The user's uncle Bartholomew's cheese shop is in Ostrava."
    )
    memory.add_facts([job], "u", at="2024-01-01")
    memory.add_facts([place], "u", at="2024-03-01")
    assert _active(memory, "uncle_bartholomew", "job") == ["cheese shop"]
    assert _active(memory, "uncle_bartholomew", "shop_location") == ["Ostrava"]


def test_a_relative_under_a_short_id_is_the_one_the_statement_names(embeddings: Any) -> None:
    """Filed under "gm", a statement about "the user's godmother Philomena" is about ``godmother_philomena``."""
    memory = _memory(embeddings)
    memory.add_facts(
        [_fact("godmother_philomena", "city", "Ostrava", "The user's godmother Philomena lives in Ostrava.")],
        "u",
        at="2024-01-01",
    )
    memory.add_facts(
        [_fact("gm", "city", "Brno", "The user's godmother Philomena lives in Brno with her sister.")],
        "u",
        at="2024-03-01",
    )
    assert _active(memory, "godmother_philomena", "city") == ["Brno"]
    assert _active(memory, "gm", "city") == []
    found = " ".join(d.page_content for d in memory.search("Where does Philomena live these days?", "u"))
    assert "Brno" in found and "Ostrava" not in found


def test_a_change_ends_the_values_a_name_outside_the_vocabulary_held_together(embeddings: Any) -> None:
    """A packraft, then "bought a canoe too" (one more held: a set), then "now paddles a surfski": the change
    replaces both, and both stay in the history."""
    memory = _memory(embeddings)
    steps = [
        ("packraft", "The user paddles a packraft on the river."),
        ("canoe", "The user bought a canoe with a friend."),
        ("surfski", "The user now paddles a surfski in weekend races."),
    ]
    for month, (value, content) in enumerate(steps, start=1):
        memory.add_facts([_fact("user", "paddle_craft", value, content)], "u", at=f"2024-0{month}-01")
    assert _active(memory, "user", "paddle_craft") == ["surfski"]
    assert {r.value for r in memory.history("u", "user", "paddle_craft")} == {"packraft", "canoe", "surfski"}


def test_a_change_near_no_statement_replaces_the_slot_whose_name_is_nearest(embeddings: Any) -> None:
    """A change replaces something: in another language its statement is near none (0.23), so the stored name
    nearest its own (0.65) is the slot it replaces."""
    memory = _memory(embeddings)
    first = _fact("user", "wristwatch", "Seiko Presage", "The user wears a Seiko Presage to work.")
    memory.add_facts([first], "u", at="2024-01-01")
    memory.add_facts(
        [_fact("user", "timepiece", "Tudor Black Bay", "用户现在戴一块 Tudor Black Bay。")], "u", at="2024-06-01"
    )
    assert _active(memory, "user", "wristwatch") == ["Tudor Black Bay"]


@pytest.mark.parametrize(
    ("attribute", "first", "second", "both"),
    [
        (
            "classmate",
            ("Sunniva", "Sunniva sat next to the user in the glazing workshop."),
            ("Beto", "Beto from the glazing workshop drives the user home on Thursdays."),
            True,
        ),
        ("同事", ("老郑", "老郑和用户在同一个教研组"), ("阿兰", "阿兰是用户教研组新来的"), True),
        (
            "landlord",
            ("Mrs. Abiodun", "The user's landlord is Mrs. Abiodun."),
            ("Mr. Lindahl", "The user's landlord is Mr. Lindahl."),
            False,
        ),
    ],
)
def test_people_one_has_many_of_are_a_set_and_one_has_one_of_are_not(
    embeddings: Any, attribute: str, first: tuple[str, str], second: tuple[str, str], both: bool
) -> None:
    """A second classmate or colleague is one more person, not a replacement of the first; a second landlord is."""
    memory = _memory(embeddings)
    memory.add_facts([_fact("user", attribute, *first)], "u", at="2024-01-01")
    memory.add_facts([_fact("user", attribute, *second)], "u", at="2024-02-01")
    assert _active(memory, "user", attribute) == (sorted([first[0], second[0]]) if both else [second[0]])


@pytest.mark.parametrize(
    ("attribute", "first", "second"),
    [
        ("condition", ("耳鸣", "用户耳鸣特别厉害"), ("鼻中隔偏曲", "用户有鼻中隔偏曲，冬天容易鼻塞")),
        ("condition", ("shingles", "The user has shingles."), ("deviated septum", "The user has a deviated septum.")),
    ],
)
def test_a_name_that_is_the_head_of_a_vocabulary_name_holds_values_as_it_does(
    embeddings: Any, attribute: str, first: tuple[str, str], second: tuple[str, str]
) -> None:
    """A name that is the head of a vocabulary name holds values as it does.

    "condition" ends ``medical_condition`` (a set): a second condition is one more, not a replacement, though the
    names are only 0.63 alike for the bundled encoder.
    """
    memory = _memory(embeddings)
    for at, (value, content) in zip(("2025-01-01T09:00:00Z", "2025-02-01T09:00:00Z"), (first, second)):
        memory.add_facts([_fact("user", attribute, value, content, kind="profile")], "u", at=at)
    assert _active(memory, "user", attribute) == sorted([first[0], second[0]])
