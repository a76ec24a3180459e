"""Storage layouts: which Chroma collection holds a namespace's rows.

* ``"collection"``: one collection per namespace (every store made before layouts had a
  name uses it). A tenant's search needs no filter, but Chroma keeps ~2.5 MB resident
  per collection once touched, embedded or in a server, so memory grows with the users
  served (2.7 MB per user measured; 10k users would need ~27 GB).
* ``"bucketed"``: namespaces are hashed into a fixed number of shared collections
  (``buckets``). Every row carries its namespace in ``_ns`` (``".".join(namespace)``:
  labels cannot hold ``.``, so it is injective) and every read of a bucket goes through
  a ``_scoped.Scoped`` view that adds ``{"_ns": namespace}`` to its ``where`` and prefixes the
  row ids with ``namespace + NUL`` (neither labels nor keys can hold NUL), so two
  namespaces never share a row and a label is only ever compared literally. A per-generation
  registry collection holds one row per namespace: its revision token, and the dotted
  prefixes of every depth (``p1``, ``p2``, ...) so that a prefix search finds its
  namespaces with one literal ``where``.

The layout is recorded in the ``<prefix>.meta`` collection with the generation, so a
store reopened without ``layout=`` finds it; ``store.migrate_layout`` moves a store from
one to the other through the reindex generation switch.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from typing import TYPE_CHECKING, Any

from langchain_lifecycle_memory.store import chroma as C
from langchain_lifecycle_memory.store._scoped import Scoped, tenant
from langchain_lifecycle_memory.store.lru import LRUCache

if TYPE_CHECKING:
    from langchain_lifecycle_memory.store.chroma_store import ChromaMemoryStore

__all__ = [
    "DEFAULT_BUCKETS",
    "DEFAULT_LAYOUT",
    "LAYOUTS",
    "BucketedLayout",
    "CollectionLayout",
    "Scoped",
    "make_layout",
]

LAYOUTS = ("collection", "bucketed")
DEFAULT_LAYOUT = "bucketed"
"""Layout of a new store opened without ``layout=`` (existing stores keep theirs)."""
DEFAULT_BUCKETS = 16
KNOWN_NAMESPACES = 4096
"""Namespaces a bucketed layout remembers as registered (LRU)."""
REVISION_KEY = "revision"
_SPACE = {"hnsw": {"space": "cosine"}}


def _not_found(e: Exception) -> bool:
    from chromadb.errors import NotFoundError

    return isinstance(e, NotFoundError)


class CollectionLayout:
    """One collection per namespace; the revision token in the collection's metadata."""

    name = "collection"
    buckets = 0

    def record(self) -> dict[str, Any]:
        return {"layout": self.name}

    def forget(self) -> None:
        """Nothing cached at this level (the store caches the handles)."""

    def open(
        self,
        store: ChromaMemoryStore,
        ns: tuple[str, ...],
        *,
        create: bool,
        generation: int | None = None,
        fingerprint: dict[str, Any] | None = None,
    ) -> Any | None:
        name = C.collection_name(store.prefix, store.generation if generation is None else generation, ns)
        try:
            return store._guard(lambda: store.client.get_collection(name, embedding_function=None))
        except Exception as e:
            if not _not_found(e) or not create:
                if _not_found(e):
                    return None
                raise
        metadata = {
            "namespace": json.dumps(list(ns), ensure_ascii=False),
            "fingerprint": json.dumps(fingerprint or store.fingerprint, sort_keys=True),
        }
        col = store._guard(
            lambda: store.client.get_or_create_collection(
                name, metadata=metadata, embedding_function=None, configuration=_SPACE
            )
        )
        if generation is None or generation == store.generation:
            store._opened_new(ns)
        return col

    def reader(self, store: ChromaMemoryStore, ns: tuple[str, ...]) -> Any | None:
        """The namespace's collection for a read (``None``: it has none)."""
        return self.open(store, ns, create=False)

    def namespaces(self, store: ChromaMemoryStore, generation: int, prefix: tuple[str, ...] = ()) -> list[Any]:
        start = C.generation_prefix(store.prefix, generation)
        out = []
        for col in store._guard(store.client.list_collections):
            if col.name.startswith(start) and col.metadata and "namespace" in col.metadata:
                ns = tuple(json.loads(col.metadata["namespace"]))
                if C.has_prefix(ns, prefix):
                    out.append((ns, col))
        return out

    def stamp(self, store: ChromaMemoryStore, ns: tuple[str, ...], col: Any, before: bool = True) -> tuple[str, str]:
        """Write a new revision token; returns ``(token before, new token)`` (``NotFoundError`` if gone).

        The collection's metadata is read either way (``modify`` replaces it whole).
        """
        fresh = store._guard(lambda: store.client.get_collection(col.name, embedding_function=None))
        before = str((fresh.metadata or {}).get(REVISION_KEY, "initial"))
        token = uuid.uuid4().hex
        store._guard(lambda: col.modify(metadata={**(fresh.metadata or {}), REVISION_KEY: token}))
        return before, token

    def read_token(self, store: ChromaMemoryStore, ns: tuple[str, ...]) -> str:
        name = C.collection_name(store.prefix, store.generation, ns)
        try:
            col = store._guard(lambda: store.client.get_collection(name, embedding_function=None))
        except Exception as e:
            if _not_found(e):
                return "absent"
            raise
        return str((col.metadata or {}).get(REVISION_KEY, "initial"))

    def drop(self, store: ChromaMemoryStore, ns: tuple[str, ...], col: Any) -> int:
        removed = int(store._guard(col.count))
        store._guard(lambda: store.client.delete_collection(col.name))
        return removed


