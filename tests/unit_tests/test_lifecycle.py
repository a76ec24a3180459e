from __future__ import annotations

import importlib.util
import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import chromadb
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord, MemoryStatus
from langchain_lifecycle_memory.lifecycle.observability import RetrievalLog
from langchain_lifecycle_memory.lifecycle.operations import (
    forget,
    forget_query_text,
    preview_forget,
    purge,
    redact_record,
    restore,
    sweep,
)
from langchain_lifecycle_memory.store import maintenance as M
from langchain_lifecycle_memory.store.retention import RetentionPolicy
from langchain_lifecycle_memory.write.redaction import Redactor

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
U1 = ("memories", "u1")
U2 = ("memories", "u2")
ROOT = Path(__file__).resolve().parents[2]


def rec(ns: tuple[str, ...] = U1, content: str = "x", **kw: Any) -> MemoryRecord:
    kw.setdefault("valid_from", T0)
    kw.setdefault("created_at", kw["valid_from"])
    kw.setdefault("updated_at", kw["valid_from"])
    return MemoryRecord(namespace=ns, content=content, **kw)


@pytest.fixture
def fake_store() -> ChromaMemoryStore:
    return ChromaMemoryStore(
        client=chromadb.EphemeralClient(),
        embeddings=DeterministicFakeEmbedding(size=16),
        collection_prefix=f"t{uuid.uuid4().hex[:10]}",
    )


# ---------------------------------------------------------------------- sweep
def test_sweep_archives_expired_with_valid_to_at_the_deadline(fake_store: ChromaMemoryStore) -> None:
    deadline = T0 + timedelta(days=7)
    week = rec(content="craving Thai food this week", kind="preference", expires_at=deadline)
    pending = rec(content="maybe likes jazz", kind="preference", status="pending", expires_at=deadline)
    profile = rec(content="name is Dana", kind="profile")
    fake_store.put_records([week, pending, profile])
    now = T0 + timedelta(days=10)

    report = sweep(fake_store, now=now)

    assert report.archived == 2 and report.deleted == 0
    for r in (week, pending):
        got = fake_store.get_record(U1, r.id)
        assert got is not None and got.status is MemoryStatus.ARCHIVED
        assert got.valid_to == deadline and got.updated_at == now
    assert fake_store.get_record(U1, profile.id).status is MemoryStatus.ACTIVE  # type: ignore[union-attr]
    assert [r.content for r, _ in fake_store.search_records(U1, "Thai food", now=now)] == ["name is Dana"]


def test_sweep_is_idempotent(fake_store: ChromaMemoryStore) -> None:
    fake_store.put_records([rec(content=f"event {i}", kind="event") for i in range(5)])
    now = T0 + timedelta(days=120)
    assert sweep(fake_store, now=now).archived == 5
    second = sweep(fake_store, now=now)
    assert (second.archived, second.deleted, second.namespaces) == (0, 0, [])


def test_sweep_stamps_kind_defaults_for_records_without_deadline(fake_store: ChromaMemoryStore) -> None:
    event = rec(content="went to a concert", kind="event")  # 90 days by default
    fact = rec(content="owns a bike", kind="fact")  # 365 days
    custom = rec(content="custom kind", kind="hobby_note")  # default_ttl None: never
    fake_store.put_records([event, fact, custom])
    assert sweep(fake_store, now=T0 + timedelta(days=89)).archived == 0
    assert sweep(fake_store, now=T0 + timedelta(days=91)).namespaces[0].archived == [event.id]
    policy = RetentionPolicy(default_ttl=30)
    assert sweep(fake_store, now=T0 + timedelta(days=91), policy=policy).namespaces[0].archived == [custom.id]


