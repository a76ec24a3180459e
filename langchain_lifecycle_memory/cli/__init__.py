"""``lifecycle-memory``: the command line (typer + rich), the demo and ``doctor`` diagnostics.

``main`` holds the commands (``app`` is the console script), ``demo`` and ``diagnostics`` what they run.
Imports chromadb only when a command needs the store (``--help`` stays fast).
May import everything in the package; nothing in the package imports it.
"""
