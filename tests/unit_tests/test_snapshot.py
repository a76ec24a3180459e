"""The read side's snapshot: an updated BM25 index and snapshot equal a fresh build; the snapshot file."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever, MemoryRecord
from langchain_lifecycle_memory.read import _source
from langchain_lifecycle_memory.read.lexical import LexicalIndex
from langchain_lifecycle_memory.read.snapshot import Snapshot, build
from langchain_lifecycle_memory.schema import MemoryStatus
from langchain_lifecycle_memory.store._buckets import Revision
from tests.fake_embeddings import CharEmbeddings

T0 = datetime(2024, 1, 1, 10, tzinfo=timezone.utc)
NS = ("memories", "scale")
WORDS = "Vim editor tea Tesla Kyoto cello Rust oat latte running Spanish ThinkPad sourdough Maya Caroline".split()
ZH = ["旺财", "铁观音", "钢琴", "杭州", "羽毛球", "三体"]
QUERIES = ["What editor do I use?", "我家狗叫什么", "Caroline Kyoto", "Tesla running", "钢琴 三体", "nothing here"]


def _text(rng: random.Random) -> str:
    words = rng.sample(WORDS, rng.randint(0, 4))
    return " ".join(words) + ("" if rng.random() < 0.5 else f"用户喜欢{rng.choice(ZH)}")


def _same_scores(a: LexicalIndex, b: LexicalIndex) -> None:
    for q in QUERIES:
        raw_a, cov_a = a.scores(q)
        raw_b, cov_b = b.scores(q)
        np.testing.assert_allclose(raw_a, raw_b, atol=1e-9)
        np.testing.assert_allclose(cov_a, cov_b, atol=1e-9)
        assert a.mentions_known_name(q) == b.mentions_known_name(q)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_updated_lexical_index_scores_exactly_like_a_rebuild(seed: int) -> None:
    rng = random.Random(seed)
    texts = [_text(rng) for _ in range(300)]
    index = LexicalIndex(texts)
    for step in range(60):  # crosses the fresh-segment and tombstone thresholds (re-seals)
        kept = sorted(rng.sample(range(len(texts)), len(texts) - rng.randint(0, 8)))
        added = [_text(rng) for _ in range(rng.randint(0, 12))]
        texts = [texts[i] for i in kept] + added
        order = None
        if step % 4 == 0:
            order = np.array(rng.sample(range(len(texts)), len(texts)))
            texts = [texts[i] for i in order]
        index = index.updated(np.array(kept, dtype=np.int64), added, order)
        assert index.size == len(texts)
        _same_scores(index, LexicalIndex(texts))
        if step % 10 == 0:  # what a snapshot file keeps reads back as the same index
            _same_scores(LexicalIndex.from_terms(*index.terms()), index)


def test_an_updated_index_leaves_the_index_in_use_unchanged() -> None:
    old = LexicalIndex(["The user drives a Tesla.", "用户养了一条叫旺财的狗"])
    before = old.scores("Tesla")[0].copy()
    new = old.updated(np.array([1]), ["The user sold the Tesla and rides a bike."])
    assert old.scores("Tesla")[0].tolist() == before.tolist()
    assert new.size == 2 and new.scores("bike")[0][1] > 0


def _record(rng: random.Random) -> MemoryRecord:
    entity, attribute = rng.choice([(None, None), ("user", "editor"), ("user", "pet"), ("sister_maya", "city")])
    set_valued = attribute == "pet"
    metadata: dict[str, Any] = {"cues": [rng.choice(WORDS), "the user is at home"]} if rng.random() < 0.3 else {}
    return MemoryRecord(
        namespace=NS,
        content=_text(rng) or "The user said nothing",
        entity=entity,
        attribute=attribute,
        value=rng.choice(["Vim", "tea", "旺财", "Kyoto", "Model 3"]) if attribute else None,
        kind=rng.choice(["fact", "preference", "episode"]),
        status=rng.choice([MemoryStatus.ACTIVE] * 5 + [MemoryStatus.PENDING]),
        cardinality="set" if set_valued else "single",
        metadata=metadata,
        confidence=rng.random(),
        created_at=T0 + timedelta(minutes=rng.randint(0, 40)),  # few instants: ties on the id
        updated_at=T0 + timedelta(minutes=5000),
        valid_from=T0 + timedelta(minutes=rng.randint(0, 40)),
    )


def _rows(records: list[MemoryRecord], seq: int) -> Any:
    vectors = np.array([np.random.default_rng(abs(hash(r.id)) % 2**32).standard_normal(4) for r in records])
    docs = [json.dumps(r.to_value(), ensure_ascii=False) for r in records]
    return SimpleNamespace(
        revision=Revision("r", seq), ids=[r.id for r in records], documents=docs, vectors=vectors.reshape(-1, 4)
    )


def _same_snapshot(a: Snapshot, b: Snapshot) -> None:
    assert a.ids == b.ids
    assert [a.record(i) for i in range(len(a))] == [b.record(i) for i in range(len(b))]  # the resolved view
    for name in ("attributes", "entities", "kinds", "other_entities", "entity_alias", "cues", "needles"):
        assert getattr(a, name) == getattr(b, name), name
    for name in ("attribute_code", "entity_code", "status_code", "kind_code", "valid_from", "valid_to", "expires_at"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    for name in ("fresh_at", "confidence", "slot_code", "rank", "needle_code"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    np.testing.assert_allclose(a.vectors, b.vectors, atol=1e-6)
    _same_scores(a.index, b.index)
    t = T0 + timedelta(minutes=30)
    for as_of in (None, t):
        kw = {"statuses": (MemoryStatus.ACTIVE,), "kinds": None, "now": t, "include_expired": False}
        assert a.eligible(as_of=as_of, **kw).tolist() == b.eligible(as_of=as_of, **kw).tolist()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_snapshot_apply_equals_a_fresh_build_with_forks_sets_cues_and_archives(seed: int) -> None:
    rng = random.Random(seed)
    records = {r.id: r for r in (_record(rng) for _ in range(120))}
    snap = build(NS, _rows(list(records.values()), 0))
    for step in range(1, 30):
        changed = []
        for rid in rng.sample(sorted(records), rng.randint(0, 3)):  # archives and confirmations in place
            status = {MemoryStatus.PENDING: MemoryStatus.ACTIVE, MemoryStatus.ACTIVE: MemoryStatus.ARCHIVED}
            if records[rid].status in status:
                records[rid] = records[rid].transition(status[records[rid].status], at=T0 + timedelta(minutes=45))
                changed.append(records[rid])
        for _ in range(rng.randint(0, 4) if step % 10 else 80):  # new versions (a second active one: a fork)
            new = _record(rng)
            records[new.id] = new
            changed.append(new)
        snap = snap.apply(_rows(changed, step))
        _same_snapshot(snap, build(NS, _rows(list(records.values()), step)))


def test_value_mentions_match_the_per_record_test() -> None:
    from langchain_lifecycle_memory.read.routing import value_in
    from langchain_lifecycle_memory.schema import normalize_value

    rng = random.Random(3)
    values = [f"{rng.choice(WORDS)} {i}" for i in range(300)] + ["旺财", "x" * 60, "Model 3", "v"]
    records = [
        MemoryRecord(namespace=NS, content=f"The user said {v}", entity="user", attribute=f"a{i}", value=v)
        for i, v in enumerate(values)
    ]
    snap = build(NS, _rows(records, 0))
    for q in ["I use Vim 12 and tea 7", "我家旺财", "a " + "x" * 60 + " b", "model 3", "vim 1234", "v", "nothing"]:
        expected = [value_in(normalize_value(snap.rows[i].value or ""), normalize_value(q)) for i in range(len(snap))]
        assert snap.value_mentions([q]).tolist() == expected, q


# ---------------------------------------------------------------------- the snapshot file


@pytest.fixture
def small_files(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_source, "MIN_ROWS", 2)


def _files(path: Path) -> list[Path]:
    return sorted((path / "lifecycle-snapshots").glob("*.npz"))


def _search(store: ChromaMemoryStore, query: str) -> list[str]:
    return [d.page_content for d in LifecycleRetriever(store=store, namespace=("memories", "u1")).invoke(query)]


@pytest.mark.usefixtures("small_files")
def test_a_fresh_process_searches_from_the_snapshot_file_plus_later_writes(tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "db", embeddings=CharEmbeddings())
    ns = ("memories", "u1")
    dog = MemoryRecord(namespace=ns, content="用户养了一条叫旺财的狗", entity="user", attribute="pet", value="旺财")
    tea = MemoryRecord(
        namespace=ns, content="The user drinks oolong tea", entity="user", attribute="drink", value="oolong"
    )
    store.put_records([dog, tea])
    assert _search(store, "我家狗叫什么名字？") == [dog.content]
    (file,) = _files(tmp_path / "db")
    cat = MemoryRecord(
        namespace=ns, content="The user drives a Tesla Model 3", entity="user", attribute="car", value="Tesla"
    )
    store.put_record(cat)
    _source.forget_held()  # a new process: nothing held in memory
    assert _search(store, "the user drives a Tesla Model 3?")[0] == cat.content  # the file, plus the row written since
    file.write_bytes(b"not a numpy file")
    _source.forget_held()
    assert _search(store, "我家狗叫什么名字？") == [dog.content]  # unreadable: read again in full
    store.delete_records(ns, [cat.id])
    assert _files(tmp_path / "db") == []  # a deletion removes the file (it holds the texts)
    _source.forget_held()
    assert cat.content not in _search(store, "the user drives a Tesla Model 3?")
    store.purge(("memories", "u1"))
    assert _files(tmp_path / "db") == []


@pytest.mark.usefixtures("small_files")
def test_a_bulk_write_leaves_the_file_a_fresh_process_searches_from(tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "db", embeddings=CharEmbeddings())
    ns = ("memories", "u1")
    store.put_records([MemoryRecord(namespace=ns, content=f"note {i}: the user reads book {i}") for i in range(3)])
    assert _files(tmp_path / "db") == []  # a few records: no file (the writer never searched)
    bulk = [MemoryRecord(namespace=ns, content=f"import {i}: the user visited city {i}") for i in range(70)]
    store.put_records(bulk)  # an import's batch
    (file,) = _files(tmp_path / "db")
    with np.load(file) as saved:
        assert len(saved["ids"]) == 73  # every row, the ones written before the bulk too
    _source.forget_held()  # a new process
    assert "import 42: the user visited city 42" in _search(store, "which city is import 42?")
