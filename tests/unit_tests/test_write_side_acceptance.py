"""Write-side acceptance: the seed demo and every public scenario turn, through the real
LLM extraction chain (a fake chat model answering with the gold facts as JSON) and the
LangGraph writer, end with exactly the gold slots, values and statuses."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import chromadb
import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory, MemoryStatus, create_memory_writer
from langchain_lifecycle_memory.schema import normalize_value


def _store(embeddings: Any) -> ChromaMemoryStore:
    return ChromaMemoryStore(
        client=chromadb.EphemeralClient(), embeddings=embeddings, collection_prefix=f"w{uuid.uuid4().hex[:10]}"
    )


class _GoldModel(FakeListChatModel):
    """Answers each extraction with the next turn's gold facts; keeps every name when asked to rename slots."""

    def _call(self, messages: list[Any], *args: Any, **kwargs: Any) -> str:
        if messages and str(messages[-1].content).startswith("New facts:"):
            return '{"answers": []}'
        return super()._call(messages, *args, **kwargs)


def _gold_model(turns: list[dict[str, Any]]) -> FakeListChatModel:
    return _GoldModel(responses=[json.dumps({"facts": t.get("facts", [])}, ensure_ascii=False) for t in turns])


SEED = [
    {
        "user": "我喜欢使用 Vim 编辑器",
        "at": "2024-01-01T10:00:00Z",
        "facts": [
            {
                "entity": "user",
                "attribute": "editor",
                "value": "Vim",
                "content": "用户喜欢使用 Vim 编辑器",
                "kind": "preference",
                "confidence": 0.9,
            }
        ],
    },
    {
        "user": "我现在改用 VS Code 了",
        "at": "2024-03-01T10:00:00Z",
        "facts": [
            {
                "entity": "user",
                "attribute": "editor",
                "value": "VS Code",
                "content": "用户现在使用 VS Code 编辑器",
                "kind": "preference",
                "confidence": 0.9,
            }
        ],
    },
]


@pytest.mark.parametrize("extractor", ["rule", "fake-llm"])
def test_seed_demo_end_to_end(extractor: str, embeddings: Any) -> None:
    memory = LifecycleMemory(_store(embeddings), extractor="rule" if extractor == "rule" else _gold_model(SEED))
    for turn in SEED:
        memory.add_messages([("user", turn["user"]), ("ai", "好的")], "u1", at=turn["at"])
    vim, code = memory.history("u1", "user", "editor")
    assert (vim.value, vim.status, code.value, code.status) == (
        "Vim",
        MemoryStatus.ARCHIVED,
        "VS Code",
        MemoryStatus.ACTIVE,
    )
    assert vim.valid_to == code.valid_from and vim.superseded_by == code.id
    for query in ["用户的编辑器偏好是什么？", "我适合用什么工具写 Python？", "What editor do I use?"]:
        docs = memory.search(query, "u1", now="2024-03-02T09:00:00Z")
        assert all("Vim" not in d.page_content for d in docs)
    assert "VS Code" in memory.inject("我适合用什么工具写 Python？", "u1", now="2024-03-02T09:00:00Z").text


def test_every_public_turn_through_the_writer(shared_dir: Path, embeddings: Any) -> None:
    lines = (shared_dir / "scenarios" / "public.jsonl").read_text(encoding="utf-8").splitlines()
    checked = 0
    for line in filter(None, lines):
        scenario = json.loads(line)
        turns = [s for s in scenario["steps"] if s["type"] == "turn"]
        store = _store(embeddings)
        writer = create_memory_writer(store, extractor=_gold_model(turns))
        expected: dict[tuple[str, str, str], list[str]] = {}  # (user, entity, attribute) -> values in order
        for turn in turns:
            user = turn.get("user_id", scenario["user_id"])
            cfg = {"configurable": {"user_id": user, "memory_now": turn["at"]}}
            out = writer.invoke({"messages": [HumanMessage(turn["user"]), ("ai", turn.get("assistant", ""))]}, cfg)
            assert out["memory_error"] is None
            for fact in turn.get("facts", []):
                expected.setdefault((user, fact["entity"], fact["attribute"]), []).append(fact["value"])
        for (user, entity, attribute), values in expected.items():
            history = store.history(("memories", user), entity, attribute, now=turns[-1]["at"])
            active = [r for r in history if r.status is MemoryStatus.ACTIVE]
            distinct = list(dict.fromkeys(normalize_value(v) for v in values))
            assert len(active) == 1, (scenario["id"], entity, attribute)
            # PII is masked before storage, so a sensitive value is compared by presence only.
            if active[0].kind != "sensitive":
                assert normalize_value(active[0].value) == normalize_value(values[-1])
            changes = sum(1 for a, b in zip(values, values[1:]) if normalize_value(a) != normalize_value(b))
            assert len(history) == changes + 1, (scenario["id"], entity, attribute, distinct)
            assert all(r.status is MemoryStatus.ARCHIVED for r in history if r is not active[0])
            checked += 1
    assert checked > 100


