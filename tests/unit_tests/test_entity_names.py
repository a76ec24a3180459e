"""A question that names a relative by name reaches that relative's memories, not the user's.

Names come from the record's entity id and its sentences: a Chinese given name after a surname
("女儿周小禾" for ``daughter_xiaohe``), a diminutive that is one of the name's syllables ("阿杰" for
``brother_ajie``), and a Latin name written with accents ("Joaquín" for ``husband_joaquin``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, Fact, LifecycleMemory
from langchain_lifecycle_memory.read.people import entity_aliases, query_entities
from langchain_lifecycle_memory.schema import is_self_entity
from langchain_lifecycle_memory.write._rules import extract_rule_facts

FAMILY = {
    "daughter_xiaohe": ["用户的女儿周小禾在读大二，学护理专业。", "用户的女儿小禾喜欢玩剧本杀。"],
    "brother_ajie": ["用户的弟弟阿杰住在佛山南海。"],
    "husband_joaquin": ["The user's husband Joaquín is a firefighter."],
    "husband_zhou": ["用户的爱人老周是跑长途的货车司机。"],
}


@pytest.mark.parametrize(
    ("query", "entities"),
    [
        ("小禾大学读的什么专业？", {"daughter_xiaohe"}),
        ("阿杰现在住在哪？", {"brother_ajie"}),
        ("What does Joaquín do for work?", {"husband_joaquin"}),
        ("What does Joaquin do for work?", {"husband_joaquin"}),
        ("老周这周出车吗？", {"husband_zhou"}),
        # a one-character piece of a name is no name: "周末" is not about 老周
        ("周末我想找点自己喜欢的娱乐活动。", set()),
        ("我在读什么书？", set()),
    ],
)
def test_a_query_names_the_relative_it_is_about(query: str, entities: set[str]) -> None:
    aliases = {entity: entity_aliases(entity, contents) for entity, contents in FAMILY.items()}
    assert query_entities(query, aliases) == entities


@pytest.mark.parametrize(
    ("entity", "query"),
    [
        ("parent", "爸妈现在有啥医疗方面的保障吗？"),
        ("parent", "What cover do my parents have?"),
        ("child", "What should I pack for my kid?"),
        ("daughter_wren", "A present for my kid?"),
        ("son", "孩子的疫苗打到第几针了？"),
        ("partner_kai", "男朋友生日快到了"),
        ("boyfriend", "What does my partner do?"),
    ],
)
def test_a_relative_filed_under_a_relation_key_is_found_by_its_words_and_the_broader_ones(
    entity: str, query: str
) -> None:
    """An extractor files "爸妈" under ``parent`` and "my kid" may be a son or a daughter: each key is a word for
    its relative, and a son, a daughter, a boyfriend are also "a child", "a partner"."""
    assert query_entities(query, {entity: entity_aliases(entity)}) == {entity}


def test_a_question_about_a_named_daughter_injects_her_fact(embeddings: Any, tmp_path: Path) -> None:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    facts = [
        Fact(entity="user", attribute="job", value="小学音乐老师", content="用户是一名小学音乐老师。", kind="profile"),
        Fact(
            entity="daughter_xiaohe", attribute="major", value="护理专业", content=FAMILY["daughter_xiaohe"][0],
            kind="profile",
        ),
        Fact(entity="son_xiaochuan", attribute="grade", value="高一", content="用户的儿子周小川在读高一。"),
    ]  # fmt: skip
    memory.add_facts(facts, "mei", at="2025-02-10")

    block = memory.inject("小禾大学读的什么专业？", "mei", now="2025-02-13")

    assert "护理" in block.text, block.text
    assert "高一" not in block.text, block.text


def test_a_relative_named_after_the_relation_word_in_english_is_found_by_name(embeddings: Any, tmp_path: Path) -> None:
    """ "My brother lives in Halifax", later "My brother Raj just moved to Winnipeg" (filed as ``home_city``): a
    question naming Raj is about the brother, and his home is the new city only."""
    assert entity_aliases("brother", ["The user's brother Raj lives in Winnipeg."])[0] == {"raj"}
    assert entity_aliases("mother_in_law", [])[0] == set()  # "in" and "law" name no one
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_facts(
        [Fact(entity="brother", attribute="city", value="Halifax", content="The user's brother lives in Halifax.")],
        "u", at="2024-03-18",
    )  # fmt: skip
    memory.add_facts(
        [Fact(entity="brother", attribute="home_city", value="Winnipeg",
              content="The user's brother Raj lives in Winnipeg.")],
        "u", at="2024-10-07",
    )  # fmt: skip

    block = memory.inject("I want to mail Raj a housewarming gift, which city does it go to?", "u", now="2024-10-09")

    assert "Winnipeg" in block.text and "Halifax" not in block.text, block.text


def test_a_name_in_syllables_or_in_chinese_after_an_english_relation_reaches_that_relative(
    embeddings: Any, tmp_path: Path
) -> None:
    """A romanised name is written in one word or in syllables ("Wei Jie" for ``cousin_weijie``), and a mixed
    statement puts a Chinese name after an English relation word ("The user's niece 小桐…"): either way a question
    naming them gets their fact, not the other relative's."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_facts(
        [
            Fact(entity="cousin_weijie", attribute="job", value="侍酒师", content="用户的表哥 Wei Jie 是侍酒师。"),
            Fact(entity="niece_xiaotong", attribute="hobby", value="折纸", content="The user's niece 小桐 loves 折纸."),
        ],
        "u", at="2025-05-02",
    )  # fmt: skip

    job = memory.inject("Wei Jie 是做什么工作的？", "u", now="2025-05-09")
    hobby = memory.inject("小桐平时喜欢玩什么？", "u", now="2025-05-09")

    assert "侍酒师" in job.text and "折纸" not in job.text, job.text
    assert "折纸" in hobby.text and "侍酒师" not in hobby.text, hobby.text


