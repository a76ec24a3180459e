"""LangChain's standard retriever suite, on an in-memory Chroma client."""

from __future__ import annotations

import functools
import uuid
from datetime import datetime, timezone
from typing import Any

import chromadb
from langchain_core.retrievers import BaseRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_lifecycle_memory import ChromaMemoryStore
from langchain_lifecycle_memory.read.retrieval import LifecycleRetriever
from langchain_lifecycle_memory.schema import MemoryRecord
from langchain_lifecycle_memory.store.embeddings import UniversalSentenceEncoderEmbeddings

NS = ("memories", "standard")
AT = datetime(2024, 5, 1, tzinfo=timezone.utc)
FACTS = [
    ("drink", "oat milk latte", "The user drinks an oat milk latte every morning."),
    ("tea", "jasmine tea", "The user drinks jasmine tea at work."),
    ("coffee_bean", "Yirgacheffe", "The user's favourite coffee beans are Yirgacheffe."),
    ("alcohol", "no alcohol", "The user does not drink alcohol."),
    ("pet", "Maple", "The user has a golden retriever named Maple."),
]


@functools.cache
def _store() -> ChromaMemoryStore:
    store = ChromaMemoryStore(
        client=chromadb.EphemeralClient(),
        embeddings=UniversalSentenceEncoderEmbeddings(),
        collection_prefix=f"std{uuid.uuid4().hex[:8]}",
    )
    store.put_records(
        [MemoryRecord(namespace=NS, content=c, entity="user", attribute=a, value=v, valid_from=AT) for a, v, c in FACTS]
    )
    return store


class TestLifecycleRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return LifecycleRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        # The threshold is the default one: at least three memories are about drinks.
        return {"store": _store(), "namespace": NS, "now": AT}

    @property
    def retriever_query_example(self) -> str:
        return "What do I like to drink?"
