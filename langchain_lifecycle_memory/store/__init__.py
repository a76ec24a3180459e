"""Store stage: memory records in Chroma behind LangGraph's ``BaseStore``.

Owns persistence: the record API, Chroma helpers, revisions, TTL, slot bookkeeping and repair,
retention policy, tenants, maintenance (reindex/compact) and the sentence encoder + fingerprint.
Knows records, not LLMs. May import: ``schema``, ``errors``, ``vocabulary`` and itself.
"""

from langchain_lifecycle_memory.compat import lazy_names

# ``langchain_lifecycle_memory.store`` was one module before the stage subpackages; its names
# still resolve here (lazily, so importing a sibling module stays cheap).
__all__ = [
    "ChromaMemoryStore",
]


__getattr__ = lazy_names(__name__, "chroma_store", __all__)
