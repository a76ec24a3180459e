"""A namespace's snapshot persisted as a sidecar file, so a fresh process's first search loads arrays.

Reading a 50k-record namespace from Chroma and parsing it takes seconds; loading the
snapshot's columns, BM25 postings and stored documents from one ``.npz`` file takes a
fraction of that. The file is written after a snapshot is built from a full read and is
used only while it reflects the store exactly: it carries the namespace and the revision
token it was built at, and a reader uses it only when the store's current token is that
token. Every write by any process stamps a new token, so a file that another process
made stale is never used; it is rebuilt on the next full read. A file that cannot be
read (corrupt, truncated, another format) is removed with a warning and rebuilt.

A process that brings its snapshot up to date from its own write journal also writes a
small *delta* file: the journal changes leading from the saved revision to its current
one. A fresh worker whose store is at that revision loads the file and applies them
(the same exact ``Snapshot.apply``), so a worker's own writes do not force the next
worker into a full read.

Where: ``store.snapshot_path(namespace)`` (next to an embedded persistent store's
database; a server client sets ``store.snapshot_dir`` to a local folder to opt in).
Tokens that do not name one write (``"initial"``, ``"absent"``) are never trusted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import tempfile
import threading
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from langchain_lifecycle_memory.read._rows import Rows, document_of, raw_items
from langchain_lifecycle_memory.read._snapshot import ROW_COLUMNS, Snapshot
from langchain_lifecycle_memory.read.lexical import LexicalIndex
from langchain_lifecycle_memory.read.routing import is_other_person

__all__ = ["BACKGROUND_RECORDS", "HOLD_S", "MIN_RECORDS", "SIDECARS", "SnapshotFiles"]

FORMAT = 1
MIN_RECORDS = 2000
"""Namespaces smaller than this are read from the store (fast enough) and get no file."""
BACKGROUND_RECORDS = 20_000
"""Snapshots of at least this many records are written by a background thread (0.2-0.5 s at 50k)."""
HOLD_S = 2.0
"""A background write waits at most this long for the search that asked for it to end."""
_PENDING: list[tuple[threading.Thread, threading.Event]] = []
_PENDING_LOCK = threading.Lock()

_TOKEN = re.compile(r"[0-9a-f]{32}")
_COLUMNS = ROW_COLUMNS  # the per-record columns a snapshot holds
_INDEX = ("dl", "post_slots", "post_tf", "indptr", "df")


def _pack(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [s.encode("utf-8") for s in strings]
    ends = np.cumsum([len(b) for b in encoded], dtype=np.int64)
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), ends


def _unpack(blob: np.ndarray, ends: np.ndarray) -> list[str]:
    data = blob.tobytes()
    starts = [0, *ends[:-1].tolist()]
    return [data[a:b].decode("utf-8") for a, b in zip(starts, ends.tolist())]


class SnapshotFiles:
    """Load and save snapshot sidecars (sync and async for the retriever's I/O)."""

    def load(self, store: Any, namespace: tuple[str, ...], token: Any) -> Snapshot | None:
        """The snapshot saved for ``namespace`` at revision ``token``, or ``None``.

        Saved at ``token`` itself, or saved earlier with a delta file whose journal changes
        lead from the saved revision to ``token``.
        """
        namespace = tuple(namespace)
        path = _path(store, namespace, token)
        if path is None or not os.path.exists(path):
            return None
        try:
            meta = _peek(path)  # the file's revision first: a stale file is not unpacked
        except Exception as e:  # a damaged file is rebuilt, never trusted
            _damaged(path, e)
            return None
        if tuple(meta.get("namespace") or ()) != namespace:
            return None
        changes = None
        if meta.get("token") != token:
            delta = _delta_path(path)
            try:
                with open(delta, encoding="utf-8") as f:
                    saved = json.load(f)
                if tuple(saved["namespace"]) != namespace or saved["base"] != meta.get("token"):
                    return None  # another chain of writes: ``refresh`` brings the file up to date
                if saved["token"] != token:
                    return None
                changes = [(str(key), value) for key, value in saved["changes"]]
            except FileNotFoundError:
                return None
            except Exception as e:
                _damaged(delta, e)
                return None
        try:
            snap = _read(path, store, namespace)
        except Exception as e:  # a damaged file is rebuilt, never trusted
            _damaged(path, e)
            return None
        if snap is None or snap.token != meta.get("token"):
            return None
        snap.saved = snap.token
        return snap if changes is None else snap.apply(changes, token)

    def refresh(self, store: Any, namespace: tuple[str, ...], token: Any) -> Snapshot | None:
        """The snapshot at ``token`` from the last file saved (at any revision) and the stored documents.

        For a worker whose file another process's writes made stale: instead of parsing
        and indexing every record, the documents that differ from the file's (new,
        changed or gone, found by comparing the stored JSON) are applied to it with the
        exact ``Snapshot.apply``. Needs ``store.stored_documents`` (an embedded store);
        ``None`` otherwise, or when there is no usable file. A delta file is written for
        the next worker (a full file when the changes were too many for one).
        """
        namespace = tuple(namespace)
        path = _path(store, namespace, token)
        if path is None or not hasattr(store, "stored_documents") or not os.path.exists(path):
            return None
        try:
            snap = _read(path, store, namespace)
        except Exception as e:
            _damaged(path, e)
            return None
        if snap is None:
            return None
        documents = store.stored_documents(namespace)
        if documents is None:
            return None
        snap.saved = snap.token
        before = dict(zip(snap.ids, raw_items(snap.stored)))
        changes: list[tuple[str, Any]] = [(rid, None) for rid in before if rid not in documents]
        for key, document in documents.items():
            if before.get(key) != document:
                try:
                    changes.append((key, json.loads(document)))
                except ValueError:
                    continue  # not JSON: no record (a full read skips it too)
        fresh = snap.apply(changes, token)
        if fresh.saved is not None:
            self.save_delta(fresh)
        elif fresh.texts is not None:
            self.save(fresh)
        return fresh

    async def arefresh(self, store: Any, namespace: tuple[str, ...], token: Any) -> Snapshot | None:
        """Async :meth:`refresh`."""
        return await asyncio.to_thread(self.refresh, store, namespace, token)

    def save_delta(self, snapshot: Snapshot) -> None:
        """Record the journal changes a snapshot applied since its sidecar was saved."""
        path = _path(snapshot.store, snapshot.namespace, snapshot.saved)
        if path is None or not snapshot.since_saved or not _TOKEN.fullmatch(str(snapshot.token)):
            return
        body = {
            "format": FORMAT,
            "namespace": list(snapshot.namespace),
            "base": snapshot.saved,
            "token": snapshot.token,
            "changes": snapshot.since_saved,
        }
        try:
            data = json.dumps(body).encode("utf-8")
        except (TypeError, ValueError):  # a plain item that is not JSON: the next worker reads in full
            return
        _write(_delta_path(path), lambda f: f.write(data))

    def save(self, snapshot: Snapshot) -> None:
        """Persist a snapshot built from a full read (no-op for small or unsaveable ones).

        From ``BACKGROUND_RECORDS`` records on, a background thread writes the file (the
        search that built the snapshot does not wait for it; ``wait`` does). It starts
        writing once that search is over (``release``; after ``HOLD_S`` at the latest),
        so that it does not take the interpreter from the search in the meantime. Until
        it is written the snapshot carries no ``saved`` revision, so no delta file refers to it.
        """
        path = _path(snapshot.store, snapshot.namespace, snapshot.token)
        if path is None or snapshot.texts is None or len(snapshot) < MIN_RECORDS:
            return
        if len(snapshot) < BACKGROUND_RECORDS:
            self._save(snapshot, path)
            return
        go = threading.Event()
        thread = threading.Thread(target=self._save_after, args=(go, snapshot, path), name="lifecycle-snapshot-sidecar")
        with _PENDING_LOCK:
            _PENDING[:] = [(t, e) for t, e in _PENDING if t.is_alive()] + [(thread, go)]
        thread.start()  # not a daemon: an exiting process finishes the file first

    def release(self) -> None:
        """Let the background writes start (the retriever calls this when a search is over)."""
        if not _PENDING:  # the usual case: nothing written in the background
            return
        with _PENDING_LOCK:
            for _, go in _PENDING:
                go.set()
            _PENDING[:] = [(t, e) for t, e in _PENDING if t.is_alive()]

    def wait(self) -> None:
        """Block until every sidecar file being written in the background is written."""
        self.release()
        with _PENDING_LOCK:
            pending = list(_PENDING)
        for thread, _ in pending:
            thread.join()
        with _PENDING_LOCK:
            _PENDING[:] = [(t, e) for t, e in _PENDING if t.is_alive()]

    def _save_after(self, go: threading.Event, snapshot: Snapshot, path: str) -> None:
        go.wait(HOLD_S)
        self._save(snapshot, path)

    def _save(self, snapshot: Snapshot, path: str) -> None:
        arrays = _arrays(snapshot)
        if _write(path, lambda f: np.savez(f, **arrays)):  # type: ignore[arg-type]
            snapshot.saved, snapshot.since_saved = snapshot.token, []
            with contextlib.suppress(OSError):
                os.remove(_delta_path(path))  # it led from the previous file

    async def aload(self, store: Any, namespace: tuple[str, ...], token: Any) -> Snapshot | None:
        """Async :meth:`load`."""
        return await asyncio.to_thread(self.load, store, namespace, token)

    async def asave(self, snapshot: Snapshot) -> None:
        """Async :meth:`save`."""
        await asyncio.to_thread(self.save, snapshot)

    async def asave_delta(self, snapshot: Snapshot) -> None:
        """Async :meth:`save_delta`."""
        await asyncio.to_thread(self.save_delta, snapshot)


SIDECARS = SnapshotFiles()


def _delta_path(path: str) -> str:
    return os.path.splitext(path)[0] + ".delta.json"


def _damaged(path: str, error: Exception) -> None:
    warnings.warn(
        f"Snapshot sidecar {path} is unreadable ({type(error).__name__}: {error}); removed, "
        "the namespace is read from the store and the file rebuilt.",
        RuntimeWarning,
        stacklevel=3,
    )
    with contextlib.suppress(OSError):
        os.remove(path)


def _write(path: str, dump: Any) -> bool:
    """Write a file atomically (readers see the old file or the new one, never half of one)."""
    folder = os.path.dirname(path)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.splitext(path)[1])
        try:
            with os.fdopen(fd, "wb") as f:
                dump(f)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                os.remove(tmp)
    except OSError as e:  # a cache: failing to write it costs the next process a full read
        warnings.warn(f"Could not write snapshot sidecar {path}: {e}", RuntimeWarning, stacklevel=3)
        return False
    return True


