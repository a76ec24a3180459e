"""An ending ends what it names: "我现在不吃包子了" ends eating steamed buns, not helping at the bun shop.

A Chinese ending ("不…了") shares two characters with a remark that names a place after the thing it sells
(包子铺, 面包房): the place is not the thing, and the remark stays current. An ending that names what the remark
says still ends it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langchain_lifecycle_memory import LifecycleMemory
from tests.told import told


def current(memory: LifecycleMemory) -> list[str]:
    return [r.content for r in memory.active("u")]


@pytest.mark.parametrize(
    ("before", "ending", "kept"),
    [
        ("我周末在包子铺帮忙。", "我现在不吃包子了。", "包子铺"),
        ("我在一家面包房上班，天天闻着香味。", "我现在不吃面包了。", "面包房"),
    ],
    ids=["bun-shop", "bakery"],
)
def test_an_ending_that_names_a_food_leaves_the_shop_named_after_it(
    embeddings: Any, tmp_path: Path, before: str, ending: str, kept: str
) -> None:
    memory = told(embeddings, tmp_path, (before, "2026-02-01"), (ending, "2026-04-01"))

    shown = current(memory)
    assert any(kept in content for content in shown), shown
    assert any("不吃" in content for content in shown), shown  # the ending is kept as what holds now


def test_an_ending_that_names_the_help_ends_it(embeddings: Any, tmp_path: Path) -> None:
    turns = (("我周末在包子铺帮忙。", "2026-02-01"), ("包子铺那边我不去帮忙了。", "2026-04-01"))
    memory = told(embeddings, tmp_path, *turns)

    assert not [content for content in current(memory) if "周末在包子铺帮忙" in content]
