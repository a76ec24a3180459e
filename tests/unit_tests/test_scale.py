"""Scale mechanisms: incremental lexical index and snapshots, the linear router, bounded caches."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from langchain_lifecycle_memory.read._snapshot import Snapshot, build_snapshot
from langchain_lifecycle_memory.read.lexical import LexicalIndex
from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus
from langchain_lifecycle_memory.store.lru import LRUCache

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


def test_an_updated_index_leaves_the_snapshot_in_use_unchanged() -> None:
    old = LexicalIndex(["The user drives a Tesla.", "用户养了一条叫旺财的狗"])
    before = old.scores("Tesla")[0].copy()
    new = old.updated(np.array([1]), ["The user sold the Tesla and rides a bike."])
    assert old.scores("Tesla")[0].tolist() == before.tolist()
    assert new.size == 2 and new.scores("bike")[0][1] > 0


def _record(rng: random.Random, i: int) -> MemoryRecord:
    attribute = rng.choice([None, "editor", "pet", "drink", f"topic_{rng.randint(0, 30)}"])
    entity = rng.choice(["user", "sister_maya", "daughter_duoduo", "car"]) if attribute else None
    return MemoryRecord(
        namespace=NS,
        content=_text(rng) or "The user said nothing",
        entity=entity,
        attribute=attribute,
        value=rng.choice([None, "Vim", "tea", "旺财", "x"]) if attribute else None,
        kind=rng.choice(["fact", "preference", "episode"]),
        confidence=rng.random(),
        created_at=T0 + timedelta(minutes=rng.randint(0, 5000)),
        updated_at=T0 + timedelta(minutes=5000),
        valid_from=T0 + timedelta(minutes=rng.randint(0, 5000)),
    )


def _snapshots_equal(a: Snapshot, b: Snapshot) -> None:
    assert [r.id for r in a.records] == [r.id for r in b.records]
    assert a.position == b.position
    for name in ("attributes", "entities", "kinds", "other_entities", "entity_alias"):
        assert getattr(a, name) == getattr(b, name), name
    for name in ("attribute_code", "entity_code", "status_code", "kind_code", "valid_from", "valid_to"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    for name in ("expires_at", "fresh_at", "confidence"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    for q in QUERIES + ["vim", "I drink tea", "旺财在哪"]:
        assert a.value_mentions([q]).tolist() == b.value_mentions([q]).tolist()
    _same_scores(a.index, b.index)


@pytest.mark.parametrize("seed", [0, 1])
def test_snapshot_apply_equals_a_fresh_build_over_the_same_records(seed: int) -> None:
    rng = random.Random(seed)
    records = {r.id: r for r in (_record(rng, i) for i in range(150))}
    ordered = sorted(records.values(), key=lambda r: (r.created_at, r.valid_from, r.id))
    snap = build_snapshot(None, ordered, namespace=NS)
    for step in range(30):
        changes = []
        for rid in rng.sample(sorted(records), rng.randint(0, 4)):  # deletes
            del records[rid]
            changes.append((rid, None))
        for rid in rng.sample(sorted(records), rng.randint(0, 4)):  # edits (archive in place)
            edited = records[rid].transition(MemoryStatus.ARCHIVED, at=T0 + timedelta(minutes=6000))
            records[rid] = edited
            changes.append((rid, edited.to_value()))
        for i in range(rng.randint(0, 6)):  # new records, some older than existing ones
            new = _record(rng, 1000 * step + i)
            records[new.id] = new
            changes.append((new.id, new.to_value()))
        changes.append(("not-a-record", {"content": 1}))  # a plain BaseStore item: skipped
        snap = snap.apply(changes, token=step)
        ordered = sorted(records.values(), key=lambda r: (r.created_at, r.valid_from, r.id))
        _snapshots_equal(snap, build_snapshot(None, ordered, namespace=NS))


def _slot_record(rng: random.Random, i: int) -> MemoryRecord:
    """A version of one of few slots: forks, set-valued slots, pending records, cues, equal instants."""
    entity, attribute = rng.choice([("user", "editor"), ("user", "pet"), ("sister_maya", "city"), ("car", "model")])
    set_valued = attribute == "pet" or rng.random() < 0.1
    metadata: dict[str, object] = {"cues": [rng.choice(WORDS), "the user is at home"]} if rng.random() < 0.3 else {}
    if set_valued and rng.random() < 0.5:
        metadata["cardinality"] = "set"  # the tagged form, as documents carry it
    return MemoryRecord(
        namespace=NS,
        content=_text(rng) or "The user said nothing",
        entity=entity,
        attribute=attribute,
        value=rng.choice(["Vim", "tea", "旺财", "Kyoto", "Model 3"]),
        kind=rng.choice(["fact", "preference"]),
        status=rng.choice([MemoryStatus.ACTIVE] * 5 + [MemoryStatus.PENDING]),
        cardinality="set" if set_valued and "cardinality" not in metadata else "single",
        metadata=metadata,
        confidence=rng.random(),
        created_at=T0 + timedelta(minutes=rng.randint(0, 40)),  # few instants: precedence ties on the id
        updated_at=T0 + timedelta(minutes=5000),
        valid_from=T0 + timedelta(minutes=rng.randint(0, 40)),
    )


def _same_snapshot(a: Snapshot, b: Snapshot) -> None:
    """Everything a reader uses, including the resolved view, slots, precedence and cues."""
    _snapshots_equal(a, b)
    assert a.stored == b.stored
    assert a.records == b.records  # resolution: statuses, links and validity as readers see them
    assert a.ids == b.ids and a.cues == b.cues and a.needles == b.needles
    for name in ("created", "slot_code", "rank", "needle_code"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    t = T0 + timedelta(minutes=30)
    for as_of in (None, t):  # ``as_of`` leans on slot_code and rank (one version per slot)
        kw = {"statuses": (MemoryStatus.ACTIVE,), "kinds": None, "now": t, "include_expired": False}
        assert a.eligible(as_of=as_of, **kw).tolist() == b.eligible(as_of=as_of, **kw).tolist()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_snapshot_apply_equals_a_fresh_build_with_forks_sets_cues_and_archives(seed: int) -> None:
    rng = random.Random(seed)
    records = {r.id: r for r in (_slot_record(rng, i) for i in range(120))}
    ordered = sorted(records.values(), key=lambda r: (r.created_at, r.valid_from, r.id))
    snap = build_snapshot(None, ordered, namespace=NS)
    assert any(a.status != b.status for a, b in zip(snap.records, snap.stored))  # forks were resolved
    for step in range(40):
        changes = []
        for rid in rng.sample(sorted(records), rng.randint(0, 3)):  # deletes
            del records[rid]
            changes.append((rid, None))
        for rid in rng.sample(sorted(records), rng.randint(0, 3)):  # archives and confirmations in place
            status = {MemoryStatus.PENDING: MemoryStatus.ACTIVE, MemoryStatus.ACTIVE: MemoryStatus.ARCHIVED}
            if records[rid].status in status:
                records[rid] = records[rid].transition(status[records[rid].status], at=T0 + timedelta(minutes=45))
                changes.append((rid, records[rid].to_value()))
        for i in range(rng.randint(0, 4)):  # new versions: a second active one of a slot is a fork
            new = _slot_record(rng, 1000 * step + i)
            records[new.id] = new
            changes.append((new.id, new.to_value()))
        if step % 10 == 9:  # a large delta: built afresh, same result
            for i in range(80):
                new = _slot_record(rng, 100_000 * step + i)
                records[new.id] = new
                changes.append((new.id, new.to_value()))
        snap = snap.apply(changes, token=step)
        ordered = sorted(records.values(), key=lambda r: (r.created_at, r.valid_from, r.id))
        _same_snapshot(snap, build_snapshot(None, ordered, namespace=NS))


def test_value_mentions_with_many_distinct_values_match_the_per_record_test() -> None:
    from langchain_lifecycle_memory.read.routing import value_in
    from langchain_lifecycle_memory.schema import normalize_value

    rng = random.Random(3)
    values = [f"{rng.choice(WORDS)} {i}" for i in range(300)] + ["旺财", "x" * 60, "Model 3", "v"]
    records = [
        MemoryRecord(namespace=NS, content=f"The user said {v}", entity="user", attribute=f"a{i}", value=v)
        for i, v in enumerate(values)
    ]
    snap = build_snapshot(None, records, namespace=NS)
    for q in ["I use Vim 12 and tea 7", "我家旺财", "a " + "x" * 60 + " b", "model 3", "vim 1234", "v", "nothing"]:
        expected = [bool(r.value) and value_in(normalize_value(r.value), normalize_value(q)) for r in snap.records]
        assert snap.value_mentions([q]).tolist() == expected, q


def test_router_scores_match_the_per_attribute_definition_and_install_is_linear() -> None:
    from langchain_lifecycle_memory.read.routing import AttributeRouter

    class Tiny:
        fingerprint = {"provider": "test.tiny", "dims": 8}

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [list(np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(8)) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    router = AttributeRouter(Tiny())
    attributes = ["editor", "pet", "diet", *(f"custom_{i}" for i in range(2000))]
    q = Tiny().embed_query("which editor")
    got = router.scores(q, attributes)
    unit = np.asarray(q, dtype=np.float32) / np.linalg.norm(q)
    for a in ["editor", "pet", "custom_7"]:
        expected = float(np.mean(np.sort(router._cards[a] @ unit)[-2:]))
        expected -= 0 if a in router.specs else 0.05
        assert got[a] == pytest.approx(expected, abs=1e-6)
    assert len(got) == len(attributes)


def test_lru_cache_is_bounded_and_keeps_recent_entries() -> None:
    cache: LRUCache[int, int] = LRUCache(3)
    for i in range(10):
        cache[i] = i
        _ = cache.get(0) if 0 in cache else None
    assert len(cache) == 3 and 9 in cache
    with pytest.raises(ValueError, match="maxsize"):
        LRUCache(0)


def _store(**kwargs: object) -> object:
    import uuid

    import chromadb
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from langchain_lifecycle_memory.store.chroma_store import ChromaMemoryStore

    return ChromaMemoryStore(
        client=chromadb.EphemeralClient(),
        embeddings=DeterministicFakeEmbedding(size=8),
        collection_prefix=f"t{uuid.uuid4().hex[:8]}",
        **kwargs,
    )


def test_iter_records_pages_through_every_record_and_export_streams_them(tmp_path: object) -> None:
    import json
    from pathlib import Path

    from langchain_lifecycle_memory.lifecycle.portability import export_records

    store = _store()
    records = [
        MemoryRecord(namespace=NS, content=f"note {i}", created_at=T0 + timedelta(minutes=i), valid_from=T0)
        for i in range(23)
    ]
    store.put_records(records)
    paged = list(store.iter_records(NS, page_size=5))
    assert sorted(r.id for r in paged) == sorted(r.id for r in records)
    assert [r.id for r in store.list_records(NS)] == [r.id for r in records]
    assert list(store.iter_records(("memories", "nobody"))) == []
    with pytest.raises(ValueError, match="page_size"):
        store.iter_records(NS, page_size=0)
    out = Path(str(tmp_path)) / "export.jsonl"
    assert export_records(store, out) == 23
    assert sorted(json.loads(line)["id"] for line in out.read_text().splitlines()) == sorted(r.id for r in records)


def test_writes_stay_visible_to_search_when_namespace_caches_evict(monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever
    from langchain_lifecycle_memory.store import chroma_store as store_module

    monkeypatch.setattr(store_module, "CACHED_NAMESPACES", 2)
    store = _store()
    users = [("memories", f"u{i}") for i in range(5)]
    retrievers = {ns: LifecycleRetriever(store=store, namespace=ns, k=5, min_score=0.0) for ns in users}
    for ns in users:
        store.put_record(MemoryRecord(namespace=ns, content=f"The user {ns[1]} likes green tea", valid_from=T0))
        retrievers[ns].invoke("green tea")  # snapshot cached at this revision
    assert len(store._cols) <= 2 and len(store._tokens) <= 2 and len(store._journal) <= 2
    for ns in users:  # every handle was evicted at least once: the write must still bump the revision
        store.put_record(MemoryRecord(namespace=ns, content=f"The user {ns[1]} drives a Tesla", valid_from=T0))
        found = [d.page_content for d in retrievers[ns].invoke("Tesla")]
        assert f"The user {ns[1]} drives a Tesla" in found
        assert all(ns[1] in text for text in found)  # no other tenant's memory


def test_value_mentions_with_many_distinct_values_match_a_scan_of_each_record() -> None:
    from langchain_lifecycle_memory.read.routing import value_mentioned

    values = [f"brand{i}" for i in range(300)] + ["旺财", "Model 3", "vim", "a" * 60 + " long value"]
    records = [
        MemoryRecord(namespace=NS, content=f"The user likes {v}", entity="user", attribute=f"a{i}", value=v)
        for i, v in enumerate(values)
    ]
    snap = build_snapshot(None, records, namespace=NS)
    queries = [
        "Do I still like brand17?",
        "brand170 or brand1",
        "我家旺财呢",
        "my model 3",
        "VIM!",
        "a" * 60 + " long value",
    ]
    for q in queries:
        expected = [value_mentioned(q, r.value) for r in records]
        assert snap.value_mentions([q]).tolist() == expected, q


def test_mentioned_attributes_equal_attribute_mentioned_one_by_one() -> None:
    from langchain_lifecycle_memory.read.routing import attribute_mentioned, mentioned_attributes
    from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES

    specs = {spec.name: spec for spec in DEFAULT_ATTRIBUTES}
    attributes = [
        *specs,
        "running_shoes",
        "hiking_boots",
        "猫粮品牌",
        "favourite_tea",
        *(f"topic_{i}" for i in range(500)),
    ]
    queries = [
        "Which running shoes should I buy?",
        "我的编辑器是什么？",
        "What's my favourite tea and my editor?",
        "猫粮品牌换了吗",
        "topic 17 and topic_3",
        "Where do I live?",
    ]
    for batch in ([q] for q in queries):
        expected = {a for a in attributes if any(attribute_mentioned(q, a, specs.get(a)) for q in batch)}
        assert mentioned_attributes(batch, attributes, specs) == expected, batch
    both = {a for a in attributes if any(attribute_mentioned(q, a, specs.get(a)) for q in queries)}
    assert mentioned_attributes(queries, attributes, specs) == both
    assert {"running_shoes", "favourite_tea", "猫粮品牌"} <= both


class _Counting:
    """A deterministic embedder that counts the texts it embeds."""

    def __init__(self, name: str) -> None:
        self.fingerprint = {"provider": "test.counting", "model": name, "dims": 8}
        self.embedded = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded += len(texts)
        seed = self.fingerprint["model"]
        return [list(np.random.default_rng(abs(hash((seed, t))) % 2**32).standard_normal(8)) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def _fresh_process_router(emb: object) -> object:
    """A router as a new process would make it: no in-memory cards, no files read yet."""
    from langchain_lifecycle_memory.read._card_vectors import PersistedCards
    from langchain_lifecycle_memory.read.routing import AttributeRouter

    AttributeRouter._cache.clear()
    PersistedCards._open.clear()
    return AttributeRouter(emb, vocabulary=())


def test_card_vectors_persist_per_encoder_and_are_not_reused_by_another(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LIFECYCLE_MEMORY_CACHE_DIR", str(tmp_path))
    attributes = [f"custom_topic_{i}" for i in range(300)]
    first = _Counting("a")
    q = first.embed_query("which topic")
    before = _fresh_process_router(first).scores(q, attributes)
    assert first.embedded == 301  # the query and one card phrase per attribute

    again = _Counting("a")  # same encoder, "next process": every card comes from disk
    assert _fresh_process_router(again).scores(q, attributes) == pytest.approx(before, abs=1e-6)
    assert again.embedded == 0

    other = _Counting("b")  # reindexed to another encoder: its own vectors, never encoder a's
    got = _fresh_process_router(other).scores(q, attributes)
    assert other.embedded == 300
    assert got != pytest.approx(before, abs=1e-6)


def test_card_vector_files_stay_bounded(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from langchain_lifecycle_memory.read._card_vectors import PersistedCards

    monkeypatch.setenv("LIFECYCLE_MEMORY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(PersistedCards, "max_phrases", 50)
    monkeypatch.setattr(PersistedCards, "max_segments", 4)
    emb = _Counting("a")
    q = emb.embed_query("which topic")
    for batch in range(40):  # new attributes appear search after search
        _fresh_process_router(emb).scores(q, [f"topic_{batch}_{i}" for i in range(10)])
    files = list(Path(str(tmp_path)).rglob("*.npz"))
    assert len(files) <= PersistedCards.max_segments + 1
    total = sum(len(np.load(f)["phrases"]) for f in files)
    assert total <= 2 * PersistedCards.max_phrases
    # The newest phrases survive the merges (read by a new process: no file seen yet).
    PersistedCards._open.clear()
    cards = PersistedCards.for_embeddings(emb)
    assert cards is not None and len(cards.load([f"topic 39 {i}" for i in range(10)])) == 10


def test_card_vectors_of_an_unreadable_file_are_embedded_again(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    monkeypatch.setenv("LIFECYCLE_MEMORY_CACHE_DIR", str(tmp_path))
    emb = _Counting("a")
    q = emb.embed_query("which topic")
    before = _fresh_process_router(emb).scores(q, ["alpha_topic", "beta_topic"])
    for f in Path(str(tmp_path)).rglob("*.npz"):
        f.write_bytes(b"truncated")
    emb.embedded = 0
    assert _fresh_process_router(emb).scores(q, ["alpha_topic", "beta_topic"]) == pytest.approx(before)
    assert emb.embedded == 2


def test_router_array_scores_equal_the_sorted_two_best_definition() -> None:
    from langchain_lifecycle_memory.read.routing import AttributeRouter
    from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES

    emb = _Counting("a")
    router = AttributeRouter(emb)
    attributes = [spec.name for spec in DEFAULT_ATTRIBUTES] + [f"custom_{i}" for i in range(50)]
    for text in ["which editor", "我的猫", "where do I live"]:
        q = emb.embed_query(text)
        got = router.score_array(q, tuple(attributes))
        unit = np.asarray(q, dtype=np.float32) / np.linalg.norm(q)
        for j, a in enumerate(attributes):
            sims = np.sort(router._cards[a] @ unit)
            expected = float(np.mean(sims[-2:])) - (0 if a in router.specs else 0.05)
            assert got[j] == pytest.approx(expected, abs=1e-6), a


def test_mention_index_updated_for_a_changed_attribute_list_finds_what_a_rebuild_finds() -> None:
    from langchain_lifecycle_memory.read import routing
    from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES

    specs = {spec.name: spec for spec in DEFAULT_ATTRIBUTES}
    rng = random.Random(5)
    pool = [*specs, "running_shoes", "猫粮品牌", "favourite_tea", *(f"topic_{i}" for i in range(300))]
    queries = ["Which running shoes?", "猫粮品牌换了吗", "my favourite tea", "topic 17 and topic_3", "我的编辑器"]
    attributes = sorted(rng.sample(pool, 200))
    for _ in range(30):  # writes add and drop a few attributes between searches
        attributes = sorted((set(attributes) - set(rng.sample(attributes, 3))) | set(rng.sample(pool, 3)))
        got = routing.mentioned_attributes(queries, attributes, specs)
        expected = {a for a in attributes if any(routing.attribute_mentioned(q, a, specs.get(a)) for q in queries)}
        assert got == expected


def test_cards_partly_on_disk_score_like_cards_embedded_in_this_process(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_lifecycle_memory.read.routing import AttributeRouter

    monkeypatch.setenv("LIFECYCLE_MEMORY_CACHE_DIR", str(tmp_path))
    attributes = [f"custom_topic_{i}" for i in range(200)]
    q = _Counting("a").embed_query("which topic")
    _fresh_process_router(_Counting("a")).scores(q, attributes[::2])  # an earlier process: half the cards
    emb = _Counting("a")
    got = _fresh_process_router(emb).scores(q, list(reversed(attributes)))
    assert emb.embedded == 100  # the other half
    AttributeRouter._cache.clear()
    monkeypatch.setenv("LIFECYCLE_MEMORY_CACHE_DIR", str(tmp_path / "none"))
    assert got == pytest.approx(_fresh_process_router(_Counting("a")).scores(q, attributes), abs=1e-6)


def test_names_humanised_together_equal_one_by_one() -> None:
    from langchain_lifecycle_memory.read._mentions import _humanize, humanize_all

    names = ["topic_1", "_lead_", "a__b", "running-shoes", " x\t y ", "", "__", "编辑器", "a\u2003b", "ǅ_x", "a\x1cb"]
    assert humanize_all(names) == [_humanize(n) for n in names]
    assert humanize_all(["a\x00b", "c_d"]) == [_humanize("a\x00b"), "c d"]


def test_values_normalised_together_equal_one_by_one() -> None:
    from langchain_lifecycle_memory.read._mentions import normalize_values
    from langchain_lifecycle_memory.schema import normalize_value

    pieces = ["Ａｂｃ", "\u0301", "e\u0301", "ﬁ", "Straße", "\u00a0", "\u3000", " ", "\t", "\x1c"]
    pieces += ["ᄀ", "ᅡ", "ᆨ", "猫", "x"]  # Hangul jamo that compose when adjacent
    rng = random.Random(11)
    values = ["", " ", "  a  b  ", "\u0301x", "ᄀ", "ᅡ", "Ⅻ", "a\x1fb"]
    values += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) for _ in range(3000)]
    assert normalize_values(values) == [normalize_value(v) for v in values]
    assert normalize_values(["a\x00b", "C"]) == [normalize_value("a\x00b"), "c"]
    assert normalize_values([]) == []
