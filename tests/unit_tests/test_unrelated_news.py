"""News worded as a change ("Nowadays I hike every weekend", "我现在每天早上跑五公里") changes what it is about.

A remark with "now", "these days" or 现在 in it is a change of something; it is not a new value of every
single-valued slot the user holds. The city, the car and the employer stay current; the remark is kept too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.told import told


@pytest.mark.parametrize(
    ("held", "news", "attribute", "value"),
    [
        ("I live in Kirkenes.", "Nowadays I hike every weekend.", "city", "Kirkenes"),
        ("I work at Maersk.", "Nowadays I hike every weekend.", "employer", "Maersk"),
        ("I drive a battered Škoda Fabia.", "These days I run five kilometres every morning.", "car", "Škoda Fabia"),
        ("我开一辆二手飞度。", "我现在每天早上跑五公里。", "car", "飞度"),
        ("我在中通快递上班。", "我现在每天早上跑五公里。", "employer", "中通快递"),
        ("我住在克拉玛依。", "我转去夜校学会计了。", "city", "克拉玛依"),
        ("我是一名护士。", "我转去夜校学会计了。", "job", "护士"),
        ("我在中通快递上班。", "周末改去爬山了。", "employer", "中通快递"),
        ("我在中通快递上班。", "晚饭改在家做了。", "employer", "中通快递"),
    ],
    ids=[
        "city",
        "employer",
        "car",
        "car-zh",
        "employer-zh",
        "night-school-city",
        "night-school-job",
        "hiking",
        "dinner",
    ],
)
def test_news_worded_as_a_change_leaves_unrelated_facts_current(
    embeddings: Any, tmp_path: Path, held: str, news: str, attribute: str, value: str
) -> None:
    memory = told(embeddings, tmp_path, (held, "2026-02-01"), (news, "2026-03-01"))

    held_now = [str(r.value) for r in memory.active("u") if r.attribute == attribute]
    assert len(held_now) == 1 and value in held_now[0], held_now
    assert len(memory.active("u")) >= 2  # the news is kept beside it


@pytest.mark.parametrize(
    ("news", "archived"),
    [
        ("I switched to paper planners.", False),
        ("我换了家洗衣店。", False),
        ("我现在改成手冲咖啡了。", False),
        ("I switched to a Galaxy A55.", True),
        ("我换成 Galaxy A55 了。", True),
    ],
    ids=["planners", "laundry-zh", "coffee-zh", "new-phone", "new-phone-zh"],
)
def test_a_switch_to_a_common_word_leaves_the_held_phone_current(
    embeddings: Any, tmp_path: Path, news: str, archived: bool
) -> None:
    """A switch names what it replaces only when it names a thing of that kind; a common word changes something else."""
    memory = told(embeddings, tmp_path, ("My phone is a Moto G84.", "2026-02-01"), (news, "2026-03-01"))

    phones = [str(r.value) for r in memory.active("u") if r.attribute == "smartphone"]
    assert phones == (["Galaxy A55"] if archived else ["Moto G84"])
    assert len(memory.active("u")) == (1 if archived else 2)