class BucketedLayout:
    """Namespaces hashed into ``buckets`` shared collections, read through :class:`Scoped`."""

    name = "bucketed"

    def __init__(self, buckets: int = DEFAULT_BUCKETS) -> None:
        if not isinstance(buckets, int) or isinstance(buckets, bool) or not 1 <= buckets <= 4096:
            msg = f"buckets must be an int from 1 to 4096, got {buckets!r}."
            raise ValueError(msg)
        self.buckets = buckets
        self._cache: dict[str, Any] = {}
        # Namespaces seen registered (by a revision read, an open or a write): opening one
        # again skips the registry read. A namespace purged elsewhere meanwhile opens to a
        # view that reads nothing, exactly as an empty namespace; a write re-registers it.
        self._known: LRUCache[str, bool] = LRUCache(KNOWN_NAMESPACES)
        self._known_lock = threading.Lock()

    def _mark(self, ns: tuple[str, ...], known: bool) -> None:
        with self._known_lock:
            if known:
                self._known[tenant(ns)] = True
            else:
                self._known.pop(tenant(ns), None)

    def _is_known(self, ns: tuple[str, ...]) -> bool:
        with self._known_lock:
            return tenant(ns) in self._known

    def record(self) -> dict[str, Any]:
        return {"layout": self.name, "buckets": self.buckets}

    def forget(self) -> None:
        """Drop cached collection objects (one was deleted behind this process's back)."""
        self._cache.clear()
        with self._known_lock:
            self._known.clear()

    def bucket_name(self, store: ChromaMemoryStore, generation: int, ns: tuple[str, ...]) -> str:
        digest = hashlib.sha256(tenant(ns).encode("utf-8", "surrogatepass")).digest()
        return f"{store.prefix}.g{generation}.b{int.from_bytes(digest[:8], 'big') % self.buckets:04d}"

    def registry_name(self, store: ChromaMemoryStore, generation: int) -> str:
        return f"{store.prefix}.g{generation}.namespaces"

    def _collection(self, store: ChromaMemoryStore, name: str, create: bool) -> Any | None:
        col = self._cache.get(name)
        if col is not None:
            return col
        try:
            col = store._guard(lambda: store.client.get_collection(name, embedding_function=None))
        except Exception as e:
            if not _not_found(e):
                raise
            if not create:
                return None
            col = store._guard(
                lambda: store.client.get_or_create_collection(name, embedding_function=None, configuration=_SPACE)
            )
        self._cache[name] = col
        return col

    def _registry(self, store: ChromaMemoryStore, generation: int, create: bool) -> Any | None:
        return self._collection(store, self.registry_name(store, generation), create)

    def _on_registry(self, store: ChromaMemoryStore, generation: int, create: bool, fn: Any) -> Any:
        """``fn(registry)``, once more with a fresh handle if the cached one was deleted; ``None`` if absent."""
        for attempt in (0, 1):
            reg = self._registry(store, generation, create)
            if reg is None:
                return None
            try:
                return store._guard(lambda reg=reg: fn(reg))
            except Exception as e:
                if not _not_found(e) or attempt:
                    raise
                self.forget()
        return None  # pragma: no cover

    @staticmethod
    def _row(ns: tuple[str, ...], token: str) -> dict[str, Any]:
        row: dict[str, Any] = {"namespace": json.dumps(list(ns), ensure_ascii=False), REVISION_KEY: token}
        row.update({f"p{d}": tenant(ns[:d]) for d in range(1, len(ns) + 1)})
        return row

    def _register(self, reg: Any, ns: tuple[str, ...], token: str) -> None:
        reg.upsert(ids=[tenant(ns)], embeddings=[[1.0]], metadatas=[self._row(ns, token)])

    def open(
        self,
        store: ChromaMemoryStore,
        ns: tuple[str, ...],
        *,
        create: bool,
        generation: int | None = None,
        fingerprint: dict[str, Any] | None = None,
    ) -> Any | None:
        gen = store.generation if generation is None else generation
        current = gen == store.generation
        known = current and self._is_known(ns)
        if not known:
            known = self._on_registry(store, gen, create, lambda reg: reg.get(ids=[tenant(ns)], include=[])["ids"])
        if not known and not create:
            return None
        bucket = self._collection(store, self.bucket_name(store, gen, ns), create)
        if bucket is None:
            return None
        if not known:
            self._on_registry(store, gen, True, lambda reg: self._register(reg, ns, "initial"))
            if current:
                store._opened_new(ns)  # unregistered until now: no rows in the bucket
        if current:
            self._mark(ns, True)
        return Scoped(bucket, ns)

    def reader(self, store: ChromaMemoryStore, ns: tuple[str, ...]) -> Any | None:
        """A view of ``ns`` for a read, without the registry lookup ``open`` makes.

        Rows reach a bucket only after their namespace is registered (``open(create=True)``)
        and leave it before it is unregistered (``drop``), so the view of a namespace that is
        not registered reads nothing, exactly as an empty one; and it is the namespace's own
        scoped view either way. Never cached as the namespace's handle (a write must still
        register it first).
        """
        bucket = self._collection(store, self.bucket_name(store, store.generation, ns), False)
        return None if bucket is None else Scoped(bucket, ns)

    def namespaces(self, store: ChromaMemoryStore, generation: int, prefix: tuple[str, ...] = ()) -> list[Any]:
        where = {f"p{len(prefix)}": tenant(prefix)} if prefix else None
        got = self._on_registry(store, generation, False, lambda reg: reg.get(where=where, include=["metadatas"]))
        out = []
        for meta in (got or {}).get("metadatas") or []:
            ns = tuple(json.loads(meta["namespace"]))
            if not C.has_prefix(ns, prefix):
                continue
            bucket = self._collection(store, self.bucket_name(store, generation, ns), False)
            if bucket is not None:
                out.append((ns, Scoped(bucket, ns)))
        return out

    def stamp(self, store: ChromaMemoryStore, ns: tuple[str, ...], col: Any, before: bool = True) -> tuple[str, str]:
        """Write a new revision token; returns ``(token before, new token)``.

        An upsert of the whole registry row: a write re-registers a namespace that another
        process purged meanwhile (its rows are in the bucket again). ``before=False``: the
        token before is not needed (nothing journals the write) and not read (``""``).
        """
        old = ""
        if before:
            got = self._on_registry(
                store, store.generation, True, lambda reg: reg.get(ids=[tenant(ns)], include=["metadatas"])
            )
            metas = (got or {}).get("metadatas") or []
            old = str((metas[0] or {}).get(REVISION_KEY, "initial")) if metas else "absent"
        token = uuid.uuid4().hex
        self._on_registry(store, store.generation, True, lambda reg: self._register(reg, ns, token))
        self._mark(ns, True)
        return old, token

    def read_token(self, store: ChromaMemoryStore, ns: tuple[str, ...]) -> str:
        got = self._on_registry(
            store, store.generation, False, lambda reg: reg.get(ids=[tenant(ns)], include=["metadatas"])
        )
        metas = (got or {}).get("metadatas") or []
        self._mark(ns, bool(metas))
        if not metas:
            return "absent"
        return str((metas[0] or {}).get(REVISION_KEY, "initial"))

    def drop(self, store: ChromaMemoryStore, ns: tuple[str, ...], col: Any) -> int:
        removed = int(store._guard(col.count))
        store._guard(col.delete)
        self._on_registry(store, store.generation, False, lambda reg: reg.delete(ids=[tenant(ns)]))
        self._mark(ns, False)
        return removed


