"""Several processes on one store, a server that dies, and tracing: what a user of the CLI and the API sees.

Black-box: public names and the ``lifecycle-memory`` CLI run as real processes. Stores whose
memories are searched use the default embedder (the retriever's calibration is made for it; the
CLI follows the embedder a store records); the tracing tests, which search nothing in particular,
use ``DeterministicFakeEmbedding`` (the CLI's ``fake:32``).
"""

from __future__ import annotations

import http.server
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory, StoreUnavailableError


def fake_memory(path: Path | None = None, **store_kwargs: Any) -> LifecycleMemory:
    return LifecycleMemory(ChromaMemoryStore(path, embeddings=DeterministicFakeEmbedding(size=32), **store_kwargs))


def real_memory(embeddings: Any, path: Path | None = None, **store_kwargs: Any) -> LifecycleMemory:
    return LifecycleMemory(ChromaMemoryStore(path, embeddings=embeddings, **store_kwargs))


def cli(path: Path, *args: str, env: dict[str, str] | None = None, root: tuple[str, ...] = ()) -> Any:
    cmd = [sys.executable, "-m", "langchain_lifecycle_memory", *root, "--path", str(path), *args]
    environment = {**os.environ, "COLUMNS": "200"} if env is None else {**env, "COLUMNS": "200"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=environment, check=False)


def _raised(e: BaseException) -> str:
    return f"{type(e).__module__}.{type(e).__name__}: {e}"


# ---------------------------------------------------------------------- 3. many processes, one embedded store
def test_a_fact_added_by_the_cli_shows_up_in_a_running_app_within_a_second(embeddings: Any, tmp_path: Path) -> None:
    path = tmp_path / "m"
    memory = real_memory(embeddings, path)
    memory.add_messages([("user", "I live in Berlin")], user_id="bob", at="2026-11-01")
    assert "Berlin" in memory.inject("Where do I live?", user_id="bob").text  # the app has searched once

    done = cli(path, "add", "-u", "bob", "I am allergic to peanuts")
    assert done.returncode == 0, done.stderr

    question = "Am I allergic to peanuts?"
    deadline = time.monotonic() + 1.0
    while True:
        try:
            found = [d.page_content for d in memory.search(question, user_id="bob")]
            block = memory.inject(question, user_id="bob").text
        except Exception as e:
            pytest.fail(f"the app's read raised after another process wrote: {_raised(e)}")
        if any("peanuts" in text for text in found) and "peanuts" in block:
            break
        assert time.monotonic() < deadline, f"after 1 s the app still does not see the new fact: {found} / {block!r}"
        time.sleep(0.05)


WRITER = r"""
import sys
from langchain_lifecycle_memory import ChromaMemoryStore, Fact, LifecycleMemory

memory = LifecycleMemory(ChromaMemoryStore(sys.argv[1]))
print("ready", flush=True)
for line in sys.stdin:
    name, city = line.split()
    fact = Fact(entity=f"friend_{name.lower()}", attribute="city", value=city,
                content=f"The user's friend {name} lives in {city}", kind="profile")
    memory.add_facts([fact], user_id="bob")
    print("ok", flush=True)
"""

FRIENDS = [
    ("Anna", "Lisbon"),
    ("Boris", "Oslo"),
    ("Chen", "Kyoto"),
    ("Dmitri", "Tbilisi"),
    ("Eva", "Quito"),
    ("Farid", "Tunis"),
]


def _line(proc: subprocess.Popen[str], timeout: float = 120) -> str:
    with selectors.DefaultSelector() as waiting:  # epoll/poll: no FD_SETSIZE limit late in a long suite
        waiting.register(proc.stdout, selectors.EVENT_READ)
        ready = waiting.select(timeout)
    line = proc.stdout.readline().strip() if ready and proc.stdout else ""
    if line not in ("ready", "ok"):
        proc.kill()
        _, err = proc.communicate(timeout=30)
        pytest.fail(f"writer {proc.pid} said {line!r}; stderr:\n{err[-3000:]}")
    return line


