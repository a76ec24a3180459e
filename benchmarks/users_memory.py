"""Where the many-users load's memory goes: raw Chroma steps from the baseline's write to ours.

Each variant loads ``--users`` x 20 records into 16 shared collections in a fresh process
and prints its RSS growth after the load (and once glibc's ``malloc_trim`` has returned the
heap it keeps free). The raw variants add one thing at a time to plain ``langchain-chroma``'s
write (``upsert`` of texts with a ``{"user": ...}`` metadata), up to the calls our store makes:

* ``plain``: the baseline's write, through raw ``chromadb``;
* ``+meta``: our row metadata (11 keys) instead of ``{"user"}``;
* ``+doc``: also our stored document (the record's JSON) instead of the text;
* ``+get``: also the ``get`` by ids of the rows before the upsert;
* ``+registry``: also the registry collection's calls (get, upsert, get, upsert);
* ``+compact``: ``+registry`` with the compact document (``MemoryRecord.to_value`` leaves out
  empty fields) instead of the record's every field;
* ``ours``: ``ChromaMemoryStore.put_records`` (``ours-notrim``: with ``store.trim_memory = False``,
  see ``store/memtrim.py``); ``langchain-chroma``: the baseline itself.

Run: ``python benchmarks/users_memory.py --users 2000 [--variants ...]``. Diagnostic only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import uuid
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _synthetic import sentences
from scale import HashEmbeddings, client, disk_mb, rss_mb, trimmed_rss

STEPS = ["plain", "+meta", "+doc", "+get", "+registry", "+compact"]
VARIANTS = [*STEPS, "ours", "ours-notrim", "langchain-chroma"]


def _record_row(ns: tuple[str, str], text: str, now: float, compact: bool) -> tuple[str, str, dict[str, Any]]:
    from langchain_lifecycle_memory import MemoryRecord
    from langchain_lifecycle_memory.store import chroma as C

    r = MemoryRecord(namespace=ns, content=text)
    value = r.to_value() if compact else r.model_dump(mode="json", exclude={"namespace", "cardinality"})
    meta = {C.SYS_NS: ".".join(ns), C.SYS_KEY: r.id, C.SYS_CREATED: now, C.SYS_UPDATED: now, C.SYS_INDEXED: True}
    meta[C.SYS_FIELDS] = json.dumps(["content"])
    meta.update(C.flat_metadata(value))
    return f"{'.'.join(ns)}\x00{r.id}", C.dumps_value(value), meta


def load(variant: str, users: int, cl: Any, texts: list[str], marks: list[float]) -> None:
    """Load ``users`` x 20 records; ``marks`` gets the RSS after each quarter of the users."""
    emb = HashEmbeddings()
    if variant in ("ours", "ours-notrim"):
        from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord

        store = ChromaMemoryStore(client=cl, embeddings=emb, collection_prefix="scale", layout="bucketed")
        store.trim_memory = variant == "ours"
        for u in range(users):
            ns = ("memories", f"u{u}")
            store.put_records([MemoryRecord(namespace=ns, content=t) for t in texts[u * 20 : (u + 1) * 20]])
            _mark(u, users, marks)
        return
    if variant == "langchain-chroma":
        from langchain_chroma import Chroma

        buckets = [Chroma(client=cl, collection_name=f"lc_b{b}", embedding_function=emb) for b in range(16)]
        for u in range(users):
            b = buckets[zlib.crc32(f"u{u}".encode()) % 16]
            b.add_texts(texts[u * 20 : (u + 1) * 20], metadatas=[{"user": f"u{u}"}] * 20)
            _mark(u, users, marks)
        return
    level = STEPS.index(variant)
    space = {"hnsw": {"space": "cosine"}}
    cols = [cl.get_or_create_collection(f"raw_b{b}", configuration=space, embedding_function=None) for b in range(16)]
    reg = cl.get_or_create_collection("registry", embedding_function=None) if level >= 4 else None
    for u in range(users):
        ns = ("memories", f"u{u}")
        col = cols[zlib.crc32(f"u{u}".encode()) % 16]
        chunk = texts[u * 20 : (u + 1) * 20]
        now = time.time()
        rows = [_record_row(ns, t, now, level >= 5) for t in chunk]
        ids = [r[0] for r in rows] if level >= 1 else [str(uuid.uuid4()) for _ in chunk]
        metas = [r[2] for r in rows] if level >= 1 else [{"user": f"u{u}"}] * 20
        docs = [r[1] for r in rows] if level >= 2 else chunk
        if reg is not None:
            reg.get(ids=[".".join(ns)], include=[])
            reg.upsert(
                ids=[".".join(ns)], embeddings=[[1.0]], metadatas=[{"namespace": json.dumps(ns), "revision": "initial"}]
            )
        if level >= 3:
            col.get(ids=ids, include=["metadatas"])
        col.upsert(ids=ids, embeddings=emb.embed_documents(chunk), documents=docs, metadatas=metas)
        if reg is not None:
            reg.get(ids=[".".join(ns)], include=["metadatas"])
            reg.upsert(
                ids=[".".join(ns)],
                embeddings=[[1.0]],
                metadatas=[{"namespace": json.dumps(ns), "revision": uuid.uuid4().hex}],
            )
        _mark(u, users, marks)


def _mark(u: int, users: int, marks: list[float]) -> None:
    if (u + 1) % max(1, users // 4) == 0 and len(marks) < 4:
        marks.append(rss_mb())


def child(variant: str, users: int) -> dict[str, Any]:
    import langchain_chroma  # noqa: F401

    import langchain_lifecycle_memory.read.retrieval  # noqa: F401

    texts = sentences(users * 20)
    workdir = Path(tempfile.mkdtemp(prefix="users-memory-"))
    base = rss_mb()
    cl = client(workdir, None)
    t0 = time.perf_counter()
    marks: list[float] = []
    load(variant, users, cl, texts, marks)
    out = {
        "variant": variant,
        "load_s": round(time.perf_counter() - t0, 1),
        "rss_after_load_mb": round(rss_mb() - base, 1),
    }
    out["quarters_mb"] = [round(m - base, 1) for m in marks]
    out["trimmed_mb"] = round(trimmed_rss() - base, 1)
    out["disk_mb"] = round(disk_mb(workdir), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--variants", nargs="+", default=VARIANTS, choices=VARIANTS)
    parser.add_argument("--child", default=None)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.users)))
        return
    head = f"{'variant':18} {'load s':>8} {'RSS after load':>15} {'trimmed':>9} {'disk':>8}"
    print(head + "  RSS after each quarter of the users")
    for v in args.variants:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", v, "--users", str(args.users)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode:
            print(v, "error", proc.stderr[-800:])
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        line = f"{v:18} {r['load_s']:8.1f} {r['rss_after_load_mb']:12.1f} MB {r['trimmed_mb']:6.1f} MB"
        print(f"{line} {r['disk_mb']:5.1f} MB  {r['quarters_mb']}", flush=True)


if __name__ == "__main__":
    main()
