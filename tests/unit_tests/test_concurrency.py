"""Never two current values: readers during a write, after a crash, and racing writers.

What a user would notice: ``search``/``list``/``history``/``as_of``/the injected block
showing two values for one single-valued slot, a history where one version is superseded
by two, or an acknowledged write that vanished.
"""

from __future__ import annotations

import io
import json
import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, Fact, LifecycleMemory, MemoryRecord
from langchain_lifecycle_memory.lifecycle.portability import export_records
from langchain_lifecycle_memory.write.update import apply_plan, plan_updates, reconcile
from tests.conftest import drop_store_collections, make_store, server_address

USER = "u1"
SLOTS = ("editor", "city", "drink")


def fact(slot: str, value: str) -> Fact:
    return Fact(entity="user", attribute=slot, value=value, content=f"The user's {slot} is {value}", confidence=0.9)


def stored(store: ChromaMemoryStore, ns: tuple[str, ...] = ("memories", USER)) -> list[MemoryRecord]:
    """The records exactly as stored (no slot resolution)."""
    return store.list_records(ns, resolve=False)


def faults(records: list[MemoryRecord]) -> tuple[int, int]:
    """(slots with two active records, records superseded by two), counted from raw records."""
    active = Counter(r.slot for r in records if r.slot and r.status.value == "active")
    claimed = Counter(r.supersedes for r in records if r.supersedes)
    return sum(n > 1 for n in active.values()), sum(n > 1 for n in claimed.values())


def current_values(memory: LifecycleMemory, slot: str, now: str) -> dict[str, set[str]]:
    """What every reader shows as the slot's current value(s) at ``now``."""
    ns = memory.namespace(USER)
    docs = memory.search(f"What is my {slot}?", USER, k=10, min_score=0.0, now=now)
    hits = memory.store.search_records(ns, f"my {slot}", k=10, now=now)
    return {
        "list": {r.value or "" for r in memory.active(USER) if r.attribute == slot},
        "history": {r.value or "" for r in memory.history(USER, "user", slot) if r.status.value == "active"},
        "search": {d.metadata["value"] for d in docs},
        "store_search": {r.value or "" for r, _ in hits if r.attribute == slot},
    }


# ---------------------------------------------------------------- readers during a write


def test_a_reader_between_the_two_writes_sees_one_value(mem_store: ChromaMemoryStore) -> None:
    memory = LifecycleMemory(mem_store)
    memory.add_facts([fact("editor", "Vim")], USER, at="2024-01-01")
    seen: list[dict[str, set[str]]] = []
    real_put = mem_store.put_records

    def put_then_read(records: list[MemoryRecord]) -> list[MemoryRecord]:
        out = real_put(records)
        seen.append(current_values(memory, "editor", "2024-03-02"))  # the new record is in, the old not yet archived
        return out

    mem_store.put_records = put_then_read  # type: ignore[method-assign]
    try:
        memory.add_facts([fact("editor", "VS Code")], USER, at="2024-03-01")
    finally:
        mem_store.put_records = real_put  # type: ignore[method-assign]
    assert seen, "the write went through put_records"
    for view in seen:
        assert all(values == {"VS Code"} for values in view.values()), view


def test_a_polling_reader_never_sees_two_values(tmp_path: Path, embeddings: Any) -> None:
    memory = LifecycleMemory(make_store("embedded", tmp_path, embeddings))
    memory.add_facts([fact("editor", "v0")], USER, at="2024-01-01T00:00:00Z")
    stop = threading.Event()
    samples: list[int] = []

    def poll() -> None:
        while not stop.is_set():
            active = [r for r in memory.active(USER) if r.attribute == "editor"]
            docs = memory.search("What editor do I use?", USER, k=10, min_score=0.0)
            samples.append(max(len(active), len({d.metadata["value"] for d in docs})))

    reader = threading.Thread(target=poll)
    reader.start()
    try:
        for i in range(1, 25):
            memory.add_facts([fact("editor", f"v{i}")], USER, at=f"2024-01-{i + 1:02d}T00:00:00Z")
    finally:
        stop.set()
        reader.join()
    assert samples and max(samples) == 1
    assert [r.value for r in memory.active(USER)] == ["v24"]


