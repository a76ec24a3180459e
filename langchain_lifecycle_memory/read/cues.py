"""Write-time cues (doc2query): short situations where a stored fact matters, from one chat-model call per turn.

Cues bridge the gap between a question and a fact that shares no word with it ("plan my
garden" vs "a north-facing balcony"). They live in ``record.metadata["cues"]``, are indexed
for BM25 and embedded for the slot channel; a failed or malformed reply costs the cues, never the write.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from langchain_lifecycle_memory.schema import MemoryRecord

__all__ = ["CUES_KEY", "CUE_PROMPT", "attach_cues", "cue_request", "parse_cues", "with_cues"]

logger = logging.getLogger(__name__)

CUES_KEY = "cues"
"""Where a record keeps its cues (``record.metadata[CUES_KEY]``: a list of strings)."""

CUE_PROMPT = (
    "You help a personal memory store. For each numbered fact about a user, list {n} short, different "
    "situations or requests (3-8 words each) where an assistant should remember this fact, including "
    "ones that share no word with it (a north-facing balcony matters for gardening, sunlight, outdoor "
    "furniture). Use the fact's language and English. Reply with JSON only: "
    '{{"1": ["...", "..."], "2": [...]}}.'
)
MAX_CUES = 8
MAX_CUE_CHARS = 120


def cue_request(records: Sequence[MemoryRecord], n: int = 4) -> list[Any]:
    """The messages of the one enrichment call for ``records``."""
    lines = [f"{i}. {r.content}" for i, r in enumerate(records, 1)]
    return [SystemMessage(CUE_PROMPT.format(n=n)), HumanMessage("\n".join(lines))]


def parse_cues(reply: Any, count: int) -> dict[int, list[str]]:
    """``{fact index (0-based): cues}`` from a JSON (fenced or not) or ``"1: a; b"`` reply; malformed parts skipped."""
    text = reply.content if hasattr(reply, "content") else str(reply)
    if not isinstance(text, str):
        text = " ".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in text)
    raw: Any = {}
    if match := re.search(r"\{.*\}", text, flags=re.S):
        with contextlib.suppress(json.JSONDecodeError):
            raw = json.loads(match.group(0))
    if not isinstance(raw, dict) or not raw:
        lines = (re.match(r"\s*(\d+)\s*[.:)、]\s*(.+)", line) for line in text.splitlines())
        raw = {m.group(1): re.split(r"\s*[;；|]\s*", m.group(2)) for m in lines if m}
    out: dict[int, list[str]] = {}
    for key, items in raw.items():
        try:
            index = int(str(key).strip()) - 1
        except ValueError:
            continue
        items = [items] if isinstance(items, str) else items
        if not 0 <= index < count or not isinstance(items, list):
            continue
        cues = [" ".join(str(c).split())[:MAX_CUE_CHARS] for c in items if isinstance(c, (str, int, float))]
        out[index] = list(dict.fromkeys(c for c in cues if c))[:MAX_CUES]
    return out


def attach_cues(model: BaseChatModel, records: Sequence[MemoryRecord], n: int = 4) -> int:
    """One call for all ``records`` (not episodes) setting ``metadata["cues"]``; returns the call count."""
    targets = [r for r in records if r.kind != "episode" and r.content.strip()]
    if not targets:
        return 0
    try:
        reply = model.invoke(cue_request(targets, n))
    except Exception as e:  # a cue failure must never lose the write
        logger.warning("cue generation failed (%s: %s); facts are stored without cues", type(e).__name__, e)
        return 1
    for index, cues in parse_cues(reply, len(targets)).items():
        if cues:
            targets[index].metadata = {**targets[index].metadata, CUES_KEY: cues}
    return 1


def with_cues(model: BaseChatModel | None, n: int = 4) -> Callable[[Any], None] | None:
    """A write's ``before_apply`` (``reconcile``): cues for the plan's new records; ``None`` without a model."""
    if model is None:
        return None

    def attach(plan: Any) -> None:
        if plan.added:
            attach_cues(model, plan.added, n)

    return attach
