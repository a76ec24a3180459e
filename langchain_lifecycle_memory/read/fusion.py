"""Pure scoring for the retriever: calibration, fusion, lifecycle filters, explanations.

Each channel's raw score is mapped to [0, 1] by a *fixed* calibration (no per-query min-max), so a
threshold keeps its meaning whichever channels fire; channels are fused as a weighted noisy-OR.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

import numpy as np
from langchain_core.documents import Document
from pydantic import BaseModel, ConfigDict, Field

from langchain_lifecycle_memory.schema import MemoryRecord, MemorySource, MemoryStatus

__all__ = [
    "CHANNELS",
    "E5_CALIBRATION",
    "E5_RANK_CALIBRATION",
    "ChannelWeights",
    "Decision",
    "RetrievalCandidate",
    "RetrievalExplanation",
    "ScoreCalibration",
    "apply_k",
    "calibrate_array",
    "candidate_document",
    "fuse_calibrated_array",
    "lifecycle_decision",
    "parse_paraphrases",
]

CHANNELS: tuple[str, ...] = ("dense", "lexical", "slot")

Decision = Literal[
    "kept",
    "below_threshold",
    "archived",
    "pending",
    "expired",
    "not_valid_at_as_of",
    "other_tenant",
    "cut_by_k",
    "cut_by_budget",
]


class ScoreCalibration(BaseModel):
    """Fixed linear maps of each channel's raw score to [0, 1] (the defaults fit the default USE embedder)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dense_floor: float = 0.22
    """Cosine at and below which the dense channel says nothing."""
    dense_ceiling: float = 0.60
    """Cosine at and above which the dense channel is certain."""
    lexical_floor: float = 0.0
    """BM25 coverage (see ``lexical``) mapped to 0."""
    lexical_ceiling: float = 0.40
    """BM25 coverage mapped to 1."""
    route_floor: float = 0.20
    """Query-to-attribute-card cosine mapped to 0."""
    route_ceiling: float = 0.40
    """Query-to-attribute-card cosine mapped to 1."""
    attribute_mention: float = 0.8
    """Slot score when the query names the attribute ("编辑器", "running shoes")."""
    value_mention: float = 1.0
    """Slot score when the query contains the stored value ("VS Code")."""
    agreement_floor: float = 0.20
    """Cosine at and below which the meaning of a fact does not back a word match on it."""
    agreement_ceiling: float = 0.35
    """Cosine at and above which it fully does ("apple" pie vs an Apple laptop), unless the attribute is the topic."""
    centered: bool = False
    """Cosines are taken minus the query's mean cosine to a fixed background first (e5, ``E5_CALIBRATION``)."""


E5_CALIBRATION = ScoreCalibration(
    dense_floor=0.035,
    dense_ceiling=0.11,
    route_floor=0.045,
    route_ceiling=0.10,
    agreement_floor=0.0,
    agreement_ceiling=0.05,
    centered=True,
)
"""Threshold calibration for ``E5SmallEmbeddings`` (query-centred cosines; ``benchmarks/encoder_choice.py``)."""
E5_RANK_CALIBRATION = E5_CALIBRATION.model_copy(update={"dense_ceiling": 0.40, "lexical_ceiling": 1.0})
"""Ordering calibration for ``E5SmallEmbeddings`` (open dense ceiling, like the USE default)."""


class ChannelWeights(BaseModel):
    """How much each calibrated channel is trusted (0 switches a channel off).

    Example:
        >>> ChannelWeights(lexical=0.0).as_dict()["lexical"]
        0.0
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    dense: float = Field(default=0.8, ge=0.0, le=1.0)
    lexical: float = Field(default=1.0, ge=0.0, le=1.0)
    slot: float = Field(default=0.9, ge=0.0, le=1.0)

    def as_dict(self) -> dict[str, float]:
        """``{"dense": .., "lexical": .., "slot": ..}``."""
        return {c: float(getattr(self, c)) for c in CHANNELS}


class RetrievalCandidate(BaseModel):
    """One record the retriever looked at, with every score and the verdict."""

    record: MemoryRecord
    decision: Decision
    reason: str = ""
    raw: dict[str, float] = Field(default_factory=dict)
    """Uncalibrated evidence: ``cosine``, ``bm25``, ``coverage``, ``route``."""
    channels: dict[str, float] = Field(default_factory=dict)
    """Calibrated score per channel, each in [0, 1]."""
    entity_factor: float = 1.0
    """Below 1 when the record is about another person than the query."""
    fused: float = 0.0
    """Calibrated fused score (what ``min_score`` is compared with)."""
    rrf: float = 0.0
    """Reciprocal-rank-fusion score (orders results when ``fusion="rrf"``)."""
    rank: int | None = None
    """Position among the returned documents (0 = first), if kept."""

    @property
    def namespace(self) -> tuple[str, ...]:
        """The record's namespace."""
        return self.record.namespace


class RetrievalExplanation(BaseModel):
    """Why a query returned what it returned (``LifecycleRetriever.explain``): every candidate and its verdict."""

    query: str
    queries: list[str] = Field(default_factory=list)
    """The query and any paraphrases from ``query_model``."""
    namespace: tuple[str, ...]
    fusion: Literal["calibrated", "rrf"]
    min_score: float
    k: int
    as_of: datetime | None = None
    now: datetime
    routes: dict[str, float] = Field(default_factory=dict)
    """Query-to-attribute cosine for every attribute of the namespace."""
    target_entities: list[str] = Field(default_factory=list)
    """Non-user entities the query names (empty: the query is about the user)."""
    personal: bool = True
    """Whether the query is about or for someone (else topic routing is damped)."""
    candidates: list[RetrievalCandidate] = Field(default_factory=list)
    expired_matches: int = 0
    """Records that would have been returned but for their deadline having passed (not silently)."""

    def kept(self) -> list[RetrievalCandidate]:
        """Candidates that were returned, in order."""
        return sorted((c for c in self.candidates if c.decision == "kept"), key=lambda c: c.rank or 0)

    def by_decision(self, decision: Decision) -> list[RetrievalCandidate]:
        """Candidates with one verdict."""
        return [c for c in self.candidates if c.decision == decision]


