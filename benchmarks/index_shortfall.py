"""How often Chroma's HNSW index answers a query short, and whether a search still finds the row it lost.

Each trial: a fresh embedded store, ``--rows`` short notes over a small vocabulary (so
several share a vector), one search (the snapshot is warm), one more note written, then

- Chroma's own answer: the collection queried for every row it holds (``n_results`` = rows);
- a ``LifecycleRetriever`` search for the new note, its namespace taken down the path of
  big namespaces (the store's nearest-ids query instead of vectors in the snapshot).

Prints the trials where Chroma answered short and, of those, how many searches still
showed the new note. The loss depends on the graph's random levels and the order of ids,
so it shows up in a few percent of trials::

    python benchmarks/index_shortfall.py --trials 100
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import warnings
import zlib
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever, MemoryRecord
from langchain_lifecycle_memory.read import retrieval as R
from langchain_lifecycle_memory.store._handles import Handle

WORDS = ["Rust", "Maya", "ThinkPad", "Spanish", "tea", "latte", "editor", "Tesla", "用户喜欢钢琴", "用户喜欢三体"]


class CharVectors(Embeddings):
    """A normalised sum of one fixed random direction per character (no model)."""

    def _one(self, text: str) -> list[float]:
        out = np.zeros(64)
        for ch in text:
            out += np.random.default_rng(zlib.crc32(ch.encode("utf-8"))).standard_normal(64)
        norm = float(np.linalg.norm(out))
        return (out / norm).tolist() if norm else out.tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def _raw(store: ChromaMemoryStore, ns: tuple[str, ...]) -> object:
    col = store._col(ns)
    while isinstance(col, Handle):
        col = col._col
    return getattr(col, "_col", col)  # a bucketed namespace's view: its bucket


def trial(seed: int, rows: int) -> tuple[bool, bool]:
    """``(Chroma answered short, the search showed the new note)``."""
    rng = random.Random(seed)
    ns = ("memories", "shortfall")
    with tempfile.TemporaryDirectory() as folder:
        store = ChromaMemoryStore(Path(folder) / "db", embeddings=CharVectors(), collection_prefix="short")
        notes = [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(rows)]
        store.put_records([MemoryRecord(namespace=ns, content=t) for t in notes])
        retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None)
        retriever.invoke("editor")
        new = MemoryRecord(namespace=ns, content="用户改喝铁观音了", entity="user", attribute="tea", value="铁观音")
        store.put_record(new)
        col = _raw(store, ns)
        total = col.count()  # type: ignore[attr-defined]
        answer = col.query(query_embeddings=[CharVectors().embed_query(new.content)], n_results=total)  # type: ignore[attr-defined]
        short = len(answer["ids"][0]) < total
        shown = new.content in [d.page_content for d in retriever.invoke("铁观音")]
        R._SNAPSHOTS.clear()
        return short, shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--rows", type=int, default=42)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    R.SMALL_NAMESPACE = 0  # every namespace down the big-namespace path
    short = shown_when_short = missed = 0
    for seed in range(args.trials):
        was_short, shown = trial(seed, args.rows)
        short += was_short
        shown_when_short += was_short and shown
        missed += not shown
    print(f"trials {args.trials}, rows {args.rows} + 1")
    print(f"Chroma answered short (a row unreachable): {short}")
    print(f"  of those, the search still showed the new note: {shown_when_short}")
    print(f"searches that missed the new note: {missed}")


if __name__ == "__main__":
    main()
