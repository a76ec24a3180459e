"""Write-path helpers shared by the facade and the LangGraph nodes: the last turn, safe extraction, user id."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage, SystemMessage, convert_to_messages
from langchain_core.runnables import Runnable, RunnableConfig

from langchain_lifecycle_memory.errors import ExtractionError
from langchain_lifecycle_memory.schema import Fact, MemoryRecord, MemorySource, MemoryStatus, check_text, is_self_entity
from langchain_lifecycle_memory.write._plan import UpdateResult

logger = logging.getLogger(__name__)


def user_id_from_config(config: RunnableConfig | None, context: Any = None) -> str:
    """The user id from ``config["configurable"]`` or the LangGraph runtime context."""
    configurable = (config or {}).get("configurable") or {}
    user_id = configurable.get("user_id")
    if user_id is None and context is not None:
        user_id = context.get("user_id") if isinstance(context, dict) else getattr(context, "user_id", None)
    if user_id is None:
        msg = (
            "No user id for memory: invoke the graph with config={'configurable': {'user_id': 'u1'}} "
            "or a runtime context that has `user_id`."
        )
        raise ValueError(msg)
    return str(user_id)


def as_messages(messages: Any) -> list[BaseMessage]:
    """Accept messages, ``(role, text)`` tuples, dicts or a single string."""
    if isinstance(messages, str):
        messages = [("user", messages)]
    if not isinstance(messages, Sequence):
        msg = f"Expected a list of messages, got {type(messages).__name__}."
        raise TypeError(msg)
    return list(convert_to_messages(list(messages)))


def check_messages(messages: Sequence[BaseMessage], where: str = "messages") -> None:
    """Refuse a turn whose text cannot be stored (NUL bytes, lone surrogates) before anything runs."""
    for i, m in enumerate(messages):
        blocks = [m.content] if isinstance(m.content, str) else list(m.content)
        for block in blocks:
            text = block if isinstance(block, str) else block.get("text") if isinstance(block, dict) else None
            if not isinstance(text, str):
                continue
            try:
                check_text(text, f"{where}[{i}].content")
            except ValueError as e:
                msg = f"{e} Nothing of this turn was stored."
                raise ValueError(msg) from None


def last_turn(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """The last human message and the replies after it (injected system messages excluded)."""
    last = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)), None)
    return [] if last is None else [m for m in messages[last:] if not isinstance(m, SystemMessage)]


def resolve_extractor(extractor: Runnable | BaseChatModel | str | None) -> Runnable:
    """``None``/``"rule"`` → rule extractor; a chat model → LLM extraction chain."""
    if extractor is None or extractor == "rule":
        from langchain_lifecycle_memory.write.extraction import create_rule_extractor

        return create_rule_extractor()
    if isinstance(extractor, BaseChatModel):
        from langchain_lifecycle_memory.write.extraction import create_extractor

        return create_extractor(extractor)
    if isinstance(extractor, Runnable):
        return extractor
    msg = f"extractor must be None, 'rule', a chat model or a Runnable, got {extractor!r}."
    raise TypeError(msg)


def wants_slots(extractor: Runnable) -> bool:
    """Does the extractor use the namespace's current slots (LLM extractors made by ``create_extractor``)?"""
    from langchain_lifecycle_memory.write.extraction import WANTS_SLOTS

    metadata = (getattr(extractor, "config", None) or {}).get("metadata") or {}
    return bool(metadata.get(WANTS_SLOTS))


def current_slots(store: Any, namespace: tuple[str, ...], *, limit: int = 30) -> list[tuple[str, str, str | None]]:
    """The namespace's active slots ``(entity, attribute, current value)``, newest first; a set's values joined.

    People the user spoke of whose records have no slot yet come last as ``(entity, "", None)``: "Theo switched
    schools" is about the son named in a statement kept as said. Extractors that list slots skip them.
    """
    records = store.list_records(namespace, statuses=MemoryStatus.ACTIVE)
    values: dict[tuple[str, str], list[str]] = {}
    people: dict[str, None] = {}
    for r in sorted(records, key=lambda r: r.updated_at, reverse=True):
        if r.kind != "episode" and r.entity and not is_self_entity(r.entity):
            people.setdefault(r.entity)
        if r.slot is None or r.kind == "episode" or (r.slot not in values and len(values) >= limit):
            continue
        seen = values.setdefault(r.slot, [])
        if r.value and r.value not in seen:
            seen.append(r.value)
    slots = [(e, a, ", ".join(v) or None) for (e, a), v in values.items()]
    named = {e for e, _ in values}
    return slots + [(e, "", None) for e in people if e not in named]


def extract_safely(
    extractor: Runnable,
    messages: list[BaseMessage],
    at: datetime,
    config: RunnableConfig | None = None,
    *,
    slots: Sequence[tuple[str, str, str | None]] | None = None,
) -> tuple[list[Fact], str | None]:
    """Run the extractor (with the namespace's ``slots`` when given); on failure return no facts and the error."""
    payload: dict[str, Any] = {"messages": messages, "now": at, **({"slots": list(slots)} if slots else {})}
    try:
        facts = extractor.invoke(payload, config)
    except ExtractionError as e:
        logger.warning("Memory extraction failed; the raw turn is kept as an episode: %s", e)
        return [], str(e)
    except Exception as e:  # any model/parser failure: keep the turn, report it
        logger.exception("Memory extraction crashed; the raw turn is kept as an episode")
        return [], f"{type(e).__name__}: {e}"
    return [f if isinstance(f, Fact) else Fact.model_validate(f) for f in facts], None


def episode_records(
    messages: list[BaseMessage], namespace: tuple[str, ...], at: datetime, source: MemorySource
) -> list[MemoryRecord]:
    """The user's messages of a turn as ``episode`` records (never lose what was said)."""
    return [
        MemoryRecord(
            namespace=namespace, content=m.content, kind="episode", status=MemoryStatus.ACTIVE, confidence=1.0,
            source=source.model_copy(update={"message_ids": [m.id] if m.id else []}),
            created_at=at, updated_at=at, valid_from=at,
        )
        for m in messages
        if isinstance(m, HumanMessage) and isinstance(m.content, str) and m.content.strip()
    ]  # fmt: skip


def prepare_episodes(records: list[MemoryRecord], config: Any, *, lasting_as: str = "episode") -> list[MemoryRecord]:
    """Apply the update config's PII redaction and retention to raw episode records.

    ``lasting_as``: the kind whose lifetime they get; words kept because extraction failed stand in for the
    facts it should have given (``"fact"``): an episode's short lifetime would lose them after a month.
    """
    redact = config.redactor.redact if config.redactor is not None else None
    return [
        r.model_copy(update={
            "content": redact(r.content).text if redact else r.content,
            "expires_at": config.policy.expires_at_for(lasting_as, r.valid_from),
        })
        for r in records
    ]  # fmt: skip


def keep_failed_turn(
    store: Any,
    messages: Sequence[BaseMessage],
    namespace: tuple[str, ...],
    at: datetime,
    source: MemorySource,
    config: Any,
    error: str,
) -> UpdateResult:
    """A turn whose extraction failed, kept as the user's words (they stand for its facts): nothing is lost."""
    episodes = prepare_episodes(episode_records(list(messages), namespace, at, source), config, lasting_as="fact")
    store.put_records(episodes)
    return UpdateResult(added=episodes, errors=[error])
