"""``python -m langchain_lifecycle_memory demo``: the CLI without the console script."""

from __future__ import annotations

from langchain_lifecycle_memory.cli.main import app

if __name__ == "__main__":
    app(prog_name="lifecycle-memory")
