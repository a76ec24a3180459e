"""Write-time cues (doc2query): situations where a stored fact matters, written by a chat model.

A question often shares no word and little meaning with the fact that answers it: "How
should I plan my garden this spring?" needs "The user only has a north-facing balcony".
Topic cards bridge that gap only for attributes someone wrote cards for. Cues bridge it
per fact: when a chat model is configured, every new fact of a turn gets a few short
situations ("planting a garden", "choosing outdoor furniture", "sunlight for plants")
in **one batched call per turn**, kept in the record's ``metadata["cues"]``.

Because cues live on the record they are archived with it, purged with it and re-embedded
with the current embedder (the retriever embeds them and caches the vectors per embedder);
they are indexed for BM25 with the record's text and, as their own dense entries, feed the
slot channel with the routing calibration (they are per-record topic cards). A failed or
malformed reply costs the cues, never the write.

Example:
    .. code-block:: python

        from langchain_lifecycle_memory import LifecycleMemory

        memory = LifecycleMemory(extractor=chat_model, cue_model=chat_model)
        memory.add_messages([("user", "My flat only has a north-facing balcony.")], user_id="u1")
        memory.inject("How should I plan my garden this spring?", user_id="u1").text
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from langchain_lifecycle_memory.schema import MemoryRecord

__all__ = ["CUES_KEY", "CUE_PROMPT", "attach_cues", "cue_request", "parse_cues", "record_cues"]

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
    """``{fact index (0-based): cues}`` from a reply; malformed parts are skipped.

    Accepts the JSON object asked for (in a code fence or not), or ``"1: a; b"`` lines.
    """
    text = reply.content if hasattr(reply, "content") else str(reply)
    if not isinstance(text, str):
        text = " ".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in text)
    raw: dict[str, Any] = {}
    match = re.search(r"\{.*\}", text, flags=re.S)
    if match:
        try:
            loaded = json.loads(match.group(0))
            raw = loaded if isinstance(loaded, dict) else {}
        except json.JSONDecodeError:
            raw = {}
    if not raw:
        for line in text.splitlines():
            m = re.match(r"\s*(\d+)\s*[.:)、]\s*(.+)", line)
            if m:
                raw[m.group(1)] = re.split(r"\s*[;；|]\s*", m.group(2))
    out: dict[int, list[str]] = {}
    for key, items in raw.items():
        try:
            index = int(str(key).strip()) - 1
        except ValueError:
            continue
        if not 0 <= index < count:
            continue
        if isinstance(items, str):
            items = [items]
        if not isinstance(items, list):
            continue
        cues = [" ".join(str(c).split())[:MAX_CUE_CHARS] for c in items if isinstance(c, (str, int, float))]
        out[index] = list(dict.fromkeys(c for c in cues if c))[:MAX_CUES]
    return out


def attach_cues(model: BaseChatModel, records: Sequence[MemoryRecord], n: int = 4) -> int:
    """One call for all ``records``; sets ``metadata["cues"]`` in place. Returns the call count.

    Episodes and records without content get none. A model error or an unusable reply
    is logged and leaves the records as they were (the write goes on without cues).
    """
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


def record_cues(record: MemoryRecord) -> list[str]:
    """A record's cues (empty if none or malformed)."""
    cues = record.metadata.get(CUES_KEY) if isinstance(record.metadata, dict) else None
    return [c for c in cues if isinstance(c, str) and c.strip()] if isinstance(cues, list) else []
