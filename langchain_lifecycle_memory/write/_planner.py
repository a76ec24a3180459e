"""The planner of the update step: one batch of facts against the stored slots, record by record.

Per slot: the same value refreshes, a new value supersedes (the old one archived), low confidence is
``pending``, a retraction archives. A fact that fails its check against its own words (``_grounding.py``)
keeps its statement without a slot; what a statement worded as a change replaces is found by ``_replaced.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import numpy as np

from langchain_lifecycle_memory.schema import (
    Fact,
    MemoryRecord,
    MemorySource,
    MemoryStatus,
)
from langchain_lifecycle_memory.store.chroma_store import ChromaRecordStore as ChromaMemoryStore
from langchain_lifecycle_memory.store.slots import precedence, repairs, resolve_current
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES, AttributeSpec, card_phrases
from langchain_lifecycle_memory.write._ahead import LAPSES_FOR, ahead, lapsing, restored
from langchain_lifecycle_memory.write._cardinality import (
    DEFAULT_ALIKE_THRESHOLD,
    alike,
    held_by,
    kind_of,
    renumbered,
    rival_choices,
    same_use,
    same_value,
    says_only,
)
from langchain_lifecycle_memory.write._change import (
    says_now,
    states_a_change,
)
from langchain_lifecycle_memory.write._denial import correction
from langchain_lifecycle_memory.write._grounding import (
    A_QUANTITY,
    AIMED_AT,
    EXAMPLE_SLOT_TOPIC,
    FILED_THRESHOLD,
    SAID_THRESHOLD,
    SOMEONE_ELSE,
    filed_as_the_example,
    grounded,
    mostly_said,
    number_for_words,
    retold,
    value_said,
)
from langchain_lifecycle_memory.write._plan import UpdateConfig, UpdatePlan, calibrated
from langchain_lifecycle_memory.write._replaced import restates_held
from langchain_lifecycle_memory.write._statements import ACTIVE, LIVE, Statements, logger

__all__ = ["Planner"]

_SPECS = {spec.name: spec for spec in DEFAULT_ATTRIBUTES}
_PLAIN = AttributeSpec("_", "", "")
_CHOICES = [spec.name for spec in DEFAULT_ATTRIBUTES if spec.replaces_alike]
_AGAINST = frozenset(name for name, spec in _SPECS.items() if spec.against)


class Planner(Statements):
    """Plans one batch; keeps the slot state in memory so facts in a batch see each other."""

    def __init__(
        self,
        store: ChromaMemoryStore,
        namespace: tuple[str, ...],
        at: datetime,
        config: UpdateConfig,
        *,
        reread: Callable[[Fact], list[Fact]] | None = None,
    ):
        """``reread(fact)``: another reading of the words a fact that fails its check came from (the rules')."""
        self.store, self.ns, self.at, self.cfg, self.reread = store, namespace, at, config, reread
        self.plan = UpdatePlan(namespace=namespace)
        self._slots: dict[tuple[str, str], list[MemoryRecord]] = {}
        self._catalogue: list[dict[str, Any]] | None = None
        self._touched: dict[str, MemoryRecord] = {}
        self._said: dict[str, np.ndarray] = {}  # the turns' unit vectors: one embedding per turn, not per fact
        self._own_words: set[str] = set()  # records whose statement is the user's own words
        self.unsaid: list[Fact] = []

    def live(self, slot: tuple[str, str]) -> list[MemoryRecord]:
        if slot not in self._slots:
            stored = self.store.list_records(self.ns, entity=slot[0], attribute=slot[1], statuses=LIVE, resolve=False)
            for fix in repairs(stored, at=self.at):  # left forked by a crash or a race: repair it now
                self._write(fix, self.plan.repaired)
            live = [r for r in resolve_current(stored) if r.status in LIVE]
            self._slots[slot] = sorted(live, key=precedence)
        return self._slots[slot]

    def _write(self, record: MemoryRecord, bucket: list[MemoryRecord]) -> None:
        self._touched[record.id] = record
        for b in (self.plan.added, self.plan.refreshed, self.plan.archived, self.plan.repaired):
            b[:] = [r for r in b if r.id != record.id]
        bucket.append(record)

    def _archive(self, old: MemoryRecord, when: datetime, by: str | None) -> None:
        if when > self.at and old.valid_from < when:  # a change dated ahead (``_ahead.py``): ``old`` holds until then
            self._write(lapsing(old, when, by, self.at), self.plan.refreshed)
        else:
            if ahead(old, max(when, self.at)):  # called off before it started: it replaced nothing
                self._call_off(old)
                old = old.model_copy(update={"supersedes": None})
            archived = old.transition(
                MemoryStatus.ARCHIVED, at=self.at, valid_to=max(when, old.valid_from), superseded_by=by
            )
            self._write(archived, self.plan.archived)
        if (slot := old.slot) is not None:
            self._slots[slot] = [r for r in self._slots.get(slot, []) if r.id != old.id]
        if by in self._own_words:
            self._say_now(self._touched[by], old)

    def _call_off(self, plan: MemoryRecord) -> None:
        """What ``plan`` was to replace when it starts keeps the lifetime it had before."""
        if (slot := plan.slot) is None:
            return
        for kept in [r for r in self.live(slot) if r.metadata.get(LAPSES_FOR) == plan.id]:
            self._write(back := restored(kept, self.at), self.plan.refreshed)
            self._slots[slot] = [back if r.id == kept.id else r for r in self._slots[slot]]

    def _new_record(self, fact: Fact, source: MemorySource, status: MemoryStatus) -> MemoryRecord:
        valid_from = fact.valid_from or self.at
        record = MemoryRecord(
            namespace=self.ns, content=fact.content, entity=fact.entity,
            attribute=fact.attribute, value=fact.value, kind=fact.kind, status=status,
            confidence=fact.confidence, source=source, created_at=self.at, updated_at=self.at, valid_from=valid_from,
            expires_at=self.cfg.policy.expires_at_for(fact.kind, valid_from, ttl_days=fact.ttl_days),
            cardinality=fact.cardinality or "single", metadata={"cues": list(fact.cues)} if fact.cues else {},
        )  # fmt: skip
        if retold(fact):
            self._own_words.add(record.id)  # the user's words, not a model's statement
        return record

    def add(self, fact: Fact, source: MemorySource, *, reread: bool = True) -> None:
        if self.cfg.redactor is not None:  # "the Wi-Fi password is tulip-42" with the value "tulip-42": masked in both
            secret = fact.value if fact.kind == "sensitive" else None  # its extractor says: masked whatever its shape
            content, value, evidence = self.cfg.redactor.redact_together(
                [fact.content, fact.value, fact.evidence], secret=secret
            )
            fact = fact.model_copy(update={"content": content or fact.content, "value": value, "evidence": evidence})
        if self._unsaid(fact):
            logger.warning("Dropped an extracted fact that is not in the words it came from: %r", fact.content)
            self.unsaid.append(fact)
            return
        masks = self.cfg.redactor is not None and self.cfg.redactor.leaves_only_masks(fact.value)
        if fact.slot is not None and fact.kind != "sensitive" and masks:
            # "smartphone = [PHONE]" mistakes a phone number for a device: only kind "sensitive" holds a mask;
            # any other fact whose value is nothing but masks keeps its statement, without a slot.
            fact = fact.model_copy(update={"entity": None, "attribute": None, "value": None})
        if fact.slot is not None and (
            (fact.operation == "retract" and not self.live(fact.slot))
            or (fact.operation == "assert" and not fact.value)
        ):
            # Nothing to retract under that name, or no value to hold ("I quit smoking!" filed as alcohol): the
            # words are kept as a statement, which replaces what it names like any stated change.
            fact = fact.model_copy(update={"attribute": None, "value": None, "operation": "assert"})
        doubt = self._unchecked(fact) if fact.slot is not None and fact.operation == "assert" else None
        if doubt is not None and reread and self.reread is not None and (instead := self.reread(fact)):
            logger.info("%s.%s failed its check (%s): the rules' reading of its words stands in", *fact.slot, doubt)
            for read in instead:
                self.add(read, source, reread=False)  # what stands in is not read again
            return
        if doubt is not None:
            # Never a slot on an unchecked extraction ("my sister Kasia lives in Wrocław" is not the user's city):
            # the statement is kept without its slot, beside the current value. It replaces only what its own
            # words change ("I quit smoking!" filed as alcohol = 不喝酒), never when it is about someone else or
            # is a quantity the slot cannot hold ("年薪 33 万" filed as the job: the job still holds).
            logger.info("Keeping %s.%s as a statement without its slot: %s", *fact.slot, doubt)
            fact = self._as_said(fact.model_copy(update={"attribute": None, "value": None}), fact.value)
        lapses = self._lapses_beside_lasting(fact)
        if lapses:  # kept beside what lasts, which is current again when it lapses; found as that slot is
            cues = [*fact.cues, *card_phrases(str(fact.attribute), _SPECS.get(str(fact.attribute)))]
            fact = fact.model_copy(update={"attribute": None, "value": None, "cues": cues})
        if fact.slot is None:
            replaces = doubt not in (A_QUANTITY, AIMED_AT) and not lapses
            # Someone else's news replaces what was said of them, never a value of the user's slots.
            self._add_free_text(fact, source, replaces=replaces, slots=doubt != SOMEONE_ELSE)
        else:
            self._add_slot(fact, fact.slot, source)
        if (written := next((r for r in reversed(self.plan.added) if r.content == fact.content), None)) is not None:
            self._restated_measures(written, fact.evidence or "")

    def _set_beside(self, record: MemoryRecord, slot: tuple[str, str]) -> None:
        """``record`` out of its slot, kept as a statement found as the slot is (its routing card as cues)."""
        cues = [*record.metadata.get("cues", []), *card_phrases(slot[1], _SPECS.get(slot[1]))]
        beside = record.model_copy(
            update={
                "attribute": None,
                "value": None,
                "metadata": {**record.metadata, "cues": cues},
                "updated_at": self.at,
            }
        )
        self._write(beside, self.plan.refreshed)
        self._slots[slot] = [r for r in self._slots.get(slot, []) if r.id != record.id]

    def _lapses_beside_lasting(self, fact: Fact) -> bool:
        """A temporary value (``ttl_days``) of a slot whose current value lasts: it is said for a while, not instead.

        "This week I'm driving my neighbour's van" filed under the user's lasting ``car`` would archive that car for
        good, and the user would have none when the week is over: it is kept as a statement beside the car instead.
        """
        if fact.ttl_days is None or fact.slot is None or fact.operation != "assert":
            return False
        active = [r for r in self.live(fact.slot) if r.status is MemoryStatus.ACTIVE]
        return bool(active) and all(r.expires_at is None and not same_value(r.value, fact.value) for r in active)

    def _unsaid(self, fact: Fact) -> bool:
        """Neither the value nor the statement is in the words the fact was extracted from."""
        threshold = calibrated(self.cfg.said_threshold, self.store, SAID_THRESHOLD)
        if threshold is None or not fact.evidence or value_said(fact.value, fact.evidence):
            return False
        if mostly_said(fact.content, fact.evidence):
            return False  # the words restated ("The user's feet are done."): no need to embed them
        return float(self._turn_unit(fact.evidence) @ self._unit(fact.content)) < threshold

    def _turn_unit(self, text: str) -> np.ndarray:
        """``_unit`` of a turn (or the example slot's topic), embedded once per plan."""
        if text not in self._said:
            self._said[text] = self._unit(text)
        return self._said[text]

    def _related(self, a: str, b: str) -> float:
        """Cosine of two texts (the store's encoder)."""
        return float(self._unit(a) @ self._unit(b))

    def _unit(self, text: str) -> np.ndarray:
        vector = np.asarray(self.store.embeddings.embed_documents([text])[0], dtype=np.float64)
        return vector / (np.linalg.norm(vector) or 1.0)

    def _unchecked(self, fact: Fact) -> str | None:
        """Why ``fact`` may not go into its slot, checked against its own words (``None``: it may)."""
        assert fact.slot is not None
        live = self.live(fact.slot)
        if any(same_value(r.value, fact.value) for r in live):
            return None  # the value is already there: nothing is hidden
        active = [r.value for r in live if r.status is MemoryStatus.ACTIVE]
        doubt = grounded(fact, opening=not active)
        if doubt is None and number_for_words(fact.value, active):
            doubt = A_QUANTITY
        if doubt is None and filed_as_the_example(fact) and (t := calibrated(None, self.store, FILED_THRESHOLD)):
            if float(self._turn_unit(str(fact.evidence)) @ self._turn_unit(EXAMPLE_SLOT_TOPIC)) < t:
                doubt = f"nothing in what was said is about {fact.attribute}"
        return doubt

    def _reports_since(self, fact: Fact, newest: MemoryRecord) -> bool:
        """Whether ``fact``, said after ``newest``, reports a change dated before it ("I started at X last month").

        ``newest`` was dated by when it was said, not by its words: the change the user reports later is current.
        """
        undated = newest.valid_from == newest.created_at
        return undated and self.at > newest.created_at and states_a_change(fact.content)

    def _end_the_opposite(self, fact: Fact, slot: tuple[str, str], when: datetime) -> None:
        """A value now held against ("I hate jazz") ends the same value held for ("I love jazz"), and back."""
        if self._catalogue is None:  # the slots' mirrored fields, read once: records only where a value matches
            self._catalogue = self.store.slot_catalogue(self.ns)
        against = slot[1] in _AGAINST
        opposite = {
            (str(r["entity"]), str(r["attribute"]))
            for r in self._catalogue
            if r["entity"] == slot[0] and (r["attribute"] in _AGAINST) != against and same_value(r["value"], fact.value)
        }
        for old in (r for other in opposite for r in self.live(other) if r.status is MemoryStatus.ACTIVE):
            if same_value(old.value, fact.value) and old.id not in self._touched:
                self._archive(old, max(when, old.valid_from), None)

    def _add_slot(self, fact: Fact, slot: tuple[str, str], source: MemorySource) -> None:
        when = fact.valid_from or self.at
        value = fact.value
        if fact.operation == "assert" and fact.confidence >= self.cfg.pending_below:
            self._end_the_opposite(fact, slot, when)
        live = self.live(slot)
        card = fact.cardinality or ("set" if any(r.cardinality == "set" for r in live) else "single")
        if card == "set" and fact.operation == "assert" and says_only(fact.content, value):
            self._only_these(fact, slot, when)
            live = self.live(slot)
        if fact.operation == "retract":
            ended = [
                old for old in live
                if fact.value is None or same_value(old.value, value) or kind_of(old.value, value)
                or held_by(old.value, value)
            ]  # fmt: skip
            for old in ended:
                self._archive(old, when, None)
            if not ended:  # nothing held by that name: the words are kept, and replace what they name
                said = fact.model_copy(update={"attribute": None, "value": None, "operation": "assert"})
                self._add_free_text(said, source)
            return
        same = [r for r in live if same_value(r.value, value)]
        # The same value restated with a new number is a new version (the newer words are current), else a refresh.
        new_words = bool(same) and restates_held(fact.content, same[-1], card)
        if same and not new_words and restates_held(fact.evidence, same[-1], card):
            # The model's statement dropped the number its words changed ("The user is a photographer." from "we
            # bumped the photographer budget up to $2,600"): the words themselves are the new version.
            fact, new_words = fact.model_copy(update={"content": str(fact.evidence)}), True
        if same and not new_words:
            keep = same[-1]
            confidence = min(1.0, max(keep.confidence, fact.confidence) + self.cfg.reinforce_step)
            status = keep.status
            if status is MemoryStatus.PENDING and confidence >= self.cfg.pending_below:
                status = MemoryStatus.ACTIVE
            changes = {"confidence": confidence, "updated_at": self.at, "status": status, "cardinality": card}
            refreshed = keep.model_copy(update=changes)
            self._write(refreshed, self.plan.refreshed)
            self._slots[slot] = [refreshed if r.id == keep.id else r for r in live]
            if status is MemoryStatus.ACTIVE and card == "single":
                for other in [r for r in live if r.id != keep.id and r.status is MemoryStatus.ACTIVE]:
                    self._archive(other, max(when, other.valid_from), keep.id)
            return
        pending = fact.confidence < self.cfg.pending_below
        if card == "set":
            self._join_set(fact, slot, source, live, pending)
            return
        active = [r for r in live if r.status is MemoryStatus.ACTIVE]
        started = [r for r in active if not ahead(r, max(when, self.at))]
        newest = max(started, key=precedence) if started else None
        if newest is not None and newest.expires_at is not None and fact.ttl_days is None and when < newest.valid_from:
            # A lasting value learned after a temporary one said for a while since: the temporary one is kept beside
            # it, as it would have been in order (``_lapses_beside_lasting``), and the lasting one holds when it lapses.
            self._set_beside(newest, slot)
            active, newest = [r for r in active if r.id != newest.id], None
        if newest is not None and when < newest.valid_from and not pending and not self._reports_since(fact, newest):
            # An older statement learned late: history, not the current value.
            record = self._new_record(fact, source, MemoryStatus.ACTIVE)
            record = record.transition(MemoryStatus.ARCHIVED, at=self.at, valid_to=newest.valid_from)
            self._write(record, self.plan.added)
            return
        record = self._new_record(fact, source, MemoryStatus.PENDING if pending else MemoryStatus.ACTIVE)
        if not pending and newest is not None:
            record = record.model_copy(update={"supersedes": newest.id})
        self._write(record, self.plan.added)
        self._slots[slot] = [*live, record]
        if not pending:
            for old in [*active, *self._alike_elsewhere(record)]:
                self._archive(old, when, record.id)
            if self._supersede_stated(record) is None:
                self._supersede_by_words(record, fact)

    def _only_these(self, fact: Fact, slot: tuple[str, str], when: datetime) -> None:
        """The set's other members end ("I'm only allergic to okra now"), but for those said in this batch."""
        if fact.confidence < self.cfg.pending_below:
            return
        batch = {r.id for r in self.plan.added}
        for old in [r for r in self.live(slot) if r.status is MemoryStatus.ACTIVE and r.id not in batch]:
            if not same_value(old.value, fact.value):
                self._archive(old, max(when, old.valid_from), None)

    def _join_set(
        self, fact: Fact, slot: tuple[str, str], source: MemorySource, live: list[MemoryRecord], pending: bool
    ) -> None:
        """A set-valued slot: the new value joins, or replaces a member it renumbers or its kind's members."""
        record = self._new_record(fact, source, MemoryStatus.PENDING if pending else MemoryStatus.ACTIVE)
        self._write(record, self.plan.added)
        if not pending:
            active = [r for r in live if r.status is MemoryStatus.ACTIVE]
            ended = [r for r in active if renumbered(fact.value, r.value)]  # "nifedipine 60 mg" after "… 30mg"
            uses = {r.id: same_use(record, r) for r in active}  # "switched to Inoreader for news": Feedly's use
            if fact.switch or states_a_change(record.content):
                ended += [r for r in active if uses[r.id] and r not in ended]
                if _replaced_now(record, active, uses):
                    ended += [r for r in active if r not in ended]  # what the slot holds now: the one said before
            if fact.switch or _SPECS.get(slot[1], _PLAIN).replaces_alike:
                threshold = calibrated(self.cfg.alike_threshold, self.store, DEFAULT_ALIKE_THRESHOLD)  # None: off
                rivals = [r for r in active if uses[r.id] is not False]  # a member for another use is no rival
                kin = alike(self.store.embeddings, record.value, rivals, threshold) if threshold is not None else []
                ended += [r for r in kin if r not in ended]  # its kind's members ("VS Code" ends "Vim")
                ended += self._alike_elsewhere(record)
            for old in ended:
                self._archive(old, max(record.valid_from, old.valid_from), record.id)
                live = [r for r in live if r.id != old.id]
        members, became_set = [], False
        for r in live:
            if r.cardinality != "set":
                r, became_set = r.model_copy(update={"cardinality": "set", "updated_at": self.at}), True
                self._write(r, self.plan.refreshed)
            members.append(r)
        if became_set:  # the slot turns out to hold several values
            members += self._restore_replaced(slot, [*members, record])
        self._slots[slot] = [*members, record]
        if not pending and self._supersede_stated(record) is None:  # "switched to Asics Novablast" (``uses``)
            self._supersede_by_words(record, fact)  # replaces the running shoes said before; else what its words do

    def _correct(self, fact: Fact, source: MemorySource, meant: str, said: str) -> bool:
        """A correction by one word: the statement it corrects again, as true from the start (:func:`correction`)."""
        if (found := correction(self.store.list_records(self.ns, statuses=ACTIVE, now=self.at), meant, said)) is None:
            return False
        old, fields = found
        fields["confidence"] = max(old.confidence, fact.confidence)
        record = self._new_record(fact.model_copy(update=fields), source, MemoryStatus.ACTIVE)
        self._write(record.model_copy(update={"supersedes": old.id}), self.plan.added)
        if (slot := record.slot) is not None:
            self._slots[slot] = [*self.live(slot), self._touched[record.id]]
        self._archive(old, old.valid_from, record.id)  # never true
        return True

    def _alike_elsewhere(self, record: MemoryRecord) -> list[MemoryRecord]:
        """What ``record`` ends in the entity's other slots as the same choice (:func:`rival_choices`)."""
        if record.kind != "preference" or not record.value:  # only tastes compete: no read for any other write
            return []
        if _SPECS.get(str(record.attribute), _PLAIN).replaces_alike:
            held = self.store.list_records(self.ns, statuses=MemoryStatus.ACTIVE, entity=record.entity, now=self.at)
            held = [r for r in held if r.cardinality == "single"]
        else:
            held = [r for n in _CHOICES for r in self.live((str(record.entity), n))]
        threshold = calibrated(self.cfg.alike_threshold, self.store, DEFAULT_ALIKE_THRESHOLD)
        return rival_choices(record, [self._touched.get(r.id, r) for r in held], self.store.embeddings, threshold)

    def _restore_replaced(self, slot: tuple[str, str], members: list[MemoryRecord]) -> list[MemoryRecord]:
        """Values archived only because the slot was taken to hold one, held again from where they were closed.

        "每天吃一粒鱼油", then "每天补充一粒维生素D3" read as a replacement; "辅酶Q10我也开始吃了" shows the slot
        holds several, so the fish oil is current again. A value replaced by words that state a change ("switched
        to", "换成"), retracted or expired stays archived; the archived version stays as it is (history).
        """
        closed = self.store.list_records(
            self.ns, entity=slot[0], attribute=slot[1], statuses=[MemoryStatus.ARCHIVED], resolve=False
        )
        held, restored = {r.id: r for r in members}, []
        for old in sorted(closed, key=precedence, reverse=True):  # newest first: a chain unwinds from its end
            by = held.get(old.superseded_by or "")
            if (
                by is None
                or states_a_change(by.content)
                or old.is_expired(self.at)
                or any(same_value(old.value, r.value) for r in held.values())
            ):
                continue
            again = MemoryRecord.model_validate({
                **old.model_dump(exclude={"id"}), "status": MemoryStatus.ACTIVE, "valid_from": old.valid_to or self.at,
                "valid_to": None, "superseded_by": None, "supersedes": None, "cardinality": "set",
                "created_at": self.at, "updated_at": self.at, "metadata": {**old.metadata, "restores": old.id},
            })  # fmt: skip
            self._write(again, self.plan.added)
            held[old.id], held[again.id] = again, again
            restored.append(again)
        return restored


def _replaced_now(record: MemoryRecord, active: list[MemoryRecord], uses: dict[str, bool | None]) -> bool:
    """Whether ``record`` says what its set-valued slot holds now, in place of the one value held (use unsaid).

    "The user now plays the sousaphone" after "…plays the harmonium": a preference, told what it is now. Not a
    profile fact one gathers (a second child, an allergy, a pet said "now"), and not a slot named by a verb, which
    holds whatever the verb takes (``uses``: "what they use regularly", a note app beside a vocabulary app).
    """
    spec = _SPECS.get(record.attribute or "")
    catch_all = spec is not None and spec.description.startswith("what they")
    return (
        len(active) == 1 and uses[active[0].id] is None and record.kind == "preference" and not catch_all
        and says_now(record.content)
    )  # fmt: skip
