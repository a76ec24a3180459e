"""Read stage: find the memories a turn needs and format them for the prompt.

Top down: ``retrieval`` (the LangChain retriever) takes the namespace's ``snapshot`` from
``_source`` (held, updated, loaded or read), scores it in ``scoring`` (channels from
``lexical``, ``routing``, ``episodes`` and ``vectors``, fused and calibrated by ``fusion``),
and ``injection`` formats what was kept. ``cues`` writes per-fact situations at write time.
May import: ``schema``, ``errors``, ``vocabulary``, ``store``. Never ``write``, ``lifecycle``, ``graph``.
"""
