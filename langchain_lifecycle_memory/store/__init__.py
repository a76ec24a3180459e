"""Store stage: memory records in Chroma behind LangGraph's ``BaseStore``.

Owns persistence: the record API, Chroma helpers, revisions, TTL, slot bookkeeping and repair,
retention policy, tenants, maintenance (reindex/compact) and the sentence encoder + fingerprint.
Knows records, not LLMs. May import: ``schema``, ``errors``, ``vocabulary`` and itself.
"""

from typing import Any

# ``langchain_lifecycle_memory.store`` was one module before the stage subpackages; its names
# still resolve here (lazily, so importing a sibling module stays cheap).
__all__ = [
    "ChromaMemoryStore",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.chroma_store"), name)
    globals()[name] = value
    return value
