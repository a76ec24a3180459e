"""Which hand-written entries of the rule extractor and the vocabulary fire, on which corpus.

An *entry* is one thing somebody typed in by hand:

* ``rule``    a pattern of ``EN_RULES`` / ``ZH_RULES`` (``write/_patterns_en.py``, ``_patterns_zh.py``): it fires
  on a turn when
  it yields a candidate fact for one of the turn's clauses (run exactly as ``extract_rule_facts`` runs it,
  through ``_rules.statements`` and ``_patterns.apply``);
* ``fix``     a rule's value fix-up (``Rule.fix``, when a rule has one): it fires when it changes the matched
  value (a rejection, ``""``, counts as a change);
* ``lexicon`` a word of a list in ``write/_lexicon.py`` (``LEX`` terms, slot nouns, verbs of habit, relation
  words, non-occupations): it fires when it occurs inside the text of a rule match that yielded a
  candidate (relation words: when they name the person a clause is about);
* ``lexicon`` also an ending of a name's form (``MEDICINE_FORM``: INN stems such as ``statin`` and Chinese drug
  endings; ``CONDITION_FORM``: ``itis``, ``osis``, 结石...): it fires when a ``takes`` (``medical_condition``)
  candidate's value ends with it;
* ``kind``    a hand-named slot with its kind: an ``EXTRA_KINDS`` entry (older versions) or a verb concept of
  ``VERB_CONCEPTS`` (``play`` -> ``plays``, preference): it fires when a candidate of it is produced;
* ``topic``   a topic phrase of ``vocabulary.py``: on *queries* (probes that expect a memory; LoCoMo
  questions), not turns. Each attribute's card is its head (``name: description``), its Chinese name and
  its topics, embedded with the package's default embedder; a topic fires on a query when it is one of the
  query's three nearest phrases of all cards, with a cosine of at least ``--topic-floor``.

Corpora: (a) ``public``: ``shared/scenarios/public.jsonl`` and ``robustness.jsonl``; (b) ``heldout``:
``tests/scenarios/heldout_{recall,reconcile,rule_sentences}.jsonl`` and ``extra.jsonl``; (c) ``locomo``:
every turn (and, for topics, every category 1-4 question) of ``shared/data/locomo/locomo7.json``;
(d) ``new``: ``tests/scenarios/heldout_domains*.jsonl`` (the held-out test set: counts only). The ``dev``
column (``tests/scenarios/dev_*.jsonl``) is shown for information and never keeps an entry alive: an
entry that fires on public turns and on none of (b), (c), (d) is *public-only*.

Only counts are printed (LoCoMo is CC BY-NC; the held-out test set must not be read turn by turn).

Usage:
    python benchmarks/enumeration_audit.py [--json OUT] [--fail-on-public-only] [--all] [--no-topics]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from langchain_lifecycle_memory.schema import normalize_value
from langchain_lifecycle_memory.vocabulary import DEFAULT_ATTRIBUTES
from langchain_lifecycle_memory.write import _lexicon, _patterns, _rules, _subjects
from langchain_lifecycle_memory.write._patterns_en import EN_RULES
from langchain_lifecycle_memory.write._patterns_zh import ZH_RULES
from langchain_lifecycle_memory.write._values import clean

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SCENARIOS = ROOT / "tests" / "scenarios"
CORPORA: dict[str, list[Path]] = {
    "public": [SHARED / "scenarios" / "public.jsonl", SHARED / "scenarios" / "robustness.jsonl"],
    "heldout": [SCENARIOS / f"{n}.jsonl" for n in ("heldout_recall", "heldout_reconcile", "heldout_rule_sentences")]
    + [SCENARIOS / "extra.jsonl"],
    "locomo": [SHARED / "data" / "locomo" / "locomo7.json"],
    "new": [SCENARIOS / "heldout_domains.jsonl", SCENARIOS / "heldout_domains_robustness.jsonl"],
    "dev": sorted(SCENARIOS.glob("dev_*.jsonl")),
}
KEEPERS = ("heldout", "locomo", "new")
"""Corpora on which firing shows an entry serves more than the public scenarios."""
TYPES = ("rule", "fix", "lexicon", "kind", "topic")
TOPIC_RANK = 3
"""A topic fires on a query when it is one of the query's three nearest card phrases."""
SPECS = {spec.name: spec for spec in DEFAULT_ATTRIBUTES}
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[a-z0-9][a-z0-9+#'&.-]*")

# ---- corpora ----------------------------------------------------------------------------------


def _scenario_lines(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def _locomo(path: Path) -> tuple[list[str], list[str]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    turns, questions = [], []
    for conv in data:
        for key, session in conv["conversation"].items():
            if re.fullmatch(r"session_\d+", key) and isinstance(session, list):
                turns += [t.get("text", "") for t in session]
        questions += [q["question"] for q in conv.get("qa", []) if q.get("category") in (1, 2, 3, 4)]
    return turns, questions


def load_corpus(name: str) -> tuple[list[str], list[str]]:
    """``(turn texts, probe queries)`` of one corpus; missing files are skipped."""
    turns: list[str] = []
    queries: list[str] = []
    for path in CORPORA[name]:
        if not path.is_file():
            continue
        if path.suffix == ".json":
            t, q = _locomo(path)
            turns, queries = turns + t, queries + q
            continue
        for scenario in _scenario_lines(path):
            for step in scenario["steps"]:
                if step.get("type") == "turn" and len(step.get("user", "").strip()) > 1:
                    turns.append(step["user"])
                elif step.get("type") == "probe" and step.get("expect"):
                    queries.append(step["query"])
    return turns, queries


# ---- entries ----------------------------------------------------------------------------------


_PIECES = ("ZS", "I", "IAM", "ADV", "ZADV", "V", "ZV", "E_CLAUSE", "E_PREP", "ZEND", "EN_VERB", "ZH_VERB")


def _short(pattern: str) -> str:
    """A pattern with the shared pieces of ``_patterns`` named (``<I>``, ``<V>``...) instead of spelt out."""
    pieces = {name: getattr(_patterns, name) for name in _PIECES if hasattr(_patterns, name)}
    for name, text in sorted(pieces.items(), key=lambda kv: -len(kv[1])):
        pattern = pattern.replace(text, f"<{name}>")
    return pattern


def _rule_key(zh: bool, index: int, rule: _patterns.Rule) -> str:
    return f"{'zh' if zh else 'en'}#{index:02d} {_short(rule.pattern.pattern)[:90]}"


def word_lists() -> dict[str, Iterable[str]]:
    """Every hand-written word list of ``_lexicon`` / ``_patterns``, by name."""
    lists: dict[str, Iterable[str]] = {f"LEX.{name}": terms for name, terms in _lexicon.LEX.items()}
    lists["NOUN_ATTRIBUTES"] = _lexicon.NOUN_ATTRIBUTES
    lists["NOT_OCCUPATION"] = _lexicon.NOT_OCCUPATION
    lists["EN_VERBS"] = _lexicon.EN_VERBS
    lists["ZH_VERBS"] = _lexicon.ZH_VERBS
    lists["EN_RELATIONS"] = _lexicon.EN_RELATIONS
    lists["ZH_RELATIONS"] = _lexicon.ZH_RELATIONS
    return lists


def form_lists() -> dict[str, Iterable[str]]:
    """The endings that make a value a medicine's or a condition's name, by name (not words: never in a span)."""
    return {
        "MEDICINE_FORM": [*_lexicon.MEDICINE_STEMS, "insulin", *_lexicon.MEDICINE_ENDINGS_ZH],
        "CONDITION_FORM": _lexicon.CONDITION_ENDINGS,
    }


_FORM_OF = {
    "takes": ("MEDICINE_FORM", _lexicon.medicine_form),
    "medical_condition": ("CONDITION_FORM", _lexicon.condition_form),
}


def all_entries() -> dict[str, list[str]]:
    entries: dict[str, list[str]] = {t: [] for t in TYPES}
    for zh, table in ((False, EN_RULES), (True, ZH_RULES)):
        for i, rule in enumerate(table):
            entries["rule"].append(_rule_key(zh, i, rule))
            if getattr(rule, "fix", None) is not None:
                entries["fix"].append(_rule_key(zh, i, rule))
    for name, words in {**word_lists(), **form_lists()}.items():
        entries["lexicon"] += [f"{name}:{w}" for w in words]
    entries["kind"] = [f"VERB_CONCEPTS:{k}" for k in _lexicon.VERB_CONCEPTS]
    entries["topic"] = [f"{spec.name}: {topic}" for spec in DEFAULT_ATTRIBUTES for topic in spec.topics]
    return entries


# ---- firing on turns --------------------------------------------------------------------------


class _TermIndex:
    """Finds the words of the lists inside a matched span (whole words; CJK as substrings)."""

    def __init__(self) -> None:
        self.latin: dict[str, set[str]] = defaultdict(set)
        self.cjk: list[tuple[str, str]] = []
        for name, words in word_lists().items():
            for word in words:
                key = f"{name}:{word}"
                w = normalize_value(word)
                if _CJK.search(w):
                    self.cjk.append((w, key))
                else:
                    self.latin[w].add(key)

    def find(self, span: str) -> set[str]:
        text = normalize_value(span)
        tokens = _WORD.findall(text)
        found: set[str] = set()
        for n in range(1, 5):
            for i in range(len(tokens) - n + 1):
                found |= self.latin.get(" ".join(tokens[i : i + n]).strip(".'"), set())
        found |= {key for w, key in self.cjk if w in text}
        return found


def _relation(clause: str, zh: bool) -> str | None:
    if zh:
        m = _subjects.ZH_PERSON.match(clause)
        return f"ZH_RELATIONS:{m.group('rel')}" if m else None
    text = _subjects.EN_INTRO.sub("", clause.strip())
    for pattern, repl in _subjects._EN_CONTRACTIONS:
        text = pattern.sub(repl, text)
    m = _subjects._EN_PERSON.match(text)
    if m is None:
        return None
    rel = next((r for r in _lexicon.EN_RELATIONS if r == m.group("rel").casefold()), m.group("rel").casefold())
    return f"EN_RELATIONS:{rel}"


def _fixes(rule: _patterns.Rule, text: str, zh: bool) -> bool:
    fix = getattr(rule, "fix", None)
    for m in rule.pattern.finditer(text):
        value = clean(m.group("v"), zh) if "v" in m.groupdict() and m.group("v") else ""
        if value and fix is not None and clean(fix(value, m), zh) != value:
            return True
    return False


def _rule_hits(key: str, rule: _patterns.Rule, text: str, zh: bool, terms: _TermIndex) -> set[str]:
    hits: set[str] = set()
    if rule.handler is not None and rule.handler.__name__ == "_identity":
        for m in rule.pattern.finditer(text):
            word = normalize_value(clean(m.group("v") or "", zh))
            if word in _lexicon.NOT_OCCUPATION:
                hits.add(f"NOT_OCCUPATION:{word}")
    candidates = list(_patterns.apply(rule, text, zh, SPECS))
    if _fixes(rule, text, zh):
        hits.add(f"fix|{key}")
    if not candidates:
        return hits
    hits.add(f"rule|{key}")
    hits |= {f"VERB_CONCEPTS:{c.concept}" for c in candidates if c.concept}
    for c in candidates:
        name, form = _FORM_OF.get(c.attribute or "", ("", None))
        if form is not None and (ending := form(c.value)):
            hits.add(f"{name}:{ending}")
    for m in rule.pattern.finditer(text):
        hits |= terms.find(m.group(0))
    return hits


def turn_hits(text: str, terms: _TermIndex) -> set[str]:
    """The entries that fire on one turn."""
    hits: set[str] = set()
    for _sentence, clause, subject, zh in _rules.statements(text):
        if rel := _relation(clause, zh):
            hits.add(rel)
        table = ZH_RULES if zh else EN_RULES
        for i, rule in enumerate(table):
            hits |= _rule_hits(_rule_key(zh, i, rule), rule, subject.text, zh, terms)
    return hits


def _entry_of(hit: str) -> str:
    """A hit as the entry key of ``all_entries``: ``rule|k`` -> ``k``, a list word stays."""
    return hit.split("|", 1)[1] if "|" in hit else hit


def turn_counts(turns: list[str], terms: _TermIndex) -> tuple[Counter[str], Counter[str]]:
    """``(rule-or-list-word counts, fix counts)`` over the turns: each turn counts once per entry."""
    plain: Counter[str] = Counter()
    fixes: Counter[str] = Counter()
    for text in turns:
        for hit in turn_hits(text, terms):
            (fixes if hit.startswith("fix|") else plain)[_entry_of(hit)] += 1
    return plain, fixes


# ---- firing of topics on queries --------------------------------------------------------------


def _cards() -> tuple[list[str], list[tuple[str, str | None]]]:
    phrases, owners = [], []
    for spec in DEFAULT_ATTRIBUTES:
        card = [(f"{spec.name.replace('_', ' ')}: {spec.description}", None), (spec.zh, None)]
        card += [(t, t) for t in spec.topics]
        for text, topic in card:
            if text:
                phrases.append(text)
                owners.append((spec.name, topic))
    return phrases, owners


def topic_counts(queries: list[str], floor: float, embeddings: Any) -> Counter[str]:
    """How many queries each topic is one of the ``TOPIC_RANK`` nearest card phrases of (cosine >= ``floor``)."""
    import numpy as np

    if not queries:
        return Counter()
    phrases, owners = _cards()
    p = np.asarray(embeddings.embed_documents(phrases), dtype=np.float64)
    q = np.asarray(embeddings.embed_documents(queries), dtype=np.float64)
    sims = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ (p / np.linalg.norm(p, axis=1, keepdims=True)).T
    counts: Counter[str] = Counter()
    for row in sims:
        near = [int(i) for i in np.argsort(-row)[:TOPIC_RANK] if row[i] >= floor and owners[i][1] is not None]
        counts.update(f"{owners[i][0]}: {owners[i][1]}" for i in near)
    return counts


# ---- report -----------------------------------------------------------------------------------


def audit(topics: bool = True, floor: float = 0.4) -> dict[str, dict[str, dict[str, int]]]:
    """``{type: {entry: {corpus: turns (or queries) it fired on}}}``."""
    entries = all_entries()
    terms = _TermIndex()
    table: dict[str, dict[str, dict[str, int]]] = {t: {e: {} for e in entries[t]} for t in TYPES}
    embeddings = None
    if topics:
        from langchain_lifecycle_memory.store.embeddings import UniversalSentenceEncoderEmbeddings

        embeddings = UniversalSentenceEncoderEmbeddings()
    for corpus in CORPORA:
        turns, queries = load_corpus(corpus)
        plain, fixes = turn_counts(turns, terms)
        found = {"rule": plain, "fix": fixes, "lexicon": plain, "kind": plain}
        if embeddings is not None:
            found["topic"] = topic_counts(queries, floor, embeddings)
        for kind, counts in found.items():
            for entry in entries[kind]:
                table[kind][entry][corpus] = counts.get(entry, 0)
    return table


def status(counts: dict[str, int]) -> str:
    if any(counts.get(c, 0) for c in KEEPERS):
        return "general"
    return "public-only" if counts.get("public", 0) else "never"


def _summary(table: dict[str, dict[str, dict[str, int]]]) -> None:
    print(f"{'type':<8} {'entries':>7} {'public':>7} {'heldout':>7} {'locomo':>7} {'new':>7} "
          f"{'pub-only':>8} {'never':>7}")  # fmt: skip
    for kind, rows in table.items():
        states = Counter(status(c) for c in rows.values())
        fired = {c: sum(1 for r in rows.values() if r.get(c)) for c in ("public", *KEEPERS)}
        print(f"{kind:<8} {len(rows):>7} {fired['public']:>7} {fired['heldout']:>7} {fired['locomo']:>7} "
              f"{fired['new']:>7} {states['public-only']:>8} {states['never']:>7}")  # fmt: skip


def _listing(table: dict[str, dict[str, dict[str, int]]], show_all: bool) -> None:
    cols = ("public", *KEEPERS, "dev")
    for wanted in ("public-only", "never"):
        for kind, rows in table.items():
            flagged = [(e, c) for e, c in rows.items() if status(c) == wanted]
            if not flagged:
                continue
            print(f"\n{wanted} {kind} ({len(flagged)}):  counts = " + " / ".join(cols))
            if kind == "lexicon" and wanted == "never" and not show_all:
                by_list: dict[str, list[str]] = defaultdict(list)
                for entry, _ in flagged:
                    name, _, word = entry.partition(":")
                    by_list[name].append(word)
                for name, words in by_list.items():
                    print(f"  {name} ({len(words)}): " + ", ".join(sorted(words)))
                continue
            for entry, counts in flagged:
                print(f"  {'/'.join(str(counts.get(c, 0)) for c in cols):<14} {entry}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="write every entry's counts as JSON")
    parser.add_argument("--fail-on-public-only", action="store_true", help="exit 1 if an entry fires only on public")
    parser.add_argument("--all", action="store_true", help="list never-firing lexicon words one a line")
    parser.add_argument("--no-topics", action="store_true", help="skip the topic phrases (no embedder needed)")
    parser.add_argument("--topic-floor", type=float, default=0.4, help="least cosine for a topic to fire")
    args = parser.parse_args(argv)
    table = audit(topics=not args.no_topics, floor=args.topic_floor)
    if args.no_topics:
        table.pop("topic")
    _summary(table)
    _listing(table, args.all)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(table, indent=1, ensure_ascii=False), encoding="utf-8")
    public_only = sum(1 for rows in table.values() for c in rows.values() if status(c) == "public-only")
    print(f"\npublic-only entries: {public_only}")
    return 1 if args.fail_on_public_only and public_only else 0


if __name__ == "__main__":
    sys.exit(main())
