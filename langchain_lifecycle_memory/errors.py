"""Domain errors. Each subclasses a built-in and says how to fix the problem."""

from __future__ import annotations

from langgraph.store.base import InvalidNamespaceError

__all__ = [
    "EmbeddingMismatchError",
    "ExtractionError",
    "InvalidNamespaceError",
    "InvalidTransitionError",
    "StoreUnavailableError",
]


class EmbeddingMismatchError(ValueError):
    """The collection was written with another embedder than the one configured.

    Scores from two embedding models are not comparable, so the store refuses to
    mix them. Open the store with the original embedder, or migrate with
    ``store.reindex(new_embeddings)`` / ``lifecycle-memory reindex``.
    """


class InvalidTransitionError(ValueError):
    """A record's status change is not allowed (``pending -> active -> archived``)."""


class StoreUnavailableError(ConnectionError):
    """The Chroma backend cannot be reached (server down, wrong host/port)."""


class ExtractionError(RuntimeError):
    """The model could not produce facts; the raw turn was kept."""
