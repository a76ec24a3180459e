"""A statement worded as a change replaces the free-text statement it is about (``write/_change.py``).

Through the facade's default path (rule extraction): what the user sees is ``active()`` and the injected block.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langchain_lifecycle_memory import (
    ChromaMemoryStore,
    Fact,
    LifecycleMemory,
    MemoryRecord,
    MemorySource,
    UpdateConfig,
)
from langchain_lifecycle_memory.write._change import (
    current_part,
    ended_part,
    holds_now,
    states_a_change,
)
from langchain_lifecycle_memory.write._replaced import superseded_by_change


def _memory(embeddings: Any, tmp_path: Path, **update: Any) -> LifecycleMemory:
    store = ChromaMemoryStore(tmp_path / "m", embeddings=embeddings)
    return LifecycleMemory(store, update=UpdateConfig(**update) if update else None)


def _said(memory: LifecycleMemory, *turns: tuple[str, str]) -> list[str]:
    for at, text in turns:
        memory.add_messages([{"role": "user", "content": text}], "kim", at=at)
    return [r.content for r in memory.active("kim")]


def test_a_stated_change_archives_the_statement_it_replaces(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-02-01", "I rehearse with the Larkfield Community Choir on Monday nights."),
        ("2025-06-01", "My Larkfield Community Choir rehearsals moved to Wednesday nights now."),
    )
    assert not any("Monday" in c for c in active), active
    assert any("Wednesday" in c for c in active), active
    block = memory.inject("Can I make a dinner on Monday evening?", "kim", now="2025-06-02").text
    assert "Monday nights" not in block
    past = memory.inject("When did the choir rehearse?", "kim", now="2025-06-02", as_of="2025-03-01").text
    assert "Monday" in past  # the old statement is history, not lost


def test_a_change_in_chinese_archives_the_statement_it_replaces(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(memory, ("2025-02-01", "我每周六上午去上陶艺课。"), ("2025-05-01", "我的陶艺课改到每周日下午了。"))
    assert not any("周六" in c for c in active), active
    assert any("周日" in c for c in active), active


def test_a_change_in_one_clause_is_a_change_though_another_clause_adds(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-05", "我们的年会场地订在西溪宾馆。"),
        ("2025-02-01", "年会只好换到良渚君澜酒店，时间也推到下周五了。"),  # "也" adds to the second clause only
    )
    assert not any("西溪" in c for c in active), active
    # Current until the party is past (下周五): listed as of the next day.
    then = memory.store.list_records(memory.namespace("kim"), statuses="active", now="2025-02-02")
    assert [r.content for r in then if "良渚" in r.content or "西溪" in r.content] == [
        "用户的年会只好换到良渚君澜酒店，时间也推到下周五了"
    ], then
    assert states_a_change("只好换到良渚君澜酒店，时间也推到下周五了")
    assert not states_a_change("I now also volunteer at the food bank, on Sundays.")  # one clause, and it adds


def test_a_switch_read_as_a_verbs_object_replaces_the_statement_it_is_about(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-05", "I track my runs with a Garmin Forerunner 255."),
        ("2025-02-01", "I switched to a Coros Pace 3 for tracking runs."),  # read as uses = Coros Pace 3
    )
    assert not any("Garmin" in c for c in active), active
    block = memory.inject("Which watch should I charge before the marathon?", "kim", now="2025-02-02").text
    assert "Coros" in block and "Garmin" not in block


def test_an_addition_replaces_nothing(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-02-01", "I volunteer at the Birchwood animal shelter on Saturdays."),
        ("2025-03-01", "I now also volunteer at the Birchwood food bank on Sundays."),
    )
    assert len(active) == 2, active


def test_someone_elses_change_leaves_the_users_statement(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    memory.add_facts([Fact(content="The user swims at the Eastgate pool every morning", kind="preference")], "kim")
    changed = Fact(entity="sister_ana", content="The user's sister Ana switched to the Westgate pool", kind="fact")
    memory.add_facts([changed], "kim")
    assert len(memory.active("kim")) == 2


def test_a_slot_value_goes_only_when_the_change_names_it(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    contacts = "The user's emergency contacts are their cousin Idris and their neighbour Bea"
    memory.add_facts(
        [
            Fact(entity="user", attribute="barber", value="Tomasz", content="The user's barber is Tomasz", kind="fact"),
            Fact(entity="user", attribute="emergency_contact", value="cousin Idris", content=contacts, kind="profile"),
        ],
        "kim",
        at="2025-01-01",
    )
    active = _said(
        memory,
        ("2025-04-01", "Tomasz closed his shop, so Rafael cuts my hair now."),
        ("2025-04-02", "Bea moved away, so take her off my emergency contacts now."),
    )
    assert "The user's barber is Tomasz" not in active, active  # named: replaced
    assert contacts in active, active  # Bea is not the slot's value: kept (a judge or the user decides)


@pytest.mark.parametrize("threshold", [1.01])
def test_the_switch_turns_it_off(embeddings: Any, tmp_path: Path, threshold: float) -> None:
    memory = _memory(embeddings, tmp_path, change_threshold=threshold)
    active = _said(memory, ("2025-02-01", "我每周六上午去上陶艺课。"), ("2025-05-01", "我的陶艺课改到每周日下午了。"))
    assert len(active) == 2, active


def test_a_folder_as_the_first_argument_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"LifecycleMemory\(path="):
        LifecycleMemory(str(tmp_path / "m"))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "named", "unnamed"),
    [
        (
            "The user closed their Harborline account and moved to Meridian now.",
            "The user banks with Harborline Credit Union.",
            "The user is on the user council of the library.",  # "the user" names nothing
        ),
        # a Chinese name of two characters both statements say ("台铃"); "用户" and 通勤 name nothing
        ("用户的台铃被偷了，只好换了辆大行折叠的", "用户通勤骑一辆台铃电动车", "用户通勤坐地铁二号线"),
    ],
)
def test_a_weak_match_needs_a_shared_name_not_shared_grammar(change: str, named: str, unnamed: str) -> None:
    ns = ("memories", "kim")
    new = MemoryRecord(namespace=ns, content=change)
    bank = MemoryRecord(namespace=ns, content=named)
    other = MemoryRecord(namespace=ns, content=unnamed)
    # 0.35 is below the plain threshold: only a thing both statements name lets the change through
    assert superseded_by_change(new, [(bank, 0.35)], 0.45, 0.3) is bank
    assert superseded_by_change(new, [(other, 0.35)], 0.45, 0.3) is None
    assert superseded_by_change(new, [(other, 0.5)], 0.45, 0.3) is other


def _statement(content: str) -> Fact:
    return Fact(entity="user", content=content, kind="fact")


def test_statements_that_differ_only_in_a_number_are_both_kept(embeddings: Any, tmp_path: Path) -> None:
    # Distinct notes a LangGraph app writes ("note number 0", "room 4 is booked") are not restatements: only
    # a slot's value restated with a new number, or a change in words, replaces (test_update.py).
    memory = _memory(embeddings, tmp_path)
    for at, room in (("2025-01-20", 4), ("2025-04-02", 5)):
        memory.add_facts([_statement(f"Meeting room {room} is booked for the user's team.")], "kim", at=at)
    assert len(memory.active("kim")) == 2


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The user swims 1500 meters each session.", "The user also swims 800 meters on Sundays."),
        ("The user moved to Lisbon in 2019.", "The user started at Feedzai in 2021."),
        ("The user pays 4200 yuan a month in rent.", "The user's cat Miso is 3 years old."),
    ],
    ids=["addition", "years-are-dates", "other-things"],
)
def test_a_different_number_alone_replaces_nothing_else(
    embeddings: Any, tmp_path: Path, first: str, second: str
) -> None:
    memory = _memory(embeddings, tmp_path)
    memory.add_facts([_statement(first)], "kim", at="2025-01-20")
    memory.add_facts([_statement(second)], "kim", at="2025-04-02")
    assert len(memory.active("kim")) == 2


def test_a_retraction_under_the_wrong_name_ends_the_slot_its_words_name(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    smoke = Fact(entity="user", attribute="smoke", value="a pack a day", content="I smoke about a pack a day.")
    memory.add_facts([smoke], "kim", at="2025-01-15")
    quit_ = Fact(entity="user", attribute="alcohol", content="I quit smoking! Three weeks clean.", operation="retract")
    memory.add_facts([quit_], "kim", at="2025-03-25")  # a small model's name for it: nothing under "alcohol"
    assert [r.content for r in memory.active("kim")] == ["I quit smoking! Three weeks clean."]
    assert "a pack a day" not in memory.inject("What should I tell my doctor about my habits?", "kim").text


def test_a_change_about_a_slot_that_does_not_end_it_keeps_it(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    editor = Fact(entity="user", attribute="editor", value="Helix", content="I write code in the Helix editor.")
    memory.add_facts([editor], "kim", at="2025-01-15")
    memory.add_facts([_statement("I changed my editor theme to a dark one.")], "kim", at="2025-03-25")
    assert {r.value for r in memory.active("kim")} == {"Helix", None}


def test_a_statement_kept_from_an_unchecked_fact_still_ends_what_it_names(embeddings: Any, tmp_path: Path) -> None:
    # A small model copies its prompt's example value: alcohol = 不喝酒 for "I quit smoking!". The value is not
    # in the words, so no slot; the words themselves still end the smoking slot they name.
    memory = _memory(embeddings, tmp_path)
    smoke = Fact(entity="user", attribute="smoke", value="a pack a day", content="I smoke about a pack a day.")
    memory.add_facts([smoke], "kim", at="2025-01-15")
    said = "I quit smoking! Three weeks smoke-free today."
    copied = Fact(entity="user", attribute="alcohol", value="不喝酒", content=said, evidence=said)
    memory.add_facts([copied], "kim", at="2025-03-25")
    assert [(r.attribute, r.content) for r in memory.active("kim")] == [(None, said)]
    history = memory.history("kim", "user", "smoke")
    assert [r.status.value for r in history] == ["archived"]


def test_a_relatives_news_kept_as_a_statement_replaces_nothing_of_the_users(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    memory.add_facts([_statement("The user rents a small flat in Madrid.")], "kim", at="2025-01-15")
    said = "My sister Ana just moved to a flat in Madrid."
    filed = Fact(entity="user", attribute="city", value="Madrid", content=said, evidence=said)
    memory.add_facts([filed], "kim", at="2025-03-25")
    assert len(memory.active("kim")) == 2


def test_a_slot_fact_without_a_value_is_a_statement_that_ends_what_it_names(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    smoke = Fact(entity="user", attribute="smoke", value="a pack a day", content="I smoke about a pack a day.")
    memory.add_facts([smoke], "kim", at="2025-01-15")
    said = "I quit smoking! Three weeks smoke-free."
    memory.add_facts([Fact(entity="user", attribute="alcohol", content=said, evidence=said)], "kim", at="2025-03-25")
    assert [(r.attribute, r.content) for r in memory.active("kim")] == [(None, said)]


_FATHERS_PHONE = Fact(
    entity="father_周建国", attribute="phone", value="华为Mate 60", content="我爸周建国在用华为Mate 60"
)


def test_a_relatives_change_ends_what_was_stored_under_their_full_name(embeddings: Any, tmp_path: Path) -> None:
    # "我爸" is the father stored as father_周建国: his change replaces his phone, named by its Chinese word alone.
    memory = _memory(embeddings, tmp_path)
    memory.add_facts([_FATHERS_PHONE], "kim", at="2025-02-02")
    said = "我爸又换手机了，那台华为给我妈用了，他自己买了个iPhone 16"
    memory.add_facts([Fact(entity="father", content=said, kind="fact")], "kim", at="2025-05-18")
    assert [(r.entity, r.content) for r in memory.active("kim")] == [("father_周建国", said)]
    block = memory.inject("我爸现在用的是什么手机？", "kim", now="2025-06-01").text
    assert "iPhone 16" in block and "Mate 60" not in block


def test_words_kept_for_a_failed_extraction_still_end_what_they_name(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    memory.add_facts([_FATHERS_PHONE], "kim", at="2025-02-02")
    said = "我爸又换手机了，那台华为给我妈用了，他自己买了个iPhone 16"
    echoed = Fact(entity="user", attribute="editor", value="VS Code", content="The user uses VS Code.", evidence=said)
    memory.add_facts([echoed], "kim", at="2025-05-18")
    assert [(r.entity, r.content) for r in memory.active("kim")] == [("father_周建国", said)]
    assert [r.status.value for r in memory.history("kim", "father_周建国", "phone")] == ["archived"]


def test_doing_something_again_is_no_change_but_changing_again_is() -> None:
    assert not states_a_change("我又买了一台咖啡机")
    assert states_a_change("我爸又换手机了")
    assert states_a_change("她改主意了，不去冰岛了")


@pytest.mark.parametrize(
    ("attribute", "value", "said", "change"),
    [
        ("espresso_machine", "Breville Bambino", "I use a Bambino.", "I sold the bambino and upgraded to a lever one."),
        ("supplement", "鱼油", "用户每天早饭后吃一粒鱼油。", "鱼油我不吃了，吃完老是打嗝。"),
    ],
    ids=["a name of the value in any case", "a chinese no longer"],
)
def test_a_change_ends_the_slot_value_it_names(
    embeddings: Any, tmp_path: Path, attribute: str, value: str, said: str, change: str
) -> None:
    memory = _memory(embeddings, tmp_path)
    memory.add_facts([Fact(entity="user", attribute=attribute, value=value, content=said)], "kim", at="2025-01-15")
    memory.add_facts([_statement(change)], "kim", at="2025-03-25")
    assert [r.status.value for r in memory.history("kim", "user", attribute)] == ["archived"]


def test_a_chinese_negation_ending_in_le_is_a_change() -> None:
    assert states_a_change("乐高机器人不上了") and not states_a_change("这家店不错")


def test_a_change_keeps_what_holds_now_and_ends_what_it_says_ended(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-10", "I keep my savings at Quillfield Bank."),
        ("2025-04-02", "I closed my Quillfield account and moved everything over to Bramwell Savings."),
    )
    assert not any("Quillfield" in c for c in active), active  # neither the old statement nor the words of ending
    assert any("Bramwell Savings" in c for c in active), active
    block = memory.inject("Which bank has my savings now?", "kim", now="2025-04-03").text
    assert "Bramwell" in block and "Quillfield" not in block
    past = memory.inject("Where were my savings kept?", "kim", now="2025-04-03", as_of="2025-02-01").text
    assert "Quillfield" in past  # history keeps it


def test_a_chinese_change_after_an_ending_keeps_the_new_state(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-10", "我记账一直用 Tallybird。"),
        ("2025-03-01", "Tallybird 广告太多了，卸了，现在改用 Pennywort 记账。"),
    )
    assert not any("Tallybird" in c for c in active), active
    assert any("Pennywort" in c for c in active), active


def test_words_that_only_end_something_stay_a_current_fact(embeddings: Any, tmp_path: Path) -> None:
    """That the user stopped is news the assistant needs ("Do I still bowl?"): the words stay, not what they end."""
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-14", "I bowl in a Thursday night league at Starlite Lanes."),
        ("2025-02-03", "I'm a hospice chaplain, so some weeks are heavy."),
        ("2025-05-06", "Quit the Thursday bowling league, my wrist can't take it anymore."),
    )
    assert not any("Starlite" in c for c in active), active
    for question in ("Do I still bowl?", "I'm free Thursday night, what should I do?"):
        block = memory.inject(question, "kim", now="2025-06-01").text
        assert "quit the thursday bowling league" in block.lower() and "Starlite" not in block, block
    past = memory.inject("Where do I bowl?", "kim", now="2025-06-01", as_of="2025-03-01").text
    assert "Starlite" in past  # history keeps what it ended


def test_an_ending_beside_something_new_is_no_ending_only() -> None:
    assert (
        current_part("I moved to Porto, and now I work at a bakery") == "I moved to Porto, and now I work at a bakery"
    )
    assert current_part("I sold the dulcimer and switched to a zither") == "switched to a zither"
    assert ended_part("I sold the dulcimer and switched to a zither") == "I sold the dulcimer"


def test_changing_the_thing_a_slot_names_ends_its_value(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-10", "我平时在家办公，笔记本电脑用的是华硕灵耀 14。"),  # a topic clause: the slot is its noun
        ("2025-06-01", "换笔记本电脑了，现在用联想小新 Pro，屏幕大多了。"),
    )
    assert not any("灵耀" in c for c in active), active
    assert any("小新" in c for c in active), active
    history = memory.history("kim", "user", "laptop")
    assert [(str(r.value).replace(" ", ""), r.status.value) for r in history] == [("华硕灵耀14", "archived")], history
    en = _memory(embeddings, tmp_path / "en")
    active = _said(en, ("2025-01-10", "My laptop is an Acer Swift Go."), ("2025-06-01", "Got a new laptop last week."))
    assert not any("Swift Go" in c for c in active), active


def test_what_holds_now_keeps_the_subject_it_states() -> None:
    from langchain_lifecycle_memory.write.extraction import extract_rule_facts

    (fact,) = extract_rule_facts("老同学毕业搬走了, now I rent with Odalys, 她是 tile setter。")
    assert fact.content.startswith("Now the user rents with Odalys"), fact.content  # not "I now I rent…"


def test_a_change_that_names_someone_else_for_a_single_slot_ends_its_value(embeddings: Any, tmp_path: Path) -> None:
    # No rule files "a farrier called Quillon does…" under ``farrier``: kept as said, it still replaces the value
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-05", "My farrier is Ostrander."),
        ("2025-04-01", "These days a farrier called Quillon does my mare's hooves."),
    )
    assert not any("Ostrander" in c for c in active), active
    block = memory.inject("Who should I call to reshoe my horse?", "kim", now="2025-04-02").text
    assert "Quillon" in block and "Ostrander" not in block, block
    history = memory.history("kim", "user", "farrier")
    assert [(r.value, r.status.value) for r in history] == [("Ostrander", "archived")], history
    zh = _memory(embeddings, tmp_path / "zh")
    active = _said(zh, ("2025-01-05", "我的钢琴调音师是老邝。"), ("2025-04-01", "现在换成了琴行的调音师小樊。"))
    assert not any("老邝" in c for c in active), active
    assert any("小樊" in c for c in active), active


def test_a_change_that_names_something_new_keeps_the_members_of_a_set(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    welsh = Fact(entity="user", attribute="language", value="Welsh", content="The user speaks Welsh.", kind="profile")
    memory.add_facts([welsh], "kim", at="2025-01-05")
    active = _said(memory, ("2025-04-01", "These days I mostly speak Basque at the boatyard."))
    assert "The user speaks Welsh." in active, active


def test_words_kept_for_a_failed_extraction_are_replaced_by_a_later_change(embeddings: Any, tmp_path: Path) -> None:
    # A small model echoes its prompt's example for the first message: the words are kept, standing for the facts
    memory = _memory(embeddings, tmp_path)
    said = "My friend Ilsabet is planning her big trip, she wants to go dogsledding in Svalbard next winter."
    echoed = Fact(entity="user", attribute="editor", value="VS Code", content="The user uses VS Code.", evidence=said)
    memory.add_facts([echoed], "kim", at="2025-03-01")
    changed = "Ilsabet changed her plans, Svalbard was too pricey, so now she's going to the Faroe Islands instead."
    memory.add_facts([Fact(entity="user", content=changed, evidence=changed)], "kim", at="2025-06-01")
    (now,) = memory.active("kim")  # what holds now, in the user's words; the reason it changed stays beside them
    assert now.content == "Ilsabet changed her plans, so now she's going to the Faroe Islands instead."
    assert now.metadata["said"] == changed
    (kept,) = memory.list("kim", statuses=["archived"])
    assert kept.content == said and kept.superseded_by is not None  # history, not lost
    block = memory.inject("Where is Ilsabet travelling?", "kim", now="2025-06-02").text
    assert "Faroe" in block and "dogsledding" not in block, block


def test_a_relatives_news_after_a_lead_in_ends_the_value_it_names(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    vegan = Fact(
        entity="housemate_marguerite", attribute="diet", value="vegan", content="My housemate Marguerite is vegan."
    )
    memory.add_facts([vegan], "kim", at="2025-01-20")
    said = "lol plot twist, my housemate quit being vegan. she's doing strict paleo now, counting macros all day"
    echoed = Fact(entity="user", attribute="editor", value="VS Code", content="The user uses VS Code.", evidence=said)
    memory.add_facts([echoed], "kim", at="2025-04-29", source=MemorySource(extractor="llm"))  # the words are kept
    # "housemate" is filed as "roommate", one relation
    assert [r.status.value for r in memory.history("kim", "roommate_marguerite", "diet")] == ["archived"]
    (theirs,) = [r for r in memory.active("kim") if r.entity == "roommate_marguerite"]
    assert theirs.content == "lol plot twist, she's doing strict paleo now, counting macros all day"  # what holds
    assert theirs.metadata["said"] == said


def test_the_users_words_for_a_change_keep_what_holds_now_not_what_it_replaced(embeddings: Any, tmp_path: Path) -> None:
    # A model's statement that copies the turn: the part naming the replaced value is history, not the current fact
    memory = _memory(embeddings, tmp_path)
    saab = "My neighbour Odalys drives an old Saab."
    memory.add_facts(
        [Fact(entity="neighbour_odalys", attribute="car", value="Saab", content=saab)], "kim", at="2025-02-01"
    )
    said = "Odalys changed cars, the Saab kept breaking down, now she drives a Lada"
    lada = Fact(entity="neighbour_odalys", attribute="car", value="Lada", content=said, evidence=said)
    memory.add_facts([lada], "kim", at="2025-07-01")
    (now,) = [r for r in memory.active("kim") if r.attribute == "car"]
    assert now.content == "Odalys changed cars, now she drives a Lada"
    assert now.metadata["said"] == said  # the whole words are kept
    block = memory.inject("What does Odalys drive these days?", "kim", now="2025-07-02").text
    assert "Lada" in block and "Saab" not in block, block
    assert [r.content for r in memory.history("kim", str(now.entity), "car")] == [saab, now.content]


def test_words_that_state_the_change_and_name_the_old_value_are_kept_whole(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    memory.add_facts(
        [Fact(entity="user", attribute="car", value="捷达", content="我开一辆捷达。")], "kim", at="2025-02-01"
    )
    said = "我把捷达换成了一辆二手的 Lada，现在每天开它上班"
    lada = Fact(entity="user", attribute="car", value="Lada", content=said, evidence=said)
    memory.add_facts([lada], "kim", at="2025-07-01")
    (now,) = [r for r in memory.active("kim") if r.attribute == "car"]
    assert now.content == said  # the part that names the Jetta states the change itself
    assert holds_now("双簧管太难了，不吹了，现在改学手风琴", "双簧管") == "现在改学手风琴"
    assert holds_now("I moved from Leeds to York, and now I work at a tannery", "Leeds") == (
        "I moved from Leeds to York, and now I work at a tannery"
    )


def test_a_made_up_value_keeps_the_turns_words_and_the_question_finds_what_replaced_the_old_fact(
    embeddings: Any, tmp_path: Path
) -> None:
    # A small model copies one clause of the turn, files it under the user, and invents its value: the turn's words
    # say whose it is and what ended; asking about the old fact finds the words that replaced it.
    memory = _memory(embeddings, tmp_path)
    mine = "I've eaten a fruitarian diet since university."
    memory.add_facts([Fact(entity="user", content=mine, evidence=mine)], "kim", at="2025-01-08")
    raw = "my cousin Ferdinand is a strict raw-food vegan, which makes family dinners interesting"
    ferdinand = Fact(entity="cousin_ferdinand", attribute="diet", value="raw-food vegan", content=raw, evidence=raw)
    memory.add_facts([ferdinand], "kim", at="2025-01-26")
    said = "big news, my cousin quit being a raw-food vegan. he's doing carnivore now, he weighs every steak on a scale"
    made_up = Fact(
        entity="user", attribute="diet_restriction", value="gluten intolerance",
        content="he weighs every steak on a scale", evidence=said,
    )  # fmt: skip
    memory.add_facts([made_up], "kim", at="2025-04-29", source=MemorySource(extractor="llm"))
    (theirs,) = [r for r in memory.active("kim") if r.entity == "cousin_ferdinand"]
    assert "carnivore" in theirs.content and "raw-food" not in theirs.content, theirs
    assert [r.content for r in memory.active("kim") if r.entity in (None, "user")] == [mine]
    block = memory.inject("What diet is Ferdinand on these days?", "kim", now="2025-05-15").text
    assert "carnivore" in block and "raw-food" not in block, block
    block = memory.inject("What diet do I follow?", "kim", now="2025-05-15").text
    assert "fruitarian" in block and "carnivore" not in block, block


def test_what_became_of_the_one_replaced_is_left_out_of_what_holds_now(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-04", "我的游泳私教是蔡教练，每周三下午上课。"),
        ("2025-04-02", "蔡教练调去肇庆了，现在带我的是冯教练。"),
    )
    assert any("冯教练" in c for c in active), active
    assert not any("蔡教练" in c for c in active), active  # what became of him is not who teaches now
    past = memory.inject("我的游泳私教是谁来着？", "kim", now="2025-04-03", as_of="2025-02-01").text
    assert "蔡教练" in past  # the old statement is history, not lost


@pytest.mark.parametrize(
    ("first", "then", "now", "gone"),
    [
        (
            "I get the furnace serviced by Ozias every October.",
            "Ozias moved to Truro, so now I get the furnace serviced by Brigida.",
            "Brigida",
            "Ozias",
        ),
        (  # an emoji ends the clause as a comma would
            "I row in a double with Tobiah on Monday evenings.",
            "Tobiah moved to Stirling 😢 now I row with Maelle instead.",
            "Maelle",
            "Tobiah",
        ),
    ],
    ids=["comma", "emoji"],
)
def test_what_became_of_someone_named_before_is_left_out_in_english(
    embeddings: Any, tmp_path: Path, first: str, then: str, now: str, gone: str
) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(memory, ("2025-01-04", first), ("2025-05-02", then))
    assert any(now in c for c in active), active
    assert not any(gone in c for c in active), active


def test_a_change_about_the_same_person_keeps_who_it_is_about(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-04", "我女儿阿满开始学马术了，教练是邱教练。"),
        ("2025-05-06", "阿满换了马术教练，现在是甘教练。"),
    )
    assert any("甘教练" in c and "马术" in c for c in active), active  # 阿满 is who both are about: kept
    assert not any("邱教练" in c for c in active), active


def test_a_measure_restated_lower_replaces_the_old_number(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-04", "体检的时候静息心率 84，医生让我多运动。"),
        ("2025-06-02", "坚持游泳半年，静息心率降到 61 了。"),
    )
    assert any("61" in c for c in active) and not any("84" in c for c in active), active
    past = memory.inject("年初我的静息心率多少？", "kim", now="2025-06-03", as_of="2025-02-01").text
    assert "84" in past  # history, not lost


def test_a_raised_price_replaces_the_old_one_and_another_measure_stays(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-04", "I charge an hourly rate of $40 for ferritin panel write-ups."),
        ("2025-01-05", "I read about 30 pages of a novel every night."),
        ("2025-05-02", "I raised my hourly rate to $48 this spring."),
    )
    assert any("$48" in c for c in active) and not any("$40" in c for c in active), active
    assert any("30 pages" in c for c in active), active  # another number, of something else: kept


def test_an_amount_said_again_in_its_unit_replaces_the_old_one(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-04", "I do the treadmill most mornings before work, 25 minutes each go."),
        ("2025-05-02", "I'm up to 40 minutes a go now, my knees feel fine."),
    )  # "up to 40" names nothing: the unit says what the number measures
    assert any("40 minutes" in c for c in active) and not any("25 minutes" in c for c in active), active


def test_an_amount_of_something_named_otherwise_keeps_the_old_one(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-04", "I run 5 km along the towpath on Saturdays."),
        ("2025-05-02", "Now I walk 8 km with the dog every evening."),
    )  # one unit, two things measured: the walk names its own
    assert any("5 km" in c for c in active) and any("8 km" in c for c in active), active


def test_a_change_made_again_replaces_the_last_one(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    active = _said(
        memory,
        ("2025-01-04", "我调去锡林浩特了，草原上信号不太好。"),
        ("2025-07-02", "又调了，这回是阿勒泰，冬天零下三十度。"),  # near nothing said before but the change made again
    )
    assert any("阿勒泰" in c for c in active) and not any("锡林浩特" in c for c in active), active


def test_gai_before_a_verb_states_a_change_but_gai_tian_does_not() -> None:
    assert states_a_change("睡前改听喜马拉雅的有声书")
    assert not states_a_change("这本书改天再看")


@pytest.mark.parametrize(
    ("text", "change"),
    [
        ("用户的新房东姓俞", True),  # 新 before a relation word, as "my new landlord": someone took over
        ("小蒋是用户车间新来的", False),
        ("用户的师父收了个新弟子", False),  # 新弟子 is no new 弟: a one-character form is left out
    ],
)
def test_a_new_relation_is_a_change(text: str, change: bool) -> None:
    assert states_a_change(text) is change
