"""Bilingual tokenisation and a calibrated, incrementally updated BM25 index over memory records.

Chinese has no spaces, so CJK runs become character unigrams plus bigrams (a bigram
index needs no dictionary and still rewards exact names such as "旺财"); latin text
becomes lowercased words with light suffix stripping and English stopwords removed.

BM25 scores grow with corpus size and query length, so a raw score cannot be
thresholded. :meth:`LexicalIndex.scores` therefore also returns a *coverage*: the
record's BM25 score divided by what a record containing every query token once, at
average length, would score. Query tokens the namespace has never seen count with
the highest possible IDF, so a long off-topic query that shares one common word with
a memory stays near 0 while a query whose rare words all occur in a record nears 1.
"""

from __future__ import annotations

import collections
import copy
import itertools
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from langchain_lifecycle_memory.read._tokens import (  # noqa: F401  (re-exported: importers of the tokenizer)
    BULK,
    _Analyses,
    _bulk_terms,
    _capitalised,
    _stem,
    normalize_text,
    tokenize,
    word_tokens,
)

__all__ = ["LexicalIndex", "tokenize", "word_tokens"]

_KEEP_TERM_SCORES = 2000
"""Indexes of at least this many texts keep each sealed term's per-posting scores once computed."""
_DOC_COUNTS = 16_384
"""Documents whose term counts an index keeps for ``raw_scores_at`` (then it starts again)."""
_UNSEEN = object()
_LOOKUP_COST = 40
"""``raw_scores_at`` reads the few positions' own documents when positions x terms x this is below
the postings a scan reads (plus 1/32 of the texts: a scan fills a score per text). Measured in a
warm search at 50k texts: ~0.2-0.3 us per (position, term) read, ~5 ns per posting scanned."""


