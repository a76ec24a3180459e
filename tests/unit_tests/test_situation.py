"""The user's passing situation: facts stated with a near deadline accompany a request for the user while live."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_lifecycle_memory import ChromaMemoryStore, Fact, LifecycleMemory, LifecycleRetriever

AT = "2025-06-02T08:00:00Z"
RENTAL = "This week the user is driving a rental, a white Hyundai Kona, while their car is in the shop"
JOB = "The user works as a beekeeper"


def _memory(embeddings: Any, tmp_path: Path, **retriever: Any) -> LifecycleMemory:
    store = ChromaMemoryStore(tmp_path / "m", embeddings=embeddings)
    memory = LifecycleMemory(store, retriever=LifecycleRetriever(store=store, **retriever) if retriever else None)
    facts = [
        Fact(entity="user", attribute="job", value="beekeeper", content=JOB, kind="profile"),
        Fact(entity="user", attribute="rental_car", value="Hyundai Kona", content=RENTAL, kind="event", ttl_days=7),
        Fact(
            entity="brother_tom", attribute="injury", value="broken wrist", kind="event", ttl_days=10,
            content="The user's brother Tom has a broken wrist for the next ten days",
        ),
    ]  # fmt: skip
    memory.add_facts(facts, "ann", at=AT)
    return memory


def test_a_passing_situation_reaches_a_request_that_shares_no_words_with_it(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    ask = "Where should I stop to fill up on the drive to the lake on Saturday?"
    during = memory.inject(ask, "ann", now="2025-06-04T12:00:00Z").text
    assert "Hyundai Kona" in during
    assert "broken wrist" not in during  # someone else's situation is not the user's
    after = memory.inject(ask, "ann", now="2025-06-20T12:00:00Z").text
    assert "Hyundai Kona" not in after  # past its deadline: gone, like any expired memory
    general = memory.inject("How do tides work?", "ann", now="2025-06-04T12:00:00Z").text
    assert "Hyundai Kona" not in general  # a question about the world, not a request for the user


def test_situation_0_turns_it_off(embeddings: Any, tmp_path: Path) -> None:
    """Without the situation the rental comes only as one of the live facts shown when nothing matched (a live
    event is one of them); with that fallback off too, it does not come."""
    ask = "Where should I stop to fill up on the drive to the lake?"
    memory = _memory(embeddings, tmp_path, situation=0)
    explanation = memory.explain(ask, "ann", now="2025-06-04")
    assert all(c.reason != "situation" for c in explanation.candidates)
    memory = _memory(embeddings, tmp_path / "off", situation=0, profile_fallback=0)
    assert "Hyundai Kona" not in memory.inject(ask, "ann", now="2025-06-04").text


def test_explain_says_why_a_situation_was_kept(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    explanation = memory.explain("Plan my Saturday errands for me.", "ann", now="2025-06-04T12:00:00Z")
    [rental] = [c for c in explanation.candidates if c.record.value == "Hyundai Kona"]
    assert rental.decision == "kept"
    assert rental.reason in {"situation", ""}  # "" when its own score cleared the threshold
    assert rental.reason == "situation" or rental.fused >= explanation.min_score


def test_a_fact_dated_before_1970_with_no_deadline_is_not_a_situation(embeddings: Any, tmp_path: Path) -> None:
    memory = _memory(embeddings, tmp_path)
    born = Fact(entity="user", attribute="birth_city", value="Tromsø", content="The user was born in Tromsø")
    memory.add_facts([born.model_copy(update={"valid_from": "1962-03-04T00:00:00Z"})], "ann", at="1962-03-04")
    text = memory.inject("Plan my Saturday errands for me.", "ann", now="2025-06-04T12:00:00Z").text
    assert "Hyundai Kona" in text
    explanation = memory.explain("Plan my Saturday errands for me.", "ann", now="2025-06-04T12:00:00Z")
    assert all(c.reason != "situation" for c in explanation.candidates if c.record.value == "Tromsø")


def test_a_passing_situation_filed_as_an_episode_comes_while_it_lasts(embeddings: Any, tmp_path: Path) -> None:
    """A caller may file what holds for a while as an ``episode`` under a slot ("a sugar-free February"): while it
    lasts it comes with the user's lasting facts to a request that matches nothing; after, it does not."""
    memory = LifecycleMemory(ChromaMemoryStore(tmp_path / "m", embeddings=embeddings))
    challenge = Fact(
        entity="user", attribute="diet_challenge", value="sugar-free February", kind="episode", ttl_days=28,
        content="The user is doing a sugar-free February.",
    )  # fmt: skip
    job = Fact(entity="user", attribute="job", value="beekeeper", content=JOB, kind="profile")
    memory.add_facts([job, challenge], "ann", at="2025-02-01T08:00:00Z")
    ask = "Someone brought donuts to the office, should I have one?"
    assert "sugar-free" in memory.inject(ask, "ann", now="2025-02-10T12:00:00Z").text
    later = memory.inject(ask, "ann", now="2025-03-10T12:00:00Z").text
    assert "beekeeper" in later and "sugar-free" not in later
