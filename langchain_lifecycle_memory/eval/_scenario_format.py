"""The scenario file format: one JSON object a line, checked in full before anything runs.

See :mod:`.scenarios` for what the steps mean and how probes are judged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from langchain_lifecycle_memory.schema import Fact, ensure_aware

STEP_TYPES = ("turn", "probe", "sweep", "forget", "purge")


class ScenarioFormatError(ValueError):
    """A scenario file that does not follow the format; the message names the line."""


@dataclass
class Scenario:
    """One parsed scenario (a line of the file)."""

    id: str
    category: str
    user_id: str | None
    steps: list[dict[str, Any]]
    line: int
    lang: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


def _fail(line: int, sid: str | None, msg: str) -> ScenarioFormatError:
    where = f"line {line}" + (f" (scenario {sid!r})" if sid else "")
    return ScenarioFormatError(f"{where}: {msg}")


def _strings(value: Any, name: str, line: int, sid: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(line, sid, f"`{name}` must be a list of strings, got {value!r}.")
    return list(value)


def _time(value: Any, name: str, line: int, sid: str) -> datetime | None:
    if value is None:
        return None
    try:
        return ensure_aware(value)
    except (TypeError, ValueError) as e:
        raise _fail(line, sid, f"`{name}`: {e}") from e


def _check_step(step: Any, i: int, scenario_user: str | None, line: int, sid: str) -> dict[str, Any]:
    if not isinstance(step, dict):
        raise _fail(line, sid, f"step {i} must be an object, got {type(step).__name__}.")
    kind = step.get("type")
    if kind not in STEP_TYPES:
        raise _fail(line, sid, f"step {i} has unknown type {kind!r}; expected one of {list(STEP_TYPES)}.")
    out = dict(step)
    out["at"] = _time(step.get("at"), f"steps[{i}].at", line, sid)
    user = step.get("user_id", scenario_user)
    if user is None:
        raise _fail(line, sid, f"step {i} ({kind}) has no user_id and the scenario sets none; add `user_id`.")
    out["user_id"] = str(user)
    if kind == "turn":
        facts = step.get("facts") or []
        if not isinstance(facts, list):
            raise _fail(line, sid, f"steps[{i}].facts must be a list of fact objects.")
        for j, fact in enumerate(facts):
            try:
                Fact.model_validate(fact)
            except Exception as e:
                raise _fail(line, sid, f"steps[{i}].facts[{j}] is not a valid fact: {e}") from e
        if not facts and not isinstance(step.get("user"), str):
            raise _fail(line, sid, f"turn step {i} needs `user` text or gold `facts`.")
        out["facts"] = facts
    elif kind == "probe":
        query = step.get("query")
        if not isinstance(query, str) or not query.strip():
            raise _fail(line, sid, f"probe step {i} needs a non-empty `query` string.")
        out["expect"] = _strings(step.get("expect"), f"steps[{i}].expect", line, sid)
        out["forbid"] = _strings(step.get("forbid"), f"steps[{i}].forbid", line, sid)
        out["expect_empty"] = bool(step.get("expect_empty", False))
        out["as_of"] = _time(step.get("as_of"), f"steps[{i}].as_of", line, sid)
    elif kind == "forget":
        target = {k: step.get(k) for k in ("query", "entity", "attribute") if step.get(k) is not None}
        if not target:
            raise _fail(line, sid, f"forget step {i} needs `query`, or `entity`/`attribute`.")
    return out


def _parse_scenario(obj: Any, line: int) -> Scenario:
    if not isinstance(obj, dict):
        raise _fail(line, None, f"a scenario must be a JSON object, got {type(obj).__name__}.")
    sid = str(obj.get("id") or f"line{line}")
    steps = obj.get("steps")
    if not isinstance(steps, list):
        raise _fail(line, sid, "missing `steps` (a list of step objects).")
    user = obj.get("user_id")
    user = None if user is None else str(user)
    checked = [_check_step(s, i, user, line, sid) for i, s in enumerate(steps)]
    category = str(obj.get("category") or "uncategorized")
    return Scenario(sid, category, user, checked, line, obj.get("lang"), obj)


def _lines(source: str | os.PathLike[str] | Iterable[Any]) -> Iterable[tuple[int, Any]]:
    if isinstance(source, os.PathLike) or (isinstance(source, str) and not source.lstrip().startswith("{")):
        path = Path(source)
        if not path.is_file():
            msg = f"Scenario file {str(path)!r} not found; pass a .jsonl path (one scenario a line)."
            raise FileNotFoundError(msg)
        source = path.read_text(encoding="utf-8").splitlines()
    elif isinstance(source, str):
        source = source.splitlines()
    yield from enumerate(source, start=1)


def load_scenarios(source: str | os.PathLike[str] | Iterable[Any]) -> list[Scenario]:
    """Parse and validate a scenario file, JSONL text, lines, decoded dicts (or ``Scenario`` s).

    Raises:
        ScenarioFormatError: Bad JSON, an unknown step type or a missing field; the
            message names the line.
        FileNotFoundError: If ``source`` is a path that does not exist.
    """
    out: list[Scenario] = []
    for n, item in _lines(source):
        if isinstance(item, (str, bytes)):
            text = item.decode() if isinstance(item, bytes) else item
            if not text.strip() or text.lstrip().startswith("//"):
                continue
            try:
                item = json.loads(text)
            except json.JSONDecodeError as e:
                raise _fail(n, None, f"invalid JSON ({e.msg} at column {e.colno}).") from e
        out.append(item if isinstance(item, Scenario) else _parse_scenario(item, n))
    return out


# ---------------------------------------------------------------------------- judging
