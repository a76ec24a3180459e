"""The full read's decoding of stored documents equals validating each into a ``MemoryRecord``."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from langchain_lifecycle_memory import MemoryRecord
from langchain_lifecycle_memory.read._decode import _all_vouched, _columns, _instants, decode, fields_of_records
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
            ("source", {"extractor": "rule", "message_ids": ""}),
            ("source", {"extractor": "rule", "message_ids": ["m1"], "thread_id": "t"}),
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


@pytest.mark.parametrize(("seed", "odd"), [(0, 80), (1, 80), (2, 1), (3, 0)])
def test_decoded_documents_build_the_snapshot_validated_records_build(seed: int, odd: int) -> None:
    rng = random.Random(seed)
    docs = [_record_doc(rng, i) for i in range(300)]
    docs += [_odd(rng, _record_doc(rng, 1000 + i)) for i in range(odd)]
    if odd > 1:
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
    stamps += ["2000-02-29T00:00:00Z", "1900-03-01T23:59:59.000001Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"]
    instants, ok = _instants(stamps)
    assert ok.all() and instants.tolist() == [micros(ensure_aware(s)) for s in stamps]
    odd = [  # not pydantic's form, or no such instant: each goes through the model
        "2024-01-01T10:00:00+00:00",
        "2024-01-01T10:00:00",
        "2023-02-29T10:00:00Z",
        "1900-02-29T10:00:00Z",
        "2024-04-31T10:00:00Z",
        "0000-01-01T00:00:00Z",
        "2024-13-01T00:00:00Z",
        "2024-01-01T24:00:00Z",
        "2024-01-01T10:60:00Z",
        "2024-01-01T10:00:60Z",
        "2024-01-01T10:00:00.5Z",
        "2024-01-01T10:00:00.1234567Z",
        "2024-01-01T10:00:00.12345aZ",
        "2024-01-01 10:00:00Z",
        "2024-01-01T10:00:00Z\n2024-01-01T10:00:00Z",
        " 2024-01-01T10:00:00Z",
        "２０２４-01-01T10:00:00Z",
        "",
    ]
    assert not _instants(odd)[1].any()


def test_documents_read_a_field_at_a_time_still_leave_out_what_validation_refuses() -> None:
    rng = random.Random(9)
    docs = [_record_doc(rng, i) for i in range(50)]
    assert _all_vouched(_columns([json.loads(d) for d in docs]))  # the usual case: checked a field at a time
    for field, bad in (("created_at", "2024-02-30T10:00:00Z"), ("valid_to", "1900-01-01T00:00:00Z")):
        value = json.loads(_record_doc(rng, 99))
        value[field] = bad  # the form is right, the instant is not: the model refuses the record
        docs.append(json.dumps(value))
    naive = json.loads(_record_doc(rng, 100))
    naive["updated_at"] = "2024-01-01T10:00:00"  # another writer's form: the model reads it
    docs.append(json.dumps(naive))
    assert _all_vouched(_columns([json.loads(d) for d in docs]))
    kept, fields, parsed = decode(NS, docs)
    records = sorted(
        (r for d in docs if (r := parse_record(NS, d)) is not None), key=lambda r: (r.created_at, r.valid_from, r.id)
    )
    assert len(kept) == len(records) == 51 and list(parsed.values()) == [r for r in records if r.id == naive["id"]]
    assert fields.ids == [r.id for r in records]
    assert fields.updated.tolist() == fields_of_records(records).updated.tolist()


@pytest.mark.parametrize(
    ("field", "bad"),
    [("message_ids", ""), ("message_ids", None), ("message_ids", "m1"), ("extractor", 3), ("thread_id", [])],
)
def test_a_document_read_a_field_at_a_time_with_an_odd_source_is_left_to_the_model(field: str, bad: object) -> None:
    rng = random.Random(3)
    values = [json.loads(_record_doc(rng, i)) for i in range(20)]
    values[7].setdefault("source", {})[field] = bad  # a default source is left out of the stored document
    docs = [json.dumps(v) for v in values]
    kept, _, _ = decode(NS, docs)
    assert len(kept) == sum(parse_record(NS, d) is not None for d in docs) == 19
