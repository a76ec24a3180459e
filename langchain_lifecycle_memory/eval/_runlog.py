"""Per-scenario results appended as judged (``--out``/``--resume``) and LLM call accounting."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.caches import BaseCache
from langchain_core.callbacks import BaseCallbackHandler

from langchain_lifecycle_memory.eval.scenarios import ProbeResult, ScenarioReport

__all__ = ["CallStats", "ReplyCache", "ResultsLog"]


def _rows(path: Path) -> list[Any]:
    """The JSON lines of a file; a line cut by a crash is skipped and ended, so the next row starts anew."""
    content = path.read_text(encoding="utf-8") if path.is_file() else ""
    if content and not content.endswith("\n"):
        _append(path, None)
    rows = []
    for text in content.splitlines():
        try:
            rows.append(json.loads(text))
        except json.JSONDecodeError:
            continue
    return rows


def _append(path: Path, row: Any) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write("\n" if row is None else json.dumps(row, ensure_ascii=False) + "\n")


class CallStats(BaseCallbackHandler):
    """Counts a chat model's calls (failed ones included) and the seconds they took."""

    def __init__(self) -> None:
        self.calls = self.errors = 0
        self.seconds = 0.0
        self._started: dict[UUID, float] = {}

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """A call starts (chat models too: LangChain falls back to this without ``on_chat_model_start``)."""
        self._started[run_id] = time.perf_counter()

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """A call ends."""
        start = self._started.pop(run_id, None)
        if start is not None:
            self.calls += 1
            self.seconds += time.perf_counter() - start

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """A call fails."""
        self.errors += 1
        self.on_llm_end(None, run_id=run_id)

    def snapshot(self) -> dict[str, Any]:
        """``{"calls", "errors", "seconds"}`` so far."""
        return {"calls": self.calls, "errors": self.errors, "seconds": round(self.seconds, 1)}


class ReplyCache(BaseCache):
    """A chat model cache in a JSONL file (``--llm-cache``), keyed by prompt and model settings; counts hits/misses."""

    def __init__(self, path: str | Path) -> None:
        from langchain_core.load import loads

        self.path = Path(path)
        self.hits = self.misses = 0
        self._store: dict[tuple[str, str], Any] = {}
        for row in _rows(self.path):
            try:
                self._store[(row["prompt"], row["llm"])] = loads(row["generations"], allowed_objects="core")
            except (KeyError, TypeError, ValueError):
                continue  # a broken line: that call is simply made again
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def lookup(self, prompt: str, llm_string: str) -> Any:
        """The stored generations, or ``None``."""
        found = self._store.get((prompt, llm_string))
        self.hits += found is not None
        self.misses += found is None
        return found

    def update(self, prompt: str, llm_string: str, return_val: Any) -> None:
        """Store and append a reply."""
        from langchain_core.load import dumps

        self._store[(prompt, llm_string)] = return_val
        _append(self.path, {"prompt": prompt, "llm": llm_string, "generations": dumps(list(return_val))})

    def clear(self, **kwargs: Any) -> None:
        """Forget every reply (the file too)."""
        self._store.clear()
        self.path.unlink(missing_ok=True)


class ResultsLog:
    """A JSONL file of per-scenario verdicts: one line per (scenario, engine), appended as judged."""

    def __init__(self, path: str | Path, *, resume: bool = False) -> None:
        self.path = Path(path)
        if not resume and self.path.exists():
            msg = f"{self.path} exists; pass --resume to continue it, or choose another --out file."
            raise FileExistsError(msg)
        rows = [r for r in _rows(self.path) if isinstance(r, dict) and "scenario" in r and "engine" in r]
        self.done = {(r["scenario"], r["engine"]): r for r in rows}
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def has(self, scenario: str, engines: list[str]) -> bool:
        """Whether every engine's verdicts for ``scenario`` are in the file."""
        return all((scenario, e) in self.done for e in engines)

    def restore(self, scenario: str, report: ScenarioReport) -> None:
        """Add the stored verdicts of ``scenario`` to ``report``."""
        row = self.done[(scenario, report.engine)]
        report.probes += [ProbeResult(**p) for p in row["probes"]]
        report.errors += row.get("errors", [])

    def write(self, scenario: str, part: ScenarioReport, **extra: Any) -> None:
        """Append one scenario's verdicts for one engine (``extra``: e.g. LLM calls and seconds)."""
        probes = [asdict(p) for p in part.probes]
        row = {"scenario": scenario, "engine": part.engine, "extractor": part.extractor, "summary": part.summary}
        _append(self.path, {**row, "probes": probes, "errors": part.errors, **extra})


def stats_delta(stats: dict[str, CallStats], before: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each model's calls/errors/seconds since ``before`` (a dict of ``snapshot()`` s)."""
    delta = {name: {k: v - before[name][k] for k, v in s.snapshot().items()} for name, s in stats.items()}
    for d in delta.values():
        d["seconds"] = round(d["seconds"], 1)
    return delta
