"""One shared helper object per embedder instance, in a bounded registry (pure).

Helpers that keep vectors of one embedder (query centring, write-time cue vectors) are
shared by every retriever using that embedder object, so vectors are computed once per
process instead of once per retriever.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from typing_extensions import Self

__all__ = ["PerEmbedder"]


class PerEmbedder:
    """Base class: ``for_embeddings(emb)`` returns this class's shared instance for ``emb``.

    Each subclass has its own registry of at most ``max_embedders`` embedder objects (the
    oldest is dropped first). Entries are keyed by ``id()`` and checked by identity, so an
    id reused by a new object never hands out another embedder's vectors.
    """

    max_embedders: ClassVar[int] = 16
    _registry_lock: ClassVar[threading.Lock]
    _registry: ClassVar[dict[int, tuple[Any, Any]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._registry_lock = threading.Lock()
        cls._registry = {}

    @classmethod
    def for_embeddings(cls, embeddings: Any) -> Self:
        """The shared instance for this embedder object."""
        with cls._registry_lock:
            hit = cls._registry.get(id(embeddings))
            if hit is None or hit[0] is not embeddings:
                if len(cls._registry) >= cls.max_embedders:
                    cls._registry.pop(next(iter(cls._registry)))
                hit = (embeddings, cls())
                cls._registry[id(embeddings)] = hit
            return hit[1]
