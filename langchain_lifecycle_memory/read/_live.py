"""Which records of a big namespace a plain search scores (pure).

Scoring reads every record some channel can score above 0 (``Snapshot.scoring_rows``):
the dense and cue hits, the records with an attribute or a value the query names, and
every BM25 match. A common word ("什么", "like") matches thousands of records whose
only evidence is that weak match; they cannot reach ``min_score`` and only count as
records ranked ahead in the lexical channel's RRF of the shown ones. ``live_rows`` keeps
them apart (the snapshot's ``background``): a bound shows which cannot be kept, and
only their lexical score is computed, where the RRF needs it.

Many of them can also be kept but never shown: "green tea" matches a thousand notes well
enough for ``min_score``, and a search shows ten. With the query's evidence at hand
(``QueryEvidence``), a lexical-only row's sort key is bounded from both sides; one whose
highest key stays under the ``k``-th best lowest key of the rows sure to be kept (and, with
the episode feedback on, whose ordering score stays under the fifth best episode's, the
ones the feedback reads) cannot be shown whatever the dense query finds: it is kept apart
too. Adding rows only raises those thresholds, and every key depends on its row alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from langchain_lifecycle_memory.read._episodes import EPISODE_KIND, FEEDBACK_DOCS, FEEDBACK_WEIGHT
from langchain_lifecycle_memory.read._rows import local_positions
from langchain_lifecycle_memory.read.fusion import calibrate_array
from langchain_lifecycle_memory.read.lexical import LexicalIndex

__all__ = ["MAX_SHOWN_BACKGROUND", "Prepared", "Restriction", "prepare", "restrict"]

MAX_SHOWN_BACKGROUND = 64
"""Background rows are kept apart only for searches that show at most this many records
(``_scoring._rrf`` counts ranks for a few records and sorts the pool for many)."""

Restriction = tuple[Any, np.ndarray, dict[int, float], list[int], dict[int, float], Any]
Prepared = tuple[dict[str, tuple[np.ndarray, float]], np.ndarray, np.ndarray]
"""``prepare``'s result: each query's raw BM25 scores, the rows scored, the rows kept apart."""
MARGIN = 1e-6
"""Slack on both bounds of a sort key (keys are sums of a few terms in [0, 1]; rounding is ~1e-16)."""


def prepare(
    cfg: Any,
    snapshot: Any,
    queries: list[str],
    eligible: np.ndarray,
    cue_scores: dict[int, float],
    episode_dense: tuple[np.ndarray, np.ndarray] | None,
    *,
    min_score: float,
    k: int,
    evidence: Any = None,
) -> Prepared:
    """The part of ``restrict`` that needs no dense hit: it runs while the dense query does.

    The rows some channel but the dense one can score above 0 (sorted), split into those
    scored and the lexical-only ones kept apart; ``restrict`` adds the dense hits. A row's
    verdict depends on its own evidence alone, so adding rows later changes no other row's.
    With ``evidence`` (the query's ``QueryEvidence``), rows that cannot be shown are kept
    apart as well (see the module docstring).
    """
    lifted = [] if episode_dense is None else (episode_dense[0] + episode_dense[1]).nonzero()[0].tolist()
    rows, bm25, lexical_only = snapshot.scoring_rows(queries, eligible, [*cue_scores, *lifted])
    tiers = cfg.fusion == "calibrated" and cfg.reranker is None and k <= MAX_SHOWN_BACKGROUND
    if tiers and lexical_only.any():
        lexical = np.flatnonzero(lexical_only)
        apart = ~_may_be_kept(cfg, bm25, queries, rows[lexical], min_score)
        if evidence is not None and not apart.all():
            rest = np.flatnonzero(~apart)
            apart[rest] = _cannot_show(cfg, snapshot, bm25, queries, rows[lexical[rest]], evidence, min_score, k)
        if apart.any():
            out = lexical[apart]
            keep = np.ones(len(rows), dtype=bool)
            keep[out] = False
            return bm25, rows[keep], rows[out]
    return bm25, rows, rows[:0]


def _cannot_show(
    cfg: Any,
    snapshot: Any,
    bm25: dict[str, tuple[np.ndarray, float]],
    queries: list[str],
    rows: np.ndarray,
    evidence: Any,
    min_score: float,
    k: int,
) -> np.ndarray:
    """Which lexical-only ``rows`` can be neither shown nor read by the episode feedback, whatever else is found.

    A lexical-only row's fused score is ``(1 - (1 - w * lexical)) * factor`` (the dense and
    slot channels are 0) and its ordering score the same under the rank calibration; its
    sort key adds confidence, 1e-3 x coverage, and at most the recency weight and the
    feedback bonus (``_scoring``). ``factor``: the entity factor, as scoring computes it.
    """
    cal = cfg.calibration
    rank = cfg.rank_calibration if cfg.rank_calibration is not None else cal
    weight = cfg.weights.lexical
    coverage = _coverage(bm25, queries, rows)
    factor = _entity_factor(cfg, snapshot, rows, evidence.targets)
    fused = weight * calibrate_array(coverage, cal.lexical_floor, cal.lexical_ceiling) * evidence.damp * factor
    base = weight * calibrate_array(coverage, rank.lexical_floor, rank.lexical_ceiling) * evidence.damp * factor
    extra = cfg.confidence_weight * snapshot.confidence[rows] + 1e-3 * coverage
    never = fused < min_score - MARGIN  # not kept (``_may_be_kept`` bounds without the damping and the factor)
    sure = fused >= min_score + MARGIN  # kept, whatever the dense query finds
    n_sure = int(np.count_nonzero(sure))
    if n_sure < k:
        return never
    lowest = base[sure] + extra[sure] - MARGIN
    kth = np.partition(lowest, n_sure - k)[n_sure - k]  # no set of kept rows has a lower k-th best key
    feedback = getattr(cfg, "episode_feedback", False) and EPISODE_KIND in snapshot.kinds
    episode = snapshot.kind_code[rows] == snapshot.kinds.index(EPISODE_KIND) if feedback else np.zeros(len(rows), bool)
    highest = base + extra + cfg.recency_weight + FEEDBACK_WEIGHT * factor * episode + MARGIN
    out = highest < kth
    if feedback and episode.any():  # the feedback reads the FEEDBACK_DOCS best kept episodes by ordering score
        read = sure & episode
        n_read = int(np.count_nonzero(read))
        if n_read < FEEDBACK_DOCS:
            out &= ~episode
        else:
            fifth = np.partition(base[read] - MARGIN, n_read - FEEDBACK_DOCS)[n_read - FEEDBACK_DOCS]
            out &= ~episode | (base + MARGIN < fifth)
    return out | never


def _with_dense(scored: np.ndarray, apart: np.ndarray, dense: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``prepare``'s rows with the dense hits ``dense`` (sorted, distinct) scored: none of them is kept apart."""
    if not len(dense):
        return scored, apart
    at = np.searchsorted(scored, dense)
    new = ~_found(scored, at, dense)
    if new.any():
        scored = np.concatenate([scored, dense[new]])
        scored.sort()  # distinct positions: one order (np.insert costs more in its Python part)
    if len(apart):
        at = np.searchsorted(apart, dense)
        moved = _found(apart, at, dense)
        if moved.any():
            keep = np.ones(len(apart), dtype=bool)
            keep[at[moved]] = False
            apart = apart[keep]
    return scored, apart


