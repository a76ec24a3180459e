"""Store stage: records in Chroma behind LangGraph's ``BaseStore``, slots, retention, tenants, maintenance.

Knows records, not LLMs. May import: ``schema``, ``errors``, ``vocabulary`` and itself.
"""