def test_sweep_deletes_archived_history_after_retention(fake_store: ChromaMemoryStore) -> None:
    day1, day300 = T0 + timedelta(days=1), T0 + timedelta(days=300)
    old = rec(content="used Vim", status="archived", valid_to=day1, updated_at=day1)
    recent = rec(content="used Emacs", status="archived", valid_to=day300, updated_at=day300)
    fake_store.put_records([old, recent])

    report = sweep(fake_store, now=T0 + timedelta(days=400))

    assert report.deleted == 1 and report.namespaces[0].deleted == [old.id]
    assert fake_store.get_record(U1, old.id) is None
    assert fake_store.get_record(U1, recent.id) is not None
    keep_forever = RetentionPolicy(archived_retention=None)
    assert sweep(fake_store, now=T0 + timedelta(days=5000), policy=keep_forever).deleted == 0


def test_sweep_dry_run_and_namespace_prefix(fake_store: ChromaMemoryStore) -> None:
    a, b = rec(U1, "event a", kind="event"), rec(U2, "event b", kind="event")
    fake_store.put_records([a, b])
    now = T0 + timedelta(days=100)

    dry = sweep(fake_store, now=now, dry_run=True)
    assert dry.archived == 2
    assert fake_store.get_record(U1, a.id).status is MemoryStatus.ACTIVE  # type: ignore[union-attr]

    only_u2 = sweep(fake_store, now=now, namespace_prefix=U2)
    assert [n.namespace for n in only_u2.namespaces] == [U2]
    assert fake_store.get_record(U1, a.id).status is MemoryStatus.ACTIVE  # type: ignore[union-attr]
    assert fake_store.get_record(U2, b.id).status is MemoryStatus.ARCHIVED  # type: ignore[union-attr]