def test_a_value_filed_under_another_word_class_joins_its_own(embeddings: Any) -> None:
    """A small model copies its prompt's example slot ("editor" for an ukulele): the user's real editor stays
    current, and the ukulele joins the instruments; a value no lexicon knows stays where the model put it."""
    turns = [
        {"user": "I write all my code in Neovim.", "facts": [_fact("editor", "Neovim", "The user codes in Neovim.")]},
        {"user": "我从小弹古筝。", "facts": [_fact("instrument", "古筝", "用户从小弹古筝")]},
        {"user": "Also picked up the ukulele.", "facts": [_fact("editor", "ukulele", "The user plays the ukulele.")]},
        {"user": "Trying Cursor as my editor.", "facts": [_fact("editor", "Cursor", "The user now uses Cursor.")]},
    ]
    memory = LifecycleMemory(_store(embeddings), extractor=_gold_model(turns))
    for i, turn in enumerate(turns):
        memory.add_messages([("user", turn["user"])], "u1", at=f"2024-0{i + 1}-01")
    current = {(r.attribute, r.value) for r in memory.active("u1")}
    assert {("instrument", "古筝"), ("instrument", "ukulele"), ("editor", "Cursor")} <= current
    assert [(r.value, r.status) for r in memory.history("u1", "user", "editor")] == [
        ("Neovim", MemoryStatus.ARCHIVED),
        ("Cursor", MemoryStatus.ACTIVE),
    ]


def test_a_value_filed_under_a_broader_class_joins_its_own_unless_the_user_named_that_class(embeddings: Any) -> None:
    """The model files the accordion as a hobby: the instruments answer it, as the rules would have filed it; a
    sport the user called a hobby in so many words stays a hobby."""
    turns = [
        {"user": "我从小拉手风琴，业余八级。", "facts": [_fact("hobby", "手风琴", "用户从小拉手风琴，业余八级。")]},
        {"user": "我的爱好是打壁球。", "facts": [_fact("hobby", "壁球", "用户的爱好是打壁球。")]},
    ]
    memory = _replayed(embeddings, turns)
    current = {(r.attribute, r.value) for r in memory.active("u")}
    assert {("instrument", "手风琴"), ("hobby", "壁球")} <= current
    assert "手风琴" in memory.inject("我会什么乐器？", "u", now="2024-03-01").text


def test_a_fact_in_the_prompts_example_slot_needs_words_about_it(embeddings: Any) -> None:
    """ "Got an e-bike…" filed as ``editor`` (the prompt's example answer) is kept as said, beside the current
    editor; a turn about a tool for code files its value there, whether or not a lexicon knows it."""
    turns = [
        {"user": "I write all my code in Neovim.", "facts": [_fact("editor", "Neovim", "The user codes in Neovim.")]},
        {"user": "Got an e-bike last month, riding along the river to the office.",
         "facts": [_fact("editor", "e-bike", "The user got an e-bike.")]},
        {"user": "Lately I use Zed for coding.", "facts": [_fact("editor", "Zed", "The user uses Zed for coding.")]},
        {"user": "我现在用 Fleet 写代码。", "facts": [_fact("editor", "Fleet", "用户现在用 Fleet 写代码。")]},
    ]  # fmt: skip
    memory = LifecycleMemory(_store(embeddings), extractor=_gold_model(turns))
    memory.add_messages([("user", turns[0]["user"])], "u1", at="2024-01-01")
    memory.add_messages([("user", turns[1]["user"])], "u1", at="2024-02-01")
    assert [(r.value, r.status) for r in memory.history("u1", "user", "editor")] == [("Neovim", MemoryStatus.ACTIVE)]
    assert any(r.attribute is None and "e-bike" in r.content for r in memory.active("u1"))
    for i, turn in enumerate(turns[2:]):
        memory.add_messages([("user", turn["user"])], "u1", at=f"2024-0{i + 3}-01")
        current = [r.value for r in memory.history("u1", "user", "editor") if r.status is MemoryStatus.ACTIVE]
        assert current == [turn["facts"][0]["value"]]


