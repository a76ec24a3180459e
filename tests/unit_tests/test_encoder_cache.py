"""The encoder's disk cache: same vectors as the package's own loading, and damage means a rebuild."""

from __future__ import annotations

from pathlib import Path

import pytest

from langchain_lifecycle_memory.store import embeddings as E

TEXTS = ["我喜欢使用 Vim 编辑器", "What editor do I use?", ""]


@pytest.fixture
def fresh_models(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(E, "_MODELS", {})
    monkeypatch.setenv("LIFECYCLE_MEMORY_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _vectors() -> list[list[float]]:
    E._MODELS.clear()
    return E.UniversalSentenceEncoderEmbeddings().embed_documents(TEXTS)


def test_cached_encoder_gives_the_same_vectors(fresh_models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _vectors()  # fills the cache
    assert sorted(p.name.split("-", 2)[-1] for p in fresh_models.iterdir()) == [
        "backend.pickle",
        "table.npy",
        "tokenizer.pickle",
    ]
    assert _vectors() == first  # loaded from the cache
    monkeypatch.setenv("LIFECYCLE_MEMORY_CACHE_DIR", "off")
    assert _vectors() == first  # the package's own loading


def test_a_damaged_cache_is_rebuilt(fresh_models: Path) -> None:
    first = _vectors()
    for path in fresh_models.iterdir():
        path.write_bytes(b"not what it was")
    assert _vectors() == first
    assert all(p.stat().st_size > 1000 for p in fresh_models.iterdir())


def test_an_unwritable_cache_dir_still_embeds(fresh_models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = fresh_models.parent / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("LIFECYCLE_MEMORY_CACHE_DIR", str(blocker / "cache"))
    assert len(_vectors()[0]) == 512


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LIFECYCLE_MEMORY_CACHE_DIR", "off")
    assert E.cache_dir() is None
    monkeypatch.delenv("LIFECYCLE_MEMORY_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert E.cache_dir() == tmp_path / "langchain-lifecycle-memory"
