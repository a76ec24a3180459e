"""Graph layer: the lifecycle wired into LangGraph and the one-object facade.

``nodes`` (writer/reader subgraphs, prebuilt agent), ``memory`` (``LifecycleMemory``) and ``naive``
(the baseline engine the benchmarks compare against).
May import every stage below it; never ``cli`` or ``eval``.
"""
