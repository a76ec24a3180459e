"""The update (reconcile) step: new facts against what is stored, deterministically.

Facts are renamed to the stored slots they mean (``_slot_identity.py``), then planned fact by fact
(``_planner.py``: refresh, supersede, pending, retract, or a statement without a slot when a fact fails its check
against its own words). Applying writes new records first, archivals last (crash-safe).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import datetime

from langchain_lifecycle_memory.schema import (
    Fact,
    MemoryRecord,
    MemorySource,
    MemoryStatus,
    ensure_aware,
    is_self_entity,
    said_at,
)
from langchain_lifecycle_memory.store.chroma_store import ChromaRecordStore as ChromaMemoryStore
from langchain_lifecycle_memory.store.repair import repair_namespace, writer_lock
from langchain_lifecycle_memory.store.slots import precedence
from langchain_lifecycle_memory.write._cardinality import DEFAULT_ALIKE_THRESHOLD
from langchain_lifecycle_memory.write._change import states_a_change
from langchain_lifecycle_memory.write._grounding import mostly_said, retold, value_said
from langchain_lifecycle_memory.write._judge import ConflictVerdict, create_conflict_judge
from langchain_lifecycle_memory.write._lexicon import canonical_entity
from langchain_lifecycle_memory.write._people import as_known, is_about, named_person, refile
from langchain_lifecycle_memory.write._plan import UpdateConfig, UpdatePlan, UpdateResult, apply_plan, calibrated
from langchain_lifecycle_memory.write._planner import Planner
from langchain_lifecycle_memory.write._rules import extract_rule_facts
from langchain_lifecycle_memory.write._slot_identity import DEFAULT_SLOT_THRESHOLD, create_slot_judge, resolve_facts

__all__ = [
    "ConflictVerdict", "UpdateConfig", "UpdatePlan", "UpdateResult", "apply_plan", "create_conflict_judge",
    "create_slot_judge", "is_about", "named_person", "plan_updates", "reconcile", "repair_slots",
]  # fmt: skip


def plan_updates(
    store: ChromaMemoryStore,
    namespace: tuple[str, ...],
    facts: Sequence[Fact],
    *,
    at: datetime | str | None = None,
    source: MemorySource | None = None,
    config: UpdateConfig | None = None,
) -> UpdatePlan:
    """Decide what ``facts`` change in ``namespace`` (reads the store, writes nothing)."""
    when = said_at(at)
    cfg = config or UpdateConfig()
    checked = [f if isinstance(f, Fact) else Fact.model_validate(f) for f in facts]
    checked = [f.model_copy(update={"entity": canonical_entity(f.entity)}) for f in checked]  # "老妈" is "mother"
    people = store.people(tuple(namespace)) if any(f.evidence or not is_self_entity(f.entity) for f in checked) else []
    if any(f.evidence for f in checked):  # extracted: each fact under the person its own words are about
        checked = refile(checked, known=people)
    checked = as_known(checked, people)
    if cfg.resolve_slots and any(f.slot is not None for f in checked):
        checked = _resolve(store, tuple(namespace), checked, cfg)
    source = source or MemorySource()
    reread = None
    if source.extractor not in _RULES:
        reread = functools.partial(_rules_reading, store, namespace, cfg, when, people)
    planner = Planner(store, tuple(namespace), when, cfg, reread=reread)
    for fact in checked:
        planner.add(fact, source)
    if checked and len(planner.unsaid) == len(checked):
        planner.keep_words(source)
    return planner.plan


_RULES = ("rule", "rule_extract_memories")
"""Sources whose facts are the rules' reading already."""


def _rules_reading(
    store: ChromaMemoryStore,
    namespace: tuple[str, ...],
    cfg: UpdateConfig,
    when: datetime,
    people: list[str],
    fact: Fact,
) -> list[Fact]:
    """What the rules read in the words ``fact`` came from, of what its statement speaks of: its stand-in.

    A small model files "Got an e-bike last month. Riding along the river to the office takes 20 minutes" under
    the prompt's example slot (``editor = e-bike``): the slot fails its check against the words, and the rules'
    ``commute = ride`` stands in (no extra model call). The model's statement stays when
    it is the user's own words about the same person; else the rules' statement, which says whose it is.
    """
    said = str(fact.evidence or "")
    read = [
        f
        for f in extract_rule_facts(said, now=when)
        if f.slot is not None and f.operation == "assert" and f.slot != fact.slot
        and (value_said(f.value, fact.content) or mostly_said(str(f.evidence), fact.content))
    ]  # fmt: skip
    if not read:
        return []
    read = as_known(refile(read, known=people), people)  # ``people``: the batch's read of the stored persons
    if cfg.resolve_slots:
        read = _resolve(store, namespace, read, cfg)
    own = retold(fact)
    return [
        f.model_copy(update={"content": fact.content, "cues": fact.cues}) if own and f.entity == fact.entity else f
        for f in read
    ]


def _resolve(store: ChromaMemoryStore, namespace: tuple[str, ...], facts: list[Fact], cfg: UpdateConfig) -> list[Fact]:
    """Facts renamed to the stored slots they mean, with their cardinality decided."""
    threshold = calibrated(cfg.slot_threshold, store, DEFAULT_SLOT_THRESHOLD)

    @functools.cache  # one read per entity and batch
    def statements(entity: str) -> dict[str, str]:
        current = store.list_records(namespace, entity=entity, statuses=[MemoryStatus.ACTIVE])
        return {r.attribute: r.content for r in sorted(current, key=precedence) if r.attribute}

    return resolve_facts(
        facts, store.slot_catalogue(namespace), embeddings=store.embeddings, threshold=threshold,
        judge=cfg.slot_judge, statements=statements, changes=states_a_change,
        alike=calibrated(cfg.alike_threshold, store, DEFAULT_ALIKE_THRESHOLD),
    )  # fmt: skip


def reconcile(
    store: ChromaMemoryStore,
    namespace: tuple[str, ...],
    facts: Sequence[Fact],
    *,
    at: datetime | str | None = None,
    source: MemorySource | None = None,
    config: UpdateConfig | None = None,
    before_apply: Callable[[UpdatePlan], None] | None = None,
) -> UpdateResult:
    """Plan and apply in one call, under the namespace's writer lock (``before_apply`` sees the plan there).

    Example:
        .. code-block:: python

            reconcile(store, ("memories", "u1"), [Fact(entity="user", attribute="editor",
                      value="VS Code", content="用户现在使用 VS Code")], at="2024-03-01T10:00:00Z")
    """
    with writer_lock(store, tuple(namespace)):
        plan = plan_updates(store, namespace, facts, at=at, source=source, config=config)
        if before_apply is not None:
            before_apply(plan)
        return apply_plan(store, plan)


def repair_slots(
    store: ChromaMemoryStore,
    namespace: tuple[str, ...],
    *,
    at: datetime | None = None,
    slots: Sequence[tuple[str, str]] | None = None,
) -> list[MemoryRecord]:
    """Fix slots left forked (crash, racing writers) into one chain, newest ``valid_from`` active; returns rewrites."""
    return repair_namespace(store, tuple(namespace), slots=slots, at=ensure_aware(at))
