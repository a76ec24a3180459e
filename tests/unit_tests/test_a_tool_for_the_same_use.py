"""A switch of tool for the same use replaces the one used for it; a tool for another use stays.

"I use Feedly for news" then "I switched to Inoreader for news": one news reader is current, Inoreader, and
Feedly is in ``history()``. What the user uses is a set (a password manager beside a photo editor), so the
use a tool was said to be for is what a switch replaces, whatever the encoder knows of the two names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.told import told


def _current(memory: Any) -> list[str]:
    return sorted(str(r.value) for r in memory.active("u") if r.value)


@pytest.mark.parametrize(
    ("held", "switch", "gone", "kept"),
    [
        ("I use Feedly for news.", "I switched to Inoreader for news.", "Feedly", "Inoreader"),
        ("I use Lightroom to edit my photos.", "Now I use Darktable to edit my photos.", "Lightroom", "Darktable"),
        pytest.param(
            "I use LastPass for passwords.",
            "I moved to Bitwarden for passwords.",
            "LastPass",
            "Bitwarden",
            marks=pytest.mark.xfail(reason="'moved to Bitwarden' reads as a move to a city of that name", strict=True),
        ),
        ("I use LastPass for passwords.", "I switched to Bitwarden for my passwords.", "LastPass", "Bitwarden"),
        ("我用百词斩背单词。", "我现在用扇贝背单词了。", "百词斩", "扇贝"),
        ("我用有道云笔记记笔记。", "我改用语雀记笔记了。", "有道云笔记", "语雀"),
    ],
    ids=["reader", "photos-now", "passwords-moved", "passwords", "words-zh", "notes-zh"],
)
def test_a_switch_for_the_same_use_replaces_the_tool(
    embeddings: Any, tmp_path: Path, held: str, switch: str, gone: str, kept: str
) -> None:
    memory = told(embeddings, tmp_path, (held, "2026-02-01"), (switch, "2026-03-01"))

    current = _current(memory)
    assert any(kept in v for v in current), current
    assert not any(gone in v for v in current), current
    assert any(gone in str(r.value) for r in memory.list("u", statuses="archived")), "the old one is history"


def test_only_the_tool_for_that_use_is_replaced(embeddings: Any, tmp_path: Path) -> None:
    memory = told(
        embeddings,
        tmp_path,
        ("I use Lightroom for photos and Bitwarden for passwords.", "2026-02-01"),
        ("I switched to Darktable for photos.", "2026-03-01"),
    )

    current = _current(memory)
    assert any("Darktable" in v for v in current) and any("Bitwarden" in v for v in current), current
    assert not any("Lightroom" in v for v in current), current


@pytest.mark.parametrize(
    ("held", "news"),
    [
        ("I use Feedly for news.", "I switched to Telegram for chatting with my family."),
        ("我用百词斩背单词。", "我现在用语雀记笔记了。"),
    ],
    ids=["en", "zh"],
)
def test_a_tool_for_another_use_leaves_the_first_current(embeddings: Any, tmp_path: Path, held: str, news: str) -> None:
    memory = told(embeddings, tmp_path, (held, "2026-02-01"), (news, "2026-03-01"))

    current = _current(memory)
    assert len(current) == 2, current
