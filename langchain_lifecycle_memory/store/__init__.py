"""Store stage: memory records in Chroma behind LangGraph's ``BaseStore``.

Owns persistence: the record API (``records``), the Chroma store (``chroma_store``, over shared
bucket collections, ``_buckets``, and a client that several processes can share, ``_client``),
slot bookkeeping and repair, retention policy, tenants, maintenance (reindex, compact) and the
sentence encoder + fingerprint. Knows records, not LLMs. May import: ``schema``, ``errors``,
``vocabulary`` and itself.
"""
