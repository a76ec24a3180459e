from __future__ import annotations

import io
import json
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import chromadb
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord, MemorySource
from langchain_lifecycle_memory.lifecycle.portability import export_records, import_records

T0 = datetime(2024, 1, 1, 9, 30, tzinfo=timezone.utc)
U1 = ("memories", "u1")
U2 = ("memories", "u2")


def _store() -> ChromaMemoryStore:
    return ChromaMemoryStore(
        client=chromadb.EphemeralClient(),
        embeddings=DeterministicFakeEmbedding(size=8),
        collection_prefix=f"p{uuid.uuid4().hex[:10]}",
    )


@pytest.fixture
def filled() -> ChromaMemoryStore:
    store = _store()
    vim = MemoryRecord(
        namespace=U1,
        content="用户喜欢使用 Vim 编辑器",
        entity="user",
        attribute="editor",
        value="Vim",
        kind="preference",
        confidence=0.9,
        source=MemorySource(extractor="llm", thread_id="t1", message_ids=["m1", "m2"]),
        created_at=T0,
        updated_at=T0 + timedelta(days=60),
        valid_from=T0,
        status="archived",
        valid_to=T0 + timedelta(days=60),
        metadata={"note": {"nested": [1, 2.5, "三"]}},
    )
    code = MemoryRecord(
        namespace=U1,
        content="The user now uses VS Code.",
        entity="user",
        attribute="editor",
        value="VS Code",
        supersedes=vim.id,
        created_at=T0 + timedelta(days=60),
        updated_at=T0 + timedelta(days=60),
        valid_from=T0 + timedelta(days=60),
        expires_at=T0 + timedelta(days=240),
    )
    vim = vim.model_copy(update={"superseded_by": code.id})
    pending = MemoryRecord(namespace=U2, content="maybe likes jazz", status="pending", confidence=0.3, created_at=T0)
    store.put_records([vim, code, pending])
    store.put(U1, "plain-item", {"not": "a record"})
    return store


def test_round_trip_is_exact(filled: ChromaMemoryStore, tmp_path: Path) -> None:
    first = tmp_path / "export.jsonl"
    assert export_records(filled, first) == 3
    lines = first.read_text(encoding="utf-8").splitlines()
    assert {json.loads(line)["status"] for line in lines} == {"active", "archived", "pending"}
    assert json.loads(lines[0])["namespace"] == ["memories", "u1"]
    assert "用户喜欢使用 Vim 编辑器" in first.read_text(encoding="utf-8")  # readable, not \\u-escaped
    assert all("embedding" not in json.loads(line) for line in lines)

    fresh = _store()
    report = import_records(fresh, first)
    assert report.ok and report.imported == 3 and report.namespaces == [U1, U2]

    second = tmp_path / "again.jsonl"
    export_records(fresh, second)
    assert second.read_bytes() == first.read_bytes()
    restored = fresh.history(U1, "user", "editor")
    assert [r.value for r in restored] == ["Vim", "VS Code"]
    assert restored[0].superseded_by == restored[1].id and restored[0].metadata == {"note": {"nested": [1, 2.5, "三"]}}


def test_bad_lines_are_reported_and_good_lines_imported(filled: ChromaMemoryStore) -> None:
    buffer = io.StringIO()
    export_records(filled, buffer, namespace_prefix=U1)
    good = buffer.getvalue().splitlines()
    bad = [
        "{not json",
        json.dumps({"namespace": ["memories", "u1"], "content": "   "}),
        json.dumps({"namespace": ["memories", "u1"], "content": "x", "status": "deleted"}),
        json.dumps({"content": "no namespace"}),
        json.dumps(["a", "list"]),
        json.dumps({"namespace": ["langgraph", "x"], "content": "reserved root"}),
    ]
    text = "\n".join([good[0], *bad, "", good[1]]) + "\n"
    fresh = _store()

    report = import_records(fresh, io.StringIO(text))

    assert report.imported == 2 and not report.ok
    assert [e.line for e in report.errors] == [2, 3, 4, 5, 6, 7]
    reasons = [e.reason for e in report.errors]
    assert "not JSON" in reasons[0]
    assert "content" in reasons[1]
    assert "status" in reasons[2]
    assert "namespace" in reasons[3]
    assert "object" in reasons[4]
    assert "reserved" in reasons[5]
    assert fresh.count_records(U1) == 2


def test_import_into_another_namespace(filled: ChromaMemoryStore, tmp_path: Path) -> None:
    path = tmp_path / "u1.jsonl"
    assert export_records(filled, path, namespace_prefix=U1) == 2
    target = ("memories", "u1_restored")
    fresh = _store()
    report = import_records(fresh, path, namespace=target)
    assert report.namespaces == [target] and fresh.count_records(target) == 2
    assert fresh.count_records(U1) == 0
    assert import_records(fresh, path, namespace=target).imported == 2  # same ids: updated, not duplicated
    assert fresh.count_records(target) == 2


