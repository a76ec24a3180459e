"""Long-term memory for LangChain/LangGraph that stays right after it is written."""

import os as _os

# Offline by default: Chroma's telemetry would try the network. Setting it through the
# environment (not per client) also keeps every in-process client's settings identical,
# which Chroma requires for ephemeral clients.
_os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from langchain_lifecycle_memory.embeddings import UniversalSentenceEncoderEmbeddings, embedding_fingerprint
from langchain_lifecycle_memory.errors import (
    EmbeddingMismatchError,
    ExtractionError,
    InvalidNamespaceError,
    InvalidTransitionError,
    StoreUnavailableError,
)
from langchain_lifecycle_memory.schema import Fact, MemoryRecord, MemorySource, MemoryStatus
from langchain_lifecycle_memory.store import ChromaMemoryStore

__all__ = [
    "ChromaMemoryStore",
    "EmbeddingMismatchError",
    "ExtractionError",
    "Fact",
    "InvalidNamespaceError",
    "InvalidTransitionError",
    "MemoryRecord",
    "MemorySource",
    "MemoryStatus",
    "StoreUnavailableError",
    "UniversalSentenceEncoderEmbeddings",
    "embedding_fingerprint",
]
