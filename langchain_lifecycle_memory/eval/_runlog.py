"""Per-scenario results written as they come (``--out``/``--resume``) and LLM call accounting.

A slow run (a real model, a call or two a turn) writes one JSON line per scenario and engine as soon as
the scenario is judged, so a crash or a timeout loses at most the scenario in progress; ``--resume``
reads the lines back, skips the scenarios already done and reports the whole file.
"""

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


class CallStats(BaseCallbackHandler):
    """Counts a chat model's calls (failed ones included) and the seconds they took."""

    def __init__(self) -> None:
        self.calls = 0
        self.errors = 0
        self.seconds = 0.0
        self._started: dict[UUID, float] = {}

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._started[run_id] = time.perf_counter()

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._started[run_id] = time.perf_counter()

    def _stop(self, run_id: UUID) -> None:
        start = self._started.pop(run_id, None)
        if start is not None:
            self.calls += 1
            self.seconds += time.perf_counter() - start

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._stop(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.errors += 1
        self._stop(run_id)

    def snapshot(self) -> dict[str, Any]:
        """``{"calls", "errors", "seconds"}`` so far."""
        return {"calls": self.calls, "errors": self.errors, "seconds": round(self.seconds, 1)}


class ReplyCache(BaseCache):
    """A chat model cache kept in a JSONL file (``--llm-cache``): a rerun of the same prompts reuses the replies.

    Keyed like LangChain's caches, by the prompt and the model's settings (tools and response format
    included), so the write-time cues of one run serve an ablation of the read side, and a resumed run
    does not ask the model again for a turn it already extracted. ``hits``/``misses`` count lookups.
    """

    def __init__(self, path: str | Path) -> None:
        from langchain_core.load import loads

        self.path = Path(path)
        self.hits = self.misses = 0
        self._store: dict[tuple[str, str], Any] = {}
        if self.path.is_file():
            content = self.path.read_text(encoding="utf-8")
            if content and not content.endswith("\n"):
                with self.path.open("a", encoding="utf-8") as f:
                    f.write("\n")
            for text in content.splitlines():
                try:
                    row = json.loads(text)
                    self._store[(row["prompt"], row["llm"])] = loads(row["generations"], allowed_objects="core")
                except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                    continue  # a line cut by a crash: that call is simply made again
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def lookup(self, prompt: str, llm_string: str) -> Any:
        """The stored generations, or ``None``."""
        found = self._store.get((prompt, llm_string))
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def update(self, prompt: str, llm_string: str, return_val: Any) -> None:
        """Store and append a reply."""
        from langchain_core.load import dumps

        self._store[(prompt, llm_string)] = return_val
        row = {"prompt": prompt, "llm": llm_string, "generations": dumps(list(return_val))}
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")

    def clear(self, **kwargs: Any) -> None:
        """Forget every reply (the file too)."""
        self._store.clear()
        self.path.unlink(missing_ok=True)


def _delta(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    return {k: round(after[k] - before[k], 1) if k == "seconds" else after[k] - before[k] for k in after}


class ResultsLog:
    """A JSONL file of per-scenario verdicts: one line per (scenario, engine), appended and flushed."""

    def __init__(self, path: str | Path, *, resume: bool = False) -> None:
        self.path = Path(path)
        self.done: dict[tuple[str, str], dict[str, Any]] = {}
        if resume and self.path.is_file():
            content = self.path.read_text(encoding="utf-8")
            if content and not content.endswith("\n"):
                with self.path.open("a", encoding="utf-8") as f:
                    f.write("\n")  # end a line cut by a crash, so the next row starts on its own line
            for text in content.splitlines():
                if not text.strip():
                    continue
                try:
                    row = json.loads(text)
                except json.JSONDecodeError:
                    # A line cut by a crash mid-write: that scenario simply runs again.
                    continue
                if isinstance(row, dict) and "scenario" in row and "engine" in row:
                    self.done[(row["scenario"], row["engine"])] = row
        elif not resume and self.path.exists():
            msg = f"{self.path} exists; pass --resume to continue it, or choose another --out file."
            raise FileExistsError(msg)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def has(self, scenario: str, engines: list[str]) -> bool:
        """Whether every engine's verdicts for ``scenario`` are in the file."""
        return all((scenario, e) in self.done for e in engines)

    def restore(self, scenario: str, report: ScenarioReport) -> dict[str, Any]:
        """Add the stored verdicts of ``scenario`` to ``report``; returns the stored row."""
        row = self.done[(scenario, report.engine)]
        report.probes += [ProbeResult(**p) for p in row["probes"]]
        report.errors += row.get("errors", [])
        return row

    def write(self, scenario: str, part: ScenarioReport, **extra: Any) -> None:
        """Append one scenario's verdicts for one engine (``extra``: e.g. LLM calls and seconds)."""
        row = {
            "scenario": scenario,
            "engine": part.engine,
            "extractor": part.extractor,
            "summary": part.summary,
            "probes": [asdict(p) for p in part.probes],
            "errors": part.errors,
            **extra,
        }
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            f.flush()


def stats_delta(stats: dict[str, CallStats], before: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each model's calls/errors/seconds since ``before`` (a dict of ``snapshot()`` s)."""
    return {name: _delta(s.snapshot(), before[name]) for name, s in stats.items()}
