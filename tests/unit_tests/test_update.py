"""The update (reconcile) step: supersede, refresh, pending, retract, crash safety."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, Fact, MemoryRecord, MemoryStatus
from langchain_lifecycle_memory.errors import InvalidTransitionError
from langchain_lifecycle_memory.store.retention import RetentionPolicy
from langchain_lifecycle_memory.write.redaction import Redactor
from langchain_lifecycle_memory.write.update import UpdateConfig, apply_plan, plan_updates, reconcile, repair_slots

NS = ("memories", "u1")


def editor(value: str, content: str | None = None, confidence: float = 0.9, **kw: Any) -> Fact:
    return Fact(
        entity="user",
        attribute="editor",
        value=value,
        content=content or f"用户使用 {value} 编辑器",
        kind="preference",
        confidence=confidence,
        **kw,
    )


def d(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def test_supersede_archives_old_and_links_versions(store: ChromaMemoryStore) -> None:
    reconcile(store, NS, [editor("Vim")], at="2024-01-01T10:00:00Z")
    result = reconcile(store, NS, [editor("VS Code")], at="2024-03-01T10:00:00Z")
    assert [r.value for r in result.added] == ["VS Code"]
    assert [r.value for r in result.archived] == ["Vim"]

    vim, code = store.history(NS, "user", "editor")
    assert (vim.value, vim.status) == ("Vim", MemoryStatus.ARCHIVED)
    assert (code.value, code.status) == ("VS Code", MemoryStatus.ACTIVE)
    assert vim.valid_to == code.valid_from == d("2024-03-01T10:00:00")
    assert vim.superseded_by == code.id and code.supersedes == vim.id

    found = [r.value for r, _ in store.search_records(NS, "用户的编辑器偏好是什么？", now="2024-03-02")]
    assert found == ["VS Code"]
    then = [r.value for r, _ in store.search_records(NS, "editor", as_of="2024-01-15T00:00:00Z", now="2024-03-02")]
    assert then == ["Vim"]


def test_same_value_refreshes_without_duplicate(mem_store: ChromaMemoryStore) -> None:
    reconcile(mem_store, NS, [editor("VS Code", confidence=0.7)], at="2024-01-01")
    result = reconcile(
        mem_store, NS, [editor("ｖｓ  code", confidence=0.7)], at="2024-02-01"
    )  # full-width, case, spaces
    assert result.added == [] and len(result.refreshed) == 1
    records = mem_store.list_records(NS)
    assert len(records) == 1
    assert records[0].confidence == pytest.approx(0.8)
    assert records[0].updated_at == d("2024-02-01T00:00:00")


def test_chain_and_revert_keep_history(mem_store: ChromaMemoryStore) -> None:
    for when, value in [
        ("2024-01-01", "Vim"),
        ("2024-02-01", "Emacs"),
        ("2024-03-01", "VS Code"),
        ("2024-04-01", "Vim"),
    ]:
        reconcile(mem_store, NS, [editor(value)], at=when)
    history = mem_store.history(NS, "user", "editor")
    assert [(r.value, r.status.value) for r in history] == [
        ("Vim", "archived"),
        ("Emacs", "archived"),
        ("VS Code", "archived"),
        ("Vim", "active"),
    ]
    for older, newer in zip(history, history[1:]):
        assert older.superseded_by == newer.id
        assert older.valid_to == newer.valid_from


def test_low_confidence_is_pending_until_reinforced(mem_store: ChromaMemoryStore) -> None:
    reconcile(mem_store, NS, [editor("Vim")], at="2024-01-01")
    first = reconcile(mem_store, NS, [editor("Helix", confidence=0.3)], at="2024-02-01")
    assert [r.status for r in first.added] == [MemoryStatus.PENDING]
    assert [r.value for r, _ in mem_store.search_records(NS, "editor", now="2024-02-02")] == ["Vim"]
    reconcile(mem_store, NS, [editor("Helix", confidence=0.45)], at="2024-02-10")
    statuses = {r.value: r.status for r in mem_store.list_records(NS)}
    assert statuses == {"Vim": MemoryStatus.ARCHIVED, "Helix": MemoryStatus.ACTIVE}


def test_retract_archives_without_replacement(mem_store: ChromaMemoryStore) -> None:
    reconcile(mem_store, NS, [editor("Vim")], at="2024-01-01")
    result = reconcile(mem_store, NS, [editor("Vim", operation="retract")], at="2024-05-01")
    assert result.added == [] and [r.value for r in result.archived] == ["Vim"]
    assert mem_store.search_records(NS, "editor", now="2024-05-02") == []
    assert mem_store.history(NS, "user", "editor")[0].valid_to == d("2024-05-01T00:00:00")


def test_older_statement_learned_late_becomes_history(mem_store: ChromaMemoryStore) -> None:
    reconcile(mem_store, NS, [editor("VS Code")], at="2024-03-01")
    reconcile(mem_store, NS, [editor("Vim", valid_from="2023-01-01")], at="2024-04-01")
    active = mem_store.list_records(NS, statuses="active")
    assert [r.value for r in active] == ["VS Code"]
    old = mem_store.history(NS, "user", "editor")[0]
    assert (old.value, old.status, old.valid_to) == ("Vim", MemoryStatus.ARCHIVED, d("2024-03-01T00:00:00"))


def test_same_slot_twice_in_one_batch(mem_store: ChromaMemoryStore) -> None:
    result = reconcile(mem_store, NS, [editor("Vim"), editor("VS Code")], at="2024-01-01")
    assert [r.value for r in mem_store.list_records(NS, statuses="active")] == ["VS Code"]
    assert len(mem_store.list_records(NS)) == 2
    assert result.summary().startswith("+1 added")


def test_crash_between_writes_is_repaired(mem_store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    reconcile(mem_store, NS, [editor("Vim")], at="2024-01-01")
    plan = plan_updates(mem_store, NS, [editor("VS Code")], at="2024-03-01")
    real_put = mem_store.put_records
    calls = {"n": 0}

    def failing_put(records: list[MemoryRecord]) -> list[MemoryRecord]:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("power cut between the two writes")
        return real_put(records)

    monkeypatch.setattr(mem_store, "put_records", failing_put)
    with pytest.raises(RuntimeError):
        apply_plan(mem_store, plan)
    monkeypatch.setattr(mem_store, "put_records", real_put)
    # The new fact was written first: nothing is lost; stored, the slot has two active versions,
    # but readers already see one current value and a linear history.
    stored = mem_store.list_records(NS, statuses="active", resolve=False)
    assert sorted(r.value for r in stored) == ["VS Code", "Vim"]
    assert [r.value for r in mem_store.list_records(NS, statuses="active")] == ["VS Code"]
    assert [(r.value, r.status.value) for r in mem_store.history(NS, "user", "editor")] == [
        ("Vim", "archived"),
        ("VS Code", "active"),
    ]
    fixed = repair_slots(mem_store, NS, at="2024-03-01T00:00:01Z")
    assert [r.value for r in fixed] == ["Vim"]
    assert [r.value for r in mem_store.list_records(NS, statuses="active", resolve=False)] == ["VS Code"]
    # and the next write to the slot also cleans up (the planner archives every active one)
    reconcile(mem_store, NS, [editor("Zed")], at="2024-05-01")
    assert [r.value for r in mem_store.list_records(NS, statuses="active", resolve=False)] == ["Zed"]


def test_pii_masked_before_storage(mem_store: ChromaMemoryStore) -> None:
    fact = Fact(
        entity="user", attribute="phone", value="13761245093", content="用户的手机号是 13761245093", kind="sensitive"
    )
    reconcile(mem_store, NS, [fact], at="2024-08-05")
    (record,) = mem_store.list_records(NS)
    assert "13761245093" not in record.content and "13761245093" not in (record.value or "")
    keep = reconcile(mem_store, ("memories", "u2"), [fact], at="2024-08-05", config=UpdateConfig(redactor=None))
    assert keep.added[0].value == "13761245093"


def test_a_value_its_extractor_marks_sensitive_is_masked_whatever_its_shape(mem_store: ChromaMemoryStore) -> None:
    """A library card PIN or a membership number fits no pattern; the extractor's ``sensitive`` is enough."""
    said = "My gym locker code is left 14 right 32, don't lose it."
    fact = Fact(
        entity="user", attribute="locker_code", value="left 14 right 32", kind="sensitive", evidence=said,
        content="The user's gym locker code is left 14 right 32.",
    )  # fmt: skip
    (record,) = reconcile(mem_store, NS, [fact], at="2024-08-05").added
    assert "14" not in record.content and "14" not in (record.value or "") and "[SECRET]" in record.content
    plain = fact.model_copy(update={"kind": "fact"})  # not marked: no pattern knows the shape, kept as said
    assert reconcile(mem_store, ("memories", "u2"), [plain], at="2024-08-05").added[0].value == "left 14 right 32"


