"""Live LLM extraction on the seed demo turns (needs OPENAI_API_KEY; honours OPENAI_BASE_URL / OPENAI_MODEL)."""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import Runnable

from langchain_lifecycle_memory.schema import Fact, normalize_value
from langchain_lifecycle_memory.write.extraction import create_extractor

pytestmark = pytest.mark.live

JAN, MAR = "2024-01-01T10:00:00+00:00", "2024-03-01T10:00:00+00:00"
SEED_TURNS = [
    ("我喜欢使用 Vim 编辑器", "好的，已记录你的编辑器偏好。", JAN, "vim", True),
    ("我现在改用 VS Code 了", "明白，已更新你的工具偏好。", MAR, "vs code", True),
    ("I like using the Vim editor", "Got it, I've noted your editor preference.", JAN, "vim", False),
    ("I've switched to VS Code now", "Understood, I've updated your tool preference.", MAR, "vs code", False),
]


@pytest.fixture(scope="module")
def extractor() -> Runnable[Any, list[Fact]]:
    if not os.environ.get("OPENAI_API_KEY"):
        pytest.skip("OPENAI_API_KEY not set: live extraction test skipped")
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(
        model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"),
        base_url=os.environ.get("OPENAI_BASE_URL") or None,
        temperature=0,
    )
    return create_extractor(model)


@pytest.mark.parametrize(("user", "assistant", "at", "value", "zh"), SEED_TURNS)
def test_seed_demo_turn(
    extractor: Runnable[Any, list[Fact]], user: str, assistant: str, at: str, value: str, zh: bool
) -> None:
    now = datetime.fromisoformat(at)
    facts = extractor.invoke({"messages": [HumanMessage(user), AIMessage(assistant)], "now": now})
    editor = [f for f in facts if f.entity == "user" and f.attribute == "editor" and f.operation == "assert"]
    assert editor, f"no user/editor fact in {facts}"
    assert normalize_value(editor[0].value) == value
    assert bool(re.search(r"[\u4e00-\u9fff]", editor[0].content)) is zh
    assert editor[0].valid_from is not None and editor[0].valid_from.date() == now.date()


def test_relative_date_is_grounded_on_the_conversation(extractor: Runnable[Any, list[Fact]]) -> None:
    now = datetime(2024, 3, 15, 10, tzinfo=timezone.utc)
    facts = extractor.invoke({"messages": [HumanMessage("上个月我搬到了上海")], "now": now})
    city = [f for f in facts if f.attribute == "city"]
    assert city and city[0].valid_from is not None
    assert (city[0].valid_from.year, city[0].valid_from.month) == (2024, 2)
