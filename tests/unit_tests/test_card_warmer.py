"""Routing cards of written attributes are embedded after the write, off the search's path.

``read._card_warmer``: the store tells the read side of each write (``store.write_hooks``)
and a background thread embeds the new attributes' topic cards, so that the first search
over a namespace with many new attributes does not embed them; its routes stay the ones
the search would have computed itself.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import chromadb
import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever, MemoryRecord
from langchain_lifecycle_memory.read import retrieval as R
from langchain_lifecycle_memory.read.routing import CARD_WARMER
from langchain_lifecycle_memory.store.write_hooks import add_write_listener, remove_write_listener
from tests.fake_embeddings import CharEmbeddings

NS = ("memories", "warmer")
T0 = datetime(2024, 5, 1, 9, tzinfo=timezone.utc)
QUERIES = ["Tell me about hobby topic 17", "what do I collect", "thing 250 again", "my favourite drink"]
N = 300  # above CardWarmer.min_batch: one write brings this many new attributes


class _Recording(CharEmbeddings):
    """Remembers every text it embedded; card phrases (``hobby topic N``) can be held at a gate."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.gate = gate
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.gate is not None and any(t.startswith("hobby topic") for t in texts):
            self.gate.wait(10)
        with self._lock:
            self.texts.extend(texts)
        return super().embed_documents(texts)

    def cards(self) -> list[str]:
        with self._lock:
            return [t for t in self.texts if t.startswith("hobby topic")]


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIFECYCLE_MEMORY_CACHE_DIR", str(tmp_path / "cache"))
    R._SNAPSHOTS.clear()


def _store(emb: CharEmbeddings) -> ChromaMemoryStore:
    client = chromadb.EphemeralClient()
    return ChromaMemoryStore(client=client, embeddings=emb, collection_prefix=f"cw{uuid.uuid4().hex[:8]}")


def _write(store: ChromaMemoryStore) -> None:
    store.put_records(
        [
            MemoryRecord(
                id=str(uuid.UUID(int=j + 1)),  # the same ids in every store: ties break alike
                namespace=NS,
                content=f"The user collects item {j}" if j % 3 else f"The user drinks blend {j}",
                kind="fact",
                entity="user",
                attribute=f"hobby_topic_{j}",
                value=f"thing {j}",
                created_at=T0,
                updated_at=T0,
                valid_from=T0,
            )
            for j in range(N)
        ]
    )


def _answers(store: ChromaMemoryStore) -> list[list[tuple[str, str, dict[str, float], float]]]:
    retriever = LifecycleRetriever(store=store, namespace=NS, episode_embeddings=None, now=T0 + timedelta(days=3))
    out = []
    for q in QUERIES:
        explanation = retriever.explain(q)
        out.append(sorted((c.record.content, c.decision, c.raw, c.fused) for c in explanation.candidates))
        out.append([(d.page_content, "kept", {}, 0.0) for d in retriever.invoke(q)])
    return out


def test_the_first_search_after_many_new_attributes_embeds_no_card() -> None:
    emb = _Recording()
    store = _store(emb)
    _write(store)
    assert CARD_WARMER.wait(emb, timeout=30)
    assert len(emb.cards()) == N  # embedded in the background, once each
    before = len(emb.texts)
    LifecycleRetriever(store=store, namespace=NS, episode_embeddings=None).invoke(QUERIES[0])
    assert [t for t in emb.texts[before:] if t.startswith("hobby topic")] == []


def test_warmed_cards_route_exactly_like_cards_the_search_embeds(monkeypatch: pytest.MonkeyPatch) -> None:
    warmed = _store(_Recording())
    _write(warmed)
    CARD_WARMER.wait(timeout=30)
    got = _answers(warmed)
    monkeypatch.setattr(CARD_WARMER, "enabled", False)
    emb = _Recording()
    plain = _store(emb)
    _write(plain)
    assert emb.cards() == []  # off: nothing embedded before the search
    expected = _answers(plain)
    assert len(emb.cards()) == N
    assert got == expected
    assert any(raw.get("route", 0) > 0 for answer in got for _, _, raw, _ in answer)  # routes were scored


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_search_while_cards_are_being_embedded_waits_for_them(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    gate, entered = threading.Event(), threading.Event()
    emb = _Recording(gate)
    store = _store(emb)
    _write(store)  # the warmer now holds at the gate
    assert CARD_WARMER.busy(emb)
    original = CARD_WARMER.wait

    def wait(*args: Any, **kwargs: Any) -> bool:
        entered.set()
        return original(*args, **kwargs)

    monkeypatch.setattr(CARD_WARMER, "wait", wait)
    retriever = LifecycleRetriever(store=store, namespace=NS, episode_embeddings=None)
    result: list[Any] = []

    def search() -> None:
        if mode == "sync":
            result.append(retriever.invoke(QUERIES[0]))
        else:
            result.append(asyncio.run(retriever.ainvoke(QUERIES[0])))

    worker = threading.Thread(target=search)
    worker.start()
    entered.wait(10)
    gate.set()
    worker.join(30)
    assert entered.is_set() and result and result[0]
    assert sorted(emb.cards()) == sorted(f"hobby topic {j}" for j in range(N))  # each card embedded once


def test_a_failing_write_listener_never_fails_the_write() -> None:
    def broken(store: Any, namespace: tuple[str, ...], changes: Any) -> None:
        raise RuntimeError("listener bug")

    add_write_listener(broken)
    try:
        store = _store(CharEmbeddings())
        record = store.put_record(MemoryRecord(namespace=NS, content="The user likes tea"))
    finally:
        remove_write_listener(broken)
    assert [r.id for r in store.list_records(NS)] == [record.id]
