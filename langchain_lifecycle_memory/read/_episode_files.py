"""The episode encoder's vectors of a namespace, kept in one file next to its snapshot sidecar.

Without it every new process embeds a namespace's episodes again on its first search (e5:
~10-20 ms an episode on 2 cores, so 2,000 episodes cost half a minute). The file is the
namespace's current episodes only:

* **Where:** ``<sidecar base>.episodes-<encoder fingerprint hash>.npz`` in the store's snapshot
  folder (``store.snapshot_path``: next to an embedded store's database, or ``snapshot_dir``).
  ``purge`` removes every file of the namespace's base name, this one included; an encoder
  without a ``fingerprint`` (its vectors could not be told apart from another's) gets no file.
* **What:** the SHA-256 of each episode text (never the text) and its unit vector, float32.
  A search that finds the namespace's episodes differ from the file's (a new, forgotten or
  redacted episode) rewrites it with exactly the current ones, so a forgotten text's vector
  leaves the file at the next search of the namespace.
* **How:** written to a temporary file and renamed into place (readers never see half a file);
  read with ``allow_pickle=False``; an unreadable file is removed with a ``RuntimeWarning``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import tempfile
import threading
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["EPISODE_FILES", "EpisodeFiles", "episode_file_path"]


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def episode_file_path(store: Any, namespace: tuple[str, ...], encoder: Any) -> str | None:
    """The file for ``namespace``'s episode vectors under ``encoder`` (``None``: keep none)."""
    fingerprint = getattr(encoder, "fingerprint", None)
    path = store.snapshot_path(tuple(namespace)) if hasattr(store, "snapshot_path") else None
    if not fingerprint or path is None:
        return None
    key = hashlib.sha256(json.dumps(fingerprint, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return f"{os.path.splitext(path)[0]}.episodes-{key}.npz"


class EpisodeFiles:
    """Loads and saves episode-vector files; remembers what each file holds (bounded)."""

    max_paths = 1024

    def __init__(self) -> None:
        self._held: OrderedDict[str, frozenset[bytes]] = OrderedDict()
        self._current: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def load(self, path: str, texts: Sequence[str]) -> tuple[list[str], np.ndarray] | None:
        """The file's vectors of those of ``texts`` it holds, or ``None`` (no file, nothing held)."""
        try:
            with np.load(path, allow_pickle=False) as data:
                digests, vectors = data["digests"], data["vectors"]
            if digests.ndim != 1 or vectors.ndim != 2 or len(digests) != len(vectors):
                raise ValueError("digests and vectors do not match")
        except FileNotFoundError:
            self._remember(path, frozenset())
            return None
        except Exception as e:  # a damaged or foreign file: drop it, embed again
            warnings.warn(f"Removed an unreadable episode-vector file {path}: {e}", RuntimeWarning, stacklevel=3)
            with contextlib.suppress(OSError):
                os.remove(path)
            self._remember(path, frozenset())
            return None
        row = {bytes(d): i for i, d in enumerate(digests.tolist())}
        self._remember(path, frozenset(row))
        found = [(t, row[d]) for t in dict.fromkeys(texts) if (d := _digest(t)) in row]
        if not found:
            return None
        return [t for t, _ in found], np.asarray(vectors[[i for _, i in found]], dtype=np.float32)

    def stale(self, path: str, texts: Sequence[str]) -> bool:
        """Whether the file (as last read or written here) holds other episodes than ``texts``.

        A search asks this every time: the texts last found current are remembered, so the
        digests are computed only when the namespace's episodes changed.
        """
        key = tuple(texts)
        with self._lock:
            held, seen = self._held.get(path), self._current.get(path)
        if held is not None and seen == key:
            return False
        if held is None or held != frozenset(_digest(t) for t in key):
            return True
        with self._lock:
            self._current[path] = key
        return False

    def save(self, path: str, texts: Sequence[str], matrix: np.ndarray) -> None:
        """Write exactly ``texts`` (rows of ``matrix``); a failure only warns (the file is a cache)."""
        unique = dict.fromkeys(texts)
        index = {t: i for i, t in enumerate(texts)}
        digests = np.array([_digest(t) for t in unique], dtype="S32")
        vectors = np.asarray(matrix, dtype=np.float32)[[index[t] for t in unique]]
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as f:
                    np.savez(f, digests=digests, vectors=vectors)
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.remove(tmp)
                raise
        except OSError as e:
            warnings.warn(f"Could not write episode-vector file {path}: {e}", RuntimeWarning, stacklevel=3)
            return
        self._remember(path, frozenset(digests.tolist()))
        with self._lock:
            self._current[path] = tuple(texts)

    async def aload(self, path: str, texts: Sequence[str]) -> tuple[list[str], np.ndarray] | None:
        return await asyncio.to_thread(self.load, path, texts)

    async def asave(self, path: str, texts: Sequence[str], matrix: np.ndarray) -> None:
        await asyncio.to_thread(self.save, path, texts, matrix)

    def _remember(self, path: str, digests: frozenset[bytes]) -> None:
        with self._lock:
            self._held[path] = digests
            self._held.move_to_end(path)
            self._current.pop(path, None)
            while len(self._held) > self.max_paths:
                self._current.pop(self._held.popitem(last=False)[0], None)


EPISODE_FILES = EpisodeFiles()
