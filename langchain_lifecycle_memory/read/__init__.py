"""Read stage: find the memories a turn needs (``retrieval``, ``scoring``) and format them (``injection``).

Channels (``lexical``, ``routing``, ``episodes``, ``vectors``) feed ``fusion``; ``cues`` writes per-fact situations.
May import ``schema``, ``errors``, ``vocabulary``, ``store``; never ``write``, ``lifecycle``, ``graph``.
"""

from langchain_lifecycle_memory.read._source import current as current_snapshot

__all__ = ["current_snapshot"]
