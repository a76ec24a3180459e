"""Extraction: messages -> entity-keyed facts, with any chat model or with rules alone (pure: no store I/O)."""

from __future__ import annotations

import logging
import re
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from pydantic import ValidationError

from langchain_lifecycle_memory.errors import ExtractionError
from langchain_lifecycle_memory.schema import Fact, local_time, normalize_value, utcnow
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES, AttributeSpec
from langchain_lifecycle_memory.write import _slot_rename
from langchain_lifecycle_memory.write._dates import parse_model_date, resolve_ttl_days, resolve_valid_from
from langchain_lifecycle_memory.write._grounding import in_own_words
from langchain_lifecycle_memory.write._lexicon import misfiled
from langchain_lifecycle_memory.write._prompts import _JSON_FORMAT, _SLOTS_NOTE, _SYSTEM, ExtractedFact, ExtractedFacts
from langchain_lifecycle_memory.write._rules import extract_rule_facts
from langchain_lifecycle_memory.write._slot_names import spec_said
from langchain_lifecycle_memory.write._structured import (
    METHODS,
    PROMPTED,
    MethodChain,
    Parsed,
    adrive,
    drive,
    is_capability_error,
    parse_output,
)

__all__ = [
    "SLOTS_KEY", "ExtractedFact", "ExtractedFacts", "create_extractor", "create_rule_extractor", "extract_rule_facts",
]  # fmt: skip

logger = logging.getLogger(__name__)

_HIDDEN = "langsmith:hidden"


_USER_ALIASES = frozenset({"user", "the_user", "speaker", "me", "i", "myself", "用户", "我"})


def _coerce_input(value: Any) -> tuple[list[BaseMessage], datetime]:
    """``{"messages": [...], "now": ...}`` or a bare list of messages -> (messages, now)."""
    now: Any = None
    messages = value
    if isinstance(value, dict):
        if "messages" not in value:
            msg = (
                "Extractor input needs a 'messages' key, e.g. {'messages': [HumanMessage(...)], 'now': ...}; "
                f"got keys {sorted(value)}."
            )
            raise TypeError(msg)
        messages, now = value["messages"], value.get("now")
    if isinstance(messages, (str, bytes, BaseMessage)) or not isinstance(messages, Sequence):
        msg = (
            f"Extractor input must be a list of LangChain messages (or {{'messages': [...], 'now': ...}}), got "
            f"{type(messages).__name__}. Wrap text as [HumanMessage('...')]."
        )
        raise TypeError(msg)
    if bad := [type(m).__name__ for m in messages if not isinstance(m, BaseMessage)]:
        msg = (
            f"Extractor input must contain only BaseMessage objects, got {', '.join(sorted(set(bad)))}. "
            "Wrap text as HumanMessage('...')."
        )
        raise TypeError(msg)
    return list(messages), local_time(now) or utcnow()  # in the user's zone: their "today" and "yesterday"


def _snake(name: Any) -> str | None:
    text = re.sub(r"[\s\-./]+", "_", str(name).strip().casefold()) if name is not None else ""
    text = re.sub(r"[^\w]", "", text).strip("_")
    return text or None


def _dedupe(facts: list[Fact]) -> list[Fact]:
    out: dict[tuple[Any, ...], Fact] = {}
    for f in facts:
        out.setdefault(
            (f.entity, f.attribute, normalize_value(f.value), f.operation, f.content if f.slot is None else ""), f
        )
    return list(out.values())


def create_rule_extractor(
    *, attributes: Sequence[AttributeSpec] = DEFAULT_ATTRIBUTES, run_name: str = "rule_extract_memories"
) -> Runnable[Any, list[Fact]]:
    """Create the no-model extractor: zh/en rules over the user's messages (I/O as :func:`create_extractor`).

    Example:
        >>> from datetime import datetime, timezone
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> extractor = create_rule_extractor()
        >>> facts = extractor.invoke(
        ...     {"messages": [HumanMessage("I've switched to VS Code now"), AIMessage("Noted.")],
        ...      "now": datetime(2024, 3, 1, tzinfo=timezone.utc), "slots": [("user", "editor", "Vim")]}
        ... )
        >>> [(f.entity, f.attribute, f.value) for f in facts]
        [('user', 'editor', 'VS Code')]
    """
    specs = _check_attributes(attributes)

    def extract(value: Any) -> list[Fact]:
        messages, now = _coerce_input(value)
        slots = tuple(value.get("slots") or ()) if isinstance(value, dict) else ()
        said = [m.text for m in messages if isinstance(m, HumanMessage) and m.text.strip()]
        return _dedupe([f for text in said for f in extract_rule_facts(text, now=now, attributes=specs, slots=slots)])

    return RunnableLambda(extract).with_config(run_name=run_name, metadata={WANTS_SLOTS: True})


