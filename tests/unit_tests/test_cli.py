"""The ``lifecycle-memory`` CLI as a user sees it: output, JSON, exit codes, friendly errors."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from langchain_lifecycle_memory.cli.main import app
from langchain_lifecycle_memory.graph.memory import LifecycleMemory

runner = CliRunner()


def cli(path: Path, *args: str, input: str | None = None) -> Result:
    return runner.invoke(app, ["--path", str(path), *args], input=input, env={"COLUMNS": "200"})


def as_json(path: Path, *args: str) -> dict:
    result = cli(path, "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "mem"
    memory = LifecycleMemory(path=path)
    for text, at in [
        ("我对花生过敏", "2023-12-20T09:00:00Z"),
        ("我喜欢使用 Vim 编辑器", "2024-01-01T10:00:00Z"),
        ("我现在改用 VS Code 了", "2024-03-01T10:00:00Z"),
    ]:
        memory.add_messages([("user", text)], "u1", at=at)
    return path


def ids(path: Path, user: str = "u1") -> dict[str, dict]:
    return {r["value"] or r["content"]: r for r in as_json(path, "list", "--user", user)["records"]}


# ---------------------------------------------------------------------- help and global behaviour
def test_help_documents_the_exit_codes() -> None:
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "Exit codes" in text and "3 store unreachable" in text and "2 bad usage" in text
    assert "demo" in result.stdout and "doctor" in result.stdout


def test_store_options_work_before_or_after_the_command(store: Path) -> None:
    before = runner.invoke(app, ["--path", str(store), "--json", "list", "--user", "u1"])
    after = runner.invoke(app, ["list", "--user", "u1", "--path", str(store), "--json"])
    assert before.exit_code == after.exit_code == 0
    assert json.loads(before.stdout) == json.loads(after.stdout)


def test_missing_store_is_a_friendly_error(tmp_path: Path) -> None:
    result = cli(tmp_path / "nope", "list", "--user", "u1")
    assert result.exit_code == 1
    assert "No memory store at" in result.stderr and "Traceback" not in result.output


def test_server_down_exits_3_with_a_fix(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = runner.invoke(app, ["--host", "127.0.0.1", "--port", str(port), "--json", "list", "--user", "u1"])
    assert result.exit_code == 3
    assert "Cannot reach the Chroma server" in result.stderr and "chroma run" in result.stderr
    assert json.loads(result.stdout)["exit_code"] == 3


def test_unknown_embedder_is_bad_usage(store: Path) -> None:
    result = cli(store, "--embedder", "word2vec", "list", "--user", "u1")
    assert result.exit_code == 2
    assert "unknown embedder" in result.output


# ---------------------------------------------------------------------- add / search / list / show
def test_add_prints_added_and_archived(tmp_path: Path) -> None:
    first = cli(tmp_path, "add", "我喜欢使用 Vim 编辑器", "--user", "u9", "--at", "2024-01-01")
    assert first.exit_code == 0, first.output
    assert "+1 added, 0 refreshed, 0 archived" in first.stdout and "Vim" in first.stdout
    second = cli(tmp_path, "--json", "add", "我现在改用 VS Code 了", "--user", "u9", "--at", "2024-03-01")
    data = json.loads(second.stdout)
    assert [r["value"] for r in data["added"]] == ["VS Code"]
    assert [(r["value"], r["status"]) for r in data["archived"]] == [("Vim", "archived")]


def test_add_without_a_fact_says_so_and_raw_keeps_it(tmp_path: Path) -> None:
    result = cli(tmp_path, "add", "今天天气怎么样？", "--user", "u9")
    assert result.exit_code == 0 and "Nothing to remember" in result.stdout
    raw = cli(tmp_path, "--json", "add", "今天天气怎么样？", "--user", "u9", "--raw")
    assert json.loads(raw.stdout)["added"][0]["kind"] == "episode"


def test_add_bad_date_is_bad_usage(tmp_path: Path) -> None:
    result = cli(tmp_path, "add", "我喜欢使用 Vim 编辑器", "--user", "u9", "--at", "yesterday-ish")
    assert result.exit_code == 2
    assert "is not a date" in result.output and "ISO 8601" in result.output


def test_search_explain_and_block(store: Path) -> None:
    now = ("--now", "2024-03-02")  # preferences expire after 180 days: replay the conversation's time
    result = cli(store, "search", "我适合用什么工具写 Python？", "--user", "u1", "--explain", "--block", *now)
    assert result.exit_code == 0, result.output
    assert "用户现在改用 VS Code 了" in result.stdout
    assert "archived" in result.stdout and "superseded by" in result.stdout
    assert "<memories>" in result.stdout
    data = as_json(store, "search", "我适合用什么工具写 Python？", "--user", "u1", "--explain", *now)
    assert [r["value"] for r in data["results"]] == ["VS Code"]
    decisions = {c["record"]["value"]: c["decision"] for c in data["explanation"]["candidates"]}
    assert decisions["Vim"] == "archived"


def test_search_as_of_recalls_the_old_version(store: Path) -> None:
    data = as_json(
        store, "search", "用户的编辑器偏好是什么？", "--user", "u1", "--as-of", "2024-01-15", "--now", "2024-03-02"
    )
    assert [r["value"] for r in data["results"]] == ["Vim"]


def test_unknown_user_lists_the_known_ones(store: Path) -> None:
    result = cli(store, "search", "编辑器", "--user", "nobody")
    assert result.exit_code == 1
    assert "No memories for user 'nobody'" in result.stderr and "Known users: u1" in result.stderr


def test_list_filters_by_status(store: Path) -> None:
    everything = as_json(store, "list", "--user", "u1")["records"]
    assert len(everything) == 3
    archived = as_json(store, "list", "--user", "u1", "--status", "archived")["records"]
    assert [r["value"] for r in archived] == ["Vim"]
    assert cli(store, "list", "--user", "u1", "--status", "deleted").exit_code == 2
    table = cli(store, "list", "--user", "u1")
    assert "3 memories of 'u1'" in table.stdout and "user.editor" in table.stdout


def test_show_by_id_prefix_and_unknown_id(store: Path) -> None:
    vim = ids(store)["Vim"]
    result = cli(store, "show", vim["id"][:8], "--user", "u1")
    assert result.exit_code == 0 and vim["id"] in result.stdout and "superseded_by" in result.stdout
    missing = cli(store, "show", "deadbeef", "--user", "u1")
    assert missing.exit_code == 1 and "No memory 'deadbeef'" in missing.stderr


# ---------------------------------------------------------------------- history / edit
def test_history_by_attribute_or_id(store: Path) -> None:
    data = as_json(store, "history", "editor", "--user", "u1")
    assert [(v["value"], v["status"]) for v in data["versions"]] == [("Vim", "archived"), ("VS Code", "active")]
    by_id = as_json(store, "history", ids(store)["Vim"]["id"], "--user", "u1")
    assert by_id["attribute"] == "editor"
    missing = cli(store, "history", "pet", "--user", "u1")
    assert missing.exit_code == 1 and "user.editor" in missing.stderr


def test_edit_value_makes_a_new_version(store: Path) -> None:
    vs = ids(store)["VS Code"]
    result = cli(store, "edit", vs["id"][:8], "--user", "u1", "--value", "Cursor", "--at", "2024-04-01")
    assert result.exit_code == 0, result.output
    assert "+1 added, 0 refreshed, 1 archived" in result.stdout and "用户现在改用 Cursor 了" in result.stdout
    versions = as_json(store, "history", "editor", "--user", "u1")["versions"]
    assert [v["value"] for v in versions] == ["Vim", "VS Code", "Cursor"]
    assert versions[1]["superseded_by"] == versions[2]["id"]


def test_edit_content_or_confidence_in_place(store: Path) -> None:
    allergy = ids(store)["花生"]
    data = as_json(
        store, "edit", allergy["id"], "--user", "u1", "--content", "用户对花生严重过敏", "--confidence", "0.95"
    )
    assert data["updated"]["content"] == "用户对花生严重过敏" and data["updated"]["id"] == allergy["id"]
    assert len(as_json(store, "list", "--user", "u1")["records"]) == 3  # no new version


def test_edit_refuses_archived_and_slotless_values(store: Path) -> None:
    vim = ids(store)["Vim"]
    archived = cli(store, "edit", vim["id"], "--user", "u1", "--content", "x")
    assert archived.exit_code == 1 and "archived" in archived.stderr and "history" in archived.stderr
    episode = as_json(store, "add", "随便记一句", "--user", "u1", "--raw")["added"][0]
    slotless = cli(store, "edit", episode["id"], "--user", "u1", "--value", "x")
    assert slotless.exit_code == 1 and "no slot" in slotless.stderr
    nothing = cli(store, "edit", episode["id"], "--user", "u1")
    assert nothing.exit_code == 2


# ---------------------------------------------------------------------- forget / purge / sweep
def test_forget_by_query_asks_first(store: Path) -> None:
    declined = cli(store, "forget", "--user", "u1", "--query", "忘掉我对花生过敏", input="n\n")
    assert declined.exit_code == 1
    assert "用户对花生过敏" in declined.stdout  # the preview lists what would be archived
    assert ids(store)["花生"]["status"] == "active"
    accepted = cli(store, "forget", "--user", "u1", "--query", "忘掉我对花生过敏", input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert "Archived 1 memory" in accepted.stdout
    assert ids(store)["花生"]["status"] == "archived"


def test_forget_by_id_and_slot(store: Path) -> None:
    data = as_json(store, "forget", "--user", "u1", "--entity", "user", "--attribute", "editor", "--yes")
    assert [r["value"] for r in data["archived"]] == ["VS Code"]
    again = cli(store, "forget", "--user", "u1", "--id", ids(store)["VS Code"]["id"], "--yes")
    assert again.exit_code == 1 and "Nothing live matches" in again.stderr


def test_forget_usage_errors(store: Path) -> None:
    assert cli(store, "forget", "--user", "u1").exit_code == 2
    assert cli(store, "forget", "--user", "u1", "--id", "x", "--query", "y").exit_code == 2
    no_yes = cli(store, "--json", "forget", "--user", "u1", "--query", "忘掉我对花生过敏")
    assert no_yes.exit_code == 2 and "--yes" in no_yes.output
    dry = as_json(store, "forget", "--user", "u1", "--query", "忘掉我对花生过敏", "--dry-run")
    assert dry["would_archive"][0]["record"]["value"] == "花生"
    assert ids(store)["花生"]["status"] == "active"


def test_purge_confirms_then_deletes_everything(store: Path) -> None:
    declined = cli(store, "purge", "--user", "u1", input="n\n")
    assert declined.exit_code == 1 and len(ids(store)) == 3
    done = cli(store, "purge", "--user", "u1", "--yes")
    assert done.exit_code == 0, done.output
    assert "items deleted" in done.stdout
    gone = cli(store, "list", "--user", "u1")
    assert gone.exit_code == 1 and "No memories for user 'u1'" in gone.stderr


def test_sweep_replays_time(store: Path) -> None:
    dry = as_json(store, "sweep", "--now", "2030-01-01", "--dry-run")
    assert (
        dry["dry_run"] is True and dry["archived"] == 0 and dry["deleted"] >= 1
    )  # durable facts stay; old history goes
    done = as_json(store, "sweep", "--now", "2030-01-01")
    assert done["deleted"] == dry["deleted"]
    assert ids(store)["VS Code"]["status"] == "active"
    assert cli(store, "sweep", "--now", "soon").exit_code == 2


# ---------------------------------------------------------------------- reindex / export / import / stats
def test_reindex_switches_the_embedder(store: Path) -> None:
    result = cli(store, "reindex", "--embedder", "fake:16")
    assert result.exit_code == 0, result.output
    assert "reindexed" in result.stdout and "fake:16" in result.stdout
    follows = cli(store, "list", "--user", "u1")  # the store records its embedder: no --embedder needed
    assert follows.exit_code == 0 and "Vim" in follows.stdout, follows.output
    mismatch = cli(store, "--embedder", "usem3", "list", "--user", "u1")  # an explicit other one is refused
    assert mismatch.exit_code == 1 and "add --embedder fake:16" in mismatch.stderr
    assert "Traceback" not in mismatch.output
    assert cli(store, "--embedder", "fake:16", "list", "--user", "u1").exit_code == 0
    again = as_json(store, "reindex", "--embedder", "fake:16")
    assert again["changed"] is False


def test_export_import_round_trip(store: Path, tmp_path: Path) -> None:
    file = tmp_path / "u1.jsonl"
    assert as_json(store, "export", str(file), "--user", "u1")["exported"] == 3
    other = tmp_path / "other"
    report = as_json(other, "import", str(file), "--user", "u2")
    assert report["imported"] == 3 and report["errors"] == []
    assert [v["value"] for v in as_json(other, "history", "editor", "--user", "u2")["versions"]] == ["Vim", "VS Code"]


def test_import_reports_bad_lines_and_keeps_the_good(store: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    as_json(store, "export", str(good), "--all-users")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"oops\n[1, 2]\n{"content": "no namespace"}\n' + good.read_text(), encoding="utf-8")
    target = tmp_path / "target"
    result = cli(target, "import", str(bad))
    assert result.exit_code == 1
    assert "Imported 3 memories" in result.stdout
    assert "line 1" in result.stdout and "not JSON" in result.stdout and "line 2" in result.stdout
    assert "line 3" in result.stdout
    assert len(ids(target)) == 3


def test_import_missing_file(tmp_path: Path) -> None:
    result = cli(tmp_path, "import", str(tmp_path / "missing.jsonl"))
    assert result.exit_code == 1 and "No such file" in result.stderr


def test_stats_counts_and_retrieval_log(store: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    search = ["search", "用户的编辑器偏好是什么？", "--user", "u1", "--log", str(log), "--now", "2024-03-02"]
    assert cli(store, *search).exit_code == 0
    data = as_json(store, "stats", "--log", str(log))
    row = data["users"][0]
    assert row["user"] == "u1" and row["total"] == 3
    assert row["by_status"] == {"active": 2, "archived": 1}
    assert row["by_kind"]["preference"] == 2
    assert data["retrievals"]["total"]["retrievals"] == 1
    table = cli(store, "stats", "--log", str(log))
    assert "retrieval log" in table.stdout and "memories/u1" in table.stdout
    missing = cli(store, "stats", "--log", str(tmp_path / "none.jsonl"))
    assert missing.exit_code == 1 and "No retrieval log" in missing.stderr


def test_json_errors_are_json(store: Path) -> None:
    result = cli(store, "--json", "show", "deadbeef", "--user", "u1")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {"error": result.stderr.split("Error: ", 1)[1].strip(), "exit_code": 1}


def test_import_skipped_lines_exit_1_and_old_exports_stay_archived(store: Path, tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"
    as_json(store, "export", str(old), "--user", "u1")
    code = ids(store)["VS Code"]["id"]
    assert cli(store, "edit", code, "--user", "u1", "--value", "Neovim", "--at", "2024-05-01").exit_code == 0
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(old.read_bytes() + b'{"namespace": "memories.u1", "content": "x"}\n' + b"[" * 50_000 + b"\n")
    result = cli(store, "import", str(mixed))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "line 4" in result.stdout and "line 5" in result.stdout and "exit code 1" in result.stdout
    assert "imported as archived" in result.stdout
    versions = as_json(store, "history", "editor", "--user", "u1")["versions"]
    assert [(v["value"], v["status"]) for v in versions] == [
        ("Vim", "archived"),
        ("VS Code", "archived"),
        ("Neovim", "active"),
    ]
