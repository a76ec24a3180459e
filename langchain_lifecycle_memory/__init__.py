"""Long-term memory for LangChain/LangGraph that stays right after it is written.

The public names load lazily: ``import langchain_lifecycle_memory`` costs a few
milliseconds, and the sentence encoder, Chroma and LangGraph load only when a name that
needs them is first used (``from langchain_lifecycle_memory import LifecycleMemory``).
"""

import os as _os

# Offline by default: Chroma's telemetry would try the network. Setting it through the
# environment (not per client) also keeps every in-process client's settings identical,
# which Chroma requires for ephemeral clients.
_os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs; runtime loads lazily
    from langchain_lifecycle_memory.embeddings import UniversalSentenceEncoderEmbeddings, embedding_fingerprint
    from langchain_lifecycle_memory.errors import (
        EmbeddingMismatchError,
        ExtractionError,
        InvalidNamespaceError,
        InvalidTransitionError,
        ReindexError,
        StoreUnavailableError,
    )
    from langchain_lifecycle_memory.extraction import create_extractor, create_rule_extractor, extract_rule_facts
    from langchain_lifecycle_memory.injection import MEMORY_PROMPT, MemoryBlock, create_memory_injector, format_memories
    from langchain_lifecycle_memory.lifecycle import (
        ForgetMatch,
        PurgeReport,
        ReindexReport,
        SweepReport,
        forget,
        preview_forget,
        purge,
        redact_record,
        reindex,
        sweep,
    )
    from langchain_lifecycle_memory.memory import LifecycleMemory
    from langchain_lifecycle_memory.nodes import create_memory_agent, create_memory_reader, create_memory_writer
    from langchain_lifecycle_memory.observability import RetrievalLog, RetrievalStats, retrieval_stats
    from langchain_lifecycle_memory.portability import ImportReport, export_records, import_records
    from langchain_lifecycle_memory.redaction import PIIMatch, RedactionResult, Redactor, contains_pii, redact
    from langchain_lifecycle_memory.retention import RetentionPolicy, SweepPlan
    from langchain_lifecycle_memory.retrieval import (
        ChannelWeights,
        LifecycleRetriever,
        RetrievalCandidate,
        RetrievalExplanation,
        ScoreCalibration,
    )
    from langchain_lifecycle_memory.schema import Fact, MemoryRecord, MemorySource, MemoryStatus
    from langchain_lifecycle_memory.store import ChromaMemoryStore
    from langchain_lifecycle_memory.update import (
        UpdateConfig,
        UpdateResult,
        create_conflict_judge,
        reconcile,
        repair_slots,
    )
    from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES, AttributeSpec

__all__ = [
    "ScoreCalibration",
    "RetrievalExplanation",
    "RetrievalCandidate",
    "ChannelWeights",
    "DEFAULT_ATTRIBUTES",
    "MEMORY_PROMPT",
    "AttributeSpec",
    "ChromaMemoryStore",
    "EmbeddingMismatchError",
    "ExtractionError",
    "Fact",
    "ForgetMatch",
    "ImportReport",
    "InvalidNamespaceError",
    "InvalidTransitionError",
    "LifecycleMemory",
    "LifecycleRetriever",
    "MemoryBlock",
    "MemoryRecord",
    "MemorySource",
    "MemoryStatus",
    "PIIMatch",
    "PurgeReport",
    "RedactionResult",
    "Redactor",
    "ReindexError",
    "ReindexReport",
    "RetentionPolicy",
    "RetrievalLog",
    "RetrievalStats",
    "StoreUnavailableError",
    "SweepPlan",
    "SweepReport",
    "UniversalSentenceEncoderEmbeddings",
    "UpdateConfig",
    "UpdateResult",
    "contains_pii",
    "create_conflict_judge",
    "create_extractor",
    "create_memory_agent",
    "create_memory_injector",
    "create_memory_reader",
    "create_memory_writer",
    "create_rule_extractor",
    "embedding_fingerprint",
    "export_records",
    "extract_rule_facts",
    "forget",
    "format_memories",
    "import_records",
    "preview_forget",
    "purge",
    "reconcile",
    "redact",
    "redact_record",
    "reindex",
    "repair_slots",
    "retrieval_stats",
    "sweep",
    "__version__",
]

# Public name -> the module that defines it (loaded on first access, then cached in globals()).
_EXPORTS: dict[str, str] = {
    "UniversalSentenceEncoderEmbeddings": "embeddings",
    "embedding_fingerprint": "embeddings",
    "EmbeddingMismatchError": "errors",
    "ExtractionError": "errors",
    "InvalidNamespaceError": "errors",
    "InvalidTransitionError": "errors",
    "ReindexError": "errors",
    "StoreUnavailableError": "errors",
    "create_extractor": "extraction",
    "create_rule_extractor": "extraction",
    "extract_rule_facts": "extraction",
    "MEMORY_PROMPT": "injection",
    "MemoryBlock": "injection",
    "create_memory_injector": "injection",
    "format_memories": "injection",
    "ForgetMatch": "lifecycle",
    "PurgeReport": "lifecycle",
    "ReindexReport": "lifecycle",
    "SweepReport": "lifecycle",
    "forget": "lifecycle",
    "preview_forget": "lifecycle",
    "purge": "lifecycle",
    "redact_record": "lifecycle",
    "reindex": "lifecycle",
    "sweep": "lifecycle",
    "LifecycleMemory": "memory",
    "create_memory_agent": "nodes",
    "create_memory_reader": "nodes",
    "create_memory_writer": "nodes",
    "RetrievalLog": "observability",
    "RetrievalStats": "observability",
    "retrieval_stats": "observability",
    "ImportReport": "portability",
    "export_records": "portability",
    "import_records": "portability",
    "PIIMatch": "redaction",
    "RedactionResult": "redaction",
    "Redactor": "redaction",
    "contains_pii": "redaction",
    "redact": "redaction",
    "RetentionPolicy": "retention",
    "SweepPlan": "retention",
    "ChannelWeights": "retrieval",
    "LifecycleRetriever": "retrieval",
    "RetrievalCandidate": "retrieval",
    "RetrievalExplanation": "retrieval",
    "ScoreCalibration": "retrieval",
    "Fact": "schema",
    "MemoryRecord": "schema",
    "MemorySource": "schema",
    "MemoryStatus": "schema",
    "ChromaMemoryStore": "store",
    "UpdateConfig": "update",
    "UpdateResult": "update",
    "create_conflict_judge": "update",
    "reconcile": "update",
    "repair_slots": "update",
    "AttributeSpec": "vocabulary",
    "DEFAULT_ATTRIBUTES": "vocabulary",
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
