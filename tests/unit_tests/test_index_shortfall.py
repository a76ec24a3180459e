"""A dense query the index answers short: the rows it could not reach are found by an exact scan.

Chroma's HNSW graph can hold a row that no search reaches (a node whose incoming links
were all pruned; near-duplicate vectors make it likelier, chroma-core/chroma#455). Its
query then answers fewer neighbours than asked although the namespace holds more, and a
just-written record can be missing from every search of the process that wrote it. A big
namespace's search asks for at most as many neighbours as its snapshot holds records, so
a short answer is a sure sign: the retriever then asks the store to complete it from the
namespace's vectors.
"""

from __future__ import annotations

import asyncio
import random
import uuid
import warnings
from typing import Any

import numpy as np
import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever, MemoryRecord
from langchain_lifecycle_memory.read import retrieval as R
from langchain_lifecycle_memory.store import _namespace_reads
from tests.fake_embeddings import CharEmbeddings
from tests.unit_tests.test_warm_search import _namespace

QUERIES = ["What editor does Caroline like?", "green tea running", "猫 旺财", "vim", "likes"]


def _store(layout: str = "bucketed") -> ChromaMemoryStore:
    import chromadb

    R._SNAPSHOTS.clear()
    return ChromaMemoryStore(
        client=chromadb.EphemeralClient(),
        embeddings=CharEmbeddings(),
        collection_prefix=f"s{uuid.uuid4().hex[:8]}",
        layout=layout,
    )


def _seen(retriever: LifecycleRetriever, queries: list[str] = QUERIES) -> list[list[tuple[str, Any]]]:
    return [[(d.page_content, d.metadata) for d in retriever.invoke(q)] for q in queries]


async def _aseen(retriever: LifecycleRetriever, queries: list[str] = QUERIES) -> list[list[tuple[str, Any]]]:
    return [[(d.page_content, d.metadata) for d in await retriever.ainvoke(q)] for q in queries]


def _close(a: Any, b: Any) -> bool:
    """Equal, floats within 1e-5: the scan's cosine (float64) and Chroma's (float32) differ by ~1e-7."""
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-5
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _losing(store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch, lost: set[str]) -> list[int]:
    """The store's index cannot reach the rows ``lost``: its nearest-ids answers leave them out."""
    asked: list[int] = []
    nearest = type(store).nearest_ids

    def short(self: Any, namespace: Any, embedding: Any, n: int) -> Any:
        asked.append(n)
        return [(i, s) for i, s in nearest(self, namespace, embedding, n) if i not in lost]

    monkeypatch.setattr(type(store), "nearest_ids", short)
    return asked


@pytest.mark.parametrize("layout", ["bucketed", "collection"])
def test_rows_the_index_cannot_reach_are_found_as_if_it_could(layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(layout)
    ns = ("memories", "shortfall")
    _namespace(store, ns, random.Random(3))
    retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None)
    expected = _seen(retriever)
    shown = {d.metadata["id"] for q in QUERIES for d in retriever.invoke(q)}
    assert len(shown) >= 5

    lost = set(sorted(shown)[::2])  # every other record a search showed: the index no longer reaches them
    asked = _losing(store, monkeypatch, lost)
    R._SNAPSHOTS.clear()
    assert _close(_seen(retriever), expected)
    assert asked  # the searches did ask the (short-answering) index
    assert _close(asyncio.run(_aseen(retriever)), expected)


def test_a_full_answer_costs_no_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store()
    ns = ("memories", "full")
    _namespace(store, ns, random.Random(4))
    scans: list[Any] = []
    complete = type(store).complete_nearest
    monkeypatch.setattr(type(store), "complete_nearest", lambda self, *a: scans.append(a) or complete(self, *a))
    retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None)
    assert sum(map(len, _seen(retriever))) >= 5
    assert scans == []  # the index answered in full: nothing read besides it


@pytest.mark.xfail(
    reason="Chroma's own answer of 50 of 261 rows often lacks the new record (found by `python "
    "benchmarks/index_shortfall.py --rows 260`): a full answer, so nothing tells the search a row is missing",
    strict=False,
)
def test_a_just_written_record_the_index_cannot_reach_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store()
    ns = ("memories", "fresh")
    _namespace(store, ns, random.Random(5))
    retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None)
    retriever.invoke("green tea")  # the snapshot is warm; then a write
    tea = MemoryRecord(namespace=ns, content="用户改喝铁观音了", entity="user", attribute="tea", value="铁观音")
    store.put_record(tea)
    _losing(store, monkeypatch, {tea.id})
    assert tea.content in [d.page_content for d in retriever.invoke("铁观音")]
    assert tea.content in [d.page_content for d in asyncio.run(retriever.ainvoke("铁观音"))]


