from __future__ import annotations

import numpy as np

from langchain_lifecycle_memory.read.lexical import LexicalIndex, tokenize


def test_chinese_is_split_into_characters_and_bigrams_without_grammar_words() -> None:
    tokens = tokenize("用户养了一条叫旺财的狗")
    assert "旺财" in tokens and "狗" in tokens
    # "用户" (every statement starts with it) and function characters carry no evidence
    assert "用户" not in tokens and "的" not in tokens and "了" not in tokens
    assert not any("的" in t for t in tokens)


def test_english_is_lowercased_stemmed_and_stopworded() -> None:
    assert tokenize("The user's Running Shoes") == tokenize("running shoe")
    assert tokenize("I liked it") == tokenize("likes")
    assert tokenize("What is the user doing?") == []


def test_mixed_text_keeps_both_scripts_and_full_width_is_normalised() -> None:
    tokens = tokenize("我用ＶＳ Code写Python")
    assert tokenize("vs code") == ["vs", "cod"]
    assert {"vs", "cod", "python", "写"} <= set(tokens)
    assert "我" not in tokens


def test_bm25_finds_the_dog_name_from_a_question_that_does_not_contain_it() -> None:
    index = LexicalIndex(["用户是一名产品经理，在在线教育公司工作", "用户养了一条叫旺财的狗", "用户周末喜欢摄影"])
    raw, coverage = index.scores("我家狗叫什么名字？")
    assert int(np.argmax(raw)) == 1
    assert coverage[1] > 2 * max(coverage[0], coverage[2])


def test_coverage_is_calibrated_between_zero_and_one() -> None:
    index = LexicalIndex(["The user drives a Tesla Model 3.", "The user is lactose intolerant."])
    _, exact = index.scores("Tesla Model 3")
    _, unrelated = index.scores("Who won the NBA Finals in 2016?")
    _, diluted = index.scores("Tesla stock price history and quarterly earnings forecast")
    assert exact[0] > 0.5
    assert unrelated.max() == 0.0
    assert 0 < diluted[0] < exact[0]
    assert all(0.0 <= v <= 1.0 for v in np.concatenate([exact, unrelated, diluted]))


def test_empty_corpus_and_empty_query_score_zero() -> None:
    raw, coverage = LexicalIndex([]).scores("anything")
    assert raw.shape == (0,) and coverage.shape == (0,)
    raw, coverage = LexicalIndex(["The user likes Vim."]).scores("?? the of")
    assert raw.tolist() == [0.0] and coverage.tolist() == [0.0]


def test_record_with_only_stopwords_is_still_indexed() -> None:
    index = LexicalIndex(["the of and", "用户喜欢使用 Vim 编辑器"])
    raw, _ = index.scores("Vim")
    assert raw.shape == (2,) and raw[1] > raw[0]


def test_known_names_are_capitalised_words_the_records_capitalise_too() -> None:
    index = LexicalIndex(["Caroline: I went to the support group yesterday.", "The user writes Haskell at work."])
    assert index.mentions_known_name("When did Caroline go to the support group?")
    assert index.mentions_known_name("Is Haskell lazy?")
    assert not index.mentions_known_name("Write a haiku about autumn.")
    assert not index.mentions_known_name("The weather is nice")
