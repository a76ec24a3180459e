"""An index analysed all at once equals one analysed text by text."""

from __future__ import annotations

import random

import numpy as np
import pytest

from langchain_lifecycle_memory.read import lexical
from langchain_lifecycle_memory.read.lexical import LexicalIndex, _capitalised, tokenize

PIECES = [
    "The user", "Caroline", "moved to Kyoto", "running shoes", "VS Code", "ThinkPad X1", "oat-milk", "it's",
    "用户", "用", "户", "养了一条叫旺财的狗", "第", "条", "（", "）", "铁观音", "的", "是",
    "ｆｕｌｌ ｗｉｄｔｈ", "Ｖｉｍ",
    "e\u0301", "\u0301", "ﬁ", "Straße", "ΣΊΣΥΦΟΣ", "한국어", "ｶﾀｶﾅ", "①②", "x²", "2024", "note 44177", "\n", "  ",
    "Ⅻ", "İstanbul", "ǅ", "\u3000", "ﾞ", "が", "か\u3099",
]  # fmt: skip


def _texts(rng: random.Random, n: int) -> list[str]:
    return [
        "".join(rng.choice(PIECES) + rng.choice(["", " ", ", "]) for _ in range(rng.randint(0, 8))) for _ in range(n)
    ]


def _per_text(texts: list[str]) -> LexicalIndex:
    index = LexicalIndex.__new__(LexicalIndex)
    index.k1, index.b, index._cache = 1.2, 0.75, {}
    index._seal([index._analyse(t) for t in texts])
    return index


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_index_analysed_at_once_equals_one_analysed_text_by_text(seed: int) -> None:
    rng = random.Random(seed)
    texts = _texts(rng, lexical.BULK + rng.randint(0, 500))
    bulk, each = LexicalIndex(texts), _per_text(texts)
    assert isinstance(bulk._docs, lexical._Analyses)  # analysed at once
    a, b = bulk.state(), each.state()
    assert a.keys() == b.keys()
    for key in a:
        got, want = a[key], b[key]
        assert (got.tolist() if isinstance(got, np.ndarray) else got) == (
            want.tolist() if isinstance(want, np.ndarray) else want
        ), key
    for i in rng.sample(range(len(texts)), 50):  # each text's analysis, made when read
        assert bulk._docs[i] == (tokenize(texts[i]), [w.casefold() for w in _capitalised(texts[i])])
    kept = np.array(sorted(rng.sample(range(len(texts)), len(texts) - 30)))
    added = _texts(rng, 40)
    after = [texts[i] for i in kept] + added
    for q in ["Caroline Kyoto", "我家狗叫什么", "ｖｉｍ editor", "note 44177", "Straße"]:
        np.testing.assert_allclose(bulk.updated(kept, added).scores(q)[0], _per_text(after).scores(q)[0], atol=1e-9)
        assert bulk.mentions_known_name(q) == each.mentions_known_name(q)


def test_texts_with_a_nul_are_analysed_one_by_one() -> None:
    texts = ["a\x00b Caroline"] * lexical.BULK
    index = LexicalIndex(texts)
    assert not isinstance(index._docs, lexical._Analyses)
    assert index.state()["vocab"] == _per_text(texts).state()["vocab"]
