"""A set said to hold only some values now ("I'm only allergic to okra now") holds those values, not the others.

"Only" restricts: the other members of the set stop being current and stay in history. "一只" is a measure word,
not "only", and "not only" adds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langchain_lifecycle_memory import LifecycleMemory
from tests.told import told


def current(memory: LifecycleMemory, attribute: str) -> set[str]:
    return {str(r.value) for r in memory.active("u") if r.attribute == attribute}


@pytest.mark.parametrize(
    ("before", "now", "attribute", "left"),
    [
        ("I'm allergic to okra and lychee.", "Turns out I'm only allergic to okra now.", "allergy", {"okra"}),
        ("我对秋葵和荔枝过敏。", "现在我只对秋葵过敏了。", "allergy", {"秋葵"}),
    ],
    ids=["en", "zh"],
)
def test_a_set_said_to_hold_only_some_values_now_holds_only_those(
    embeddings: Any, tmp_path: Path, before: str, now: str, attribute: str, left: set[str]
) -> None:
    memory = told(embeddings, tmp_path, (before, "2026-02-01"), (now, "2026-04-01"))

    assert current(memory, attribute) == left
    assert len(memory.history("u", "user", attribute)) >= 2  # the others kept as history


def test_a_measure_word_is_no_only(embeddings: Any, tmp_path: Path) -> None:
    memory = told(embeddings, tmp_path, ("我养了一只雪貂。", "2026-02-01"), ("我又养了一只守宫。", "2026-04-01"))

    assert len([r for r in memory.active("u") if r.attribute == "pet"]) == 2


def test_a_list_does_not_run_on_into_the_clause_after_its_comma(embeddings: Any, tmp_path: Path) -> None:
    memory = told(
        embeddings, tmp_path, ("I'm allergic to okra, lychee and jackfruit.", "2026-02-01"),
        ("Turns out I'm only allergic to okra now, the lychee and jackfruit allergies are gone.", "2026-04-01"),
    )  # fmt: skip

    assert current(memory, "allergy") == {"okra"}
