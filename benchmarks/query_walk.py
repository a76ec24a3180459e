"""A query's walk through the package: which modules one search enters, and how often it returns to one it left.

    python benchmarks/query_walk.py [--depth N]

One warm ``LifecycleRetriever.invoke`` on a small store is traced with ``sys.setprofile``:
every call into a package module is one step, consecutive steps in the same module are one
visit. Printed: the modules in the order first entered, the number of modules, and the returns
(a visit to a module that the walk had already left). Helpers shared by every layer
(``schema``, ``errors``) are listed apart and not counted. A readable read path goes top-down:
channels, then fusion and calibration, then the documents.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from _results import write

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever, MemoryRecord

PACKAGE = "langchain_lifecycle_memory"
SHARED = {f"{PACKAGE}.schema", f"{PACKAGE}.errors"}


def walk(retriever: Any, query: str, depth: int) -> list[tuple[str, str]]:
    """``(caller module, callee module)`` of each package call the search makes, down to ``depth``
    calls below ``_get_relevant_documents`` (deeper calls are a module's own business)."""
    edges: list[tuple[str, str]] = []
    stack: list[tuple[str, int]] = []  # (module, level) of the frames entered; level -1 before the entry

    def profiler(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            module, name = frame.f_globals.get("__name__", ""), frame.f_code.co_name
            level = stack[-1][1] if stack else -1
            if level < 0 and name == "_get_relevant_documents":
                level = 0
            elif level >= 0 and module.startswith(PACKAGE):
                level += 1
                caller = next((m for m, lv in reversed(stack) if m.startswith(PACKAGE) and lv >= 0), None)
                if level <= depth and caller and caller != module and module not in SHARED and caller not in SHARED:
                    edges.append((caller, module))
            stack.append((module, level))
        elif event == "return" and stack:
            stack.pop()

    sys.setprofile(profiler)
    try:
        retriever.invoke(query)
    finally:
        sys.setprofile(None)
    return edges


def back_edges(edges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Calls from a module into one that (directly or not) called into it: the walk going back up."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)

    def reaches(src: str, dst: str) -> bool:
        seen, todo = set(), [src]
        while todo:
            node = todo.pop()
            if node == dst:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, ()))
        return False

    return sorted({(a, b) for a, b in set(edges) if reaches(b, a)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=2, help="calls below the entry point that count (default 2)")
    parser.add_argument("--json", type=Path, help="default: benchmarks/results/query_walk.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = ChromaMemoryStore(tmp)
        ns = ("memories", "u1")
        store.put_records(
            [
                MemoryRecord(
                    namespace=ns,
                    content="The user uses Vim as their editor.",
                    entity="user",
                    attribute="editor",
                    value="Vim",
                ),
                MemoryRecord(
                    namespace=ns, content="用户对花生过敏。", entity="user", attribute="allergy", value="花生"
                ),
                MemoryRecord(
                    namespace=ns,
                    content="The user's sister Claire lives in Lyon.",
                    entity="sister_claire",
                    attribute="city",
                    value="Lyon",
                ),
            ]
        )
        retriever = LifecycleRetriever(store=store, namespace=ns)
        query = "Which editor should I install on the new laptop?"
        retriever.invoke(query)  # warm: the walk of a search, not of the first load
        edges = walk(retriever, query, args.depth)
    modules = list(dict.fromkeys(m for edge in edges for m in edge))
    back = back_edges(edges)
    short = [m.removeprefix(PACKAGE + ".") for m in modules]
    print(f"depth {args.depth} below _get_relevant_documents")
    print("modules entered, in order:", " -> ".join(short))
    print(f"modules: {len(modules)}   returns (calls back into a module that called into the caller): {len(back)}")
    for a, b in back:
        print(f"  {a.removeprefix(PACKAGE + '.')} -> {b.removeprefix(PACKAGE + '.')}")
    result = {"query": query, "depth": args.depth, "modules": short, "returns": [list(e) for e in back]}
    print("wrote", write("query_walk", result, args.json))


if __name__ == "__main__":
    main()
