"""The retriever's scoring, pure: a snapshot and the query's vectors in, an explanation out.

Every record gets three calibrated channels as numpy columns: **dense** (cosine, plus the episode
encoder's; only for the ``dense_k`` nearest), **lexical** (BM25 coverage, counted as far as the fact's
meaning or attribute backs the word match) and **slot** (routing, attribute or value mentions, cues).
They are fused as a weighted noisy-OR that ``min_score`` thresholds; records about someone else are
scaled down; kept records are ordered by an open-ceiling calibration plus small tie-breakers.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from langchain_lifecycle_memory.read import episodes
from langchain_lifecycle_memory.read.fusion import (
    CHANNELS,
    Decision,
    RetrievalCandidate,
    RetrievalExplanation,
    calibrate_array,
    fuse_calibrated_array,
    lifecycle_decision,
)
from langchain_lifecycle_memory.read.people import query_entities, relatives_by_meaning
from langchain_lifecycle_memory.read.routing import (
    AttributeRouter,
    asks_for_the_user,
    is_collective,
    is_lookup,
    is_personal,
    mentioned_attributes,
    said_as_a_noun,
    speaks_of_the_user,
    value_in,
)
from langchain_lifecycle_memory.read.snapshot import OPEN, Snapshot, micros
from langchain_lifecycle_memory.read.vectors import TextVectors, unit
from langchain_lifecycle_memory.schema import MemoryStatus, is_self_entity, normalize_value
from langchain_lifecycle_memory.vocabulary import weekdays

__all__ = ["Query", "RetrievalOptions", "kept_if_live", "score"]

SHARED_WORDS = 2
"""Words of the query (``LexicalIndex.shared_words``) a statement must hold for its word match to count whatever
its cosine: one shared word may be a homonym ("apple pie" and an Apple laptop), two are the same topic ("Where do I
bring my dog for a trim?" and "brings the dog to Snip Street every six weeks", cosine 0.16)."""


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

    def filters(self, **changes: Any) -> dict[str, Any]:
        """The lifecycle filters as keyword arguments (``statuses`` ... ``include_expired``), with ``changes``."""
        keys = ("statuses", "kinds", "as_of", "now", "include_expired")
        return {**{k: getattr(self, k) for k in keys}, **changes}


@dataclass
class Query:
    """The query as the channels see it: texts (with paraphrases), their vectors and centring offsets."""

    text: str
    texts: list[str]
    vectors: list[Any]
    offsets: list[float]


def _dense(cfg: Any, q: Query, snap: Snapshot, eligible: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best cosine per record over the query vectors (centred), and which records the dense channel ranks."""
    cosine = np.full(len(snap), -1.0)
    if len(snap):
        for vector, offset in zip(q.vectors, q.offsets, strict=True):
            cosine = np.maximum(cosine, (snap.vectors @ unit(vector)).astype(np.float64) - offset)
    in_dense = np.zeros(len(snap), dtype=bool)
    pool = np.flatnonzero(eligible)
    top = pool[np.argsort(-cosine[pool], kind="stable")[: cfg.dense_k]]
    in_dense[top] = True
    return cosine, in_dense


def _cues(emb: Any, q: Query, snap: Snapshot, eligible: np.ndarray) -> dict[int, float]:
    """Best cue cosine (centred) per record that has write-time cues."""
    wanted = {p: c for p, c in snap.cues.items() if eligible[p]}
    if not wanted:
        return {}
    matrix = TextVectors.of(emb).matrix([c for cues in wanted.values() for c in cues])
    starts = np.cumsum([0, *(len(c) for c in wanted.values())])[:-1]
    best = np.full(len(wanted), -1.0)
    for vector, offset in zip(q.vectors, q.offsets, strict=True):
        best = np.maximum(best, np.maximum.reduceat(matrix @ unit(vector), starts).astype(np.float64) - offset)
    return dict(zip(wanted, best.tolist()))


def _slot(
    cfg: Any, q: Query, snap: Snapshot, router: AttributeRouter
) -> tuple[np.ndarray, set[str], bool, float, np.ndarray]:
    """Per-attribute slot score (last cell: no attribute), the people the query is about, and its damping."""
    cal, names = cfg.calibration, snap.attributes
    route = np.full(len(names), -1.0)
    for vector, offset in zip(q.vectors, q.offsets, strict=True):
        route = np.maximum(route, router.score_array(vector, names) - offset)
    targets = set().union(*(query_entities(t, snap.entity_alias) for t in q.texts))
    targets = targets or relatives_by_meaning(q.texts, snap.entity_alias, router.embeddings)
    sure = bool(names) and float(route.max()) >= cal.route_ceiling  # a topic of the user's, asked for outright
    personal = bool(targets) or any(
        is_personal(t) or snap.index.mentions_known_name(t) or (sure and is_lookup(t)) for t in q.texts
    )
    damp = 1.0 if personal else cfg.impersonal_factor
    attr_slot = np.zeros(len(names) + 1)
    if names:  # a topic far behind the query's best one is a look-alike
        near = route >= float(route.max()) - cfg.route_margin
        attr_slot[:-1] = np.where(near, calibrate_array(route, cal.route_floor, cal.route_ceiling) * damp, 0.0)
        named = [names.index(a) for a in mentioned_attributes(q.texts, names, router.specs)]
        attr_slot[named] = np.maximum(attr_slot[named], cal.attribute_mention)
    return attr_slot, targets, personal, damp, route


def _channels(
    cal: Any, parts: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float], episode: np.ndarray | None
) -> dict[str, np.ndarray]:
    """Calibrated channels from ``(cosine, in_dense, coverage, slot, damp)``; episodes join dense as a noisy-OR."""
    cosine, in_dense, coverage, slot, damp = parts
    dense = np.where(in_dense, calibrate_array(np.maximum(cosine, 0.0), cal.dense_floor, cal.dense_ceiling), 0.0)
    if episode is not None:
        dense = 1.0 - (1.0 - dense) * (1.0 - episode)
    lexical = calibrate_array(coverage, cal.lexical_floor, cal.lexical_ceiling) * damp
    return {"dense": dense, "lexical": lexical, "slot": slot}


def _rrf(channels: dict[str, np.ndarray], weights: dict[str, float], pool: np.ndarray) -> np.ndarray:
    """Weighted reciprocal rank fusion over the records of ``pool`` (0 elsewhere)."""
    out = np.zeros(len(next(iter(channels.values()))))
    for name in CHANNELS:
        scores = channels[name]
        firing = pool[scores[pool] > 0]
        order = firing[np.argsort(-scores[firing], kind="stable")]
        out[order] += weights[name] / (60 + np.arange(1, len(order) + 1))
    return out


def score(
    cfg: Any,
    q: Query,
    snap: Snapshot,
    opts: RetrievalOptions,
    *,
    full: bool,
    router: AttributeRouter,
    episode_encoder: Any = None,
) -> RetrievalExplanation:
    """Score every record with ``cfg``'s (a ``LifecycleRetriever``) settings; candidates for the ``k`` best or all."""
    n, cal, weights = len(snap), cfg.calibration, cfg.weights.as_dict()
    eligible = snap.eligible(**opts.filters())
    cosine, in_dense = _dense(cfg, q, snap, eligible)
    bm25, coverage = np.zeros(n), np.zeros(n)
    for text in q.texts:
        raw, cov = snap.index.scores(text)
        bm25, coverage = np.maximum(bm25, raw), np.maximum(coverage, cov)
    attr_slot, targets, personal, damp, route = _slot(cfg, q, snap, router)
    topic = attr_slot[snap.attribute_code]  # code -1 reads the last cell: 0
    cue_scores = _cues(router.embeddings, q, snap, eligible)
    if cue_scores:
        cue = np.zeros(n)
        cue[list(cue_scores)] = calibrate_array(np.array(list(cue_scores.values())), cal.route_floor, cal.route_ceiling)
        topic = np.maximum(topic, cue * damp)
    agree = calibrate_array(cosine, cal.agreement_floor, cal.agreement_ceiling)
    words = np.max([snap.index.shared_words(_topic(t, snap, targets)) for t in q.texts], axis=0) if n else 0
    agree = np.where(words >= SHARED_WORDS, 1.0, agree)
    support = np.where(snap.attribute_code >= 0, np.maximum(agree, np.minimum(1.0, topic / cal.attribute_mention)), 1.0)
    slot = np.where(snap.value_mentions(q.texts), np.maximum(topic, cal.value_mention * support), topic)
    episode = episodes.episode_scores(
        episode_encoder, snap, eligible, q.text, top_k=cfg.dense_k, limit=cfg.episode_embeddings_limit,
        calibration=cfg.episode_calibration, rank_calibration=cfg.episode_rank_calibration,
    )  # fmt: skip
    parts = (cosine, in_dense, coverage * support, slot, damp)
    channels = _channels(cal, parts, None if episode is None else episode[0])
    about = _naming(snap, targets) if targets else ~snap.entity_mask(snap.other_entities)
    factor = np.where(about, 1.0, cfg.other_entity_factor)
    fused = fuse_calibrated_array(channels, weights) * factor
    nouns = _nouns(snap, q.text, bm25 > 0)  # "how much nutmeg goes in eggnog?" asks of no cat called Nutmeg
    by_noun = bool(nouns) and bool((fused[nouns] >= opts.min_score).any())  # and would have found it
    fused[nouns] = 0.0
    matched = fused >= opts.min_score
    kept = (eligible & matched) | _successors(snap, eligible, ~eligible & matched)
    if cfg.set_members and kept.any():
        kept = kept | _members(snap, eligible, kept)
    # a question found only by the thing a name of theirs also names ("is saffron worth it?") is not for the user
    for_user = bool(targets) or (not by_noun and any(asks_for_the_user(t) for t in q.texts))
    household = about
    if any(map(is_collective, q.texts)):  # "Should we take the kids…", "a party for my kids": the family's facts count
        household = np.ones(len(snap), dtype=bool)
    profile = _profile(cfg, snap, opts, eligible, household, fused) if for_user and not kept.any() else None
    if profile is not None:
        kept = profile
    if for_user and cfg.situation:
        kept = kept | _situation(cfg, snap, eligible, about)
    asked = sum(1 << d for t in q.texts for d in weekdays(t, every=False))
    if asked and (for_user or any(map(snap.index.mentions_known_name, q.texts))):  # or "Wattle has a lesson Tuesday"
        kept = kept | (eligible & about & (snap.days & asked > 0))  # "free on Sunday?": what recurs on Sundays
    if targets and cfg.news and kept.any():
        kept = kept | _news(cfg, snap, eligible & about, kept)
    rrf = _rrf(channels, weights, np.flatnonzero(eligible)) * factor
    keys = _sort_keys(cfg, q, snap, opts, kept, fused, rrf, parts, episode, factor)
    ranked = np.flatnonzero(kept)[np.argsort(-keys[kept], kind="stable")]
    if not full and cfg.reranker is None:
        ranked = ranked[: opts.k]
    rank_of = {int(p): r for r, p in enumerate(ranked)}
    expired = int(np.count_nonzero(kept_if_live(snap, opts, fused, eligible)))
    context = (snap, opts, channels, fused, rrf, factor, rank_of, eligible, kept, profile is not None)
    if full:
        raw = {"cosine": cosine, "bm25": bm25, "coverage": coverage, "route": route, "keys": keys}
        candidates = [_candidate(p, context, raw, cue_scores) for p in range(n)]
    else:
        candidates = [_candidate(int(p), context) for p in ranked]
    routes = dict(zip(snap.attributes, route.tolist()))
    return RetrievalExplanation(
        query=q.text, queries=q.texts, namespace=opts.namespace, fusion=cfg.fusion, min_score=opts.min_score,
        k=opts.k, as_of=opts.as_of, now=opts.now, routes=routes, target_entities=sorted(targets),
        personal=personal, candidates=candidates, expired_matches=expired,
    )  # fmt: skip


def _topic(query: str, snap: Snapshot, targets: set[str]) -> str:
    """``query`` without the words that name whom it asks about ("my sister", "Ilse").

    Every statement about them holds those words, so they say nothing of its topic (``SHARED_WORDS``).
    """
    named = {w for e in targets for group in snap.entity_alias.get(e, ((), ())) for w in group if w}
    for word in sorted(named, key=len, reverse=True):
        query = re.sub(rf"\b{re.escape(word)}s?\b" if word.isascii() else re.escape(word), " ", query, flags=re.I)
    return query


def _nouns(snap: Snapshot, query: str, found: np.ndarray) -> list[int]:
    """The records among ``found`` whose name the query says only as a common noun (``said_as_a_noun``)."""
    if speaks_of_the_user(query):  # "can I give saffron some cheese?": the user's own may be meant
        return []
    rows = snap.rows
    return [p for p in np.flatnonzero(found) if rows[p].value and said_as_a_noun(rows[p].value, rows[p].content, query)]


def _successors(snap: Snapshot, eligible: np.ndarray, matched: np.ndarray) -> np.ndarray:
    """The live records of the slots whose dead versions ``matched``, and the records that replaced them.

    "What's on the Volvo?" finds "Nokian tyres on the Volvo", archived: "Michelin X-Ice", which replaced it in
    that slot in other words, is the answer now; so is a statement that replaced it without a slot ("she's doing
    strict keto now" after "Dani is vegan").
    """
    filed = snap.attribute_code >= 0
    slot = snap.entity_code * (len(snap.attributes) + 1) + snap.attribute_code  # one number per (entity, attribute)
    found = eligible & filed & np.isin(slot, slot[matched & filed])
    for p in np.flatnonzero(matched):
        for _ in range(8):  # along a chain of replacements to the live one
            p = snap.replaced_by[p]
            if p < 0:
                break
            if eligible[p]:
                found[p] = True
                break
    return found


def _members(snap: Snapshot, eligible: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """The eligible members of every set-valued slot a kept record belongs to: a set is answered whole."""
    sets = snap.set_code[kept]
    return eligible & np.isin(snap.set_code, sets[sets >= 0])


def _naming(snap: Snapshot, targets: set[str]) -> np.ndarray:
    """Records about the people a query names: filed under them, or the user's and naming them.

    "Tomasz sold the Subaru" said by the user is about Tomasz; someone else's record stays theirs ("Bob:
    Alice, do you still hike?" is Bob's); a name two people share names neither.
    """
    about = snap.entity_mask(targets)
    users = snap.entity_mask(e for e in snap.entities if is_self_entity(e))
    shared = Counter(n for names, _ in snap.entity_alias.values() for n in names)
    for name in {n for e in targets for n in snap.entity_alias.get(e, ((), ()))[0] if shared[n] == 1}:
        for p in np.flatnonzero((snap.index.scores(name)[0] > 0) & users):  # BM25 finds them; the whole name decides
            about[p] |= value_in(name, normalize_value(snap.rows[p].content))
    return about


PROFILE = "profile"
"""The reason of a record kept as general context: nothing answered a request about the user."""
SITUATION = "situation"
"""The reason of a record kept below the threshold as part of the user's passing situation (``_situation``)."""
_STANDING = ("preference", "profile", "fact", "event")
"""Kinds that join the profile fallback while live: a plan still ahead ("retires on June 30") bears on a request
about the months around it as a lasting fact does; a conversation's episode (a raw turn, filed under no slot) and
a sensitive record never come unasked. An episode a caller filed under a slot ("diet_challenge = sugar-free
February", for 28 days) is a passing situation, and joins while it lasts."""


def _profile(
    cfg: Any, snap: Snapshot, opts: RetrievalOptions, eligible: np.ndarray, about: np.ndarray, fused: np.ndarray
) -> np.ndarray | None:
    """The user's live facts and plans as general context when a request for them matched nothing (nor a dead memory).

    A near miss of any kind joins them, first: an event's date is what "我的大喜日子是哪天" asks for.
    """
    if not cfg.profile_fallback:
        return None
    later = snap.valid_from > micros(opts.as_of) if opts.as_of is not None else np.zeros(len(snap), dtype=bool)
    if (~eligible & ~later & (fused >= opts.min_score)).any():  # a replaced answer, not one still to come
        return None
    near = fused >= opts.min_score / 2  # a near miss of any kind ("婚礼日期是11月8日" for "大喜日子是哪天") leads
    filed = snap.kind_mask(("episode",)) & (snap.attribute_code >= 0)  # a situation, not a raw turn
    pool = np.flatnonzero(eligible & (snap.kind_mask(_STANDING) | near | filed) & about)
    if not len(pool):
        return None
    order = np.lexsort((-snap.fresh_at[pool], -snap.confidence[pool], -fused[pool]))
    chosen = np.zeros(len(snap), dtype=bool)
    chosen[pool[order[: cfg.profile_fallback]]] = True
    return chosen


_SHORT = 31 * 86_400 * 1_000_000
"""A deadline at most this far (microseconds) after a fact became true marks it as a passing situation."""


def _situation(cfg: Any, snap: Snapshot, eligible: np.ndarray, about: np.ndarray) -> np.ndarray:
    """The user's passing situation: live statements with a near deadline ("this week I'm on crutches").

    Filed under a slot or kept as said: what the user said holds for now matters whether or not a rule read it.
    """
    passing = (snap.expires_at < OPEN) & (snap.expires_at - snap.valid_from <= _SHORT)
    passing &= ~snap.kind_mask(("episode", "sensitive"))
    pool = np.flatnonzero(eligible & about & passing)
    chosen = np.zeros(len(snap), dtype=bool)
    chosen[pool[np.argsort(-snap.fresh_at[pool], kind="stable")[: cfg.situation]]] = True
    return chosen


def _news(cfg: Any, snap: Snapshot, theirs: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """Unfiled records about the people asked about, newer than all that was kept about them.

    "Tomasz sold the Subaru, he got a Tesla" said in passing, and never filed as his car, still reaches
    "What does my brother drive now?" next to the older answer, newest first.
    """
    since = snap.valid_from[kept & theirs].max(initial=np.iinfo(np.int64).min)
    pool = np.flatnonzero(
        theirs & (snap.attribute_code < 0) & (snap.valid_from > since) & ~snap.kind_mask(["sensitive"])
    )
    chosen = np.zeros(len(snap), dtype=bool)
    chosen[pool[np.argsort(-snap.fresh_at[pool], kind="stable")[: cfg.news]]] = True
    return chosen


def kept_if_live(snap: Snapshot, opts: RetrievalOptions, fused: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """Records that would have been kept but for their deadline having passed (the search says so)."""
    if opts.include_expired or opts.as_of is not None:
        return np.zeros(len(snap), dtype=bool)
    live = snap.eligible(**opts.filters(as_of=None, include_expired=True))
    return live & ~eligible & snap.expired(opts.now) & (fused >= opts.min_score)


def _sort_keys(
    cfg: Any,
    q: Query,
    snap: Snapshot,
    opts: RetrievalOptions,
    kept: np.ndarray,
    fused: np.ndarray,
    rrf: np.ndarray,
    parts: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float],
    episode: tuple[np.ndarray, np.ndarray] | None,
    factor: np.ndarray,
) -> np.ndarray:
    """The order of kept records: an open-ceiling calibration of the same evidence, plus tie-breakers."""
    cosine, _, coverage, _, _ = parts
    if cfg.fusion == "rrf":
        base = rrf
    elif cfg.rank_calibration is not None and cfg.rank_calibration != cfg.calibration:
        ordered = _channels(cfg.rank_calibration, parts, None if episode is None else episode[1])
        base = fuse_calibrated_array(ordered, cfg.weights.as_dict()) * factor
    else:
        base = fused
    keys = base + cfg.recency_weight * snap.recency(opts.now, cfg.recency_half_life_days)
    keys = keys + cfg.confidence_weight * snap.confidence + 1e-3 * (np.maximum(cosine, 0.0) + coverage)
    if cfg.episode_feedback and kept.any():
        kept_positions = np.flatnonzero(kept)
        bonus = episodes.feedback(snap, kept_positions, base[kept_positions], q.text)
        if bonus is not None:
            keys[kept_positions] += bonus * factor[kept_positions]
    return keys


def _candidate(
    p: int, context: tuple[Any, ...], raw: dict[str, np.ndarray] | None = None, cues: dict[int, float] | None = None
) -> RetrievalCandidate:
    """The candidate at position ``p`` with its verdict; with ``raw`` (``explain``), its raw evidence too."""
    snap, opts, channels, fused, rrf, factor, rank_of, eligible, kept, profile = context
    record = snap.record(p)
    evidence: dict[str, float] = {}
    if raw is not None:
        evidence = {k: float(raw[k][p]) for k in ("coverage", "bm25", "cosine")}
        if (j := int(snap.attribute_code[p])) >= 0:
            evidence["route"] = float(raw["route"][j])
        if cues and p in cues:
            evidence["cue"] = cues[p]
    decision: Decision = "kept"
    reason = PROFILE if profile else SITUATION if kept[p] and fused[p] < opts.min_score else ""
    if not eligible[p]:
        decision, reason = lifecycle_decision(record, **opts.filters()) or ("below_threshold", "not eligible")
    elif not kept[p]:
        decision, reason = "below_threshold", f"fused {fused[p]:.3f} < min_score {opts.min_score:.3f}"
        if factor[p] < 1.0:
            reason += f" (about {record.entity or 'the user'}, not the query's subject)"
    elif raw is not None:
        evidence["sort_key"] = float(raw["keys"][p])
    return RetrievalCandidate(
        record=record, decision=decision, reason=reason, raw=evidence,
        channels={c: float(channels[c][p]) for c in CHANNELS},
        entity_factor=float(factor[p]), fused=float(fused[p]), rrf=float(rrf[p]), rank=rank_of.get(p),
    )  # fmt: skip