def test_two_writer_processes_and_a_reading_app_lose_nothing(embeddings: Any, tmp_path: Path) -> None:
    path = tmp_path / "m"
    app = real_memory(embeddings, path)
    app.add_messages([("user", "I live in Berlin")], user_id="bob", at="2026-11-01")
    app.inject("Where do I live?", user_id="bob")
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        for w in writers:
            _line(w)
        for i, (name, city) in enumerate(FRIENDS):
            writer = writers[i % 2]  # alternately
            assert writer.stdin is not None
            writer.stdin.write(f"{name} {city}\n")
            writer.stdin.flush()
            _line(writer)
            try:
                app.search(f"Where does my friend {name} live?", user_id="bob")
                app.inject("Where do my friends live?", user_id="bob")
            except Exception as e:
                pytest.fail(f"the app's read raised after write {i + 1}: {_raised(e)}")
    finally:
        for w in writers:
            if w.stdin:
                w.stdin.close()
            try:
                w.wait(timeout=60)
            except subprocess.TimeoutExpired:
                w.kill()

    listed = cli(path, "list", "-u", "bob", "--json")  # a fresh process
    assert listed.returncode == 0, listed.stderr
    active = {r["value"] for r in json.loads(listed.stdout)["records"] if r["status"] == "active"}
    assert active >= {city for _, city in FRIENDS} | {"Berlin"}, active


HAMMER = r"""
import random, sys
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_lifecycle_memory import ChromaMemoryStore
store = ChromaMemoryStore(sys.argv[1], embeddings=DeterministicFakeEmbedding(size=32))
tag, rng = sys.argv[2], random.Random(sys.argv[2])
for i in range(int(sys.argv[3])):
    key = f"{tag}{i % 12}"
    if rng.random() < 0.3:
        store.delete(("docs",), key)
    else:
        store.put(("docs",), key, {"text": f"ledger entry {tag} {i}"})
for i in range(12):
    store.delete(("docs",), f"{tag}{i}")
print("done", flush=True)
"""


def test_an_app_reading_while_two_processes_write_never_fails_and_ends_where_they_left(tmp_path: Path) -> None:
    path = tmp_path / "m"
    app = ChromaMemoryStore(path, embeddings=DeterministicFakeEmbedding(size=32))
    app.put(("docs",), "kept", {"text": "ledger entry kept"})
    writers = [
        subprocess.Popen([sys.executable, "-c", HAMMER, str(path), tag, "80"], stdout=subprocess.PIPE, text=True)
        for tag in ("b", "c")
    ]
    failures = []
    while any(w.poll() is None for w in writers):
        try:
            app.search(("docs",), query="ledger entry", limit=50)
            app.search(("docs",), limit=50)
        except Exception as e:  # every one the app would see
            failures.append(_raised(e))
    assert [w.wait(timeout=60) for w in writers] == [0, 0]
    assert failures == []
    assert [i.key for i in app.search(("docs",), query="ledger entry", limit=50)] == ["kept"]


# ---------------------------------------------------------------------- 7. tracing only when asked
BANNED = ("LangSmith", "API key", "Failed to")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tracing_env(endpoint: str, api_key: str | None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") or not k.startswith(("LANGSMITH", "LANGCHAIN"))
    }
    env.update(
        LANGSMITH_TRACING="true", LANGCHAIN_TRACING_V2="true", LANGSMITH_ENDPOINT=endpoint, LANGCHAIN_ENDPOINT=endpoint
    )
    if api_key:
        env["LANGSMITH_API_KEY"] = api_key
    return env


@pytest.fixture
def small_store(tmp_path: Path) -> Path:
    path = tmp_path / "m"
    fake_memory(path).add_messages([("user", "I use Vim as my editor")], user_id="bob", at="2026-11-01")
    return path


