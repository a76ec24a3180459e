"""Lifecycle stage: forget on purpose and on schedule, move memories in and out, watch retrieval.

``operations`` (sweep/forget/restore/purge/reindex), ``portability`` (export/import) and
``observability`` (retrieval logs and stats).
May import: ``schema``, ``errors``, ``vocabulary``, ``store``, ``write``, ``read``. Never ``graph``.
"""
