"""A small bounded mapping that forgets the least recently used entry (pure).

Process-wide caches keyed by namespace (collection handles, revision tokens, write
journals) would otherwise gain one entry per user ever touched and never shrink.
Callers hold their own lock; this class adds none.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, MutableMapping
from typing import Generic, TypeVar

__all__ = ["LRUCache"]

K = TypeVar("K")
V = TypeVar("V")
_MISSING = object()


class LRUCache(MutableMapping[K, V], Generic[K, V]):
    """A dict bounded to ``maxsize`` entries; reads and writes make an entry recent.

    Example:
        >>> cache = LRUCache(2)
        >>> cache["a"], cache["b"] = 1, 2
        >>> _ = cache.get("a")  # "a" is now the most recent
        >>> cache["c"] = 3      # evicts "b"
        >>> sorted(cache)
        ['a', 'c']
    """

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            msg = f"LRUCache needs maxsize >= 1, got {maxsize}."
            raise ValueError(msg)
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()

    def __getitem__(self, key: K) -> V:
        value = self._data[key]
        self._data.move_to_end(key)
        return value

    def get(self, key: K, default: V | None = None) -> V | None:  # type: ignore[override]
        """The value (now most recent), or ``default`` without touching the order."""
        value = self._data.get(key, _MISSING)
        if value is _MISSING:
            return default
        self._data.move_to_end(key)
        return value  # type: ignore[return-value]

    def get_many(self, keys: Iterable[K]) -> list[V | None]:
        """``get`` of each key, in one pass (found keys become recent, in order; ``None`` where absent)."""
        data = self._data
        found = data.get
        touch = data.move_to_end
        out: list[V | None] = []
        append = out.append
        for key in keys:
            value = found(key, _MISSING)
            if value is _MISSING:
                append(None)
            else:
                touch(key)
                append(value)  # type: ignore[arg-type]
        return out

    def __setitem__(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self.maxsize:
            self._data.popitem(last=False)

    def __delitem__(self, key: K) -> None:
        del self._data[key]

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"LRUCache(maxsize={self.maxsize}, size={len(self._data)})"
