"""A name keeps its words: restating a remark about "the user" leaves the "我" or "My" inside a name alone.

A statement is restated in the third person ("我在…上班" -> "用户在…上班", "I work at…" -> "The user works at…");
a name or a title that holds the word for "I" or "my" (我爱我家, 《我与地坛》, My Morning Jacket, Our Table
Bakery) is what the user called it, and stays as written in the value and in the statement.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from langchain_lifecycle_memory.write.extraction import extract_rule_facts

NOW = datetime(2025, 4, 1, 9, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("text", "attribute", "value", "content"),
    [
        ("我在我爱我家做房产中介。", "employer", "我爱我家", "用户在我爱我家做房产中介"),
        ("我常去的那家餐厅叫我家厨房。", None, "我家厨房", "叫我家厨房"),
        ("我最喜欢的书是《我与地坛》。", "favorite_book", "我与地坛", "用户最喜欢的书是《我与地坛》"),
        ("My favorite band is My Morning Jacket.", "favorite_band", "My Morning Jacket", "is My Morning Jacket"),
        ("I work at Our Table Bakery.", "employer", "Our Table Bakery", "The user works at Our Table Bakery"),
    ],
    ids=["employer-zh", "restaurant-zh", "book-title-zh", "band", "bakery"],
)
def test_a_name_with_i_or_my_in_it_is_kept_as_written(
    text: str, attribute: str | None, value: str, content: str
) -> None:
    facts = [f for f in extract_rule_facts(text, now=NOW) if f.value == value]

    assert facts, [(f.attribute, f.value) for f in extract_rule_facts(text, now=NOW)]
    assert attribute is None or facts[0].attribute == attribute
    assert all(content in f.content for f in facts), [f.content for f in facts]


def test_every_fact_of_the_sentence_keeps_the_name() -> None:
    """The job read from the same words keeps the employer's name in its statement; the 爱 inside the name is no
    liking of "我家做房产中介" (one span of words is one value, read by the rule that reads it best)."""
    facts = extract_rule_facts("我在我爱我家做房产中介。", now=NOW)

    assert sorted(f.attribute or "" for f in facts) == ["employer", "job"], [(f.attribute, f.value) for f in facts]
    assert all("我爱我家" in f.content and f.content.startswith("用户") for f in facts), [f.content for f in facts]
