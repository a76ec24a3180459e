"""A snapshot's records, kept as their stored JSON documents until one is read.

A 50k-record namespace held as ``MemoryRecord`` objects costs hundreds of MB and a
pydantic validation per record; the retriever only ever looks at the few records it
returns. ``Rows`` holds each record as the document it was read from (validated when it
was first read from the store) and parses a row the first time it is indexed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np

from langchain_lifecycle_memory.read.lexical import LexicalIndex
from langchain_lifecycle_memory.schema import MemoryRecord

__all__ = ["Picked", "PickedIndex", "Rows", "document_of", "local_positions", "raw_items", "top_order"]


class Rows(Sequence[MemoryRecord]):
    """A list of records whose items are ``MemoryRecord`` objects or their JSON documents."""

    __slots__ = ("_items", "namespace")

    def __init__(self, items: list[MemoryRecord | str], namespace: tuple[str, ...]) -> None:
        self._items = items
        self.namespace = tuple(namespace)

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, i: int) -> MemoryRecord: ...
    @overload
    def __getitem__(self, i: slice) -> Rows: ...
    def __getitem__(self, i: int | slice) -> MemoryRecord | Rows:
        if isinstance(i, slice):
            return Rows(self._items[i], self.namespace)
        item = self._items[i]
        if isinstance(item, str):  # validated when first read from the store: parses
            item = self._items[i] = MemoryRecord.from_value(self.namespace, json.loads(item))
        return item

    def __setitem__(self, i: int, record: MemoryRecord) -> None:
        self._items[i] = record

    def __iter__(self) -> Iterator[MemoryRecord]:
        for i in range(len(self._items)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Rows({len(self)} records of {self.namespace})"


def raw_items(rows: Sequence[MemoryRecord]) -> list[Any]:
    """The items behind ``rows`` (documents or records) without parsing any."""
    return rows._items if isinstance(rows, Rows) else list(rows)


def document_of(item: MemoryRecord | str) -> str:
    """A row's JSON document (its stored form, or the record's ``to_value``)."""
    return item if isinstance(item, str) else json.dumps(item.to_value())


class Picked(Sequence[MemoryRecord]):
    """Some rows of a record list, parsed only when read."""

    def __init__(self, base: Sequence[MemoryRecord], rows: np.ndarray) -> None:
        self._base, self._rows = base, rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._base[int(p)] for p in self._rows[i]]
        return self._base[int(self._rows[i])]


class PickedIndex:
    """The BM25 scores of some rows (computed over the whole namespace) and its known names."""

    def __init__(self, index: LexicalIndex, rows: np.ndarray, scores: dict[str, tuple[np.ndarray, float]]) -> None:
        self._index, self._rows, self._scores = index, rows, scores

    def scores(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        raw, ideal = self._scores.get(query) or self._index.raw_scores(query)
        return LexicalIndex.coverage(raw[self._rows], ideal)

    def scores_at(self, query: str, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = self._rows[positions]
        hit = self._scores.get(query)
        raw, ideal = (hit[0][rows], hit[1]) if hit is not None else self._index.raw_scores_at(query, rows)
        return LexicalIndex.coverage(raw, ideal)

    def mentions_known_name(self, query: str) -> bool:
        return self._index.mentions_known_name(query)

    def doc_freq(self, token: str) -> int:
        return self._index.doc_freq(token)

    def idf(self, token: str) -> float:
        return self._index.idf(token)

    def shared_idfs(self, tokens: Any) -> dict[str, float]:
        return self._index.shared_idfs(tokens)


def local_positions(rows: np.ndarray, positions: list[int]) -> dict[int, int]:
    """Each of ``positions`` that is in the sorted ``rows`` -> its index there."""
    if not positions or not len(rows):
        return {}
    at = np.searchsorted(rows, positions)
    found = (at < len(rows)) & (rows[np.minimum(at, len(rows) - 1)] == positions)
    return {p: int(i) for p, i, ok in zip(positions, at.tolist(), found.tolist()) if ok}


def top_order(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest ``values``, largest first, ties in index order.

    Equals ``np.argsort(-values, kind="stable")[:k]``; for ``k`` well below
    ``len(values)`` it partitions first and sorts only the values that can be among them
    (a search keeps thousands of records that share a common word and shows ten).
    """
    n = len(values)
    if k <= 0:
        return np.zeros(0, dtype=np.intp)
    if n <= max(64, 4 * k):
        return np.argsort(-values, kind="stable")[:k]
    negated = -values
    kth = np.partition(negated, k - 1)[k - 1]
    if np.isnan(kth):  # fewer than k comparable values: the full sort places the NaNs
        return np.argsort(negated, kind="stable")[:k]
    chosen = np.flatnonzero(negated <= kth)
    return chosen[np.argsort(negated[chosen], kind="stable")][:k]
