"""LoCoMo evidence recall: does retrieval bring back the turns a question's answer rests on?

Every turn is stored as an ``episode`` (``LifecycleMemory.add_episode``: user id = the conversation's
``sample_id``, time = its session's date, source = its ``dia_id``). For each question of categories 1-4,
recall@k is the share of its evidence turns among the top ``k`` results, averaged per category and
overall; baselines run on the same embedder and texts. Evidence ids are repaired or dropped, and the
audit file's ``correct_evidence`` is matched by question text (see ``_locomo_data``); all counts are
reported. The LoCoMo data is CC BY-NC 4.0: read it from ``shared/``, never copy it.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.runnables import RunnableLambda

from langchain_lifecycle_memory.eval._locomo_data import (
    CATEGORIES,
    Conversation,
    EvidenceStats,
    Question,
    apply_audit,
    check_text_format,
    find_audit_file,
    index_text,
    load_locomo,
    normalize_evidence,
    parse_session_date,
    recall_at_k,
)
from langchain_lifecycle_memory.graph.memory import LifecycleMemory
from langchain_lifecycle_memory.graph.naive import drop_store, fresh_store
from langchain_lifecycle_memory.read.injection import format_memories
from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever
from langchain_lifecycle_memory.store.retention import RetentionPolicy
from langchain_lifecycle_memory.write.update import UpdateConfig

__all__ = [
    "BASELINES",
    "CachedEmbeddings",
    "EvidenceStats",
    "apply_audit",
    "evaluate_locomo",
    "find_audit_file",
    "index_text",
    "load_locomo",
    "normalize_evidence",
    "parse_session_date",
    "recall_at_k",
]

BASELINES = ("default", "default-nothreshold", "dense", "bm25", "langgraph-inmemory")


# ---------------------------------------------------------------------------- retrievers
class CachedEmbeddings(Embeddings):
    """Memoises another embedder by text and embeds misses in batches (~10x faster per text)."""

    def __init__(self, base: Embeddings, batch_size: int = 128) -> None:
        self.base = base
        self.batch_size = batch_size
        self._cache: dict[tuple[str, str], list[float]] = {}
        self.model_name = getattr(base, "model_name", None)
        self.dims = getattr(base, "dims", None)

    @property
    def fingerprint(self) -> dict[str, Any]:
        """The wrapped embedder's fingerprint (the vectors are its own)."""
        from langchain_lifecycle_memory.store.embeddings import embedding_fingerprint

        return embedding_fingerprint(self.base)

    def warm(self, texts: Iterable[str], *, queries: Iterable[str] = ()) -> None:
        """Embed every text and query not cached yet (queries apart: e5 embeds them with another prefix)."""
        for kind, items in (("doc", texts), ("query", queries)):
            missing = list(dict.fromkeys(t for t in items if (kind, t) not in self._cache))
            embed = self.base.embed_documents
            if kind == "query":
                embed = getattr(self.base, "embed_queries", None) or (lambda b: [self.base.embed_query(t) for t in b])
            for i in range(0, len(missing), self.batch_size):
                chunk = missing[i : i + self.batch_size]
                self._cache.update(zip([(kind, t) for t in chunk], embed(chunk), strict=True))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Cached vectors (misses are embedded first)."""
        self.warm(texts)
        return [self._cache[("doc", t)] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Cached query vector of one text."""
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Cached query vectors."""
        self.warm((), queries=texts)
        return [self._cache[("query", t)] for t in texts]


Hit = tuple[str, str, datetime | None]
"""``(dia_id, indexed text, time)`` of one result."""
Retriever = Callable[[str], list[Hit]]


def _bm25(texts: list[str], ids: list[str], times: list[datetime], k: int) -> Retriever:
    import bm25s
    import numpy as np

    from langchain_lifecycle_memory.read.lexical import tokenize

    corpus = [tokenize(t) or [""] for t in texts]
    index = bm25s.BM25(method="lucene")
    index.index(corpus, show_progress=False)
    vocab = {tok for doc in corpus for tok in doc}

    def run(query: str) -> list[Hit]:
        tokens = [t for t in dict.fromkeys(tokenize(query)) if t in vocab]
        if not tokens:
            return []
        scores = np.asarray(index.get_scores(tokens))
        top = [int(i) for i in np.argsort(-scores, kind="stable")[:k] if scores[i] > 0]
        return [(ids[i], texts[i], times[i]) for i in top]

    return run


def _inmemory(embeddings: Embeddings, sample_id: str, texts: list[str], ids: list[str], k: int) -> Retriever:
    from langgraph.store.memory import InMemoryStore

    dims = len(embeddings.embed_query("dimension probe"))
    store = InMemoryStore(index={"dims": dims, "embed": embeddings, "fields": ["text"]})
    ns = ("locomo", sample_id)
    # One put at a time: InMemoryStore.batch fails on two equal texts in one batch
    # (langgraph: "Number of embeddings does not match number of indices"); vectors are cached.
    for dia, text in zip(ids, texts, strict=True):
        store.put(ns, dia, {"text": text})

    def run(query: str) -> list[Hit]:
        return [(item.key, item.value["text"], None) for item in store.search(ns, query=query, limit=k)]

    return run


@dataclass
class _Ingested:
    """One conversation stored through the facade, plus what the baselines index."""

    conv: Conversation
    memory: LifecycleMemory
    texts: list[str]
    ids: list[str]
    times: list[datetime]
    by_record: dict[str, str]

    def hits(self, docs: Sequence[Any]) -> list[Hit]:
        """Retriever ``Document`` s → ``(dia_id, text, time)`` via their source or record id."""
        out = []
        for d in docs:
            source = d.metadata.get("source")
            msg_ids = source.get("message_ids") if isinstance(source, dict) else None
            dia = msg_ids[0] if msg_ids else self.by_record.get(str(d.metadata.get("id")), "?")
            out.append((dia, d.page_content, datetime.fromisoformat(d.metadata["valid_from"])))
        return out


def _ingest(conv: Conversation, embeddings: CachedEmbeddings, text_format: str, speaker: bool = True) -> _Ingested:
    # The questions are about months-old turns: episodes must not expire (default TTL 30 days).
    update = UpdateConfig(policy=RetentionPolicy(ttl={"episode": None}))
    memory = LifecycleMemory(
        store=fresh_store(embeddings), extractor=RunnableLambda(lambda _: [], name="none"), update=update
    )
    previous, following = [None, *conv.turns[:-1]], [*conv.turns[1:], None]
    texts = [index_text(t, text_format, p, n) for t, p, n in zip(conv.turns, previous, following, strict=True)]
    embeddings.warm(texts, queries=[q.question for q in conv.questions])
    # The episode encoder's vectors in one batch (add_episode would embed them one by one: same vectors).
    memory.retriever.embed_episodes(texts)
    by_record = {}
    for turn, text in zip(conv.turns, texts, strict=True):
        record = memory.add_episode(
            text, user_id=conv.sample_id, at=turn.at, source_id=turn.dia_id, entity=turn.speaker if speaker else None
        )
        by_record[record.id] = turn.dia_id
    return _Ingested(conv, memory, texts, [t.dia_id for t in conv.turns], [t.at for t in conv.turns], by_record)


def _runners(
    data: _Ingested, names: Sequence[str], variants: dict[str, dict[str, Any]], embeddings: Embeddings, k: int
) -> dict[str, Retriever]:
    memory, user, now = data.memory, data.conv.sample_id, data.conv.asked_at
    store, ns = memory.store, memory.namespace(user)
    out: dict[str, Retriever] = {}
    if "default" in names:
        out["default"] = lambda q: data.hits(memory.search(q, user, k=k, now=now))
    if "default-nothreshold" in names:
        out["default-nothreshold"] = lambda q: data.hits(memory.search(q, user, k=k, now=now, min_score=0.0))
    if "dense" in names:
        out["dense"] = lambda q: [
            (data.by_record.get(r.id, "?"), r.content, r.valid_from)
            for r, _ in store.search_records(ns, q, k=k, now=now)
        ]
    if "bm25" in names:
        out["bm25"] = _bm25(data.texts, data.ids, data.times, k)
    if "langgraph-inmemory" in names:
        out["langgraph-inmemory"] = _inmemory(embeddings, user, data.texts, data.ids, k)
    for name, options in variants.items():
        retriever = LifecycleRetriever(store=store, namespace_template=memory.namespace_template, **options)
        out[name] = lambda q, r=retriever: data.hits(r.invoke(q, user_id=user, k=k, now=now))
    return out


def _put(by_category: dict[str, list[float]], category: str, value: float) -> None:
    by_category["all"].append(value)
    by_category[category].append(value)


def _means(by_category: dict[str, list[float]]) -> dict[str, float]:
    return {c: round(sum(v) / len(v), 4) if v else 0.0 for c, v in by_category.items()}


class _Tally:
    """Per-retriever recall@k, injected-block size and evidence that made it into the block."""

    def __init__(self, names: Sequence[str], ks: Sequence[int], max_tokens: int, turn_only: bool) -> None:
        self.ks, self.max_tokens, self.turn_only = list(ks), max_tokens, turn_only

        def by_category() -> dict[str, list[float]]:
            return {c: [] for c in ("all", *CATEGORIES)}

        self.recall = {n: {k: by_category() for k in ks} for n in names}
        self.shown = {n: by_category() for n in names}
        self.tokens: dict[str, list[int]] = {}
        self.shown_turn_only = {n: by_category() for n in names}

    def _inject(self, key: str, hits: list[Hit], q: Question, now: datetime) -> float:
        """The block's tokens (and without a budget) under ``key``; returns the share of evidence in it."""
        items = [{"id": h[0], "content": h[1], "valid_from": h[2]} for h in hits]
        block = format_memories(items, max_tokens=self.max_tokens, query=q.question, now=now)
        self.tokens.setdefault(key, []).append(block.tokens)
        whole = format_memories(items, max_tokens=10**9, query=q.question, now=now)
        self.tokens.setdefault(f"{key}-unbudgeted", []).append(whole.tokens)
        return recall_at_k(q.evidence, block.included, len(block.included))

    def add(self, name: str, q: Question, hits: list[Hit], plain: dict[str, str], now: datetime) -> None:
        """Score one question's results (``plain``: each turn's text without context)."""
        for k in self.ks:
            _put(self.recall[name][k], q.category, recall_at_k(q.evidence, [h[0] for h in hits], k))
        _put(self.shown[name], q.category, self._inject(name, hits, q, now))
        if self.turn_only:  # what the block would cost if only the turn itself were shown
            turns = [(d, plain.get(d, c), t) for d, c, t in hits]
            _put(self.shown_turn_only[name], q.category, self._inject(f"{name}-turn-only", turns, q, now))

    def result(self) -> dict[str, Any]:
        """The metric part of the ``--json`` dict."""
        first = next(iter(self.recall.values()), {})
        out: dict[str, Any] = {
            "retrievers": {n: {f"recall@{k}": _means(by_k[k]) for k in self.ks} for n, by_k in self.recall.items()},
            "median_injected_tokens": {key: float(statistics.median(v)) for key, v in self.tokens.items()},
            "injected_recall": {n: _means(by_c) for n, by_c in self.shown.items()},
            "questions_by_category": {c: len(v) for c, v in first.get(max(self.ks), {}).items()},
            "max_tokens": self.max_tokens,
        }
        if self.turn_only:
            out["injected_recall_turn_only"] = {n: _means(by_c) for n, by_c in self.shown_turn_only.items()}
        return out


