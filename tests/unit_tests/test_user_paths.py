"""What a user of the package notices, through the public API and the CLI only.

Lifecycles (expiry), no trace on disk after edits, precise forgetting and restore, import
reports, numbered attributes. The block's placement and escaping are in test_user_paths_prompt.py,
LangMem on the store in test_langmem_on_store.py, several processes in test_multiprocess.py.

Black-box on purpose: top-level names, ``lifecycle.operations``, ``lifecycle.portability``
and the ``lifecycle-memory`` CLI run as a real process. Each test asserts on what a user
sees: the injected block, ``list``/``history``, the CLI's output and exit code, bytes on disk.
Stores that the CLI also opens use ``DeterministicFakeEmbedding`` (the CLI's ``fake:<dims>``,
followed automatically); the default embedder is used only where the behaviour needs meaning.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_lifecycle_memory import (
    ChromaMemoryStore,
    Fact,
    LifecycleMemory,
    Redactor,
    UpdateConfig,
)
from langchain_lifecycle_memory.lifecycle import operations as ops
from langchain_lifecycle_memory.lifecycle.portability import import_records
from tests.told import told

README = Path(__file__).resolve().parents[2] / "README.md"
NOTHING = "No stored memory is relevant"


# ---------------------------------------------------------------------- helpers
def fake() -> DeterministicFakeEmbedding:
    return DeterministicFakeEmbedding(size=32)  # the CLI reopens it as `--embedder fake:32`


def fake_memory(path: Path, **kwargs: Any) -> LifecycleMemory:
    return LifecycleMemory(ChromaMemoryStore(path, embeddings=fake()), **kwargs)


def cli(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "langchain_lifecycle_memory", "--path", str(path), *args]
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, check=False)


def cli_json(path: Path, *args: str) -> Any:
    done = cli(path, *args, "--json")
    assert done.returncode == 0, f"`lifecycle-memory {' '.join(args)}` exited {done.returncode}: {done.stderr}"
    return json.loads(done.stdout)


def files_containing(folder: Path, text: str) -> list[str]:
    needle = text.encode("utf-8")
    return sorted(str(f.relative_to(folder)) for f in folder.rglob("*") if f.is_file() and needle in f.read_bytes())


def active_values(records: list[Any]) -> set[str]:
    return {r["value"] if isinstance(r, dict) else r.value for r in records if _status(r) == "active"}


def _status(r: Any) -> str:
    return r["status"] if isinstance(r, dict) else r.status.value


# ---------------------------------------------------------------------- 1. lifecycles
@pytest.mark.parametrize(
    ("said", "at", "question", "word"),
    [
        ("I use Vim for everything", "2024-01-02", "What editor should I install on my new laptop?", "Vim"),
        ("I drink black coffee every morning", "2024-01-02", "What should I order at the cafe?", "black coffee"),
        ("I work as a nurse", "2024-06-01", "What do I do for a living?", "nurse"),
    ],
    ids=["preference-vim", "preference-coffee", "profile-nurse"],
)
def test_a_statement_without_a_time_limit_is_still_recalled_two_years_later(
    embeddings: Any, tmp_path: Path, said: str, at: str, question: str, word: str
) -> None:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_messages([("user", said)], user_id="bob", at=at)

    block = memory.inject(question, user_id="bob", now="2026-06-01")
    found = [d.page_content for d in memory.search(question, user_id="bob", now="2026-06-01")]
    listed = [(r.value, r.status.value) for r in memory.list("bob")]

    assert word in block.text, f"not injected on 2026-06-01: {block.text!r}"
    assert any(word in text for text in found), f"search found {found}"
    assert [status for _, status in listed] == ["active"], listed


@pytest.mark.parametrize(
    ("before", "after", "question", "now_true", "not_any_more"),
    [
        ("I love zydeco.", "I don't like zydeco anymore.", "What music should I put on?", None, "love"),
        ("我喜欢吃海胆。", "我不喜欢吃海胆了。", "晚饭推荐点什么？", None, "喜欢吃海胆"),
        ("I love anchovies.", "I hate anchovies.", "What should I put on my pizza?", "hates", "loves"),
        ("I hate sea urchin.", "I love sea urchin now.", "What sushi should I order?", "loves", "hates"),
    ],
    ids=["en-anymore", "zh-le", "en-turned-against", "en-came-round"],
)
def test_a_liking_that_ended_or_turned_is_not_recalled_beside_what_holds_now(
    embeddings: Any, tmp_path: Path, before: str, after: str, question: str, now_true: str | None, not_any_more: str
) -> None:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_messages([("user", before)], user_id="bob", at="2024-01-01")
    memory.add_messages([("user", after)], user_id="bob", at="2024-06-01")

    lines = [line for line in memory.inject(question, user_id="bob", now="2024-07-01").text.splitlines() if '"' in line]
    assert not any(not_any_more in line and "不喜欢" not in line for line in lines), lines
    if now_true is not None:
        assert any(now_true in line for line in lines), lines
    assert [r.status.value for r in memory.list("bob") if r.valid_from.year == 2024 and r.valid_from.month == 1] == [
        "archived"
    ]


@pytest.mark.parametrize(
    ("before", "after", "question", "new", "old"),
    [
        ("I work at Quillmark Labs.", "I started a new job at Tessellate Foods last month.", "Where do I work?",
         "Tessellate", "Quillmark"),
        ("我住在贵阳。", "我上个月搬到昆明了。", "我住在哪？", "昆明", "贵阳"),
    ],
    ids=["en", "zh"],
)  # fmt: skip
def test_a_change_told_later_with_an_earlier_date_replaces_what_was_said_before(
    embeddings: Any, tmp_path: Path, before: str, after: str, question: str, new: str, old: str
) -> None:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_messages([("user", before)], user_id="bob", at="2024-04-01")
    memory.add_messages([("user", after)], user_id="bob", at="2024-04-20")  # dated March by its own words

    block = memory.inject(question, user_id="bob", now="2024-05-01").text
    assert new in block and old not in block, block
    assert [r.value for r in memory.active("bob")] == [next(r.value for r in memory.list("bob") if new in r.content)]

    # An old fact told late stays history: it is no change.
    late = {
        "entity": "user",
        "attribute": "employer",
        "value": "Orrery Cartography",
        "kind": "profile",
        "content": "The user worked at Orrery Cartography in 2016.",
        "valid_from": "2016-01-01T00:00:00Z",
    }
    memory.add_messages([("user", "I work at Quillmark Labs.")], user_id="carol", at="2024-04-01")
    memory.add_facts([late], user_id="carol", at="2024-04-22")
    assert [r.value for r in memory.active("carol")] == ["Quillmark Labs"]


@pytest.mark.parametrize(
    ("said", "question", "word"),
    [
        ("This week I'm only eating soup because of my tooth", "What can I eat this week?", "soup"),
        ("这周我只吃流食", "这周我能吃什么？", "流食"),
    ],
    ids=["en", "zh"],
)
def test_a_temporary_statement_is_injected_the_next_day_not_three_weeks_later(
    embeddings: Any, tmp_path: Path, said: str, question: str, word: str
) -> None:
    memory = told(embeddings, tmp_path, (said, "2026-05-10"))

    next_day = memory.inject(question, user_id="u", now="2026-05-11")
    later = memory.inject(question, user_id="u", now="2026-05-31")

    assert word in next_day.text, f"the next day the block lacks {word!r}: {next_day.text!r}"
    assert word not in later.text, f"three weeks later the block still has {word!r}: {later.text!r}"


@pytest.mark.parametrize(
    ("before", "after", "question", "gone"),
    [
        ("我每天早上喝一杯手冲咖啡。", "我不再喝咖啡了。", "早上喝点什么？", "手冲"),
        ("我每天喝两瓶雪碧。", "雪碧我戒了。", "我平时喝什么饮料？", "雪碧"),
        (
            "I drink hibiscus tea every afternoon.",
            "I no longer drink tea.",
            "What should I drink this afternoon?",
            "hibiscus",
        ),
    ],
    ids=["zh-kind", "zh-topic-first", "en-kind"],
)
def test_quitting_a_kind_of_thing_ends_the_thing_held(
    embeddings: Any, tmp_path: Path, before: str, after: str, question: str, gone: str
) -> None:
    memory = told(embeddings, tmp_path, (before, "2026-05-01"), (after, "2026-05-08"))

    assert gone not in memory.inject(question, user_id="u", now="2026-05-10").text
    assert [r.status.value for r in memory.list("u") if gone in str(r.value)] == ["archived"]


@pytest.mark.parametrize(
    ("first", "second", "died", "question", "gone", "kept"),
    [
        ("I have a dachshund named Ziggy.", "I also have a parakeet called Quenelle.",
         "Ziggy passed away on Sunday, the house is so quiet.", "Which pets need feeding?", "Ziggy", "Quenelle"),
        ("我养了一只柯基叫花卷。", "我还养了一只猫叫毛豆。", "花卷上个月去世了，家里好安静。", "我家有哪些宠物要喂？",
         "花卷", "毛豆"),
    ],
    ids=["en", "zh"],
)  # fmt: skip
def test_a_pet_said_to_have_died_by_its_name_alone_is_no_longer_the_users(
    embeddings: Any, tmp_path: Path, first: str, second: str, died: str, question: str, gone: str, kept: str
) -> None:
    memory = told(embeddings, tmp_path, (first, "2026-01-04"), (second, "2026-01-05"), (died, "2026-05-12"))

    lines = [ln for ln in memory.inject(question, user_id="u", now="2026-05-20").text.splitlines() if '"' in ln]
    assert any(kept in line for line in lines), lines
    assert {r.value: r.status.value for r in memory.list("u") if r.attribute == "pet"} == {
        gone: "archived",
        kept: "active",
    }


@pytest.mark.parametrize(
    ("first", "ended", "question", "gone"),
    [
        ("I have a box turtle named Noodle.", "I no longer have a box turtle.", "Do I have any pets?", "Noodle"),
        ("I have a box turtle named Noodle.", "I don't have a box turtle anymore.", "Do I have any pets?", "Noodle"),
        ("我养了一只六角恐龙，叫豆包。", "我现在不养六角恐龙了。", "我有宠物吗？", "豆包"),
    ],
    ids=["no-longer", "anymore", "zh"],
)
def test_ending_a_thing_by_its_kind_ends_the_one_held_by_its_name(
    embeddings: Any, tmp_path: Path, first: str, ended: str, question: str, gone: str
) -> None:
    memory = told(embeddings, tmp_path, (first, "2026-01-04"), (ended, "2026-03-01"))

    assert gone not in memory.inject(question, user_id="u", now="2026-03-02").text
    assert {r.value: r.status.value for r in memory.list("u") if r.value == gone} == {gone: "archived"}


def test_an_ending_that_says_it_of_something_named_elsewhere_ends_only_that(embeddings: Any, tmp_path: Path) -> None:
    said = [("I play the tenor sax.", "2026-01-04"), ("I also took up the bass clarinet.", "2026-01-05")]
    memory = told(embeddings, tmp_path, *said, ("I sold my bass clarinet, I don't play it anymore.", "2026-03-01"))

    assert {r.value: r.status.value for r in memory.list("u") if r.attribute == "instrument"} == {
        "tenor sax": "active",
        "bass clarinet": "archived",
    }


def test_an_ending_that_shares_a_word_but_not_the_verb_ends_nothing(embeddings: Any, tmp_path: Path) -> None:
    memory = told(
        embeddings, tmp_path, ("I work at a piano showroom.", "2026-01-04"), ("I no longer have a piano.", "2026-03-01")
    )

    assert [r.status.value for r in memory.list("u") if r.value == "piano showroom"] == ["active"]


def test_an_allergy_said_to_be_gone_ends_and_the_others_stay(embeddings: Any, tmp_path: Path) -> None:
    memory = told(
        embeddings, tmp_path, ("I'm allergic to walnuts and carrots.", "2026-01-04"),
        ("Good news: my walnut allergy is gone!", "2026-04-01"),
    )  # fmt: skip

    assert {r.value: r.status.value for r in memory.list("u") if r.attribute == "allergy"} == {
        "walnuts": "archived",
        "carrots": "active",
    }
    assert "gone" not in {r.value for r in memory.list("u")}


def test_a_remark_said_again_and_again_stays_below_what_the_user_stated(embeddings: Any, tmp_path: Path) -> None:
    said = [("I play the tenor sax.", "2026-01-04")] + [("楼里电梯又坏了", f"2026-0{m}-10") for m in range(2, 8)]
    memory = told(embeddings, tmp_path, *said)

    [sax] = [r for r in memory.list("u") if r.value == "tenor sax"]
    [remark] = [r for r in memory.list("u") if "电梯" in r.content]
    assert remark.confidence < sax.confidence
    assert remark.updated_at.month == 7  # refreshed each time it was said


def test_the_block_dates_what_was_said_by_the_users_own_calendar(embeddings: Any, tmp_path: Path) -> None:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_messages([("user", "我住在江门蓬江区。")], user_id="u", at="2025-03-03T07:30:00+08:00")  # 02 in UTC
    memory.add_messages([("user", "我父母昨天搬到了阳江。")], user_id="u", at="2025-03-03T07:35:00+08:00")

    mine = memory.inject("我住在哪？", user_id="u", now="2025-03-03T07:45:00+08:00").text
    theirs = memory.inject("我父母现在住在哪？", user_id="u", now="2025-03-03T07:45:00+08:00").text

    assert "今天是 2025-03-03" in mine and "[2025-03-03 · " in mine, mine
    assert "3月2日" in theirs and "[2025-03-02 · " in theirs, theirs  # yesterday by the user's calendar, not UTC's
    assert "3月1日" not in theirs and "2025-03-01" not in theirs, theirs


@pytest.mark.parametrize(
    ("before", "after", "question", "now_true", "ended"),
    [
        ("I practise karate twice a week.", "I stopped practising karate and took up crossfit.",
         "What sport do I do?", "crossfit", "karate"),
        ("我每周打一次壁球。", "我现在不打壁球了，改打保龄球。", "我平时做什么运动？", "保龄球", "壁球"),
        ("我开一辆本田雅阁。", "我把雅阁卖了，买了一辆凯美瑞。", "我开的是什么车？", "凯美瑞", "雅阁"),
    ],
    ids=["en-stopped-took-up", "zh-no-longer-instead", "zh-sold-bought"],
)  # fmt: skip
def test_what_ends_one_thing_and_starts_another_keeps_the_new_one(
    embeddings: Any, tmp_path: Path, before: str, after: str, question: str, now_true: str, ended: str
) -> None:
    memory = told(embeddings, tmp_path, (before, "2025-01-02"), (after, "2025-05-02"))

    lines = [line for line in memory.inject(question, user_id="u", now="2025-06-01").text.splitlines() if '"' in line]
    assert any(now_true in line for line in lines), lines
    assert not any(ended in line and now_true not in line for line in lines), lines  # only as the change said
    assert [r.status.value for r in memory.list("u") if now_true in r.content] == ["active"]


@pytest.mark.parametrize(
    ("before", "correction", "question", "now_true", "denied"),
    [
        ("I live in Namur.", "That's wrong, I never said I live in Namur.", "Which city do I live in?", None, "Namur"),
        ("I live in Namur.", "I don't live in Namur, I live in Leuven.", "Which city do I live in?", "Leuven", "Namur"),
        ("我对开心果过敏。", "其实我不对开心果过敏，是对碧根果过敏。", "我对什么过敏？", "碧根果", "开心果"),
        ("我对开心果过敏。", "我对开心果不过敏。", "我对什么过敏？", None, "开心果"),
        ("我住在桐乡。", "我从来没在桐乡住过。", "我住在哪个城市？", None, "桐乡"),
    ],
    ids=["en-never-said", "en-not-but", "zh-actually-not-but", "zh-plain-negation", "zh-never"],
)  # fmt: skip
def test_a_correction_ends_what_it_denies_and_keeps_what_it_affirms(
    embeddings: Any, tmp_path: Path, before: str, correction: str, question: str, now_true: str | None, denied: str
) -> None:
    memory = told(embeddings, tmp_path, (before, "2025-05-01"), (correction, "2025-06-01"))

    lines = [line for line in memory.inject(question, user_id="u", now="2025-06-02").text.splitlines() if '"' in line]
    assert not any(denied in line and not re.search(r"不|not|never", line) for line in lines), lines
    if now_true is not None:
        assert any(now_true in line for line in lines), lines
    assert [r.status.value for r in memory.list("u") if r.valid_from.month == 5] == ["archived"]


@pytest.mark.parametrize(
    ("said", "correction", "question", "meant", "wrong"),
    [
        ("My choir practice is on Wednesday nights.", "Sorry, I meant Monday, not Wednesday.",
         "When is choir practice?", "Monday", "Wednesday"),
        ("我的合唱排练在每周三晚上。", "说错了，是周一，不是周三。", "合唱排练是哪天？", "周一", "周三"),
    ],
    ids=["en", "zh"],
)  # fmt: skip
def test_a_correction_by_one_word_corrects_the_statement_that_says_it(
    embeddings: Any, tmp_path: Path, said: str, correction: str, question: str, meant: str, wrong: str
) -> None:
    memory = told(embeddings, tmp_path, (said, "2025-05-01T10:00:00Z"), (correction, "2025-05-01T10:01:00Z"))

    lines = [line for line in memory.inject(question, user_id="u", now="2025-05-02").text.splitlines() if '"' in line]
    assert any(meant in line for line in lines) and not any(wrong in line for line in lines), lines
    [now_true] = [r for r in memory.list("u") if r.status.value == "active"]
    assert meant in now_true.content and now_true.valid_from.day == 1  # true as said the first time
    assert any(wrong in r.content for r in memory.list("u") if r.status.value == "archived")  # kept as history


def test_a_home_said_in_english_with_a_chinese_name_is_replaced_by_a_move_said_in_chinese(
    embeddings: Any, tmp_path: Path
) -> None:
    memory = told(embeddings, tmp_path, ("I live in 绵阳", "2025-01-05"), ("我搬到遂宁了", "2025-06-01"))

    block = memory.inject("我现在住在哪个城市？", user_id="u", now="2025-06-02").text
    lines = [ln for ln in block.splitlines() if '"' in ln]
    assert any("遂宁" in ln for ln in lines) and not any("绵阳" in ln for ln in lines), lines


def test_a_move_to_another_employer_keeps_the_job_said_in_the_same_sentence(embeddings: Any, tmp_path: Path) -> None:
    memory = told(embeddings, tmp_path, ("我是建筑师，在中建工作", "2025-01-05"), ("我现在在万科工作了", "2025-06-01"))

    current = {r.attribute: r.value for r in memory.list("u") if r.status.value == "active"}
    assert current == {"job": "建筑师", "employer": "万科"}
    assert not any("中建" in r.content for r in memory.list("u") if r.status.value == "active")  # nothing says it now
    assert [r.value for r in memory.list("u") if r.status.value == "archived"] == ["中建"]


def test_a_memory_tool_asked_for_a_bare_topic_finds_the_users_fact(embeddings: Any, tmp_path: Path) -> None:
    memory = told(
        embeddings, tmp_path, ("I work as a thatcher.", "2025-01-02"), ("I'm allergic to celeriac.", "2025-01-03")
    )

    def found(query: str) -> list[str]:  # as an agent calls the retriever as its memory-search tool
        return [d.metadata["value"] for d in memory.search(query, user_id="u", now="2025-02-01")]

    assert found("occupation") == ["thatcher"] and found("profession") == ["thatcher"]
    assert "celeriac" in found("allergies")
    assert found("thanks") == [] and found("capital of France") == []


@pytest.mark.parametrize(
    ("before", "swap", "new", "old"),
    [
        ("I drive a Nissan Sentra.", "I replaced the Sentra with a Nissan Rogue.", "Nissan Rogue", "Nissan Sentra"),
        ("我每天吃一片格列美脲。", "医生让我把格列美脲换成了厄贝沙坦。", "厄贝沙坦", "一片格列美脲"),
    ],
    ids=["en", "zh"],
)
def test_a_swap_puts_the_new_value_in_the_old_ones_slot(
    embeddings: Any, tmp_path: Path, before: str, swap: str, new: str, old: str
) -> None:
    memory = told(embeddings, tmp_path, (before, "2025-01-02"), (swap, "2025-05-02"))

    (slot,) = {(r.entity, r.attribute) for r in memory.list("u") if r.value == old}
    assert [(r.value, r.status.value) for r in memory.history("u", *slot)] == [(old, "archived"), (new, "active")]


def test_what_a_named_friend_likes_or_keeps_is_not_recalled_as_the_users(embeddings: Any, tmp_path: Path) -> None:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    for at, said in enumerate(
        ["我男朋友叫阿铭。", "阿铭喜欢玩皮划艇。", "小蕾养了一只变色龙。", "我喜欢冲浪。"], start=1
    ):
        memory.add_messages([("user", said)], user_id="u", at=f"2026-05-0{at}")

    sport = memory.inject("我喜欢什么运动？", user_id="u", now="2026-05-10").text
    pets = memory.inject("我养了什么宠物？", user_id="u", now="2026-05-10").text

    assert "冲浪" in sport and "皮划艇" not in sport, sport
    assert "变色龙" not in pets, pets
    assert not any("用户阿铭" in r.content or "用户小蕾" in r.content for r in memory.list("u"))


@pytest.mark.parametrize(
    ("said", "question", "word", "until"),
    [
        ("Next week I'm visiting my aunt in Tulsa.", "Do I have any trips coming up?", "Tulsa", "2026-05-16"),
        ("I have a root canal appointment tomorrow at 9.", "What's on my schedule?", "root canal", "2026-05-11"),
        ("我下个月要去乌镇看戏剧节。", "我最近有什么出行计划？", "乌镇", "2026-06-30"),
        ("I'm going to Windhoek next month.", "Do I have any trips coming up?", "Windhoek", "2026-06-20"),
    ],
    ids=["en-next-week", "en-tomorrow", "zh-next-month", "en-going-to"],
)
def test_a_plan_is_recalled_until_its_time_is_past_not_a_year_later(
    embeddings: Any, tmp_path: Path, said: str, question: str, word: str, until: str
) -> None:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_messages([("user", said)], user_id="u", at="2026-05-10")  # a Sunday

    assert word in memory.inject(question, user_id="u", now=until).text
    assert word not in memory.inject(question, user_id="u", now="2027-05-10").text


@pytest.mark.parametrize(
    ("held", "plan", "question", "word"),
    [
        ("I work at Kestrel Freight.", "I'm starting a new job at Vantor next month.", "Where do I work?", "Kestrel"),
        ("I live in Yakima.", "I'm starting a new job at Vantor next month.", "Which city do I live in?", "Yakima"),
        ("我在一家物流公司做调度。", "我下个月要去嘉兴的新公司上班了。", "我现在做什么工作？", "调度"),
    ],
    ids=["en-same-slot", "en-other-slot", "zh"],
)
def test_a_plan_ends_nothing_before_its_time(
    embeddings: Any, tmp_path: Path, held: str, plan: str, question: str, word: str
) -> None:
    memory = told(embeddings, tmp_path, (held, "2026-03-02"), (plan, "2026-05-10"))

    assert word in memory.inject(question, user_id="u", now="2026-05-12").text
    then = memory.store.list_records(memory.namespace("u"), now="2026-05-12")
    assert [r.status.value for r in then if word in r.content] == ["active"]


@pytest.mark.parametrize(
    ("lasting", "passing", "request_", "word"),
    [
        ("I adopted a rescue greyhound called Pip.", "This week I'm wearing an eye patch after scratching my cornea.",
         "Help me plan my Saturday.", "eye patch"),
        ("我养了一只灵缇，叫阿橘。", "这周眼角膜划伤了，一直戴着眼罩。", "帮我安排一下周六。", "眼罩"),
    ],
    ids=["en", "zh"],
)  # fmt: skip
def test_a_passing_situation_no_rule_filed_joins_a_request_that_shares_no_word_with_it(
    embeddings: Any, tmp_path: Path, lasting: str, passing: str, request_: str, word: str
) -> None:
    """What the user said holds for now is shown for as long as it lasts, whether or not a rule gave it a slot."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_messages([("user", lasting)], "lin", at="2026-03-01")
    memory.add_messages([("user", passing)], "lin", at="2026-05-04")

    that_week = memory.inject(request_, "lin", now="2026-05-06").text
    later = memory.inject(request_, "lin", now="2026-06-30").text

    assert word in that_week, that_week
    assert word not in later, later


