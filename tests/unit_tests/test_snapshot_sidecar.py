"""Snapshot sidecars: a fresh process's first search loads the snapshot saved at the store's revision."""

from __future__ import annotations

import json
import os
import random
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever, MemoryRecord
from langchain_lifecycle_memory.read import _sidecar
from langchain_lifecycle_memory.read import retrieval as R
from langchain_lifecycle_memory.read._rows import Rows
from langchain_lifecycle_memory.read._sidecar import SIDECARS
from langchain_lifecycle_memory.read._snapshot import build_snapshot
from langchain_lifecycle_memory.schema import MemoryStatus
from tests.fake_embeddings import CharEmbeddings
from tests.unit_tests.test_scale import NS, T0, _same_snapshot, _slot_record

QUERIES = ["我用什么编辑器？", "我家狗叫什么名字？", "Where does Maya live?", "What do I drink?"]


@pytest.fixture(autouse=True)
def _small_namespaces_get_sidecars(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sidecar, "MIN_RECORDS", 1)
    monkeypatch.setattr(R, "SMALL_NAMESPACE", 0)  # and take the path of large ones (a full read, no vectors)
    R._SNAPSHOTS.clear()


class _Folder:
    """The one thing a sidecar needs of a store: where it lives."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def snapshot_path(self, namespace: tuple[str, ...]) -> str:
        return str(self.path / "snap.npz")


def _ordered(records: dict[str, MemoryRecord]) -> list[MemoryRecord]:
    return sorted(records.values(), key=lambda r: (r.created_at, r.valid_from, r.id))


def test_a_loaded_sidecar_equals_a_fresh_build_and_applies_writes_like_one(tmp_path: Path) -> None:
    rng = random.Random(5)
    records = {r.id: r for r in (_slot_record(rng, i) for i in range(150))}
    ordered = _ordered(records)
    token, folder = uuid.uuid4().hex, _Folder(tmp_path)
    built = build_snapshot(
        folder, ordered, namespace=NS, token=token, documents=[json.dumps(r.to_value()) for r in ordered]
    )
    assert isinstance(built.stored, Rows)
    SIDECARS.save(built)
    loaded = SIDECARS.load(folder, NS, token)
    assert loaded is not None
    _same_snapshot(loaded, build_snapshot(None, ordered, namespace=NS))
    for q in QUERIES:
        assert loaded.index.scores(q)[0].tolist() == built.index.scores(q)[0].tolist()
    assert SIDECARS.load(folder, NS, uuid.uuid4().hex) is None  # another revision: not used
    assert SIDECARS.load(folder, ("memories", "other-tenant"), token) is None  # another namespace: never
    assert SIDECARS.load(folder, NS, "initial") is None  # a token that names no write is never trusted

    snap = loaded
    for step in range(12):  # journal deltas on a loaded snapshot: still exactly a fresh build
        changes: list[tuple[str, Any]] = []
        for rid in rng.sample(sorted(records), rng.randint(0, 3)):
            del records[rid]
            changes.append((rid, None))
        for rid in rng.sample(sorted(records), 2):
            if records[rid].status is MemoryStatus.ACTIVE:
                records[rid] = records[rid].transition("archived", at=T0 + timedelta(minutes=45))
                changes.append((rid, records[rid].to_value()))
        for i in range(rng.randint(0, 4) if step != 7 else 90):  # step 7: a large delta, rebuilt
            new = _slot_record(rng, 1000 * step + i)
            records[new.id] = new
            changes.append((new.id, new.to_value()))
        snap = snap.apply(changes, token=step)
        _same_snapshot(snap, build_snapshot(None, _ordered(records), namespace=NS))


def _seed(store: ChromaMemoryStore, ns: tuple[str, ...], n: int = 40) -> None:
    rng = random.Random(len(ns[-1]))
    store.put_records(
        [r.model_copy(update={"namespace": ns}) for r in (_slot_record(rng, i) for i in range(n))]
        + [MemoryRecord(namespace=ns, content=f"用户的妹妹 Maya 住在{c}", kind="episode") for c in ("杭州", "京都")]
    )


def _answers(retriever: LifecycleRetriever) -> list[list[tuple[str, str, str, float]]]:
    return [
        [(c.record.id, c.record.content, c.decision, round(c.fused, 9)) for c in retriever.explain(q).candidates]
        for q in QUERIES
    ]


def _reopen(path: Path, prefix: str, monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[ChromaMemoryStore, list]:
    """Another worker on the same data, with no snapshot in memory; counts its full reads."""
    R._SNAPSHOTS.clear()
    store = ChromaMemoryStore(path, embeddings=CharEmbeddings(), collection_prefix=prefix)
    reads: list[tuple[str, ...]] = []
    read = store.namespace_documents  # the retriever's full read
    if monkeypatch is not None:
        monkeypatch.setattr(store, "namespace_documents", lambda ns: reads.append(ns) or read(ns))
    return store, reads


def test_a_fresh_worker_answers_from_the_sidecar_exactly_as_from_a_full_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ChromaMemoryStore(tmp_path / "db", embeddings=CharEmbeddings(), collection_prefix="sidecar")
    _seed(store, NS)
    expected = _answers(LifecycleRetriever(store=store, namespace=NS))
    path = store.snapshot_path(NS)
    assert path is not None and os.path.exists(path)
    assert str(tmp_path / "db") in path

    worker, reads = _reopen(tmp_path / "db", "sidecar", monkeypatch)
    retriever = LifecycleRetriever(store=worker, namespace=NS)
    assert _answers(retriever) == expected
    assert reads == []  # loaded, not read

    extra = MemoryRecord(namespace=NS, content="用户现在喝铁观音", entity="user", attribute="drink", value="铁观音")
    worker.put_record(extra)  # its own write: applied from the journal on the loaded snapshot
    assert extra.content in [d.page_content for d in retriever.invoke("What do I drink? 铁观音")]
    assert reads == []
    expected = _answers(retriever)

    # The next worker: the sidecar plus the delta file of the write above, no full read.
    third, third_reads = _reopen(tmp_path / "db", "sidecar", monkeypatch)
    assert _answers(LifecycleRetriever(store=third, namespace=NS)) == expected
    assert third_reads == []
    R._SNAPSHOTS.clear()  # and exactly what a full read gives
    plain = ChromaMemoryStore(client=third.client, embeddings=CharEmbeddings(), collection_prefix="sidecar")
    plain.snapshot_dir = str(tmp_path / "elsewhere")  # no sidecar there: a full read
    assert _answers(LifecycleRetriever(store=plain, namespace=NS)) == expected
    assert os.path.exists(str(plain.snapshot_path(NS)))  # ... which saved one

    delta = Path(str(path).replace(".npz", ".delta.json"))
    assert delta.exists()
    delta.write_text("{not json")
    fourth, fourth_reads = _reopen(tmp_path / "db", "sidecar", monkeypatch)
    with pytest.warns(RuntimeWarning, match="unreadable"):
        assert _answers(LifecycleRetriever(store=fourth, namespace=NS)) == expected
    assert fourth_reads == []  # the file plus the stored documents that differ from it, not a full read
    assert json.loads(delta.read_text())["token"] == fourth.revision(NS)  # the damaged delta, written anew


def test_a_sidecar_another_writer_made_stale_is_not_used_and_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = ChromaMemoryStore(tmp_path / "db", embeddings=CharEmbeddings(), collection_prefix="sidecar")
    _seed(writer, NS)
    LifecycleRetriever(store=writer, namespace=NS).invoke(QUERIES[0])  # saves the sidecar
    tea = MemoryRecord(namespace=NS, content="用户改喝铁观音了", entity="user", attribute="tea", value="铁观音")
    writer.put_record(tea)  # after the sidecar was saved

    reader, reads = _reopen(tmp_path / "db", "sidecar", monkeypatch)
    retriever = LifecycleRetriever(store=reader, namespace=NS)
    assert tea.content in [d.page_content for d in retriever.invoke("铁观音")]
    assert reads == []  # the stale sidecar was not used as is: brought up to date from the stored documents
    assert SIDECARS.load(reader, NS, reader.revision(NS)) is not None  # a delta file leads it to the new revision

    writer.delete_records(NS, [tea.id])
    reader2, _ = _reopen(tmp_path / "db", "sidecar")
    assert tea.content not in [d.page_content for d in LifecycleRetriever(store=reader2, namespace=NS).invoke("铁观音")]


def test_a_corrupt_sidecar_is_rebuilt_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ChromaMemoryStore(tmp_path / "db", embeddings=CharEmbeddings(), collection_prefix="sidecar")
    _seed(store, NS)
    expected = _answers(LifecycleRetriever(store=store, namespace=NS))
    path = store.snapshot_path(NS)
    assert path is not None
    data = Path(path).read_bytes()
    Path(path).write_bytes(data[: len(data) // 2])  # truncated mid-write by a crash, say

    worker, reads = _reopen(tmp_path / "db", "sidecar", monkeypatch)
    with pytest.warns(RuntimeWarning, match="unreadable"):
        assert _answers(LifecycleRetriever(store=worker, namespace=NS)) == expected
    assert reads == [NS]
    assert SIDECARS.load(worker, NS, worker.revision(NS)) is not None  # written again, sound


def test_purge_removes_the_sidecar_and_tenants_never_share_one(tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "db", embeddings=CharEmbeddings(), collection_prefix="sidecar")
    u1, u2 = ("memories", "u1"), ("memories", "u2")
    _seed(store, u1)
    store.put_records([MemoryRecord(namespace=u2, content=f"用户二号的秘密 {i}") for i in range(5)])
    for ns in (u1, u2):
        LifecycleRetriever(store=store, namespace=ns).invoke("秘密 Maya")
    p1, p2 = store.snapshot_path(u1), store.snapshot_path(u2)
    assert p1 and p2 and p1 != p2 and os.path.exists(p1) and os.path.exists(p2)
    os.replace(p2, p1)  # u2's file where u1's belongs: refused (it names u2), u1 is read from the store
    worker, _ = _reopen(tmp_path / "db", "sidecar")
    docs = LifecycleRetriever(store=worker, namespace=u1).invoke("用户二号的秘密")
    assert all(d.metadata["namespace"] == list(u1) or tuple(d.metadata["namespace"]) == u1 for d in docs)

    store.purge(("memories", "u1"))
    assert not os.path.exists(p1)
    R._SNAPSHOTS.clear()
    assert LifecycleRetriever(store=store, namespace=u1).invoke("Maya") == []


@pytest.mark.parametrize(
    "options",
    [{}, {"min_score": 0.1, "k": 25}, {"fusion": "rrf"}, {"min_score": 0.45, "k": 3}, {"dense_k": 5}],
)
def test_scoring_only_the_records_that_can_reach_min_score_changes_no_result(
    options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import chromadb

    prefix = f"s{uuid.uuid4().hex[:8]}"
    store = ChromaMemoryStore(client=chromadb.EphemeralClient(), embeddings=CharEmbeddings(), collection_prefix=prefix)
    rng = random.Random(11)
    _seed(store, NS, n=60)
    store.put_records(
        [MemoryRecord(namespace=NS, content=f"{rng.choice(QUERIES)} note {i}", kind="episode") for i in range(200)]
        + [MemoryRecord(namespace=NS, content="Caroline moved to Kyoto", entity="Caroline", kind="episode")]
    )
    retriever = LifecycleRetriever(store=store, namespace=NS, **options)
    queries = [*QUERIES, "Vim", "旺财 Kyoto", "When did Caroline move?", "Tesla running Spanish", "完全无关的问题"]

    def documents() -> list[list[tuple[str, dict[str, Any]]]]:
        return [[(d.page_content, d.metadata) for d in retriever.invoke(q)] for q in queries]

    subset = documents()
    monkeypatch.setattr(R, "_CANDIDATES_ONLY", False)
    assert documents() == subset
    assert any(subset)


@pytest.mark.parametrize("many", [False, True])
def test_a_stale_sidecar_refreshed_from_the_stored_documents_equals_a_fresh_build(
    tmp_path: Path, layout: str, many: bool
) -> None:
    rng = random.Random(11)
    writer = ChromaMemoryStore(tmp_path / "db", embeddings=CharEmbeddings(), collection_prefix="refresh")
    records = [_slot_record(rng, i) for i in range(80)]
    writer.put_records(records)
    LifecycleRetriever(store=writer, namespace=NS).invoke(QUERIES[0])  # saves the sidecar
    other = ChromaMemoryStore(tmp_path / "db", embeddings=CharEmbeddings(), collection_prefix="refresh")
    n = 40 if many else 3  # many: more than a quarter of the rows, rebuilt (and a new file saved)
    other.delete_records(NS, [r.id for r in records[:n]])  # another worker's writes: not in the first one's journal
    other.put_records([records[n].transition("archived", at=T0 + timedelta(minutes=50))])
    other.put_records([_slot_record(rng, 1000 + i) for i in range(n)])
    other.put(NS, "plain-item", {"note": "not a memory record"})
    token = other.revision(NS)
    assert SIDECARS.load(other, NS, token) is None  # stale: not used as is

    refreshed = SIDECARS.refresh(other, NS, token)
    assert refreshed is not None and refreshed.token == token
    now, documents = other.read_namespace(NS)
    _same_snapshot(refreshed, build_snapshot(None, now, namespace=NS, documents=documents))
    for q in QUERIES:
        fresh = build_snapshot(None, now, namespace=NS).index.scores(q)[0]
        assert np.allclose(refreshed.index.scores(q)[0], fresh, atol=1e-9)
    again = SIDECARS.load(other, NS, token)  # the next worker: the file and a delta (or a new file), no diff
    assert again is not None
    _same_snapshot(again, refreshed)


def test_a_large_snapshot_is_saved_in_the_background_and_loads_like_one_saved_in_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_sidecar, "BACKGROUND_RECORDS", 1)
    store = ChromaMemoryStore(tmp_path / "db", embeddings=CharEmbeddings(), collection_prefix="background")
    _seed(store, NS)
    expected = _answers(LifecycleRetriever(store=store, namespace=NS))
    SIDECARS.wait()
    assert os.path.exists(str(store.snapshot_path(NS)))
    worker, reads = _reopen(tmp_path / "db", "background", monkeypatch)
    assert _answers(LifecycleRetriever(store=worker, namespace=NS)) == expected
    assert reads == []


def test_a_migration_removes_the_old_generations_sidecars(tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "db", embeddings=CharEmbeddings(), collection_prefix="sidecar")
    ns = ("memories", "u1")
    _seed(store, ns)
    before = [[d.page_content for d in LifecycleRetriever(store=store, namespace=ns).invoke(q)] for q in QUERIES]
    old = store.snapshot_path(ns)
    assert old and os.path.exists(old)
    folder = os.path.dirname(old)

    store.migrate_layout("collection" if store.layout == "bucketed" else "bucketed")

    assert not os.path.exists(old)  # the old generation's file would never be opened again
    R._SNAPSHOTS.clear()
    after = [[d.page_content for d in LifecycleRetriever(store=store, namespace=ns).invoke(q)] for q in QUERIES]
    assert after == before  # read again, from the new generation
    new = store.snapshot_path(ns)
    assert new != old and os.path.exists(new)
    assert all(name.startswith(os.path.basename(new)[:40]) for name in os.listdir(folder))