# ---------------------------------------------------------------- a crash between the writes


def _crash_after_first_write(store: ChromaMemoryStore, facts: list[Fact], at: str) -> None:
    plan = plan_updates(store, ("memories", USER), facts, at=at)
    store.put_records([*plan.added, *plan.refreshed])  # then the process dies: no archival


def test_after_a_crash_readers_see_one_value_and_sweep_repairs(mem_store: ChromaMemoryStore) -> None:
    memory = LifecycleMemory(mem_store)
    memory.add_facts([fact("city", "Hangzhou")], USER, at="2024-01-01")
    _crash_after_first_write(mem_store, [fact("city", "Shanghai")], "2024-06-01")
    ns = memory.namespace(USER)
    assert faults(stored(mem_store)) == (1, 0)  # stored: doubled

    view = current_values(memory, "city", "2024-06-02")
    assert all(values == {"Shanghai"} for values in view.values()), view
    history = memory.history(USER, "user", "city")
    assert [(r.value, r.status.value) for r in history] == [("Hangzhou", "archived"), ("Shanghai", "active")]
    assert history[0].superseded_by == history[1].id and history[0].valid_to == history[1].valid_from
    for t, value in [("2024-03-01", "Hangzhou"), ("2024-07-01", "Shanghai")]:
        docs = memory.search("Which city do I live in?", USER, as_of=t, min_score=0.0, now="2024-07-01")
        assert [d.metadata["value"] for d in docs if d.metadata["attribute"] == "city"] == [value]
    block = memory.inject("Which city do I live in?", USER, min_score=0.0, now="2024-06-02")
    assert "Shanghai" in block.text and "Hangzhou" not in block.text
    exported = io.StringIO()
    export_records(mem_store, exported, namespace_prefix=ns)
    lines = [json.loads(line) for line in exported.getvalue().splitlines()]
    assert sorted((d["value"], d["status"]) for d in lines) == [("Hangzhou", "archived"), ("Shanghai", "active")]

    report = memory.sweep(now="2024-06-02")
    assert report.repaired == 1
    assert faults(stored(mem_store)) == (0, 0)
    assert [(r.value, r.status.value) for r in mem_store.history(ns, "user", "city")] == [
        ("Hangzhou", "archived"),
        ("Shanghai", "active"),
    ]
    assert memory.sweep(now="2024-06-03").repaired == 0


def test_after_a_crash_the_next_write_repairs_the_chain(mem_store: ChromaMemoryStore) -> None:
    memory = LifecycleMemory(mem_store)
    memory.add_facts([fact("editor", "Vim")], USER, at="2024-01-01")
    _crash_after_first_write(mem_store, [fact("editor", "VS Code")], "2024-03-01")
    result = memory.add_facts([fact("editor", "Zed")], USER, at="2024-05-01")
    assert [r.value for r in result.repaired] == ["Vim"]
    records = stored(mem_store)
    assert faults(records) == (0, 0)
    chain = mem_store.history(memory.namespace(USER), "user", "editor")
    assert [r.value for r in chain] == ["Vim", "VS Code", "Zed"]
    assert [r.superseded_by for r in chain] == [chain[1].id, chain[2].id, None]
    assert [r.supersedes for r in chain] == [None, chain[0].id, chain[1].id]


def test_doctor_repairs_the_slot_it_looks_at(mem_store: ChromaMemoryStore) -> None:
    from langchain_lifecycle_memory.cli.diagnostics import doctor

    memory = LifecycleMemory(mem_store)
    memory.add_facts([fact("editor", "Vim")], USER, at="2024-01-01")
    _crash_after_first_write(mem_store, [fact("editor", "VS Code")], "2024-03-01")
    report = doctor(memory, USER, "Vim", now="2024-03-02")
    assert report.verdict == "archived" and report.successor is not None and report.successor.value == "VS Code"
    assert any(f.step == "chain" for f in report.findings)
    assert faults(stored(mem_store)) == (0, 0)