@pytest.mark.parametrize("back_filled", [False, True], ids=["in-order", "back-filled"])
def test_a_temporary_value_leaves_the_lasting_one_current_when_it_lapses(
    embeddings: Any, tmp_path: Path, back_filled: bool
) -> None:
    """A week with a borrowed van does not end the user's own car: both are shown that week, the car after it.

    Back-filled, the car said months before is learned after the van (an import in any order): the same.
    """
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    car = Fact(entity="user", attribute="car", value="Subaru Outback", content="The user drives a Subaru Outback.")
    van = Fact(
        entity="user", attribute="car", value="neighbour's van", ttl_days=7,
        content="This week the user is driving the neighbour's van.",
    )  # fmt: skip
    said = [(car, "2026-03-01"), (van, "2026-05-04")]
    for fact, at in reversed(said) if back_filled else said:
        memory.add_facts([fact], "ana", at=at)

    that_week = memory.inject("What am I driving right now?", "ana", now="2026-05-06").text
    later = memory.inject("What am I driving right now?", "ana", now="2026-05-30").text

    assert "van" in that_week and "Subaru" in that_week, that_week
    assert "Subaru" in later and "van" not in later, later
    assert [r.status.value for r in memory.history("ana", "user", "car")] == ["active"]


def test_what_a_chinese_user_says_without_a_subject_is_remembered_as_theirs(embeddings: Any, tmp_path: Path) -> None:
    """Chinese drops the subject it shares with the conversation: "右手腱鞘炎又犯了" is the user's own news."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    for text in ("右手腱鞘炎又犯了，拿鼠标都疼。", "老陈说他下个月要去成都出差。"):
        memory.add_messages([{"role": "user", "content": text}], "mei", at="2025-05-02")
    block = memory.inject("帮我挑个适合打游戏的鼠标", "mei", now="2025-05-04").text
    assert "腱鞘炎" in block, block
    assert all("成都" not in r.content for r in memory.active("mei")), memory.active("mei")  # 老陈's trip


def test_the_same_conversation_gives_the_same_memories_in_the_same_order_on_every_run(tmp_path: Path) -> None:
    """Records written by one turn share their time; their order (``active()``, and so what a search keeps among
    equals) is by statement, not by their random ids: an experiment rerun gives the same prompt."""
    turn = [
        Fact(entity="user", attribute=None, value=None, content=text)
        for text in ("Sails often.", "Carves spoons.", "Reads sagas.", "Owns a lathe.", "Bakes rye.", "Plays sitar.")
    ]
    runs = []
    for run in range(2):
        memory = fake_memory(tmp_path / f"run{run}")
        memory.add_facts(turn, "u", at="2025-03-03")
        runs.append([r.content for r in memory.active("u")])
    assert runs[0] == runs[1] == sorted(f.content for f in turn)


def test_a_near_miss_of_any_kind_leads_the_lasting_facts_shown_when_nothing_matched(
    embeddings: Any, tmp_path: Path
) -> None:
    """Nothing clears the bar, so the block falls back to the user's lasting facts; the date of an event that
    nearly matched comes first instead of being left out for not being a lasting kind."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    facts = [
        Fact(
            entity="user",
            attribute="job",
            value="pharmacist",
            content="The user works as a pharmacist.",
            kind="profile",
        ),
        Fact(
            entity="user",
            attribute="pet",
            value="Biscuit",
            content="The user has a beagle named Biscuit.",
            kind="profile",
        ),
        Fact(
            entity="user",
            attribute="thesis_defense",
            value="May 14",
            content="The user's thesis defense is on May 14.",
            kind="event",
        ),  # fmt: skip
    ]
    memory.add_facts(facts, "u", at="2025-04-01")
    block = memory.inject("When am I presenting my dissertation?", "u", now="2025-04-10").text
    lines = [line for line in block.splitlines() if line.startswith("- [")]
    assert "May 14" in lines[0], block
    assert any("pharmacist" in line for line in lines), block


