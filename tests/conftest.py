"""Shared fixtures: the store on three real Chroma backends, and the shared/ folder."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import chromadb
import pytest

from langchain_lifecycle_memory import ChromaMemoryStore, UniversalSentenceEncoderEmbeddings

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SERVER_ENV = "LIFECYCLE_MEMORY_TEST_CHROMA"


@pytest.fixture(scope="session")
def embeddings() -> UniversalSentenceEncoderEmbeddings:
    return UniversalSentenceEncoderEmbeddings()


REQUIRE_SHARED_ENV = "LIFECYCLE_MEMORY_REQUIRE_SHARED"


def shared_file(*parts: str) -> Path:
    """A file of ``../shared``: a clear skip where the folder is absent, an error in CI (``.ci/run``)."""
    path = SHARED.joinpath(*parts)
    if not path.is_file():
        msg = f"{path} not found: scenario/seed data unavailable"
        if os.environ.get(REQUIRE_SHARED_ENV):
            pytest.fail(msg + f" ({REQUIRE_SHARED_ENV} is set: CI always has ../shared)")
        pytest.skip(msg)
    return path


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        msg = f"../shared not found at {SHARED}: scenario/seed data unavailable"
        if os.environ.get(REQUIRE_SHARED_ENV):
            pytest.fail(msg + f" ({REQUIRE_SHARED_ENV} is set: CI always has ../shared)")
        pytest.skip(msg)
    return SHARED


def server_address() -> tuple[str, int] | None:
    value = os.environ.get(SERVER_ENV)
    if not value:
        return None
    host, _, port = value.rpartition(":")
    return host, int(port)


def make_store(
    backend: str, tmp_path: Path, embeddings: UniversalSentenceEncoderEmbeddings, **kwargs: object
) -> ChromaMemoryStore:
    prefix = kwargs.pop("collection_prefix", None) or f"t{uuid.uuid4().hex[:10]}"
    if backend == "embedded":
        return ChromaMemoryStore(tmp_path / "chroma", embeddings=embeddings, collection_prefix=prefix, **kwargs)  # type: ignore[arg-type]
    if backend == "memory":
        return ChromaMemoryStore(
            client=chromadb.EphemeralClient(), embeddings=embeddings, collection_prefix=prefix, **kwargs
        )  # type: ignore[arg-type]
    address = server_address()
    if address is None:
        pytest.skip(f"no Chroma server configured: set {SERVER_ENV}=host:port (.ci/run starts one)")
    host, port = address
    return ChromaMemoryStore(host=host, port=port, embeddings=embeddings, collection_prefix=prefix, **kwargs)  # type: ignore[arg-type]


def drop_store_collections(store: ChromaMemoryStore) -> None:
    """Delete every collection of a store (any layout) from its client."""
    for col in store.client.list_collections():
        name = col if isinstance(col, str) else col.name
        if name.startswith(store.prefix + "."):
            store.client.delete_collection(name)


@pytest.fixture(params=["embedded", "memory", "server"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(backend: str, tmp_path: Path, embeddings: UniversalSentenceEncoderEmbeddings) -> Iterator[ChromaMemoryStore]:
    s = make_store(backend, tmp_path, embeddings)
    yield s
    if backend != "embedded":
        drop_store_collections(s)


@pytest.fixture
def mem_store(tmp_path: Path, embeddings: UniversalSentenceEncoderEmbeddings) -> ChromaMemoryStore:
    """A fast in-memory store for tests that are not about the backend."""
    return make_store("memory", tmp_path, embeddings)


# The encoder keeps derived files (tokenizer, weights) in a cache directory; the suite
# uses its own, removed at the end, so it neither reads nor fills the user's ~/.cache.
_CACHE_DIR = None
if "LIFECYCLE_MEMORY_CACHE_DIR" not in os.environ:
    import tempfile

    _CACHE_DIR = tempfile.mkdtemp(prefix="lifecycle-test-cache-")
    os.environ["LIFECYCLE_MEMORY_CACHE_DIR"] = _CACHE_DIR


def pytest_unconfigure(config: pytest.Config) -> None:
    if _CACHE_DIR is not None:
        import shutil

        shutil.rmtree(_CACHE_DIR, ignore_errors=True)