@pytest.mark.parametrize(
    ("entity", "canonical"),
    [
        ("老妈", "mother"), ("mom", "mother"), ("my_mom", "mother"), ("我爸", "father"),
        ("表妹晓雯", "cousin_xiaowen"), ("user's sister Kasia", "sister_kasia"), ("co-worker_jim", "colleague_jim"),
        ("mother-in-law", "mother_in_law"), ("Tomasz", "Tomasz"), ("sisterhood", "sisterhood"), ("user", "user"),
        # a Chinese relation word in pinyin, as a model writes it; one syllable ("ma") spells too many names
        ("popo", "mother_in_law"), ("sanshu", "uncle"), ("nuer_xiaohe", "daughter_xiaohe"), ("ma", "ma"),
        # the in-laws a Chinese speaker names with a word of their own, and the elderly word for a spouse
        ("女婿", "son_in_law"), ("儿媳妇", "daughter_in_law"), ("嫂子", "sister_in_law"), ("姐夫", "brother_in_law"),
        ("老伴", "spouse"),
    ],
)  # fmt: skip
def test_a_relative_has_one_id_whatever_word_named_them(entity: str, canonical: str) -> None:
    from langchain_lifecycle_memory.write._people import canonical_entity

    assert canonical_entity(entity) == canonical


def test_the_parents_together_are_one_entity_not_a_father_named_ma(embeddings: Any, tmp_path: Path) -> None:
    """ "我爸妈" was read as 爸 followed by the name 妈 (``father_妈``), and the father's own facts joined it."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_messages([("user", "我爸妈住在洛阳，我住在郑州。")], "u", at="2024-01-01T00:00:00Z")
    memory.add_messages([("user", "我爸在医院上班。")], "u", at="2024-01-02T00:00:00Z")
    memory.add_messages([("user", "My parents moved to Tucson, I'm still in Denver.")], "v", at="2024-01-01T00:00:00Z")
    filed = {(r.entity, r.attribute, r.value) for u in "uv" for r in memory.store.list_records(memory.namespace(u))}
    assert {("parent", "city", "洛阳"), ("father", "employer", "医院"), ("user", "city", "郑州")} <= filed
    assert ("parent", "city", "Tucson") in filed


def test_an_in_law_is_found_by_the_words_for_them_not_by_the_parents(embeddings: Any, tmp_path: Path) -> None:
    """公公 and "my father-in-law" mean the father-in-law; 我爸 and "my dad" mean the father, not him."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    facts = [
        Fact(entity="father_in_law", attribute="hobby", value="钓鱼", content="用户的公公退休后天天去水库钓鱼。"),
        Fact(entity="father", attribute="hobby", value="书法", content="用户的爸爸每天早上练书法。"),
    ]
    memory.add_facts(facts, "u", at="2024-03-18")

    for query, theirs, not_theirs in [
        ("周末去看公公，带点什么礼物好？", "钓鱼", "书法"),
        ("What should I get my father-in-law for his birthday?", "钓鱼", "书法"),
        ("我爸生日快到了，送什么好？", "书法", "钓鱼"),
        ("What should I get my dad for his birthday?", "书法", "钓鱼"),
    ]:
        block = memory.inject(query, "u", now="2024-03-20").text
        assert theirs in block and not_theirs not in block, (query, block)


