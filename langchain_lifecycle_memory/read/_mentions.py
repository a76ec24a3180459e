"""Which attributes a query names ("编辑器", "editor", "running shoes"), for 50k attributes at once.

``attribute_mentioned`` is the definition, one attribute at a time; ``mentioned_attributes``
finds the same set through an index of every attribute's name (latin stem runs by their
first stem, CJK names by their text), built once per attribute list and updated in place
when a write adds or drops a few names (pure).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_lifecycle_memory.read.lexical import _stem, normalize_text, word_tokens
from langchain_lifecycle_memory.schema import normalize_value
from langchain_lifecycle_memory.vocabulary import AttributeSpec

__all__ = ["attribute_mentioned", "humanize_all", "mentioned_attributes", "needles_of", "normalize_values"]

_SEPARATORS = re.compile(r"[_\-\s]+")
_PLAIN_NAME = re.compile(r"[a-z0-9_\- ]+")
"""A name whose humanised words are its latin runs already (most attribute ids)."""
_LATIN_WORD = re.compile(r"[a-z0-9]+")


def _humanize(name: str) -> str:
    return " ".join([part for part in _SEPARATORS.split(name) if part])


def humanize_all(names: Sequence[str]) -> list[str]:
    """``_humanize`` of each name, with one substitution over all of them (50k names: ~4x faster)."""
    joined = "\x00".join(names)
    parts = _SEPARATORS.sub(" ", joined).split("\x00")  # no separator run crosses a NUL
    if len(parts) != len(names):  # a name holding a NUL
        return [_humanize(n) for n in names]
    return [p.strip(" ") for p in parts]


_SPACES = re.compile(r"\s+")  # ``str.split``'s whitespace (both use ``str.isspace``)


def normalize_values(values: Sequence[str]) -> list[str]:
    """``schema.normalize_value`` of each value, as one pass over all of them (50k values: ~3x faster).

    NUL joins them: NFKC composes nothing with it and case folding and whitespace runs
    stop at it, so each part is normalised exactly as it would be alone.
    """
    joined = unicodedata.normalize("NFKC", "\x00".join(values)).casefold()
    collapsed = _SPACES.sub(" ", joined).replace(" \x00", "\x00").replace("\x00 ", "\x00").strip(" ")
    parts = collapsed.split("\x00") if values else []
    if len(parts) != len(values):  # a value holding a NUL
        return [normalize_value(v) for v in values]
    return parts


def needles_of(values: Sequence[str | None]) -> list[str | None]:
    """Each value's needle: normalised (``normalize_value``), ``None`` under 2 characters."""
    given = [i for i, v in enumerate(values) if v]
    out: list[str | None] = [None] * len(values)
    for i, needle in zip(given, normalize_values([str(values[i]) for i in given])):
        if len(needle) >= 2:
            out[i] = needle
    return out


def _stems(words: Iterable[str]) -> list[str]:
    return [_stem(w) for w in words]


