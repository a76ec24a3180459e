"""Bilingual tokenisation (CJK unigrams + bigrams, stemmed latin words) and a calibrated BM25 index.

:meth:`LexicalIndex.scores` also returns a *coverage*: the score over that of a record holding every
query token once at average length (unseen tokens count with the highest IDF), so it can be thresholded.
The index applies a write in time proportional to the texts changed and scores exactly like a fresh
Lucene BM25 build (``bm25s`` ``method="lucene"``, which ``eval`` and the benchmarks use).
"""

from __future__ import annotations

import collections
import copy
import functools
import itertools
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["LexicalIndex", "capitalised", "normalize_text", "tokenize", "word_tokens"]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"  # kana, CJK, hangul
_RUN = re.compile(f"[{_CJK}]+|[a-z0-9]+")
_EN_STOPWORDS = frozenset(
    """
    a about above after again all am an and any are as at be been before being below
    between both but by can could did do does doing don down during each few for from
    further had has have having he her here hers herself him himself his how i if in
    into is it its itself just let me more most my myself no nor not now of off on once
    only or other our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves s t ll re ve d m o y
    user users
    """.split()
)
"""Function words, plus "user": every extracted statement says "The user ...", so it carries
no evidence about which memory a query wants."""
_ZH_STOP_UNIGRAMS = frozenset(
    "的了是我你他她它们吗呢吧啊呀哦在有和与及也都就这那个么什怎哪一把被给让很还又要会能可对为之而但或从向用户请帮"
)
_ZH_FUNCTION_CHARS = frozenset("的了吗呢吧啊呀哦么什怎哪是我你他她它们在")
"""A bigram touching one of these is grammar ("是什", "的狗"), not content."""
_ZH_STOP_BIGRAMS = frozenset("一个 一下 可以 帮忙 一般 没有 多少 如何 请问".split())
_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z0-9]+")


@functools.lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    """Light English suffix stripping: plural, -ing, -ed (no dictionary, no package)."""
    if word.isdigit() or len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix, keep in (("ing", 3), ("ed", 2)):
        if word.endswith(suffix) and len(word) - len(suffix) >= keep:
            word = word[: -len(suffix)]
            if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if word.endswith("e") and len(word) > 2:
        word = word[:-1]
    return word


def normalize_text(text: str) -> str:
    """NFKC (full/half width) and casefold, as slot values are compared."""
    return unicodedata.normalize("NFKC", text).casefold()


def word_tokens(text: str) -> list[str]:
    """Unstemmed latin words and whole CJK runs, in order (used for name matching)."""
    return _RUN.findall(normalize_text(text))


def tokenize(text: str) -> list[str]:
    """Index terms for BM25: stemmed latin words, CJK unigrams + bigrams.

    Example:
        >>> tokenize("我家狗叫旺财")
        ['家', '狗', '叫', '旺', '财', '家狗', '狗叫', '叫旺', '旺财']
        >>> tokenize("The user's running shoes")
        ['run', 'sho']
    """
    unigrams: list[str] = []
    bigrams: list[str] = []
    latin: list[str] = []
    for run in _RUN.findall(normalize_text(text).replace("用户", " ")):
        if run[0] > "z":  # _RUN yields [a-z0-9]+ runs or CJK runs
            uni, bi = _cjk_terms(run)
            unigrams += uni
            bigrams += bi
        elif run not in _EN_STOPWORDS:
            latin.append(_stem(run))
    return latin + unigrams + bigrams


