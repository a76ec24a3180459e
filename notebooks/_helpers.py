"""Plumbing shared by the notebooks: where things are, and an embedding cache. Nothing to learn here."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

# bm25s imports tqdm.auto, which warns once in a kernel without ipywidgets: noise for a reader.
warnings.filterwarnings("ignore", message="IProgress not found")

from langchain_lifecycle_memory.eval.locomo import CachedEmbeddings  # noqa: F401  (re-exported for the notebooks)

REPO = Path(__file__).resolve().parents[1]
"""The repository root (the notebooks run from ``notebooks/``)."""


def shared_dir() -> Path | None:
    """The project's ``shared/`` folder (scenarios, LoCoMo data) if this checkout has one."""
    return next((p for p in (REPO.parent / "shared", REPO / "shared") if p.is_dir()), None)


def scratch(name: str) -> Path:
    """A fresh temporary folder (embedded Chroma lives here, never under ``$HOME``)."""
    return Path(tempfile.mkdtemp(prefix=f"lifecycle-{name}-"))
