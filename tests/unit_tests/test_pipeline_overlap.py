"""The dense query runs alongside the rest of a search (``read._driver``): same results, same errors.

A search of a big namespace starts the store's id-only dense query, scores BM25, routes
the query and scores cues and episodes while it runs, then collects it. Sync searches run
it on a helper thread (in the caller when every helper is busy), async ones as a task.
"""

from __future__ import annotations

import asyncio
import gc
import os
import random
import sys
import threading
import uuid
import warnings
from datetime import timedelta
from typing import Any

import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever
from langchain_lifecycle_memory.read import _driver
from langchain_lifecycle_memory.read import retrieval as R
from tests.fake_embeddings import CharEmbeddings
from tests.unit_tests.test_scale import T0
from tests.unit_tests.test_warm_search import _count_apart, _namespace

QUERIES = ["What editor does Caroline like?", "green tea running", "猫 旺财", "vim", "likes", "nothing at all"]


@pytest.fixture
def big() -> tuple[ChromaMemoryStore, tuple[str, ...]]:
    """A namespace above ``SMALL_NAMESPACE``: its search asks the store's ``nearest_ids``."""
    import chromadb

    R._SNAPSHOTS.clear()
    store = ChromaMemoryStore(
        client=chromadb.EphemeralClient(), embeddings=CharEmbeddings(), collection_prefix=f"o{uuid.uuid4().hex[:8]}"
    )
    ns = ("memories", "overlap")
    _namespace(store, ns, random.Random(11))
    return store, ns


def _seen(retriever: LifecycleRetriever) -> list[list[tuple[str, dict[str, Any]]]]:
    return [[(d.page_content, d.metadata) for d in retriever.invoke(q)] for q in QUERIES]