def test_a_record_not_yet_true_at_as_of_does_not_make_the_past_unknown(embeddings: Any, tmp_path: Path) -> None:
    """Asked about mid-2023, a 2024 record that matches the question is not a replaced answer: the lasting facts
    true then are shown, not "don't know"."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    then = [
        Fact(
            entity="user", attribute="hobby", value="sackbut", content="The user plays sackbut in a consort, Glenrowan."
        ),
        Fact(entity="user", attribute="job", value="surveyor", content="The user works as a land surveyor."),
    ]
    memory.add_facts(then, "u", at="2022-03-01")
    later = Fact(
        entity="user",
        attribute="city",
        value="Wanaka",
        content="The user moved to Wanaka and performs with a new group there.",
    )
    memory.add_facts([later], "u", at="2024-05-01")
    query = "Back in mid-2023, which group did I perform with?"
    block = memory.inject(query, "u", now="2025-01-10", as_of="2023-06-01").text
    assert "Glenrowan" in block and "Wanaka" not in block, block


def test_a_plan_still_ahead_joins_the_facts_shown_when_nothing_matched(embeddings: Any, tmp_path: Path) -> None:
    """A retirement date is no lasting fact, yet it is what a question about this summer's health cover turns
    on: while the event is live it comes with the lasting facts; a sensitive record still never comes unasked."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    said = [
        ("lease_end", "July 31", "The user's lease at Larkspur Commons ends on July 31.", "fact"),
        ("retirement_date", "June 30", "The user retires from the post office on June 30 after 31 years.", "event"),
        ("bank_pin", "4471", "The user's bank card PIN is 4471.", "sensitive"),
    ]
    memory.add_facts([Fact(entity="user", attribute=a, value=v, content=c, kind=k) for a, v, c, k in said], "u")
    block = memory.inject("What should I sort out about my health insurance this summer?", "u").text
    assert "June 30" in block and "July 31" in block, block
    assert "4471" not in block, block


