"""Who a request is for: said by its shape, not by a first-person word, and who a record is about."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_lifecycle_memory import ChromaMemoryStore, Fact, LifecycleMemory, LifecycleRetriever

AT = "2025-03-02T08:00:00Z"
NOW = "2025-06-04T12:00:00Z"


def _memory(embeddings: Any, tmp_path: Path) -> LifecycleMemory:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    facts = [
        Fact(entity="user", attribute="medical_condition", value="痛风", content="用户有痛风，去年发作过两次。"),
        Fact(entity="user", attribute="job", value="surveyor", content="The user works as a land surveyor."),
        Fact(
            entity="daughter_mei", attribute="condition", value="noise sensitivity", kind="profile",
            content="The user's daughter Mei panics at loud bangs and crowds.",
        ),
    ]  # fmt: skip
    memory.add_facts(facts, "ann", at=AT)
    return memory


def test_a_request_without_i_still_gets_the_users_lasting_facts(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    for ask in (
        "下周想约朋友去吃火锅配啤酒，你觉得怎么样？",  # subject left out before 想, advice asked
        "周末打算去吃海鲜自助，要注意什么？",
        "Thinking about a food tour in Lisbon next month, any ideas?",
        "We're picking a seafood place for Friday night.",  # "we're" is "we are"
        "Seafood restaurant recommendations near the harbor?",  # a request for advice without a verb
        "明天要去海边吃海鲜大餐，点几只螃蟹？",  # subject left out before 要去
        "周五晚上能去吃海鲜大排档吗？",  # a time, then 能…吗: the asker's own plan
    ):
        assert "痛风" in memory.inject(ask, "ann", now=NOW).text, ask
    for world in (
        "明天会下雨吗？",
        "红烧肉怎么做比较好吃？",
        "帮我解释一下什么是通货膨胀",
        "How fast do cheetahs run?",
        "他一直想去海边玩，哪里的海滩干净？",  # a subject named before 想 is not left out
        "猫能吃巧克力吗？",
    ):
        assert memory.inject(world, "ann", now=NOW).empty, world  # the world, words or a recipe: not the user


def test_a_chinese_question_of_which_or_whom_with_its_subject_left_out_is_the_askers(
    embeddings: Any, tmp_path: Path
) -> None:
    """Chinese drops the subject of "用哪个", "该去哪", "找谁", "…来着" (what was it again): the asker's choice or
    memory, so their lasting facts come as context; "熊猫住在哪里" names its subject and stays the world's."""
    memory = _memory(embeddings, tmp_path)
    for ask in ("年会那天用哪套衣服好？", "搬家那天找谁帮忙比较靠谱？", "上回那家修车铺叫啥来着？"):
        assert "surveyor" in memory.inject(ask, "ann", now=NOW).text, ask
    for world in ("熊猫住在哪里？", "这首诗是谁写的？", "长城在哪个省？"):
        assert memory.inject(world, "ann", now=NOW).empty, world


