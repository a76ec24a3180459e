"""Tenant ids: one codec for every entry point; an id is never a pattern (issue 10, items 1-2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory, LifecycleRetriever
from langchain_lifecycle_memory.cli.main import app
from langchain_lifecycle_memory.lifecycle.observability import RetrievalLog, retrieval_stats
from langchain_lifecycle_memory.store.tenants import (
    all_users_prefix,
    label_user,
    namespace_for,
    user_from_namespace,
    user_label,
)

runner = CliRunner()
USERS = ["alice", "*", "alice.b", "alice%2Eb", "50%", "Alice"]


def _pin(user: str) -> str:
    return f"my locker number is {4400 + USERS.index(user)}"


@pytest.fixture
def memory(tmp_path: Path, embeddings: object) -> LifecycleMemory:
    mem = LifecycleMemory(ChromaMemoryStore(tmp_path / "mem", embeddings=embeddings), retrieval_log=None)
    for user in USERS:
        mem.add_episode(_pin(user), user)
    return mem


def contents(mem: LifecycleMemory, user: str) -> list[str]:
    return sorted(r.content for r in mem.list(user))


# ---------------------------------------------------------------------- the codec
@pytest.mark.parametrize("user", [*USERS, "a.b.c", "%2E", "%252E", "100%%", "?", "[a-z]*", "x\x00y", 7])
def test_codec_round_trips_and_labels_hold_no_dot(user: object) -> None:
    label = user_label(user)
    assert "." not in label and "\x00" not in label
    assert label_user(label) == str(user)
    assert user_from_namespace(namespace_for(user)) == str(user)


def test_codec_keeps_the_labels_of_existing_stores() -> None:
    assert [user_label(u) for u in ("u1", "alice.b", "50%", "*")] == ["u1", "alice%2Eb", "50%25", "*"]
    assert len({user_label(u) for u in USERS}) == len(USERS)


def test_codec_rejects_what_is_not_an_id() -> None:
    bad_ids = [("", ValueError), ("  ", ValueError), (None, ValueError), (True, TypeError), ("a\ud800", ValueError)]
    for bad, error in bad_ids:
        with pytest.raises(error, match="user"):
            user_label(bad)
    assert all_users_prefix(("memories", "{user_id}")) == ("memories",)
    assert user_from_namespace(("other", "x")) is None


# ---------------------------------------------------------------------- facade
def test_purge_star_deletes_only_the_user_named_star(memory: LifecycleMemory, tmp_path: Path) -> None:
    log = RetrievalLog(tmp_path / "log.jsonl")
    memory.retrieval_log = log
    for user in USERS:
        memory.inject("locker", user)
    report = memory.purge("*")
    assert report.namespaces == [("memories", "*")]
    assert memory.list("*") == []
    for user in USERS:
        if user != "*":
            assert contents(memory, user) == [_pin(user)], user
    stats = retrieval_stats(log)
    assert "memories/*" not in stats.namespaces and len(stats.namespaces) == len(USERS) - 1


def test_each_user_sees_only_their_own_memory(memory: LifecycleMemory) -> None:
    for user in USERS:
        assert contents(memory, user) == [_pin(user)]
        assert [d.page_content for d in memory.search("my locker number", user)] == [_pin(user)]


def test_retriever_escapes_like_the_writer(memory: LifecycleMemory) -> None:
    retriever = LifecycleRetriever(store=memory.store)

    def ask(user: str) -> list[str]:
        return [
            d.page_content for d in retriever.invoke("my locker number", config={"configurable": {"user_id": user}})
        ]

    assert ask("alice%2Eb") == [_pin("alice%2Eb")]
    assert _pin("alice.b") not in ask("alice%2Eb")
    assert ask("alice.b") == [_pin("alice.b")]
    assert ask("50%") == [_pin("50%")]
    assert ask("*") == [_pin("*")]
    assert [d.page_content for d in retriever.invoke("my locker number", user_id="alice.b")] == [_pin("alice.b")]


# ---------------------------------------------------------------------- CLI
def cli(path: Path, *args: str) -> object:
    return runner.invoke(app, ["--path", str(path), *args], env={"COLUMNS": "200"})


@pytest.fixture
def store_path(memory: LifecycleMemory, tmp_path: Path) -> Path:
    return tmp_path / "mem"


def test_cli_purge_star_deletes_only_star(store_path: Path, tmp_path: Path) -> None:
    log = tmp_path / "cli.jsonl"
    for user in USERS:
        assert cli(store_path, "search", "locker", "--user", user, "--log", str(log)).exit_code == 0
    result = cli(store_path, "--json", "purge", "--user", "*", "--yes", "--log", str(log))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["namespaces"] == [["memories", "*"]]
    listed = json.loads(cli(store_path, "--json", "stats").stdout)["users"]
    assert sorted(row["user"] for row in listed) == sorted(u for u in USERS if u != "*")
    assert all(row["total"] == 1 for row in listed)
    lines = [json.loads(line)["namespace"] for line in log.read_text(encoding="utf-8").splitlines()]
    assert ["memories", "*"] not in lines and len(lines) == len(USERS) - 1


def test_cli_export_star_writes_only_star(store_path: Path, tmp_path: Path) -> None:
    file = tmp_path / "star.jsonl"
    result = cli(store_path, "--json", "export", str(file), "--user", "*")
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()]
    assert [(line["namespace"], line["content"]) for line in lines] == [(["memories", "*"], _pin("*"))]


def test_cli_everyone_needs_the_explicit_flag(store_path: Path, tmp_path: Path) -> None:
    file = tmp_path / "all.jsonl"
    refused = cli(store_path, "export", str(file))
    assert refused.exit_code == 2 and "--all-users" in refused.output and not file.exists()
    both = cli(store_path, "export", str(file), "--user", "alice", "--all-users")
    assert both.exit_code == 2
    assert json.loads(cli(store_path, "--json", "export", str(file), "--all-users").stdout)["exported"] == len(USERS)
    empty = cli(store_path, "stats", "--user", "")
    assert empty.exit_code == 1 and "user id is required" in empty.output


def test_cli_stats_star_with_log_lists_only_star(store_path: Path, tmp_path: Path) -> None:
    log = tmp_path / "cli.jsonl"
    for user in USERS:
        assert cli(store_path, "search", "locker", "--user", user, "--log", str(log)).exit_code == 0
    result = cli(store_path, "--json", "stats", "--user", "*", "--log", str(log))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [row["user"] for row in data["users"]] == ["*"]
    assert list(data["retrievals"]["namespaces"]) == ["memories/*"]
    assert data["retrievals"]["total"]["retrievals"] == 1


def test_cli_ids_with_dots_and_percent_are_literal(store_path: Path) -> None:
    for user in ("alice.b", "alice%2Eb", "50%", "Alice"):
        data = json.loads(cli(store_path, "--json", "list", "--user", user).stdout)
        assert [r["content"] for r in data["records"]] == [_pin(user)], user


def test_star_is_literal_on_every_backend(store: ChromaMemoryStore) -> None:
    mem = LifecycleMemory(store)
    for user in USERS:
        mem.add_episode(_pin(user), user)
    retriever = LifecycleRetriever(store=store)
    config = {"configurable": {"user_id": "alice%2Eb"}}
    assert [d.page_content for d in retriever.invoke("my locker number", config=config)] == [_pin("alice%2Eb")]
    assert mem.purge("*").namespaces == [("memories", "*")]
    assert {u: contents(mem, u) for u in USERS} == {u: [] if u == "*" else [_pin(u)] for u in USERS}