@pytest.mark.parametrize(
    ("question", "entity", "content", "word"),
    [
        (
            "What would be a thoughtful birthday present for my kid this year?",
            "daughter_wren",
            "The user's daughter Wren has low vision and is learning braille at school.",
            "braille",
        ),
        ("男朋友生日快到了，送他什么好？", "partner_kai", "用户的对象 Kai 是校冰球队的队员。", "冰球"),
    ],
)
def test_a_broader_relation_word_reaches_the_relative_filed_under_a_narrower_one(
    embeddings: Any, tmp_path: Path, question: str, entity: str, content: str, word: str
) -> None:
    """The words "my kid" name the daughter filed as ``daughter_wren``, "男朋友" the partner filed as ``partner_kai``:
    their facts come as context for a request about them, the user's own do not crowd them out."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    facts = [
        Fact(entity="user", attribute="hobby", value="astronomy", content="The user does amateur astronomy.",
             kind="preference"),
        Fact(entity=entity, attribute="detail", value=word, content=content, kind="profile"),
    ]  # fmt: skip
    memory.add_facts(facts, "u")
    block = memory.inject(question, "u").text
    assert word in block, block


def test_a_request_for_all_the_kids_keeps_the_family_facts_filed_under_no_one(embeddings: Any, tmp_path: Path) -> None:
    """The words "my kids" name the son filed as ``son_leo``, and the daughter said in passing (no slot) is one of them
    too: a request for the whole family brings both."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_facts(
        [
            Fact(
                entity="son_leo",
                attribute="age",
                value="6",
                content="The user's son Leo just turned six.",
                kind="profile",
            ),
            Fact(content="The user also has a daughter, Mia, she's three.", kind="fact"),
        ],  # fmt: skip
        "u",
    )
    block = memory.inject("Help me plan a birthday party for my kids.", "u").text
    assert "Leo" in block and "Mia" in block, block