def _check_attributes(attributes: Sequence[AttributeSpec]) -> tuple[AttributeSpec, ...]:
    specs = tuple(attributes)
    if bad := [a for a in specs if not isinstance(a, AttributeSpec)]:
        msg = f"`attributes` must be AttributeSpec objects (see langchain_lifecycle_memory.vocabulary), got {bad[0]!r}."
        raise TypeError(msg)
    return specs


# ---- the LLM path -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Failure:
    error: str
    raw_output: str | None = None
    exception: Exception | None = None


def _to_fact(item: Any, now: datetime) -> Fact:
    if not isinstance(item, dict):
        msg = f"a fact must be an object, got {type(item).__name__}"
        raise ValueError(msg)
    content = str(item.get("content") or "").strip()
    attribute = _snake(item.get("attribute"))
    value = None if item.get("value") is None else str(item["value"])
    if attribute in Fact.model_fields:  # "value = 4850": a small model naming the slot by a field names none
        attribute = value = None
    entity = _snake(item.get("entity")) or ("user" if attribute else None)
    entity = "user" if entity in _USER_ALIASES else entity
    try:
        confidence = min(1.0, max(0.0, float(item.get("confidence", 0.8))))
    except (TypeError, ValueError):
        confidence = 0.7
    try:
        ttl = float(item["ttl_days"]) if item.get("ttl_days") not in (None, "") else None
    except (TypeError, ValueError):
        ttl = None
    return Fact(
        entity=entity, attribute=attribute, value=value,
        content=content, kind=str(item.get("kind") or "fact").strip().casefold() or "fact", confidence=confidence,
        valid_from=parse_model_date(item.get("valid_from"), now) or resolve_valid_from(content, now) or now,
        ttl_days=ttl if ttl and ttl > 0 else resolve_ttl_days(content, now),
        operation="retract" if str(item.get("operation", "")).strip().casefold() == "retract" else "assert",
        cues=[" ".join(str(c).split())[:120] for c in (item.get("cues") or []) if isinstance(c, str) and c.strip()][:4],
    )  # fmt: skip


WANTS_SLOTS = "lifecycle_memory_wants_slots"
"""Config metadata flag of extractors that use the ``slots`` input (the write path fetches them only then)."""

SLOTS_KEY = "slots"
"""Extractor input key for the slots the namespace already holds (see :func:`create_extractor`)."""

_MAX_SLOTS, _MAX_SLOT_CHARS = 30, 600


def _slot_items(value: Any) -> list[tuple[str, str, str | None]]:
    """``slots`` of the input -> ``(entity, attribute, current value)`` tuples (items without a name skipped)."""
    raw = value.get(SLOTS_KEY) if isinstance(value, dict) else None
    items = []
    for slot in raw or ():
        if isinstance(slot, dict):
            entity, attribute, current = slot.get("entity"), slot.get("attribute"), slot.get("value")
        elif isinstance(slot, (tuple, list)) and len(slot) in (2, 3):
            entity, attribute, current = slot[0], slot[1], slot[2] if len(slot) == 3 else None
        else:
            msg = f"`slots` items must be (entity, attribute, value) tuples or dicts, got {slot!r}."
            raise TypeError(msg)
        if entity and attribute:
            items.append((str(entity), str(attribute), None if current in (None, "") else str(current)))
    return items


def _slot_lines(value: Any) -> list[str]:
    """``slots`` of the input -> ``- entity.attribute: value`` lines, capped (30 slots, ~600 chars)."""
    lines: list[str] = []
    used = 0
    for entity, attribute, current in _slot_items(value):
        text = " ".join(str(current).split())[:60] if current not in (None, "") else ""
        line = f"- {entity}.{attribute}" + (f": {text}" if text else "")
        if len(lines) >= _MAX_SLOTS or used + len(line) > _MAX_SLOT_CHARS:
            break
        lines.append(line)
        used += len(line) + 1
    return lines


def _drop_echoes(facts: list[Fact], value: Any, messages: Sequence[BaseMessage]) -> list[Fact]:
    """Drop facts that only repeat a listed slot (same value, not said in the turn): small models copy the list."""
    known = {(e, a, normalize_value(part)) for e, a, cur in _slot_items(value) for part in str(cur or "").split(", ")}
    if not known:
        return facts
    said = normalize_value(" ".join(m.text for m in messages if isinstance(m, HumanMessage)))
    out = []
    for f in facts:
        v = normalize_value(f.value or "")
        if v and (f.entity, f.attribute, v) in known and v not in said:
            logger.info("Dropped an extracted fact that only repeats the stored slot %s.%s", f.entity, f.attribute)
            continue
        out.append(f)
    return out


