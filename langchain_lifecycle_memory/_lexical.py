"""Bilingual tokenisation and a calibrated BM25 index (``bm25s``) over memory records.

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

import math
import re
import unicodedata
from collections.abc import Sequence

import bm25s
import numpy as np

__all__ = ["LexicalIndex", "tokenize", "word_tokens"]

_CJK = (
    "\u3040-\u30ff"  # kana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # hangul
    "\uf900-\ufaff"  # compatibility ideographs
)
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
"""Function words, plus "user": every extracted statement says "The user ...", so it
carries no evidence about which memory a query wants."""

_ZH_STOP_UNIGRAMS = frozenset(
    "的了是我你他她它们吗呢吧啊呀哦在有和与及也都就这那个么什怎哪一把被给让很还又要会能可对为之而但或从向用户请帮"
)
"""Function characters; they still take part in bigrams ("用户" is dropped below)."""

_ZH_FUNCTION_CHARS = frozenset("的了吗呢吧啊呀哦么什怎哪是我你他她它们在")
"""A bigram touching one of these is grammar ("是什", "的狗"), not content."""
_ZH_STOP_BIGRAMS = frozenset("一个 一下 可以 帮忙 一般 没有 多少 如何 请问".split())


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


def _is_cjk(text: str) -> bool:
    return bool(re.match(f"[{_CJK}]", text))


def normalize_text(text: str) -> str:
    """NFKC (full/half width) and casefold, as slot values are compared."""
    return unicodedata.normalize("NFKC", text).casefold()


def word_tokens(text: str) -> list[str]:
    """Unstemmed latin words and whole CJK runs, in order (used for name matching)."""
    return _RUN.findall(normalize_text(text))


def tokenize(text: str) -> list[str]:
    """Index terms for BM25: CJK unigrams + bigrams, stemmed latin words.

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
        if _is_cjk(run):
            unigrams.extend(ch for ch in run if ch not in _ZH_STOP_UNIGRAMS)
            bigrams.extend(
                b
                for b in (run[i : i + 2] for i in range(len(run) - 1))
                if b not in _ZH_STOP_BIGRAMS and not (_ZH_FUNCTION_CHARS & set(b))
            )
        elif run not in _EN_STOPWORDS:
            latin.append(_stem(run))
    return latin + unigrams + bigrams


def _capitalised(text: str) -> list[str]:
    return [w for w in re.findall(r"\b[A-Z][A-Za-z0-9]+", text) if w.casefold() not in _EN_STOPWORDS]


class LexicalIndex:
    """A BM25 index over a fixed list of texts with calibrated (coverage) scores.

    Example:
        >>> index = LexicalIndex(["用户养了一条叫旺财的狗", "The user drives a Tesla Model 3."])
        >>> raw, coverage = index.scores("我家狗叫什么名字？")
        >>> int(np.argmax(raw))
        0
    """

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
        self.k1 = k1
        self.size = len(texts)
        cache = {} if cache is None else cache
        analysed = []
        for t in texts:
            hit = cache.get(t)
            if hit is None:
                hit = cache[t] = (tokenize(t), [w.casefold() for w in _capitalised(t)])
            analysed.append(hit)
        self._doc_tokens = [tokens for tokens, _ in analysed]
        self._df: dict[str, int] = {}
        for tokens in self._doc_tokens:
            for tok in set(tokens):
                self._df[tok] = self._df.get(tok, 0) + 1
        self._names = {w for _, names in analysed for w in names}
        self._bm25: bm25s.BM25 | None = None
        if any(self._doc_tokens):
            self._bm25 = bm25s.BM25(k1=k1, b=b, method="lucene")
            # Each document keeps at least one token so that bm25s indexes every row.
            corpus = [tokens or [""] for tokens in self._doc_tokens]
            self._bm25.index(corpus, show_progress=False)

    def mentions_known_name(self, query: str) -> bool:
        """Whether the query has a capitalised word that is capitalised in the records too.

        "When did Caroline move?" is about someone the memories know; "Write a haiku"
        is not, although "writes" occurs in a memory.
        """
        return any(w.casefold() in self._names for w in _capitalised(query))

    def idf(self, token: str) -> float:
        """Lucene IDF; a token the index has never seen gets the highest possible value."""
        df = self._df.get(token, 0)
        return math.log(1.0 + (self.size - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """Raw BM25 scores and coverages in [0, 1], one per indexed text."""
        raw = np.zeros(self.size, dtype=np.float64)
        q_tokens = list(dict.fromkeys(tokenize(query)))
        if self._bm25 is None or not q_tokens:
            return raw, raw.copy()
        known = [t for t in q_tokens if t in self._df]
        if known:
            raw = np.asarray(self._bm25.get_scores(known), dtype=np.float64)
        ideal = sum(self.idf(t) for t in q_tokens) / (1.0 + self.k1)
        coverage = np.clip(raw / ideal, 0.0, 1.0) if ideal > 0 else np.zeros_like(raw)
        return raw, coverage