def test_retention_sets_expiry_from_ttl_hint(mem_store: ChromaMemoryStore) -> None:
    fact = Fact(
        entity="user", attribute="music", value="lo-fi", content="This week: lo-fi", kind="preference", ttl_days=7
    )
    (record,) = reconcile(mem_store, NS, [fact], at="2024-05-13T10:00:00Z").added
    assert record.expires_at == d("2024-05-20T10:00:00")
    assert mem_store.search_records(NS, "music", now="2024-05-14")
    assert mem_store.search_records(NS, "music", now="2024-05-21") == []


def test_illegal_transition_is_a_clear_error() -> None:
    record = MemoryRecord(namespace=NS, content="x", status="archived", valid_to="2030-01-01")
    with pytest.raises(InvalidTransitionError, match="archived is final"):
        record.transition("active")


def test_free_text_duplicate_is_refreshed(mem_store: ChromaMemoryStore) -> None:
    fact = Fact(content="The user went hiking in the Alps last summer.", kind="event")
    reconcile(mem_store, NS, [fact], at="2024-01-01")
    again = reconcile(mem_store, NS, [fact], at="2024-01-02")
    assert again.added == [] and len(again.refreshed) == 1
    assert len(mem_store.list_records(NS)) == 1


def test_conflict_judge_may_only_archive(mem_store: ChromaMemoryStore) -> None:
    from langchain_core.runnables import RunnableLambda

    from langchain_lifecycle_memory.write.update import ConflictVerdict

    reconcile(
        mem_store, NS, [Fact(content="The user is planning a trip to Japan in May.", kind="event")], at="2024-01-01"
    )
    old = mem_store.list_records(NS)[0]
    judge = RunnableLambda(
        lambda x: ConflictVerdict(superseded_ids=[c.id for c in x["candidates"]] + ["not-a-real-id"])
    )
    cfg = UpdateConfig(judge=judge)
    result = reconcile(
        mem_store,
        NS,
        [Fact(content="The user cancelled the Japan trip in May.", kind="event")],
        at="2024-02-01",
        config=cfg,
    )
    assert [r.id for r in result.archived] == [old.id]
    assert len(mem_store.list_records(NS)) == 2  # archived, never deleted


