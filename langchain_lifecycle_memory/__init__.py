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
]