def test_noop_sweep_reads_no_whole_collection(fake_store: ChromaMemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_store.put_records([rec(content=f"fresh {i}", kind="preference") for i in range(50)])
    fake_store.put_records([rec(U2, f"other {i}", kind="profile") for i in range(50)])
    wheres: list[Any] = []
    real_find = fake_store.find_records

    def spy(ns: tuple[str, ...], where: dict[str, Any]) -> list[MemoryRecord]:
        wheres.append(where)
        found = real_find(ns, where)
        assert found == []
        return found

    monkeypatch.setattr(fake_store, "find_records", spy)
    monkeypatch.setattr(fake_store, "list_records", lambda *a, **k: pytest.fail("sweep listed a whole namespace"))
    report = sweep(fake_store, now=T0 + timedelta(days=1))
    assert report.scanned_namespaces == 2 and report.archived == 0
    assert len(wheres) == 2 and all(w for w in wheres)


# ---------------------------------------------------------------------- forget
@pytest.fixture
def rowan(mem_store: ChromaMemoryStore) -> ChromaMemoryStore:
    mem_store.put_records(
        [
            rec(
                content="The user drinks an oat milk latte every morning.",
                entity="user",
                attribute="drink",
                value="oat milk latte",
                kind="preference",
                status="archived",
                valid_to=T0 + timedelta(days=3),
            ),
            rec(
                content="The user works as a data analyst at a logistics company.",
                entity="user",
                attribute="job",
                value="data analyst",
                kind="profile",
            ),
            rec(
                content="用户现在早上喝不加奶不加糖的黑咖啡",
                entity="user",
                attribute="drink",
                value="黑咖啡",
                kind="preference",
                valid_from=T0 + timedelta(days=3),
            ),
            rec(
                content="The user's email address is dana@example.com.",
                entity="user",
                attribute="email",
                value="dana@example.com",
                kind="sensitive",
            ),
            rec(
                content="The user's dog is a border collie.",
                entity="user",
                attribute="dog_breed",
                value="border collie",
            ),
        ]
    )
    return mem_store


def test_forget_by_query_archives_only_the_black_coffee(rowan: ChromaMemoryStore) -> None:
    now = T0 + timedelta(days=11)
    assert forget_query_text("忘掉我喝黑咖啡的习惯") == "我喝黑咖啡的习惯"

    archived = forget(rowan, U1, query="忘掉我喝黑咖啡的习惯", now=now)

    assert [r.value for r in archived] == ["黑咖啡"]
    assert archived[0].status is MemoryStatus.ARCHIVED
    active = {r.value for r in rowan.list_records(U1, statuses="active")}
    assert active == {"data analyst", "dana@example.com", "border collie"}
    assert all("咖啡" not in r.content for r, _ in rowan.search_records(U1, "我早上喝什么？", now=now))
    # Forgotten is never true again, not even for a point-in-time question; the replaced latte still is.
    was = rowan.search_records(U1, "早上喝什么", as_of=T0 + timedelta(days=5), now=now)
    assert "黑咖啡" not in [r.value for r, _ in was]
    assert "oat milk latte" in [r.value for r, _ in rowan.search_records(U1, "早上喝什么", as_of=T0, now=now)]
    assert "黑咖啡" in [r.value for r in rowan.history(U1, "user", "drink")]  # the audit trail keeps it

    restore(rowan, U1, archived[0].id, now=now)
    was = rowan.search_records(U1, "早上喝什么", as_of=T0 + timedelta(days=5), now=now)
    assert "黑咖啡" in [r.value for r, _ in was]


def test_preview_forget_writes_nothing_then_forget_by_slot(rowan: ChromaMemoryStore) -> None:
    preview = preview_forget(rowan, U1, entity="user", attribute="email")
    assert [(m.reason, m.record.value) for m in preview] == [("slot", "dana@example.com")]
    assert rowan.count_records(U1, statuses="active") == 4

    archived = forget(rowan, U1, entity="user", attribute="email")
    assert [r.value for r in archived] == ["dana@example.com"]
    assert forget(rowan, U1, entity="user", attribute="email") == []  # nothing live left
    assert [r.status for r in rowan.history(U1, "user", "email")] == [MemoryStatus.ARCHIVED]


def test_forget_by_english_query_and_by_id(rowan: ChromaMemoryStore) -> None:
    assert [r.value for r in forget(rowan, U1, query="Please forget my job")] == ["data analyst"]
    dog = rowan.list_records(U1, attribute="dog_breed")[0]
    assert [r.id for r in forget(rowan, U1, record_id=dog.id)] == [dog.id]
    assert forget(rowan, U1, query="forget everything") == []
    assert forget(rowan, U1, query="忘掉吧") == []


def test_forget_everything_about_a_person_named_in_the_request(mem_store: ChromaMemoryStore) -> None:
    said = [
        ("friend_wenceslas", "The user's friend Wenceslas does taxidermy."),
        (None, "Wenceslas orders glass eyes from Prague."),
        ("user", "The user collects slide rules."),
        (None, "用户的表姐婉清在学竹编。"),
        (None, "婉清下个月去宁德。"),
        (None, "用户每年春天去宁德。"),
    ]
    mem_store.put_records([rec(content=c, entity=e) for e, c in said])

    gone = forget(mem_store, U1, query="Forget everything about Wenceslas")
    assert sorted(r.content for r in gone) == ["The user's friend Wenceslas does taxidermy.", said[1][1]]
    gone = forget(mem_store, U1, query="忘掉关于婉清的一切")
    assert sorted(r.content for r in gone) == sorted(["用户的表姐婉清在学竹编。", "婉清下个月去宁德。"])
    left = {r.content for r in mem_store.list_records(U1, statuses="active")}
    assert left == {"The user collects slide rules.", "用户每年春天去宁德。"}


@pytest.mark.parametrize(
    ("user", "said", "ask", "forgotten"),
    [
        (
            "en",
            ["I work at Bergstrand Freight as a cargo planner.", "I live in Hammerfest with my partner.",
             "I play the hardanger fiddle.", "I'm allergic to shellfish."],
            "please forget where I work",
            "The user works at Bergstrand Freight as a cargo planner.",
        ),
        ("zh", ["我在德邦物流上班", "我住在端州区", "我周末练书法"], "忘掉我住哪", "用户住在端州区"),
    ],
)  # fmt: skip
def test_forget_by_a_question_forgets_what_the_question_recalls(
    tmp_path: Path, user: str, said: list[str], ask: str, forgotten: str
) -> None:
    """Words that name no value or slot ("where I work") forget what a search for them finds first, only that."""
    from langchain_lifecycle_memory import LifecycleMemory

    memory = LifecycleMemory(path=tmp_path / "m")
    for text in said:
        memory.add_messages([("user", text)], user, at="2024-01-01")

    assert [r.content for r in memory.forget(user, query=ask)] == [forgotten]
    assert [r.content for r in memory.list(user, statuses=MemoryStatus.ARCHIVED)] == [forgotten]
    assert forgotten not in memory.inject(ask.removeprefix("please forget ").removeprefix("忘掉"), user).text


def test_forget_by_a_question_nothing_answers_forgets_nothing(tmp_path: Path) -> None:
    """No password is stored: the job, shown as general context for the words, is no answer to forget."""
    from langchain_lifecycle_memory import LifecycleMemory

    memory = LifecycleMemory(path=tmp_path / "m")
    for text in ("I work nights as a hotel night auditor.", "I grow giant marrows for the village show."):
        memory.add_messages([("user", text)], "u", at="2024-01-01")

    assert memory.forget("u", query="delete my home wifi password, I changed it anyway") == []
    assert [r.status.value for r in memory.list("u")] == ["active", "active"]


def test_forget_by_a_question_whose_topic_alone_points_somewhere_forgets_nothing(tmp_path: Path) -> None:
    """ "忘掉我的爱好" routed to the employer (nothing else matched its words): a forget needs the words to match."""
    from langchain_lifecycle_memory import LifecycleMemory

    memory = LifecycleMemory(path=tmp_path / "m")
    for text in ("我在德邦物流上班", "我住在端州区", "我有高血压"):
        memory.add_messages([("user", text)], "u", at="2024-01-01")

    assert memory.forget("u", query="忘掉我的爱好") == []
    assert memory.forget("u", query="忘掉我的病史") == []
    assert {r.status.value for r in memory.list("u")} == {"active"}
    assert [r.content for r in memory.forget("u", query="忘掉我住哪")] == ["用户住在端州区"]


def test_forget_needs_exactly_one_selector(rowan: ChromaMemoryStore) -> None:
    with pytest.raises(ValueError, match="exactly one"):
        forget(rowan, U1)
    with pytest.raises(ValueError, match="exactly one"):
        forget(rowan, U1, query="x", attribute="email")


# ---------------------------------------------------------------------- purge
MARKER = "ZQXPURGEMARKER7731"
MARKER_ZH = "独一无二的紫色长颈鹿标记"


def _grep(folder: Path) -> list[str]:
    needles = [MARKER.encode(), MARKER_ZH.encode("utf-8")]
    return [str(p) for p in folder.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in needles)]


