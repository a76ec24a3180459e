"""``python -m langchain_lifecycle_memory demo``: the CLI without the console script."""

from __future__ import annotations

from langchain_lifecycle_memory.cli.main import app, run

__all__ = ["app", "run"]

if __name__ == "__main__":
    run(prog_name="lifecycle-memory")