def test_a_question_that_finds_a_replaced_value_gets_the_value_that_replaced_it(
    embeddings: Any, tmp_path: Path
) -> None:
    """The question shares its words with the old statement only; the slot's current value answers it, and
    the old one is not shown as current."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    old = "The user put Nokian Hakkapeliitta winter tyres on their Volvo."
    new = "The user replaced their worn winter tyres with Michelin X-Ice Snow."
    for value, content, at in (("Nokian", old, "2023-11-01"), ("Michelin", new, "2024-11-01")):
        memory.add_facts([Fact(entity="user", attribute="winter_tires", value=value, content=content)], "u", at=at)
    block = memory.inject("The roads are icy. What's on the Volvo right now?", "u", now="2024-12-01").text
    assert "Michelin" in block, block
    assert "Nokian" not in block, block


@pytest.mark.parametrize(
    ("question", "recurs"),
    [("What do I do on Thursdays?", "choir"), ("我周六一般做什么？", "图书馆"), ("What do I do on Mondays?", None)],
)
def test_what_recurs_on_the_day_a_question_names_joins_what_answered_it(
    embeddings: Any, tmp_path: Path, question: str, recurs: str | None
) -> None:
    """The job answers "what do I do"; what the user does every Thursday (or 每周六) joins it, and a day
    nothing recurs on brings nothing more. A one-off day ("上周五") is no schedule."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    said = [
        ("job", "dental hygienist", "The user works as a dental hygienist.", "profile"),
        ("choir", "community choir", "The user sings in a community choir on Thursday evenings.", "fact"),
        ("志愿服务", "社区图书馆", "用户每周六上午去社区图书馆做志愿者。", "fact"),
        ("checkup", "复查", "用户上周五去医院复查了。", "event"),
    ]
    memory.add_facts([Fact(entity="user", attribute=a, value=v, content=c, kind=k) for a, v, c, k in said], "u")
    lines = [line for line in memory.inject(question, "u").text.splitlines() if line.startswith("- [")]
    assert any("dental hygienist" in line for line in lines), lines
    assert [line for line in lines if "dental" not in line and (recurs is None or recurs not in line)] == [], lines
    assert recurs is None or any(recurs in line for line in lines), lines


