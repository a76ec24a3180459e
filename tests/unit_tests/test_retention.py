from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from langchain_lifecycle_memory.schema import MemoryRecord, MemoryStatus
from langchain_lifecycle_memory.store.retention import DEFAULT_TTLS, RetentionPolicy

UTC = timezone.utc
T0 = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)


def _record(kind: str = "preference", **kw: Any) -> MemoryRecord:
    return MemoryRecord(namespace=("memories", "u1"), content=f"a {kind}", kind=kind, valid_from=T0, **kw)


def test_defaults_per_kind() -> None:
    policy = RetentionPolicy()
    assert policy.ttl_for("preference") is None  # no time limit: stays until superseded or forgotten
    assert policy.ttl_for("profile") is None
    assert policy.ttl_for("fact") is None
    assert policy.ttl_for("event") == timedelta(days=90)
    assert policy.ttl_for("episode") == timedelta(days=30)
    assert policy.ttl_for("sensitive") == timedelta(days=30)
    assert policy.ttl_for("my_custom_kind") is None
    assert policy.archived_retention == timedelta(days=365)


def test_ttl_hint_of_seven_days_beats_preference_default() -> None:
    policy = RetentionPolicy()
    assert policy.expires_at_for("preference", T0) is None
    assert policy.expires_at_for("preference", T0, ttl_days=7) == T0 + timedelta(days=7)


def test_ttl_hint_also_applies_to_long_lived_kinds() -> None:
    assert RetentionPolicy().expires_at_for("profile", T0, ttl_days=2) == T0 + timedelta(days=2)


def test_explicit_deadline_wins_over_hint_and_default() -> None:
    deadline = datetime(2030, 1, 1, tzinfo=UTC)
    assert RetentionPolicy().expires_at_for("event", T0, ttl_days=7, explicit=deadline) == deadline


def test_profile_never_expires() -> None:
    assert RetentionPolicy().expires_at_for("profile", T0) is None


def test_overrides_merge_with_defaults_and_numbers_are_days() -> None:
    policy = RetentionPolicy(ttl={"Event": 7, "preference": None}, default_ttl=timedelta(days=3))
    assert policy.ttl_for("event") == timedelta(days=7)
    assert policy.ttl_for("preference") is None
    assert policy.ttl_for("fact") == DEFAULT_TTLS["fact"]
    assert policy.expires_at_for("note", T0) == T0 + timedelta(days=3)


def test_iso_duration_strings_are_accepted() -> None:
    assert RetentionPolicy(ttl={"event": "P2W"}).ttl_for("event") == timedelta(days=14)


@pytest.mark.parametrize("bad", [0, -5, timedelta(0), "-P1D"])
def test_non_positive_ttl_is_rejected_with_a_hint(bad: Any) -> None:
    with pytest.raises(ValueError, match="None to keep records forever"):
        RetentionPolicy(ttl={"event": bad})


def test_bad_ttl_hint_is_rejected() -> None:
    with pytest.raises(ValueError, match="positive number of days"):
        RetentionPolicy().expires_at_for("event", T0, ttl_days=0)


def test_naive_datetimes_are_treated_as_utc() -> None:
    got = RetentionPolicy().expires_at_for("event", datetime(2024, 3, 4, 9, 0))
    assert got == T0 + timedelta(days=90)
    assert got is not None and got.tzinfo is not None
    naive_explicit = RetentionPolicy().expires_at_for("event", T0, explicit=datetime(2025, 1, 1))
    assert naive_explicit == datetime(2025, 1, 1, tzinfo=UTC)


def test_other_timezones_compare_correctly() -> None:
    tz8 = timezone(timedelta(hours=8))
    start = datetime(2024, 3, 4, 17, 0, tzinfo=tz8)  # == T0
    assert RetentionPolicy().expires_at_for("event", start) == T0 + timedelta(days=90)


def test_sweep_archives_expired_active_and_pending_records() -> None:
    weekly = _record(expires_at=T0 + timedelta(days=7))
    pending = _record(kind="event", status=MemoryStatus.PENDING, expires_at=T0 + timedelta(days=1))
    job = _record(kind="profile")
    plan = RetentionPolicy().sweep_plan([weekly, job, pending], datetime(2024, 9, 1, tzinfo=UTC))
    assert plan.archive_ids == [weekly.id, pending.id]
    assert plan.archive[0].since == T0 + timedelta(days=7)
    assert plan.archive[0].reason == "expired"
    assert plan.delete == []


def test_sweep_keeps_records_not_yet_expired() -> None:
    r = _record(expires_at=T0 + timedelta(days=7))
    plan = RetentionPolicy().sweep_plan([r], T0 + timedelta(days=6))
    assert plan.empty


def test_sweep_applies_kind_default_to_unstamped_records() -> None:
    r = _record(kind="episode")
    at = T0 + timedelta(days=31)
    assert RetentionPolicy().sweep_plan([r], at).archive_ids == [r.id]
    assert RetentionPolicy(stamp_missing=False).sweep_plan([r], at).empty


def test_sweep_deletes_archived_records_past_retention() -> None:
    old = _record().transition("archived", at=T0 + timedelta(days=10))
    recent = _record().transition("archived", at=T0 + timedelta(days=300))
    now = T0 + timedelta(days=10 + 365)
    plan = RetentionPolicy().sweep_plan([old, recent], now)
    assert plan.delete_ids == [old.id]
    assert plan.delete[0].since == T0 + timedelta(days=10)
    assert plan.archive == []


def test_archived_since_is_the_later_of_valid_to_and_updated_at() -> None:
    # Back-dated: the fact stopped being true long ago but was archived only now.
    r = _record().transition("archived", at=T0 + timedelta(days=400), valid_to=T0 + timedelta(days=1))
    plan = RetentionPolicy().sweep_plan([r], T0 + timedelta(days=400))
    assert plan.delete == []
    assert RetentionPolicy().archived_since(r) == T0 + timedelta(days=400)


def test_archived_retention_none_keeps_history_forever() -> None:
    r = _record().transition("archived", at=T0)
    plan = RetentionPolicy(archived_retention=None).sweep_plan([r], T0 + timedelta(days=10_000))
    assert plan.empty


def test_sweep_accepts_naive_now() -> None:
    r = _record(expires_at=T0 + timedelta(days=7))
    plan = RetentionPolicy().sweep_plan([r], datetime(2024, 9, 1))
    assert plan.archive_ids == [r.id]
    assert plan.now.tzinfo is not None


def test_stamp_fills_only_missing_deadlines() -> None:
    policy = RetentionPolicy()
    assert policy.stamp(_record("event")).expires_at == T0 + timedelta(days=90)
    assert policy.stamp(_record("preference"), ttl_days=7).expires_at == T0 + timedelta(days=7)
    assert policy.stamp(_record("profile")).expires_at is None
    fixed = _record(expires_at=T0 + timedelta(days=1))
    assert policy.stamp(fixed).expires_at == T0 + timedelta(days=1)


def test_plan_applies_cleanly_with_transition() -> None:
    r = _record(expires_at=T0 + timedelta(days=7))
    (action,) = RetentionPolicy().sweep_plan([r], T0 + timedelta(days=100)).archive
    archived = r.transition("archived", at=T0 + timedelta(days=100), valid_to=action.since)
    assert archived.valid_to == T0 + timedelta(days=7)
