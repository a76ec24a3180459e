"""A change that names what it moves changes that thing: "We moved the team standup to Thursdays" is no new home.

A statement worded as a change replaces a single-valued slot when it names something new for it ("signed up at
Anytime Fitness instead" for the gym). "Moved the book club to Wednesdays at Kirjakahvila" names something new
too, but says what it moved: the book club, not the user, whose city stays current.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.told import told


@pytest.mark.parametrize(
    "change",
    [
        "We moved the team standup to Thursdays.",
        "Moved the book club to Wednesdays at Kirjakahvila.",
    ],
    ids=["standup", "book-club"],
)
def test_moving_something_else_keeps_the_home(embeddings: Any, tmp_path: Path, change: str) -> None:
    memory = told(embeddings, tmp_path, ("I live in Tampere.", "2025-01-05"), (change, "2025-03-11"))
    assert [r.value for r in memory.active("u") if r.attribute == "city"] == ["Tampere"]
    block = memory.inject("Any good saunas near where I live?", user_id="u", now="2025-03-20").text
    assert "Tampere" in block


def test_moving_the_family_is_a_move(embeddings: Any, tmp_path: Path) -> None:
    memory = told(
        embeddings, tmp_path, ("I live in Tampere.", "2025-01-05"), ("We moved the whole family to Lahti in May.", None)
    )
    assert not [r for r in memory.active("u") if r.attribute == "city"]
    assert [r.value for r in memory.history("u", "user", "city")] == ["Tampere"]


def test_moving_what_the_slot_holds_by_another_name_is_a_change(embeddings: Any, tmp_path: Path) -> None:
    memory = told(
        embeddings,
        tmp_path,
        ("My pickup is insured with Allstate.", "2025-01-05"),
        ("I switched my vehicle coverage over to Nationwide last month.", "2025-06-18"),
    )
    block = memory.inject("Someone dented my pickup, who do I file a claim with?", user_id="u", now="2025-06-20")
    assert "Nationwide" in block.text
    assert "Allstate" not in block.text
