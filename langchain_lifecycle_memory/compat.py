"""Old import paths that keep working for one release (pure; imports nothing of the package).

``store``, ``lifecycle`` and ``cli`` were single modules before the stage subpackages; their
``__init__`` hands out the old names lazily from the module that now holds them, so importing
a sibling module stays cheap.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, module: str, names: Sequence[str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that loads ``names`` from ``package.module`` on first use."""
    wanted = frozenset(names)

    def __getattr__(name: str) -> Any:
        if name not in wanted:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        value = getattr(import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