def test_the_example_slot_is_the_prompts_example_answer() -> None:
    from langchain_lifecycle_memory.write._grounding import EXAMPLE_SLOT
    from langchain_lifecycle_memory.write._prompts import _JSON_FORMAT

    assert f'"attribute": "{EXAMPLE_SLOT}"' in _JSON_FORMAT


def _fact(attribute: str, value: str, content: str) -> dict[str, Any]:
    return {"entity": "user", "attribute": attribute, "value": value, "content": content, "kind": "preference"}


def test_a_relative_named_in_a_statement_kept_as_said_is_recognised_next_time(embeddings: Any) -> None:
    """Offline extractor: the son named in one turn is the subject of "Theo switched…" in a later one."""
    memory = LifecycleMemory(_store(embeddings))
    memory.add_messages([("user", "Our son Theo goes to the Little Oaks after-school program.")], "u", at="2023-09-01")
    memory.add_messages([("user", "Theo switched to the Brightside after-school program.")], "u", at="2024-09-01")
    theirs = [r.content for r in memory.active("u") if r.entity == "son_theo"]
    assert any("Brightside" in c for c in theirs), theirs


def _replayed(embeddings: Any, turns: list[dict[str, Any]]) -> LifecycleMemory:
    """User ``u``'s memory after ``turns``, one a month from January 2024, each extracted as its gold facts."""
    memory = LifecycleMemory(_store(embeddings), extractor=_gold_model(turns))
    for i, turn in enumerate(turns):
        memory.add_messages([("user", turn["user"])], "u", at=f"2024-0{i + 1}-01")
    return memory


def test_a_value_the_user_said_in_short_still_replaces_the_old_one(embeddings: Any) -> None:
    """ "On site Mon/Wed/Fri now" extracted as "Monday, Wednesday and Friday": the value is said, cut short, so the
    office days it changes are archived; a value the words do not hold at all is still kept without its slot."""
    turns = [
        {"user": "I'm in the office Tuesdays and Thursdays.",
         "facts": [_fact("office_days", "Tuesdays and Thursdays", "The user is in the office Tue and Thu.")]},
        {"user": "New policy: on site Mon/Wed/Fri now.",
         "facts": [_fact("office_days", "Monday, Wednesday and Friday", "The user is on site Mon, Wed and Fri.")]},
        {"user": "Ugh, traffic was awful today.",
         "facts": [_fact("office_days", "weekends", "The user works weekends.")]},
    ]  # fmt: skip
    memory = _replayed(embeddings, turns)
    current = [r.value for r in memory.history("u", "user", "office_days") if r.status is MemoryStatus.ACTIVE]
    assert current == ["Monday, Wednesday and Friday"]


def test_a_refresh_whose_words_change_a_number_is_the_new_version(embeddings: Any) -> None:
    """A small model files "we bumped the photographer budget up to $2,600" as the value it already holds, in a
    statement without the number: the user's words, which change it, become the current statement."""
    turns = [
        {"user": "My budget for the wedding photographer is $1,800.",
         "facts": [_fact("job_title", "photographer", "My budget for the wedding photographer is $1,800.")]},
        {"user": "Update: we bumped the photographer budget up to $2,600 after seeing some portfolios.",
         "facts": [_fact("job_title", "photographer", "The user is a photographer.")]},
        {"user": "Still loving the photographer we picked!",
         "facts": [_fact("job_title", "photographer", "The user is a photographer.")]},
    ]  # fmt: skip
    block = _replayed(embeddings, turns).inject("What's my budget for the wedding photographer?", "u", now="2024-05-01")
    assert "2,600" in block.text and "1,800" not in block.text, block.text


def test_a_relatives_fact_filed_as_the_users_goes_under_them(embeddings: Any) -> None:
    """A small model files a flatmate's diet and a cousin's year of study as the user's: the words say whose they
    are ("my flatmate Dani", "我表妹晓雯", "我们组的同事"), even where the value is not said word for word ("大三学生"
    for "今年大三"), so the user's own values stay current."""
    turns = [
        {"user": "I've been pescatarian for about three years now.",
         "facts": [_fact("diet", "pescatarian", "The user is pescatarian.")]},
        {"user": "my flatmate Dani is full-on vegan, our shared fridge is basically oat milk and tofu",
         "facts": [_fact("diet", "vegan", "The user is vegan.")]},
        {"user": "我现在在读研二，每天泡实验室。", "facts": [_fact("school_year", "研二", "用户在读研二。")]},
        {"user": "我表妹晓雯今年大三，在南京大学读化学，前两天还问我读研累不累",
         "facts": [_fact("school_year", "大三学生", "用户是大三学生。")]},
        {"user": "我最近每周二周四去练普拉提。", "facts": [_fact("sport", "普拉提", "用户在练普拉提。")]},
        {"user": "我们组的同事阿杰在练泰拳，还给我们看他腿上的淤青",
         "facts": [_fact("sport", "泰拳", "用户在练泰拳。")]},
    ]  # fmt: skip
    memory = _replayed(embeddings, turns)
    for attribute, mine in [("diet", "pescatarian"), ("school_year", "研二"), ("sport", "普拉提")]:
        current = [r.value for r in memory.history("u", "user", attribute) if r.status is MemoryStatus.ACTIVE]
        assert current == [mine], (attribute, current)
    theirs = {r.entity for r in memory.active("u") if r.entity not in (None, "user")}
    assert {"roommate_dani", "cousin_xiaowen", "colleague_jie"} <= theirs, theirs