def test_list_stats_search_and_inject_agree_on_what_is_live(embeddings: Any, tmp_path: Path) -> None:
    """A record past its deadline is live for nobody: not searched, not injected, not listed or counted active."""
    path = tmp_path / "m"
    memory = LifecycleMemory(ChromaMemoryStore(path, embeddings=embeddings))
    three_weeks_ago = datetime.now(timezone.utc) - timedelta(days=21)
    soup = Fact(
        entity="user",
        attribute="diet",
        value="soup",
        content="This week the user only eats soup because of a tooth",
        kind="preference",
        ttl_days=7,
    )
    city = Fact(entity="user", attribute="city", value="Berlin", content="The user lives in Berlin", kind="profile")
    memory.add_facts([soup, city], user_id="bob", at=three_weeks_ago)

    question = "Does the user only eat soup because of a tooth?"
    seen = {
        "search": "soup" in " ".join(d.page_content for d in memory.search(question, user_id="bob")),
        "inject": "soup" in memory.inject(question, user_id="bob").text,
        "LifecycleMemory.list": "soup" in active_values(memory.list("bob")),
        "CLI list": "soup" in active_values(cli_json(path, "list", "-u", "bob")["records"]),
    }
    stats = cli_json(path, "stats", "-u", "bob")["users"][0]["by_status"]
    seen["CLI stats counts it active"] = stats.get("active", 0) != 1

    assert seen == dict.fromkeys(seen, False), f"the expired soup record is reported live by: {seen}; stats {stats}"


def _soup_memory(embeddings: Any, tmp_path: Path) -> LifecycleMemory:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    soup = Fact(
        entity="user",
        attribute="diet",
        value="soup",
        content="This week the user only eats soup because of a tooth",
        kind="preference",
        ttl_days=7,
    )
    memory.add_facts([soup], user_id="bob", at="2026-05-10")
    return memory


def test_a_block_says_when_an_expired_memory_was_left_out(embeddings: Any, tmp_path: Path) -> None:
    memory = _soup_memory(embeddings, tmp_path)
    question = "Does the user only eat soup because of a tooth?"
    assert "soup" in memory.inject(question, user_id="bob", now="2026-05-11").text  # found while live

    block = memory.inject(question, user_id="bob", now="2026-05-31")

    assert "soup" not in block.text
    assert hasattr(block, "expired"), "MemoryBlock has no `expired` count"
    assert isinstance(block.expired, int) and block.expired > 0, block.expired
    assert any("expired" in line.lower() for line in block.text.splitlines()), block.text


def test_a_block_with_nothing_expired_says_nothing_about_expiry(embeddings: Any, tmp_path: Path) -> None:
    memory = _soup_memory(embeddings, tmp_path)

    block = memory.inject("Does the user only eat soup because of a tooth?", user_id="bob", now="2026-05-11")

    assert "soup" in block.text
    assert hasattr(block, "expired"), "MemoryBlock has no `expired` count"
    assert block.expired == 0
    assert not any("expired" in line.lower() for line in block.text.splitlines()), block.text