def _found(sorted_rows: np.ndarray, at: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` is in ``sorted_rows`` (``at``: their ``searchsorted`` places)."""
    if not len(sorted_rows):
        return np.zeros(len(values), dtype=bool)
    return sorted_rows[np.minimum(at, len(sorted_rows) - 1)] == values


def restrict(
    cfg: Any,
    snapshot: Any,
    queries: list[str],
    eligible: np.ndarray,
    cosines: dict[int, float],
    dense_positions: list[int],
    cue_scores: dict[int, float],
    episode_dense: tuple[np.ndarray, np.ndarray] | None,
    *,
    min_score: float,
    k: int,
    prepared: Prepared | None = None,
) -> Restriction | None:
    """``(snapshot, eligible, cosines, dense_positions, cue_scores, episode_dense)`` over the rows that can matter.

    ``None`` when they are half the namespace or more (scoring all of it is as cheap).
    Positions in the result are the restricted snapshot's. With ``cfg`` (the retriever)
    ordering by calibrated fusion and at most ``MAX_SHOWN_BACKGROUND`` records shown, the
    lexical-only rows that cannot be kept go to the snapshot's ``background``. ``prepared``:
    what ``prepare`` made of the same arguments but ``cosines``.
    """
    if prepared is None:
        prepared = prepare(cfg, snapshot, queries, eligible, cue_scores, episode_dense, min_score=min_score, k=k)
    bm25, rows, apart = prepared
    dense = np.sort(np.fromiter(cosines, dtype=np.int64, count=len(cosines)))  # distinct: dict keys
    rows, apart = _with_dense(rows, apart, dense[eligible[dense]])
    if len(rows) + len(apart) >= len(snapshot) // 2:
        return None
    scored = snapshot.restricted(rows, bm25, apart if len(apart) else None)
    cosines, local = _moved(rows, cosines)
    dense_positions = [local[p] for p in dense_positions if p in local]  # dense hits have cosines
    if cue_scores:
        cue_scores = _moved(rows, cue_scores)[0]
    if episode_dense is not None:
        episode_dense = (episode_dense[0][rows], episode_dense[1][rows])
    return scored, eligible[rows], cosines, dense_positions, cue_scores, episode_dense


def _entity_factor(cfg: Any, snapshot: Any, rows: np.ndarray, targets: set[str]) -> Any:
    """The entity factor of ``rows`` as ``_scoring`` computes it (1 where the query is about no one in particular)."""
    if not targets and not snapshot.other_entities:
        return 1.0
    about = snapshot.entity_mask(targets, rows) if targets else ~snapshot.entity_mask(snapshot.other_entities, rows)
    return np.where(about, 1.0, cfg.other_entity_factor)


def _may_be_kept(
    cfg: Any, bm25: dict[str, tuple[np.ndarray, float]], queries: list[str], rows: np.ndarray, min_score: float
) -> np.ndarray:
    """Whether each lexical-only row's fused score can reach ``min_score`` (``False``: it provably cannot).

    Such a row has no dense hit, no attribute, no cue and no value mention: its dense and
    slot channels are 0, its lexical one is ``calibrate(coverage) * damp`` and its fused
    score ``(1 - (1 - w * lexical)) * entity_factor``, with ``damp`` and the factor at most 1.
    Every step is monotone in floating point, so the same steps without them bound it.
    """
    cal, weight = cfg.calibration, cfg.weights.lexical
    if len(queries) == 1 and weight > 0 and cal.lexical_ceiling > cal.lexical_floor:
        # A coverage under ``need`` cannot get there (wide margins over rounding): only the
        # rows whose raw score reaches ``need`` x the ideal one are checked exactly.
        raw, ideal = bm25[queries[0]]
        need = cal.lexical_floor + (min_score - 1e-9) / weight * (cal.lexical_ceiling - cal.lexical_floor) - 1e-9
        if ideal > 0 and need > 1e-6:
            out = np.zeros(len(rows), dtype=bool)
            near = np.flatnonzero(raw[rows] >= (need - 1e-9) * ideal)
            out[near] = _bound(cfg, bm25, queries, rows[near], min_score)
            return out
    return _bound(cfg, bm25, queries, rows, min_score)


def _bound(
    cfg: Any, bm25: dict[str, tuple[np.ndarray, float]], queries: list[str], rows: np.ndarray, min_score: float
) -> np.ndarray:
    """``_may_be_kept``'s bound, computed as scoring computes the lexical channel and the fusion."""
    cal = cfg.calibration
    coverage = _coverage(bm25, queries, rows)
    lexical = calibrate_array(coverage, cal.lexical_floor, cal.lexical_ceiling)
    miss = 1.0 - cfg.weights.lexical * lexical
    return (1.0 - miss) >= min_score


def _coverage(bm25: dict[str, tuple[np.ndarray, float]], queries: list[str], rows: np.ndarray) -> np.ndarray:
    """The BM25 coverage of ``rows`` as scoring computes it (``PickedIndex.scores``: the best over the queries)."""
    coverage = None
    for q in queries:
        raw, ideal = bm25[q]
        _, more = LexicalIndex.coverage(raw[rows], ideal)
        coverage = more if coverage is None else np.maximum(coverage, more)
    return coverage if coverage is not None else np.zeros(len(rows))


def _moved(rows: np.ndarray, scores: dict[int, float]) -> tuple[dict[int, float], dict[int, int]]:
    """``scores`` of the positions in the sorted ``rows``, keyed by their index there; and that index per position."""
    if not scores or not len(rows):
        return {}, {}
    positions = np.fromiter(scores, dtype=np.int64, count=len(scores))
    at = np.searchsorted(rows, positions)
    found = rows[np.minimum(at, len(rows) - 1)] == positions
    if found.all():
        index = at.tolist()
        return dict(zip(index, scores.values())), dict(zip(scores, index))
    local = local_positions(rows, list(scores))
    return {local[p]: c for p, c in scores.items() if p in local}, local
