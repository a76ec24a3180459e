"""The full read's decoding of stored documents equals validating each into a ``MemoryRecord``."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from langchain_lifecycle_memory import MemoryRecord
from langchain_lifecycle_memory.read._decode import _instants, decode, fields_of_records
from langchain_lifecycle_memory.read._snapshot import build_snapshot, snapshot_of_documents
from langchain_lifecycle_memory.read._splice import micros
from langchain_lifecycle_memory.schema import MemoryStatus, ensure_aware
from langchain_lifecycle_memory.store._records import parse_record
from tests.unit_tests.test_scale import NS, T0, _same_snapshot, _slot_record, _text


def _record_doc(rng: random.Random, i: int) -> str:
    if rng.random() < 0.5:
        r = _slot_record(rng, i)
    else:
        r = MemoryRecord(
            namespace=NS,
            content=_text(rng) or "Caroline moved to Kyoto",
            kind="episode",
            created_at=T0 + timedelta(seconds=rng.randint(0, 10**6), microseconds=rng.choice([0, 1, 999_999])),
            valid_from=T0 - timedelta(days=rng.randint(0, 10**5)),
            expires_at=None if rng.random() < 0.7 else T0 + timedelta(days=rng.randint(-9, 9)),
        )
        if rng.random() < 0.3:
            r = r.transition(MemoryStatus.ARCHIVED, at=T0 + timedelta(days=3))
    return json.dumps(r.to_value())


def _odd(rng: random.Random, doc: str) -> str:
    """The same document in another writer's form, or one validation changes or refuses."""
    value = json.loads(doc)
    change = rng.choice(
        [
            ("kind", " fact "),  # stripped by validation
            ("kind", "  "),  # refused
            ("status", "bogus"),
            ("confidence", 1.5),
            ("confidence", "0.5"),  # a string validation converts
            ("confidence", 1),
            ("created_at", "2024-01-01T10:00:00"),  # naive: taken as UTC
            ("created_at", "2024-01-01T12:00:00+02:00"),  # converted to UTC
            ("created_at", "2024-02-30T10:00:00Z"),  # no such day
            ("created_at", 1_700_000_000),  # a timestamp
            ("updated_at", "2024-01-01T10:00:00.5Z"),
            ("valid_to", "1900-01-01T00:00:00Z"),  # before valid_from: refused
            ("valid_from", None),
            ("content", "   "),
            ("content", "a\x00b"),
            ("content", "x\ud800"),
            ("entity", 5),
            ("extra_field", 1),
            ("source", {"extractor": "rule", "bogus": 1}),
            ("source", {"extractor": "rule", "message_ids": ["m1", 2]}),
            ("metadata", []),
            ("cardinality", "many"),
            ("id", None),
        ]
    )
    if change[0] == "valid_from":
        value.pop("valid_from")
    else:
        value[change[0]] = change[1]
    return json.dumps(value)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_decoded_documents_build_the_snapshot_validated_records_build(seed: int) -> None:
    rng = random.Random(seed)
    docs = [_record_doc(rng, i) for i in range(300)]
    docs += [_odd(rng, _record_doc(rng, 1000 + i)) for i in range(80)]
    docs += [json.dumps({"note": "a plain item"}), json.dumps([1, 2]), '{"content": NaN}']
    rng.shuffle(docs)
    pairs = [(r, d) for d in docs if (r := parse_record(NS, d)) is not None and r.valid_from is not None]
    # Documents without valid_from get "now" from validation on every parse: compare without them.
    docs = [d for d in docs if "valid_from" in json.loads(d) or not isinstance(json.loads(d), dict)]
    pairs = [(r, d) for r, d in pairs if d in docs]
    pairs.sort(key=lambda p: (p[0].created_at, p[0].valid_from, p[0].id))
    expected = build_snapshot(None, [r for r, _ in pairs], namespace=NS, documents=[d for _, d in pairs])
    got = snapshot_of_documents(None, docs, namespace=NS)
    _same_snapshot(got, expected)
    assert got.texts == expected.texts and got.entity_alias == expected.entity_alias
    for name in ("attribute_code", "entity_code", "status_code", "kind_code", "valid_to", "expires_at", "fresh_at"):
        assert getattr(got, name).tolist() == getattr(expected, name).tolist(), name
    assert got.confidence.tolist() == expected.confidence.tolist()


@pytest.mark.parametrize("seed", [0, 1])
def test_each_document_decodes_to_the_validated_records_fields_or_is_left_out(seed: int) -> None:
    rng = random.Random(seed)
    for i in range(200):
        doc = _record_doc(rng, i)
        if i % 2:
            doc = _odd(rng, doc)
        record = parse_record(NS, doc)
        kept, fields, _ = decode(NS, [doc])
        if record is None:
            assert kept == []
            continue
        if "valid_from" not in json.loads(doc):
            continue
        assert kept == [doc]
        want = fields_of_records([record])
        for name, value in want.__dict__.items():
            got = getattr(fields, name)
            assert (got.tolist() if isinstance(got, np.ndarray) else got) == (
                value.tolist() if isinstance(value, np.ndarray) else value
            ), name


def test_timestamps_read_together_equal_one_by_one() -> None:
    rng = random.Random(5)
    stamps = []
    for _ in range(3000):
        t = datetime(rng.randint(1, 9999), rng.randint(1, 12), rng.randint(1, 28), tzinfo=timezone.utc)
        t += timedelta(seconds=rng.randint(0, 86399), microseconds=rng.choice([0, rng.randint(0, 999_999)]))
        stamps.append(MemoryRecord(namespace=NS, content="x", valid_from=t).to_value()["valid_from"])
    assert _instants(stamps).tolist() == [micros(ensure_aware(s)) for s in stamps]
    assert _instants(["2024-01-01T10:00:00+00:00"]) is None  # not pydantic's form: one by one, by the model
    assert _instants(["2023-02-29T10:00:00Z"]) is None
    assert _instants(["2024-01-01T10:00:00Z\n2024-01-01T10:00:00Z"]) is None