def test_readme_facade_example_prints_the_vs_code_line_without_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    facade = next(b for b in blocks if "LifecycleMemory(" in b and ".inject(" in b)
    code = re.sub(r",\s*now=(\"[^\"]*\"|'[^']*')", "", facade)  # run it today, as a reader would
    assert "now=" not in code
    monkeypatch.chdir(tmp_path)

    exec(compile(code, "README.md[facade example without now=]", "exec"), {"__name__": "__readme__"})

    injected = capsys.readouterr().out.split("[(")[0]
    assert NOTHING not in injected, injected
    assert "VS Code" in injected, injected


# ---------------------------------------------------------------------- 4. no trace on disk
def test_cli_edit_then_compact_leaves_no_byte_of_the_old_text(tmp_path: Path) -> None:
    path = tmp_path / "m"
    memory = fake_memory(path)
    old = "The user keeps a spare key under the Zanzibar-7731 flowerpot"
    fact = Fact(entity="user", attribute="spare_key", value="flowerpot", content=old, kind="fact")
    record_id = memory.add_facts([fact], user_id="bob", at="2026-11-01").added[0].id
    assert files_containing(path, "Zanzibar-7731")

    done = cli(path, "edit", record_id, "-u", "bob", "--content", "The user keeps a spare key under a flowerpot")
    assert done.returncode == 0, done.stderr
    ChromaMemoryStore(path, embeddings=fake()).compact()

    assert files_containing(path, "Zanzibar-7731") == []


@pytest.mark.parametrize("forgotten", [False, True], ids=["active", "forgotten-then-redacted"])
def test_redact_record_then_compact_leaves_no_byte_of_the_pii(tmp_path: Path, forgotten: bool) -> None:
    path = tmp_path / "m"
    memory = fake_memory(path, update=UpdateConfig(redactor=Redactor(mode="keep")))
    email = "zed.q.7731@example.com"
    fact = Fact(entity="user", attribute="email", value=email, content=f"The user's email is {email}", kind="profile")
    record_id = memory.add_facts([fact], user_id="bob", at="2026-11-01").added[0].id
    if forgotten:
        memory.forget("bob", record_id=record_id)
    assert files_containing(path, email)

    (record,) = [r for r in memory.list("bob") if r.id == record_id]
    memory.store.put_records([ops.redact_record(record)])
    memory.store.compact()
    assert files_containing(path, email) == []

    # Another process reads the store: loading a collection rewrites its index files, and nothing comes back.
    assert [r["content"] for r in cli_json(path, "list", "-u", "bob")["records"]] == ["The user's email is [EMAIL]"]
    assert files_containing(path, email) == []
    # This process held the email: Chroma saves index buffers it did not clear, so its next load of a
    # collection can write bytes of its own memory (docs/operations.md says to restart such processes).
    assert [r.content for r in memory.list("bob")] == ["The user's email is [EMAIL]"]


def test_purge_leaves_no_byte_of_the_tenant(tmp_path: Path) -> None:
    path = tmp_path / "m"
    memory = fake_memory(path)
    memory.add_facts(
        [Fact(entity="user", attribute="city", value="Qarthwick-5512", content="The user lives in Qarthwick-5512")],
        user_id="carol",
        at="2026-11-01",
    )
    memory.add_facts([Fact(entity="user", attribute="city", value="Berlin", content="The user lives in Berlin")], "bob")
    assert files_containing(path, "Qarthwick-5512")

    memory.purge("carol")

    assert files_containing(path, "Qarthwick-5512") == []
    assert active_values(memory.list("bob")) == {"Berlin"}


# ---------------------------------------------------------------------- 5. precise forgetting, restore
def test_cli_forget_by_query_archives_only_what_was_named(embeddings: Any, tmp_path: Path) -> None:
    path = tmp_path / "m"
    memory = LifecycleMemory(ChromaMemoryStore(path, embeddings=embeddings))
    memory.add_messages([("user", "I'm allergic to peanuts")], user_id="bob", at="2026-11-01")
    memory.add_messages([("user", "I'm also allergic to shellfish")], user_id="bob", at="2026-11-02")
    assert active_values(memory.list("bob")) == {"peanuts", "shellfish"}

    forgot = cli_json(path, "forget", "-u", "bob", "--query", "forget that I'm allergic to shellfish", "--yes")
    assert [r["value"] for r in forgot["archived"]] == ["shellfish"]

    block = cli_json(path, "search", "-u", "bob", "what can't I eat?", "--block")["block"]["text"]
    assert "peanuts" in block and "shellfish" not in block, block


def _forgotten_shellfish(tmp_path: Path) -> tuple[LifecycleMemory, str]:
    memory = fake_memory(tmp_path / "m")
    memory.add_messages([("user", "I'm allergic to peanuts")], user_id="bob", at="2026-11-01")
    memory.add_messages([("user", "I'm also allergic to shellfish")], user_id="bob", at="2026-11-02")
    (shellfish,) = [r for r in memory.list("bob") if r.value == "shellfish"]
    memory.forget("bob", record_id=shellfish.id, now="2026-11-03")
    assert active_values(memory.list("bob")) == {"peanuts"}
    return memory, shellfish.id


def _shows_restore(versions: list[Any]) -> bool:
    """The history keeps the way back visible: a restore marker, or the archived version next to the active one."""
    dumps = [json.dumps(v if isinstance(v, dict) else v.model_dump(mode="json")) for v in versions]
    shellfish = [v for v in versions if (v["value"] if isinstance(v, dict) else v.value) == "shellfish"]
    return any("restor" in d.lower() for d in dumps) or len(shellfish) >= 2


def test_facade_restore_brings_a_forgotten_memory_back(tmp_path: Path) -> None:
    memory, record_id = _forgotten_shellfish(tmp_path)
    assert hasattr(memory, "restore"), "LifecycleMemory has no restore(user_id, record_id)"

    memory.restore("bob", record_id)

    assert active_values(memory.list("bob")) == {"peanuts", "shellfish"}
    assert "shellfish" in memory.inject("What am I allergic to?", user_id="bob").text
    history = memory.history("bob", "user", "allergy")
    assert "shellfish" in active_values(history) and _shows_restore(history), history


