"""Bilingual tokenisation for the BM25 index: CJK unigrams and bigrams, stemmed latin words.

Chinese has no spaces, so CJK runs become character unigrams plus bigrams (a bigram
index needs no dictionary and still rewards exact names such as "旺财"); latin text
becomes lowercased words with light suffix stripping and English stopwords removed.
Many texts at once (``_bulk_terms``) are analysed in one pass, equal to one at a time.
"""

from __future__ import annotations

import collections
import functools
import itertools
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["BULK", "normalize_text", "tokenize", "word_tokens"]

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
        if run[0] > "z":  # _RUN yields [a-z0-9]+ runs or CJK runs
            uni, bi = _cjk_terms(run)
            unigrams += uni
            bigrams += bi
        elif run not in _EN_STOPWORDS:
            latin.append(_stem(run))
    return latin + unigrams + bigrams


@functools.lru_cache(maxsize=65_536)
def _cjk_terms(run: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A CJK run's unigrams and bigrams (runs recur across records: cached, like ``_stem``)."""
    unigrams = tuple(ch for ch in run if ch not in _ZH_STOP_UNIGRAMS)
    bigrams = tuple(
        b
        for b in (run[i : i + 2] for i in range(len(run) - 1))
        if b not in _ZH_STOP_BIGRAMS and b[0] not in _ZH_FUNCTION_CHARS and b[1] not in _ZH_FUNCTION_CHARS
    )
    return unigrams, bigrams


_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z0-9]+")


def _capitalised(text: str) -> list[str]:
    return [w for w in _CAPITALISED.findall(text) if w.casefold() not in _EN_STOPWORDS]


BULK = 1000
"""From this many texts (not analysed before) an index analyses them all at once (``_bulk_terms``)."""
_RUN_OR_END = re.compile(f"[{_CJK}]+|[a-z0-9]+|\x00")


def _bulk_terms(texts: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray, collections.Counter[str]] | None:
    """``tokenize`` and the capitalised names of every text, as one index's terms, computed together.

    Returns ``(vocab, ids, lengths, names)``: the distinct terms by first appearance, every
    text's terms in ``tokenize`` order as ids into ``vocab`` (text after text), each text's
    term count, and the names counted over all texts. The texts are normalised as one
    string (NFKC and casefolding never join characters across the NUL between two
    texts) and split into runs with one regex; each distinct run is analysed once and
    its terms put in place with array operations. ``None`` when a text holds a NUL.
    """
    joined = "\x00".join(texts)
    if joined.count("\x00") != len(texts) - 1:
        return None
    runs = _RUN_OR_END.findall(normalize_text(joined).replace("用户", " "))
    runs.append("\x00")
    code = dict(zip(dict.fromkeys(runs), itertools.count()))
    occurrence = np.fromiter(map(code.__getitem__, runs), dtype=np.int64, count=len(runs))
    terms: dict[str, int] = {}
    item_term: list[int] = []
    item_kind: list[int] = []  # tokenize's order in a text: latin words, then CJK unigrams, then bigrams
    counts: list[int] = []
    for run in code:
        if run == "\x00" or run in _EN_STOPWORDS:
            counts.append(0)
        elif run[0] > "z":
            uni, bi = _cjk_terms(run)
            counts.append(len(uni) + len(bi))
            item_term += [terms.setdefault(t, len(terms)) for t in (*uni, *bi)]
            item_kind += [1] * len(uni) + [2] * len(bi)
        else:
            counts.append(1)
            item_term.append(terms.setdefault(_stem(run), len(terms)))
            item_kind.append(0)
    count = np.array(counts, dtype=np.int64)
    start = np.cumsum(count) - count
    ends = occurrence == code["\x00"]
    text_of = np.cumsum(ends) - ends  # each run's text: the NULs before it
    n = count[occurrence]
    occ = np.repeat(np.arange(len(occurrence)), n)
    item = start[occurrence][occ] + np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    text = text_of[occ]
    order = np.lexsort((np.array(item_kind, dtype=np.int64)[item], text))  # stable: run order kept
    term = np.array(item_term, dtype=np.int64)[item][order]
    distinct, first = np.unique(term, return_index=True)
    by_first = distinct[np.argsort(first)]
    rank = np.empty(len(terms), dtype=np.int64)
    rank[by_first] = np.arange(len(by_first))
    strings = list(terms)
    names = collections.Counter(c for w in _CAPITALISED.findall(joined) if (c := w.casefold()) not in _EN_STOPWORDS)
    vocab = [strings[t] for t in by_first.tolist()]
    return vocab, rank[term], np.bincount(text, minlength=len(texts)).astype(np.int64), names


class _Analyses:
    """Documents' ``(tokens, names)``, computed from their texts when first read (a loaded index)."""

    def __init__(self, items: list[Any], analyse: Any) -> None:
        self._items = items  # text (not analysed yet) or (tokens, names)
        self._analyse = analyse

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i: int) -> tuple[list[str], list[str]]:
        item = self._items[i]
        if isinstance(item, str):
            item = self._items[i] = self._analyse(item)
        return item

    def __add__(self, other: list[tuple[list[str], list[str]]]) -> _Analyses:
        return _Analyses(self._items + list(other), self._analyse)
