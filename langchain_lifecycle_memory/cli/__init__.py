"""``lifecycle-memory``: the command line (typer + rich), the demo and ``doctor`` diagnostics.

``main`` holds the commands (``app`` is the console script), ``demo`` and ``diagnostics`` what they run.
Imports chromadb only when a command needs the store (``--help`` stays fast).
May import everything in the package; nothing in the package imports it.
"""

from typing import Any

# ``langchain_lifecycle_memory.cli`` was one module before the stage subpackages; its names
# still resolve here (lazily, so importing a sibling module stays cheap).
__all__ = [
    "CliError",
    "app",
    "make_embeddings",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.main"), name)
    globals()[name] = value
    return value
