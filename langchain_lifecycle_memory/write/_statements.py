"""The planner's statements without a slot: kept as said, said again, and what their words replace.

Mixed into ``_planner.Planner``, which holds the batch's state and writes (``_write``, ``_archive``,
``_new_record``, ``_correct``): a statement no rule or model put in a slot is one memory however often it is
said; worded as a change, it archives the statement it replaces (``_replaced.py``); the user's own words keep
what holds now.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime
from typing import TYPE_CHECKING

from langchain_lifecycle_memory.schema import (
    Fact,
    MemoryRecord,
    MemorySource,
    MemoryStatus,
    is_self_entity,
    normalize_value,
)
from langchain_lifecycle_memory.write._change import (
    CLAUSE,
    DEFAULT_CHANGE_THRESHOLD,
    KEPT_WORDS,
    NAMED_CHANGE_THRESHOLD,
    change_parts,
    ended_part,
    holds_now,
    quantities,
    restates_a_measure,
    states_a_change,
)
from langchain_lifecycle_memory.write._dates import says_ahead
from langchain_lifecycle_memory.write._denial import meant_instead
from langchain_lifecycle_memory.write._grounding import OWN_WORDS_LIMIT, copied, retold, value_said
from langchain_lifecycle_memory.write._people import as_known, refile
from langchain_lifecycle_memory.write._plan import UpdateConfig, UpdatePlan, calibrated
from langchain_lifecycle_memory.write._replaced import entity_of, superseded_by_change

if TYPE_CHECKING:
    from langchain_lifecycle_memory.store.chroma_store import ChromaRecordStore

__all__ = ["ACTIVE", "LIVE", "SAID_WORDS", "Statements", "logger"]

logger = logging.getLogger("langchain_lifecycle_memory.write.update")  # the update step's log
LIVE = (MemoryStatus.ACTIVE, MemoryStatus.PENDING)
ACTIVE = (MemoryStatus.ACTIVE,)
SAID_WORDS = "said"
"""``metadata`` key: the user's whole words, where the statement keeps only the part that holds now."""


