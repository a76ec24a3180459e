"""A running app survives its data vanishing underneath it, and a new collection's first query.

* ``lifecycle-memory purge`` from another process (embedded and server), or a second
  store object deleting the collection, must not make the app's later ``add_messages`` /
  ``search`` / ``list`` for that user raise ``NotFoundError``: the app sees an empty
  user, and new turns land.
* A ``chroma run`` server that comes back on an empty directory: the same.
* Searches racing the first writes to a new namespace on the embedded store never fail.
* Two stores on ``chromadb.EphemeralClient()`` share one in-process database (Chroma's
  design): the same prefix means the same data, distinct prefixes keep them apart.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleMemory
from langchain_lifecycle_memory.store.chroma_store import META_RECHECK_SECONDS
from tests.fake_embeddings import CharEmbeddings

DIMS = 32
VIM = [("user", "我喜欢使用 Vim 编辑器")]
VSCODE = [("user", "我现在改用 VS Code 编辑器了")]


def fake() -> DeterministicFakeEmbedding:
    return DeterministicFakeEmbedding(size=DIMS)  # what `--embedder fake:32` opens the store with


def values(memory: LifecycleMemory, user: str) -> set[str | None]:
    return {r.value for r in memory.list(user)}


def found(memory: LifecycleMemory, user: str) -> list[Any]:
    return [d.metadata["value"] for d in memory.search("我用什么编辑器？", user_id=user, now="2024-03-02")]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    cmd = [sys.executable, "-m", "langchain_lifecycle_memory", "--embedder", f"fake:{DIMS}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, check=False)


def assert_app_recovers(memory: LifecycleMemory, other_user_kept: bool = True) -> None:
    """After x's data vanished elsewhere: x reads as empty, and x's next turn is stored and found."""
    assert memory.list("x") == []
    assert found(memory, "x") == []
    memory.add_messages(VSCODE, "x", at="2024-03-01T10:00:00Z")
    assert values(memory, "x") == {"VS Code"}
    assert found(memory, "x") == ["VS Code"]
    assert memory.store.get_record(memory.namespace("x"), memory.list("x")[0].id) is not None
    if other_user_kept:
        assert values(memory, "y") == {"Vim"}


def fill(memory: LifecycleMemory) -> None:
    for user in ("x", "y"):
        memory.add_messages(VIM, user, at="2024-01-01T10:00:00Z")
        assert values(memory, user) == {"Vim"}
        assert found(memory, user) == ["Vim"]  # warms every cache: handles, snapshots


# ---------------------------------------------------------------------- purge elsewhere
def test_purge_from_another_process_embedded(tmp_path: Path) -> None:
    path = tmp_path / "mem"
    memory = LifecycleMemory(store=ChromaMemoryStore(path, embeddings=fake()))
    fill(memory)
    done = cli("--path", str(path), "purge", "--user", "x", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_app_recovers(memory)


def test_purge_by_a_second_store_object(tmp_path: Path) -> None:
    memory = LifecycleMemory(store=ChromaMemoryStore(tmp_path / "mem", embeddings=fake()))
    fill(memory)
    other = LifecycleMemory(store=ChromaMemoryStore(tmp_path / "mem", embeddings=fake()))
    other.purge("x")
    assert_app_recovers(memory)
    assert values(other, "x") == {"VS Code"}  # and the other object sees the new turn


def test_plain_store_calls_after_the_collection_vanished(tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "db", embeddings=CharEmbeddings(), collection_prefix="plain")
    ns = ("docs", "x")
    store.put(ns, "a", {"text": "alpha"})
    assert store.get(ns, "a") is not None
    name = store._buckets.bucket_name(store.generation, ns)
    chromadb.PersistentClient(path=str(tmp_path / "db")).delete_collection(name)
    assert store.get(ns, "a") is None
    assert store.search(("docs",), query="alpha") == []
    assert store.list_namespaces() == []
    store.delete(ns, "a")  # nothing to delete: no error
    store.put(ns, "b", {"text": "beta"})
    assert [i.key for i in store.search(("docs",), query="beta")] == ["b"]


# ---------------------------------------------------------------------- server
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PrivateServer:
    """A ``chroma run`` of this test only, that can be restarted on an empty directory."""

    def __init__(self, root: Path) -> None:
        self.root, self.port, self.proc, self.runs = root, free_port(), None, 0
        self.chroma = Path(sys.executable).with_name("chroma")

    def start(self) -> None:
        self.runs += 1
        data = self.root / f"data{self.runs}"
        data.mkdir(parents=True)
        log = (self.root / f"log{self.runs}").open("w")
        cmd = [str(self.chroma), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(self.port)]
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)  # type: ignore[assignment]
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                chromadb.HttpClient(host="127.0.0.1", port=self.port).heartbeat()
                return
            except Exception:
                time.sleep(0.2)
        self.stop()
        pytest.fail(f"private chroma server did not start: {(self.root / f'log{self.runs}').read_text()[-500:]}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=20)
            self.proc = None


@pytest.fixture
def private_server(tmp_path: Path) -> Iterator[PrivateServer]:
    if not Path(sys.executable).with_name("chroma").exists():
        pytest.skip("the `chroma` command is not installed next to this Python")
    server = PrivateServer(tmp_path / "server")
    server.start()
    yield server
    server.stop()


@pytest.mark.server
def test_purge_from_another_process_server(private_server: PrivateServer) -> None:
    memory = LifecycleMemory(store=ChromaMemoryStore(host="127.0.0.1", port=private_server.port, embeddings=fake()))
    fill(memory)
    done = cli("--host", "127.0.0.1", "--port", str(private_server.port), "purge", "--user", "x", "--yes")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_app_recovers(memory)


@pytest.mark.server
def test_server_back_on_an_empty_directory(private_server: PrivateServer, caplog: pytest.LogCaptureFixture) -> None:
    memory = LifecycleMemory(store=ChromaMemoryStore(host="127.0.0.1", port=private_server.port, embeddings=fake()))
    fill(memory)
    private_server.stop()
    private_server.start()  # same port, empty directory: every collection is gone
    time.sleep(META_RECHECK_SECONDS)
    assert_app_recovers(memory, other_user_kept=False)
    assert "the memories it held are gone" in caplog.text  # said, not silent
    assert values(memory, "y") == set()
    reopened = ChromaMemoryStore(host="127.0.0.1", port=private_server.port, embeddings=fake())
    assert {r.value for r in reopened.list_records(memory.namespace("x"))} == {"VS Code"}  # meta was put back


# ---------------------------------------------------------------------- first query of a new collection
def test_searches_racing_the_first_writes_never_fail(tmp_path: Path) -> None:
    emb = CharEmbeddings()

    async def trial(n: int) -> list[BaseException]:
        store = ChromaMemoryStore(tmp_path / "race", embeddings=emb, collection_prefix=f"race{n}")
        ns = ("race", f"t{n}")
        writes = [store.aput(ns, f"k{i}", {"text": f"item {i}"}) for i in range(50)]
        reads = [store.asearch(ns, query=f"item {i}") for i in range(50)]
        out = await asyncio.gather(*writes, *reads, return_exceptions=True)
        assert len(await store.asearch(ns, limit=100)) == 50
        return [e for e in out if isinstance(e, BaseException)]

    errors = [e for n in range(30) for e in asyncio.run(trial(n))]
    assert errors == []


# ---------------------------------------------------------------------- ephemeral clients
def test_ephemeral_clients_share_one_database_per_process() -> None:
    prefix = f"eph{uuid.uuid4().hex[:8]}"
    a = ChromaMemoryStore(client=chromadb.EphemeralClient(), embeddings=CharEmbeddings(), collection_prefix=prefix)
    b = ChromaMemoryStore(client=chromadb.EphemeralClient(), embeddings=CharEmbeddings(), collection_prefix=prefix)
    c = ChromaMemoryStore(
        client=chromadb.EphemeralClient(), embeddings=CharEmbeddings(), collection_prefix=prefix + "_other"
    )
    a.put(("n",), "k", {"text": "shared"})
    assert b.get(("n",), "k") is not None  # same prefix: the same data (documented)
    assert c.get(("n",), "k") is None and c.list_namespaces() == []  # another prefix: independent
    a.purge(("n",))