def _said(text: str, at: str, store: ChromaMemoryStore, user: str = "u-choice") -> None:
    from langchain_lifecycle_memory.write._rules import extract_rule_facts

    reconcile(store, ("memories", user), extract_rule_facts(text), at=at)


def _current(store: ChromaMemoryStore, user: str = "u-choice") -> list[str]:
    return sorted(str(r.value) for r in store.list_records(("memories", user), statuses="active"))


@pytest.mark.parametrize(
    ("first", "then", "other"),
    [
        ("I prefer Vim.", "I prefer Emacs.", "I prefer oolong tea."),
        ("我更喜欢爵士乐", "我更喜欢摇滚乐", "我更喜欢安卓手机"),
    ],
)
def test_a_preferred_choice_replaces_one_of_its_kind_only(
    mem_store: ChromaMemoryStore, first: str, then: str, other: str
) -> None:
    _said(first, "2024-01-01", mem_store)
    _said(other, "2024-01-02", mem_store)
    before = _current(mem_store)
    _said(then, "2024-02-01", mem_store)
    after = _current(mem_store)
    assert len(before) == 2 and len(after) == 2  # the other kind of thing stays beside the new choice
    assert len(set(before) - set(after)) == 1


def test_liking_two_things_keeps_both(mem_store: ChromaMemoryStore) -> None:
    _said("I like jazz.", "2024-01-01", mem_store, "u-likes")
    _said("I like rock music.", "2024-02-01", mem_store, "u-likes")
    assert len(_current(mem_store, "u-likes")) == 2