def _refiled(fact: Fact, said: str, specs: dict[str, AttributeSpec]) -> Fact:
    """``fact`` under the class its value belongs to, when the model filed it under another word class."""
    named = spec_said(specs.get(fact.attribute or ""), said)  # "my hobbies are…" names ``hobby``
    attribute = misfiled(fact.attribute, fact.value, named=named)
    if attribute is None:
        return fact
    logger.info("Refiled an extracted %r from %s to %s (its value's class)", fact.value, fact.attribute, attribute)
    return fact.model_copy(update={"attribute": attribute})


class _LLMExtraction:
    """One model call per attempt, bounded retries, then ``ExtractionError``; capability errors fall back free."""

    def __init__(
        self,
        model: BaseChatModel,
        attributes: Sequence[AttributeSpec],
        max_retries: int,
        methods: Sequence[str] = METHODS,
        slot_context: str = "rename",
    ) -> None:
        self.chain = MethodChain(model, ExtractedFacts, tuple(methods))
        self.renamer = MethodChain(model, _slot_rename.SlotChoices, tuple(methods))
        self.slot_context = slot_context
        self.specs = {a.name: a for a in attributes}
        vocabulary = "\n".join(f"  - {a.name}: {a.description} ({a.zh})" for a in attributes)
        self.system = _SYSTEM.replace("{vocabulary}", vocabulary)
        self.attempts = max_retries + 1
        self.parse_step = RunnableLambda(parse_output).with_config(run_name="parse_facts", tags=[_HIDDEN])

    def prompt(
        self,
        messages: Sequence[BaseMessage],
        now: datetime,
        failure: _Failure | None,
        method: str,
        slots: Sequence[str] = (),
    ) -> list[BaseMessage]:
        lines = [
            f"[{'user' if isinstance(m, HumanMessage) else 'assistant'}] {m.text.strip()}"
            for m in messages
            if isinstance(m, (HumanMessage, AIMessage)) and m.text.strip()
        ]
        date = f"{now.date().isoformat()} ({now.strftime('%A')})"
        prompt = self.head(method)
        if slots:  # after the fixed prompt (its cached prefix survives), apart from the turn (not to be echoed)
            prompt.append(SystemMessage(_SLOTS_NOTE + "\n".join(slots)))
        prompt.append(HumanMessage(f"Conversation on {date}:\n\n" + "\n".join(lines) + "\n\nExtract the memories."))
        if failure is not None:
            shape = " as the JSON object described above" if method in PROMPTED else " using the facts schema"
            prompt.append(
                HumanMessage(f"Your previous reply could not be used ({failure.error}). Answer again{shape}.")
            )
        return prompt

    def finish(self, parsed: Parsed, now: datetime) -> tuple[list[Fact], _Failure | None]:
        if parsed.items is None:
            return [], _Failure(parsed.error or "malformed model output", parsed.raw_output)
        facts, errors = [], []
        for item in parsed.items:
            try:
                facts.append(_to_fact(item, now))
            except (ValidationError, ValueError, TypeError) as e:
                errors.append(str(e).splitlines()[0])
        if errors and not facts:
            return [], _Failure(f"no usable fact: {errors[0]}", parsed.raw_output)
        if errors:
            logger.warning(
                "Dropped %d of %d extracted facts that failed validation: %s", len(errors), len(parsed.items), errors[0]
            )
        return _dedupe(facts), None

    def head(self, method: str) -> list[BaseMessage]:
        """The fixed system prompt (the date goes with the conversation): servers cache it as a prefix."""
        return [SystemMessage(self.system + (_JSON_FORMAT if method in PROMPTED else ""))]

    def failed(self, attempt: int, failure: _Failure) -> _Failure:
        logger.warning("Memory extraction attempt %d/%d failed: %s", attempt + 1, self.attempts, failure.error)
        return failure

    def error(self, messages: list[BaseMessage], failure: _Failure) -> ExtractionError:
        fix = (
            "check the model's credentials, endpoint and rate limits"
            if failure.exception is not None
            else "raise max_retries or use a model that supports tool calling / structured output"
        )
        msg = (
            f"Memory extraction failed after {self.attempts} attempt(s): {failure.error}. The input messages are on "
            f"`.messages` (keep them as an episode so nothing is lost), the model's last reply on `.raw_output`; {fix}."
        )
        return ExtractionError(msg, messages=messages, raw_output=failure.raw_output)

    def attempts_of(self, value: Any) -> Generator[tuple[Runnable[Any, Any], Any], Any, list[Fact]]:
        """The retry/fallback loop, shared by the sync and async drivers: yields ``(runnable, input)``, gets output."""
        messages, now = _coerce_input(value)
        if not any(isinstance(m, HumanMessage) and m.text.strip() for m in messages):
            return []
        slots = _slot_lines(value) if self.slot_context == "prompt" else []
        failure: _Failure | None = None
        attempt = 0
        while attempt < self.attempts:
            try:
                method, step = self.chain.step()
            except NotImplementedError as e:
                failure = _Failure(str(e), exception=e)
                break
            try:
                output = yield step, self.prompt(messages, now, failure, method, slots)
            except Exception as e:  # any provider error: a capability error falls back, others are retried
                if method != self.chain.methods[-1] and is_capability_error(e):
                    self.chain.reject(method, e)
                    continue
                failure = self.failed(attempt, _Failure(f"the model call raised {type(e).__name__}: {e}", exception=e))
                attempt += 1
                continue
            facts, failure = self.finish((yield self.parse_step, output), now)
            if failure is None:
                said = "\n".join(m.text for m in messages if isinstance(m, HumanMessage))
                if self.slot_context == "rename":
                    facts = yield from self.rename(facts, _slot_items(value), said)
                facts = [
                    _refiled(f, said, self.specs).model_copy(update={"evidence": said})
                    for f in _drop_echoes(facts, value, messages)
                ]
                return in_own_words(facts)
            self.failed(attempt, failure)
            attempt += 1
        failure = failure or _Failure("no attempt was made")
        raise self.error(messages, failure) from failure.exception

    def rename(
        self, facts: list[Fact], slots: list[tuple[str, str, str | None]], said: str
    ) -> Generator[tuple[Runnable[Any, Any], Any], Any, list[Fact]]:
        """Facts renamed onto the existing slots they mean (structure first, then one narrow model call)."""
        renamer, rejected, specs = self.renamer, self.chain.rejected, self.specs
        return (yield from _slot_rename.rename(renamer, rejected, self.head, facts, slots, specs, said))

    def run(self, value: Any, config: RunnableConfig) -> list[Fact]:
        return drive(self.attempts_of(value), config)

    async def arun(self, value: Any, config: RunnableConfig) -> list[Fact]:
        return await adrive(self.attempts_of(value), config)


