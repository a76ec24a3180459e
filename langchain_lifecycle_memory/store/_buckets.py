"""Where a namespace's rows live: shared bucket collections and a registry of namespaces and revisions.

Rows carry ``_ns`` and ids prefixed ``namespace + NUL``; every read goes through a :class:`Scoped` view.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_lifecycle_memory.store import chroma as C

__all__ = ["SEP", "Buckets", "Revision", "Scoped", "tenant"]

T = TypeVar("T")
SEP = "\x00"
"""Between a row id's namespace prefix and its key."""
ABSENT = "absent"
# Every write persists Chroma's vector index at once, so its log is pruned and no copy of an
# edited or deleted text outlives the write (Chroma's `sync_threshold`, the supported knob).
BUCKET_CONFIGURATION = {"hnsw": {"space": "cosine", "sync_threshold": 2}}


def tenant(namespace: Sequence[str]) -> str:
    """The namespace as the literal value of ``_ns`` (labels hold no ``.``: one string per namespace)."""
    return ".".join(namespace)


@dataclass(frozen=True)
class Revision:
    """A namespace's state as the registry records it."""

    token: str
    seq: int = 0
    """Sequence number of its latest write (rows carry the number of the write that made them)."""
    deletions: int = 0
    """How many writes deleted rows (a reader holding older rows must read them all again)."""
    lineage: str = ""
    """Made when the namespace is first written (again, after a purge): rows of another lineage are gone."""


