"""A change the user words ("instead", "现在改去") counts when the model's statement leaves the word out.

A model retells "These days I play at Westgate Sports Hall instead" as "The user plays table tennis at Westgate
Sports Hall." and files it under a name of its own. Read alone, that statement is no change, so the club the user
left stayed current beside the hall. The clause of the user's words that holds the new value says it is one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory


class _Scripted(FakeListChatModel):
    """Answers each extraction with the next canned facts; keeps every name when asked to rename slots."""

    def _call(self, messages: list[Any], *args: Any, **kwargs: Any) -> str:
        if messages and str(messages[-1].content).startswith("New facts:"):
            return '{"answers": []}'
        return super()._call(messages, *args, **kwargs)


def _told(embeddings: Any, tmp_path: Path, *said: tuple[str, str, dict[str, Any]]) -> LifecycleMemory:
    model = _Scripted(responses=[json.dumps({"facts": [{**fact, "entity": "user"}]}) for _, _, fact in said])
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings), extractor=model)
    for words, at, _ in said:
        memory.add_messages([("user", words)], user_id="u", at=at)
    return memory


CLUB = {
    "attribute": "table_tennis_club", "value": "Topspin Club", "confidence": 0.9,
    "content": "The user plays table tennis with the Topspin Club on Wednesday evenings.",
}  # fmt: skip
HALL = {
    "attribute": "table_tennis_hall", "value": "Westgate Sports Hall", "confidence": 0.9,
    "content": "The user plays table tennis at Westgate Sports Hall.",
}  # fmt: skip


def test_instead_in_the_users_words_replaces_the_place_they_left(embeddings: Any, tmp_path: Path) -> None:
    memory = _told(
        embeddings,
        tmp_path,
        ("I play table tennis with the Topspin Club on Wednesday evenings.", "2025-01-08", CLUB),
        ("These days I play at Westgate Sports Hall instead, the tables are much better.", "2025-06-04", HALL),
    )
    block = memory.inject("Where do I play table tennis now?", user_id="u", now="2025-06-20").text
    assert "Westgate" in block
    assert "Topspin" not in block
    assert [r.value for r in memory.list("u", statuses=("archived",))] == ["Topspin Club"]


def test_a_place_added_in_the_users_words_keeps_the_first(embeddings: Any, tmp_path: Path) -> None:
    memory = _told(
        embeddings,
        tmp_path,
        ("I play table tennis with the Topspin Club on Wednesday evenings.", "2025-01-08", CLUB),
        ("I also play at Westgate Sports Hall on Sundays, the tables are much better.", "2025-06-04", HALL),
    )
    assert sorted(r.value for r in memory.active("u")) == ["Topspin Club", "Westgate Sports Hall"]


def _zh(attribute: str, value: str, content: str) -> dict[str, Any]:
    return {"attribute": attribute, "value": value, "content": content, "confidence": 0.9}


ZH_CASES = [
    pytest.param(
        ("我每周二晚上在海港体育中心练手球。", _zh("手球场地", "海港体育中心", "用户每周二晚上在海港体育中心练手球")),
        ("最近改去东区体育馆练了，离家近多了。", _zh("训练地点", "东区体育馆", "用户在东区体育馆练手球")),
        id="place-to-place",
    ),
    pytest.param(
        (
            "我在海港手球队打手球，每周二晚上训练。",
            _zh("手球队", "海港手球队", "用户在海港手球队打手球，每周二晚上训练"),
        ),
        ("最近改去东区体育馆打手球了，离家近多了。", _zh("手球场馆", "东区体育馆", "用户在东区体育馆打手球")),
        id="team-to-hall",
        marks=pytest.mark.xfail(
            strict=True,
            reason="names the structure tells apart (队 / 场馆), statements at 0.39: no change reaches them",
        ),
    ),
]


@pytest.mark.parametrize(("before", "after"), ZH_CASES)
def test_a_change_said_in_chinese_replaces_what_it_changes(
    embeddings: Any, tmp_path: Path, before: tuple[str, dict[str, Any]], after: tuple[str, dict[str, Any]]
) -> None:
    memory = _told(embeddings, tmp_path, (before[0], "2025-02-11", before[1]), (after[0], "2025-07-01", after[1]))
    block = memory.inject("这周去哪练手球？", user_id="u", now="2025-07-10").text
    assert after[1]["value"] in block
    assert before[1]["value"] not in block