def test_a_just_written_record_is_found_when_the_search_asks_for_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store()
    ns = ("memories", "fresh-all")
    _namespace(store, ns, random.Random(5))
    retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None, dense_k=400)
    retriever.invoke("green tea")
    tea = MemoryRecord(namespace=ns, content="用户改喝铁观音了", entity="user", attribute="tea", value="铁观音")
    store.put_record(tea)
    asked = _losing(store, monkeypatch, {tea.id})
    assert tea.content in [d.page_content for d in retriever.invoke("铁观音")]
    assert tea.content in [d.page_content for d in asyncio.run(retriever.ainvoke("铁观音"))]
    assert asked == [261, 261]  # every row asked for, one left out of the answer: completed by the scan


def test_the_completed_answer_keeps_the_index_similarities_and_another_tenant_is_never_read() -> None:
    store = _store()
    mine, theirs = ("memories", "mine"), ("memories", "theirs")
    emb = CharEmbeddings()
    texts = [f"note {i} about tea and 编辑器 {i % 7}" for i in range(40)]
    store.put_records([MemoryRecord(namespace=mine, content=t) for t in texts])
    secret = MemoryRecord(namespace=theirs, content="note about tea and 编辑器 secret")
    store.put_records([secret])
    vector = emb.embed_query("tea 编辑器 3")

    full = store.nearest_ids(mine, vector, 40)
    assert len(full) == 40
    found = full[:10] + full[12:30]  # rows 10, 11 and 30+ unreachable: an answer of 28 for 40 asked
    done = store.complete_nearest(mine, vector, 40, found)
    assert [i for i, _ in done] == [i for i, _ in full]
    kept = dict(found)
    for i, s in done:
        if i in kept:
            assert s == kept[i]  # the index's own similarity, untouched
    exact = dict(full)
    for i, s in done:
        assert s == pytest.approx(exact[i], abs=1e-5)
    assert secret.id not in {i for i, _ in store.complete_nearest(mine, vector, 100, [])}
    assert len(store.complete_nearest(mine, vector, 100, [])) == 40  # mine only, however many asked
    assert store.complete_nearest(("memories", "nobody"), vector, 5, []) == []


def test_a_namespace_too_big_to_scan_keeps_the_short_answer_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store()
    ns = ("memories", "big")
    store.put_records([MemoryRecord(namespace=ns, content=f"tea note {i}") for i in range(30)])
    monkeypatch.setattr(_namespace_reads, "EXACT_SCAN_ROWS", 20)
    vector = CharEmbeddings().embed_query("tea")
    found = store.nearest_ids(ns, vector, 10)[:7]
    with pytest.warns(RuntimeWarning, match="could not reach"):
        assert store.complete_nearest(ns, vector, 10, found) == found
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(store.complete_nearest(ns, vector, 10, store.nearest_ids(ns, vector, 10))) == 10  # not short


def test_vectors_are_compared_by_cosine_whatever_their_norm() -> None:
    store = _store()
    ns = ("memories", "norms")
    records = [MemoryRecord(namespace=ns, content=f"row {i}") for i in range(12)]
    store.put_records(records)
    vector = list(np.asarray(CharEmbeddings().embed_query("row 3")) * 7.5)  # not unit length
    full = store.nearest_ids(ns, vector, 12)
    done = store.complete_nearest(ns, vector, 12, [])
    assert [i for i, _ in done] == [i for i, _ in full]
    assert [s for _, s in done] == pytest.approx([s for _, s in full], abs=1e-5)


def test_explain_of_a_small_namespace_scores_every_record_as_the_search_does(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store()
    ns = ("memories", "small")
    records = [MemoryRecord(namespace=ns, content=f"{w} note {i}") for i, w in enumerate(["tea", "vim", "猫"] * 20)]
    tea = MemoryRecord(namespace=ns, content="用户改喝铁观音了", entity="user", attribute="tea", value="铁观音")
    store.put_records([*records, tea])
    search_records = type(store).search_records

    def unreachable(self: Any, *args: Any, **kwargs: Any) -> Any:  # the index's answers lack the new record
        return [(r, s) for r, s in search_records(self, *args, **kwargs) if r.id != tea.id]

    monkeypatch.setattr(type(store), "search_records", unreachable)
    retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None)
    for query in ["铁观音", "tea note", "猫"]:
        shown = [d.page_content for d in retriever.invoke(query)]
        explained = retriever.explain(query)
        assert [c.record.content for c in explained.kept()] == shown
        by_id = {c.record.id: c for c in explained.candidates}
        assert "cosine" in by_id[tea.id].raw  # scored from the snapshot's vectors, like the search
    assert tea.content in [d.page_content for d in retriever.invoke("铁观音")]
