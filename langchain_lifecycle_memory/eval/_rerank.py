"""An LLM relevance filter for ``LifecycleRetriever(reranker=...)``, to measure the hook (``--rerank-llm``).

One call per retrieval names the memories that help (best first) or ``none``; a reply without a usable
answer keeps every memory in its order, so a failing reranker never loses what retrieval found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

__all__ = ["LLMRelevanceFilter"]

_PROMPT = (
    "You filter a user's stored memories for an assistant. Given the user's question and numbered memories, "
    "answer with the numbers of the memories that would change or personalise the answer, most useful first, "
    "separated by commas. A memory that only shares a word with the question does not count. "
    "If none would, answer: none. Answer with the numbers or 'none' only."
)


class LLMRelevanceFilter(BaseDocumentCompressor):
    """Keeps the memories the model names as relevant, in its order."""

    model: BaseChatModel

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Any | None = None
    ) -> Sequence[Document]:
        """Ask once; keep the named documents (all of them if the reply names nothing usable)."""
        if not documents:
            return []
        listing = "\n".join(f"{i}. {d.page_content}" for i, d in enumerate(documents, start=1))
        reply = self.model.invoke(
            [SystemMessage(_PROMPT), HumanMessage(f"Question: {query}\n\nMemories:\n{listing}")],
            config={"callbacks": callbacks} if callbacks else None,
        )
        text = reply.text if hasattr(reply, "text") else str(reply)
        if re.fullmatch(r"\W*none\W*", text.strip(), re.IGNORECASE):
            return []
        order = [int(n) - 1 for n in re.findall(r"\d+", text)]
        chosen = list(dict.fromkeys(i for i in order if 0 <= i < len(documents)))
        return [documents[i] for i in chosen] if chosen else list(documents)