# ---------------------------------------------------------------------- import is all-or-report (issue 10, item 6)
def _line(**fields: object) -> bytes:
    base = {"namespace": ["memories", "u1"], "content": "plain memory", "created_at": T0.isoformat()}
    return json.dumps({**base, **fields}).encode()


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (_line(id="s", namespace="memories.u1"), "namespace"),
        (b'{"id": "b", "namespace": ["memories", "u1"], "content": "caf\xe9"}', "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"id": "d", "metadata": ' + b'{"a": ' * 5_000 + b"1" + b"}" * 5_000 + b"}", "nested too deeply"),
        (_line(id="x" * 2000), "1024"),
        (_line(id="u", content="bad \ud800 text"), "content"),
        (_line(id="m", metadata={"note": "bad \udc00"}), "metadata.note"),
        (_line(id="n", content="nul \x00 byte"), "NUL"),
    ],
    ids=[
        "namespace-string",
        "invalid-utf8",
        "deep-array",
        "deep-metadata",
        "long-id",
        "surrogate",
        "surrogate-meta",
        "nul",
    ],
)
def test_each_bad_line_is_listed_and_the_good_ones_land(tmp_path: Path, bad: bytes, reason: str) -> None:
    good = [_line(id=f"ok{i}", content=f"memory number {i}") for i in range(300)]
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\n".join([*good[:260], bad, *good[260:]]) + b"\n")
    fresh = _store()

    report = import_records(fresh, path)

    assert [e.line for e in report.errors] == [261], report.errors
    assert reason in report.errors[0].reason
    assert report.imported == 300 and fresh.count_records(U1) == 300
    assert {r.content for r in fresh.list_records(U1)} == {f"memory number {i}" for i in range(300)}


def test_reimporting_an_old_export_never_reactivates_an_archived_value(filled: ChromaMemoryStore) -> None:
    old = io.StringIO()
    export_records(filled, old, namespace_prefix=U1)
    code = next(r for r in filled.list_records(U1, now=T0) if r.value == "VS Code")  # before its deadline
    later = T0 + timedelta(days=90)
    neovim = MemoryRecord(
        namespace=U1,
        content="The user now uses Neovim.",
        entity="user",
        attribute="editor",
        value="Neovim",
        supersedes=code.id,
        created_at=later,
        updated_at=later,
        valid_from=later,
    )
    archived = code.transition("archived", at=later, superseded_by=neovim.id)
    filled.put_records([archived, neovim])

    report = import_records(filled, io.StringIO(old.getvalue()))

    assert report.ok and report.imported == 2
    versions = filled.history(U1, "user", "editor")
    assert [(r.value, r.status.value) for r in versions] == [
        ("Vim", "archived"),
        ("VS Code", "archived"),
        ("Neovim", "active"),
    ]
    assert versions[1].superseded_by == neovim.id and versions[1].valid_to == later
    assert [e.line for e in report.archived] == [2] and "stays archived" in report.archived[0].reason


def test_importing_an_older_value_from_another_store_archives_it_behind_the_newer(filled: ChromaMemoryStore) -> None:
    later = T0 + timedelta(days=90)
    other = _store()
    emacs = MemoryRecord(
        namespace=U1,
        content="The user uses Emacs.",
        entity="user",
        attribute="editor",
        value="Emacs",
        created_at=later,
        updated_at=later,
        valid_from=later,
    )
    other.put_records([emacs])
    old = io.StringIO()
    export_records(filled, old, namespace_prefix=U1)

    report = import_records(other, io.StringIO(old.getvalue()))

    versions = other.history(U1, "user", "editor")
    assert [(r.value, r.status.value) for r in versions] == [
        ("Vim", "archived"),
        ("VS Code", "archived"),
        ("Emacs", "active"),
    ]
    code = versions[1]
    assert code.superseded_by == emacs.id and code.valid_to == later
    assert [e.line for e in report.archived] == [2] and "newer version of user.editor" in report.archived[0].reason
    newer = MemoryRecord(
        namespace=U1,
        content="The user uses Zed.",
        entity="user",
        attribute="editor",
        value="Zed",
        created_at=later + timedelta(days=1),
        updated_at=later + timedelta(days=1),
        valid_from=later + timedelta(days=1),
    )
    import_records(other, io.StringIO(json.dumps(newer.model_dump(mode="json")) + "\n"))
    active = [r for r in other.history(U1, "user", "editor") if r.status.value == "active"]
    assert [r.value for r in active] == ["Zed"]
    assert other.get_record(U1, emacs.id).superseded_by == newer.id


def test_a_file_saved_with_a_byte_order_mark_imports_whole(tmp_path: Path) -> None:
    path = tmp_path / "from-notepad.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"\n".join(_line(id=f"ok{i}", content=f"memory number {i}") for i in range(3)))
    fresh = _store()

    report = import_records(fresh, path)

    assert report.errors == [] and report.imported == 3  # the first record was lost to the mark
    assert fresh.count_records(U1) == 3


def test_a_json_array_is_named_for_what_it_is_and_nothing_is_half_imported(tmp_path: Path) -> None:
    records = [json.loads(_line(id=f"ok{i}", content=f"memory number {i}")) for i in range(3)]
    path = tmp_path / "pretty.json"
    path.write_text(json.dumps(records, indent=2), encoding="utf-8")
    fresh = _store()

    report = import_records(fresh, path)

    assert [e.line for e in report.errors] == [1] and "JSON Lines" in report.errors[0].reason  # one line each
    assert report.imported == 0 and fresh.count_records(U1) == 0