def _path(store: Any, namespace: tuple[str, ...], token: Any) -> str | None:
    if not isinstance(token, str) or not _TOKEN.fullmatch(token) or not hasattr(store, "snapshot_path"):
        return None
    return store.snapshot_path(tuple(namespace))


def _arrays(snap: Snapshot) -> dict[str, np.ndarray]:
    stored, records = raw_items(snap.stored), raw_items(snap.records)
    state = snap.index.state()
    meta = {
        "format": FORMAT,
        "namespace": list(snap.namespace),
        "token": snap.token,
        "size": len(snap),
        "views": {str(i): document_of(v) for i, (v, s) in enumerate(zip(records, stored)) if v is not s},
        "attributes": snap.attributes,
        "entities": snap.entities,
        "kinds": snap.kinds,
        "needles": snap.needles,
        "cues": {str(p): c for p, c in snap.cues.items()},
        "entity_alias": {e: [sorted(a), sorted(b)] for e, (a, b) in snap.entity_alias.items()},
        "vocab": state["vocab"],
        "names": state["names"],
        "k1": state["k1"],
        "b": state["b"],
    }
    out = {k: np.asarray(getattr(snap, k)) for k in _COLUMNS}
    out |= {f"index_{k}": np.asarray(state[k]) for k in _INDEX}
    for name, strings in (("docs", [document_of(s) for s in stored]), ("texts", snap.texts), ("ids", snap.ids)):
        out[name], out[name + "_ends"] = _pack(strings)  # type: ignore[arg-type]
    out["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    return out


def _peek(path: str) -> dict[str, Any]:
    """The file's metadata alone (an ``.npz`` member is read only when asked for)."""
    with np.load(path, allow_pickle=False) as f:
        meta: dict[str, Any] = json.loads(f["meta"].tobytes().decode("utf-8"))
    return meta


def _read(path: str, store: Any, namespace: tuple[str, ...]) -> Snapshot | None:
    """The snapshot in ``path`` (``None``: it is another namespace's); raises if damaged."""
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    meta = json.loads(arrays["meta"].tobytes().decode("utf-8"))
    if meta.get("format") != FORMAT:
        msg = f"format {meta.get('format')!r}, expected {FORMAT}"
        raise ValueError(msg)
    if tuple(meta["namespace"]) != namespace:
        return None
    token = meta["token"]
    size = int(meta["size"])
    docs, texts, ids = (_unpack(arrays[n], arrays[n + "_ends"]) for n in ("docs", "texts", "ids"))
    if not len(docs) == len(texts) == len(ids) == size or any(len(arrays[k]) != size for k in _COLUMNS):
        msg = "column lengths disagree"
        raise ValueError(msg)
    records: list[Any] = list(docs)
    for i, view in meta["views"].items():
        records[int(i)] = view
    state = {k: arrays[f"index_{k}"] for k in _INDEX} | {k: meta[k] for k in ("vocab", "names", "k1", "b")}
    entities = meta["entities"]
    return Snapshot(
        store=store,
        records=Rows(records, namespace),
        stored=Rows(docs, namespace),
        index=LexicalIndex.from_state(state, texts),
        entity_alias={e: (set(a), set(b)) for e, (a, b) in meta["entity_alias"].items()},
        position=dict(zip(ids, range(size))),
        attributes=meta["attributes"],
        entities=entities,
        other_entities={e for e in entities if is_other_person(e)},
        kinds=meta["kinds"],
        needles=meta["needles"],
        namespace=namespace,
        token=token,
        cache={},
        cues={int(p): c for p, c in meta["cues"].items()},
        ids=ids,
        texts=texts,
        **{k: arrays[k] for k in _COLUMNS},
    )
