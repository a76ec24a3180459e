"""The CLI as separate processes, the way a shell runs it: what one command writes the next one reads.

The console script ends with ``exit_fast`` (no interpreter teardown), so these tests check what
that must not lose: the written memories, the exit codes, the full ``--json`` document on a pipe,
and the lines of a retrieval log written at exit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DIMS = 32


def cli(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    cmd = [sys.executable, "-m", "langchain_lifecycle_memory", "--path", str(store), "--embedder", f"fake:{DIMS}"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=120, env=env, check=False)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli-process") / "memory"
    turns = [("2024-01-01", "I use Vim as my editor"), ("2024-03-01", "I switched to VS Code")]
    for at, turn in [*turns, ("2024-03-02", "I am allergic to peanuts")]:
        done = cli(path, "add", "-u", "alice", "--at", at, turn)
        assert done.returncode == 0, done.stderr
    return path


def test_what_one_process_writes_the_next_one_reads(store: Path) -> None:
    history = cli(store, "history", "-u", "alice", "user", "editor", "--json")
    assert history.returncode == 0, history.stderr
    versions = json.loads(history.stdout)["versions"]
    assert [(v["value"], v["status"]) for v in versions] == [("Vim", "archived"), ("VS Code", "active")]
    listed = json.loads(cli(store, "list", "-u", "alice", "--json").stdout)
    assert {r["value"] for r in listed["records"] if r["status"] == "active"} >= {"VS Code", "peanuts"}


def test_exit_codes_survive_the_fast_exit(store: Path) -> None:
    assert cli(store, "search", "-u", "alice", "editor").returncode == 0
    missing = cli(store, "search", "-u", "nobody", "editor")
    assert missing.returncode == 1 and "No memories for user 'nobody'" in missing.stderr
    assert cli(store, "search", "--no-such-flag").returncode == 2
    nowhere = cli(store.parent / "nowhere", "search", "-u", "alice", "x")
    assert nowhere.returncode == 1 and "No memory store at" in nowhere.stderr
    assert "Traceback" not in missing.stderr + nowhere.stderr


def test_an_export_arrives_whole_on_a_pipe(store: Path) -> None:
    done = cli(store, "export", "-u", "alice", "-")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert sorted(r["value"] for r in lines) == ["VS Code", "Vim", "peanuts"]  # archived Vim included


def test_a_retrieval_log_written_at_exit_is_complete(store: Path, tmp_path: Path) -> None:
    log = tmp_path / "retrievals.jsonl"
    for query in ("editor", "allergies", "what do I use to write code"):
        assert cli(store, "search", "-u", "alice", query, "--log", str(log)).returncode == 0
    entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(entries) == 3