class LexicalIndex:
    """A BM25 index over a list of texts with calibrated (coverage) scores, updated in place of a rebuild.

    Scores are Lucene BM25 (as ``bm25s`` ``method="lucene"``), computed at query time from
    postings, so they always use the live corpus statistics (document count, document
    frequencies, average length): an updated index scores exactly like one built from
    scratch over the same texts.

    *Segments*: documents live in slots. Postings of the slots present at the last
    *seal* are numpy arrays (CSR by term); slots added since sit in a small *fresh*
    segment of Python lists; a removed document is a tombstone. :meth:`updated` returns
    a new index that shares the sealed arrays (snapshots in use stay valid) and costs
    time in the number of changed documents, plus one pass over the position array.
    When the fresh segment or the tombstones grow past ``fresh_limit`` /
    ``tombstone_limit`` of the index, it is sealed again from the live documents.

    Example:
        >>> index = LexicalIndex(["用户养了一条叫旺财的狗", "The user drives a Tesla Model 3."])
        >>> raw, coverage = index.scores("我家狗叫什么名字？")
        >>> int(np.argmax(raw))
        0
        >>> index = index.updated(np.array([1]), ["用户的猫叫咪咪"])  # drop the dog, add a cat
        >>> raw, _ = index.scores("猫叫什么？")
        >>> raw.shape, int(np.argmax(raw))
        ((2,), 1)
    """

    fresh_limit = 0.1
    """Seal again when the fresh segment holds more than this share of the documents (min 256)."""
    tombstone_limit = 0.25
    """Seal again when more than this share of the slots are removed documents."""

    def __init__(
        self,
        texts: Sequence[str],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        cache: dict[str, tuple[list[str], list[str]]] | None = None,
    ) -> None:
        """Index ``texts``.

        ``cache`` (text -> tokens, names) is read and filled, so that a rebuild after a
        few writes only analyses the new texts.
        """
        self.k1, self.b = k1, b
        self._cache = {} if cache is None else cache
        bulk = _bulk_terms(texts) if len(texts) >= BULK and len(self._cache) < len(texts) // 2 else None
        if bulk is None:
            self._seal([self._analyse(t) for t in texts])
        else:  # the same index, analysed all at once; each text's analysis is made when first read
            self._seal_terms(_Analyses(list(texts), self._analyse), *bulk)

    # ------------------------------------------------------------------ persisting
    def state(self) -> dict[str, np.ndarray | list[str] | float]:
        """The sealed index as arrays and string lists (``from_state`` inverts it).

        The documents' analyses are not part of it: they are recomputed from the texts,
        lazily, only for documents an update removes or a re-seal reads.
        """
        if self._fresh or not self._alive.all() or not np.array_equal(self._order, np.arange(self.size)):
            msg = "Only a freshly sealed index can be persisted."
            raise ValueError(msg)
        return {
            "k1": self.k1,
            "b": self.b,
            "vocab": list(self._vocab),
            "names": [w for w, n in self._names.items() for _ in range(n)],
            "dl": self._dl,
            "post_slots": self._post_slots,
            "post_tf": self._post_tf,
            "indptr": self._indptr,
            "df": self._df,
        }

    @classmethod
    def from_state(cls, state: dict[str, Any], texts: Sequence[str]) -> LexicalIndex:
        """The index ``state`` describes, over ``texts`` (the texts it was built from)."""
        new = cls.__new__(cls)
        new.k1, new.b = float(state["k1"]), float(state["b"])
        new._cache = {}
        new.size = len(texts)
        if not (len(state["dl"]) == new.size and len(state["indptr"]) == len(state["vocab"]) + 1):
            msg = "The index state does not match its texts."
            raise ValueError(msg)
        new._docs = _Analyses(list(texts), new._analyse)
        new._alive = np.ones(new.size, dtype=bool)
        new._order = np.arange(new.size, dtype=np.int64)
        new._identity = True
        new._dl = np.asarray(state["dl"], dtype=np.float64)
        new._total = float(new._dl.sum())
        new._vocab = {t: i for i, t in enumerate(state["vocab"])}
        new._post_slots = np.asarray(state["post_slots"], dtype=np.int64)
        new._post_tf = np.asarray(state["post_tf"], dtype=np.float64)
        new._indptr = np.asarray(state["indptr"], dtype=np.int64)
        new._df = np.asarray(state["df"], dtype=np.int64)
        new._sealed = new.size
        new._fresh = {}
        new._names = collections.Counter(state["names"])
        return new

    # ------------------------------------------------------------------ building
    def _analyse(self, text: str) -> tuple[list[str], list[str]]:
        hit = self._cache.get(text)
        if hit is None:
            hit = self._cache[text] = (tokenize(text), [w.casefold() for w in _capitalised(text)])
        return hit

    def _seal(self, analysed: list[tuple[list[str], list[str]]]) -> None:
        """(Re)build every structure from ``analysed`` documents, one slot per position."""
        flat = list(itertools.chain.from_iterable(tokens for tokens, _ in analysed))
        # Terms numbered by first appearance, all in C: a dict keeps insertion order.
        vocab = list(dict.fromkeys(flat))
        ids = np.fromiter(map(dict(zip(vocab, itertools.count())).__getitem__, flat), dtype=np.int64, count=len(flat))
        lengths = np.array([len(tokens) for tokens, _ in analysed], dtype=np.int64)
        names = collections.Counter(w for _, names in analysed for w in names)
        self._seal_terms(analysed, vocab, ids, lengths, names)

    def _seal_terms(
        self,
        docs: Any,
        vocab: list[str],
        ids: np.ndarray,
        lengths: np.ndarray,
        names: collections.Counter[str],
    ) -> None:
        """``_seal`` from the documents' terms: ``ids`` (into ``vocab``) document by document."""
        self.size = len(docs)
        self._docs = docs
        self._alive = np.ones(self.size, dtype=bool)
        self._order = np.arange(self.size, dtype=np.int64)
        self._identity = True
        self._dl = np.maximum(lengths, 1).astype(np.float64)
        self._total = float(self._dl.sum())
        self._vocab: dict[str, int] = dict(zip(vocab, itertools.count()))
        slots = np.repeat(np.arange(self.size, dtype=np.int64), lengths)
        pairs, tf = np.unique(ids * max(1, self.size) + slots, return_counts=True)
        terms = pairs // max(1, self.size)
        self._post_slots = pairs % max(1, self.size)
        self._post_tf = tf.astype(np.float64)
        self._indptr = np.searchsorted(terms, np.arange(len(self._vocab) + 1))
        self._df = np.diff(self._indptr).astype(np.int64)
        self._sealed = self.size
        self.__dict__.pop("_term_scores", None)
        self.__dict__.pop("_doc_counts", None)
        self.__dict__.pop("_idf_cache", None)
        self.__dict__.pop("_token_infos", None)
        self.__dict__.pop("_posting_counts", None)
        self._fresh: dict[int, list[tuple[int, int]]] = {}
        self._names: collections.Counter[str] = names

    def updated(self, kept: np.ndarray, added: Sequence[str], order: np.ndarray | None = None) -> LexicalIndex:
        """A new index: the documents at positions ``kept``, then ``added``, permuted by ``order``.

        ``order`` (optional) lists, for each new position, its index in ``kept + added``.
        This index is left untouched.
        """
        new = copy.copy(self)
        new.__dict__.pop("_norm_cache", None)
        new.__dict__.pop("_term_scores", None)
        new.__dict__.pop("_doc_counts", None)
        new.__dict__.pop("_idf_cache", None)
        new.__dict__.pop("_token_infos", None)
        new.__dict__.pop("_posting_counts", None)
        kept = np.asarray(kept, dtype=np.int64)
        removed = np.ones(self.size, dtype=bool)
        removed[kept] = False
        gone = self._order[removed]
        new_docs = [self._analyse(t) for t in added]
        live_slots = int(self._alive.sum()) - len(gone) + len(new_docs)
        fresh_total = len(self._docs) - self._sealed + len(new_docs)
        tombstones = len(self._docs) - int(self._alive.sum()) + len(gone)
        if fresh_total > max(256, self.fresh_limit * live_slots) or tombstones > self.tombstone_limit * max(
            1, len(self._docs) + len(new_docs)
        ):
            docs = [self._docs[s] for s in self._order[kept]] + new_docs
            if order is not None:
                docs = [docs[i] for i in order]
            new._seal(docs)
            return new
        new._identity = False
        new._alive = self._alive.copy()
        new._alive[gone] = False
        new._df = self._df.copy()
        new._names = self._names.copy()
        for slot in gone.tolist():
            tokens, names = self._docs[slot]
            for t in set(tokens):
                new._df[self._vocab[t]] -= 1
            new._names.subtract(names)
            new._total -= self._dl[slot]
        first = len(self._docs)
        new._docs = self._docs + new_docs
        new._fresh = {term: list(rows) for term, rows in self._fresh.items()}
        grown = [self._vocab.setdefault(t, len(self._vocab)) for tokens, _ in new_docs for t in tokens]
        if grown and max(grown) >= len(new._df):
            new._df = np.concatenate([new._df, np.zeros(max(grown) + 1 - len(new._df), dtype=np.int64)])
        for slot, (tokens, names) in enumerate(new_docs, start=first):
            for t, tf in collections.Counter(tokens).items():
                term = self._vocab[t]
                new._df[term] += 1
                new._fresh.setdefault(term, []).append((slot, tf))
            new._names.update(names)
        dl = np.array([max(1, len(tokens)) for tokens, _ in new_docs], dtype=np.float64)
        new._dl = np.concatenate([self._dl, dl])
        new._alive = np.concatenate([new._alive, np.ones(len(new_docs), dtype=bool)])
        new._total += float(dl.sum())
        positions = np.concatenate([self._order[kept], np.arange(first, first + len(new_docs), dtype=np.int64)])
        new._order = positions[np.asarray(order, dtype=np.int64)] if order is not None else positions
        new.size = len(new._order)
        return new

    @property
    def _norm(self) -> np.ndarray:
        """BM25 length normalisation per slot (computed once per index: indexes are never changed)."""
        norm = self.__dict__.get("_norm_cache")
        if norm is None:
            norm = self.k1 * ((1 - self.b) + self.b * self._dl / (self._total / self.size))
            self.__dict__["_norm_cache"] = norm
        return norm

    # ------------------------------------------------------------------ queries
    def mentions_known_name(self, query: str) -> bool:
        """Whether the query has a capitalised word that is capitalised in the records too.

        "When did Caroline move?" is about someone the memories know; "Write a haiku"
        is not, although "writes" occurs in a memory.
        """
        return any(self._names.get(w.casefold(), 0) > 0 for w in _capitalised(query))

    def _doc_freq(self, token: str) -> int:
        term = self._vocab.get(token)
        return int(self._df[term]) if term is not None and term < len(self._df) else 0

    def doc_freq(self, token: str) -> int:
        """How many indexed texts hold ``token`` (an index term, see ``tokenize``)."""
        return self._doc_freq(token)

    def _token_info(self, token: str) -> tuple[int | None, float]:
        """``(term id, or None where no indexed text holds it; idf)``, kept per index (it never changes)."""
        seen = self.__dict__.setdefault("_token_infos", {})
        info = seen.get(token)
        if info is None:
            if len(seen) > _DOC_COUNTS:
                seen.clear()
            info = seen[token] = (self._vocab[token] if self._doc_freq(token) > 0 else None, self.idf(token))
        return info

    def idf(self, token: str) -> float:
        """Lucene IDF; a token the index has never seen gets the highest possible value."""
        df = self._doc_freq(token)
        return math.log(1.0 + (self.size - df + 0.5) / (df + 0.5))

    def shared_idfs(self, tokens: Iterable[str]) -> dict[str, float]:
        """``idf`` of each of ``tokens`` that more than one indexed text holds."""
        known = self.__dict__.setdefault("_idf_cache", {})  # token -> idf or None (an index never changes)
        if len(known) > _DOC_COUNTS:
            known.clear()
        out: dict[str, float] = {}
        for token in tokens:
            idf = known.get(token, _UNSEEN)
            if idf is _UNSEEN:
                idf = known[token] = self._shared_idf(token)
            if idf is not None:
                out[token] = idf
        return out

    def _shared_idf(self, token: str) -> float | None:
        term = self._vocab.get(token)
        if term is None or term >= len(self._df) or (df := int(self._df[term])) <= 1:
            return None
        return math.log(1.0 + (self.size - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """Raw BM25 scores and coverages in [0, 1], one per indexed text."""
        return self.coverage(*self.raw_scores(query))

    @staticmethod
    def coverage(raw: np.ndarray, ideal: float) -> tuple[np.ndarray, np.ndarray]:
        """``raw`` and its coverages for a query whose ideal score is ``ideal`` (see ``raw_scores``)."""
        coverage = np.minimum(np.maximum(0.0, raw / ideal), 1.0) if ideal > 0 else np.zeros_like(raw)  # np.clip
        return raw, coverage

    def scores_at(self, query: str, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``scores(query)`` at ``positions`` only (the same floats)."""
        return self.coverage(*self.raw_scores_at(query, positions))

    def raw_scores(self, query: str) -> tuple[np.ndarray, float]:
        """Raw BM25 scores, one per indexed text, and the query's ideal score (coverage 1; 0: no known token)."""
        return self._raw_scores(query, None)

    def raw_scores_at(self, query: str, positions: np.ndarray) -> tuple[np.ndarray, float]:
        """``raw_scores(query)`` at ``positions`` only (the same floats).

        A few positions look their slots up in each term's postings; many take the scan
        over the postings that ``raw_scores`` makes.
        """
        return self._raw_scores(query, np.asarray(positions, dtype=np.int64))

    def _raw_scores(self, query: str, positions: np.ndarray | None) -> tuple[np.ndarray, float]:
        q_tokens = list(dict.fromkeys(tokenize(query)))
        infos = [self._token_info(t) for t in q_tokens]  # (term or None where no text holds it, idf)
        known = [t for t, (term, _) in zip(q_tokens, infos) if term is not None]
        if not known:
            return np.zeros(self.size if positions is None else len(positions), dtype=np.float64), 0.0
        terms = [info for info in infos if info[0] is not None]
        ideal = sum(idf for _, idf in infos) / (1.0 + self.k1)
        if positions is not None:
            scanned = self._scanned([term for term, _ in terms]) + self.size // 32
            if len(positions) * len(terms) * _LOOKUP_COST < scanned:
                return self._looked_up(known, [idf for _, idf in terms], positions), ideal
        by_slot = np.zeros(len(self._docs), dtype=np.float64)
        norm = self._norm
        # A big index keeps each sealed term's score per posting once computed: they only
        # change with the index (an update makes a new one), and a scan is then one add.
        kept = self.__dict__.setdefault("_term_scores", {}) if self.size >= _KEEP_TERM_SCORES else None
        for term, idf in terms:
            if term + 1 < len(self._indptr):
                lo, hi = self._indptr[term], self._indptr[term + 1]
                slots = self._post_slots[lo:hi]
                values = kept.get(term) if kept is not None else None
                if values is None:
                    tf = self._post_tf[lo:hi]
                    values = idf * tf / (norm[slots] + tf)
                    if kept is not None:
                        kept[term] = values
                by_slot[slots] += values
            for slot, tf in self._fresh.get(term, ()):
                by_slot[slot] += idf * tf / (norm[slot] + tf)
        if self._identity:  # freshly sealed: slot i is position i, every slot alive
            raw = by_slot
        else:
            by_slot[~self._alive] = 0.0
            raw = by_slot[self._order]
        return (raw if positions is None else raw[positions]), ideal

    def _scanned(self, terms: list[int]) -> int:
        """How many postings a scan of ``terms`` reads (kept per term: an index never changes)."""
        counts = self.__dict__.setdefault("_posting_counts", {})
        if len(counts) > _DOC_COUNTS:
            counts.clear()
        total = 0
        for term in terms:
            count = counts.get(term)
            if count is None:
                count = counts[term] = self._postings(term)
            total += count
        return total

    def _postings(self, term: int) -> int:
        sealed = int(self._indptr[term + 1] - self._indptr[term]) if term + 1 < len(self._indptr) else 0
        return sealed + len(self._fresh.get(term, ()))

    def _looked_up(self, known: list[str], idfs: list[float], positions: np.ndarray) -> np.ndarray:
        """Raw scores at a few ``positions``, from their own documents' terms (no postings read).

        The same floats as ``raw_scores``: per document, the terms' scores added in query order.
        """
        slots = positions if self._identity else self._order[positions]
        norm, counts = self._norm, self.__dict__.setdefault("_doc_counts", {})
        if len(counts) > _DOC_COUNTS:
            counts.clear()
        out = [0.0] * len(positions)
        slots = slots.tolist()
        lengths = norm[slots].tolist()
        terms = list(zip(known, idfs, strict=True))
        for j, slot in enumerate(slots):
            tf_of = counts.get(slot)
            if tf_of is None:  # a document's term counts, kept: the same ones are asked again
                tf_of = counts[slot] = collections.Counter(self._docs[slot][0])
            length, score = lengths[j], 0.0
            for token, idf in terms:  # added in query order
                if tf := tf_of.get(token):
                    score += idf * tf / (length + tf)
            out[j] = score
        return np.array(out, dtype=np.float64)
