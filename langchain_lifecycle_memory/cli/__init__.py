"""``lifecycle-memory``: the command line (typer + rich), the demo and ``doctor`` diagnostics.

``main`` holds the commands (``app`` is the console script), ``demo`` and ``diagnostics`` what they run.
Imports chromadb only when a command needs the store (``--help`` stays fast).
May import everything in the package; nothing in the package imports it.
"""

from langchain_lifecycle_memory.compat import lazy_names

# ``langchain_lifecycle_memory.cli`` was one module before the stage subpackages; its names
# still resolve here (lazily, so importing a sibling module stays cheap).
__all__ = [
    "CliError",
    "app",
    "make_embeddings",
]


__getattr__ = lazy_names(__name__, "main", __all__)
