"""Long-term memory for LangChain/LangGraph that stays right after it is written."""

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
