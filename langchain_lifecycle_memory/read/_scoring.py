"""The retriever's scoring core, pure: a snapshot and the query's evidence in, verdicts out.

``score_snapshot`` computes every channel for every record of a namespace as numpy
columns (BM25 coverage, routing, value and attribute mentions, dense cosine), calibrates
and fuses them, applies ``min_score``, the lifecycle verdicts and the tie-breakers, and
builds ``RetrievalCandidate`` objects only for what is shown: the ``k`` best on a plain
retrieval (every kept one when a reranker follows), every record for ``explain``.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from langchain_lifecycle_memory.read._episodes import FEEDBACK_WEIGHT, episode_feedback
from langchain_lifecycle_memory.read._live import MAX_SHOWN_BACKGROUND
from langchain_lifecycle_memory.read._rows import top_order
from langchain_lifecycle_memory.read._snapshot import Snapshot
from langchain_lifecycle_memory.read.fusion import (
    CHANNELS,
    Decision,
    RetrievalCandidate,
    RetrievalExplanation,
    calibrate_array,
    fuse_calibrated_array,
    fuse_rrf,
    lifecycle_decision,
)
from langchain_lifecycle_memory.read.routing import AttributeRouter, is_personal, mentioned_attributes, query_entities
from langchain_lifecycle_memory.schema import MemoryStatus

__all__ = ["QueryEvidence", "RetrievalOptions", "query_evidence", "score_snapshot"]

_PAIRWISE = 4096
"""``_rrf`` compares records with its targets pair by pair up to this many pairs."""


@dataclass
class RetrievalOptions:
    """Per-call options, resolved (``LifecycleRetriever._options``)."""

    namespace: tuple[str, ...]
    k: int
    min_score: float
    statuses: tuple[MemoryStatus, ...] | None
    kinds: tuple[str, ...] | None
    as_of: datetime | None
    now: datetime
    include_expired: bool


@dataclass
class QueryEvidence:
    """What the query says before any record is scored (``query_evidence``): a namespace-wide part of scoring."""

    names: tuple[str, ...]
    route: np.ndarray
    """Routing cosine of each attribute (``names``), best over the query vectors."""
    targets: set[str]
    personal: bool
    damp: float
    attr_slot: np.ndarray
    """Slot channel per attribute code (its last cell serves code -1, no attribute)."""


def query_evidence(
    cfg: Any,
    queries: list[str],
    vectors: list[list[float]],
    offsets: Sequence[float] | None,
    router: AttributeRouter,
    snap: Snapshot,
) -> QueryEvidence:
    """Routes, attribute mentions and the people a query is about, for the namespace of ``snap``.

    Needs no record's dense cosine, so a search computes it while the dense query runs.
    """
    cal = cfg.calibration
    attributes = snap.attributes
    names = tuple(attributes)
    route = np.full(len(names), -1.0)
    if names:  # a namespace of episodes alone has none
        for vector, offset in zip(vectors, offsets or [0.0] * len(vectors), strict=True):
            route = np.maximum(route, router.score_array(vector, names) - offset)
    best_route = float(route.max()) if len(route) else 0.0
    mentioned = mentioned_attributes(queries, names, router.specs) if names else set()
    targets = set().union(*(query_entities(q, snap.entity_alias) for q in queries))
    personal = bool(targets) or any(is_personal(q) or snap.index.mentions_known_name(q) for q in queries)
    damp = 1.0 if personal else cfg.impersonal_factor
    # slot: per attribute (routing picks topics; one far behind the query's best
    # topic is a look-alike: "Where do I live?" vs the job card's "what I do for a
    # living"), then per record, raised by an explicit value mention.
    attr_slot = np.zeros(len(attributes) + 1)  # the extra last cell serves code -1 (no attribute)
    if names:
        near = route >= best_route - cfg.route_margin
        attr_slot[:-1] = np.where(near, calibrate_array(route, cal.route_floor, cal.route_ceiling) * damp, 0.0)
    for a in mentioned:  # a few names at most: found by bisection in the sorted attribute list
        j = bisect.bisect_left(attributes, a)
        if j < len(attributes) and attributes[j] == a:
            attr_slot[j] = max(attr_slot[j], cal.attribute_mention)
    return QueryEvidence(names, route, targets, personal, damp, attr_slot)


def score_snapshot(
    cfg: Any,
    query: str,
    queries: list[str],
    vectors: list[list[float]],
    router: AttributeRouter,
    snap: Snapshot,
    eligible: np.ndarray,
    cosines: dict[int, float],
    dense_positions: list[int],
    opts: RetrievalOptions,
    full: bool = True,
    offsets: Sequence[float] | None = None,
    cue_scores: dict[int, float] | None = None,
    episode_dense: tuple[np.ndarray, np.ndarray] | None = None,
    evidence: QueryEvidence | None = None,
) -> RetrievalExplanation:
    """Score every record with array operations; build candidates only for what is shown.

    ``cfg`` is the ``LifecycleRetriever`` whose settings apply (calibrations, weights,
    factors, tie-breakers, fusion, reranker).

    A plain retrieval materialises the ``k`` best (all kept ones when a reranker
    follows); ``explain`` materialises every record with its verdict. ``offsets`` (one
    per query vector) are subtracted from routing cosines, as the caller did for
    ``cosines`` (query-centred calibration, ``_anchors``). ``cue_scores``: best cosine of
    the query to each record's write-time cues (``cues``), routed like a topic card.
    ``episode_dense``: a second encoder's calibrated dense scores for episodes (threshold,
    order), one per record, joined with the dense channel as a noisy-OR (``retrieval``).
    ``evidence``: ``query_evidence`` of the same arguments, when the caller has it.
    """
    n = len(snap)
    cal, weights = cfg.calibration, cfg.weights.as_dict()
    bm25, coverage = snap.index.scores(queries[0])
    for q in queries[1:]:
        more_bm25, more_coverage = snap.index.scores(q)
        bm25, coverage = np.maximum(bm25, more_bm25), np.maximum(coverage, more_coverage)
    if evidence is None:
        evidence = query_evidence(cfg, queries, vectors, offsets, router, snap)
    names, route, targets, personal = evidence.names, evidence.route, evidence.targets, evidence.personal
    damp, attr_slot = evidence.damp, evidence.attr_slot
    cosine = np.full(n, np.nan)
    if cosines:
        cosine[list(cosines)] = list(cosines.values())
    cosine0 = _filled(cosine, 0.0)
    # A word match on a fact (its value or its words in the query) counts as far as the
    # fact's meaning agrees with the query, or its attribute is the query's topic: the
    # user's "Apple" laptop is not evidence for an apple pie recipe.
    topic = attr_slot[snap.attribute_code] if names else np.zeros(n)  # no attribute: code -1 everywhere
    if cue_scores:  # per-record situations (write-time cues) count like the record's own topic card
        cue = np.zeros(n)
        cue[list(cue_scores)] = calibrate_array(
            np.asarray(list(cue_scores.values())), cal.route_floor, cal.route_ceiling
        )
        topic = np.maximum(topic, cue * damp)
    if names:
        agree = calibrate_array(_filled(cosine, -1.0), cal.agreement_floor, cal.agreement_ceiling)
        supported = np.maximum(agree, np.minimum(1.0, topic / cal.attribute_mention))
        support = np.where(snap.attribute_code >= 0, supported, 1.0)
        coverage_backed = coverage * support
    else:  # every support is 1 (x * 1.0 is x)
        support, coverage_backed = np.ones(n), coverage
    slot = topic
    if snap.needles:  # values a query can mention
        slot = np.where(snap.value_mentions(queries), np.maximum(topic, cal.value_mention * support), topic)
    in_dense = np.zeros(n, dtype=bool)
    in_dense[dense_positions] = True
    channels = _calibrated(cal, cosine0, in_dense, coverage_backed, slot, damp, slice(None))
    if episode_dense is not None:
        channels["dense"] = 1.0 - (1.0 - channels["dense"]) * (1.0 - episode_dense[0])
    # Records about someone the query is not about are scaled down; with no such records the
    # factor is 1 everywhere and its products (x * 1.0 is x) are skipped.
    uniform = not targets and not snap.other_entities
    about = snap.entity_mask(targets) if targets else ~snap.entity_mask(snap.other_entities)
    factor = np.ones(n) if uniform else np.where(about, 1.0, cfg.other_entity_factor)
    fused = fuse_calibrated_array(channels, weights)
    if not uniform:
        fused = fused * factor
    kept = eligible & (fused >= opts.min_score)

    kept_positions = np.flatnonzero(kept)
    if not full and not len(kept_positions):  # nothing to show ("Will it rain tomorrow?")
        return _explanation(query, queries, opts, cfg, {}, targets, personal, [])
    pool = np.flatnonzero(eligible)
    rrf = _rrf(channels, weights, pool, None) * factor if cfg.fusion == "rrf" else None
    if rrf is not None:
        base = rrf[kept_positions] / (fuse_rrf(dict.fromkeys(CHANNELS, 1), weights) or 1.0)
    elif cfg.rank_calibration is not None and cfg.rank_calibration != cal:
        ordered = _calibrated(cfg.rank_calibration, cosine0, in_dense, coverage_backed, slot, damp, kept_positions)
        if episode_dense is not None:
            ordered["dense"] = 1.0 - (1.0 - ordered["dense"]) * (1.0 - episode_dense[1][kept_positions])
        base = fuse_calibrated_array(ordered, weights)
        if not uniform:
            base = base * factor[kept_positions]
    else:
        base = fused[kept_positions]
    feedback = getattr(cfg, "episode_feedback", False)  # episodes only, the order only (``_episodes``)
    confidence = cfg.confidence_weight * snap.confidence[kept_positions]
    # Sub-threshold evidence still orders results when min_score is 0 (recall@k).
    evidence = 1e-3 * (np.maximum(cosine0[kept_positions], 0.0) + coverage[kept_positions])
    among = None  # indices into kept_positions whose sort key is computed (None: all of them)
    if not full and cfg.reranker is None:
        # Showing the k best: recency (at most recency_weight) and the feedback bonus (at most
        # FEEDBACK_WEIGHT) only raise a key, so a record that stays under the k-th best key
        # without them even when raised by both cannot be shown; they are computed for the rest.
        most = (FEEDBACK_WEIGHT if uniform else FEEDBACK_WEIGHT * factor[kept_positions]) if feedback else 0.0
        lift = cfg.recency_weight + most
        among = _may_rise(base + (confidence + evidence), lift, opts.k)
    part, pick = (kept_positions, slice(None)) if among is None else (kept_positions[among], among)
    tie = cfg.recency_weight * snap.recency(opts.now, cfg.recency_half_life_days, part)
    tie = tie + confidence[pick]
    order = base[pick]
    if feedback:
        bonus = episode_feedback(snap, kept_positions, base, query, among=among)
        if bonus is not None:
            order = order + (bonus[pick] if uniform else bonus[pick] * factor[part])
    keys = order + (tie + evidence[pick])
    sort_key = np.zeros(n)
    if full:  # shown in each candidate's raw evidence
        sort_key[part] = keys
    if full or cfg.reranker is not None:
        shown_kept = part[np.argsort(-keys, kind="stable")]
    else:  # the k best of what may be thousands of kept records
        shown_kept = part[top_order(keys, opts.k)]
    rank_of = {int(p): r for r, p in enumerate(shown_kept)}
    if rrf is None:  # RRF only for the metadata: ranks of the records shown (all of them for explain)
        rrf = _rrf(channels, weights, pool, None if full else shown_kept, _background(snap, queries, cal, damp))
        if not uniform:
            rrf = rrf * factor

    if full:
        shown: Sequence[int] = range(n)
    else:
        shown = list(rank_of)
    candidates: list[RetrievalCandidate] = []
    for p in shown:
        record = snap.records[p]
        if not full:  # a plain search's explanation stays internal: documents carry no raw evidence
            candidates.append(
                RetrievalCandidate(
                    record=record,
                    decision="kept",
                    channels={name: float(channels[name][p]) for name in CHANNELS},
                    entity_factor=float(factor[p]),
                    fused=float(fused[p]),
                    rrf=float(rrf[p]),
                    rank=rank_of[p],
                )
            )
            continue
        raw = {"coverage": float(coverage[p]), "bm25": float(bm25[p])}
        if not np.isnan(cosine[p]):
            raw["cosine"] = float(cosine[p])
        if record.attribute and 0 <= (j := int(snap.attribute_code[p])) < len(route):
            raw["route"] = float(route[j])
        if cue_scores and p in cue_scores:
            raw["cue"] = cue_scores[p]
        decision: Decision = "kept"
        reason = ""
        if not eligible[p]:
            verdict = lifecycle_decision(
                record,
                statuses=opts.statuses,
                kinds=opts.kinds,
                as_of=opts.as_of,
                now=opts.now,
                include_expired=opts.include_expired,
            )
            decision, reason = verdict or ("below_threshold", "not eligible")
        elif not kept[p]:
            decision = "below_threshold"
            reason = f"fused {fused[p]:.3f} < min_score {opts.min_score:.3f}"
            if factor[p] < 1.0:
                reason += f" (about {record.entity or 'the user'}, not the query's subject)"
        else:
            raw["sort_key"] = float(sort_key[p])
        candidates.append(
            RetrievalCandidate(
                record=record,
                decision=decision,
                reason=reason,
                raw=raw,
                channels={name: float(channels[name][p]) for name in CHANNELS},
                entity_factor=float(factor[p]),
                fused=float(fused[p]),
                rrf=float(rrf[p]),
                rank=rank_of.get(p),
            )
        )
    # Every attribute's route for ``explain``; a plain retrieval (its explanation is
    # internal) carries the routes of what it shows, not one entry per attribute.
    routes = dict(zip(names, route.tolist())) if full else _shown_routes(snap, route, shown)
    return _explanation(query, queries, opts, cfg, routes, targets, personal, candidates)


def _explanation(
    query: str,
    queries: list[str],
    opts: RetrievalOptions,
    cfg: Any,
    routes: dict[str, float],
    targets: set[str],
    personal: bool,
    candidates: list[RetrievalCandidate],
) -> RetrievalExplanation:
    return RetrievalExplanation(
        query=query,
        queries=queries,
        namespace=opts.namespace,
        fusion=cfg.fusion,
        min_score=opts.min_score,
        k=opts.k,
        as_of=opts.as_of,
        now=opts.now,
        routes=routes,
        target_entities=sorted(targets),
        personal=personal,
        candidates=candidates,
    )


def _shown_routes(snap: Snapshot, route: np.ndarray, shown: Sequence[int]) -> dict[str, float]:
    codes = {int(snap.attribute_code[p]) for p in shown} - {-1}
    return {snap.attributes[j]: float(route[j]) for j in sorted(codes)}


def _may_rise(lower: np.ndarray, lift: np.ndarray, k: int) -> np.ndarray | None:
    """Indices whose key, ``lower`` raised by at most ``lift``, can reach the ``k`` largest (``None``: all).

    Keys only rise, so the ``k``-th largest ``lower`` bounds the ``k``-th largest key from
    below: a record whose ``lower + lift`` stays under it cannot be among the ``k`` best.
    """
    if len(lower) <= k:
        return None
    kth = np.partition(lower, len(lower) - k)[len(lower) - k]
    if np.isnan(kth):
        return None
    return np.flatnonzero(lower + lift >= kth - 1e-9)  # the margin covers rounding in the raised keys


def _ahead(values: np.ndarray, at: np.ndarray, mine: np.ndarray, where: np.ndarray) -> np.ndarray:
    """For each target (score ``mine``, position ``where``): the records ranked ahead of it.

    Those of ``values`` (positions ``at``, ascending) that score higher, or the same at an
    earlier position (a stable sort's ties). Pair by pair for a few records; by distinct
    target score for many (a common word gives thousands of records one coverage).
    """
    if len(values) * len(mine) <= _PAIRWISE:
        pairs = values[:, None]
        before = np.count_nonzero(pairs > mine[None, :], axis=0)
        tied, of = np.nonzero(pairs == mine[None, :])
        return before + np.bincount(of[at[tied] < where[of]], minlength=len(mine))
    before = np.empty(len(mine), dtype=np.int64)
    for score in np.unique(mine).tolist():
        targets = np.flatnonzero(mine == score)
        tied_at = at[values == score]  # ascending
        before[targets] = np.count_nonzero(values > score) + np.searchsorted(tied_at, where[targets])
    return before


def _background(
    snap: Snapshot, queries: list[str], cal: Any, damp: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The snapshot's rows, and the positions and lexical scores of its ``background`` (``_live``).

    Their lexical channel as ``_calibrated`` computes it for a record without attribute
    (whose support is 1).
    """
    if snap.background is None:
        return None
    rows, behind, index = snap.background
    coverage = index.scores(queries[0])[1]
    for q in queries[1:]:
        coverage = np.maximum(coverage, index.scores(q)[1])
    return rows, behind, calibrate_array(coverage, cal.lexical_floor, cal.lexical_ceiling) * damp


def _filled(cosine: np.ndarray, value: float) -> np.ndarray:
    """Cosines with NaN (no dense hit) replaced by ``value`` (``np.nan_to_num`` for finite cosines, cheaper)."""
    return np.where(np.isnan(cosine), value, cosine)


def _calibrated(
    cal: Any,
    cosine: np.ndarray,
    in_dense: np.ndarray,
    coverage: np.ndarray,
    slot: np.ndarray,
    damp: float,
    where: Any,
) -> dict[str, np.ndarray]:
    """The three channels under calibration ``cal``, for the records ``where`` selects.

    ``cosine``: 0 where no dense hit. The dense channel speaks only for the records the
    dense search ranked (``in_dense``).
    """
    dense = calibrate_array(cosine[where], cal.dense_floor, cal.dense_ceiling)
    return {
        "dense": np.where(in_dense[where], dense, 0.0),
        "lexical": calibrate_array(coverage[where], cal.lexical_floor, cal.lexical_ceiling) * damp,
        "slot": slot[where],
    }


def _rrf(
    channels: dict[str, np.ndarray],
    weights: dict[str, float],
    pool: np.ndarray,
    only: np.ndarray | None,
    background: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Weighted RRF of every record (``only=None``) or of the records ``only`` (0 elsewhere).

    A record's rank in a channel is its place among the pool's records that fire there,
    by descending score, ties in record order (a stable sort). For a few records it is
    counted (how many score higher, how many tie before it) instead of sorting the pool.
    ``background``: the snapshot's rows in the namespace, and the namespace positions and
    lexical scores of eligible records left out of it (``_live``), counted in that channel.
    """
    if only is not None and len(only) > MAX_SHOWN_BACKGROUND:  # many records (a reranker follows): sorting is cheaper
        only = None
    n = len(next(iter(channels.values())))
    out = np.zeros(n)
    for name in CHANNELS:
        scores = channels[name]
        if only is None:
            firing = pool[scores[pool] > 0]
            order = firing[np.argsort(-scores[firing], kind="stable")]
            term = np.zeros(n)
            term[order] = weights[name] / (60 + np.arange(1, len(order) + 1))
            out = out + term
        elif len(targets := only[scores[only] > 0]):
            firing = pool[scores[pool] > 0]
            floor = scores[targets].min()
            firing = firing[scores[firing] >= floor]  # the rest is behind every target
            values, at, where = scores[firing], firing, targets
            if name == "lexical" and background is not None:  # positions in the namespace order both
                rows, behind, lexical = background
                ahead = lexical >= floor
                values = np.concatenate([values, lexical[ahead]])
                at, where = np.concatenate([rows[firing], behind[ahead]]), rows[targets]
                if len(behind) and len(firing):  # two ascending runs: one order
                    merged = np.argsort(at, kind="stable")
                    values, at = values[merged], at[merged]
            out[targets] += weights[name] / (60 + 1 + _ahead(values, at, scores[targets], where))  # 0 elsewhere
    return out