def _city(value: str, content: str, evidence: str | None, **kw: Any) -> Fact:
    return Fact(entity="user", attribute="city", value=value, content=content, kind="profile", evidence=evidence, **kw)


def test_an_unchecked_extraction_never_archives_the_current_value(mem_store: ChromaMemoryStore) -> None:
    ns = ("memories", "grounding")
    reconcile(mem_store, ns, [_city("Berlin", "The user lives in Berlin.", "I live in Berlin.")], at="2024-01-01")
    fact = _city("Madrid", "The user had a great trip last month.", "I had a great trip last month.")
    assert reconcile(mem_store, ns, [fact], at="2024-02-01").archived == []
    kept = {r.content: (r.value, r.status) for r in mem_store.list_records(ns)}
    assert kept["The user lives in Berlin."] == ("Berlin", MemoryStatus.ACTIVE)
    assert kept[fact.content] == (None, MemoryStatus.ACTIVE)  # the statement, without the slot


@pytest.mark.parametrize(
    ("fact", "person"),
    [
        (_city("Madrid", "The user lives in Madrid.", "My sister Ana just moved to Madrid."), "sister_ana"),
        (_city("马德里", "用户住在马德里。", "我姐姐刚搬到马德里。"), "sister"),
        # The news goes on in a sentence without a subject: still hers
        (_city("马德里", "用户搬到了马德里。", "我表姐辞职了！下个月就搬到马德里，在顺丰做物流。"), "cousin"),
    ],
    ids=["en", "zh", "zh-subject-dropped"],
)
def test_a_relatives_move_filed_as_the_users_goes_under_the_relative(
    mem_store: ChromaMemoryStore, fact: Fact, person: str
) -> None:
    ns = ("memories", f"refile-{person}")
    reconcile(mem_store, ns, [_city("Berlin", "The user lives in Berlin.", "I live in Berlin.")], at="2024-01-01")
    assert reconcile(mem_store, ns, [fact], at="2024-02-01").archived == []
    current = {(r.entity, r.attribute): r.value for r in mem_store.list_records(ns, statuses=[MemoryStatus.ACTIVE])}
    assert current == {("user", "city"): "Berlin", (person, "city"): fact.value}


def test_a_grounded_move_archives_and_a_name_needs_a_naming_statement(mem_store: ChromaMemoryStore) -> None:
    ns = ("memories", "grounding-ok")
    reconcile(mem_store, ns, [_city("Berlin", "The user lives in Berlin.", "I live in Berlin.")], at="2024-01-01")
    moved = _city("Madrid", "The user lives in Madrid.", "My sister helped me move to Madrid.")
    assert [r.value for r in reconcile(mem_store, ns, [moved], at="2024-02-01").archived] == ["Berlin"]

    def name(value: str, said: str) -> Fact:
        return Fact(
            entity="user", attribute="name", value=value, content=f"The user is {value}.", kind="profile", evidence=said
        )

    reconcile(mem_store, ns, [name("Sam", "My name is Sam.")], at="2024-01-01")
    assert reconcile(mem_store, ns, [name("Leo", "My son Leo started school.")], at="2024-02-01").archived == []
    assert [
        r.value for r in reconcile(mem_store, ns, [name("Samuel", "Call me Samuel.")], at="2024-03-01").archived
    ] == ["Sam"]


def test_an_unchecked_extraction_opens_no_slot_and_keeps_the_statement(mem_store: ChromaMemoryStore) -> None:
    ns = ("memories", "first-unsaid")
    fact = _city("Madrid", "The user had a great trip last month.", "I had a great trip last month.")
    reconcile(mem_store, ns, [fact], at="2024-01-01")
    kept = mem_store.list_records(ns)
    assert [(r.attribute, r.value, r.status) for r in kept] == [(None, None, MemoryStatus.ACTIVE)]
    assert kept[0].content == fact.content  # the statement stays findable, only the slot is not opened
    own = _city("Gdańsk", "The user lives in Gdańsk.", "I live in Gdańsk.")
    reconcile(mem_store, ns, [own], at="2024-02-01")
    assert {r.value for r in mem_store.list_records(ns, statuses=[MemoryStatus.ACTIVE])} == {None, "Gdańsk"}