def _victim_records(n: int) -> list[MemoryRecord]:
    return [
        rec(
            content=f"{MARKER} {MARKER_ZH} fact number {i}",
            entity="user",
            attribute="note",
            value=f"{MARKER}-{i}",
            status=("active", "pending", "archived")[i % 3],
            valid_to=T0 + timedelta(days=1) if i % 3 == 2 else None,
        )
        for i in range(n)
    ]


def test_purge_leaves_no_trace_on_disk(tmp_path: Path) -> None:
    folder = tmp_path / "chroma"
    store = ChromaMemoryStore(folder, embeddings=DeterministicFakeEmbedding(size=16), collection_prefix="purge")
    store.put_records([rec(U2, f"other tenant fact {i}", id=f"o{i}") for i in range(150)])
    store.put_records(_victim_records(1200))  # past Chroma's HNSW batch, so index files exist
    store.put_records([rec(("memories", "u1", "sub"), f"{MARKER} nested namespace")])
    log = RetrievalLog(tmp_path / "logs" / "retrievals.jsonl")
    log.record(U1, f"query with {MARKER}", returned=[("a", 0.9)])
    log.record(U2, "other tenant query", returned=[("o1", 0.8)])
    assert _grep(folder)

    report = purge(store, U1, log=log)

    assert report.items_deleted == 1201 and report.log_lines_removed == 1
    assert report.compaction is not None and report.compaction.supported
    assert report.compaction.method == "chroma vacuum"
    assert _grep(folder) == []
    assert _grep(tmp_path / "logs") == []
    assert store.count_records(U1) == 0 and store.list_records(U1) == []
    assert store.count_records(U2) == 150
    assert [r.id for r, _ in store.search_records(U2, "other tenant fact 7", k=1)] == ["o7"]
    reopened = ChromaMemoryStore(folder, embeddings=DeterministicFakeEmbedding(size=16), collection_prefix="purge")
    assert reopened.count_records(U2) == 150 and reopened.count_records(U1) == 0
    assert [r.id for r, _ in reopened.search_records(U2, "other tenant fact 9", k=1)] == ["o9"]


