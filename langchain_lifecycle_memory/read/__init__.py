"""Read stage: find the memories a turn needs and format them for the prompt.

The retriever (channels, fusion, scoring, snapshot, routing, anchors), write-time cues and
injection (pure formatting).
May import: ``schema``, ``errors``, ``vocabulary``, ``store``. Never ``write``, ``lifecycle``, ``graph``.
"""