@functools.lru_cache(maxsize=65_536)
def _cjk_terms(run: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    unigrams = tuple(ch for ch in run if ch not in _ZH_STOP_UNIGRAMS)
    bigrams = tuple(
        b
        for b in (run[i : i + 2] for i in range(len(run) - 1))
        if b not in _ZH_STOP_BIGRAMS and b[0] not in _ZH_FUNCTION_CHARS and b[1] not in _ZH_FUNCTION_CHARS
    )
    return unigrams, bigrams


def capitalised(text: str) -> list[str]:
    """Capitalised words that are not stopwords (names, places, products)."""
    return [w for w in _CAPITALISED.findall(text) if w.casefold() not in _EN_STOPWORDS]


Analysis = tuple[list[str], list[str]]
"""A text's index terms and its capitalised names (casefolded)."""


class LexicalIndex:
    """A BM25 index over texts with coverage scores; :meth:`updated` changes it without a rebuild.

    Sealed postings are CSR numpy arrays, texts added since sit in a *fresh* segment, removed ones are
    tombstones; past ``fresh_limit`` / ``tombstone_limit`` it seals again from the live texts' terms.

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
    tombstone_limit = 0.25
    k1, b = 1.2, 0.75

    def __init__(self, texts: Sequence[str], *, cache: dict[str, Analysis] | None = None) -> None:
        self._cache = {} if cache is None else cache
        self._vocab: dict[str, int] = {}
        self._seal([(self._term_ids(t), n) for t, n in map(self._analyse, texts)])

    def _analyse(self, text: str) -> Analysis:
        hit = self._cache.get(text)
        if hit is None:
            hit = self._cache[text] = (tokenize(text), [w.casefold() for w in capitalised(text)])
        return hit

    def _term_ids(self, tokens: Iterable[str]) -> list[int]:
        return [self._vocab.setdefault(t, len(self._vocab)) for t in tokens]

    def _seal(self, docs: list[tuple[list[int], list[str]]]) -> None:
        """(Re)build every structure from the texts' term ids and names, one slot per text."""
        ids = np.fromiter(itertools.chain.from_iterable(t for t, _ in docs), dtype=np.int64)
        self._seal_ids(ids, np.array([len(t) for t, _ in docs], dtype=np.int64), [n for _, n in docs])

    def _seal_ids(self, ids: np.ndarray, lengths: np.ndarray, names: list[list[str]]) -> None:
        n = len(lengths)
        self.size = n
        self._doc_terms = ids
        self._doc_start = np.cumsum(lengths) - lengths
        self._doc_len = lengths
        self._doc_names = list(names)
        self._fresh_terms: dict[int, list[int]] = {}  # slot -> term ids, for slots added since the seal
        self._fresh: dict[int, list[tuple[int, int]]] = {}  # term -> [(slot, tf)] of those slots
        self._alive = np.ones(n, dtype=bool)
        self._order = np.arange(n, dtype=np.int64)
        self._identity = True
        self._dl = np.maximum(lengths, 1).astype(np.float64)
        self._total = float(self._dl.sum())
        slots = np.repeat(np.arange(n, dtype=np.int64), lengths)
        pairs, tf = np.unique(ids * max(1, n) + slots, return_counts=True)
        terms = pairs // max(1, n)
        self._post_slots, self._post_tf = pairs % max(1, n), tf.astype(np.float64)
        self._indptr = np.searchsorted(terms, np.arange(len(self._vocab) + 1))
        self._df = np.diff(self._indptr).astype(np.int64)
        self._sealed = n
        self._names = collections.Counter(w for doc in names for w in doc)

    # ------------------------------------------------------------------ persisting (snapshot files)
    def terms(self) -> tuple[list[str], np.ndarray, np.ndarray, list[list[str]]]:
        """``(vocab, term ids text after text, terms per text, names per text)`` of the live texts in order."""
        docs = [self._slot_terms(int(s)) for s in self._order]
        ids = np.fromiter(itertools.chain.from_iterable(docs), dtype=np.int64)
        lengths = np.array([len(d) for d in docs], dtype=np.int64)
        return list(self._vocab), ids, lengths, [self._doc_names[int(s)] for s in self._order]

    @classmethod
    def from_terms(cls, vocab: list[str], ids: np.ndarray, lengths: np.ndarray, names: list[list[str]]) -> LexicalIndex:
        """The index :meth:`terms` describes (no text is analysed)."""
        new = cls.__new__(cls)
        new._cache, new._vocab = {}, {t: i for i, t in enumerate(vocab)}
        new._seal_ids(np.asarray(ids, dtype=np.int64), np.asarray(lengths, dtype=np.int64), names)
        return new

    def _slot_terms(self, slot: int) -> list[int]:
        if slot < self._sealed:
            start = int(self._doc_start[slot])
            return self._doc_terms[start : start + int(self._doc_len[slot])].tolist()
        return self._fresh_terms[slot]

    # ------------------------------------------------------------------ updating
    def updated(self, kept: np.ndarray, added: Sequence[str], order: np.ndarray | None = None) -> LexicalIndex:
        """A new index of the texts at positions ``kept``, then ``added``; ``order``: each new position's index."""
        new = copy.copy(self)
        kept = np.asarray(kept, dtype=np.int64)
        removed = np.ones(self.size, dtype=bool)
        removed[kept] = False
        gone = self._order[removed]
        docs = [self._analyse(t) for t in added]
        slots = len(self._alive) + len(docs)
        live = int(self._alive.sum()) - len(gone) + len(docs)
        new._vocab = dict(self._vocab)
        if slots - self._sealed > max(256, self.fresh_limit * live) or slots - live > self.tombstone_limit * slots:
            every = [(self._slot_terms(int(s)), self._doc_names[int(s)]) for s in self._order[kept]]
            every += [(new._term_ids(tokens), names) for tokens, names in docs]
            new._seal(every if order is None else [every[i] for i in order])
            return new
        added_terms = [new._term_ids(tokens) for tokens, _ in docs]
        new._df = np.concatenate([self._df, np.zeros(len(new._vocab) - len(self._df), dtype=np.int64)])
        new._alive, new._names = self._alive.copy(), self._names.copy()
        new._doc_names, new._fresh_terms = list(self._doc_names), dict(self._fresh_terms)
        new._fresh = {term: list(rows) for term, rows in self._fresh.items()}
        new._alive[gone] = False
        for slot in gone.tolist():
            new._df[list(set(self._slot_terms(slot)))] -= 1
            new._names.subtract(self._doc_names[slot])
            new._total -= self._dl[slot]
        first = len(self._alive)
        for slot, terms, (_, names) in zip(itertools.count(first), added_terms, docs):
            new._fresh_terms[slot] = terms
            new._doc_names.append(names)
            for term, tf in collections.Counter(terms).items():
                new._df[term] += 1
                new._fresh.setdefault(term, []).append((slot, tf))
            new._names.update(names)
        dl = np.array([max(1, len(t)) for t, _ in docs], dtype=np.float64)
        new._dl = np.concatenate([self._dl, dl])
        new._alive = np.concatenate([new._alive, np.ones(len(docs), dtype=bool)])
        new._total += float(dl.sum())
        new._order = np.concatenate([self._order[kept], np.arange(first, first + len(docs), dtype=np.int64)])
        if order is not None:
            new._order = new._order[np.asarray(order, dtype=np.int64)]
        new._identity = False
        new.size = len(new._order)
        return new

    # ------------------------------------------------------------------ queries
    def mentions_known_name(self, query: str) -> bool:
        """Whether the query has a capitalised word that the records capitalise too ("Caroline", not "Write")."""
        return any(self._names.get(w.casefold(), 0) > 0 for w in capitalised(query))

    def doc_freq(self, token: str) -> int:
        """How many indexed texts hold ``token`` (an index term, see ``tokenize``)."""
        term = self._vocab.get(token)
        return int(self._df[term]) if term is not None and term < len(self._df) else 0

    def idf(self, token: str) -> float:
        """Lucene IDF; a token the index has never seen gets the highest possible value."""
        df = self.doc_freq(token)
        return math.log(1.0 + (self.size - df + 0.5) / (df + 0.5))

    def shared_idfs(self, tokens: Iterable[str]) -> dict[str, float]:
        """``idf`` of each of ``tokens`` that more than one indexed text holds."""
        return {t: self.idf(t) for t in tokens if self.doc_freq(t) > 1}

    def shared_words(self, query: str) -> np.ndarray:
        """How many of ``query``'s words each indexed text holds, one count per text.

        A latin word counts once (stemmed, stopwords out); a Chinese word is a run of the query's bigrams that a
        text holds one after another ("抛光用" holds 抛光 and 光用: one word), since bigrams overlap.
        """
        count = np.zeros(self.size, dtype=np.int64)
        latin: set[str] = set()
        for run in _RUN.findall(normalize_text(query).replace("用户", " ")):
            if run[0] <= "z":  # _RUN yields [a-z0-9]+ runs or CJK runs
                if run not in _EN_STOPWORDS:
                    latin.add(_stem(run))
                continue
            before = np.zeros(self.size, dtype=bool)
            for i in range(len(run) - 1):
                held = self._holders(run[i : i + 2])
                count += held & ~before
                before = held
        for word in latin:
            count += self._holders(word)
        return count

    def _postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """The slots that hold ``term`` and its count in each: the sealed ones, then those added since."""
        lo, hi = (self._indptr[term], self._indptr[term + 1]) if term + 1 < len(self._indptr) else (0, 0)
        fresh = self._fresh.get(term, ())
        slots = np.concatenate([self._post_slots[lo:hi], np.array([s for s, _ in fresh], dtype=np.int64)])
        return slots, np.concatenate([self._post_tf[lo:hi], np.array([tf for _, tf in fresh], dtype=np.float64)])

    def _holders(self, token: str) -> np.ndarray:
        """Which indexed texts hold the index term ``token``."""
        held = np.zeros(len(self._alive), dtype=bool)
        if (term := self._vocab.get(token)) is not None:
            held[self._postings(term)[0]] = True
        return held if self._identity else held[self._order]

    def scores(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """Raw BM25 scores and coverages in [0, 1], one per indexed text."""
        tokens = list(dict.fromkeys(tokenize(query)))
        known = [(self._vocab[t], self.idf(t)) for t in tokens if self.doc_freq(t) > 0]
        if not known:
            return np.zeros(self.size, dtype=np.float64), np.zeros(self.size, dtype=np.float64)
        ideal = sum(self.idf(t) for t in tokens) / (1.0 + self.k1)
        norm = self.k1 * ((1 - self.b) + self.b * self._dl / (self._total / max(1, self.size)))
        by_slot = np.zeros(len(self._alive), dtype=np.float64)
        for term, idf in known:
            slots, tf = self._postings(term)
            by_slot[slots] += idf * tf / (norm[slots] + tf)
        if not self._identity:
            by_slot[~self._alive] = 0.0
            by_slot = by_slot[self._order]
        return by_slot, np.clip(by_slot / ideal, 0.0, 1.0)