def test_operations_restore_brings_a_forgotten_memory_back(tmp_path: Path) -> None:
    memory, record_id = _forgotten_shellfish(tmp_path)
    assert hasattr(ops, "restore"), "lifecycle.operations has no restore(store, namespace, record_id)"

    ops.restore(memory.store, memory.namespace("bob"), record_id)

    assert active_values(memory.list("bob")) == {"peanuts", "shellfish"}
    assert "shellfish" in memory.inject("What am I allergic to?", user_id="bob").text
    history = memory.history("bob", "user", "allergy")
    assert "shellfish" in active_values(history) and _shows_restore(history), history


def test_cli_restore_brings_a_forgotten_memory_back(tmp_path: Path) -> None:
    _, record_id = _forgotten_shellfish(tmp_path)
    path = tmp_path / "m"

    done = cli(path, "restore", record_id, "-u", "bob")
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr.strip()}"

    block = cli_json(path, "search", "-u", "bob", "What am I allergic to?", "--block")["block"]["text"]
    assert "shellfish" in block, block
    versions = cli_json(path, "history", "allergy", "-u", "bob")["versions"]
    assert "shellfish" in active_values(versions) and _shows_restore(versions), versions


# ---------------------------------------------------------------------- 8b. import: duplicates, huge lines
def test_import_reports_duplicate_ids_and_huge_lines_by_number(tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "m", embeddings=fake())
    base = {"namespace": ["memories", "bob"], "entity": "user", "kind": "fact", "status": "active", "confidence": 0.8}
    same = "11111111-1111-4111-8111-111111111111"
    lines = [
        {**base, "id": same, "attribute": "city", "value": "Berlin", "content": "The user lives in Berlin"},
        {**base, "id": same, "attribute": "editor", "value": "Vim", "content": "The user uses Vim"},
        {**base, "id": "22222222-2222-4222-8222-222222222222", "attribute": "notes", "content": "x" * 5_000_000},
        {
            **base,
            "id": "33333333-3333-4333-8333-333333333333",
            "attribute": "motto",
            "value": "y" * 5_000_000,
            "content": "The user has a very long motto",
        },
    ]
    source = io.StringIO("\n".join(json.dumps(line) for line in lines) + "\n")

    try:
        report = import_records(store, source)
    except Exception as e:  # refused as a whole: then the message names the lines
        message = str(e)
        named = {n for n in (2, 3, 4) if re.search(rf"\b{n}\b", message)}
        assert named == {2, 3, 4}, message
        assert store.list_records(("memories", "bob")) == []
        return
    reported = {issue.line: issue.reason for issue in report.errors}
    assert {2, 3, 4} <= set(reported), f"lines reported: {reported}"
    kept = [r for r in store.list_records(("memories", "bob")) if r.id == same]
    assert [r.content for r in kept] in ([], ["The user lives in Berlin"]), "line 2 overwrote line 1"
    assert all(len(r.value or "") < 5_000_000 for r in store.list_records(("memories", "bob")))


# ---------------------------------------------------------------------- 8d. numbered attributes
@pytest.mark.parametrize(
    "facts",
    [
        [("slot0", "red", "The user's slot0 is red"), ("slot1", "blue", "The user's slot1 is blue")],
        [
            ("phone1", "Pixel 8", "The user's phone1 is a Pixel 8"),
            ("phone2", "iPhone 15", "The user's phone2 is an iPhone 15"),
        ],
    ],
    ids=["slot0-slot1", "phone1-phone2"],
)
def test_numbered_attributes_are_separate_slots(
    embeddings: Any, tmp_path: Path, facts: list[tuple[str, str, str]]
) -> None:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    for day, (attribute, value, content) in enumerate(facts, start=1):
        fact = Fact(entity="user", attribute=attribute, value=value, content=content)
        memory.add_facts([fact], user_id="bob", at=f"2026-11-0{day}")

    listed = sorted((r.attribute, r.value, r.status.value) for r in memory.list("bob"))

    assert listed == sorted((a, v, "active") for a, v, _ in facts), f"merged into one slot: {listed}"


@pytest.mark.parametrize(
    ("facts", "question", "secret", "kept"),
    [
        (  # what an LLM extractor returns: the credential as the value, the statement around it
            [{"entity": "user", "attribute": "wifi_password", "value": "tulip-42", "kind": "fact",
              "content": "The user's home Wi-Fi network is Maplewood and its password is tulip-42."}],
            "My laptop won't join the home Wi-Fi, what should I check?", "tulip-42", "Maplewood",
        ),
        (
            [{"entity": "user", "attribute": "储物柜密码", "value": "3917", "kind": "fact",
              "content": "用户在乐刻健身，储物柜的密码是 3917"}],
            "我去健身房储物柜怎么开？", "3917", "乐刻",
        ),
    ],
    ids=["en", "zh"],
)  # fmt: skip
def test_a_credential_is_never_stored_or_injected_the_rest_of_the_fact_is(
    embeddings: Any, tmp_path: Path, facts: list[dict[str, Any]], question: str, secret: str, kept: str
) -> None:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_facts(facts, user_id="u", at="2026-05-10")

    block = memory.inject(question, user_id="u", now="2026-05-11")
    stored = [(r.content, r.value) for r in memory.list("u")]

    assert secret not in block.text and kept in block.text, block.text
    assert not any(secret in f"{content} {value}" for content, value in stored), stored
    assert any("[SECRET]" in content for content, _ in stored), stored


@pytest.mark.parametrize(
    ("first", "then", "question", "old", "new"),
    [
        ("I'm a junior architect at a small practice.", "I'm now a project architect.", "What's my job?",
         "junior architect", "project architect"),
        ("我是初级会计。", "我现在是财务经理了。", "我现在做什么工作？", "初级会计", "财务经理"),
    ],
    ids=["en", "zh"],
)  # fmt: skip
def test_a_job_said_with_its_level_is_replaced_by_the_next_job(
    embeddings: Any, tmp_path: Path, first: str, then: str, question: str, old: str, new: str
) -> None:
    memory = told(embeddings, tmp_path, (first, "2026-01-04"), (then, "2026-06-01"))

    block = memory.inject(question, user_id="u", now="2026-06-02").text
    assert new in block and old not in block, block
    assert old not in [r.value for r in memory.active("u")]
