"""Render ``docs/benchmarks.md`` from the result files in ``benchmarks/results/``.

    python benchmarks/report.py            # rewrite docs/benchmarks.md
    python benchmarks/report.py --check    # exit 1 when docs/benchmarks.md is not what the results render

Every number on that page comes from a JSON file a benchmark wrote; each section names the
command that wrote it, the machine and the date. To refresh a section, rerun its command, then
this script. ``tests/unit_tests/test_docs.py`` fails when the page and the results disagree.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from head_to_head import copies_a_line

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "benchmarks.md"

INTRO = """# Benchmarks

Every table on this page is rendered by `python benchmarks/report.py` from the JSON files that the
benchmark scripts write to `benchmarks/results/`; each section names the command that produced it,
the machine and the date. Rerun a command, then `python benchmarks/report.py`, to refresh a section
(`tests/unit_tests/test_docs.py` checks that this page matches the files). Timings come from a shared
2-core machine: read them as orders of magnitude and as ratios to the baseline measured in the same
run, not as absolute promises.
"""


def table(head: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    head = list(head)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def provenance(data: dict[str, Any]) -> str:
    machine = data.get("machine") or {}
    where = ", ".join(
        str(x) for x in (machine.get("platform"), f"{machine.get('cpus')} CPUs" if machine.get("cpus") else None) if x
    )
    when = str(data.get("date", ""))[:10]
    return f"Command: `{data.get('command', '?')}` · machine: {where or '?'} · date: {when or '?'}"


def pct(part: float, whole: float) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f} %)" if whole else "-"


# ---------------------------------------------------------------------------- sections
def scenarios(data: dict[str, Any]) -> str:
    files = data["files"]
    rows = [
        (
            f"`{name}`",
            row["probes"],
            pct(row["gold"]["passed"], row["probes"]),
            pct(row["rule"]["passed"], row["probes"]),
        )
        for name, row in files.items()
    ]
    out = [
        "## Scenario probes",
        "",
        "Each scenario replays dated turns into a fresh store, then asks probes judged on the injected memory "
        "block (expected strings present, forbidden ones absent). *Gold facts* replays the facts written with "
        "each turn (the lifecycle and retrieval alone); *rule extractor* extracts them offline from the turn's "
        "text (the default without a model). Files under `tests/scenarios/heldout_*` were written before the "
        "code they measure and are never edited; `tests/unit_tests/test_score_guard.py` fails when a score "
        "drops below `tests/scenarios/recorded_scores.json`.",
        "",
        provenance(data),
        "",
        table(("file", "probes", "gold facts", "rule extractor"), rows),
    ]
    held = {n: row for n, row in files.items() if n.startswith("heldout_")}
    if held:
        totals: dict[str, dict[str, list[int]]] = {}
        for row in held.values():
            for x in ("gold", "rule"):
                for c, (passed, total) in row[x]["by_category"].items():
                    cell = totals.setdefault(c, {"gold": [0, 0], "rule": [0, 0]})[x]
                    cell[0], cell[1] = cell[0] + passed, cell[1] + total
        probes = sum(row["probes"] for row in held.values())
        rows = [(c, *(pct(*totals[c][x]) for x in ("gold", "rule"))) for c in sorted(totals)]
        rows.append(("all", *(pct(sum(r[x]["passed"] for r in held.values()), probes) for x in ("gold", "rule"))))
        out += [
            "",
            f"All {len(held)} held-out files together, by category:",
            "",
            table(("category", "gold facts", "rule extractor"), rows),
        ]
    for name in (
        "heldout_domains.jsonl",
        "heldout_fresh.jsonl",
        "heldout_life.jsonl",
        "heldout_slots.jsonl",
        "heldout_winter.jsonl",
        "heldout_spring.jsonl",
    ):
        if (scores := files.get(name)) is None:
            continue
        rows = [
            (c, *(f"{scores[x]['by_category'][c][0]}/{scores[x]['by_category'][c][1]}" for x in ("gold", "rule")))
            for c in sorted(scores["gold"]["by_category"])
        ]
        out += ["", f"By category, `{name}`:", "", table(("category", "gold facts", "rule extractor"), rows)]
    return "\n".join(out)


def locomo(data: dict[str, Any]) -> str:
    ks = sorted({k for r in data["retrievers"].values() for k in r})
    head = ["retriever", *(k.replace("recall", "R") for k in ks), *(f"R@10 cat. {c}" for c in "1234")]
    rows = []
    for name, by_k in data["retrievers"].items():
        ten = by_k.get("recall@10", {})
        rows.append((name, *(f"{by_k[k]['all']:.3f}" for k in ks), *(f"{ten.get(c, 0):.3f}" for c in "1234")))
    questions = data.get("questions_by_category", {})
    return "\n".join(
        [
            "## LoCoMo evidence recall",
            "",
            "Recall@k of the evidence turns of LoCoMo's questions (categories 1-4: single-hop, multi-hop, "
            "temporal, open-domain) when each conversation's turns are stored as episodes and each question "
            "is a search. The data is CC BY-NC 4.0 and is not shipped: get `locomo10.json` from "
            "https://github.com/snap-research/locomo and pass its path (see `docs/operations.md`).",
            "",
            provenance(data),
            "",
            table(head, rows),
            "",
            f"Data: `{data.get('data', '?')}`, {len(data.get('conversations', []))} conversations. "
            f"Questions: {sum(questions.get(c, 0) for c in '1234')} "
            f"({', '.join(f'{c}: {questions[c]}' for c in '1234' if c in questions)}).",
        ]
    )


def head_to_head_people(data: dict[str, Any]) -> str:
    return "\n".join(
        [
            "### Held out: other people in the user's life",
            "",
            "`benchmarks/scenarios/heldout_people.jsonl` was written after the table above and before the change "
            "it measures (facts about a relative re-filed under that person), and has not been edited since: "
            "8 scenarios, 16 questions. In each, the user states a fact of their own, a relative's or friend's "
            "fact of the same kind, and later an update about that person by name or by relation alone; one "
            "question asks the user's fact, one the other person's current fact. `full` never passes the memory "
            "level here (the whole conversation holds the old values the questions forbid), but with four turns "
            "the model answers most questions from it. mem0 keeps a person's old value beside the new one and "
            "mixes the user's facts with the other person's: a forbidden value is in its top 3 for 13 of the 16 "
            "questions. It ran with the 12,288-token context and two server threads. LangMem (with the shim) "
            "keeps old and new values side by side too: a forbidden value is in its top 3 for all 16 questions. "
            "Its prompts share little from call to call, so each call re-reads about 1,900 prompt tokens; it ran "
            "one scenario per command, as the merged command below says.",
            "",
            *_h2h_table(data),
        ]
    )


H2H_COLUMNS = ("system", "memory", "answer", "answers copying a memory line", "errors", "LLM calls", "seconds")


def _h2h_table(data: dict[str, Any]) -> list[str]:
    """Provenance line and the table of systems, for a head-to-head section."""
    return [f"{provenance(data)} · model: `{data.get('model')}`", "", table(H2H_COLUMNS, _h2h_rows(data))]


def _h2h_rows(data: dict[str, Any]) -> list[tuple[Any, ...]]:
    rows = []
    for name, s in data["systems"].items():
        rows.append(
            (name, pct(s["memory"]["passed"], s["memory"]["total"]), pct(s["answer"]["passed"], s["answer"]["total"]),
             s.get("answers_copying_a_memory_line", "-"), len(s["errors"]), s["llm_calls"], f"{s['seconds']:.0f}")
        )  # fmt: skip
    return rows


def head_to_head(data: dict[str, Any]) -> str:
    rows = _h2h_rows(data)
    versions = ", ".join(f"{k} {v}" for k, v in sorted(data.get("versions", {}).items()) if v)
    return "\n".join(
        [
            "## Head to head: this package, LangMem and mem0 on one local model",
            "",
            "The same scenarios (`benchmarks/scenarios/head_to_head.jsonl`: supersedes, set-valued facts, "
            "relatives, retractions, numbers that change, implicit switches; zh, en and mixed) go to each system "
            "as its documentation says to use it, with the same chat model and embedder. *Memory*: the top 3 "
            "memories shown (ours: the injected block) contain every expected value and no forbidden one. "
            "*Answer*: the same model answers with those memories in that system's prompt (ours: `MEMORY_PROMPT`), "
            "judged on the expected values; an answer that repeats a whole memory line is counted apart (`-`: not "
            "recorded in that run). `none` has no memory; `full` puts the whole conversation in the prompt. "
            "`langmem+shim` runs LangMem with a client-side shim that turns tool calls the small model writes as "
            "text back into tool calls. mem0's prompt needs a 12,288-token context (`LOCAL_LLM_CTX=12288`); the "
            "others ran on the server's default 4,096. The scenarios have three to five turns, so a system that keeps "
            "every turn shows most of them in its top 3, and the answering model can pick the newest. The seconds "
            "are wall time on a shared 2-core machine: a run beside other work takes longer.",
            "",
            f"{provenance(data)} · model: `{data.get('model')}` (Qwen2.5-Coder-1.5B-Instruct Q4_K_M on llama.cpp's "
            "OpenAI-compatible server)",
            "",
            f"Scenarios run: {data.get('scenarios', 'all')} (the ids are in the command). Versions: {versions}.",
            "",
            table(H2H_COLUMNS, rows),
        ]
    )


def _misses(data: dict[str, Any]) -> list[str]:
    """One line per question this package misses at either level, with what its memory lacked or showed."""
    return [
        f"- `{q['scenario']}` {q['q']} — memory: "
        + ("passed" if q["memory_pass"] else "; ".join(
            [*(f"missing {' / '.join(alts)}" for alts in q.get("missing") or []),
             *(f"forbidden {f} shown" for f in q.get("forbidden") or [])]) or "failed")
        + f"; answer: {'passed' if q['answer_pass'] else 'failed'}"
        for q in data.get("queries", [])
        if q.get("system", "ours") == "ours" and not (q["memory_pass"] and q["answer_pass"])
    ]  # fmt: skip


def head_to_head_all(data: dict[str, Any]) -> str:
    """This package alone on every scenario of the head-to-head file, with each question it misses."""
    return "\n".join(
        [
            "### This package on the whole file",
            "",
            "The first table of this section ran a subset of its file on every system (LangMem and mem0 take "
            "minutes per scenario). This package alone on all of its scenarios, with every question it misses. "
            "Most memory-level misses trace to the small model's extraction: one fact for a compound sentence (the "
            "rent left inside the city's statement), a slot named apart from the one it changes (`job_title` beside "
            "`job`). A compound statement loses an old number when a later change gives the same measure again, "
            'by the word before it (the salary: "现在年薪 33 万" takes "年薪大概 28 万" out of the job\'s statement) '
            "or, when the new number's words name nothing, by its unit (the swim: \"Pushed it to 2400m per session "
            'now" takes "each time 1500 meters" out of the sport\'s statement); "月租 4200" and "现在每个月 4850" are '
            "not read as one measure. The write path keeps an extraction that fails its check as a statement beside "
            "the current value rather than let it archive that value, so the old and the new are both shown, unless "
            "the rules read a slot from the same words (the commute: the model filed the e-bike under `editor`, the "
            "rules' `commute` stands in). Each line of our block names the slot and value its statement was filed "
            'under; where a named line sits beside the user\'s words kept without a slot (the swim: "sport: 游泳" '
            'beside "Pushed it to 2400m per session now"), the model answered from the named line.',
            "",
            *_h2h_table(data),
            "",
            "Questions missed at either level:",
            "",
            *_misses(data),
        ]
    )


def head_to_head_switches(data: dict[str, Any]) -> str:
    """This package (with ``full`` and ``none``) on the held-out switches file, with each question it misses."""
    return "\n".join(
        [
            "### Held-out switches",
            "",
            "`benchmarks/scenarios/heldout_switches.jsonl` was written and committed before the changes it measures "
            "and has not been edited since: 10 scenarios, 12 questions, on themes chosen apart from the other files' "
            "(a commute by e-scooter, a neighbour's pigeons, body fat, a father-in-law's trade, a 5k best, languages, "
            "a phone carrier, a pottery class given up, a son's class, home internet). LangMem and mem0 take an hour "
            "or more per file on this machine and did not run on it; `full` and `none` did.",
            "",
            *_h2h_table(data),
            "",
            "Questions missed at either level:",
            "",
            *_misses(data),
        ]
    )


def perf_guard(data: dict[str, Any]) -> str:
    def cell(v: Any) -> str:
        return "-" if v is None else "yes" if v is True else "no" if v is False else str(v)

    rows = [
        (m["measurement"], cell(m["ours"]), cell(m["langchain-chroma"]), cell(m["bar"]), cell(m["within_bar"]))
        for m in data["measurements"]
    ]
    return "\n".join(
        [
            "## Performance guard",
            "",
            "Embedded store, default configuration, against plain `langchain-chroma` run in the same process "
            "tree. The bars are guards, not targets. Bulk data uses a cheap deterministic embedder for both "
            "systems; the warm ratio uses the bundled encoder.",
            "",
            provenance(data),
            "",
            table(("measurement", "ours", "langchain-chroma", "bar", "within bar"), rows),
        ]
    )


def query_walk(data: dict[str, Any]) -> str:
    back = data.get("returns") or []
    return "\n".join(
        [
            "## A search's walk through the package",
            "",
            "The package modules one warm search enters, down to "
            f"{data['depth']} calls below `LifecycleRetriever._get_relevant_documents`, and every call back into "
            "a module that had called into the caller (a walk that goes back up).",
            "",
            provenance(data),
            "",
            f"Modules, in order: {' → '.join(f'`{m}`' for m in data['modules'])} ({len(data['modules'])}). "
            f"Calls back up: {len(back)}.",
        ]
    )


SECTIONS: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
    ("scenarios.json", scenarios),
    ("locomo.json", locomo),
    ("head_to_head.json", head_to_head),
    ("h2h_people", head_to_head_people),
    ("h2h_all", head_to_head_all),
    ("h2h_switches", head_to_head_switches),
    ("perf_guard.json", perf_guard),
    ("query_walk.json", query_walk),
]


def head_to_head_result(folder: str = "h2h") -> dict[str, Any] | None:
    """``head_to_head.json``, or the per-system files of ``results/<folder>/`` merged (one run per system)."""
    whole = RESULTS / "head_to_head.json"
    if folder == "h2h" and whole.is_file():
        return json.loads(whole.read_text(encoding="utf-8"))
    parts = sorted((RESULTS / folder).glob("*.json"))
    if not parts:
        return None
    order = ["ours", "langmem", "langmem+shim", "mem0", "none", "full"]
    merged: dict[str, Any] = {"systems": {}}
    for part in parts:
        data = json.loads(part.read_text(encoding="utf-8"))
        versions = {**merged.get("versions", {}), **{k: v for k, v in data.get("versions", {}).items() if v}}
        merged.update({k: v for k, v in data.items() if k not in ("systems", "queries")}, versions=versions)
        for name, totals in data["systems"].items():
            rows = [r for r in data.get("queries", []) if r.get("system") == name and r.get("answer") is not None]
            if "answers_copying_a_memory_line" not in totals and rows:  # a run from before the count: its detail
                totals["answers_copying_a_memory_line"] = sum(copies_a_line(r["answer"], r["memories"]) for r in rows)
        merged["systems"].update(data["systems"])
        merged.setdefault("queries", []).extend(data.get("queries", []))
    merged["systems"] = dict(
        sorted(merged["systems"].items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)
    )
    runs = [json.loads(p.read_text(encoding="utf-8"))["command"] for p in parts]
    commands = {re.sub(r"--systems \S+", "--systems NAME", c) for c in runs}
    merged["command"] = "; ".join(sorted(commands)) + f" (one run per system: {', '.join(merged['systems'])})"
    return merged


def render() -> str:
    parts = [INTRO.strip()]
    for name, section in SECTIONS:
        data = head_to_head_result() if name == "head_to_head.json" else None
        data = head_to_head_result(name) if name in ("h2h_people", "h2h_all", "h2h_switches") else data
        path = RESULTS / name
        if data is None and path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))
        if data is not None:
            parts.append(section(data))
    return "\n\n".join(parts) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    page = render()
    if args.check:
        same = PAGE.is_file() and PAGE.read_text(encoding="utf-8") == page
        print(
            "docs/benchmarks.md is up to date"
            if same
            else "docs/benchmarks.md differs: run python benchmarks/report.py"
        )
        return 0 if same else 1
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
