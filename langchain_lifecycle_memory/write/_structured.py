"""Structured output on any chat model: the strongest method it supports, found by falling back.

``json_schema -> function_calling -> json_mode -> prompt``, moving on only on a *capability* error; a bad
reply is a content error the caller retries. Unlike ``with_fallbacks``, the working method is remembered.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel, ValidationError

logger = logging.getLogger("langchain_lifecycle_memory.write.extraction")

METHODS = ("json_schema", "function_calling", "json_mode", "prompt")
"""Structured-output methods, strongest first; ``prompt`` always works (the text is parsed)."""

PROMPTED = frozenset({"json_mode", "prompt"})
"""Methods whose prompt must spell out the JSON shape (the server enforces none)."""

_CAPABILITY_STATUS = frozenset({400, 404, 405, 415, 422, 500, 501})
_CAPABILITY_TEXT = re.compile(
    r"response_format|json_schema|json_object|tool_choice|\btools?\b|function[ _]?call|structured[ _]output|"
    r"grammar|not supported|unsupported|does not support|isn't supported|is not available",
    re.IGNORECASE,
)


def status_code(error: BaseException) -> int | None:
    """The HTTP status of a provider error (``openai.APIStatusError``, httpx, requests), if any."""
    for candidate in (error, getattr(error, "response", None)):
        code = getattr(candidate, "status_code", None) or getattr(candidate, "status", None)
        if isinstance(code, int):
            return code
    return None


def is_capability_error(error: BaseException) -> bool:
    """Whether ``error`` says the *method* is unsupported (rate limits, timeouts and auth errors do not).

    ``NotImplementedError`` does; so does a rejecting HTTP status whose text names the feature (``tools``...).
    """
    if isinstance(error, NotImplementedError):
        return True
    code = status_code(error)
    if code is None or code not in _CAPABILITY_STATUS:
        return False
    return bool(_CAPABILITY_TEXT.search(str(error)))


def build_step(model: BaseChatModel, schema: type, method: str) -> Runnable[Any, Any]:
    """The runnable for ``method``; raises (``NotImplementedError``, ``ValueError``...) when the model cannot."""
    if method == "prompt":
        return model
    try:
        return model.with_structured_output(schema, method=method, include_raw=True)
    except (ValueError, TypeError) as e:
        # Models built on BaseChatModel's default accept no ``method`` argument; theirs is tool calling.
        if method == "function_calling" and "method" in str(e):
            return model.with_structured_output(schema, include_raw=True)
        raise


class MethodChain:
    """Per-model state: which method to use now (thread-safe, only ever moving weaker), with its runnables."""

    def __init__(self, model: BaseChatModel, schema: type, methods: tuple[str, ...] = METHODS) -> None:
        unknown = [m for m in methods if m not in METHODS]
        if unknown or not methods:
            msg = f"structured-output methods must be a non-empty subset of {list(METHODS)}, got {list(methods)}."
            raise ValueError(msg)
        self.model, self.schema, self.methods = model, schema, tuple(methods)
        self._index = 0
        self._steps: dict[str, Runnable[Any, Any]] = {}
        self._lock = threading.Lock()
        self.rejected: dict[str, str] = {}
        """Methods found unsupported, with the reason (for diagnostics and benchmarks)."""

    @property
    def method(self) -> str:
        """The method in use (the strongest not yet found unsupported)."""
        return self.methods[min(self._index, len(self.methods) - 1)]

    @property
    def exhausted(self) -> bool:
        """True when every method was rejected."""
        return self._index >= len(self.methods)

    def step(self) -> tuple[str, Runnable[Any, Any]]:
        """The method in use and its runnable, building (and skipping unbuildable) ones."""
        with self._lock:
            while self._index < len(self.methods):
                method = self.methods[self._index]
                if method in self._steps:
                    return method, self._steps[method]
                try:
                    self._steps[method] = build_step(self.model, self.schema, method)
                except (NotImplementedError, ValueError, TypeError, AttributeError) as e:
                    self._reject(method, f"{type(e).__name__}: {e}")
                    continue
                return method, self._steps[method]
        msg = f"the model supports none of the structured-output methods {list(self.methods)}: {self.rejected}"
        raise NotImplementedError(msg)

    def reject(self, method: str, error: BaseException) -> None:
        """Record that the server rejected ``method``; the next :meth:`step` uses a weaker one."""
        with self._lock:
            if self._index < len(self.methods) and self.methods[self._index] == method:
                self._reject(method, f"{type(error).__name__}: {str(error)[:300]}")

    def _reject(self, method: str, reason: str) -> None:
        self.rejected[method] = reason
        self._index += 1
        nxt = self.methods[self._index] if self._index < len(self.methods) else None
        logger.info("Structured output method %r is unsupported by this model (%s); next: %s", method, reason, nxt)


def loads_tolerant(text: str) -> Any:
    """The first JSON value in a model's text; fences, prose, trailing commas, ``None``/``True`` tolerated.

    Raises:
        ValueError: If no JSON object or list can be decoded.
    """
    body = re.sub(r"^\s*```(?:json|JSON)?\s*|\s*```\s*$", "", text.strip())
    starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
    if not starts:
        msg = "the reply contains no JSON object"
        raise ValueError(msg)
    body = body[min(starts) :]
    decoder = json.JSONDecoder()
    try:
        return decoder.raw_decode(body)[0]
    except json.JSONDecodeError as first:
        repaired = re.sub(r",\s*([}\]])", r"\1", body)
        literals = {"None": "null", "True": "true", "False": "false"}
        repaired = re.sub(r"(?<![\w\"])(None|True|False)(?![\w\"])", lambda m: literals[m.group(1)], repaired)
        try:
            return decoder.raw_decode(repaired)[0]
        except json.JSONDecodeError:
            raise ValueError(f"invalid JSON ({first.msg} at char {first.pos})") from first


@dataclass(frozen=True)
class Parsed:
    """Raw fact items from a model's output, or why there are none."""

    items: list[Any] | None
    raw_output: str | None
    error: str | None = None