def test_an_extraction_with_no_fact_in_the_words_keeps_the_words(embeddings: Any) -> None:
    """The model answers a turn with its prompt's example, which the words do not hold: the fact is dropped and the
    turn is kept as an episode about the person it speaks of, so a question about him finds it, and one about the
    user's own phone does not."""
    turns = [
        {"user": "我现在用的是小米14。", "facts": [_fact("smartphone", "小米14", "用户现在用小米14。")]},
        {"user": "我爸又换手机了，那台华为给我妈用了，他自己买了个iPhone 16。",
         "facts": [_fact("editor", "VS Code", "The user likes using the VS Code editor.")]},
    ]  # fmt: skip
    memory = _replayed(embeddings, turns)
    assert not any("VS Code" in r.content for r in memory.list("u"))
    [kept] = [r for r in memory.list("u") if r.kind == "episode"]  # kept like a turn whose extraction failed
    assert kept.entity == "father"
    assert "iPhone 16" in memory.inject("我爸现在用的是什么手机？", "u", now="2024-02-20").text
    assert "iPhone 16" not in memory.inject("我现在用的是什么手机？", "u", now="2024-02-20").text


def test_a_relative_without_their_name_is_the_one_of_that_relation_the_user_named(embeddings: Any) -> None:
    """ "My wife" after "my wife Mei" is Mei: her new employer replaces the old one. Of two sisters, neither."""

    def said(entity: str, attribute: str, value: str, text: str) -> dict[str, Any]:
        return {"user": text, "facts": [{**_fact(attribute, value, text), "entity": entity}]}

    memory = _replayed(embeddings, [
        said("wife_mei", "employer", "Deloitte", "My wife Mei works at Deloitte."),
        said("wife", "employer", "KPMG", "My wife just joined KPMG."),
        said("sister_ana", "city", "Lyon", "My sister Ana lives in Lyon."),
        said("sister_bea", "city", "Nice", "My sister Bea lives in Nice."),
        said("sister", "city", "Paris", "My sister moved to Paris."),
    ])  # fmt: skip
    assert [(r.value, r.status) for r in memory.history("u", "wife_mei", "employer")] == [
        ("Deloitte", MemoryStatus.ARCHIVED),
        ("KPMG", MemoryStatus.ACTIVE),
    ]
    for sister, city in [("sister_ana", "Lyon"), ("sister_bea", "Nice")]:
        assert [r.value for r in memory.history("u", sister, "city")] == [city]


def test_a_relative_is_one_entity_whatever_word_named_them(embeddings: Any) -> None:
    """A model names the user's mother ``mother`` in one turn and ``老妈`` in the next: one person, one slot."""
    memory = _replayed(embeddings, [
        {"user": "我妈在中国银行当柜员。", "facts": [{**_fact("employer", "中国银行", "用户的妈妈在中国银行当柜员"),
                                                 "entity": "mother"}]},
        {"user": "老妈调到街道办去上班了。", "facts": [{**_fact("employer", "街道办", "用户的妈妈在街道办上班"),
                                                    "entity": "老妈"}]},
    ])  # fmt: skip
    assert [(r.value, r.status) for r in memory.history("u", "mother", "employer")] == [
        ("中国银行", MemoryStatus.ARCHIVED),
        ("街道办", MemoryStatus.ACTIVE),
    ]