def make_layout(name: str | None, buckets: int | None = None) -> CollectionLayout | BucketedLayout:
    """The layout object of a name (``None``: the default for new stores)."""
    name = DEFAULT_LAYOUT if name is None else name
    if name == "collection":
        return CollectionLayout()
    if name == "bucketed":
        return BucketedLayout(DEFAULT_BUCKETS if buckets is None else buckets)
    msg = f"Unknown layout {name!r}; use one of {list(LAYOUTS)}."
    raise ValueError(msg)


def recorded(
    metadata: dict[str, Any] | None, requested: tuple[Any, Any] = (None, None), prefix: str = ""
) -> CollectionLayout | BucketedLayout:
    """The layout a store's meta record names (stores from before layouts: one collection per namespace).

    ``requested`` (``layout=``, ``buckets=`` of the constructor) must agree with it.
    """
    meta = metadata or {}
    stored = make_layout(str(meta.get("layout") or "collection"), int(meta.get("buckets") or DEFAULT_BUCKETS))
    name, buckets = requested
    if (name is not None and name != stored.name) or (
        buckets is not None and stored.name == "bucketed" and buckets != stored.buckets
    ):
        asked = {"layout": name or stored.name, "buckets": buckets}
        msg = (
            f"The store '{prefix}' uses layout {stored.record()}, not {asked}. Open it without "
            "layout=/buckets=, or move it with `store.migrate_layout(...)`."
        )
        raise ValueError(msg)
    return stored


