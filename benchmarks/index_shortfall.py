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
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever, MemoryRecord
from langchain_lifecycle_memory.read import retrieval as R
from langchain_lifecycle_memory.store._handles import Handle
from tests.fake_embeddings import CharEmbeddings  # the model-free embedder of the tests

WORDS = ["Rust", "Maya", "ThinkPad", "Spanish", "tea", "latte", "editor", "Tesla", "用户喜欢钢琴", "用户喜欢三体"]


def _raw(store: ChromaMemoryStore, ns: tuple[str, ...]) -> object:
    col = store._col(ns)
    while isinstance(col, Handle):
        col = col._col
    return getattr(col, "_col", col)  # a bucketed namespace's view: its bucket


def _embedder(name: str) -> Embeddings:
    if name == "char":
        return CharEmbeddings()
    from langchain_lifecycle_memory.store.embeddings import E5SmallEmbeddings, UniversalSentenceEncoderEmbeddings

    return E5SmallEmbeddings() if name == "e5" else UniversalSentenceEncoderEmbeddings()


def trial(seed: int, rows: int, embeddings: Embeddings) -> tuple[bool, bool, bool, bool]:
    """``(Chroma answered short, the search showed the new note, it is among the 50 nearest, Chroma's 50 hold it)``."""
    rng = random.Random(seed)
    ns = ("memories", "shortfall")
    with tempfile.TemporaryDirectory() as folder:
        store = ChromaMemoryStore(Path(folder) / "db", embeddings=embeddings, collection_prefix="short")
        notes = [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(rows)]
        store.put_records([MemoryRecord(namespace=ns, content=t) for t in notes])
        retriever = LifecycleRetriever(store=store, namespace=ns, episode_embeddings=None)
        retriever.invoke("editor")
        new = MemoryRecord(namespace=ns, content="用户改喝铁观音了", entity="user", attribute="tea", value="铁观音")
        store.put_record(new)
        col = _raw(store, ns)
        total = col.count()  # type: ignore[attr-defined]
        answer = col.query(query_embeddings=[embeddings.embed_query(new.content)], n_results=total)  # type: ignore[attr-defined]
        short = len(answer["ids"][0]) < total
        vector = embeddings.embed_query("铁观音")
        got = col.get(include=["embeddings"])  # type: ignore[attr-defined]
        matrix = np.asarray(got["embeddings"], dtype=np.float64)
        sims = matrix @ np.asarray(vector) / np.linalg.norm(matrix, axis=1) / np.linalg.norm(vector)
        mine = [j for j, i in enumerate(got["ids"]) if i.endswith(new.id)][0]
        nearest = int((sims > sims[mine]).sum()) < 50
        fifty = col.query(query_embeddings=[vector], n_results=50)["ids"][0]  # type: ignore[attr-defined]
        in_fifty = any(i.endswith(new.id) for i in fifty)
        shown = new.content in [d.page_content for d in retriever.invoke("铁观音")]
        R._SNAPSHOTS.clear()
        return short, shown, nearest, in_fifty


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--rows", type=int, default=42)
    parser.add_argument("--embedder", choices=["char", "use", "e5"], default="char", help="char: no model")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    R.SMALL_NAMESPACE = 0  # every namespace down the big-namespace path
    short = shown_when_short = missed = near = lost = 0
    embeddings = _embedder(args.embedder)
    for seed in range(args.trials):
        was_short, shown, nearest, in_fifty = trial(seed, args.rows, embeddings)
        short += was_short
        shown_when_short += was_short and shown
        missed += not shown
        near += nearest
        lost += nearest and not in_fifty
    print(f"trials {args.trials}, rows {args.rows} + 1, embedder {args.embedder}")
    print(f"Chroma answered short (a row unreachable): {short}")
    print(f"  of those, the search still showed the new note: {shown_when_short}")
    print(f"searches that missed the new note: {missed}")
    print(f"the note among the 50 nearest by exact cosine: {near}; of those, missing from Chroma's 50: {lost}")


if __name__ == "__main__":
    main()
