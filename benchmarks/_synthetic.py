"""Synthetic zh/en memory sentences and small measuring helpers for benchmarks (deterministic, no external data)."""

from __future__ import annotations

import os
import random
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import psutil

SUBJECTS_EN = ["The user", "My sister", "Our team lead", "My neighbour", "The client", "My father"]
VERBS_EN = ["likes", "uses", "prefers", "bought", "visited", "recommends", "is learning", "plays"]
OBJECTS_EN = [
    "the Vim editor",
    "VS Code",
    "green tea",
    "a Tesla Model 3",
    "Kyoto in spring",
    "the cello",
    "Rust for side projects",
    "oat milk lattes",
    "Fleetwood Mac",
    "trail running",
    "Duolingo Spanish",
    "a ThinkPad X1 Carbon",
    "Ethiopian food",
    "the Radiolab podcast",
    "rock climbing",
    "sourdough baking",
]
SUBJECTS_ZH = ["用户", "我姐姐", "我们组长", "我邻居", "客户", "我爸爸"]
VERBS_ZH = ["喜欢", "常用", "更爱", "买了", "去过", "推荐", "在学", "会弹"]
OBJECTS_ZH = [
    "Vim 编辑器",
    "铁观音",
    "大众帕萨特",
    "杭州西湖",
    "钢琴",
    "Python 数据分析",
    "黑咖啡",
    "三体",
    "攀岩",
    "评书",
    "潮汕牛肉火锅",
    "OPPO 手机",
    "摄影",
    "钓鱼",
    "日语",
    "羽毛球",
]
QUERIES = [
    "What editor does the user like?",
    "我适合用什么工具写 Python？",
    "What should I drink this morning?",
    "周末有什么运动推荐？",
    "Which car do I drive?",
    "我最近在读什么书？",
    "What music do I like?",
    "我姐姐喜欢什么？",
    "Where did I travel?",
    "我在学什么语言？",
]


def sentences(n: int, seed: int = 7) -> list[str]:
    """``n`` short statements, half Chinese and half English, with a serial number."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if i % 2:
            out.append(f"{rng.choice(SUBJECTS_ZH)}{rng.choice(VERBS_ZH)}{rng.choice(OBJECTS_ZH)}（第{i}条）")
        else:
            out.append(f"{rng.choice(SUBJECTS_EN)} {rng.choice(VERBS_EN)} {rng.choice(OBJECTS_EN)} (note {i})")
    return out


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile of ``values`` (q in 0..100)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


DIMS = 64
_BUCKETS = np.random.default_rng(7).standard_normal((1 << 14, DIMS)).astype(np.float32)


class HashEmbeddings:
    """Deterministic bag-of-hashed-tokens vectors (cheap; the same for every system)."""

    fingerprint = {"provider": "benchmarks._synthetic.HashEmbeddings", "model": "hash64", "dims": DIMS, "version": 1}

    def _one(self, text: str) -> list[float]:
        low = text.lower()
        tokens = low.split() + [ch for ch in low if ord(ch) > 0x2E80]
        rows = [zlib.crc32(t.encode()) & ((1 << 14) - 1) for t in tokens] or [0]
        v = _BUCKETS[rows].sum(axis=0) + 1e-3
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def rss_mb(pid: int | None = None) -> float:
    return psutil.Process(pid or os.getpid()).memory_info().rss / 2**20


def ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def stats(samples: list[float]) -> dict[str, float]:
    return {"p50": round(percentile(samples, 50), 2), "p95": round(percentile(samples, 95), 2)}


def client(workdir: Path, server: str | None) -> Any:
    import chromadb

    if server:
        host, port = server.rsplit(":", 1)
        return chromadb.HttpClient(host=host, port=int(port))
    return chromadb.PersistentClient(path=str(workdir))
