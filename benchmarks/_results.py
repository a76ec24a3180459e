"""Where benchmarks write their results, stamped with the command, the machine and the date.

``benchmarks/report.py`` renders ``docs/benchmarks.md`` from these files only.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def dev_files(shared: Path) -> list[Path]:
    """The development scenario files that calibrations read: the public sample and ours (never held-out ones)."""
    root = RESULTS.parents[1]
    return [shared / "public.jsonl", root / "tests/scenarios/extra.jsonl", root / "tests/scenarios/dev_rules.jsonl"]


def _shown(arg: str) -> str:
    """An argument as a reader can rerun it: a file outside the repository becomes ``PATH/TO/<name>``."""
    path = Path(arg)
    if not path.exists() or path.resolve().is_relative_to(RESULTS.parents[1]):
        return arg
    return f"PATH/TO/{path.name}"


def stamp() -> dict[str, Any]:
    """The command that ran (relative to the repository), the machine and the date."""
    script = Path(sys.argv[0])
    with_root = script.resolve().is_relative_to(RESULTS.parents[1]) if script.name else False
    shown = str(script.resolve().relative_to(RESULTS.parents[1])) if with_root else script.name
    return {
        "command": " ".join(["python", shown, *map(_shown, sys.argv[1:])]),
        "date": datetime.now(timezone.utc).date().isoformat(),
        "machine": {
            "platform": platform.platform(terse=True),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
        },
        "package": metadata.version("langchain-lifecycle-memory"),
    }


def write(name: str, data: dict[str, Any], path: Path | None = None) -> Path:
    """Write ``data`` with its stamp to ``results/NAME.json`` (or ``path``) and return the path."""
    out = path or RESULTS / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**stamp(), **data}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return out
