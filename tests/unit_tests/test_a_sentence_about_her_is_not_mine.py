"""A sentence that speaks of someone else in the third person does not replace the user's own value.

"小崔现在去开网约车了，她说比坐办公室自在" tells of 小崔; a small model files it as the user's ``job`` (网约车司机).
The value is in the words and no relative is named ("my sister"), so the check against its own sentence let it
through and the user's job was archived. A sentence where only "she" / "他" speaks, and the speaker never does
("I", "me", "我"), is about that person: the fact is kept as a statement, beside the user's job, which stays.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory


def _told(embeddings: Any, tmp_path: Path, turns: list[tuple[str, str, dict[str, Any]]]) -> LifecycleMemory:
    """A memory told each turn's words, with the fact the model gives for them (all filed under the user)."""
    responses = [json.dumps({"facts": [{**fact, "entity": "user", "confidence": 0.9}]}) for _, _, fact in turns]
    memory = LifecycleMemory(
        ChromaMemoryStore(tmp_path / "m", embeddings=embeddings), extractor=FakeListChatModel(responses=responses)
    )
    for at, words, _ in turns:
        memory.add_messages([("user", words)], user_id="u", at=at)
    return memory


TALLY_CLERK = (
    "2025-02-10",
    "我在一家物流公司的仓库做理货员。",
    {"attribute": "job", "value": "理货员", "content": "用户在物流公司的仓库做理货员"},
)
SUPPORT = (
    "2025-02-10",
    "I'm a support engineer at Quorvane.",
    {"attribute": "job", "value": "support engineer", "content": "The user is a support engineer at Quorvane."},
)


@pytest.mark.parametrize(
    ("first", "then", "question", "mine", "hers"),
    [
        pytest.param(
            TALLY_CLERK,
            (
                "2025-05-06",
                "小崔现在去开网约车了，她说比坐办公室自在多了。",
                {"attribute": "job", "value": "网约车司机", "content": "用户现在开网约车"},
            ),
            "我现在是做什么工作的？",
            "理货员",
            "网约车",
            id="zh-she",
        ),
        pytest.param(
            SUPPORT,
            (
                "2025-05-06",
                "Bexley quit the bakery, he drives for a moving company now and says the night jobs pay double.",
                {
                    "attribute": "job",
                    "value": "moving company driver",
                    "content": "The user drives for a moving company.",
                },
            ),
            "What do I do for work?",
            "support engineer",
            "moving company",
            id="en-he",
        ),
    ],
)
def test_a_third_person_sentence_leaves_the_users_job(
    embeddings: Any, tmp_path: Path, first, then, question, mine, hers
) -> None:
    memory = _told(embeddings, tmp_path, [first, then])

    block = memory.inject(question, user_id="u", now="2025-06-01").text

    assert mine in block
    records = memory.list("u", statuses=None)
    assert [r.status.value for r in records if r.value == mine] == ["active"]
    assert not [r for r in records if r.value and hers in r.value]  # no slot of the user's holds it
    assert [r.status.value for r in records if hers in r.content] == ["active"]  # what was said is kept


def test_a_sentence_where_the_user_speaks_too_still_changes_the_job(embeddings: Any, tmp_path: Path) -> None:
    then = (
        "2025-05-06",
        "My manager finally signed off, she says I'm escalation lead from this week.",
        {"attribute": "job", "value": "escalation lead", "content": "The user is now escalation lead."},
    )
    memory = _told(embeddings, tmp_path, [SUPPORT, then])

    block = memory.inject("What do I do for work?", user_id="u", now="2025-06-01").text

    assert "escalation lead" in block
    assert "support engineer" not in block
