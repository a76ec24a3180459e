"""What a write leaves behind: compact record documents.

Every record's stored document is its ``to_value``; fields at their empty default are left
out (a plain record's document is about half as long).
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from langchain_lifecycle_memory import ChromaMemoryStore, MemoryRecord

DIMS = 16


class HashEmbeddings:
    fingerprint = {"provider": "tests.HashEmbeddings", "model": "hash16", "dims": DIMS, "version": 1}

    def _one(self, text: str) -> list[float]:
        rows = [np.random.default_rng(zlib.crc32(t.encode())).standard_normal(DIMS) for t in text.lower().split()]
        return (np.sum(rows, axis=0) + 1e-3).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def _document(store: ChromaMemoryStore, ns: tuple[str, ...], rid: str) -> dict[str, Any]:
    item = store.get(ns, rid)
    assert item is not None
    return dict(item.value)


def test_stored_documents_leave_out_empty_fields_and_read_back_equal(tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "s", embeddings=HashEmbeddings(), collection_prefix="foot")  # type: ignore[arg-type]
    ns = ("memories", "u1")
    plain = MemoryRecord(namespace=ns, content="The user likes green tea")
    full = MemoryRecord(
        namespace=ns,
        content="The user's editor is Vim",
        entity="user",
        attribute="editor",
        value="Vim",
        source={"extractor": "llm", "thread_id": "t1", "message_ids": ["m1"]},
        metadata={"note": None, "tags": []},
        supersedes="older",
    )
    store.put_records([plain, full])
    doc = _document(store, ns, plain.id)
    assert set(doc) == {"id", "content", "kind", "status", "confidence", "created_at", "updated_at", "valid_from"}
    assert (
        len(json.dumps(doc, ensure_ascii=False))
        < len(json.dumps(plain.model_dump(mode="json", exclude={"namespace", "cardinality"}), ensure_ascii=False))
        * 0.65
    )
    slot_doc = _document(store, ns, full.id)
    assert slot_doc["cardinality"] == "single"  # a slot record keeps the field that marks it in the catalogue
    assert slot_doc["metadata"] == {"note": None, "tags": []}  # a user's own values are kept as given
    assert store.get_record(ns, plain.id) == plain
    assert store.get_record(ns, full.id) == full
    assert store.get(ns, plain.id).value == plain.to_value()  # type: ignore[union-attr]
    assert [r.id for r in store.list_records(ns, attribute="editor")] == [full.id]
    assert [r["value"] for r in store.slot_catalogue(ns)] == ["Vim"]
