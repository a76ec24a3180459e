from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from langchain_lifecycle_memory import MemoryRecord
from langchain_lifecycle_memory.lifecycle.observability import RetrievalLog, retrieval_stats
from langchain_lifecycle_memory.read.fusion import RetrievalCandidate, RetrievalExplanation
from langchain_lifecycle_memory.write.redaction import Redactor

U1 = ("memories", "u1")
U2 = ("memories", "u2")
T = datetime(2024, 3, 1, 10, tzinfo=timezone.utc)


def test_record_writes_one_structured_line(tmp_path: Path) -> None:
    log = RetrievalLog(tmp_path / "logs" / "r.jsonl")
    record = MemoryRecord(namespace=U1, content="用户喜欢 VS Code")
    log.record(
        U1,
        "我用什么编辑器？",
        returned=[(record, 0.82), {"id": "r2", "score": 0.4}],
        dropped=[("r0", "archived", 0.77), {"id": "r9", "reason": "below_threshold"}],
        tokens=31,
        at=T,
        k=5,
    )
    (line,) = (tmp_path / "logs" / "r.jsonl").read_text(encoding="utf-8").splitlines()
    data = json.loads(line)
    assert data["namespace"] == ["memories", "u1"] and data["query"] == "我用什么编辑器？"
    assert data["time"].startswith("2024-03-01T10:00:00")
    assert data["returned"] == [{"id": record.id, "score": 0.82}, {"id": "r2", "score": 0.4}]
    assert data["dropped"][0] == {"id": "r0", "reason": "archived", "score": 0.77}
    assert data["dropped"][1]["reason"] == "below_threshold"
    assert data["tokens"] == 31 and data["extra"] == {"k": 5}


def test_rotation_bounds_the_size(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    log = RetrievalLog(path, max_bytes=2_000, backups=2)
    for i in range(200):
        log.record(U1 if i % 2 else U2, f"query number {i}", returned=[(f"id{i}", 0.5)])
    files = log.files()
    assert [p.name for p in files] == ["r.jsonl.2", "r.jsonl.1", "r.jsonl"]
    assert all(p.stat().st_size <= 2_000 for p in files)
    events = list(log.events())
    assert events[-1].query == "query number 199"
    assert [int(e.query.split()[-1]) for e in events] == sorted(int(e.query.split()[-1]) for e in events)
    assert len(events) < 200  # the oldest lines were rotated away


def test_purge_removes_a_tenant_from_every_file(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    log = RetrievalLog(path, max_bytes=1_500, backups=3)
    for i in range(60):
        ns = U1 if i % 3 == 0 else U2 if i % 3 == 1 else ("memories", "u1", "sub")
        log.record(ns, f"secret-{ns[-1]}-{i}")
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"time": "2024-01-01", "namespace": ["memories", "u1"], "query": "torn wri\n')
    assert len(log.files()) == 4

    removed = log.purge(U1)

    assert removed > 0
    text = "".join(p.read_text(encoding="utf-8") for p in log.files())
    assert "secret-u1" not in text and "secret-sub" not in text and "torn" not in text
    assert "secret-u2" in text
    assert log.purge(U1) == 0
    assert retrieval_stats(path).namespaces.keys() == {"memories/u2"}
    with pytest.raises(ValueError, match="non-empty"):
        log.purge(())


def test_stats_per_namespace(tmp_path: Path) -> None:
    log = RetrievalLog(tmp_path / "r.jsonl")
    for score in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
        log.record(U1, "q", returned=[("a", score)], tokens=10)
    for _ in range(5):
        log.record(U1, "weather?", dropped=[("a", "below_threshold", 0.05)])
    log.record(U2, "q", returned=[("b", 0.5), ("c", 0.7)], dropped=[("d", "archived")], tokens=20)

    stats = retrieval_stats(log)

    u1 = stats.namespaces["memories/u1"]
    assert (u1.retrievals, u1.hits, u1.returned) == (15, 10, 10)
    assert u1.hit_rate == pytest.approx(10 / 15)
    assert (u1.scores.min, u1.scores.max) == (0.1, 1.0)
    assert u1.scores.p50 == pytest.approx(0.55) and u1.scores.p90 == pytest.approx(0.91)
    assert u1.dropped == {"below_threshold": 5}
    u2 = stats.namespaces["memories/u2"]
    assert u2.hit_rate == 1.0 and u2.dropped == {"archived": 1} and u2.tokens_mean == 20
    assert stats.total.retrievals == 16 and stats.total.scores.count == 12
    only_u2 = retrieval_stats(tmp_path / "r.jsonl", namespace_prefix=U2)
    assert list(only_u2.namespaces) == ["memories/u2"]
    assert retrieval_stats(tmp_path / "missing.jsonl").total.retrievals == 0


def test_redactor_masks_queries(tmp_path: Path) -> None:
    log = RetrievalLog(tmp_path / "r.jsonl", redactor=Redactor())
    event = log.record(U1, "给 13761245093 发短信")
    assert event.query == "给 [PHONE] 发短信"
    assert "13761245093" not in (tmp_path / "r.jsonl").read_text(encoding="utf-8")


def test_record_explanation(tmp_path: Path) -> None:
    kept = MemoryRecord(namespace=U1, content="uses VS Code")
    old = MemoryRecord(namespace=U1, content="used Vim", status="archived")
    explanation = RetrievalExplanation(
        query="editor?",
        namespace=U1,
        fusion="calibrated",
        min_score=0.3,
        k=3,
        now=T,
        candidates=[
            RetrievalCandidate(record=kept, decision="kept", fused=0.8, rank=0),
            RetrievalCandidate(record=old, decision="archived", fused=0.7),
        ],
    )
    log = RetrievalLog(tmp_path / "r.jsonl")
    event = log.record_explanation(explanation, tokens=12)
    assert [(h.id, h.score) for h in event.returned] == [(kept.id, 0.8)]
    assert [(d.id, d.reason) for d in event.dropped] == [(old.id, "archived")]
    assert event.time == T and event.tokens == 12


def test_an_unwritable_log_does_not_break_the_caller(tmp_path: Path) -> None:
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    log = RetrievalLog(blocker / "r.jsonl")
    event = log.record(U1, "q", returned=[("a", 0.5)])
    assert event.returned[0].id == "a" and log.files() == []
