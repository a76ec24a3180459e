"""Write stage: turn conversation turns into facts and reconcile them with what is stored.

Extraction (LLM + rules, pure: it never touches the store), redaction, slot identity and the
update/reconcile step that writes through the store; ``write_path`` is the per-turn core.
May import: ``schema``, ``errors``, ``vocabulary``, ``store``. Never ``read``, ``lifecycle``, ``graph``.
"""