class Statements:
    """Planning of statements without a slot; mixed into ``Planner``."""

    if TYPE_CHECKING:
        store: ChromaRecordStore
        ns: tuple[str, ...]
        at: datetime
        cfg: UpdateConfig
        plan: UpdatePlan
        unsaid: list[Fact]
        _slots: dict[tuple[str, str], list[MemoryRecord]]
        _touched: dict[str, MemoryRecord]
        _own_words: set[str]

        def _write(self, record: MemoryRecord, bucket: list[MemoryRecord]) -> None: ...
        def _archive(self, old: MemoryRecord, when: datetime, by: str | None) -> None: ...
        def _new_record(self, fact: Fact, source: MemorySource, status: MemoryStatus) -> MemoryRecord: ...
        def _correct(self, fact: Fact, source: MemorySource, meant: str, said: str) -> bool: ...
        def _related(self, a: str, b: str) -> float: ...

    def _add_free_text(self, fact: Fact, source: MemorySource, *, replaces: bool = True, slots: bool = True) -> None:
        """Keep a statement without a slot.

        ``replaces``: it replaces what it states a change of; ``slots``: that may be a value of a slot, not only
        another statement (someone else's news ends what was said of them, never the user's own values).
        """
        if (meant := meant_instead(fact.evidence or "")) and self._correct(fact, source, *meant):
            return
        content = fact.content
        for earlier in self.plan.added:  # the same statement twice in one batch is one memory
            if normalize_value(earlier.content) == normalize_value(content):
                if fact.kind == "sensitive" and earlier.kind != "sensitive":  # the stricter retention wins
                    expires = self.cfg.policy.expires_at_for(fact.kind, earlier.valid_from, ttl_days=fact.ttl_days)
                    self._write(earlier.model_copy(update={"kind": fact.kind, "expires_at": expires}), self.plan.added)
                return
        similar = self.store.search_records(self.ns, content, k=5, statuses=LIVE, now=self.at)
        for old, score in similar:
            if score >= self.cfg.dedup_min_score and normalize_value(old.content) == normalize_value(content):
                # Words no rule or model put in a slot gain nothing by being said again ("地铁又晚点了" six times
                # is no surer a fact, and would lead every list of the user's lasting facts): refreshed only.
                bump = max(old.confidence, fact.confidence) + (self.cfg.reinforce_step if old.slot else 0.0)
                bump = min(1.0, bump)
                self._write(old.model_copy(update={"confidence": bump, "updated_at": self.at}), self.plan.refreshed)
                return
        status = MemoryStatus.PENDING if fact.confidence < self.cfg.pending_below else MemoryStatus.ACTIVE
        record = self._new_record(fact, source, status)
        self._write(record, self.plan.added)
        if not similar or status is MemoryStatus.PENDING or not replaces:
            return
        if self.cfg.judge is None:
            if ended := ended_part(fact.evidence or ""):  # "卸了，现在改用…": what ended is in the words, not kept
                similar = self.store.search_records(self.ns, ended, k=5, statuses=LIVE, now=self.at)
            live = [(old, score) for old, score in similar if old.status in ACTIVE and (slots or old.slot is None)]
            gone = self._supersede_stated(record, live, ended)
            if gone is None and slots:
                self._supersede_by_words(record, fact)
            return
        candidates = [old for old, _ in similar if old.slot is None and old.id not in self._touched]
        if not candidates:
            return
        try:
            verdict = self.cfg.judge.invoke({"new": content, "candidates": candidates})
        except Exception:
            logger.exception("Conflict judge failed; keeping every existing fact (nothing is archived)")
            return
        known = {c.id: c for c in candidates}
        for rid in verdict.superseded_ids:
            if rid in known:
                self._archive(known[rid], record.valid_from, record.id)

    def keep_words(self, source: MemorySource) -> None:
        """Keep the words as an ``episode``: no fact extracted from them was in them, so nothing said is lost.

        A small model echoes its prompt's example ("The user likes the VS Code editor.") for "我爸又换手机了…".
        The words stand in for the facts it failed to give: they last as long as a fact does, not an episode.
        """
        people = self.store.people(self.ns)
        for text in dict.fromkeys(str(f.evidence) for f in self.unsaid if f.evidence):
            content = self.cfg.redactor.redact(text).text if self.cfg.redactor is not None else text
            words = Fact(content=content, evidence=content)  # "我爸又换手机了…" is about the father
            entity = as_known(refile([words], known=people), people)[0].entity
            expires = self.cfg.policy.expires_at_for("fact", self.at)
            record = MemoryRecord(
                namespace=self.ns, content=content, kind="episode", status=MemoryStatus.ACTIVE, confidence=1.0,
                source=source, created_at=self.at, updated_at=self.at, valid_from=self.at, expires_at=expires,
                entity=None if is_self_entity(entity) else entity, metadata={KEPT_WORDS: True},
            )  # fmt: skip
            self._write(record, self.plan.added)
            self._own_words.add(record.id)
            self._supersede_stated(record)  # "我爸又换手机了，那台华为给我妈用了…" still ends the Huawei
            self._restated_measures(record, content)  # "Pushed it to 2400m per session now" ends "each time 1500 m"

    def _as_said(self, fact: Fact, value: str | None) -> Fact:
        """A statement that copies the turn or states the value, for a value the turn does not say: the turn's words.

        "she's counting carbs on an app" (from "my flatmate quit being vegan. she's doing strict keto now, …")
        with a value the model made up: the whole words say whose it is and what changed. "I use VS Code for
        editing videos." for "我平时用电脑剪 vlog": the made-up value is in the statement, the words are kept instead.
        """
        evidence = fact.evidence or ""
        stated = copied(fact) or value_said(value, fact.content)
        if not evidence or not stated or value_said(value, evidence) or len(evidence) > OWN_WORDS_LIMIT:
            return fact
        people = self.store.people(self.ns)
        return as_known(refile([fact.model_copy(update={"content": evidence})], known=people), people)[0]

    def _say_now(self, record: MemoryRecord, old: MemoryRecord) -> None:
        """A statement in the user's words keeps the words of what holds now, not of what it replaced.

        "Kelly改主意了，Iceland太贵…，现在改成去Patagonia徒步" replacing her Iceland plan is shown as
        "现在改成去Patagonia徒步…" (the old plan is in ``history()``); the whole words stay in ``metadata``.
        """
        now = holds_now(record.content, old.content, str(old.value or ""))
        if now == record.content or (record.value is not None and not value_said(record.value, now)):
            return
        self._reword(record, now, self.plan.added)

    def _reword(self, record: MemoryRecord, content: str, bucket: list[MemoryRecord]) -> None:
        """``record`` shown in ``content``; its whole words stay in ``metadata``, and the batch's slots see it."""
        words = record.metadata.get(SAID_WORDS, record.content)
        trimmed = record.model_copy(update={"content": content, "metadata": {**record.metadata, SAID_WORDS: words}})
        self._write(trimmed, bucket)
        if (slot := record.slot) in self._slots:
            self._slots[slot] = [trimmed if r.id == record.id else r for r in self._slots[slot]]

    def _restated_measures(self, record: MemoryRecord, words: str) -> None:
        """A change that gives a measure again ends the clause of another slot's statement that gave it before.

        "今年调薪了，现在年薪 33 万" beside ``job`` = 游戏原画, told "我是做游戏原画的，年薪大概 28 万": the job holds,
        its statement drops the old salary, which is kept as said then (archived, replaced by the new record).
        ``words``: the user's words, which may say the change the statement leaves out.
        """
        if record.status is not MemoryStatus.ACTIVE or not quantities(record.content):
            return
        if not (states_a_change(record.content) or states_a_change(words)):
            return
        entity = entity_of(record)  # words kept for the user's facts have no entity
        held = {r.id: r for r in self.store.list_records(self.ns, statuses=ACTIVE, entity=entity, now=self.at)}
        held |= self._touched  # this batch's writes, as they are now
        for old in held.values():
            if old.slot in (None, record.slot) or entity_of(old) != entity or old.status is not MemoryStatus.ACTIVE:
                continue
            parts = CLAUSE.split(old.content)
            gone = [p for p in parts if restates_a_measure(record.content, p) and not value_said(old.value, p)]
            if not gone:
                continue
            kept = _without(old.content, gone)
            if value_said(old.value, old.content) and not value_said(old.value, kept):
                continue  # a statement that says its value keeps saying it (one in another language cannot)
            new = any(r.id == old.id for r in self.plan.added)  # told in this batch: still an addition
            self._reword(old, kept, self.plan.added if new else self.plan.refreshed)
            then = MemoryRecord(
                namespace=self.ns, content=", ".join(p.strip() for p in gone), entity=old.entity, kind=old.kind,
                status=MemoryStatus.ACTIVE, confidence=old.confidence, source=old.source, created_at=self.at,
                updated_at=self.at, valid_from=old.valid_from, expires_at=old.expires_at,
            )  # fmt: skip
            self._write(then, self.plan.added)
            self._archive(then, record.valid_from, record.id)

    def _supersede_stated(
        self,
        record: MemoryRecord,
        similar: list[tuple[MemoryRecord, float]] | None = None,
        said: str | None = None,
        *,
        another: bool = True,
    ) -> MemoryRecord | None:
        """Archive the free-text statement that ``record``, worded as a change, replaces (``_replaced.py``).

        ``similar``: live records with their similarity to ``record``, best first (searched when not given);
        ``said``: the words that say what ended (:func:`ended_part`). Returns the record archived, if any.
        """
        threshold = calibrated(self.cfg.change_threshold, self.store, DEFAULT_CHANGE_THRESHOLD)
        worded = states_a_change(record.content) or said  # or its words ended what it replaces
        if self.cfg.judge is not None or not worded or threshold is None or threshold > 1:
            return None
        parts = change_parts(record.content)
        if parts and all(says_ahead(part) for part in parts):  # a plan: it ends nothing yet
            return None
        if similar is None:
            similar = self.store.search_records(self.ns, record.content, k=5, now=self.at)
        untouched = [(old, score) for old, score in similar if old.id not in self._touched]
        named = min(threshold, NAMED_CHANGE_THRESHOLD)
        old = superseded_by_change(record, untouched, threshold, named, said, another=another, related=self._related)
        if old is not None:
            self._archive(old, record.valid_from, record.id)
        return old

    def _supersede_by_words(self, record: MemoryRecord, fact: Fact) -> None:
        """What the user's words change, when the model's statement of its slot does not say it is a change.

        "我已经戒酒了" extracted as ``alcohol = 不喝酒`` ("I don't like alcohol") still ends the bedtime whisky: the
        words, as a statement of the user's without a slot, replace what they replace (never written themselves).
        """
        words = fact.evidence
        if not words or len(words) > OWN_WORDS_LIMIT or not states_a_change(words):
            return
        if (copied(fact) or retold(fact)) and states_a_change(record.content):
            return  # the statement is the words, the change with them ("…，现在不开吊车了" kept out of it is not)
        said = record.model_copy(update={"content": words, "attribute": None, "value": None})
        self._supersede_stated(said, another=False)


def _without(text: str, parts: list[str]) -> str:
    """``text`` without its clauses ``parts``, each with the mark that opened it (or closed it, when first)."""
    pieces = re.split(f"({CLAUSE.pattern})", text)
    drop = {i for i in range(0, len(pieces), 2) if pieces[i] in parts}
    for i in drop:
        pieces[i] = ""
        pieces[i - 1 if i > 0 else min(i + 1, len(pieces) - 1)] = ""
    return "".join(pieces).strip()