def evaluate_locomo(
    path: str | Path,
    *,
    ks: Sequence[int] = (5, 10),
    audit: str | Path | None = None,
    limit_conversations: int | None = None,
    text_format: str = "date+prev+next",
    retrievers: Sequence[str] = BASELINES,
    variants: dict[str, dict[str, Any]] | None = None,
    embeddings: Embeddings | None = None,
    max_tokens: int = 600,
    progress: Callable[[str], None] | None = None,
    speaker_entity: bool = True,
) -> dict[str, Any]:
    """Run the benchmark; returns the ``--json`` dict (``retrievers``, ``median_injected_tokens``...).

    Every retriever is asked once for ``max(ks)`` results. ``text_format``: see :func:`index_text` (the
    default, the turn with its date and both neighbours, measured best: dense recall@10 0.33 → 0.51, BM25
    0.60 → 0.70). ``variants``: extra ``LifecycleRetriever`` settings to measure, by name.
    ``max_tokens``: the injected block's budget. ``speaker_entity``: each turn's speaker is its episode's
    ``entity``, so a question naming one speaker prefers that speaker's turns.
    """
    parts = check_text_format(text_format)
    unknown = sorted(set(retrievers) - set(BASELINES))
    if unknown:
        msg = f"Unknown retriever(s) {unknown}; choose from {list(BASELINES)} or pass `variants`."
        raise ValueError(msg)
    stats = EvidenceStats()
    conversations = load_locomo(path, stats=stats, limit=limit_conversations)
    if audit is not None:
        entries = json.loads(Path(audit).read_text(encoding="utf-8"))
        apply_audit(conversations, entries, stats, limited=limit_conversations is not None)
    for conv in conversations:
        stats.questions_without_evidence += sum(not q.evidence for q in conv.questions)
    if embeddings is None:
        from langchain_lifecycle_memory.store.embeddings import UniversalSentenceEncoderEmbeddings

        embeddings = UniversalSentenceEncoderEmbeddings()
    cached = CachedEmbeddings(embeddings)
    kmax = max(ks)
    names = [*retrievers, *(variants or {})]
    tally = _Tally(names, ks, max_tokens, turn_only=bool(parts - {"date"}))
    timings: dict[str, float] = dict.fromkeys(["ingest", *names], 0.0)
    for conv in conversations:
        t0 = time.perf_counter()
        data = _ingest(conv, cached, text_format, speaker_entity)
        runners = _runners(data, names, variants or {}, cached, kmax)
        timings["ingest"] += time.perf_counter() - t0
        questions = [q for q in conv.questions if q.evidence]
        plain = {t.dia_id: index_text(t) for t in conv.turns}
        for name, run in runners.items():
            t1 = time.perf_counter()
            for q in questions:
                tally.add(name, q, run(q.question), plain, conv.asked_at)
            timings[name] += time.perf_counter() - t1
        drop_store(data.memory.store)
        if progress is not None:
            progress(f"{conv.sample_id}: {len(conv.turns)} turns, {len(questions)} questions")
    return {
        **tally.result(),
        "ks": list(ks),
        "conversations": [c.sample_id for c in conversations],
        "text_format": text_format,
        "speaker_entity": speaker_entity,
        "audit": None if audit is None else str(audit),
        "seconds": {k: round(v, 1) for k, v in timings.items()},
        "notes": stats.notes(),
    }
