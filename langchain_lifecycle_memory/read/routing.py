"""Query understanding for the slot channel: attribute routing, mentions, entity focus.

*Routing* closes the semantic gap that neither embeddings nor BM25 cross on their own:
"When is a good time to schedule a call with me?" shares no word and little meaning
with "The user works as a night-shift ER nurse", but it is close to the ``job``
attribute's topic card ("work schedule and shifts", "when I am available or busy").
Each attribute's card phrases are embedded once per embedder; a query is scored
against every phrase and an attribute takes the mean of its two best phrases.

*Entity focus* keeps relatives' facts out of first-person questions ("我的笔记本电脑"
must not recall the wife's MacBook) and the user's own facts out of questions about a
named person ("Which shoes does Claire race in?").
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_lifecycle_memory.read._card_vectors import PersistedCards
from langchain_lifecycle_memory.read._card_warmer import CardWarmer
from langchain_lifecycle_memory.read._mentions import (  # noqa: F401 (re-exported; the benchmark resets these)
    _attribute_names,
    _humanize,
    _mention_index,
    attribute_mentioned,
    humanize_all,
    mentioned_attributes,
)
from langchain_lifecycle_memory.read.lexical import normalize_text, word_tokens
from langchain_lifecycle_memory.schema import normalize_value
from langchain_lifecycle_memory.store.gcpause import paused_gc
from langchain_lifecycle_memory.store.lru import LRUCache
from langchain_lifecycle_memory.store.write_hooks import add_write_listener
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES, AttributeSpec

__all__ = [
    "CARD_WARMER",
    "AttributeRouter",
    "attribute_mentioned",
    "entity_aliases",
    "is_other_person",
    "is_personal",
    "is_self_entity",
    "mentioned_attributes",
    "query_entities",
    "value_in",
    "value_mentioned",
]

SELF_ENTITIES = frozenset({"user", "self", "me", "i", "myself", "用户", "我", "本人"})

# One tuple per relation, English and Chinese forms together. Family words are
# personal on their own ("老婆喜欢什么？"); social ones ("friends", "同事") are too
# generic to mean a stored person unless possessed ("my friend") or named, and so are
# one-character forms ("我哥", but not the 哥 of 哥伦比亚).
_FAMILY: tuple[tuple[str, ...], ...] = (
    ("wife", "spouse", "老婆", "妻子", "太太", "媳妇", "爱人"),
    ("husband", "spouse", "老公", "丈夫", "爱人"),
    ("partner", "对象", "伴侣"),
    ("girlfriend", "女朋友", "女友"),
    ("boyfriend", "男朋友", "男友"),
    ("sister", "sis", "姐姐", "妹妹", "姐", "妹"),
    ("brother", "bro", "哥哥", "弟弟", "哥", "弟"),
    ("son", "儿子"),
    ("daughter", "女儿", "闺女"),
    ("child", "children", "kid", "孩子"),
    ("mother", "mom", "mum", "mama", "妈妈", "母亲", "老妈", "妈"),
    ("father", "dad", "daddy", "papa", "爸爸", "父亲", "老爸", "爸"),
    ("grandmother", "grandma", "granny", "奶奶", "外婆", "姥姥"),
    ("grandfather", "grandpa", "爷爷", "外公", "姥爷"),
    ("aunt", "auntie", "阿姨", "姑姑", "姨妈"),
    ("uncle", "叔叔", "舅舅", "伯伯"),
    ("cousin", "表哥", "表姐", "堂哥", "堂姐", "表弟", "表妹"),
)
_SOCIAL: tuple[tuple[str, ...], ...] = (
    ("friend", "buddy", "朋友"),
    ("colleague", "coworker", "同事"),
    ("boss", "manager", "老板", "领导", "上司"),
    ("roommate", "flatmate", "室友"),
    ("neighbor", "neighbour", "邻居"),
    ("classmate", "同学"),
    ("teacher", "老师"),
)
_SOCIAL_FORMS = frozenset(form for group in _SOCIAL for form in group)
_EN_RELATION_FORMS = frozenset(f for group in (*_FAMILY, *_SOCIAL) for f in group if f.isascii())
_ZH_RELATION_FORMS = tuple(f for group in (*_FAMILY, *_SOCIAL) for f in group if not f.isascii() and len(f) > 1)
_POSSESSIVES_EN = ("my", "our")
_POSSESSIVES_ZH = ("我的", "我家", "我们", "我")


def _relation_forms(part: str) -> set[str]:
    """All surface forms of the relations an entity-id part names."""
    return {form for group in (*_FAMILY, *_SOCIAL) if part in group for form in group}


_NAME_PREFIXES = "小老阿大"
UNKNOWN_ATTRIBUTE_DISCOUNT = 0.05
_VOWEL_GROUPS = re.compile(r"[aeiouv]+")


def is_self_entity(entity: str | None) -> bool:
    """Whether a record's entity is the user (or unset)."""
    return entity is None or normalize_value(entity) in SELF_ENTITIES


