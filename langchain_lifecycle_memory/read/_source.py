"""Where a search's snapshot of a namespace comes from: held, updated, loaded from its file, or read in full.

A big namespace's snapshot is saved in a file (rows, vectors, BM25 terms, revision) so a fresh
process's first search is fast; a reader brings it up to date with the rows written since, or
ignores it after a deletion. The store removes it on purge, delete, edit and redaction.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from typing import Any

import numpy as np
from cachetools import LRUCache

from langchain_lifecycle_memory.read.lexical import LexicalIndex
from langchain_lifecycle_memory.read.snapshot import Snapshot, build, parse_row

__all__ = ["HELD_ROWS", "MIN_ROWS", "current", "forget_held", "load", "save", "stale"]

MIN_ROWS = 1000
"""Namespaces smaller than this are read from Chroma quickly enough: they get no file."""
_FORMAT = 1
HELD_ROWS = 16_000
"""Rows of all snapshots held here (least recently searched go first); a bigger one is held alone."""
_NAMESPACE_ROWS = 10
"""What holding a namespace costs beyond its rows, counted in rows."""


def stale(snap: Snapshot) -> bool:
    """Whether the snapshot is worth saving (again): big enough, and its file missing or far behind."""
    if len(snap) < MIN_ROWS:
        return False
    return snap.unsaved is None or snap.unsaved > max(64, len(snap) // 20)


def save(store: Any, snap: Snapshot) -> None:
    """Write the snapshot's file atomically (best effort: a failure only costs the next fresh start)."""
    path = getattr(store, "snapshot_path", lambda ns: None)(snap.namespace)
    if path is None or len(snap) < MIN_ROWS:
        return
    vocab, ids, lengths, names = snap.index.terms()
    arrays = {
        "format": np.array(_FORMAT),
        "revision": np.array(
            json.dumps([snap.revision.token, snap.revision.seq, snap.revision.deletions, snap.revision.lineage])
        ),
        "ids": np.array(snap.ids, dtype=str),
        "documents": np.array([r.document for r in snap.rows], dtype=str),
        "vectors": snap.vectors,
        "vocab": np.array(vocab, dtype=str),
        "term_ids": ids,
        "lengths": lengths,
        "names": np.array(json.dumps(names, ensure_ascii=False)),
    }
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
        snap.unsaved = 0
    except OSError:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.remove(tmp)


def load(store: Any, namespace: tuple[str, ...], revision: Any) -> Snapshot | None:
    """The snapshot saved for ``namespace``, if its rows can be brought up to ``revision``."""
    path = getattr(store, "snapshot_path", lambda ns: None)(namespace)
    if path is None or not os.path.exists(path) or revision.token == "absent":
        return None
    try:
        with np.load(path, allow_pickle=False) as f:
            if int(f["format"]) != _FORMAT:
                return None
            token, seq, deletions, lineage = json.loads(str(f["revision"]))
            if (deletions, lineage) != (revision.deletions, revision.lineage) or seq > revision.seq:
                return None
            rows = [parse_row(i, d) for i, d in zip(f["ids"].tolist(), f["documents"].tolist())]
            if any(r is None for r in rows):
                return None
            index = LexicalIndex.from_terms(
                f["vocab"].tolist(), f["term_ids"], f["lengths"], json.loads(str(f["names"]))
            )
            vectors = np.asarray(f["vectors"], dtype=np.float32)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if len(rows) != len(vectors) or index.size != len(rows):
        return None
    saved = type(revision)(token, seq, deletions, lineage)
    return Snapshot(tuple(namespace), saved, rows, vectors, index, {}, 0)  # type: ignore[arg-type]


_HELD: LRUCache[tuple[int, tuple[str, ...]], Snapshot] = LRUCache(
    HELD_ROWS, getsizeof=lambda s: len(s) + _NAMESPACE_ROWS
)
_BIG: dict[tuple[int, tuple[str, ...]], Snapshot] = {}
"""The last searched namespace too big for ``_HELD``."""
_HELD_LOCK = threading.Lock()


def current(store: Any, namespace: tuple[str, ...]) -> Snapshot:
    """The namespace's snapshot at the store's revision: held, held plus rows since, loaded plus rows since, or read."""
    ns, key = tuple(namespace), (id(store), tuple(namespace))
    revision = store.revision(ns)
    with _HELD_LOCK:
        held = _HELD.get(key, _BIG.get(key))
    if held is not None and held.revision == revision:
        return held
    snap = None
    if held is not None and _continues(held.revision, revision):
        snap = held.apply(store.namespace_rows(ns, since=held.revision.seq))
    if snap is None:
        snap = load(store, ns, revision)
        if snap is not None and snap.revision != revision:
            snap = snap.apply(store.namespace_rows(ns, since=snap.revision.seq))
    if snap is None:
        snap = build(ns, store.namespace_rows(ns), held.cache if held is not None else None)
    if stale(snap):  # a snapshot just read is stale unless too small for a file
        save(store, snap)
    with _HELD_LOCK:
        if len(snap) + _NAMESPACE_ROWS <= HELD_ROWS:
            _HELD[key] = snap
        else:
            _BIG.clear()
            _BIG[key] = snap
    return snap


def _continues(before: Any, now: Any) -> bool:
    """Whether the rows written since ``before`` bring a snapshot at ``before`` up to ``now``."""
    same = before.lineage == now.lineage and before.deletions == now.deletions
    return same and before.token != "absent" and now.token != "absent" and now.seq >= before.seq


def forget_held() -> None:
    """Drop every snapshot this process holds (tests, and after a reindex)."""
    with _HELD_LOCK:
        _HELD.clear()
        _BIG.clear()