class Scoped:
    """One namespace's view of a shared bucket: the tenant clause and id prefix on every call."""

    __slots__ = ("_col", "_prefix", "namespace", "tenant")

    def __init__(self, col: Any, namespace: tuple[str, ...]) -> None:
        self._col = col
        self.namespace = namespace
        self.tenant = tenant(namespace)
        self._prefix = self.tenant + SEP

    def _ids(self, ids: Sequence[str]) -> list[str]:
        return [self._prefix + i for i in ids]

    def _own(self, ids: Sequence[str]) -> list[str]:
        n = len(self._prefix)
        if any(not i.startswith(self._prefix) for i in ids):  # never: every row of ours carries both
            msg = f"A row of another namespace reached the view of {self.namespace}; refusing to return it."
            raise RuntimeError(msg)
        return [i[n:] for i in ids]

    def _where(self, where: dict[str, Any] | None) -> dict[str, Any]:
        mine = {C.SYS_NS: self.tenant}
        return {"$and": [mine, where]} if where else mine

    def get(self, ids: Sequence[str] | None = None, where: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        if ids is not None:  # prefixed ids name rows of this namespace only
            got = self._col.get(ids=self._ids(ids), where=where or None, **kwargs)
        else:
            got = self._col.get(where=self._where(where), **kwargs)
        got["ids"] = self._own(got["ids"])
        return got

    def query(self, *, where: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        res = self._col.query(where=self._where(where), **kwargs)
        res["ids"] = [self._own(row) for row in res["ids"]]
        return res

    def count(self) -> int:
        return len(self._col.get(where=self._where(None), include=[])["ids"])

    def upsert(self, ids: Sequence[str], metadatas: Sequence[dict[str, Any]], **kwargs: Any) -> Any:
        metas = [{**m, C.SYS_NS: self.tenant} for m in metadatas]
        return self._col.upsert(ids=self._ids(ids), metadatas=metas, **kwargs)

    def update(self, ids: Sequence[str], metadatas: Sequence[dict[str, Any]]) -> Any:
        return self._col.update(ids=self._ids(ids), metadatas=[{**m, C.SYS_NS: self.tenant} for m in metadatas])

    def delete(self, ids: Sequence[str] | None = None, where: dict[str, Any] | None = None) -> Any:
        if ids is not None:
            return self._col.delete(ids=self._ids(ids), where=self._where(where))
        return self._col.delete(where=self._where(where))


class Buckets:
    """The bucket collections and the namespace registry of one store generation."""

    def __init__(self, store: Any, buckets: int) -> None:
        if not isinstance(buckets, int) or isinstance(buckets, bool) or not 1 <= buckets <= 4096:
            msg = f"buckets must be an int from 1 to 4096, got {buckets!r}."
            raise ValueError(msg)
        self.store = store
        self.count = buckets
        self._cache: dict[tuple[int, str], Any] = {}

    # ------------------------------------------------------------------ names
    def bucket_name(self, generation: int, ns: tuple[str, ...]) -> str:
        digest = hashlib.sha256(tenant(ns).encode("utf-8", "surrogatepass")).digest()
        return f"{self.store.prefix}.g{generation}.b{int.from_bytes(digest[:8], 'big') % self.count:04d}"

    def collection(self, name: str, *, create: bool) -> Any | None:
        """The collection ``name`` (created if asked), cached for the client's epoch."""
        sc = self.store._client
        key = (sc.epoch, name)
        col = self._cache.get(key)
        if col is not None:
            return col
        from chromadb.errors import NotFoundError

        try:
            col = sc(lambda: sc.client.get_collection(name, embedding_function=None))
        except NotFoundError:
            if not create:
                return None
            config = BUCKET_CONFIGURATION if not name.endswith(".namespaces") else None
            col = sc(lambda: sc.client.get_or_create_collection(name, embedding_function=None, configuration=config))
        if len(self._cache) > 4 * self.count + 64:
            self._cache.clear()
        self._cache[key] = col
        return col

    def forget(self) -> None:
        """Drop cached collection handles (a collection was deleted or recreated)."""
        self._cache.clear()

    def retrying(self, fn: Callable[[], T]) -> T:
        """``fn()``, once more with fresh handles if a collection vanished meanwhile (a purge, a reset server)."""
        from chromadb.errors import NotFoundError

        try:
            return fn()
        except NotFoundError:
            self.forget()
            return fn()

    # ------------------------------------------------------------------ namespaces
    def view(self, ns: tuple[str, ...], *, create: bool = False, generation: int | None = None) -> Scoped | None:
        """The namespace's view of its bucket (``None``: the bucket does not exist and ``create`` is off)."""
        gen = self.store.current_generation() if generation is None else generation
        bucket = self.collection(self.bucket_name(gen, ns), create=create)
        return None if bucket is None else Scoped(bucket, ns)

    def revision(self, ns: tuple[str, ...], generation: int | None = None) -> Revision:
        """The namespace's registry row (``token == "absent"``: never written, or purged)."""
        reg = self._registry(generation, create=False)
        if reg is None:
            return Revision(ABSENT)
        got = self.store._client(lambda: reg.get(ids=[tenant(ns)], include=["metadatas"]))
        metas = got.get("metadatas") or []
        if not metas:
            return Revision(ABSENT)
        meta = metas[0] or {}
        return Revision(
            str(meta.get("rev", "initial")), int(meta.get("seq", 0)), int(meta.get("del", 0)), str(meta.get("line", ""))
        )

    def record_write(
        self, ns: tuple[str, ...], before: Revision, *, deleted: bool, generation: int | None = None
    ) -> Revision:
        """Register ``ns`` with a new revision after a write (``before``: its revision when the write began)."""
        lineage = before.lineage if before.token != ABSENT and before.lineage else uuid.uuid4().hex
        after = Revision(uuid.uuid4().hex, before.seq + 1, before.deletions + (1 if deleted else 0), lineage)
        row: dict[str, Any] = {"namespace": json.dumps(list(ns), ensure_ascii=False), "rev": after.token}
        row |= {"seq": after.seq, "del": after.deletions, "line": lineage}
        row |= {f"p{d}": tenant(ns[:d]) for d in range(1, len(ns) + 1)}
        reg = self._registry(generation, create=True)
        self.store._client(lambda: reg.upsert(ids=[tenant(ns)], embeddings=[[1.0]], metadatas=[row]))
        return after

    def unregister(self, ns: tuple[str, ...], generation: int | None = None) -> None:
        reg = self._registry(generation, create=False)
        if reg is not None:
            self.store._client(lambda: reg.delete(ids=[tenant(ns)]))

    def namespaces(self, prefix: tuple[str, ...] = (), generation: int | None = None) -> list[tuple[str, ...]]:
        """Every registered namespace under ``prefix`` (literal labels), read fresh from Chroma."""
        reg = self._registry(generation, create=False)
        if reg is None:
            return []
        where = {f"p{len(prefix)}": tenant(prefix)} if prefix else None
        got = self.store._client(lambda: reg.get(where=where, include=["metadatas"]))
        found = (tuple(json.loads(m["namespace"])) for m in got.get("metadatas") or [] if m)
        gen = self.store.current_generation() if generation is None else generation
        return sorted(  # a namespace whose bucket was dropped under us (a reset) holds nothing
            ns for ns in found if C.has_prefix(ns, prefix) and self.collection(self.bucket_name(gen, ns), create=False)
        )

    def _registry(self, generation: int | None, *, create: bool) -> Any | None:
        gen = self.store.current_generation() if generation is None else generation
        return self.collection(f"{self.store.prefix}.g{gen}.namespaces", create=create)
