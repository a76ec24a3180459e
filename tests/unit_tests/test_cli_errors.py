"""Every CLI command, given a bad path, a bad id or a bad flag: one short error, a clear exit code, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from langchain_lifecycle_memory.cli.main import app
from langchain_lifecycle_memory.graph.memory import LifecycleMemory

runner = CliRunner()

# Each command with arguments of the right shape (user u1, a record id to fill in as {id}).
COMMANDS: dict[str, list[str]] = {
    "add": ["add", "-u", "u1", "I use Vim"],
    "search": ["search", "-u", "u1", "editor?"],
    "list": ["list", "-u", "u1"],
    "show": ["show", "{id}"],
    "history": ["history", "-u", "u1", "editor"],
    "edit": ["edit", "{id}", "-u", "u1", "--confidence", "0.9"],
    "forget": ["forget", "-u", "u1", "--id", "{id}", "-y"],
    "purge": ["purge", "-u", "u1", "-y"],
    "sweep": ["sweep", "--dry-run"],
    "reindex": ["reindex", "--embedder", "fake:8"],
    "export": ["export", "{tmp}/out.jsonl"],
    "import": ["import", "{tmp}/in.jsonl"],
    "stats": ["stats"],
    "doctor": ["doctor", "-u", "u1", "Vim"],
    "demo": ["demo"],
}
READS = [c for c in COMMANDS if c not in ("add", "import", "demo")]
"""Commands that need an existing store (``add``, ``import`` and ``demo`` create one)."""


def run(*args: str) -> Result:
    return runner.invoke(app, list(args), env={"COLUMNS": "100", "LIFECYCLE_MEMORY_PATH": None})


def assert_clean_error(result: Result, codes: tuple[int, ...] = (1, 2)) -> None:
    """What a user sees on a mistake: an exit code, a few lines, no Python traceback."""
    unexpected = result.exception if not isinstance(result.exception, SystemExit) else None
    assert unexpected is None, f"uncaught {type(unexpected).__name__}: {unexpected}\n{result.output}"
    assert result.exit_code in codes, result.output
    assert "Traceback" not in result.output and 'File "' not in result.output, result.output
    assert 0 < len(result.output.strip().splitlines()) <= 8, result.output


def fill(args: list[str], record_id: str, tmp: Path) -> list[str]:
    return [a.replace("{id}", record_id).replace("{tmp}", str(tmp)) for a in args]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("cli-errors") / "mem"
    memory = LifecycleMemory(path=path)
    memory.add_messages([("user", "我喜欢使用 Vim 编辑器")], "u1", at="2024-01-01T10:00:00Z")
    memory.add_messages([("user", "I live in Berlin")], "u2", at="2024-01-01T10:00:00Z")
    record_id = memory.list("u1")[0].id
    (path.parent / "in.jsonl").write_text("")
    return path, record_id


# ---------------------------------------------------------------------- bad paths
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_file_as_path(command: str, tmp_path: Path) -> None:
    afile = tmp_path / "notes.txt"
    afile.write_text("not a store")
    (tmp_path / "in.jsonl").write_text("")
    result = run("--path", str(afile), *fill(COMMANDS[command], "abcd1234", tmp_path))
    assert_clean_error(result)
    if command != "demo":
        assert "is a file" in result.output
    below = run("--path", str(afile / "store"), *fill(COMMANDS[command], "abcd1234", tmp_path))  # under a file
    assert_clean_error(below)


@pytest.mark.parametrize("command", READS)
def test_a_missing_or_foreign_folder_as_path(command: str, tmp_path: Path) -> None:
    for path, says in ((tmp_path / "nowhere", "No memory store"), (tmp_path, "not a memory store")):
        result = run("--path", str(path), *fill(COMMANDS[command], "abcd1234", tmp_path))
        assert_clean_error(result)
        assert says in result.output
    assert not (tmp_path / "chroma.sqlite3").exists(), "a read command must not create a store"


@pytest.mark.parametrize("command", ["list", "add", "search", "stats"])
def test_a_damaged_store(command: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "chroma.sqlite3").write_bytes(b"this is not sqlite" * 100)
    result = run("--path", str(broken), *fill(COMMANDS[command], "abcd1234", tmp_path))
    assert_clean_error(result)
    assert "--debug" in result.output


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "chroma.sqlite3").write_bytes(b"this is not sqlite" * 100)
    result = run("--debug", "--path", str(broken), "list", "-u", "u1")
    assert result.exit_code != 0 and result.exception is not None and not isinstance(result.exception, SystemExit)


# ---------------------------------------------------------------------- bad ids
@pytest.mark.parametrize("command", ["show", "edit", "forget", "history", "doctor"])
@pytest.mark.parametrize("bad_id", ["ffffffff", "zz", "../../etc/passwd", "'; DROP TABLE x; --", "-1"])
def test_bad_ids(command: str, bad_id: str, store: tuple[Path, str]) -> None:
    path, _ = store
    args = fill(COMMANDS[command], bad_id, path.parent)
    if command in ("history", "doctor"):
        args[-1] = bad_id
    result = run("--path", str(path), *args)
    assert_clean_error(result)


def test_unknown_user_does_not_name_the_others_on_purge(store: tuple[Path, str]) -> None:
    path, _ = store
    result = run("--path", str(path), "purge", "-u", "nobody", "-y")
    assert_clean_error(result)
    # The store's path is named in the message, and a temporary folder's random name may hold "u1".
    said = "".join(result.output.split()).replace(str(path), "<path>")
    assert "u1" not in said and "u2" not in said


# ---------------------------------------------------------------------- bad flags
BAD_FLAGS = [
    ["search", "-u", "u1", "q", "-k", "0"],
    ["search", "-u", "u1", "q", "--min-score", "2"],
    ["search", "-u", "u1", "q", "--now", "next tuesday"],
    ["search", "-u", "u1", "q", "--as-of", "yesterday-ish"],
    ["add", "-u", "u1", "text", "--at", "13/13/2024"],
    ["list", "-u", "u1", "--status", "deleted"],
    ["edit", "{id}", "-u", "u1", "--kind", "banana"],
    ["edit", "{id}", "-u", "u1", "--confidence", "7"],
    ["edit", "{id}", "-u", "u1"],
    ["forget", "-u", "u1"],
    ["purge", "-u", "u1", "--json"],
    ["sweep", "--now", "soon"],
    ["list", "-u", "u1", "--embedder", "word2vec"],
    ["list", "-u", "u1", "--port", "eighty"],
    ["list", "-u", "u1", "--bogus"],
    ["list"],
    ["nosuchcommand"],
    ["reindex", "--embedder", "fake:zero"],
    ["stats", "--log", "{tmp}/no-such-log.jsonl"],
    ["import", "{tmp}/no-such-file.jsonl"],
    ["export", "{tmp}"],
    ["demo", "--lang", "fr"],
]


@pytest.mark.parametrize("args", BAD_FLAGS, ids=[" ".join(a[:1] + a[-2:]) for a in BAD_FLAGS])
def test_bad_flags(args: list[str], store: tuple[Path, str]) -> None:
    path, record_id = store
    result = run("--path", str(path), *fill(args, record_id, path.parent))
    assert_clean_error(result)


def test_bad_flags_changed_nothing(store: tuple[Path, str]) -> None:
    path, record_id = store
    shown = run("--path", str(path), "--json", "show", record_id[:8])
    assert shown.exit_code == 0, shown.output
    record = json.loads(shown.stdout)
    assert record["kind"] == "preference" and record["status"] in ("active", "archived")


# ---------------------------------------------------------------------- what a user notices
def test_a_phone_number_is_not_a_device(tmp_path: Path) -> None:
    path = tmp_path / "mem"
    assert run("--path", str(path), "add", "-u", "alice", "my phone is +49 151 23456789").exit_code == 0
    listed = json.loads(run("--path", str(path), "--json", "list", "-u", "alice").stdout)["records"]
    assert [(r["attribute"], r["value"]) for r in listed] == [("phone", "[PHONE]")]
    assert "23456789" not in json.dumps(listed)


def test_export_dash_writes_stdout_and_json_is_tidy(store: tuple[Path, str]) -> None:
    path, _ = store
    result = run("--path", str(path), "export", "-", "-u", "u1")
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines and all(r["namespace"] == ["memories", "u1"] for r in lines)
    assert not (Path.cwd() / "-").exists()
    found = json.loads(
        run("--path", str(path), "--json", "search", "-u", "u1", "我用什么编辑器", "--now", "2024-02-01").stdout
    )
    floats = [v for r in found["results"] for v in r["scores"].values()]
    assert all(len(repr(v).split(".")[-1]) <= 4 for v in floats)
    stamps = [r[k] for r in found["results"] for k in ("valid_from", "created_at")]
    assert stamps and all(s.endswith("Z") for s in stamps)


def test_show_and_history_in_the_python_shape(store: tuple[Path, str]) -> None:
    path, record_id = store
    assert run("--path", str(path), "show", record_id[:8]).exit_code == 0
    positional = run("--path", str(path), "--json", "history", "-u", "u1", "user", "editor")
    assert positional.exit_code == 0, positional.output
    assert [v["value"] for v in json.loads(positional.stdout)["versions"]] == ["Vim"]


def test_help_has_no_type_on_flags() -> None:
    result = run("search", "--help")
    assert result.exit_code == 0
    assert "<bool>" not in result.output and "-k" in result.output


def test_list_fits_80_columns_and_empty_results_say_so(store: tuple[Path, str]) -> None:
    path, _ = store
    result = runner.invoke(app, ["--path", str(path), "list", "-u", "u1"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    assert max(len(line) for line in result.output.splitlines()) <= 80
    assert "Vim" in result.output and "使用" in result.output
    empty = run("--path", str(path), "list", "-u", "u1", "--kind", "event")
    assert empty.exit_code == 0 and "none" in empty.output and "┏" not in empty.output
