"""Deprecated alias of :mod:`langchain_lifecycle_memory.store.embeddings`.

Moved after 0.1.0; this path goes away in the next release.
"""

import sys
import warnings
from importlib import import_module

warnings.warn(
    "`langchain_lifecycle_memory.embeddings` moved to `langchain_lifecycle_memory.store.embeddings`; "
    "the old path goes away in the next release",
    DeprecationWarning,
    stacklevel=2,
)
# The old name is the new module itself, so patches and isinstance checks see one object.
sys.modules[__name__] = import_module("langchain_lifecycle_memory.store.embeddings")