@pytest.mark.parametrize(
    ("first", "later", "person"),
    [
        (
            _city("Wrocław", "My sister Kasia lives in Wrocław.", "My sister Kasia lives in Wrocław, she plays viola."),
            _city("Poznań", "Kasia just moved to Poznań.", "Kasia just moved to Poznań, she got a job there."),
            "sister_kasia",
        ),
        (
            _city("成都", "用户住在成都。", "我哥哥阿杰在成都开了家火锅店。"),
            _city("重庆", "用户搬到重庆了。", "阿杰把火锅店搬到重庆了，生意更好。"),
            "brother_jie",
        ),
    ],
    ids=["en", "zh"],
)
def test_a_relative_named_later_keeps_their_own_slot_and_the_users_city(
    mem_store: ChromaMemoryStore, first: Fact, later: Fact, person: str
) -> None:
    # A small model files both as the user's city; the words say whose they are.
    ns = ("memories", f"first-{person}")
    reconcile(mem_store, ns, [first], at="2024-01-01")
    own = _city("Gdańsk", "The user lives in Gdańsk.", "I live in Gdańsk.")
    reconcile(mem_store, ns, [own], at="2024-02-01")
    moved = reconcile(mem_store, ns, [later], at="2024-03-01")
    assert [(r.entity, r.value) for r in moved.archived] == [(person, first.value)]
    current = {(r.entity, r.attribute): r.value for r in mem_store.list_records(ns, statuses=[MemoryStatus.ACTIVE])}
    assert current == {("user", "city"): "Gdańsk", (person, "city"): later.value}


@pytest.mark.parametrize(
    ("attribute", "value", "said"),
    [
        ("emergency_contact", "Tomas Lindgren", "Please add my coworker Tomas Lindgren as an emergency contact."),
        ("emergency_contacts", "Noor", "My emergency contacts are my sister Noor and my neighbour Ray."),
        ("car", "Corolla", "My sister sold me her Corolla."),
    ],
    ids=["relative-is-the-value", "my-own-list", "i-in-clause"],
)
def test_the_users_own_slot_naming_a_relative_is_opened(
    mem_store: ChromaMemoryStore, attribute: str, value: str, said: str
) -> None:
    ns = ("memories", f"own-{attribute}")
    fact = Fact(entity="user", attribute=attribute, value=value, content=said, evidence=said)
    reconcile(mem_store, ns, [fact], at="2024-01-01")
    assert [(r.attribute, r.value) for r in mem_store.list_records(ns)] == [(attribute, value)]


def test_the_same_value_restated_with_a_new_number_replaces_the_old_words(mem_store: ChromaMemoryStore) -> None:
    # A small model files both budget statements under one slot and value: the newer words must be current.
    ns = ("memories", "restated")

    def budget(amount: str) -> Fact:
        said = f"My budget for the wedding photographer is ${amount}."
        return Fact(entity="user", attribute="job_title", value="photographer", content=said, evidence=said)

    reconcile(mem_store, ns, [budget("1,800")], at="2025-02-01")
    reconcile(mem_store, ns, [budget("1,800")], at="2025-02-10")  # the same words again: one record, refreshed
    assert len(mem_store.list_records(ns)) == 1
    result = reconcile(mem_store, ns, [budget("2,600")], at="2025-03-14")
    assert ["2,600" in r.content for r in result.added] == [True]
    assert ["1,800" in r.content for r in result.archived] == [True]
    assert result.archived[0].superseded_by == result.added[0].id


@pytest.mark.parametrize(
    ("make", "typo"),
    [
        (lambda: UpdateConfig(chnage_threshold=0.5), "chnage_threshold"),
        (lambda: RetentionPolicy(tll={"event": 3}), "tll"),
        (lambda: Redactor(mdoe="drop"), "mdoe"),
    ],
)
def test_a_misspelt_setting_is_an_error_not_ignored(make: Any, typo: str) -> None:
    with pytest.raises(ValueError, match=typo):
        make()