def is_other_person(entity: str | None) -> bool:
    """Whether an entity id names someone else in the user's life (``sister_maya``, ``老婆``).

    Only such records are kept out of first-person questions: an entity like ``maple``
    or ``car`` may well be the user's own dog or car.
    """
    if is_self_entity(entity):
        return False
    norm = normalize_text(str(entity))
    parts = set(re.split(r"[_\-\s]+", norm))
    return bool(parts & _EN_RELATION_FORMS) or any(zh in norm for zh in _ZH_RELATION_FORMS)


_EN_PERSONAL = frozenset(
    "i me my mine myself im ive id we us our ours user users "
    "give put recommend suggest help find book order remind plan pick choose get buy tell worth".split()
)
_ZH_PERSONAL = (
    *("我", "俺", "咱", "用户", "帮", "给", "推荐", "替", "提醒", "安排", "挑", "选", "订", "来点", "放点"),
    *("值得", "适合"),
)


def is_personal(query: str) -> bool:
    """Whether the query is about or for the user ("my", "I", "我", "帮我", "recommend...").

    General-knowledge questions ("What's the capital of Canada?", "明天会下雨吗？") are
    not; topic routing alone must not pull a user's memories into them.
    """
    words = [w.replace("'", "") for w in re.findall(r"[a-z']+", normalize_text(query))]
    if any(w in _EN_PERSONAL for w in words):
        return True
    return any(marker in query for marker in _ZH_PERSONAL)


def value_mentioned(query: str, value: str | None) -> bool:
    """The slot value appears in the query (whole words for latin values)."""
    return bool(value) and value_in(normalize_value(str(value)), normalize_value(query))


def value_in(needle: str, haystack: str) -> bool:
    """``value_mentioned`` for an already normalised value and query."""
    if len(needle) < 2 or needle not in haystack:  # the substring test is cheap; the regex only confirms
        return False
    if needle.isascii():
        return re.search(rf"(?<![a-z0-9]){re.escape(needle)}(?![a-z0-9])", haystack) is not None
    return True


def _syllables(romanized: str) -> int:
    return len(_VOWEL_GROUPS.findall(romanized))


def entity_aliases(entity: str, contents: Iterable[str] = ()) -> tuple[set[str], set[str]]:
    """``(name_aliases, relation_aliases)`` by which a query can refer to ``entity``.

    Names come from the entity id (``sister_claire`` -> ``claire``) and, for Chinese
    statements, from the characters after the relation word, as many as the romanised
    name has syllables (``daughter_duoduo`` + "女儿朵朵在学钢琴" -> ``朵朵``).
    """
    norm = normalize_text(entity)
    parts = [p for p in re.split(r"[_\-\s]+", norm) if p]
    names: set[str] = set()
    relations: set[str] = set()
    syllables = 0
    for part in parts:
        forms = _relation_forms(part)
        if forms:
            relations |= forms
        elif re.fullmatch(r"[a-z]+", part):
            if len(part) >= 2:
                names.add(part)
            syllables = max(syllables, _syllables(part))
        elif len(part) >= 2:
            names.add(part)
    zh_relations = [r for r in relations if not r.isascii() and len(r) > 1]
    for content in contents:
        text = normalize_text(content)
        for rel in zh_relations:
            start = text.find(rel)
            if start < 0 or not syllables:
                continue
            tail = text[start + len(rel) :]
            size = syllables + (1 if tail[:1] and tail[0] in _NAME_PREFIXES else 0)
            name = tail[:size]
            if len(name) == size and all("\u4e00" <= ch <= "\u9fff" for ch in name):
                names.add(name)
    return names, relations


