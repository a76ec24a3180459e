"""One namespace's view of a shared bucket (the ``bucketed`` layout): a literal tenant clause and id prefix.

Every row of a bucket carries its namespace in ``_ns`` and an id prefixed by the namespace
and a NUL (labels and keys hold neither ``.`` nor NUL), so a view adds ``{"_ns": namespace}``
to each ``where`` and strips or adds the prefix on ids: two namespaces never share a row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_lifecycle_memory.store import chroma as C

__all__ = ["SEP", "Scoped", "tenant"]

SEP = "\x00"
"""Between a row id's namespace prefix and its key."""


def tenant(namespace: Sequence[str]) -> str:
    """The namespace as the literal value of ``_ns`` (labels hold no ``.``: one string per namespace)."""
    return ".".join(namespace)


class Scoped:
    """One namespace's view of a shared bucket: the tenant clause and id prefix on every call."""

    __slots__ = ("_col", "_prefix", "namespace", "tenant")

    def __init__(self, col: Any, namespace: tuple[str, ...]) -> None:
        self._col = col
        self.namespace = namespace
        self.tenant = tenant(namespace)
        self._prefix = self.tenant + SEP

    @property
    def name(self) -> str:
        return str(self._col.name)

    @property
    def id(self) -> Any:
        return self._col.id

    @property
    def metadata(self) -> Any:
        return {"namespace": json.dumps(list(self.namespace), ensure_ascii=False)}

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

    def _metas(self, metadatas: Sequence[dict[str, Any]] | None, n: int) -> list[dict[str, Any]]:
        return [{**(m or {}), C.SYS_NS: self.tenant} for m in (metadatas or [None] * n)]  # type: ignore[list-item]

    def get(self, ids: Sequence[str] | None = None, where: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        if ids is not None:
            # Prefixed ids name rows of this namespace only (labels hold neither "." nor NUL), and
            # Chroma evaluates a ``where`` over the whole bucket: 15 ms at 10k rows vs 0.4 ms by id.
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

    def nearest_own(self, vector: Sequence[float], fetch: int) -> tuple[list[tuple[str, float]], bool]:
        """This namespace's rows among the bucket's ``fetch`` nearest, unfiltered; and whether the bucket ran out.

        For a namespace that fills most of its bucket, where Chroma's tenant-filtered query
        costs time in the namespace's size. Rows of other namespaces are dropped here by
        their id prefix (every row carries its namespace's) and never leave this method.
        """
        res = self._col.query(query_embeddings=[list(vector)], n_results=fetch, include=["distances"])
        ids, distances = res["ids"][0], res["distances"][0]
        n = len(self._prefix)
        own = [(i[n:], 1.0 - float(d)) for i, d in zip(ids, distances) if i.startswith(self._prefix)]
        return own, len(ids) < fetch

    def query_own(self, vector: Sequence[float], fetch: int, include: Sequence[str]) -> tuple[dict[str, Any], bool]:
        """``query`` for one vector over the bucket's ``fetch`` nearest, unfiltered; and whether it ran out.

        Only this namespace's rows are kept (by id prefix, as :meth:`nearest_own`).
        """
        res = self._col.query(query_embeddings=[list(vector)], n_results=fetch, include=list(include))
        ids = res["ids"][0]
        keep = [j for j, i in enumerate(ids) if i.startswith(self._prefix)]
        out: dict[str, Any] = {"ids": [[ids[j][len(self._prefix) :] for j in keep]]}
        for field in include:
            out[field] = [[res[field][0][j] for j in keep]]
        return out, len(ids) < fetch

    def _write(self, method: str, ids: Sequence[str], metadatas: Any = None, **kwargs: Any) -> Any:
        return getattr(self._col, method)(ids=self._ids(ids), metadatas=self._metas(metadatas, len(ids)), **kwargs)

    def add(self, ids: Sequence[str], **kwargs: Any) -> Any:
        return self._write("add", ids, **kwargs)

    def upsert(self, ids: Sequence[str], **kwargs: Any) -> Any:
        return self._write("upsert", ids, **kwargs)

    def update(self, ids: Sequence[str], **kwargs: Any) -> Any:
        return self._write("update", ids, **kwargs)

    def delete(self, ids: Sequence[str] | None = None, where: dict[str, Any] | None = None) -> Any:
        if ids is not None:
            return self._col.delete(ids=self._ids(ids), where=self._where(where))
        return self._col.delete(where=self._where(where))
