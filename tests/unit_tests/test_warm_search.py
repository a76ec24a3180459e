"""A warm search's shortcuts return what the full computation returns, float for float.

A plain search shows the ``k`` best of what may be thousands of kept records: it selects
them instead of sorting all (``top_order``), computes recency and the episode feedback
bonus only where they can still lift a record among them, and scores BM25 at a few
positions from their own documents' terms (``raw_scores_at``). With each shortcut
replaced by the full computation, every document and every score stays the same.
"""

from __future__ import annotations

import random
import uuid
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever, MemoryRecord
from langchain_lifecycle_memory.read import _episodes, _scoring, _snapshot, lexical
from langchain_lifecycle_memory.read import retrieval as R
from langchain_lifecycle_memory.read._rows import top_order
from langchain_lifecycle_memory.read.lexical import LexicalIndex
from tests.fake_embeddings import CharEmbeddings
from tests.unit_tests.test_scale import T0

WORDS = "apple banana cherry 猫 狗 旺财 咪咪 editor vim tea green running shoes cello rust likes Kyoto".split()


@pytest.mark.parametrize("kind", ["distinct", "ties", "nan"])
def test_the_k_best_by_selection_equal_a_stable_full_sort(kind: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(400):
        n, k = int(rng.integers(0, 2000)), int(rng.integers(0, 40))
        values = rng.standard_normal(n) if kind == "distinct" else rng.integers(0, 4, n).astype(float)
        if kind == "nan" and n:
            values[rng.integers(0, n, n // 3)] = np.nan
        assert top_order(values, k).tolist() == np.argsort(-values, kind="stable")[:k].tolist()


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8)))