@pytest.mark.parametrize(
    ("stored", "query", "theirs"),
    [
        pytest.param("father", "周末带女儿去找外公，他下午一般在哪儿？", "老年活动中心", id="zh-father"),
        pytest.param("father_in_law", "周末带女儿去找外公，他下午一般在哪儿？", "老年活动中心", id="zh-in-law"),
        pytest.param(
            "father_in_law",
            "Taking the kids to see grandpa on Sunday, where is he usually then?",
            "老年活动中心",
            id="en",
        ),
    ],
)
def test_a_grandparent_said_for_the_children_is_the_users_parent_or_in_law(
    embeddings: Any, tmp_path: Path, stored: str, query: str, theirs: str
) -> None:
    """A parent speaks of their own parent or in-law by the child's word for them ("带女儿去找外公", "take the
    kids to see grandpa"): with no grandparent of the user's stored, that is the one it means."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    facts = [
        Fact(entity=stored, attribute="afternoons", value="老年活动中心", content="他每天下午去老年活动中心下棋。"),
        Fact(entity="user", attribute="job", value="药剂师", content="用户是医院的药剂师。"),
    ]
    memory.add_facts(facts, "u", at="2024-03-18")

    block = memory.inject(query, "u", now="2024-03-20").text
    mine = memory.inject("我爷爷以前是做什么的？", "u", now="2024-03-20").text

    assert theirs in block, block
    assert theirs not in mine  # the user's own grandfather is no parent of theirs


def test_a_pet_name_for_someone_close_is_found_by_its_meaning(embeddings: Any, tmp_path: Path) -> None:
    """ "my hubby" is no word of the relation vocabulary; its meaning is the husband's. A possessed word that is
    only near a relation by its letters ("my housewarming" and the housemate) or by its topic is no one."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    facts = [
        Fact(entity="husband", attribute="employer", value="Ferrovia", content="The user's husband works at Ferrovia."),
        Fact(entity="housemate_ines", attribute="hobby", value="bouldering", content="Ines goes bouldering."),
        Fact(entity="user", attribute="job", value="radiographer", content="The user is a radiographer."),
    ]
    memory.add_facts(facts, "u", at="2024-03-18")

    hubby = memory.inject("Where does my hubby work these days?", "u", now="2024-03-20").text
    party = memory.inject("What snacks should I get for my housewarming?", "u", now="2024-03-20").text

    assert "Ferrovia" in hubby, hubby
    assert "bouldering" not in party, party


@pytest.mark.parametrize(
    ("text", "entity"),
    [
        ("Priyanka plays the oboe in the city orchestra.", "person_priyanka"),
        ("Oskar's piano lessons are on Wednesday afternoons.", "person_oskar"),
        ("Sciatica's acting up again, I can't sit for long.", None),  # "'s" before a verb: no one's
        ("Weight's at 185 now, lowest since college.", None),
        ("Big news: I got elected chair of the tenants' association.", "user"),  # a heading, then the speaker
        ("She plays viola in a quartet.", None),  # a pronoun with no one before it
        ("Everyone loves the new dog park.", None),
    ],
)
def test_a_name_no_one_introduced_files_its_statement_under_that_person(text: str, entity: str | None) -> None:
    """ "Kevin wears Le Labo": a name at the start with a verb that agrees with one person is someone, whose
    relation to the user is not said (``person_…``); the statement is neither dropped nor the user's."""
    people = {f.entity for f in extract_rule_facts(text) if not is_self_entity(f.entity)}
    assert people == ({entity} if entity not in (None, "user") else set())
    if entity == "user":
        assert extract_rule_facts(text)


def test_someone_known_only_by_name_stays_apart_from_the_user_and_is_one_person(
    embeddings: Any, tmp_path: Path
) -> None:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    for at, text in [
        ("2025-01-05", "I play the clarinet in a community wind band."),
        ("2025-01-06", "Priyanka plays the oboe in the city orchestra."),
        ("2025-01-07", "My friend Priyanka is moving to Leeds in June."),
    ]:
        memory.add_messages([{"role": "user", "content": text}], "kim", at=at)

    assert {r.entity for r in memory.active("kim")} == {"user", "person_priyanka"}  # the friend is the oboist
    mine = memory.inject("Which instrument should I practise tonight?", "kim", now="2025-02-01").text
    assert "clarinet" in mine and "oboe" not in mine, mine
    hers = memory.inject("What does Priyanka play?", "kim", now="2025-02-01").text
    assert "oboe" in hers and "clarinet" not in hers, hers


def test_a_relative_written_in_pinyin_is_the_one_the_chinese_word_names(embeddings: Any, tmp_path: Path) -> None:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_facts(
        [Fact(entity="uncle", attribute="city", value="抚顺", content="用户的三舅住在抚顺")], "u", at="2024-01-01"
    )
    moved = Fact(entity="sanjiu", attribute="city", value="延吉", content="用户的三舅搬去延吉了")
    memory.add_facts([moved], "u", at="2024-06-01")
    assert [(r.entity, r.value) for r in memory.active("u")] == [("uncle", "延吉")]
    block = memory.inject("三舅现在住哪儿？", "u", now="2024-06-02").text
    assert "延吉" in block and "抚顺" not in block, block