def test_an_introduction_opens_the_name_and_a_childs_name_does_not(mem_store: ChromaMemoryStore) -> None:
    def name(value: str, said: str) -> Fact:
        return Fact(entity="user", attribute="name", value=value, content=said, kind="profile", evidence=said)

    reconcile(mem_store, ("memories", "intro"), [name("Marek", "Hi! I'm Marek, I translate manuals.")], at="2025-01-07")
    assert [r.value for r in mem_store.list_records(("memories", "intro"))] == ["Marek"]
    reconcile(mem_store, ("memories", "child"), [name("Leo", "My son Leo started school today.")], at="2025-01-07")
    records = mem_store.list_records(("memories", "child"))
    assert [(r.entity, r.attribute, r.value) for r in records] == [("son_leo", "name", "Leo")]  # the son's name


@pytest.mark.parametrize(
    ("attribute", "value", "content", "said", "entity"),
    [
        (
            "instrument",
            "viola",
            "Kasia plays viola.",
            "My sister Kasia lives in Wrocław, she plays viola.",
            "sister_kasia",
        ),
        ("school", "幼儿园大班", "小满上幼儿园大班。", "我女儿小满今年五岁，上幼儿园大班。", "daughter_满"),
        (
            None,
            None,
            "My son Tobias started first grade.",
            "My son Tobias started first grade, he cried.",
            "son_tobias",
        ),
        ("manager", "Priya", "My manager is Priya.", "My manager is Priya, she's great.", "user"),
        ("city", "Berlin", "The user and their wife moved to Berlin.", "My wife and I moved to Berlin.", "user"),
        ("city", "Gdańsk", "The user lives in Gdańsk.", "Hi! I'm Marek, I translate from my flat in Gdańsk.", "user"),
        (
            "name",
            "Tomasz",
            "My brother Tomasz came over.",
            "my brother Tomasz came over in his Subaru.",
            "brother_tomasz",
        ),
        ("phone", "Mate 60", "用户在用 Mate 60。", "过年回家发现我爸建国在用华为 Mate 60，还天天炫耀。", "father_建国"),
        ("car", "Corolla", "The user drives a Corolla.", "My sister sold me her Corolla.", "user"),
    ],
    ids=[
        "pronoun",
        "zh-continued-clause",
        "statement",
        "relative-is-the-value",
        "both",
        "own-flat",
        "a-relatives-name-is-theirs",
        "named-inside-the-clause",
        "speaker-in-the-clause",
    ],
)
def test_a_fact_goes_under_the_person_its_words_are_about(
    mem_store: ChromaMemoryStore, attribute: str | None, value: str | None, content: str, said: str, entity: str
) -> None:
    ns = ("memories", f"whose-{entity}-{attribute}")
    fact = Fact(entity="user", attribute=attribute, value=value, content=content, evidence=said)
    reconcile(mem_store, ns, [fact], at="2024-01-01")
    assert [(r.entity, r.value) for r in mem_store.list_records(ns)] == [(entity, value)]


@pytest.mark.parametrize(
    ("fact", "kept"),
    [
        (
            Fact(
                entity="user",
                attribute="editor",
                value="VS Code",
                content="The user now uses the VS Code editor.",
                evidence="Got the Mazda back from the shop, new brake pads and all.",
            ),
            False,
        ),
        (
            Fact(
                entity="user", content="I use VS Code as my code editor.", evidence="最近早上起不来，闹钟响三遍都没用"
            ),
            False,
        ),
        (
            Fact(
                entity="user",
                content="The user has trouble waking up in the morning.",
                evidence="最近早上起不来，闹钟响三遍都没用",
            ),
            True,
        ),
        (Fact(entity="user", attribute="diet", value="素食", content="用户吃素", evidence="我吃素三年了"), True),
    ],
    ids=["prompt-example-echo", "echo-as-a-statement", "translated-statement", "value-said"],
)
def test_an_extracted_fact_in_none_of_the_users_words_is_not_stored(
    mem_store: ChromaMemoryStore, fact: Fact, kept: bool
) -> None:
    ns = ("memories", f"said-{kept}-{len(fact.content)}")
    reconcile(mem_store, ns, [fact], at="2024-01-01")
    stored = [(r.kind, r.content) for r in mem_store.list_records(ns)]
    assert stored == ([(fact.kind, fact.content)] if kept else [("episode", fact.evidence)])  # the words are kept