@pytest.mark.parametrize("keep_term_scores", [True, False])
def test_bm25_at_some_positions_equals_the_full_scores_there(
    keep_term_scores: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through updates (a fresh segment, removed documents, a new order), read per document and scanned."""
    monkeypatch.setattr(lexical, "_KEEP_TERM_SCORES", 0 if keep_term_scores else 10**9)
    rng = random.Random(1)
    checked = 0
    for _ in range(120):
        index = LexicalIndex([_text(rng) for _ in range(rng.randint(1, 300))])
        for _ in range(rng.randint(0, 4)):
            index.raw_scores(_text(rng))  # term scores kept by the index an update replaces
            kept = np.array(sorted(rng.sample(range(index.size), rng.randint(0, index.size))), dtype=np.int64)
            added = [_text(rng) for _ in range(rng.randint(0, 30))]
            order = np.array(rng.sample(range(len(kept) + len(added)), len(kept) + len(added)))
            index = index.updated(kept, added, order if rng.random() < 0.5 else None)
        for _ in range(4):
            query = _text(rng)
            full, ideal = index.raw_scores(query)
            positions = np.array(rng.sample(range(index.size), rng.randint(0, index.size)), dtype=np.int64)
            for cost in (0, 10**9):  # always per document, always a scan
                monkeypatch.setattr(lexical, "_LOOKUP_COST", cost)
                raw, at_ideal = index.raw_scores_at(query, positions)
                assert at_ideal == ideal
                assert raw.tolist() == full[positions].tolist()
                checked += 1
    assert checked > 500


def _namespace(store: ChromaMemoryStore, ns: tuple[str, ...], rng: random.Random) -> None:
    """Episodes and facts sharing common words, of many ages and confidences, about several people."""
    records = []
    for i in range(260):
        entity = rng.choice(["user"] * 4 + ["Caroline", "sister_maya"])
        fact = rng.random() < 0.25
        records.append(
            MemoryRecord(
                namespace=ns,
                content=f"{_text(rng)} {i}",
                kind="fact" if fact else "episode",
                entity=entity,
                attribute=rng.choice(["editor", "pet", "drink"]) if fact else None,
                value=rng.choice(["vim", "旺财", "green tea"]) if fact else None,
                cardinality="set",
                confidence=round(rng.random(), 1),
                created_at=T0 + timedelta(days=rng.randint(0, 400)),
                valid_from=T0 + timedelta(days=rng.randint(0, 400)),
                updated_at=T0 + timedelta(days=rng.choice([0, 500])),
            )
        )
    store.put_records(records)


def _count_apart(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows each restricted search keeps apart (``Snapshot.restricted``'s background), appended per search."""
    apart: list[int] = []
    restricted = _snapshot.Snapshot.restricted

    def spy(self: Any, rows: Any, scores: Any, background: Any = None) -> Any:
        apart.append(0 if background is None else len(background))
        return restricted(self, rows, scores, background)

    monkeypatch.setattr(_snapshot.Snapshot, "restricted", spy)
    return apart


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"k": 3},
        {"k": 25, "min_score": 0.0},
        {"recency_weight": 0.5},
        {"episode_feedback": False},
        {"fusion": "rrf", "k": 4},
        {"other_entity_factor": 1.0, "k": 1},
    ],
)
def test_the_shortcuts_of_a_plain_search_change_no_result(
    options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import chromadb

    R._SNAPSHOTS.clear()
    store = ChromaMemoryStore(
        client=chromadb.EphemeralClient(), embeddings=CharEmbeddings(), collection_prefix=f"w{uuid.uuid4().hex[:8]}"
    )
    ns = ("memories", "warm")
    _namespace(store, ns, random.Random(7))
    call = {k: v for k, v in options.items() if k in ("k", "min_score")}
    retriever = LifecycleRetriever(
        store=store, namespace=ns, episode_embeddings=None, **{k: v for k, v in options.items() if k not in call}
    )
    queries = ["What editor does Caroline like?", "green tea running", "猫 旺财", "vim", "likes", "nothing at all"]

    def documents() -> list[list[tuple[str, dict[str, Any]]]]:
        return [[(d.page_content, d.metadata) for d in retriever.invoke(q, **call)] for q in queries]

    monkeypatch.setattr(lexical, "_LOOKUP_COST", 0)  # BM25 at the feedback's positions from their documents
    fast = documents()
    full_sort = lambda values, k: np.argsort(-values, kind="stable")[:k]  # noqa: E731
    monkeypatch.setattr(_scoring, "_may_rise", lambda lower, lift, k: None)  # recency and feedback for every record
    monkeypatch.setattr(_scoring, "top_order", full_sort)
    monkeypatch.setattr(_episodes, "top_order", full_sort)
    monkeypatch.setattr(lexical, "_LOOKUP_COST", 10**9)  # BM25 by scanning the postings
    assert documents() == fast
    assert sum(map(len, fast)) >= 5


@pytest.mark.parametrize("options", [{}, {"k": 2}, {"min_score": 0.5}, {"other_entity_factor": 1.0, "k": 5}])
def test_weak_matches_kept_apart_change_no_result(options: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A common word matches many records too weakly to reach min_score: they only count in the lexical RRF."""
    import chromadb

    from langchain_lifecycle_memory.read import _live

    R._SNAPSHOTS.clear()
    store = ChromaMemoryStore(
        client=chromadb.EphemeralClient(), embeddings=CharEmbeddings(), collection_prefix=f"w{uuid.uuid4().hex[:8]}"
    )
    ns = ("memories", "weak")
    rng = random.Random(5)
    filler = [f"zz{i} qq{i % 7} ww{i % 11}" for i in range(500)]  # matches no query
    _namespace(store, ns, rng)  # 260 records sharing the queries' words
    store.put_records([MemoryRecord(namespace=ns, content=t, kind="episode") for t in filler])
    call = {k: v for k, v in options.items() if k in ("k", "min_score")}
    retriever = LifecycleRetriever(
        store=store, namespace=ns, episode_embeddings=None, **{k: v for k, v in options.items() if k not in call}
    )
    queries = ["Does Caroline like green tea or running shoes?", "vim editor likes", "猫 狗 banana", "cello Kyoto rust"]
    backgrounds = _count_apart(monkeypatch)

    def documents() -> list[list[tuple[str, dict[str, Any]]]]:
        return [[(d.page_content, d.metadata) for d in retriever.invoke(q, **call)] for q in queries]

    apart = documents()
    assert sum(backgrounds) > 0 and sum(map(len, apart)) >= 4
    monkeypatch.setattr(_live, "MAX_SHOWN_BACKGROUND", 0)  # every scoring row scored in full
    assert documents() == apart
    monkeypatch.setattr(R, "_CANDIDATES_ONLY", False)  # every record of the namespace scored
    assert documents() == apart


@pytest.mark.parametrize("pairwise", [0, 10**9])
def test_records_ranked_ahead_equal_a_stable_sort(pairwise: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The RRF rank of a shown record: records scoring higher, or the same at an earlier position."""
    monkeypatch.setattr(_scoring, "_PAIRWISE", pairwise)
    rng = np.random.default_rng(4)
    for _ in range(300):
        n = int(rng.integers(1, 400))
        values = rng.integers(1, 5, n) / 4 if rng.random() < 0.5 else rng.random(n)
        at = np.sort(rng.choice(10 * n, n, replace=False))
        targets = rng.choice(n, int(rng.integers(1, min(n, 10) + 1)), replace=False)
        rank = np.empty(n, dtype=np.int64)
        rank[np.argsort(-values, kind="stable")] = np.arange(n)  # ties in position order
        got = _scoring._ahead(values, at, values[targets], at[targets])
        assert got.tolist() == rank[targets].tolist()


def test_the_raw_score_cut_keeps_every_row_that_may_reach_min_score() -> None:
    """``_may_be_kept`` checks exactly only rows whose raw BM25 score can reach ``min_score``: the same answer."""
    from types import SimpleNamespace

    from langchain_lifecycle_memory.read import _live
    from langchain_lifecycle_memory.read.fusion import ChannelWeights, ScoreCalibration

    rng = np.random.default_rng(8)
    checked = 0
    for _ in range(400):
        n, ideal = int(rng.integers(1, 300)), float(rng.choice([0.0, rng.random() * 5]))
        raw = np.where(rng.random(n) < 0.3, 0.0, rng.random(n) * ideal * 1.5)
        raw[rng.integers(0, n, n // 5)] = ideal * rng.choice([0.1, 0.25, 0.4, 1.0])  # exact boundaries
        floor = float(rng.choice([0.0, 0.05]))
        cfg = SimpleNamespace(
            calibration=ScoreCalibration(lexical_floor=floor, lexical_ceiling=float(rng.choice([0.4, 1.0]))),
            weights=ChannelWeights(lexical=float(rng.choice([0.0, 0.3, 0.75, 1.0]))),
        )
        rows = np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False))
        min_score = float(rng.choice([0.1, 0.3, 0.3 * 0.75, 0.5, 0.9]))
        cal, weight = cfg.calibration, cfg.weights.lexical
        if weight:  # raw scores right at the coverage that reaches min_score, and a float either side
            edge = (cal.lexical_floor + min_score / weight * (cal.lexical_ceiling - cal.lexical_floor)) * ideal
            third = len(rows) // 3
            raw[rows[:third]] = np.nextafter(edge, rng.choice([-np.inf, np.inf], third))
            raw[rows[third : third + 2]] = edge
        bm25 = {"q": (raw, ideal)}
        got = _live._may_be_kept(cfg, bm25, ["q"], rows, min_score)
        assert got.tolist() == _live._bound(cfg, bm25, ["q"], rows, min_score).tolist()
        checked += int(got.sum())
    assert checked > 100