def _contains_seq(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    return n > 0 and any(list(haystack[i : i + n]) == list(needle) for i in range(len(haystack) - n + 1))


def attribute_mentioned(query: str, attribute: str, spec: AttributeSpec | None) -> bool:
    """The query names the attribute itself ("编辑器", "editor", "running shoes")."""
    text = normalize_text(query)
    q_stems = _stems(word_tokens(query))
    names = [_humanize(attribute)]
    if spec is not None and spec.zh:
        names.append(spec.zh)
    for name in names:
        words = word_tokens(name)
        if not words:
            continue
        if all(re.fullmatch(r"[a-z0-9]+", w) for w in words):
            if _contains_seq(q_stems, _stems(words)):
                return True
        elif len(normalize_text(name)) >= 2 and normalize_text(name) in text:
            return True
    return False


_stem_of = functools.lru_cache(maxsize=65_536)(_stem)
"""``_stem``, remembered: attribute ids repeat their words ("topic_1", "topic_2"...)."""


@functools.lru_cache(maxsize=65_536)
def _attribute_names(attribute: str, zh: str | None) -> tuple[tuple[bool, tuple[str, ...] | str], ...]:
    """How ``attribute_mentioned`` looks for an attribute: latin stem runs or CJK substrings."""
    out: list[tuple[bool, tuple[str, ...] | str]] = []
    if _PLAIN_NAME.fullmatch(attribute):  # the same words, without normalising and re-tokenising
        words = _SEPARATORS.split(attribute)
        if words[0] == "" or words[-1] == "":
            words = [w for w in words if w]
        if words:
            out.append((True, tuple(map(_stem_of, words))))
        if not zh:
            return tuple(out)
        names = [zh]
    else:
        names = [_humanize(attribute), *([zh] if zh else [])]
    for name in names:
        words = word_tokens(name)
        if not words:
            continue
        if all(_LATIN_WORD.fullmatch(w) for w in words):
            out.append((True, tuple(_stems(words))))
        elif len(normalize_text(name)) >= 2:
            out.append((False, normalize_text(name)))
    return tuple(out)


_MENTION_CJK_SPAN = 16
_mention_index: list[tuple[Any, Any]] = []  # one entry: (key, index) of the last attribute list


def _mention_index_of(attributes: tuple[str, ...], specs: Mapping[str, AttributeSpec]) -> Any:
    """Attribute names indexed by their first stem (latin) or their text (CJK), built once per list.

    A list that differs from the last one by a few names (a write added or dropped an
    attribute) updates that index instead of rebuilding it.
    """
    key = (attributes, id(specs))
    hit = _mention_index[0] if _mention_index else None
    if hit is not None and hit[0] == key:
        return hit[1]
    if hit is not None and hit[0][1] == id(specs) and hit[1][3] is specs:
        before, now = set(hit[0][0]), set(attributes)
        added, gone = now - before, before - now
        if len(added) + len(gone) <= max(16, len(now) // 8):
            index = hit[1]
            _index_names(index, sorted(added), specs)
            if gone:
                _unindex_names(index, gone, specs)
            _mention_index[:] = [(key, index)]
            return index
    index: tuple[Any, ...] = ({}, {}, [], specs)
    _index_names(index, attributes, specs)
    _mention_index[:] = [(key, index)]
    return index


def _index_names(index: tuple[Any, ...], attributes: Iterable[str], specs: Mapping[str, AttributeSpec]) -> None:
    """Add ``attributes`` to the index: latin names under their first stem, CJK ones by text.

    A plain id (``topic_17``) is filed under the stem of its first word without building
    its needle: that is made (and remembered) only when a query has that stem, so a 50k
    list leaves no per-attribute objects behind for the garbage collector to walk.
    """
    latin, cjk, long = index[0], index[1], index[2]
    plain, split = _PLAIN_NAME.fullmatch, _SEPARATORS.split
    for attribute in attributes:
        spec = specs.get(attribute)
        zh = spec.zh if spec is not None else None
        if not zh and plain(attribute):
            words = split(attribute)
            first = words[0] or (words[1] if len(words) > 1 else "")
            if first:
                latin.setdefault(_stem_of(first), []).append(attribute)
            continue
        for is_latin, needle in _attribute_names(attribute, zh):
            if is_latin:
                latin.setdefault(needle[0], []).append(attribute)
            elif len(needle) <= _MENTION_CJK_SPAN:
                cjk.setdefault(needle, []).append(attribute)
            else:
                long.append((attribute, needle))


def _unindex_names(index: tuple[Any, ...], gone: set[str], specs: Mapping[str, AttributeSpec]) -> None:
    latin, cjk, long = index[0], index[1], index[2]
    for attribute in gone:
        spec = specs.get(attribute)
        for is_latin, needle in _attribute_names(attribute, spec.zh if spec is not None else None):
            if is_latin:
                latin[needle[0]] = [a for a in latin.get(needle[0], ()) if a != attribute]
            elif len(needle) <= _MENTION_CJK_SPAN:
                cjk[needle] = [a for a in cjk.get(needle, ()) if a != attribute]
    long[:] = [e for e in long if e[0] not in gone]


def _latin_hit(attribute: str, stems: list[str], specs: Mapping[str, AttributeSpec]) -> bool:
    spec = specs.get(attribute)
    names = _attribute_names(attribute, spec.zh if spec is not None else None)
    return any(is_latin and _contains_seq(stems, needle) for is_latin, needle in names)  # type: ignore[arg-type]


def mentioned_attributes(
    queries: Sequence[str], attributes: Iterable[str], specs: Mapping[str, AttributeSpec]
) -> set[str]:
    """The attributes that some query names (``attribute_mentioned``), in time linear in the queries.

    Attribute names are indexed once per attribute list; each query's stems and
    substrings are then looked up, so 50k attributes cost no more per query than 50.
    """
    latin, cjk, long, _ = _mention_index_of(tuple(attributes), specs)  # duplicates: harmless
    found: set[str] = set()
    for query in queries:
        stems = _stems(word_tokens(query))
        for stem in set(stems):
            found.update(a for a in latin.get(stem, ()) if a not in found and _latin_hit(a, stems, specs))
        text = normalize_text(query)
        for i in range(len(text) if cjk else 0):
            for j in range(i + 2, min(len(text), i + _MENTION_CJK_SPAN) + 1):
                found.update(cjk.get(text[i:j], ()))
        found.update(a for a, needle in long if needle in text)
    return found