def test_someone_filed_under_a_bare_name_is_who_the_statements_say_not_the_user(
    embeddings: Any, tmp_path: Path
) -> None:
    """An extractor that files the flatmate under ``Bruno`` alone: his thesis stays out of the user's, and "my
    flatmate" still reaches him."""
    assert entity_aliases("Bruno", ["The user's flatmate Bruno writes about volcanic soils."])[1] >= {"flatmate"}
    assert entity_aliases("Whisker", ["Whisker sleeps on the windowsill."])[1] == set()  # a pet is introduced by none
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_facts(
        [Fact(entity="user", attribute="thesis_topic", value="medieval trade routes",
              content="The user's thesis is on medieval trade routes."),
         Fact(entity="Bruno", attribute="thesis_topic", value="volcanic soils",
              content="The user's flatmate Bruno is writing a thesis on volcanic soils.")],
        "u", at="2024-02-01",
    )  # fmt: skip

    mine = memory.inject("Remind me what my thesis is about?", "u", now="2024-03-01").text
    his = memory.inject("What is my flatmate's thesis about?", "u", now="2024-03-01").text

    assert "trade routes" in mine and "volcanic" not in mine, mine
    assert "volcanic" in his, his


def test_a_relative_by_marriage_said_in_chinese_is_not_the_user(embeddings: Any, tmp_path: Path) -> None:
    """女婿, 嫂子, 姐夫, 老伴 name someone else: their job is not the user's, and asking for them finds it."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    for turn in ["我在印刷厂做排版。", "我女婿在消防队当指导员。", "我姐夫在开货车跑长途。", "我老伴退休前是钳工。"]:
        memory.add_messages([("user", turn)], "u", at="2024-05-02T09:00:00Z")

    def block(query: str) -> str:
        return memory.inject(query, "u", now="2024-05-06T09:00:00Z").text

    mine = block("我是做什么工作的？")
    assert "排版" in mine
    assert not any(theirs in mine for theirs in ("消防队", "货车", "钳工"))
    assert "消防队" in block("女婿现在在哪个单位？")
    assert "货车" in block("姐夫是干什么的？")
    assert "钳工" in block("老伴儿退休前做什么？")


@pytest.mark.parametrize(
    ("text", "entity"),
    [("我舅舅只抽旱烟。", "uncle"), ("老伴儿迷上了太极拳。", "spouse"), ("我小姨子只坐高铁。", "sister_in_law")],
)
def test_an_adverb_or_an_erhua_after_a_relative_is_not_their_name(text: str, entity: str) -> None:
    """只 ("only") and the spoken 儿 after 老伴 were read as a given name (``uncle_只``, ``spouse_儿``)."""
    assert {f.entity for f in extract_rule_facts(text)} == {entity}


@pytest.mark.parametrize(
    ("query", "theirs"),
    [
        ("What's my niece's name again?", "Linnea"),
        ("侄子叫什么来着？", "糖葫芦"),
        ("Any gift ideas for my grandson?", "kites"),
    ],
)
def test_a_relative_named_through_another_is_found_through_them(
    embeddings: Any, tmp_path: Path, query: str, theirs: str
) -> None:
    """A niece is a sibling's daughter, a grandson a child's son: with none stored under that word, the facts of
    the one they are named through answer, and the user's own child is no niece."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    facts = [
        Fact(
            entity="sister", attribute="daughter", value="Linnea", content="The user's sister has a daughter, Linnea."
        ),
        Fact(entity="brother", attribute="儿子", value="糖葫芦", content="用户的哥哥有个儿子，小名叫糖葫芦。"),
        Fact(
            entity="son", attribute="child_hobby", value="kites", content="The user's son's boy is crazy about kites."
        ),
        Fact(entity="user", attribute="child", value="Ottavio", content="The user's own child is Ottavio."),
    ]
    memory.add_facts(facts, "u", at="2024-03-18")

    block = memory.inject(query, "u", now="2024-03-20").text

    assert theirs in block, block
    assert "Ottavio" not in block


@pytest.mark.parametrize("query", ["老郑女儿在学什么乐器？", "老郑的女儿在学什么乐器？", "老郑家女儿在学什么乐器？"])
def test_an_entity_filed_as_someones_relative_in_chinese_is_found_with_or_without_the_de(query: str) -> None:
    """An id written as a phrase, "老郑的女儿" (a model's or an import's), is who "老郑女儿" and "老郑家女儿" name."""
    aliases = {"老郑的女儿": entity_aliases("老郑的女儿", ["老郑的女儿在学大提琴。"])}
    assert query_entities(query, aliases) == {"老郑的女儿"}