def query_entities(query: str, aliases: Mapping[str, tuple[set[str], set[str]]]) -> set[str]:
    """The non-self entities a query is about (empty: it is about the user).

    ``aliases`` maps each non-self entity id to its ``entity_aliases``.
    """
    text = normalize_text(query)
    words = word_tokens(query)
    word_set = set(words)
    found: set[str] = set()
    for entity, (names, relations) in aliases.items():
        if any((n in word_set) if n.isascii() else (n in text) for n in names):
            found.add(entity)
            continue
        for rel in relations:
            loose = rel in _SOCIAL_FORMS or len(rel) == 1
            if rel.isascii():
                forms = (rel, rel + "s")
                hit = any(w in forms for w in words)
                possessed = any(words[i] in _POSSESSIVES_EN and words[i + 1] in forms for i in range(len(words) - 1))
            else:
                hit = rel in text
                possessed = any(p + rel in text for p in _POSSESSIVES_ZH)
            if hit and (possessed or not loose):
                found.add(entity)
                break
    return found


def _card_phrases(attribute: str, spec: AttributeSpec | None) -> list[str]:
    if spec is None:
        return [_humanize(attribute)]
    head = f"{_humanize(spec.name)}: {spec.description}"
    return [head, spec.zh, *spec.topics] if spec.zh else [head, *spec.topics]