def test_set_valued_slots_keep_every_member(mem_store: ChromaMemoryStore) -> None:
    ns = ("memories", USER)
    tagged = {"cardinality": "set"}
    members = [
        MemoryRecord(namespace=ns, content=f"The user is allergic to {v}", entity="user", attribute="allergy", value=v)
        for v in ("peanuts", "penicillin")
    ]
    mem_store.put_records([m.model_copy(update={"metadata": tagged}) for m in members])
    assert sorted(r.value or "" for r in mem_store.list_records(ns, statuses="active")) == ["peanuts", "penicillin"]
    assert LifecycleMemory(mem_store).sweep().repaired == 0


# ---------------------------------------------------------------- racing writers


def test_two_writers_planning_from_the_same_state_leave_one_chain(mem_store: ChromaMemoryStore) -> None:
    """What two processes do (no shared lock): both plan, then both apply; the check repairs."""
    ns = ("memories", USER)
    reconcile(mem_store, ns, [fact("editor", "Vim")], at="2024-01-01")
    first = plan_updates(mem_store, ns, [fact("editor", "Helix")], at="2024-02-01")
    second = plan_updates(mem_store, ns, [fact("editor", "Zed")], at="2024-03-01")
    apply_plan(mem_store, second)
    result = apply_plan(mem_store, first)  # stale: it also archives Vim, claiming it for Helix
    assert result.repaired
    records = stored(mem_store)
    assert faults(records) == (0, 0)
    chain = mem_store.history(ns, "user", "editor")
    assert [(r.value, r.status.value) for r in chain] == [
        ("Vim", "archived"),
        ("Helix", "archived"),
        ("Zed", "active"),
    ]
    assert [r.superseded_by for r in chain] == [chain[1].id, chain[2].id, None]


def _check_race(records: list[MemoryRecord], acknowledged: list[tuple[str, str]]) -> None:
    by_id = {r.id: r for r in records}
    lost = [(i, v) for i, v in acknowledged if i not in by_id or by_id[i].value != v]
    assert faults(records) == (0, 0)
    assert lost == []


def test_eight_threads_on_one_embedded_store(tmp_path: Path, embeddings: Any) -> None:
    memory = LifecycleMemory(make_store("embedded", tmp_path, embeddings))
    acknowledged: list[tuple[str, str]] = []
    start = threading.Barrier(8)

    def writer(n: int) -> None:
        start.wait()
        for i in range(6):
            slot = SLOTS[(n + i) % len(SLOTS)]
            result = memory.add_facts([fact(slot, f"w{n}-{i}")], USER)
            acknowledged.extend((r.id, r.value or "") for r in result.added)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(acknowledged) == 48
    _check_race(stored(memory.store), acknowledged)


def _server_worker(address: tuple[str, int], prefix: str, n: int, go: Any, results: Any) -> None:
    """One writer process: 6 updates of the shared slots once every writer is ready."""
    from langchain_core.embeddings import DeterministicFakeEmbedding

    host, port = address
    emb = DeterministicFakeEmbedding(size=64)
    memory = LifecycleMemory(ChromaMemoryStore(host=host, port=port, collection_prefix=prefix, embeddings=emb))
    go.wait()
    acknowledged = []
    for i in range(6):
        slot, value = SLOTS[(n + i) % len(SLOTS)], f"p{n}-{i}"
        acknowledged += [(r.id, r.value) for r in memory.add_facts([fact(slot, value)], USER).added]
    results.put(acknowledged)


