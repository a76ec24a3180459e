"""Embedded routing-card phrases kept on disk, one folder per embedder fingerprint.

A namespace with 50k distinct attributes has 50k card phrases (an attribute outside the
vocabulary is routed by its humanised name). Embedding them costs seconds with a cheap
encoder and about a minute with the offline default, on every process start. They are
derived and rebuildable, so they go to the cache directory (``store.embeddings.cache_dir``,
``$LIFECYCLE_MEMORY_CACHE_DIR``; ``off`` disables it) like the encoder's own files:

* one folder per embedder, named by its fingerprint's hash; each file also holds the full
  fingerprint, checked on load, so another encoder (a reindex) never reads these vectors;
* embedders without a ``fingerprint`` dict cannot be told apart across processes and are
  never persisted;
* each ``save`` appends one small segment file (written atomically); past
  ``max_segments`` the newer ones are merged into one (all of them, keeping the
  ``max_phrases`` newest phrases, once they outgrow the oldest), so the folder stays
  bounded however many attributes come and go and a new attribute does not rewrite it;
* a process reads each segment file once: later loads look only at new files.

A file that cannot be read (truncated, another layout) is ignored and vectors are
embedded again: the cache can only make a search faster, never change its result.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from langchain_lifecycle_memory.store.embeddings import cache_dir, fingerprint_key

__all__ = ["PersistedCards"]


class PersistedCards:
    """Phrase -> vector files of one embedder (``None`` from ``for_embeddings``: not persistable)."""

    max_phrases: int = 200_000
    """Phrases one embedder's folder keeps (the newest win on a merge)."""
    max_segments: int = 16
    """Segment files before they are merged."""
    _lock = threading.Lock()
    _open: dict[Path, PersistedCards] = {}

    def __init__(self, folder: Path, fingerprint: Mapping[str, Any]) -> None:
        self.folder = folder
        self.fingerprint = json.dumps(dict(fingerprint), sort_keys=True, default=str)
        self.seen: set[str] = set()
        """Segment files this process has read or written."""

    @classmethod
    def for_embeddings(cls, embeddings: Any, kind: str = "cards") -> PersistedCards | None:
        """The store for ``embeddings``' cards, or ``None`` (no fingerprint, or caching off).

        ``kind`` names another folder of the same layout for other fixed phrases (the
        query-centring background, ``_anchors``), so that each is read on its own.
        """
        fingerprint = getattr(embeddings, "fingerprint", None)
        root = cache_dir()
        if not isinstance(fingerprint, dict) or root is None:
            return None
        folder = root / kind / fingerprint_key(dict(fingerprint))
        with cls._lock:
            hit = cls._open.get(folder)
            if hit is None:
                if len(cls._open) >= 16:
                    cls._open.pop(next(iter(cls._open)))
                hit = cls._open[folder] = cls(folder, fingerprint)
            return hit

    def _segments(self) -> list[Path]:
        try:
            return sorted(self.folder.glob("*.npz"), key=lambda p: (p.stat().st_mtime_ns, p.name))
        except OSError:
            return []

    def _read(self, path: Path) -> tuple[list[str], np.ndarray] | None:
        try:
            with np.load(path, allow_pickle=False) as data:
                if str(data["fingerprint"]) != self.fingerprint:
                    return None
                phrases, vectors = data["phrases"].tolist(), np.asarray(data["vectors"], dtype=np.float32)
        except (OSError, ValueError, KeyError, EOFError):
            return None
        if vectors.ndim != 2 or len(phrases) != len(vectors):
            return None
        return phrases, vectors

    def load(self, phrases: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of those ``phrases`` that have one, from files not read before."""
        rows, matrix = self.load_rows(phrases)
        return {phrase: matrix[row] for phrase, row in rows.items()}

    def load_rows(self, phrases: Sequence[str]) -> tuple[dict[str, int], np.ndarray]:
        """``load`` as one matrix: each found phrase's row in it (no array per phrase)."""
        index: dict[str, int] = {}
        parts: list[np.ndarray] = []
        offset = 0
        for path in self._segments():
            if path.name in self.seen:
                continue
            self.seen.add(path.name)
            got = self._read(path)
            if got is None:
                continue
            index.update(zip(got[0], range(offset, offset + len(got[0]))))  # a newer file's copy wins
            parts.append(got[1])
            offset += len(got[0])
        if not parts:
            return {}, np.zeros((0, 0), dtype=np.float32)
        rows = {p: row for p in dict.fromkeys(phrases) if (row := index.get(p)) is not None}
        return rows, parts[0] if len(parts) == 1 else np.concatenate(parts)

    def save(self, phrases: Sequence[str], vectors: Any) -> None:
        """Append ``phrases`` and their (raw, as embedded) ``vectors``; merge past ``max_segments``."""
        if not len(phrases):
            return
        matrix = np.asarray(vectors, dtype=np.float32)
        with self._lock:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                self._write(list(phrases), matrix)
                segments = self._segments()
                if len(segments) > self.max_segments:
                    self._merge(segments)
            except OSError:
                return  # a read-only or full disk: the vectors stay in memory only

    def _write(self, phrases: list[str], matrix: np.ndarray) -> None:
        name = f"{uuid.uuid4().hex}.npz"
        tmp = self.folder / f".{name}.tmp"
        with open(tmp, "wb") as fh:
            np.savez(fh, fingerprint=np.array(self.fingerprint), phrases=np.array(phrases), vectors=matrix)
        os.replace(tmp, self.folder / name)
        self.seen.add(name)

    def _merge(self, segments: list[Path]) -> None:
        sizes = [p.stat().st_size for p in segments]
        if sizes[0] > sum(sizes[1:]):  # the oldest, big one stays; the small new ones become one
            segments = segments[1:]
        merged: dict[str, np.ndarray] = {}
        for path in segments:
            got = self._read(path)
            if got is not None:
                for phrase, vector in zip(got[0], got[1]):
                    merged.pop(phrase, None)  # re-inserted: the newest copy keeps its place at the end
                    merged[phrase] = vector
        keep = list(merged)[-self.max_phrases :]
        if keep:
            self._write(keep, np.stack([merged[p] for p in keep]))
        for path in segments:
            path.unlink(missing_ok=True)