def test_cli_search_does_not_trace_unless_asked(small_store: Path) -> None:
    """Tracing switched on in the environment, no API key, no LangSmith reachable: a plain search stays quiet."""
    env = _tracing_env(f"http://127.0.0.1:{_free_port()}", api_key=None)  # nothing listens there

    done = cli(small_store, "search", "-u", "bob", "editor", env=env)

    assert done.returncode == 0, done.stderr
    noise = [line for line in done.stderr.splitlines() if any(word in line for word in BANNED)]
    assert noise == [], "\n".join(noise)[:2000]


class _Sink(http.server.BaseHTTPRequestHandler):
    """A stand-in LangSmith endpoint on loopback: answers 200 to everything and records the paths."""

    seen: list[str] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.seen.append(f"{self.command} {self.path}")
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PATCH = do_PUT = _answer

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def sink() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    handler = type("Sink", (_Sink,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def test_cli_trace_flag_turns_tracing_on(small_store: Path, sink: tuple[str, list[str]]) -> None:
    url, seen = sink
    env = _tracing_env(url, api_key="lsv2_test_not_a_real_key")

    done = cli(small_store, "search", "-u", "bob", "editor", env=env, root=("--trace",))

    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert any("runs" in request for request in seen), f"no run reached the endpoint: {seen}"


# ---------------------------------------------------------------------- 8c. the server dies
@pytest.fixture
def chroma_server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    chroma = Path(sys.executable).with_name("chroma")
    if not chroma.exists() and shutil.which("chroma") is None:
        pytest.skip("no `chroma` executable next to the interpreter")
    port = _free_port()
    proc = subprocess.Popen(
        [
            str(chroma if chroma.exists() else shutil.which("chroma")),
            "run",
            "--path",
            str(tmp_path / "server"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.skip("`chroma run` did not start")
            time.sleep(0.2)
    yield proc, port
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def test_a_dead_server_gives_store_unavailable_never_a_raw_error(
    embeddings: Any, chroma_server: tuple[subprocess.Popen[bytes], int]
) -> None:
    proc, port = chroma_server
    memory = real_memory(embeddings, host="127.0.0.1", port=port)
    memory.add_messages([("user", "I live in Berlin")], user_id="bob", at="2026-11-01")
    memory.add_messages([("user", "I use Vim as my editor")], user_id="carol", at="2026-11-01")
    assert "Berlin" in memory.inject("Where do I live?", user_id="bob").text

    seen: dict[str, int] = {}
    stop = threading.Event()

    def read(user: str, question: str) -> None:  # an app serving requests while the server dies
        while not stop.is_set():
            try:
                memory.inject(question, user_id=user)
            except Exception as e:
                name = f"{type(e).__module__}.{type(e).__name__}"
                seen[name] = seen.get(name, 0) + 1

    readers = [threading.Thread(target=read, args=a) for a in [("bob", "Where do I live?"), ("carol", "editor")]]
    for t in readers:
        t.start()
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    time.sleep(1.0)
    stop.set()
    for t in readers:
        t.join(timeout=60)

    calls = {
        "search bob": lambda: memory.search("Where do I live?", user_id="bob"),
        "inject bob": lambda: memory.inject("Where do I live?", user_id="bob"),
        "inject carol": lambda: memory.inject("Which editor do I use?", user_id="carol"),
        "search a new user": lambda: memory.search("anything", user_id="dave"),
    }
    outcomes = {}
    for label, call in calls.items():
        try:
            call()
            outcomes[label] = "returned"
        except StoreUnavailableError:
            outcomes[label] = "StoreUnavailableError"
        except Exception as e:
            outcomes[label] = _raised(e)[:300]

    assert outcomes == dict.fromkeys(calls, "StoreUnavailableError"), outcomes
    other = {k: v for k, v in seen.items() if not k.endswith(".StoreUnavailableError")}
    assert other == {}, f"while the server died, reads raised: {seen}"