def _spy_threads(store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    names: list[str] = []
    nearest = type(store).nearest_ids

    def spy(self: Any, *args: Any) -> Any:
        names.append(threading.current_thread().name)
        return nearest(self, *args)

    monkeypatch.setattr(type(store), "nearest_ids", spy)
    return names


def test_overlapped_and_serial_searches_return_the_same_documents(big: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    store, ns = big
    retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None)
    threads = _spy_threads(store, monkeypatch)
    overlapped = _seen(retriever)
    assert threads and all(t.startswith("lifecycle-memory-overlap") for t in threads)
    monkeypatch.setenv("LIFECYCLE_MEMORY_OVERLAP", "0")
    threads.clear()
    assert _seen(retriever) == overlapped
    assert threads == [threading.current_thread().name] * len(QUERIES)  # in the caller, at the join
    assert sum(map(len, overlapped)) >= 5


def test_async_searches_overlap_and_match_sync(big: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    store, ns = big
    retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None)
    expected = _seen(retriever)

    async def run() -> list[list[tuple[str, dict[str, Any]]]]:
        return [[(d.page_content, d.metadata) for d in await retriever.ainvoke(q)] for q in QUERIES]

    assert asyncio.run(run()) == expected


def test_every_helper_busy_runs_the_query_in_the_caller(big: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    store, ns = big
    retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None)
    expected = _seen(retriever)
    threads = _spy_threads(store, monkeypatch)
    free = _driver.HELPERS._slots()
    assert free is not None
    taken = 0
    while free.acquire(blocking=False):  # every helper slot held, as by other threads' searches
        taken += 1
    try:
        assert _seen(retriever) == expected
    finally:
        for _ in range(taken):
            free.release()
    assert taken == _driver.WORKERS
    assert threads == [threading.current_thread().name] * len(QUERIES)


class _Down(Exception):
    pass


def _failing(store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    def down(self: Any, *args: Any) -> Any:
        raise _Down("chroma is down")

    async def adown(self: Any, *args: Any) -> Any:
        await asyncio.sleep(0)
        raise _Down("chroma is down")

    monkeypatch.setattr(type(store), "nearest_ids", down)
    monkeypatch.setattr(type(store), "anearest_ids", adown)


@pytest.mark.parametrize("overlap", ["1", "0"])
def test_a_failing_dense_query_raises_its_own_error(big: Any, overlap: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store, ns = big
    retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None)
    retriever.invoke("vim")  # the snapshot read before the store goes down
    monkeypatch.setenv("LIFECYCLE_MEMORY_OVERLAP", overlap)
    _failing(store, monkeypatch)
    with pytest.raises(_Down, match="chroma is down"):
        retriever.invoke("vim")
    with pytest.raises(_Down, match="chroma is down"):
        asyncio.run(retriever.ainvoke("vim"))
    free = _driver.HELPERS._slots()
    if free is not None:  # every helper slot came back
        got = [free.acquire(blocking=False) for _ in range(_driver.WORKERS)]
        for ok in got:
            if ok:
                free.release()
        assert all(got)


def test_an_error_after_the_start_leaves_no_task_behind(big: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline fails between starting the dense query and collecting it: no stray task, no warning."""
    store, ns = big
    retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None)
    retriever.invoke("vim")
    _failing(store, monkeypatch)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("router broke")

    monkeypatch.setattr(R.AttributeRouter, "missing", broken)
    messages: list[str] = []

    async def run() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda loop, context: messages.append(str(context.get("message"))))
        with pytest.raises(RuntimeError, match="router broke"):
            await retriever.ainvoke("vim")
        await asyncio.sleep(0.05)
        gc.collect()
        await asyncio.sleep(0)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", ResourceWarning)  # other tests' leftovers the collection above finalizes
        asyncio.run(run())
    assert messages == []
    with pytest.raises(RuntimeError, match="router broke"):
        retriever.invoke("vim")


@pytest.mark.skipif(sys.platform == "win32" or not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_its_own_helpers() -> None:
    """The parent's helper threads do not exist in a forked child: it starts its own instead of waiting forever."""
    assert _driver.HELPERS.start(threading.get_ident, (), {}).result() != threading.get_ident()
    pid = os.fork()
    if pid == 0:  # the child: a call started here must finish on a thread of its own
        code = 1
        try:
            handle = _driver.HELPERS.start(threading.get_ident, (), {})
            code = 0 if handle.result(timeout=20) != threading.get_ident() else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _reference_rows(cfg: Any, snap: Any, queries: list[str], eligible: Any, extra: list[int], min_score: float, k: int):
    """The rows and background ``restrict`` chose when every hit, dense ones included, was known up front."""
    import numpy as np

    from langchain_lifecycle_memory.read import _live

    rows, bm25, lexical_only = snap.scoring_rows(queries, eligible, extra)
    if len(rows) >= len(snap) // 2:
        return None
    background = np.zeros(0, dtype=np.int64)
    tiers = cfg.fusion == "calibrated" and cfg.reranker is None and k <= _live.MAX_SHOWN_BACKGROUND
    if tiers and lexical_only.any():
        weak = ~_live._may_be_kept(cfg, bm25, queries, rows[lexical_only], min_score)
        if weak.any():
            out = np.flatnonzero(lexical_only)[weak]
            keep = np.ones(len(rows), dtype=bool)
            keep[out] = False
            rows, background = rows[keep], rows[out]
    return rows.tolist(), background.tolist()


@pytest.mark.parametrize("min_score", [0.05, 0.3, 0.6])
def test_dense_hits_added_after_the_rest_choose_the_rows_chosen_with_them(
    big: Any, min_score: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``prepare`` (no dense hit yet) then ``restrict`` = every hit known up front, for random hits and masks."""
    import numpy as np

    from langchain_lifecycle_memory.read import _live

    monkeypatch.setattr(_live, "MAX_SHOWN_BACKGROUND", 64)
    store, ns = big
    retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None)
    retriever.invoke("vim")
    snap = next(s for (_, key), s in R._SNAPSHOTS.items() if key == ns)
    rng = np.random.default_rng(5)
    compared = 0
    for trial in range(300):
        n = len(snap)
        eligible = rng.random(n) < (0.5 if trial % 3 == 0 else 0.95)
        dense_at = rng.choice(n, int(rng.integers(0, 60)), replace=False)
        cosines = {int(p): float(rng.random()) for p in dense_at if eligible[p]}
        cues = {int(p): 0.5 for p in rng.choice(n, int(rng.integers(0, 4)), replace=False)}
        queries = [QUERIES[trial % len(QUERIES)], "likes"][: 1 + trial % 2]
        k = int(rng.integers(1, 12))
        want = _reference_rows(retriever, snap, queries, eligible, [*cosines, *cues], min_score, k)
        got = _live.restrict(retriever, snap, queries, eligible, cosines, [], cues, None, min_score=min_score, k=k)
        if want is None:
            assert got is None
            continue
        assert got is not None
        scored = got[0]
        background = scored.__dict__.get("background")
        assert scored.__dict__["_rows"].tolist() == want[0]
        assert ([] if background is None else background[1].tolist()) == want[1]
        compared += 1
    assert compared > 100


def test_query_evidence_taken_before_the_rows_are_chosen_changes_no_result(
    big: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Routes, mentions and the query's people, computed over the namespace while the dense query runs."""
    store, ns = big
    retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None, k=6)
    queries = [*QUERIES, "What does sister_maya drink?", "Caroline's pet", "editor"]
    early = [[(d.page_content, d.metadata) for d in retriever.invoke(q)] for q in queries]
    monkeypatch.setattr(R, "query_evidence", lambda *args: None)  # computed by score_snapshot, on the rows scored
    assert [[(d.page_content, d.metadata) for d in retriever.invoke(q)] for q in queries] == early
    assert sum(map(len, early)) >= 8


@pytest.mark.parametrize(
    "options",
    [{}, {"k": 1}, {"k": 12}, {"episode_feedback": False}, {"recency_weight": 0.3}, {"min_score": 0.05}],
)
def test_matches_that_cannot_be_shown_are_kept_apart_and_change_no_result(
    options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thousands of records match a common word well enough to be kept; only a few can be shown.

    The others are kept apart like weak matches (they count in the lexical RRF only), with
    every document and score what scoring all of them gives.
    """
    import chromadb

    from langchain_lifecycle_memory import MemoryRecord
    from langchain_lifecycle_memory.read import _live

    R._SNAPSHOTS.clear()
    store = ChromaMemoryStore(
        client=chromadb.EphemeralClient(), embeddings=CharEmbeddings(), collection_prefix=f"c{uuid.uuid4().hex[:8]}"
    )
    ns = ("memories", "common")
    rng = random.Random(13)
    words = "tea kettle green oolong brew cup morning garden rain".split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 9))) + f" n{i}" for i in range(600)]
    texts += [f"zz{i} qq{i % 7} ww{i % 11}" for i in range(1300)]  # matches no query: the matches stay a minority
    store.put_records(
        [
            MemoryRecord(namespace=ns, content=t, kind="episode" if i % 4 else "note", confidence=rng.random())
            for i, t in enumerate(texts)
        ]
    )
    _namespace(store, ns, rng)  # and 260 records of facts and people
    call = {key: v for key, v in options.items() if key in ("k", "min_score")}
    retriever = LifecycleRetriever(
        store=store, namespace=ns, episode_embeddings=None, **{key: v for key, v in options.items() if key not in call}
    )
    queries = ["green tea", "oolong brew morning", "Does Caroline like green tea?", "rain garden kettle cup"]
    apart = _count_apart(monkeypatch)

    def documents() -> list[list[tuple[str, dict[str, Any]]]]:
        return [[(d.page_content, d.metadata) for d in retriever.invoke(q, **call)] for q in queries]

    fast = documents()
    assert max(apart) > 300 and sum(map(len, fast)) >= len(queries)
    monkeypatch.setattr(_live, "MAX_SHOWN_BACKGROUND", 0)  # every matching record scored
    assert documents() == fast
    monkeypatch.setattr(R, "_CANDIDATES_ONLY", False)  # every record of the namespace scored
    assert documents() == fast


def _tea_namespace(rng: random.Random) -> tuple[ChromaMemoryStore, tuple[str, ...]]:
    """600 notes and episodes of a few common words, 1300 unrelated ones, and 260 facts about several people."""
    import chromadb

    from langchain_lifecycle_memory import MemoryRecord

    R._SNAPSHOTS.clear()
    store = ChromaMemoryStore(
        client=chromadb.EphemeralClient(), embeddings=CharEmbeddings(), collection_prefix=f"t{uuid.uuid4().hex[:8]}"
    )
    ns = ("memories", "tea")
    words = "tea kettle green oolong brew cup morning garden rain".split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 9))) + f" n{i}" for i in range(600)]
    texts += [f"zz{i} qq{i % 7} ww{i % 11}" for i in range(1300)]
    kinds = ["note", "episode", "episode", "episode"]
    store.put_records(
        [
            MemoryRecord(
                namespace=ns,
                content=t,
                kind=kinds[i % 4],
                confidence=rng.random(),
                entity=rng.choice(["user", "Caroline"]),
                created_at=T0 + timedelta(days=(day := rng.randint(0, 700))),
                valid_from=T0 + timedelta(days=day),
                updated_at=T0 + timedelta(days=day),
            )
            for i, t in enumerate(texts)
        ]
    )
    _namespace(store, ns, rng)
    return store, ns


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"k": 1},
        {"k": 20},
        {"episode_feedback": False},
        {"recency_weight": 0.2},
        {"recency_weight": 0.6, "k": 3},
        {"confidence_weight": 0.3},
        {"min_score": 0.6},
        {"other_entity_factor": 1.0},
    ],
)
def test_kept_matches_under_the_kth_best_key_are_kept_apart_and_change_no_result(
    options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Personal queries (no damping): hundreds of matches are sure to be kept, a few can be shown."""
    import numpy as np

    from langchain_lifecycle_memory.read import _live

    store, ns = _tea_namespace(random.Random(17))
    call = {key: v for key, v in options.items() if key in ("k", "min_score")}
    retriever = LifecycleRetriever(
        store=store, namespace=ns, episode_embeddings=None, **{key: v for key, v in options.items() if key not in call}
    )
    queries = ["Do I like green tea?", "my morning oolong brew", "What does Caroline brew?", "my rain garden kettle"]
    apart = _count_apart(monkeypatch)

    now = T0 + timedelta(days=730)  # one instant for every search

    def documents() -> list[list[tuple[str, dict[str, Any]]]]:
        return [[(d.page_content, d.metadata) for d in retriever.invoke(q, now=now, **call)] for q in queries]

    fast = documents()
    assert max(apart) > 100 and sum(map(len, fast)) >= len(queries)
    nothing = lambda cfg, snapshot, bm25, queries, rows, *rest: np.zeros(len(rows), dtype=bool)  # noqa: E731
    monkeypatch.setattr(_live, "_cannot_show", nothing)  # only the weak matches kept apart
    apart.clear()
    assert documents() == fast
    monkeypatch.setattr(_live, "MAX_SHOWN_BACKGROUND", 0)  # every matching record scored
    assert documents() == fast
    monkeypatch.setattr(R, "_CANDIDATES_ONLY", False)  # every record of the namespace scored
    assert documents() == fast


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_dense_query_is_under_way_while_bm25_is_scored(
    big: Any, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows BM25 brings are chosen while the store answers the dense query, not after."""
    store, ns = big
    retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None)
    retriever.invoke("vim")
    asked = threading.Event()
    overlapped: list[bool] = []
    nearest, prepare = type(store).nearest_ids, R.prepare

    def spy_nearest(self: Any, *args: Any) -> Any:
        asked.set()
        return nearest(self, *args)

    def spy_prepare(*args: Any, **kwargs: Any) -> Any:
        overlapped.append(asked.wait(timeout=3))  # the query began before this work did
        return prepare(*args, **kwargs)

    monkeypatch.setattr(type(store), "nearest_ids", spy_nearest)
    monkeypatch.setattr(R, "prepare", spy_prepare)
    for query in ("green tea running", "likes"):
        asked.clear()
        if mode == "sync":
            retriever.invoke(query)
        else:
            asyncio.run(retriever.ainvoke(query))
    assert overlapped == [True, True]
