"""A fact's name found in an unrelated question (issue 13): word matches need the meaning to agree."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableLambda

from langchain_lifecycle_memory import LifecycleMemory

FACTS = [
    {
        "entity": "user",
        "attribute": "laptop",
        "value": "Apple MacBook Pro",
        "content": "The user's laptop is an Apple MacBook Pro.",
        "kind": "fact",
    },
    {
        "entity": "user",
        "attribute": "employer",
        "value": "Amazon",
        "content": "The user works at Amazon in logistics.",
        "kind": "profile",
    },
    {"entity": "user", "attribute": "smartphone", "value": "小米14", "content": "用户用的手机是小米14", "kind": "fact"},
]
NOW = "2025-04-02T10:00:00Z"


def _memory(mem_store: Any) -> LifecycleMemory:
    memory = LifecycleMemory(store=mem_store, extractor=RunnableLambda(lambda _: []))
    memory.add_facts(FACTS, "u1", at="2025-04-01T09:00:00Z")
    return memory


def test_a_brand_that_is_also_a_common_word_is_not_injected(mem_store: Any) -> None:
    memory = _memory(mem_store)
    for question in (
        "How do I make an apple pie from scratch?",
        "How much of the Amazon rainforest has been cut down?",
    ):
        assert memory.search(question, "u1", now=NOW) == [], question
    explained = memory.explain("How do I make an apple pie from scratch?", "u1", now=NOW)
    apple = next(c for c in explained.candidates if c.record.value == "Apple MacBook Pro")
    assert apple.decision == "below_threshold"


def test_questions_about_the_users_own_things_still_find_them(mem_store: Any) -> None:
    memory = _memory(mem_store)
    assert "Amazon" in memory.inject("Which company do I work for?", "u1", now=NOW).text
    assert "MacBook" in memory.inject("Is my Apple laptop good for video editing?", "u1", now=NOW).text
    assert "小米14" in memory.inject("我的小米手机电池不耐用怎么办？", "u1", now=NOW).text


NAMED = [
    {
        "entity": "user",
        "attribute": "pet",
        "value": "Nutmeg",
        "content": "The user's cat is called Nutmeg.",
        "kind": "profile",
    },
    {"entity": "user", "attribute": "pet", "value": "Saffron", "content": "用户的狗叫 Saffron", "kind": "profile"},
    {
        "entity": "user",
        "attribute": "car",
        "value": "Ford Mustang",
        "content": "The user drives a Ford Mustang.",
        "kind": "fact",
    },
]


def test_a_name_used_as_a_common_noun_is_not_the_named_thing(mem_store: Any) -> None:
    """A pet or a car named after a common noun: the noun in lower case or in the plural names no pet, no car."""
    memory = LifecycleMemory(store=mem_store, extractor=RunnableLambda(lambda _: []))
    memory.add_facts(NAMED, "u1", at="2025-04-01T09:00:00Z")
    for question in (
        "How much grated nutmeg goes into a batch of eggnog?",
        "Is saffron worth the price compared to turmeric?",
        "Where do wild mustangs still roam in the US?",
    ):
        assert memory.search(question, "u1", now=NOW) == [], question
    # the name as a name, or the user asking about their own, still finds them
    assert "Nutmeg" in memory.inject("Nutmeg has been sneezing all week, should I worry?", "u1", now=NOW).text
    assert "Saffron" in memory.inject("Can I give saffron a bit of cheese as a treat?", "u1", now=NOW).text
    assert "Mustang" in memory.inject("When is my Mustang due for new tyres?", "u1", now=NOW).text


def test_a_how_to_asks_of_the_noun_even_when_it_says_i(mem_store: Any) -> None:
    """ "How can I tell…" is anyone's "I": the noun is still the noun; the name as written is still the pet."""
    memory = LifecycleMemory(store=mem_store, extractor=RunnableLambda(lambda _: []))
    memory.add_facts(NAMED, "u1", at="2025-04-01T09:00:00Z")
    assert memory.search("How can I tell if saffron threads are real or dyed?", "u1", now=NOW) == []
    assert "Nutmeg" in memory.inject("How do I get Nutmeg to stop scratching the sofa?", "u1", now=NOW).text


GROOMING = [
    ("2024-01-01T09:00:00Z", "pet", "Wiggum", "The user has a standard poodle named Wiggum."),
    ("2024-02-01T09:00:00Z", "groomer", "Snip Street", "The user brings the dog to Snip Street every six weeks."),
    ("2024-03-01T09:00:00Z", "pet", "Dorrit", "The user adopted a second poodle, Dorrit."),
]


def test_two_words_of_the_question_in_a_statement_back_a_word_match(mem_store: Any) -> None:
    """A statement that holds two of the question's words is about it, however far apart their meanings read."""
    memory = LifecycleMemory(store=mem_store, extractor=RunnableLambda(lambda _: []))
    for at, attribute, value, content in GROOMING:
        fact = {"entity": "user", "attribute": attribute, "value": value, "content": content, "kind": "fact"}
        memory.add_facts([fact], "u1", at=at)
    assert "Snip Street" in memory.inject("Where do I usually bring my dog for a trim?", "u1", now=NOW).text
    # one word in common ("bring") is no such evidence: nothing matches, the user's lasting facts are shown as such
    block = memory.inject("Where should I bring my laptop for repairs?", "u1", now=NOW)
    assert block.text.startswith("No stored memory matched this request by topic")


def test_the_words_that_name_whom_a_question_asks_about_are_not_its_topic(mem_store: Any) -> None:
    """Every statement about her holds "sister": only the rest of the question ("live") is its topic, so an older
    statement that names her and where she lived is not found by those two words."""
    memory = LifecycleMemory(store=mem_store, extractor=RunnableLambda(lambda _: []))
    said = [
        (
            "2025-01-21T20:00:00Z",
            "name",
            "Ilse",
            "Ilse, my sister, lives in Viljandi; she fixes old accordions and sings in a choir.",
        ),
        ("2025-04-28T19:20:00Z", "city", "Pärnu", "Ilse just moved to Pärnu for a job at the concert hall."),
    ]
    for at, attribute, value, content in said:
        fact = {"entity": "sister_ilse", "attribute": attribute, "value": value, "content": content, "kind": "fact"}
        memory.add_facts([fact], "u1", at=at)
    text = memory.inject("Where does my sister live these days?", "u1", now="2025-05-10T09:00:00Z").text
    assert "Pärnu" in text and "Viljandi" not in text