def test_purge_in_memory_reports_nothing_to_compact(fake_store: ChromaMemoryStore) -> None:
    fake_store.put_records(_victim_records(6) + [rec(U2, "stays")])
    report = purge(fake_store, U1)
    assert report.items_deleted == 6 and report.namespaces == [U1]
    assert report.compaction is not None and not report.compaction.supported
    assert "in-memory" in report.compaction.reason
    assert fake_store.count_records(U2) == 1


def test_compaction_on_a_server_is_the_operators_job() -> None:
    from types import SimpleNamespace

    server_store: Any = SimpleNamespace(persist_directory=None)  # a `chroma run` client: no folder of ours
    report = M.compact(server_store)
    assert not report.supported and "operator" in report.reason


def test_purge_refuses_an_empty_prefix(fake_store: ChromaMemoryStore) -> None:
    with pytest.raises(ValueError, match="empty"):
        purge(fake_store, ())


# ---------------------------------------------------------------------- PII
def test_redact_record_masks_content_and_value() -> None:
    r = rec(content="我的手机号是 13761245093，邮箱 dana@example.com", attribute="phone", value="13761245093")
    clean = redact_record(r)
    assert "13761245093" not in clean.content and "dana@example.com" not in clean.content
    assert clean.value == "[PHONE]" and clean.metadata["pii_redacted"] == ["cn_mobile", "email"]
    assert clean.id == r.id and clean.namespace == r.namespace
    assert redact_record(rec(content="no pii here")).metadata == {}
    dropped = redact_record(rec(content="13761245093", value="13761245093"), Redactor(mode="drop"))
    assert dropped.content == "[PHONE]" and dropped.value is None


# ---------------------------------------------------------------------- bloat
def _bloat_module() -> Any:
    spec = importlib.util.spec_from_file_location("bloat_curve", ROOT / "benchmarks" / "bloat_curve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bloat_curve"] = module
    spec.loader.exec_module(module)
    return module


def test_default_policy_plateaus_while_append_only_grows() -> None:
    bloat = _bloat_module()
    # The benchmark sweeps daily; every 14 days keeps this test fast and shows the same shape.
    result = bloat.simulate(days=365, seed=7, sweep_every=14)
    swept_end, baseline_end = result.at(365)
    assert baseline_end > 4 * swept_end
    assert baseline_end - result.at(365 - 91)[1] > 0.8 * result.at(91)[1]  # the baseline keeps growing
    # What expires by kind (events, raw turns) levels off; statements with no time limit stay by design.
    transient = dict(zip(result.days, result.transient))
    at = {d: transient[max(x for x in result.days if x <= d)] for d in (91, 365 - 91, 365)}
    assert at[91] > 100 and abs(at[365] - at[365 - 91]) < 0.15 * at[91]
