"""Long-term memory for LangChain/LangGraph that stays right after it is written.

Public names load lazily. Layout: ``write`` -> ``store`` -> ``read`` and ``lifecycle``, wired by ``graph``.
"""

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs; runtime loads lazily
    from langchain_lifecycle_memory.errors import (
        EmbeddingMismatchError,
        ExtractionError,
        InvalidNamespaceError,
        StoreUnavailableError,
    )
    from langchain_lifecycle_memory.graph.memory import LifecycleMemory
    from langchain_lifecycle_memory.graph.nodes import create_memory_agent, create_memory_reader, create_memory_writer
    from langchain_lifecycle_memory.graph.store import ChromaMemoryStore
    from langchain_lifecycle_memory.lifecycle.operations import forget, sweep
    from langchain_lifecycle_memory.read.injection import MemoryBlock, format_memories
    from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever
    from langchain_lifecycle_memory.schema import Fact, MemoryRecord, MemorySource, MemoryStatus
    from langchain_lifecycle_memory.store.embeddings import UniversalSentenceEncoderEmbeddings
    from langchain_lifecycle_memory.store.retention import RetentionPolicy
    from langchain_lifecycle_memory.write.extraction import create_extractor, create_rule_extractor
    from langchain_lifecycle_memory.write.redaction import Redactor
    from langchain_lifecycle_memory.write.update import UpdateConfig

# The names a user needs; everything else is importable from its stage subpackage
# (``store``, ``write``, ``read``, ``lifecycle``, ``graph``). Pinned by tests/unit_tests/test_imports.py.
__all__ = [
    "LifecycleMemory",
    "ChromaMemoryStore",
    "LifecycleRetriever",
    "create_memory_writer",
    "create_memory_reader",
    "create_memory_agent",
    "create_extractor",
    "create_rule_extractor",
    "MemoryRecord",
    "Fact",
    "MemoryStatus",
    "MemorySource",
    "UpdateConfig",
    "RetentionPolicy",
    "Redactor",
    "format_memories",
    "MemoryBlock",
    "UniversalSentenceEncoderEmbeddings",
    "ExtractionError",
    "StoreUnavailableError",
    "EmbeddingMismatchError",
    "InvalidNamespaceError",
    "forget",
    "sweep",
    "__version__",
]

# Public name -> the module that defines it (loaded on first access, then cached in globals()).
_EXPORTS: dict[str, str] = {
    name: module
    for module, names in {
        "graph.memory": ["LifecycleMemory"],
        "graph.store": ["ChromaMemoryStore"],
        "graph.nodes": ["create_memory_writer", "create_memory_reader", "create_memory_agent"],
        "read.retrieval": ["LifecycleRetriever"],
        "read.injection": ["format_memories", "MemoryBlock"],
        "write.extraction": ["create_extractor", "create_rule_extractor"],
        "write.update": ["UpdateConfig"],
        "write.redaction": ["Redactor"],
        "schema": ["MemoryRecord", "Fact", "MemoryStatus", "MemorySource"],
        "store.retention": ["RetentionPolicy"],
        "store.embeddings": ["UniversalSentenceEncoderEmbeddings"],
        "errors": ["ExtractionError", "StoreUnavailableError", "EmbeddingMismatchError", "InvalidNamespaceError"],
        "lifecycle.operations": ["forget", "sweep"],
    }.items()
    for name in names
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