@pytest.mark.server
def test_four_processes_on_a_server() -> None:
    import multiprocessing as mp

    from langchain_core.embeddings import DeterministicFakeEmbedding

    address = server_address()
    if address is None:
        pytest.skip("no Chroma server configured (LIFECYCLE_MEMORY_TEST_CHROMA=host:port)")
    prefix = f"t{uuid.uuid4().hex[:10]}"
    store = ChromaMemoryStore(
        host=address[0], port=address[1], collection_prefix=prefix, embeddings=DeterministicFakeEmbedding(size=64)
    )
    ctx = mp.get_context("forkserver")  # the package is imported once, then each writer forks from it
    ctx.set_forkserver_preload(["langchain_lifecycle_memory", __name__])
    go, results = ctx.Barrier(4), ctx.Queue()
    procs = [ctx.Process(target=_server_worker, args=(address, prefix, n, go, results)) for n in range(4)]
    for p in procs:
        p.start()
    try:
        acknowledged = [tuple(pair) for _ in procs for pair in results.get(timeout=180)]
        for p in procs:
            p.join(timeout=30)
        assert [p.exitcode for p in procs] == [0, 0, 0, 0]
        assert len(acknowledged) == 24
        _check_race(stored(store), acknowledged)  # type: ignore[arg-type]
    finally:
        for p in procs:
            p.kill()
        drop_store_collections(store)


# ---------------------------------------------------------------- the resolution rule itself


def test_as_of_picks_one_version_where_intervals_overlap(mem_store: ChromaMemoryStore) -> None:
    """A statement learned late ("I used Emacs from February") overlaps the archived Vim."""
    memory = LifecycleMemory(mem_store)
    memory.add_facts([fact("editor", "Vim")], USER, at="2024-01-01")
    memory.add_facts([fact("editor", "VS Code")], USER, at="2024-03-01")
    late = Fact.model_validate({**fact("editor", "Emacs").model_dump(), "valid_from": "2024-02-01"})
    memory.add_facts([late], USER, at="2024-04-01")
    for t, value in [("2024-01-15", "Vim"), ("2024-02-15", "Emacs"), ("2024-03-15", "VS Code")]:
        docs = memory.search("What editor do I use?", USER, as_of=t, min_score=0.0, now="2024-04-02")
        assert [d.metadata["value"] for d in docs if d.metadata["attribute"] == "editor"] == [value], t


def test_injection_never_carries_two_current_values() -> None:
    from langchain_core.documents import Document

    from langchain_lifecycle_memory.read.injection import format_memories

    def doc(value: str, day: str, **extra: Any) -> Document:
        meta = {"id": value, "namespace": ["memories", USER], "entity": "user", "attribute": "editor"}
        meta |= {"value": value, "status": "active", "valid_from": f"2024-{day}T00:00:00Z", **extra}
        return Document(page_content=f"The user uses {value}", metadata=meta)

    block = format_memories([doc("Vim", "01-01"), doc("VS Code", "03-01")])
    assert "VS Code" in block.text and "Vim" not in block.text
    members = [("peanuts", "01-01"), ("dust", "02-01")]
    allergies = [doc(v, d, attribute="allergy", cardinality="set") for v, d in members]
    both = format_memories(allergies).text
    assert "peanuts" in both and "dust" in both


def test_resolution_is_deterministic_and_a_repair_is_its_fixed_point() -> None:
    from datetime import datetime, timezone

    from langchain_lifecycle_memory.store.slots import repairs, resolve_current

    ns, t = ("memories", USER), "2024-03-01T00:00:00Z"
    old = MemoryRecord(namespace=ns, content="Vim", entity="user", attribute="editor", value="Vim", valid_from=t)
    old = old.model_copy(update={"status": "archived", "valid_to": old.valid_from})
    twins = [  # same instant, both claim the old version: the id breaks the tie
        MemoryRecord(
            id=i,
            namespace=ns,
            content=v,
            entity="user",
            attribute="editor",
            value=v,
            valid_from=t,
            created_at=t,
            supersedes=old.id,
        )
        for i, v in [("b", "Zed"), ("a", "Helix")]
    ]
    for order in ([old, *twins], [twins[1], old, twins[0]]):
        view = {r.id: r for r in resolve_current(order)}
        assert [view[i].status.value for i in ("a", "b")] == ["archived", "active"]
        assert (view["a"].superseded_by, view["b"].supersedes, view[old.id].superseded_by) == ("b", "a", "a")
    at = datetime(2024, 3, 2, tzinfo=timezone.utc)
    fixed = {r.id: r for r in [old, *twins]} | {r.id: r for r in repairs([old, *twins], at=at)}
    assert repairs(list(fixed.values()), at=at) == []