def create_extractor(
    model: BaseChatModel,
    *,
    attributes: Sequence[AttributeSpec] = DEFAULT_ATTRIBUTES,
    max_retries: int = 1,
    methods: Sequence[str] = METHODS,
    slot_context: Literal["rename", "prompt"] = "rename",
    run_name: str = "llm_extract_memories",
) -> Runnable[Any, list[Fact]]:
    """Create an LLM extractor: conversation -> entity-keyed facts (zh and en).

    One model call per invocation, with the strongest structured-output method the model accepts; the
    conversation's date grounds relative dates; stored ``"slots"`` keep names stable (``editor``, not ``tool``).

    Args:
        model: Any LangChain chat model (e.g. ``ChatOpenAI(model="gpt-4o-mini")``).
        attributes: The slot vocabulary taught to the model; it may still add its own names.
        max_retries: Extra attempts (error fed back), then :class:`~langchain_lifecycle_memory.errors.ExtractionError`.
        methods: Structured-output methods to try, strongest first (``json_schema`` ... ``prompt``).
        slot_context: ``"rename"`` (one narrow call choosing stored names) or ``"prompt"`` (slots in the prompt).
        run_name: Name of the runnable in traces; the parsing step is tagged ``langsmith:hidden``.

    Returns:
        A runnable: ``{"messages": [...], "now": datetime, "slots": [...]}`` (or a message list) -> ``list[Fact]``.

    Example:
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> from langchain_core.messages import HumanMessage
        >>> model = FakeListChatModel(responses=['{"facts": [{"entity": "user", "attribute": "editor", '
        ...     '"value": "Vim", "content": "用户喜欢使用 Vim 编辑器", "kind": "preference"}]}'])
        >>> extractor = create_extractor(model)
        >>> [(f.attribute, f.value) for f in extractor.invoke([HumanMessage("我喜欢使用 Vim 编辑器")])]
        [('editor', 'Vim')]
    """
    if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
        msg = f"`max_retries` must be an int >= 0 (extra attempts after a failure), got {max_retries!r}."
        raise ValueError(msg)
    if not hasattr(model, "invoke"):
        msg = f"`model` must be a LangChain chat model such as ChatOpenAI(...), got {type(model).__name__}."
        raise TypeError(msg)
    if slot_context not in ("rename", "prompt"):
        msg = f"`slot_context` must be 'rename' or 'prompt', got {slot_context!r}."
        raise ValueError(msg)
    extraction = _LLMExtraction(model, _check_attributes(attributes), max_retries, tuple(methods), slot_context)
    return RunnableLambda(extraction.run, afunc=extraction.arun).with_config(
        run_name=run_name, metadata={WANTS_SLOTS: True}
    )
