"""The LoCoMo benchmark's baselines (BM25, LangGraph's ``InMemoryStore``) and the embedding cache all share."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings

if TYPE_CHECKING:
    from langchain_lifecycle_memory.eval.locomo import Turn


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


def bm25_retriever(texts: list[str], turns: list[Turn], k: int) -> Retriever:
    """BM25 (bm25s, the package's tokeniser) over the turns' indexed texts."""
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
        return [(turns[i].dia_id, texts[i], turns[i].at) for i in top]

    return run


def inmemory_retriever(
    embeddings: Embeddings, sample_id: str, texts: list[str], turns: list[Turn], k: int
) -> Retriever:
    """LangGraph's ``InMemoryStore`` semantic search over the turns' indexed texts."""
    from langgraph.store.memory import InMemoryStore

    dims = len(embeddings.embed_query("dimension probe"))
    store = InMemoryStore(index={"dims": dims, "embed": embeddings, "fields": ["text"]})
    ns = ("locomo", sample_id)
    # One put at a time: InMemoryStore.batch fails on two equal texts in one batch
    # (langgraph: "Number of embeddings does not match number of indices"); vectors are cached.
    for turn, text in zip(turns, texts, strict=True):
        store.put(ns, turn.dia_id, {"text": text})
    return lambda query: [(item.key, item.value["text"], None) for item in store.search(ns, query=query, limit=k)]