def _raw_text(message: Any) -> str | None:
    if message is None:
        return None
    if isinstance(message, BaseMessage):
        if calls := getattr(message, "tool_calls", None) or []:
            return json.dumps([c.get("args") for c in calls], ensure_ascii=False, default=str)
        return message.text
    return message if isinstance(message, str) else repr(message)


def _items_of(data: Any) -> list[Any]:
    if isinstance(data, BaseModel):
        data = data.model_dump()
    if isinstance(data, dict) and isinstance(data.get("facts"), list):
        return list(data["facts"])
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and "content" in data:
        return [data]
    msg = "expected {'facts': [...]} (a list of facts)"
    raise ValueError(msg)


def parse_output(output: Any) -> Parsed:
    """Structured output, a tool call or JSON text -> raw fact items (never raises)."""
    raw = output.get("raw") if isinstance(output, dict) and "raw" in output else output
    raw_output = _raw_text(raw)
    try:
        if isinstance(output, dict) and "raw" in output:
            # A text reply is parsed here, not trusted from ``parsed``: JSON mode's partial-JSON parser turns
            # garbage such as "{not json" into {} -- an empty fact list instead of a retry.
            if output.get("parsed") is not None and not isinstance(raw, (BaseMessage, str)):
                return Parsed(_items_of(output["parsed"]), raw_output)
        elif not isinstance(output, (BaseMessage, str)):
            return Parsed(_items_of(output), raw_output)
        if calls := getattr(raw, "tool_calls", None) or []:
            return Parsed(_items_of(calls[0].get("args") or {}), raw_output)
        return Parsed(_items_of(loads_tolerant(_raw_text(raw) or "")), raw_output)
    except (ValueError, TypeError, AttributeError) as e:
        return Parsed(None, raw_output, f"malformed model output ({e})")


Steps = Generator[tuple[Runnable[Any, Any], Any], Any, Any]
"""A structured call as a generator: yields ``(runnable, input)``, receives the output; run by :func:`drive`."""


def drive(steps: Steps, config: RunnableConfig | None = None) -> Any:
    """Run ``steps`` with ``invoke``; returns the generator's return value."""
    try:
        runnable, payload = next(steps)
        while True:
            try:
                result = runnable.invoke(payload, config)
            except Exception as e:
                runnable, payload = steps.throw(e)
            else:
                runnable, payload = steps.send(result)
    except StopIteration as done:
        return done.value


async def adrive(steps: Steps, config: RunnableConfig | None = None) -> Any:
    """Run ``steps`` with ``ainvoke``; returns the generator's return value."""
    try:
        runnable, payload = next(steps)
        while True:
            try:
                result = await runnable.ainvoke(payload, config)
            except Exception as e:
                runnable, payload = steps.throw(e)
            else:
                runnable, payload = steps.send(result)
    except StopIteration as done:
        return done.value


def parse_object(output: Any, schema: type[BaseModel]) -> BaseModel:
    """One ``schema`` object from any method's output: parsed, a tool call's arguments or JSON text.

    Raises:
        ValueError: If the output holds no JSON object that validates against ``schema``.
    """
    raw = output.get("raw") if isinstance(output, dict) and "raw" in output else output
    if isinstance(output, dict) and "raw" in output and isinstance(output.get("parsed"), schema):
        return output["parsed"]
    if isinstance(raw, schema):
        return raw
    calls = getattr(raw, "tool_calls", None) or []
    data = (calls[0].get("args") or {}) if calls else loads_tolerant(_raw_text(raw) or "")
    try:
        return schema.model_validate(data)
    except ValidationError as e:
        msg = f"the reply does not match {schema.__name__}: {str(e).splitlines()[0]}"
        raise ValueError(msg) from e


def structured_call(chain: MethodChain, build: Callable[[str], list[BaseMessage]], schema: type[BaseModel]) -> Steps:
    """One structured answer as :data:`Steps`: ``build(method)`` makes the prompt; capability errors fall back."""
    while True:
        method, step = chain.step()  # NotImplementedError when every method is rejected
        try:
            output = yield step, build(method)
        except Exception as e:
            if method != chain.methods[-1] and is_capability_error(e):
                chain.reject(method, e)
                continue
            raise
        return parse_object(output, schema)
