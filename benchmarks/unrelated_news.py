"""Silent archives: how often news about one thing archives an unrelated fact the user holds.

Each pair is a held fact ("I live in Kirkenes.", "我开一辆二手飞度。") told to a fresh user, then, a month later,
news that has nothing to do with it, worded as a change or an ending ("Nowadays I hike every weekend.",
"我不玩手游了。", "周末改去爬山了。"). The held fact must stay active; the script counts the pairs where an update
archived it, per group, with the default (rule) extractor and embedded Chroma, and lists them.
Run: ``python benchmarks/unrelated_news.py``.
"""

from __future__ import annotations

import tempfile
import warnings
from itertools import product

from langchain_lifecycle_memory import LifecycleMemory

HELD_ZH = ["我住在克拉玛依。", "我住在库尔勒。", "我开一辆二手飞度。", "我用的是一台荣耀手机。", "我在中通快递上班。"]
HELD_EN = ["I live in Kirkenes.", "I drive an old Honda Fit.", "My phone is a Pixel 7.", "I work at Maersk.",
           "I have a corgi named Biscuit."]  # fmt: skip
GROUPS = {
    "zh endings": (
        HELD_ZH, ["我不玩手游了。", "我现在不追剧了。", "我不熬夜了。", "我现在不点外卖了。", "我不去蹦迪了。"],
    ),
    "zh news with 现在": (HELD_ZH, ["我现在每天早上跑五公里。", "我现在晚上十点就睡。", "我现在周末都去爬山。"]),
    "zh news with a verb of change": (
        HELD_ZH, ["我现在改成早上跑步了。", "周末改去爬山了。", "晚饭改在家做了。", "我换了个发型。",
                  "最近换了家理发店。", "我转去夜校学会计了。"],
    ),
    "en news and endings": (
        HELD_EN, ["These days I run five kilometres every morning.", "I switched to decaf.", "Now I go to bed at ten.",
                  "Got a new air fryer, love it.", "I stopped watching TV at night.", "I don't play Fortnite anymore.",
                  "Nowadays I hike every weekend."],
    ),
}  # fmt: skip


def main() -> None:
    warnings.filterwarnings("ignore")
    memory = LifecycleMemory(path=tempfile.mkdtemp())
    count = 0
    for group, (held, news) in GROUPS.items():
        archived = []
        for fact, said in product(held, news):
            count += 1
            user = f"u{count}"
            memory.add_messages([("user", fact)], user_id=user, at="2026-02-01")
            memory.add_messages([("user", said)], user_id=user, at="2026-03-01")
            gone = [str(r.value) for r in memory.list(user) if r.status.value == "archived" and r.attribute]
            if gone:
                archived.append(f"{fact} | {said} -> archived {', '.join(gone)}")
        print(f"{group}: {len(archived)} of {len(held) * len(news)} pairs archive the held fact")
        for line in archived:
            print("   ", line)


if __name__ == "__main__":
    main()