def calibrate_array(values: np.ndarray, floor: float, ceiling: float) -> np.ndarray:
    """Linear map of ``values`` from ``[floor, ceiling]`` to ``[0, 1]``, clipped (as ``np.clip``, bit for bit)."""
    if ceiling <= floor:
        msg = f"Calibration ceiling ({ceiling}) must be above its floor ({floor}); swap or widen them."
        raise ValueError(msg)
    return np.minimum(np.maximum(0.0, (values - floor) / (ceiling - floor)), 1.0)


def fuse_calibrated_array(channels: Mapping[str, np.ndarray], weights: Mapping[str, float]) -> np.ndarray:
    """Weighted noisy-OR of calibrated channel scores, ``1 - prod(1 - w_c * p_c)``, per record.

    Example:
        >>> scores = {"dense": np.array([0.5]), "slot": np.array([1.0])}
        >>> round(float(fuse_calibrated_array(scores, {"dense": 0.8, "slot": 0.9})[0]), 3)
        0.94
    """
    miss: Any = 1.0
    for name, scores in channels.items():
        miss = miss * (1.0 - weights.get(name, 0.0) * scores)
    return 1.0 - np.asarray(miss, dtype=np.float64)


def lifecycle_decision(
    record: MemoryRecord,
    *,
    statuses: tuple[MemoryStatus, ...] | None,
    kinds: tuple[str, ...] | None,
    as_of: datetime | None,
    now: datetime,
    include_expired: bool,
) -> tuple[Decision, str] | None:
    """Why ``record`` may not be returned at all (``None``: eligible), as ``search_records`` filters."""
    if kinds is not None and record.kind not in kinds:
        return "below_threshold", f"kind {record.kind!r} not requested"
    if as_of is not None:
        if record.status is MemoryStatus.PENDING:
            return "pending", "pending records are not returned until confirmed"
        if not record.is_valid_at(as_of) or record.is_expired(as_of):
            return "not_valid_at_as_of", f"valid {record.valid_from.isoformat()} .. {_iso(record.valid_to)}"
        return None
    elif statuses is not None and record.status not in statuses:
        if record.status is MemoryStatus.ARCHIVED:
            return "archived", f"superseded by {record.superseded_by}" if record.superseded_by else "archived"
        return ("pending", "pending records are not returned until confirmed")
    if not include_expired and record.is_expired(now):
        return "expired", f"expired at {_iso(record.expires_at)}"
    return None


def apply_k(explanation: RetrievalExplanation, k: int) -> None:
    """Turn kept candidates ranked ``k`` or later into ``cut_by_k``."""
    for c in explanation.kept():
        if c.rank is not None and c.rank >= k:
            c.decision, c.reason, c.rank = "cut_by_k", f"rank {c.rank} beyond k={k}", None


def parse_paraphrases(reply: Any, query: str, n: int) -> list[str]:
    """Up to ``n`` distinct lines of a chat model's reply, list markers stripped."""
    text = reply.content if hasattr(reply, "content") else str(reply)
    if not isinstance(text, str):
        text = " ".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in text)
    seen = {query.strip()}
    out = []
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:[-*•]|\d+[.)、])\s*", "", line).strip()
        if line and line not in seen:
            seen.add(line)
            out.append(line)
    return out[:n]


def candidate_document(c: RetrievalCandidate) -> Document:
    """The ``Document`` a kept candidate is returned as (slot, lifecycle, scores)."""
    r = c.record
    metadata: dict[str, Any] = {
        "id": r.id,
        "namespace": list(r.namespace),
        "entity": r.entity,
        "attribute": r.attribute,
        "value": r.value,
        "cardinality": r.cardinality,
        "kind": r.kind,
        "status": r.status._value_,  # ``.value`` (the enum property costs ten times more)
        "confidence": r.confidence,
        **{
            k: _iso_or_none(getattr(r, k)) for k in ("created_at", "updated_at", "valid_from", "valid_to", "expires_at")
        },
        "source": _source(r.source),
        "scores": {**c.channels, "fused": round(c.fused, 6), "rrf": round(c.rrf, 6)},
        "score": c.fused,
    }
    if c.reason == "profile":  # general context: nothing answered the request itself
        metadata["profile"] = True
    return Document(id=r.id, page_content=r.content, metadata=metadata)


def _source(source: MemorySource) -> dict[str, Any]:
    """``source.model_dump()`` (written out for the plain ``MemorySource``: a search returns one per document)."""
    if type(source) is not MemorySource:
        return source.model_dump()
    return {"extractor": source.extractor, "thread_id": source.thread_id, "message_ids": list(source.message_ids)}


def _iso_or_none(value: datetime | None) -> str | None:
    return _iso_of(value, value.tzinfo) if value is not None else None


@functools.lru_cache(maxsize=16_384)
def _iso_of(value: datetime, tz: Any) -> str:
    """``isoformat`` remembered, keyed with the zone (equal instants in two zones are written differently)."""
    return value.isoformat()


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value is not None else "open"