def test_a_person_known_only_from_a_statement_is_known_by_name(mem_store: ChromaMemoryStore) -> None:
    ns = ("memories", "known-by-statement")
    said = "My sister Kasia lives in Wrocław, she plays viola."
    reconcile(mem_store, ns, [Fact(entity="user", content="My sister Kasia lives in Wrocław.", evidence=said)])
    reconcile(mem_store, ns, [_city("Gdańsk", "The user lives in Gdańsk.", "I live in Gdańsk.")])
    moved = _city("Poznań", "Kasia just moved to Poznań.", "Kasia just moved to Poznań, she got a job there.")
    reconcile(mem_store, ns, [moved])
    current = {(r.entity, r.attribute): r.value for r in mem_store.list_records(ns, statuses=[MemoryStatus.ACTIVE])}
    assert current[("user", "city")] == "Gdańsk"
    assert current[("sister_kasia", "city")] == "Poznań"


def test_a_pronoun_after_a_question_means_the_person_the_question_named(mem_store: ChromaMemoryStore) -> None:
    """ "Tomasz actually sold the Subaru?? he just picked up a Tesla": "he" is Tomasz, not the user."""
    ns = ("memories", "pronoun-after-question")
    mine = Fact(entity="user", attribute="car", value="Mazda CX-5", content="The user drives a Mazda CX-5.")
    his = Fact(entity="brother_tomasz", attribute="car", value="Subaru Outback", content="Tomasz drives an Outback.")
    reconcile(mem_store, ns, [mine, his], at="2025-02-17")
    said = "ok so Tomasz actually sold the Subaru?? he just picked up a Tesla Model Y last week."
    new = Fact(entity="user", attribute="car", value="Tesla Model Y", content="The user picked up a Tesla Model Y.")
    reconcile(mem_store, ns, [new.model_copy(update={"evidence": said})], at="2025-05-22")
    current = {(r.entity, r.attribute): r.value for r in mem_store.list_records(ns, statuses=[MemoryStatus.ACTIVE])}
    assert current[("user", "car")] == "Mazda CX-5"
    assert current[("brother_tomasz", "car")] == "Tesla Model Y"


def test_a_pronoun_under_a_heading_means_the_person_the_heading_names(mem_store: ChromaMemoryStore) -> None:
    """ "news from Nadia: she dropped out of Chicago…" is Nadia's news, not the user's, and not shown for the user."""
    ns = ("memories", "pronoun-under-heading")
    mine = Fact(entity="user", attribute="race", value="Berlin Marathon", content="The user runs the Berlin Marathon.")
    hers = Fact(entity="cousin_nadia", content="Nadia got a spot in the Chicago Marathon.", kind="fact")
    reconcile(mem_store, ns, [mine, hers], at="2025-03-02")
    said = "news from Nadia: she dropped out of Chicago. but she got into the London Marathon ballot instead"
    reconcile(mem_store, ns, [Fact(content=said, evidence=said, kind="fact")], at="2025-06-05")
    news = [r for r in mem_store.list_records(ns, statuses=[MemoryStatus.ACTIVE]) if "London" in r.content]
    assert [r.entity for r in news] == ["cousin_nadia"]


@pytest.mark.parametrize(
    ("fact", "entity"),
    [
        (
            Fact(
                entity="user",
                attribute="age",
                value="5",
                content="我的女儿小满今年五岁。",
                evidence="我女儿小满今年五岁，上幼儿园大班。",
            ),
            "daughter_满",
        ),
        (
            Fact(
                entity="user",
                attribute="job",
                value="salsa teacher",
                content="My husband Rafael teaches salsa.",
                evidence="My husband Rafael teaches salsa at a studio in 天河, 周末课最多。",
            ),
            "husband_rafael",
        ),
    ],
    ids=["value-not-in-the-words", "value-half-said"],
)
def test_a_relatives_fact_whose_value_the_words_do_not_hold_is_still_theirs(
    mem_store: ChromaMemoryStore, fact: Fact, entity: str
) -> None:
    ns = ("memories", f"unheld-{entity}")
    reconcile(mem_store, ns, [fact], at="2024-01-01")
    assert {r.entity for r in mem_store.list_records(ns)} == {entity}
