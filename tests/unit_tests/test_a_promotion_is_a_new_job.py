"""A new title is the job's new value, whichever of the two names a model gives it.

A small model files "I'm a quantity surveyor at Harrowgate" as ``job`` and, months later, "I'm senior quantity
surveyor now" as ``job_title``. With two vocabulary slots for what one person does, the new title opened a
slot of its own and the old job stayed current beside it: both came back, and the answer named the old one.
The vocabulary has one slot for it (``job_title`` and 职级 are names of ``job``), so the title replaces the job.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory


def _told(embeddings: Any, tmp_path: Path, turns: list[tuple[str, str, dict[str, Any]]]) -> LifecycleMemory:
    """A memory told each turn's words, with the fact the model gives for them."""
    responses = [json.dumps({"facts": [{**fact, "entity": "user", "confidence": 0.9}]}) for _, _, fact in turns]
    model = FakeListChatModel(responses=responses)
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings), extractor=model)
    for at, words, _ in turns:
        memory.add_messages([("user", words)], user_id="u", at=at)
    return memory


SURVEYOR = [
    (
        "2025-01-14",
        "I'm a quantity surveyor at Harrowgate Partners.",
        {
            "attribute": "job",
            "value": "quantity surveyor",
            "content": "The user is a quantity surveyor at Harrowgate Partners.",
        },
    ),
    (
        "2025-06-03",
        "Got promoted! I'm senior quantity surveyor now, and I moved over to Pelling & Voss.",
        {
            "attribute": "job_title",
            "value": "senior quantity surveyor",
            "content": "The user is now a senior quantity surveyor at Pelling & Voss.",
        },
    ),
]
SUPERVISOR = [
    (
        "2025-01-14",
        "我在一家路桥公司做监理员。",
        {"attribute": "job", "value": "监理员", "content": "用户在一家路桥公司做监理员"},
    ),
    (
        "2025-06-03",
        "上个月升了，现在是总监理工程师。",
        {"attribute": "职级", "value": "总监理工程师", "content": "用户现在是总监理工程师"},
    ),
]


@pytest.mark.parametrize(
    ("turns", "question", "now", "old"),
    [
        pytest.param(SURVEYOR, "What's my role at work these days?", "senior quantity surveyor", "Harrowgate", id="en"),
        pytest.param(SUPERVISOR, "我现在是什么职位？", "总监理工程师", "监理员", id="zh"),
    ],
)
def test_a_new_title_replaces_the_job(embeddings: Any, tmp_path: Path, turns, question, now, old) -> None:
    memory = _told(embeddings, tmp_path, turns)

    block = memory.inject(question, user_id="u", now="2025-07-01").text

    assert now in block
    assert old not in block.replace(now, "")
    jobs = [r for r in memory.list("u", statuses=None) if r.value and old in r.content]
    assert [r.status.value for r in jobs] == ["archived"]
    assert jobs[0].valid_to is not None and jobs[0].valid_to.date().isoformat() == "2025-06-03"


def test_the_old_title_is_still_found_as_of_then(embeddings: Any, tmp_path: Path) -> None:
    memory = _told(embeddings, tmp_path, SURVEYOR)

    block = memory.inject("What was my job in March?", user_id="u", now="2025-07-01", as_of="2025-03-01").text

    assert "Harrowgate" in block
    assert "senior" not in block
