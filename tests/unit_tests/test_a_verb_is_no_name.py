"""A sentence led by a verb of change is the speaker's news, not a person's: "Switched gyms to Jetts."

An English sentence led by a capitalized word and a verb that agrees with one person ("Kevin wears Le Labo") is
filed under that name until a relation is said. "Switched gyms to Jetts." has the same shape ("gyms" reads as
such a verb), but "Switched" states a change: the speaker dropped their "I".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.told import told


@pytest.mark.parametrize(
    "news",
    ["Switched gyms to Jetts.", "Moved banks to Monzo, the app is so much better.", "Changed dentists to Dr. Halden."],
    ids=["gyms", "banks", "dentists"],
)
def test_news_led_by_a_change_is_the_speakers(embeddings: Any, tmp_path: Path, news: str) -> None:
    memory = told(embeddings, tmp_path, (news, "2025-03-04"))
    kept = memory.active("u")
    assert kept
    assert all(r.entity in (None, "user") for r in kept), [(r.entity, r.content) for r in kept]


def test_a_name_before_a_verb_is_still_a_person(embeddings: Any, tmp_path: Path) -> None:
    memory = told(embeddings, tmp_path, ("Ahmed takes the ferry to Halden every Friday.", "2025-03-04"))
    assert {r.entity for r in memory.active("u")} == {"person_ahmed"}
