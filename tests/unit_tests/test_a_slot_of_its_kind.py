"""A new slot name near two stored ones goes to the one whose values are of its value's kind.

Names alone may point the wrong way: "泳队" is nearer to "游泳教练" than to "游泳俱乐部" for the bundled encoder.
When the nearest name's values are nothing like the new value and a slot named nearly as alike holds one that is,
that slot changes; the coach is not archived by a change of club.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory
from langchain_lifecycle_memory.schema import Fact

CASES = {
    "zh": (
        Fact(entity="user", attribute="游泳俱乐部", value="蓝鲸游泳俱乐部", content="用户在蓝鲸游泳俱乐部训练"),
        Fact(entity="user", attribute="游泳教练", value="周指导", content="用户的游泳教练是周指导"),
        Fact(entity="user", attribute="泳队", value="海豚泳队", content="用户现在改去海豚泳队训练了"),
    ),
    "en": (
        Fact(entity="user", attribute="swimming_club", value="Bluewater Swim Club",
             content="The user trains with the Bluewater Swim Club."),
        Fact(entity="user", attribute="swimming_coach", value="Coach Ines",
             content="The user's swimming coach is Ines."),
        Fact(entity="user", attribute="swim_team", value="Harbour Seals Swim Team",
             content="The user now trains with the Harbour Seals Swim Team."),
    ),
}  # fmt: skip


@pytest.mark.parametrize("lang", list(CASES))
def test_a_change_of_club_keeps_the_coach(embeddings: Any, tmp_path: Path, lang: str) -> None:
    club, coach, new = CASES[lang]
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_facts([club, coach], "u", at="2024-03-01")
    memory.add_facts([new], "u", at="2025-03-01")
    current = {r.value for r in memory.active("u")}
    assert coach.value in current, current
    assert new.value in current and club.value not in current, current
    assert [r.value for r in memory.history("u", "user", str(club.attribute))] == [club.value, new.value]


def test_statements_alike_but_for_their_values_of_one_kind_are_one_slot(embeddings: Any, tmp_path: Path) -> None:
    """Names that share nothing (0.35), statements that say the same of two towns: the new town replaces the old."""
    old = Fact(entity="user", attribute="residence", value="Lillehammer", content="The user lives in Lillehammer.")
    new = Fact(
        entity="user", attribute="where_i_am", value="Drammen",
        content="The user lives in Drammen, in a flat by the river.",
    )  # fmt: skip
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    memory.add_facts([old], "u", at="2023-05-01")
    memory.add_facts([new], "u", at="2025-02-01")
    assert {r.value for r in memory.active("u")} == {"Drammen"}
    block = memory.inject("Any good bakeries near where I live?", user_id="u", now="2025-03-01").text
    assert "Drammen" in block and "Lillehammer" not in block
