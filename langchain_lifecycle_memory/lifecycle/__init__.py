"""Lifecycle stage: forget on purpose and on schedule, move memories in and out, watch retrieval.

``operations`` (sweep/forget/purge/reindex), ``portability`` (export/import) and ``observability``
(retrieval logs and stats).
May import: ``schema``, ``errors``, ``vocabulary``, ``store``, ``write``, ``read``. Never ``graph``.
"""

from langchain_lifecycle_memory.compat import lazy_names

# ``langchain_lifecycle_memory.lifecycle`` was one module before the stage subpackages; its names
# still resolve here (lazily, so importing a sibling module stays cheap).
__all__ = [
    "CompactReport",
    "ForgetMatch",
    "NamespaceSweep",
    "PurgeReport",
    "ReindexError",
    "ReindexReport",
    "SweepReport",
    "compact",
    "forget",
    "forget_query_text",
    "preview_forget",
    "purge",
    "redact_record",
    "reindex",
    "sweep",
    "sweep_where",
]


__getattr__ = lazy_names(__name__, "operations", __all__)