def test_a_statement_that_leaves_out_the_turns_names_is_kept_in_its_words(embeddings: Any) -> None:
    """The model reads "Reorg 之后我被分到 payments 组了，新的 manager 叫 Priya Raman" as "I was reorganized into the
    payments group.": the block still names the new manager. A statement that keeps every name stays the model's."""
    turns = [
        {"user": "Reorg 之后我被分到 payments 组了，新的 manager 叫 Priya Raman。",
         "facts": [_fact("team", "payments", "I was reorganized into the payments group.")]},
        {"user": "I work at Siemens in Munich.",
         "facts": [_fact("employer", "Siemens", "The user works at Siemens in Munich.")]},
    ]  # fmt: skip
    memory = _replayed(embeddings, turns)
    assert "Priya Raman" in memory.inject("Who is my manager now?", "u", now="2024-03-01").text
    assert "The user works at Siemens in Munich." in [r.content for r in memory.active("u")]


def test_the_one_who_does_a_thing_is_not_that_thing(embeddings: Any) -> None:
    """A "player" slot is not the vocabulary's ``plays`` (what the user plays, a set), though the names share a stem:
    the user's new favourite player replaces the old one and joins nothing they play."""
    turns = [
        {"user": "I play backgammon and badminton.",
         "facts": [_fact("plays", "backgammon", "The user plays backgammon."),
                   _fact("plays", "badminton", "The user plays badminton.")]},
        {"user": "My favourite player is Pedri.",
         "facts": [_fact("player", "Pedri", "The user's favourite player is Pedri.")]},
        {"user": "Honestly Bellingham is my favourite player now.",
         "facts": [_fact("player", "Bellingham", "The user's favourite player is now Bellingham.")]},
    ]  # fmt: skip
    memory = _replayed(embeddings, turns)
    assert [(r.value, r.status) for r in memory.history("u", "user", "player")] == [
        ("Pedri", MemoryStatus.ARCHIVED),
        ("Bellingham", MemoryStatus.ACTIVE),
    ]
    block = memory.inject("Whose shirt should I buy, my favourite player's?", "u", now="2024-04-01").text
    assert "Bellingham" in block and "Pedri" not in block
    assert {r.value for r in memory.active("u") if r.attribute == "plays"} == {"backgammon", "badminton"}


def test_a_quantity_filed_under_a_slot_of_words_leaves_that_slot(embeddings: Any) -> None:
    """A small model files "I make 72k a year now" as ``job = 72k`` (and the rent as the city): a bare quantity is no
    new value for a slot whose values have no digit, so the job stays current and the words are kept beside it."""
    turns = [
        {"user": "I'm a beekeeper, about forty hives up on the ridge.",
         "facts": [_fact("job", "beekeeper", "The user is a beekeeper with about forty hives.")]},
        {"user": "Honey prices went up, I make 72k a year now.",
         "facts": [_fact("job", "72k", "The user makes 72k a year now.")]},
    ]  # fmt: skip
    memory = _replayed(embeddings, turns)
    assert [r.value for r in memory.history("u", "user", "job") if r.status is MemoryStatus.ACTIVE] == ["beekeeper"]
    assert "The user makes 72k a year now." in [r.content for r in memory.active("u")]


def test_a_statement_of_a_value_the_words_do_not_say_is_kept_in_the_words(embeddings: Any) -> None:
    """The model makes up the value and states it ("The user edits videos in Premiere Pro." for words that name no
    program): the user's own words are kept, never the made-up name."""
    turns = [
        {"user": "I edit my travel videos on the laptop most evenings.",
         "facts": [_fact("video_editor", "Premiere Pro", "The user edits videos in Premiere Pro.")]},
    ]  # fmt: skip
    contents = [r.content for r in _replayed(embeddings, turns).active("u")]
    assert contents == ["I edit my travel videos on the laptop most evenings."], contents


def test_the_users_words_end_what_they_change_whatever_slot_the_model_chose(embeddings: Any) -> None:
    """ "I've given up alcohol" filed as ``alcohol`` in a statement that says no change: the words still end the
    nightly sherry (``drink``). Words that only name a new value end no other single slot (no new birthplace)."""
    turns = [
        {"user": "I have a small glass of sherry every night before bed.",
         "facts": [_fact("drink", "sherry", "I have a small glass of sherry every night before bed.")]},
        {"user": "I was born in Valparaíso.",
         "facts": [_fact("birthplace", "Valparaíso", "The user was born in Valparaíso.")]},
        {"user": "I quit drinking last month, doctor's orders.",
         "facts": [_fact("alcohol", "quit drinking", "The user does not drink alcohol.")]},
        {"user": "These days I live in Asunción.",
         "facts": [_fact("city", "Asunción", "The user resides in Asunción.")]},
    ]  # fmt: skip
    memory = _replayed(embeddings, turns)
    current = {r.attribute: r.value for r in memory.active("u")}
    assert "drink" not in current, current
    assert current["birthplace"] == "Valparaíso" and current["city"] == "Asunción", current
