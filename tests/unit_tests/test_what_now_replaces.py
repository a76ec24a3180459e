"""A set-valued slot told what it holds now ("now plays", "现在练"): with one value held, that value is replaced.

With several held, which one "now" replaces is unsaid and all stay; "now also" adds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, Fact, LifecycleMemory


def _told(embeddings: Any, tmp_path: Path, attribute: str, *said: tuple[str, str]) -> LifecycleMemory:
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    for day, (value, content) in enumerate(said, start=1):
        fact = Fact(entity="user", attribute=attribute, value=value, content=content, kind="preference")
        memory.add_facts([fact], "u", at=f"2025-03-{day:02d}T09:00:00Z")
    return memory


def _held(memory: LifecycleMemory, attribute: str) -> set[str]:
    return {str(r.value) for r in memory.active("u") if r.attribute == attribute}


HARMONIUM = ("harmonium", "The user plays the harmonium in the village band.")
SOUSAPHONE = ("sousaphone", "The user now plays the sousaphone in the village band.")


@pytest.mark.parametrize(
    ("attribute", "said", "held"),
    [
        ("instrument", [HARMONIUM, SOUSAPHONE], {"sousaphone"}),  # one value held, told what it is now
        ("sport", [("踢毽子", "用户每周六去公园踢毽子"), ("太极扇", "用户现在每周六去公园练太极扇")], {"太极扇"}),
        (  # "now also" adds
            "instrument",
            [HARMONIUM, ("sousaphone", "The user now also plays the sousaphone in the village band.")],
            {"harmonium", "sousaphone"},
        ),
        (  # among several, "now" does not say which it replaces
            "instrument",
            [HARMONIUM, ("mandola", "The user plays the mandola at folk sessions."), SOUSAPHONE],
            {"harmonium", "mandola", "sousaphone"},
        ),
    ],
    ids=["now-en", "now-zh", "now-also", "now-among-several"],
)
def test_now_in_a_set_of_one_replaces_it(
    embeddings: Any, tmp_path: Path, attribute: str, said: list[tuple[str, str]], held: set[str]
) -> None:
    memory = _told(embeddings, tmp_path, attribute, *said)
    assert _held(memory, attribute) == held


def test_the_sport_said_now_answers_what_the_user_practises(embeddings: Any, tmp_path: Path) -> None:
    memory = _told(
        embeddings, tmp_path, "sport", ("踢毽子", "用户每周六去公园踢毽子"), ("太极扇", "用户现在每周六去公园练太极扇")
    )
    assert "太极扇" in memory.inject("这周六想活动活动，我平常练什么？", "u", now="2025-03-05T09:00:00Z").text


def test_now_in_a_profile_fact_one_gathers_replaces_nothing(embeddings: Any, tmp_path: Path) -> None:
    """A pet, a child, an allergy said "now" is one more: only a preference is told what it is now."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    for day, (value, content) in enumerate(
        [("Wonton", "The user has a dachshund named Wonton."), ("Kiwi", "The user now has a parakeet named Kiwi.")],
        start=1,
    ):
        fact = Fact(entity="user", attribute="pet", value=value, content=content, kind="profile")
        memory.add_facts([fact], "u", at=f"2025-03-{day:02d}T09:00:00Z")
    assert _held(memory, "pet") == {"Wonton", "Kiwi"}