def drop_everywhere(store: ChromaMemoryStore, prefix: tuple[str, ...]) -> int:
    """Delete the bucket rows under ``prefix`` in *every* generation's registry; returns the rows removed.

    The bucketed half of ``maintenance.drop_collections``: the leftovers of an interrupted
    reindex or migration, which the current generation's purge does not see.
    """
    removed = 0
    start = store.prefix + ".g"
    names = [c.name for c in store._guard(store.client.list_collections)]
    where = {f"p{len(prefix)}": tenant(prefix)} if prefix else None
    for name in names:
        if not (name.startswith(start) and name.endswith(".namespaces")):
            continue
        reg = store._guard(lambda name=name: store.client.get_collection(name, embedding_function=None))
        got = store._guard(lambda reg=reg: reg.get(where=where, include=["metadatas"]))
        doomed = [ns for m in got["metadatas"] or [] if C.has_prefix(ns := tuple(json.loads(m["namespace"])), prefix)]
        if not doomed:
            continue
        buckets = [b for b in names if b.startswith(name[: -len("namespaces")] + "b")]
        for bucket_name in buckets:
            bucket = store._guard(lambda b=bucket_name: store.client.get_collection(b, embedding_function=None))
            for ns in doomed:
                view = Scoped(bucket, ns)
                removed += int(store._guard(view.count))
                store._guard(view.delete)
        store._guard(lambda reg=reg, doomed=doomed: reg.delete(ids=[tenant(ns) for ns in doomed]))
    return removed


def scrub_deleted_log_rows(db: Any) -> int:
    """Blank the write-ahead log entries of rows that no longer exist in a live collection.

    Dropping a collection lets compaction delete its whole log; a purge in a shared bucket
    deletes rows of a collection that lives on, and Chroma keeps their upserts (document,
    metadata, vector) in ``embeddings_queue``. A log entry of a row that is gone from the
    collection's metadata segment is followed by its delete, so replaying it blank yields
    the same state. Returns how many entries were blanked; ``secure_delete`` + ``VACUUM``
    leave no copy of the old bytes in the file.
    """
    import sqlite3

    con = sqlite3.connect(db, timeout=30, isolation_level=None)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not {"embeddings_queue", "embeddings", "segments"} <= tables:
            return 0
        con.execute("PRAGMA secure_delete=ON")
        blanked = con.execute(
            """
            UPDATE embeddings_queue
               SET metadata = NULL, vector = zeroblob(length(vector))
             WHERE (metadata IS NOT NULL OR vector IS NOT NULL)
               AND NOT EXISTS (
                   SELECT 1 FROM embeddings e JOIN segments s ON e.segment_id = s.id
                    WHERE e.embedding_id = embeddings_queue.id
                      AND embeddings_queue.topic LIKE '%' || s.collection)
            """
        ).rowcount
        if blanked:
            con.execute("VACUUM")
        return int(blanked)
    finally:
        con.close()
