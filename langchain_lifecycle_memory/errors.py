"""Domain errors. Each subclasses a built-in and says how to fix the problem."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from langgraph.store.base import InvalidNamespaceError

__all__ = [
    "EmbeddingMismatchError",
    "ExtractionError",
    "InvalidNamespaceError",
    "InvalidTransitionError",
    "ReindexError",
    "StoreUnavailableError",
]


class EmbeddingMismatchError(ValueError):
    """The collection was written with another embedder than the one configured (migrate with ``reindex``)."""


class InvalidTransitionError(ValueError):
    """A record's status change is not allowed (``pending -> active -> archived``)."""


class StoreUnavailableError(ConnectionError):
    """The Chroma backend cannot be reached (server down, wrong host/port)."""


class ExtractionError(RuntimeError):
    """The model could not produce facts; ``messages`` holds the input turn, ``raw_output`` the last reply."""

    def __init__(self, message: str, *, messages: list[Any] | None = None, raw_output: str | None = None) -> None:
        super().__init__(message)
        self.messages = list(messages or [])
        self.raw_output = raw_output


class ReindexError(RuntimeError):
    """A reindex stopped before switching; the old generation is still in use and a rerun starts clean."""


def __getattr__(name: str) -> Any:
    # LangGraph's own namespace error, re-exported; loaded on first use so that importing
    # the errors (the CLI does, for --help) does not import LangGraph and LangChain.
    if name == "InvalidNamespaceError":
        from langgraph.store.base import InvalidNamespaceError

        return InvalidNamespaceError
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