def test_a_request_for_the_household_shows_their_lasting_facts_too(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    together = memory.inject("Should we take the kids to the stadium concert on Saturday?", "ann", now=NOW).text
    assert "Mei" in together
    alone = memory.inject("Should I take the evening train or the morning one on Saturday?", "ann", now=NOW).text
    assert "Mei" not in alone  # the user's own request: someone else's facts stay out


def test_a_record_that_names_the_person_asked_about_is_about_them(embeddings: Any, tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "m", embeddings=embeddings)
    memory = LifecycleMemory(store)
    old = "The user's brother Tomasz drives a Subaru Outback."
    car = Fact(entity="brother_tomasz", attribute="car", value="Subaru Outback", content=old)
    memory.add_facts([car], "ann", at=AT)
    news = "Tomasz sold the Subaru; he picked up a Tesla Model Y last week."  # filed under the user, names him
    memory.add_facts([Fact(entity="user", attribute=None, value=None, content=news)], "ann", at="2025-05-20T08:00:00Z")
    text = memory.inject("What car does my brother drive now?", "ann", now=NOW).text
    assert "Tesla Model Y" in text
    off = LifecycleMemory(store, retriever=LifecycleRetriever(store=store, news=0))
    assert "Tesla Model Y" not in off.inject("What car does my brother drive now?", "ann", now=NOW).text


def test_a_request_about_the_past_gets_the_lasting_facts_of_that_time(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    moved = Fact(entity="user", attribute="job", value="ferry pilot", content="The user now works as a ferry pilot.")
    memory.add_facts([moved], "ann", at="2025-05-01T08:00:00Z")
    then = "2025-04-01T00:00:00Z"
    block = memory.inject("What was I up to back then? Write it as a short diary entry.", "ann", now=NOW, as_of=then)
    assert "surveyor" in block.text
    assert "ferry" not in block.text  # not yet true then
    assert memory.inject("How fast do cheetahs run?", "ann", now=NOW, as_of=then).empty


def test_a_request_for_the_parents_reaches_each_parents_facts(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    facts = [
        Fact(entity="mother", attribute="medical_condition", value="糖尿病", content="用户的妈妈有二型糖尿病。"),
        Fact(entity="father", attribute="hearing", value="hearing aid", content="The user's dad wears a hearing aid."),
    ]
    memory.add_facts(facts, "ann", at=AT)
    assert "糖尿病" in memory.inject("想给爸妈寄点零食回去，买哪些好？", "ann", now=NOW).text
    assert "hearing aid" in memory.inject("Planning a surprise dinner for my parents, any tips?", "ann", now=NOW).text
    assert "糖尿病" not in memory.inject("想给自己买点零食，买哪些好？", "ann", now=NOW).text


def test_a_question_that_opens_on_the_askers_time_of_day_is_theirs(embeddings: Any, tmp_path: Path) -> None:
    """Chinese opens on the time and leaves the asker out ("早饭弄点啥？", "周六下午，去不去钓鱼？"); English asks
    for ideas or whether a time suits ("Any brunch ideas…", "Is Sunday a good day for…"). A time before a
    world's subject stays the world's."""
    memory = _memory(embeddings, tmp_path)
    for ask in (
        "早饭弄点啥？",
        "周六下午，去不去钓鱼？",
        "晚上聚餐点什么菜？",
        "同事生日聚餐，可不可以喝两杯？",
        "下个月去长白山，行李里要带啥？",  # the question after the time's clause
        "阳台那盆花叶子全黄了，咋整？",
        "Any brunch ideas for Sunday?",
        "Is Sunday a good day for a long drive?",
        "Which diner should the team book for Friday?",
        "周五晚上有空去练琴吗？",  # the asker's act after the time, asked yes or no
        "下周有个体检，有什么 tips？",
    ):
        assert "痛风" in memory.inject(ask, "ann", now=NOW).text, ask
    for world in (
        "明天股市开不开？",
        "今天是什么节日？",
        "明天会刮大风吗？",
        "后天杭州会下雪吗？",
        "Is Mars a good place for life?",
    ):
        assert memory.inject(world, "ann", now=NOW).empty, world


def test_a_name_question_about_the_askers_own_is_theirs(embeddings: Any, tmp_path: Path) -> None:
    """ "What's my …'s name again?" asks for the user's facts; "What's the name of …" asks about the world."""
    memory = _memory(embeddings, tmp_path)
    pet = Fact(
        entity="user", attribute="tarantula", value="Quillon", content="The user keeps a tarantula called Quillon."
    )
    memory.add_facts([pet], "ann", at=AT)
    asked = "What's my little guy's name again? need it for the adoption paperwork"
    assert "Quillon" in memory.inject(asked, "ann", now=NOW).text
    assert memory.inject("What's the name of the longest river in Asia?", "ann", now=NOW).empty


def test_a_question_about_something_of_the_users_by_its_name_gets_what_recurs_that_day(
    embeddings: Any, tmp_path: Path
) -> None:
    # "Pippin" names no person and says no "I": it is the user's bird, named in their records.
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    facts = [
        Fact(entity="user", attribute="pet", value="cockatoo Pippin", content="The user has a cockatoo named Pippin."),
        Fact(
            entity="user", attribute="bird_trainer", value="Dara Lindqvist",
            content="The user's cockatoo does flight training with Dara Lindqvist on Thursday evenings.",
        ),
        Fact(entity="user", attribute="job", value="cartographer", content="The user works as a cartographer."),
    ]  # fmt: skip
    memory.add_facts(facts, "ann", at=AT)

    block = memory.inject("Pippin has a session Thursday. Who's running it?", "ann", now=NOW).text

    assert "Lindqvist" in block
    assert "cartographer" not in block


def test_a_chinese_errand_that_asks_where_or_which_is_the_askers(embeddings: Any, tmp_path: Path) -> None:
    """A verb that asks where or which with its subject left out ("去哪补", "推去哪修") is the asker's errand: their
    lasting facts come; where or which asked of a thing by 在/是/出自 stays a question about the world."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    facts = [
        Fact(entity="user", attribute="hardware_supplier", value="城南五金店", content="用户买五金配件都去城南五金店"),
        Fact(entity="user", attribute="repair_shop", value="楼下维修点", content="用户的电动车都在楼下维修点修"),
        Fact(entity="user", attribute="job", value="木匠", content="用户是木匠"),
    ]
    memory.add_facts(facts, "ann", at=AT)
    assert "城南五金店" in memory.inject("钻头用完了，去哪补？", "ann", now=NOW).text
    assert "楼下维修点" in memory.inject("车胎又漏气了，推去哪修？", "ann", now=NOW).text
    for world in ("长颈鹿住在哪儿？", "这句诗出自哪本书？", "世界杯下一届是哪个国家办？"):
        assert memory.inject(world, "ann", now=NOW).empty, world


def test_a_chinese_yes_or_no_on_a_bare_verb_after_an_invitation_is_the_askers(embeddings: Any, tmp_path: Path) -> None:
    """An invitation then "去吗？" asks whether the asker goes: their lasting facts come. "…，对吗？" asks whether a
    statement is right, and a statement about the world stays the world's."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    ear = Fact(entity="user", attribute="medical_condition", value="耳膜穿孔", content="用户左耳耳膜穿孔，还没长好")
    memory.add_facts([ear], "ann", at=AT)
    assert "耳膜" in memory.inject("表哥约周日去玩滑翔伞，去吗？", "ann", now=NOW).text
    assert memory.inject("地球绕着太阳转，对吗？", "ann", now=NOW).empty


def test_a_chinese_name_question_about_the_askers_own_is_theirs(embeddings: Any, tmp_path: Path) -> None:
    """ "我家那个…叫什么来着" (家, 那 after 我, as 的) asks for the user's own: their facts come."""
    memory = _memory(embeddings, tmp_path)
    pet = Fact(entity="user", attribute="hamster", value="芝麻糊", content="用户养了一只叫芝麻糊的金丝熊")
    memory.add_facts([pet], "ann", at=AT)
    assert "芝麻糊" in memory.inject("我家那个小毛球叫什么来着？", "ann", now=NOW).text
    assert memory.inject("世界上最长的河叫什么名字？", "ann", now=NOW).empty