class AttributeRouter:
    """Scores how much a query is about each attribute (cosine to its topic cards).

    Cards of the vocabulary are embedded once per embedder and cached for the process
    (an LRU) and on disk (``PersistedCards``, keyed by the embedder's fingerprint);
    attributes outside the vocabulary get a card made of their humanised name. The
    embedding of missing cards is left to the caller (``missing`` / ``install``) so
    that async callers can await it; ``scores`` embeds them itself when needed. Cards
    of attributes written through the store are embedded after the write, in the
    background (``CARD_WARMER``, ``_card_warmer``), when a write brings many new ones.

    Example:
        .. code-block:: python

            router = AttributeRouter(store.embeddings)
            vec = store.embeddings.embed_query("Planning a road trip, where should I stop?")
            router.scores(vec, ["car", "pet"])  # {"car": 0.4.., "pet": 0.1..}
    """

    _lock = threading.Lock()
    _cache: dict[tuple[str, tuple[AttributeSpec, ...]], tuple[Embeddings, LRUCache[str, np.ndarray]]] = {}
    max_cards: int = 100_000
    """Attributes whose embedded cards one embedder keeps (LRU; one search may exceed it)."""

    def __init__(self, embeddings: Embeddings, vocabulary: Sequence[AttributeSpec] = DEFAULT_ATTRIBUTES) -> None:
        self.embeddings = embeddings
        self.vocabulary = tuple(vocabulary)
        self.specs = {spec.name: spec for spec in self.vocabulary}
        self._cards = self._shared_cards()
        self._stacked: tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._disk = PersistedCards.for_embeddings(embeddings)
        self._asked: tuple[list[str], list[str]] | None = None

    def _shared_cards(self) -> LRUCache[str, np.ndarray]:
        # Embedders that describe themselves (``fingerprint``) share cards across
        # instances; others are cached per object, kept alive so its id is not reused.
        ident = _embedder_ident(self.embeddings)
        named = not ident.startswith("id:")
        key = (ident, self.vocabulary)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and (named or hit[0] is self.embeddings):
                return hit[1]
            cards: LRUCache[str, np.ndarray] = LRUCache(self.max_cards)
            self._cache[key] = (self.embeddings, cards)
            if len(self._cache) > 16:
                self._cache.pop(next(iter(self._cache)))
            return cards

    def missing(self, attributes: Iterable[str]) -> tuple[list[str], list[str]]:
        """``(phrases, owners)`` still to embed for ``attributes``.

        Cards found on disk (``PersistedCards``: embedded by an earlier process with the
        same embedder) are installed here and not asked for.
        """
        with paused_gc():  # tens of thousands of cards at once (see ``store.gcpause``)
            return self._missing(tuple(attributes))

    def _missing(self, names: tuple[str, ...]) -> tuple[list[str], list[str]]:
        phrases: list[str] = []
        owners: list[str] = []
        if self._stacked is not None and self._stacked[0] == names:
            return phrases, owners  # scored from the stacked copy: nothing to embed
        distinct = tuple(dict.fromkeys(names))
        cards, specs = self._cards, self.specs
        with self._lock:  # a read: this search's cards become recent
            found = cards.get_many(distinct)
        todo = [a for a, card in zip(distinct, found) if card is None]
        if not todo:  # every card held: stacked now, so scoring looks none of them up again
            if distinct == names:
                self._stack(names, found)
            return phrases, owners
        names = distinct
        bare = [a for a in todo if a not in specs]  # a card of the humanised name: made all at once
        humanised = dict(zip(bare, humanize_all(bare)))
        for attribute in todo:
            if attribute in humanised:
                phrases.append(humanised[attribute])
                owners.append(attribute)
                continue
            for phrase in _card_phrases(attribute, specs[attribute]):
                phrases.append(phrase)
                owners.append(attribute)
        if phrases and self._disk is not None:
            rows, matrix = self._disk.load_rows(phrases)
            if rows:
                whole = len(owners) == len(names)  # one phrase per attribute, every one missing
                phrases, owners = self._install_stored(phrases, owners, rows, matrix, names if whole else None)
        self._asked = (phrases, owners)
        return phrases, owners

    def _install_stored(
        self,
        phrases: list[str],
        owners: list[str],
        rows: dict[str, int],
        matrix: np.ndarray,
        names: tuple[str, ...] | None = None,
    ) -> tuple[list[str], list[str]]:
        """Install the attributes whose every phrase was stored; the rest are still to embed.

        ``names``: ``owners`` are these attributes, one phrase each, in order; when all are
        installed, the matrix ``_stack`` would build for them is this one: it is kept.
        """
        incomplete = {o for p, o in zip(phrases, owners) if p not in rows}
        done = [j for j, o in enumerate(owners) if o not in incomplete]
        if done:
            stacked = self._install_rows([owners[j] for j in done], matrix[[rows[phrases[j]] for j in done]])
            if names is not None and len(done) == len(names) and stacked is not None:
                n = np.arange(len(names), dtype=np.int64)
                self._stacked = (names, stacked, n, np.ones(len(names), dtype=np.int64), n)
        rest = [(p, o) for p, o in zip(phrases, owners) if o in incomplete]
        return [p for p, _ in rest], [o for _, o in rest]

    def install(self, owners: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        """Store embedded card phrases (the output of ``missing``, embedded); linear in ``owners``.

        When ``owners`` are the ones ``missing`` last asked for, the vectors are also
        persisted (``PersistedCards``) for the next process.
        """
        matrix = np.asarray(vectors, dtype=np.float32)
        asked, self._asked = self._asked, None
        if self._disk is not None and asked is not None and list(owners) == asked[1]:
            self._disk.save(asked[0], matrix)
        self._install_rows(owners, matrix)

    def _install_rows(self, owners: Sequence[str], raw: np.ndarray) -> np.ndarray | None:
        """One card per owner: its rows, as slices of one matrix (no per-row indexing).

        Returns that matrix when ``owners`` were distinct (row i is owner i's card).
        """
        if not len(owners):
            return None
        first: dict[str, int] = {}
        keys = np.array([first.setdefault(o, len(first)) for o in owners], dtype=np.int64)
        matrix = _unit_rows(raw)
        if len(keys) > 1 and (np.diff(keys) < 0).any():  # an owner's rows apart: group them
            order = np.argsort(keys, kind="stable")
            matrix, keys = matrix[order], keys[order]
        bounds = np.concatenate(([0], np.flatnonzero(np.diff(keys)) + 1, [len(keys)])).tolist()
        with self._lock:
            self._cards.maxsize = max(self._cards.maxsize, len(first))
            for attribute, a, b in zip(first, bounds, bounds[1:]):
                self._cards[attribute] = matrix[a:b]
        return matrix if len(first) == len(owners) else None

    def _stack(
        self, attributes: tuple[str, ...], cards: Sequence[np.ndarray | None] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every card phrase of ``attributes`` as one matrix, with each row's owner, counts, starts.

        Kept for the last attribute list: a namespace's snapshot asks for the same one
        query after query. ``cards``: those of ``attributes``, already looked up.
        """
        hit = self._stacked
        if hit is not None and hit[0] == attributes:
            return hit[1], hit[2], hit[3], hit[4]
        if cards is None:
            cards = [self._cards[a] for a in attributes]
        counts = np.array([len(c) for c in cards], dtype=np.int64)
        matrix = np.concatenate(cards) if cards else np.zeros((0, 1), dtype=np.float32)
        owner = np.repeat(np.arange(len(attributes)), counts)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        self._stacked = (attributes, matrix, owner, counts, starts)
        return matrix, owner, counts, starts

    def _known(self, names: tuple[str, ...]) -> np.ndarray:
        """Which of ``names`` the vocabulary describes (kept for the last attribute list)."""
        hit = getattr(self, "_known_last", None)
        if hit is None or hit[0] != names:
            hit = self._known_last = (names, np.array([a in self.specs for a in names], dtype=bool))
        return hit[1]

    def scores(self, query_vector: Sequence[float], attributes: Iterable[str]) -> dict[str, float]:
        """Mean of the two best cosines between the query and each attribute's phrases.

        Two, because a query that is really about a topic matches it in several
        phrasings (and across languages), while an off-topic question tends to hit a
        single phrase by accident of wording.
        """
        names = tuple(dict.fromkeys(attributes))
        return dict(zip(names, self.score_array(query_vector, names).tolist()))

    def score_array(self, query_vector: Sequence[float], attributes: Sequence[str]) -> np.ndarray:
        """``scores`` as an array aligned with ``attributes`` (distinct names), all at once."""
        names = tuple(attributes)
        self._cards.maxsize = max(self._cards.maxsize, len(names))  # keep this search's cards
        CARD_WARMER.wait(self.embeddings)  # cards being embedded after a write: not twice
        phrases, owners = self.missing(names)
        if phrases:
            self.install(owners, self.embeddings.embed_documents(phrases))
        if not names:
            return np.zeros(0)
        matrix, owner, counts, starts = self._stack(names)
        q = _unit_rows(np.asarray([query_vector], dtype=np.float32))[0]
        # einsum, not BLAS: a matrix-vector product gains nothing from BLAS threads, and
        # their wake-up cost 5-25 ms per query at 50k cards on a busy 2-core machine.
        sims = np.einsum("ij,j->i", matrix, q)
        # Best and second best per attribute, vectorised: the group maximum, then the
        # maximum once the first copy of it is masked out (ties: second == best).
        if len(sims) == len(names):  # one phrase each (bare names): its cosine is the score
            mean = sims.astype(np.float64)
        else:
            best = np.maximum.reduceat(sims, starts)
            rows = np.arange(len(sims))
            first = np.minimum.reduceat(np.where(sims == best[owner], rows, len(sims)), starts)
            masked = sims.copy()
            masked[first] = -np.inf
            second = np.maximum.reduceat(masked, starts)
            mean = np.where(counts > 1, (best + second) / 2, best).astype(np.float64)
        # A bare name ("hiking boots") is a thinner card than a vocabulary entry and
        # scores close to neighbouring topics ("running shoes"): trust it a bit less.
        return np.where(self._known(names), mean, mean - UNKNOWN_ATTRIBUTE_DISCOUNT)


def _embedder_ident(embeddings: Embeddings) -> str:
    """The router's cache key of an embedder: its fingerprint, or (without one) the object."""
    fingerprint = getattr(embeddings, "fingerprint", None)
    if isinstance(fingerprint, dict):
        return json.dumps(fingerprint, sort_keys=True, default=str)
    return f"id:{id(embeddings)}"


def _warm_cards(embeddings: Embeddings, attributes: list[str]) -> None:
    """Embed and install the cards of ``attributes`` a search would ask for (``CARD_WARMER``'s work).

    For every vocabulary a router of this embedder has used in this process, or the
    default one before any search.
    """
    ident = _embedder_ident(embeddings)
    vocabularies = [key[1] for key in list(AttributeRouter._cache) if key[0] == ident] or [DEFAULT_ATTRIBUTES]
    for vocabulary in vocabularies:
        router = AttributeRouter(embeddings, vocabulary)
        phrases, owners = router.missing(attributes)
        if phrases:
            router.install(owners, embeddings.embed_documents(phrases))


CARD_WARMER = CardWarmer(_warm_cards)
"""Embeds the routing cards of written attributes in the background (``_card_warmer``)."""
add_write_listener(CARD_WARMER.on_write)


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms
