"""Writes the notebooks of this folder from the cell sources below, outputs stripped.

Edit the cells here, then run ``python notebooks/_build.py`` (all notebooks) or
``python notebooks/_build.py 02`` (those whose name starts with ``02``). The saved
notebooks carry no outputs and no execution counts; ``tests/unit_tests/test_notebooks.py``
executes every one of them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
KERNEL = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def md(text: str) -> nbformat.NotebookNode:
    return new_markdown_cell(text.strip("\n"))


def ruff_binary() -> str | None:
    """The ``ruff`` executable of this environment, if installed."""
    try:
        from ruff.__main__ import find_ruff_bin

        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("ruff")


def _ruff_format(source: str) -> str:
    """The cell as ``ruff format`` writes it (IPython magics kept on top); unchanged without ruff."""
    ruff = ruff_binary()
    lines = source.split("\n")
    magics = [line for line in lines if line.startswith("%")]
    body = "\n".join(line for line in lines if not line.startswith("%"))
    if ruff is None:
        return source
    done = subprocess.run(
        [ruff, "format", "--stdin-filename", str(HERE / "cell.py"), "-"],
        input=body,
        capture_output=True,
        text=True,
        check=True,
    )
    return "\n".join([*magics, done.stdout.strip("\n")])


def code(text: str) -> nbformat.NotebookNode:
    cell = new_code_cell(_ruff_format(text.strip("\n")))
    cell.execution_count = None
    cell.outputs = []
    return cell


NOTEBOOKS: dict[str, list[nbformat.NotebookNode]] = {}


Cells = list[nbformat.NotebookNode]


def notebook(name: str) -> Callable[[Callable[[], Cells]], Callable[[], Cells]]:
    def register(fn: Callable[[], Cells]) -> Callable[[], Cells]:
        NOTEBOOKS[name] = fn()
        return fn

    return register


# ---------------------------------------------------------------------------------------- 01
@notebook("01_quickstart.ipynb")
def quickstart() -> list[nbformat.NotebookNode]:
    return [
        md("""
# Quickstart: long-term memory that stays right after it is written

`LifecycleMemory` runs the whole lifecycle behind one object:

```
messages ──extract──▶ facts ──update (archive what is superseded)──▶ Chroma
query ──retrieve (hybrid, active only)──▶ records ──inject──▶ prompt block
forget / purge / sweep
```

This notebook runs **offline, with no API key**: facts come from the rule extractor (zh + en
patterns, no model), vectors from the bundled Universal Sentence Encoder, and the store is an
embedded Chroma in a temporary folder. With `OPENAI_API_KEY` set, the extraction is done by
`ChatOpenAI` instead; nothing else changes.
"""),
        code("""
%matplotlib inline
import os
import shutil

import matplotlib.pyplot as plt
from _helpers import scratch

from langchain_lifecycle_memory.memory import LifecycleMemory

workdir = scratch("quickstart")
extractor = "rule"  # pattern-based extraction: no model, no key
if os.environ.get("OPENAI_API_KEY"):
    from langchain_openai import ChatOpenAI

    extractor = ChatOpenAI(model="gpt-4o-mini", temperature=0)

memory = LifecycleMemory(path=workdir, extractor=extractor)
print("embedded Chroma in", workdir, "| extractor:", memory.extractor_name)
"""),
        md("""
## 1. Remember conversations (Chinese and English)

`add_messages` takes LangChain messages or `(role, text)` pairs. `at=` is when the turn happened
(here we replay a week in January 2024); it becomes the memory's `valid_from`. Each call returns
what the update step did: records **added**, **refreshed** (the same fact said again: no
duplicate) and **archived** (superseded).
"""),
        code("""
USER = "dana"
conversation = [
    ("2024-01-02T09:00:00Z", [("user", "我喜欢使用 Vim 编辑器"), ("ai", "好的，记住了。")]),
    ("2024-01-02T09:05:00Z", [("user", "I work as a data analyst at a logistics company."), ("ai", "Noted.")]),
    ("2024-01-03T18:30:00Z", [("user", "我对青霉素过敏"), ("ai", "这很重要，记下了。")]),
    ("2024-01-05T20:00:00Z", [("user", "My dog is called Rex."), ("ai", "Hi Rex!")]),
    ("2024-01-06T08:00:00Z", [("user", "我吃素好几年了。"), ("ai", "好的。")]),
    ("2024-01-07T10:00:00Z", [("user", "What's a good sourdough recipe?"), ("ai", "Start with...")]),
    ("2024-01-08T09:00:00Z", [("user", "I'm vegetarian, by the way."), ("ai", "Got it.")]),
]
for at, messages in conversation:
    result = memory.add_messages(messages, user_id=USER, at=at)
    learned = ", ".join(f"{r.attribute}={r.value}" for r in result.added + result.refreshed)
    print(f"{at[:10]}  {result.summary():<36} {learned}")
"""),
        md("""
The recipe question taught nothing. "I'm vegetarian" names the same slot (`user.diet`) as
"我吃素好几年了" but with another value, so the newer statement wins and the older one is archived.
Every memory is a record with a slot (`entity.attribute = value`), a kind (which sets its
lifetime), a confidence and a status:
"""),
        code("""
for r in memory.list(USER):
    slot = f"{r.entity}.{r.attribute}"
    print(f"{r.status.value:<9}{r.kind:<11}{slot:<14}{r.value!s:<14}conf={r.confidence:.2f}  {r.content}")
"""),
        md("""
## 2. Search: paraphrases reach the right memory

The seed article's example: "我适合用什么工具写 Python？" shares almost no words with "我喜欢使用 Vim
编辑器", and a dense-only search with a threshold misses it. `search` fuses three channels, each
calibrated to [0, 1]: **dense** (embedding cosine), **lexical** (BM25) and **slot** (the query is
about a record's attribute, e.g. *tools for writing code → editor*). Only records whose fused
score reaches `min_score` (0.30) come back.
"""),
        code("""
query = "我适合用什么工具写 Python？"
for doc in memory.search(query, user_id=USER, now="2024-01-10"):
    s = doc.metadata["scores"]
    print(
        f"fused={doc.metadata['score']:.2f} (dense={s['dense']:.2f} lexical={s['lexical']:.2f} slot={s['slot']:.2f})",
        doc.page_content,
    )
"""),
        md("""
`explain` shows **every** record with its channel scores and why it was kept or dropped. The plot
shows two queries, one per language; the dashed line is the threshold.
"""),
        code("""
queries = {
    "Q1 (zh): which tool should I write Python with?": "我适合用什么工具写 Python？",
    "Q2 (en): pick a restaurant for Friday": "Can you suggest a restaurant for Friday night?",
}
fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), sharex=True)
for ax, (title, q) in zip(axes, queries.items()):
    explanation = memory.explain(q, user_id=USER, now="2024-01-10")
    cands = sorted(explanation.candidates, key=lambda c: c.fused)
    labels = [f"{c.record.attribute} ({c.decision})" for c in cands]
    ys = range(len(cands))
    for i, channel in enumerate(("dense", "lexical", "slot")):
        ax.barh([y + (i - 1.5) * 0.2 for y in ys], [c.channels.get(channel, 0) for c in cands], 0.2, label=channel)
    ax.barh([y + 0.3 for y in ys], [c.fused for c in cands], 0.2, label="fused", color="black")
    ax.axvline(explanation.min_score, ls="--", color="red", label="min_score")
    ax.set_yticks(list(ys), labels)
    ax.set_title(title, fontsize=10)
    ax.set_xlim(0, 1.05)
axes[0].legend(loc="lower right", fontsize=8)
fig.suptitle("Per-record scores of one query (explain)")
fig.tight_layout()
plt.show()
for q in queries.values():
    print(q, "->", [d.metadata["attribute"] for d in memory.search(q, user_id=USER, now="2024-01-10")])
"""),
        md("""
## 3. Inject: the block that goes in front of the model

`inject` formats what `search` found within a token budget (`max_tokens=600`): one line per memory
with its date and confidence, quoted so that a stored sentence can never act as an instruction,
and the rule "the user's latest statement wins". The block's language follows the query. When
nothing relevant is known, the block says so instead of guessing (context pollution is the
failure mode where unrelated memories are injected as "facts").
"""),
        code("""
block = memory.inject("我适合用什么工具写 Python？", user_id=USER, now="2024-01-10")
print(block.text)
print("\\n-- tokens:", block.tokens, "| records included:", len(block.included), "| empty:", block.empty)

weather = memory.inject("Will it rain tomorrow?", user_id=USER, now="2024-01-10")
print("\\n-- unrelated question, empty:", weather.empty)
print(weather.text)
"""),
        md("""
## 4. A preference changes: the old value is archived, not piled up

In March the user switches editors. The update step finds the live record of the same slot
(`user.editor`), archives it (`valid_to`, `superseded_by`) and adds the new one. Retrieval returns
active records only, so the model never sees "Vim" and "VS Code" side by side.
"""),
        code("""
result = memory.add_messages([("user", "我现在改用 VS Code 了")], user_id=USER, at="2024-03-01T10:00:00Z")
print(result.summary())
print(memory.inject("What editor should I set up for Python?", user_id=USER, now="2024-03-02").text)
"""),
        md("""
`history` keeps every version of a slot (bi-temporal: `valid_from`/`valid_to` is when it was true),
so point-in-time questions still work with `as_of`:
"""),
        code("""
for r in memory.history(USER, "user", "editor"):
    until = r.valid_to.date() if r.valid_to else "now"
    print(f"{r.value:<8} {r.status.value:<9} valid {r.valid_from.date()} -> {until}")

january = memory.search("What editor did I use?", user_id=USER, now="2024-03-02", as_of="2024-01-15")
print("\\nas of 2024-01-15:", [d.page_content for d in january])
"""),
        md("""
## 5. Forget on request

`forget` archives what the user asks to forget (by `record_id`, by slot, or by a query like the
user's own words). Archived memories leave retrieval at once; the history stays auditable until the
retention sweep removes it. `purge` is the hard delete.
"""),
        code("""
forgotten = memory.forget(USER, query="请忘掉我的过敏信息", now="2024-03-05")
print("archived:", [r.content for r in forgotten])
block = memory.inject("医生要给我开抗生素，我需要提醒什么？", user_id=USER, now="2024-03-06")
print("allergy still injected?", "青霉素" in block.text)
print("history of user.allergy:", [(r.value, r.status.value) for r in memory.history(USER, "user", "allergy")])
"""),
        code("""
report = memory.purge(USER)  # hard delete: every status, the history, the bytes on disk
print("deleted", report.items_deleted, "items; left:", len(memory.list(USER)))
shutil.rmtree(workdir, ignore_errors=True)
"""),
        md("""
**Next:** `02_five_failure_modes.ipynb` reproduces each failure mode of the seed article with a naive
engine and shows the fix; `03_langgraph_agent.ipynb` puts the same memory into a LangGraph agent.
"""),
    ]


# ---------------------------------------------------------------------------------------- 02
@notebook("02_five_failure_modes.ipynb")
def failure_modes() -> list[nbformat.NotebookNode]:
    return [
        md("""
# The five failure modes, reproduced and fixed

The seed article ("LLM记忆：写入正确只是起点，使用阶段才是成败关键") argues that long-term memory
rarely fails when it is *written*; it fails *later*, when it is used. It names five failure
modes and demonstrates them with a small `MemoryEngine` over Chroma: append every statement, search
by embedding similarity with a fixed `min_score`, paste the hits into the prompt.

| # | failure mode | seed article | here |
|---|---|---|---|
| 1 | semantic gap | "我适合用什么工具写 Python？" misses "我喜欢使用 Vim 编辑器" | dense + BM25 + slot routing, fused |
| 2 | conflict | "Vim" and "VS Code" recalled together | slot-keyed update archives the superseded fact |
| 3 | context pollution | a low `min_score` injects unrelated memories | calibrated threshold; "nothing known" |
| 4 | bloat | memories grow without bound | TTL per kind + retention sweep |
| 5 | version drift | an embedder upgrade silently changes scores | fingerprint, `EmbeddingMismatchError`, `reindex` |

Each section runs the article's engine (`naive.NaiveMemory`: append-only, dense-only, `top_k=5`,
`min_score=0.3` as in the article's demo) and this package's `LifecycleMemory` on **the same facts
with the same embedder** (the offline Universal Sentence Encoder), then plots the difference.
"""),
        code("""
%matplotlib inline
import random
from datetime import datetime, timedelta, timezone

import matplotlib.pyplot as plt
import numpy as np
from _helpers import CachedEmbeddings, scratch
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings
from langchain_lifecycle_memory.memory import LifecycleMemory
from langchain_lifecycle_memory.naive import NaiveMemory, fresh_store

emb = CachedEmbeddings(UniversalSentenceEncoderEmbeddings())
NOW = "2024-03-02T09:00:00Z"


def make_engines(embeddings=emb):
    \"\"\"The article's engine and ours, each on a fresh in-memory Chroma store, same embedder.\"\"\"
    naive = NaiveMemory(fresh_store(embeddings, index={"fields": ["content"]}))  # top_k=5, min_score=0.3
    ours = LifecycleMemory(fresh_store(embeddings))
    return naive, ours


def fact(attribute, value, content, kind="preference"):
    return {"entity": "user", "attribute": attribute, "value": value, "content": content, "kind": kind}


def tell(naive, ours, user, facts, at):
    \"\"\"The same extracted facts go to both engines (the naive one appends their text).\"\"\"
    ours.add_facts(facts, user, at=at)
    naive.add([f["content"] for f in facts], user, at=at)
"""),
        md("""
## 1. Semantic gap

Six facts about one user, then ten requests that *need* one of them but are phrased the way people
actually ask (half Chinese, half English). The article's engine scores each stored statement by
cosine similarity; ours fuses dense, lexical (BM25) and slot channels (the request is about an
attribute: *antibiotics → allergy*, *restaurant → diet*), each calibrated to [0, 1].
"""),
        code("""
naive, ours = make_engines()
PROFILE = [
    fact("editor", "Vim", "用户喜欢使用 Vim 编辑器"),
    fact("allergy", "penicillin", "The user is allergic to penicillin.", "profile"),
    fact("diet", "素食", "用户坚持素食多年", "profile"),
    fact("pet", "Rex", "The user has a dog called Rex.", "profile"),
    fact("job", "数据分析师", "用户在一家物流公司做数据分析师", "profile"),
    fact("city", "Hangzhou", "The user lives in Hangzhou.", "profile"),
]
ATTRIBUTE_OF = {f["content"]: f["attribute"] for f in PROFILE}
tell(naive, ours, "u1", PROFILE, at="2024-01-01T10:00:00Z")

PARAPHRASES = [  # (request, the attribute it needs)
    ("我适合用什么工具写 Python？", "editor"),
    ("Which plugins should I install to code faster?", "editor"),
    ("医生要给我开抗生素，我需要提醒什么？", "allergy"),
    ("The doctor wants to prescribe antibiotics. Anything I should mention?", "allergy"),
    ("周末朋友聚餐，帮我挑家餐厅吧", "diet"),
    ("Can you suggest a restaurant for Friday night?", "diet"),
    ("我出差一周，谁来照顾我的宠物？", "pet"),
    ("帮我写一段求职简历里的自我介绍", "job"),
    ("Help me write the summary section of my CV.", "job"),
    ("Any good weekend trips near where I live?", "city"),
]


def naive_scores(query, user="u1"):
    \"\"\"Cosine of every stored statement (the article's score), by attribute.\"\"\"
    hits = naive.store.search(NaiveMemory.namespace(user), query=query, limit=50)
    return {ATTRIBUTE_OF.get(h.value["content"], "?"): h.score for h in hits}


def ours_scores(query, user="u1"):
    \"\"\"Our fused score of every record, by attribute.\"\"\"
    return {c.record.attribute: c.fused for c in ours.explain(query, user_id=user, now=NOW).candidates}


rows = []
for query, needed in PARAPHRASES:
    row = {"needed": needed, "naive": naive_scores(query), "ours": ours_scores(query)}
    row["naive_hit"] = needed in {ATTRIBUTE_OF.get(h.value["content"]) for h in naive.search(query, "u1")}
    row["ours_hit"] = needed in {d.metadata["attribute"] for d in ours.search(query, user_id="u1", now=NOW)}
    rows.append(row)
    print(
        f"{needed:<8} naive cos={row['naive'][needed]:.3f} {'hit ' if row['naive_hit'] else 'MISS'} | "
        f"ours fused={row['ours'][needed]:.2f} {'hit ' if row['ours_hit'] else 'MISS'} | {query}"
    )
naive_recalled, ours_recalled = sum(r["naive_hit"] for r in rows), sum(r["ours_hit"] for r in rows)
print(f"\\nrecalled: naive {naive_recalled}/{len(rows)}, ours {ours_recalled}/{len(rows)}")
"""),
        md("""
Each dot below is one stored fact scored against one request: green is the fact the request needs,
grey the five others. For the dense-only engine the needed fact often scores no higher than the
irrelevant ones, so **no threshold separates them**: the article's 0.3 misses them, its code's
default 0.5 even more so. The fused score puts every needed fact above the line and most of the
rest near zero (the allergy does come up for the restaurant requests, which is arguably right).
"""),
        code("""
fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
panels = [("naive: dense cosine", "naive", [(0.3, "min_score 0.3 (demo)"), (0.5, "0.5 (engine default)")]),
          ("ours: calibrated fused score", "ours", [(0.3, "min_score 0.3")])]
for ax, (title, engine, lines) in zip(axes, panels):
    for x, row in enumerate(rows):
        scores, needed = row[engine], row["needed"]
        others = [s for a, s in scores.items() if a != needed]
        ax.scatter([x] * len(others), others, color="grey", alpha=0.6, s=18, label="other facts" if x == 0 else None)
        ax.scatter([x], [scores[needed]], color="tab:green", s=60, marker="D", label="needed fact" if x == 0 else None)
    for y, label in lines:
        ax.axhline(y, ls="--", color="red" if y == 0.3 else "orange", label=label)
    ax.set_title(title)
    ax.set_xticks(range(len(rows)), [f"Q{i + 1}\\n{r['needed']}" for i, r in enumerate(rows)], fontsize=8)
    ax.legend(fontsize=8, loc="upper right")
axes[0].set_ylabel("score")
fig.suptitle("1. Semantic gap: the score of the needed fact vs the others, per paraphrased request")
fig.tight_layout()
plt.show()
"""),
        md("""
## 2. Conflict

The article's demo: in January the user likes Vim, in March they switch to VS Code. The article's
engine appends the second statement next to the first, so both are recalled and the model has to
guess. Ours keys facts by slot (`user.editor`): the update step archives the old record
(`valid_to`, `superseded_by`) and retrieval returns active records only.
"""),
        code("""
naive, ours = make_engines()
tell(naive, ours, "u2", [fact("editor", "Vim", "用户喜欢使用 Vim 编辑器")], at="2024-01-01T10:00:00Z")
tell(naive, ours, "u2", [fact("editor", "VS Code", "用户现在使用 VS Code 编辑器")], at="2024-03-01T10:00:00Z")

EDITOR_QUERIES = [
    "用户的编辑器偏好是什么？",
    "用户喜欢什么编辑器",
    "我适合用什么工具写 Python？",
    "What editor do I use now?",
]
print("naive block:\\n" + naive.inject(EDITOR_QUERIES[0], "u2").text)
print("\\nours block:\\n" + ours.inject(EDITOR_QUERIES[0], user_id="u2", now=NOW).text)
print("\\nhistory of user.editor:", [(r.value, r.status.value) for r in ours.history("u2", "user", "editor")])
"""),
        code("""
mentions = {}
for name, inject in (("naive", lambda q: naive.inject(q, "u2").text),
                     ("ours", lambda q: ours.inject(q, user_id="u2", now=NOW).text)):
    blocks = [inject(q) for q in EDITOR_QUERIES]
    mentions[name] = [sum("VS Code" in b for b in blocks), sum("Vim" in b for b in blocks)]

fig, ax = plt.subplots(figsize=(6, 3.5))
x = np.arange(2)
ax.bar(x - 0.2, [mentions[e][0] for e in ("naive", "ours")], 0.4, label="current: VS Code", color="tab:green")
ax.bar(x + 0.2, [mentions[e][1] for e in ("naive", "ours")], 0.4, label="stale: Vim", color="tab:red")
ax.set_xticks(x, ["naive (append-only)", "ours (slot update)"])
ax.set_ylabel(f"injected blocks (of {len(EDITOR_QUERIES)} queries)")
ax.set_title("2. Conflict: what is injected after the switch")
ax.legend()
fig.tight_layout()
plt.show()
"""),
        md("""
## 3. Context pollution

The other side of the semantic gap: lowering `min_score` until paraphrases are found also lets
unrelated questions ("明天会下雨吗？", "How do vaccines work?") pull the user's memories into the
prompt, where the model treats them as relevant facts. Below, the profile of section 1 is queried
with eight questions that have nothing to do with the user, and the article's threshold is swept:
for dense-only retrieval, recall of the paraphrased requests and pollution of the unrelated ones
rise together. Ours keeps one calibrated threshold and, when nothing passes it, injects an explicit
"nothing known" block.
"""),
        code("""
naive, ours = make_engines()
tell(naive, ours, "u1", PROFILE, at="2024-01-01T10:00:00Z")
UNRELATED = [
    "明天会下雨吗？",
    "昨晚欧冠决赛比分是多少？",
    "红烧肉怎么做比较好吃？",
    "把“早上好”翻译成法语",
    "What's the capital of Canada?",
    "How do vaccines work?",
    "Recommend a good science-fiction novel.",
    "Explain the rules of cricket in two sentences.",
]
for q in UNRELATED:
    top = max(naive_scores(q).values())
    block = ours.inject(q, user_id="u1", now=NOW)
    print(f"naive top cosine {top:.2f} ({len(naive.search(q, 'u1'))} injected at 0.3) | "
          f"ours: {len(block.included)} injected | {q}")
"""),
        code("""
thresholds = np.round(np.arange(0.05, 0.71, 0.025), 3)
needed_cos = [(r["naive"][r["needed"]], sorted(r["naive"].values(), reverse=True)[:5]) for r in rows]
unrelated_top = [max(naive_scores(q).values()) for q in UNRELATED]
naive_recall = [np.mean([c >= t and c in top5 for c, top5 in needed_cos]) for t in thresholds]
naive_pollution = [np.mean([s >= t for s in unrelated_top]) for t in thresholds]
ours_recall = np.mean([r["ours_hit"] for r in rows])  # section 1: the needed fact was among the results
ours_pollution = np.mean([not ours.inject(q, user_id="u1", now=NOW).empty for q in UNRELATED])

fig, ax = plt.subplots(figsize=(7.5, 4))
ax.plot(thresholds, naive_recall, color="tab:green", label="naive: paraphrases recalled")
ax.plot(thresholds, naive_pollution, color="tab:red", label="naive: unrelated questions polluted")
ax.axhline(ours_recall, color="tab:green", ls="--", label=f"ours: recalled ({ours_recall:.0%})")
ax.axhline(ours_pollution, color="tab:red", ls="--", label=f"ours: polluted ({ours_pollution:.0%})")
ax.axvline(0.3, color="grey", ls=":", label="article's demo min_score")
ax.set_xlabel("naive min_score (cosine)")
ax.set_ylabel("share of queries")
ax.set_title("3. Context pollution: a dense threshold trades recall for pollution")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
"""),
        md("""
## 4. Bloat

A simulated year and a half of one user, one batch every two weeks: two preferences or profile
facts change, two passing events are mentioned and six raw turns are kept as `episode` records.
The article's engine appends everything and never archives or deletes anything, so its active count
is simply the number of statements written. Ours archives the superseded version of a slot on
update, and a `lifecycle.sweep` with the default `RetentionPolicy` after each batch archives what
outlived its kind's TTL (episodes 30 days, events 90, preferences 180, facts 365; profile facts
never) and hard-deletes archived history older than 365 days. The counts do not depend on the
embedder, so this section uses a fast fake one.
"""),
        code("""
from langchain_lifecycle_memory import MemoryStatus, lifecycle

_, ours_b = make_engines(DeterministicFakeEmbedding(size=32))
SLOTS = [("editor", "preference"), ("drink", "preference"), ("hobby", "preference"),
         ("city", "profile"), ("job", "profile"), ("laptop", "fact")]
rng = random.Random(0)
start = datetime(2024, 1, 1, tzinfo=timezone.utc)
weeks, naive_active, ours_active, ours_stored = [], [], [], []
written = 0
for step in range(39):
    at = start + timedelta(weeks=2 * step)
    facts = [fact(a, f"{a}-{step}", f"The user's {a} is now {a}-{step}", kind) for a, kind in rng.sample(SLOTS, 2)]
    facts += [{"content": f"Fortnight {step}: the user mentioned plan {i}", "kind": "event"} for i in range(2)]
    facts += [{"content": f"Fortnight {step}, turn {i}: raw conversation", "kind": "episode"} for i in range(6)]
    ours_b.add_facts(facts, "u4", at=at)
    lifecycle.sweep(ours_b.store, now=at)  # default RetentionPolicy
    written += len(facts)
    records = ours_b.list("u4")
    weeks.append(2 * step + 2)
    naive_active.append(written)  # append-only: everything written stays active
    ours_active.append(sum(r.status == MemoryStatus.ACTIVE for r in records))
    ours_stored.append(len(records))
print(f"after {weeks[-1]} weeks: naive {naive_active[-1]} active, ours {ours_active[-1]} active "
      f"({ours_stored[-1]} stored incl. archived history)")
"""),
        code("""
fig, ax = plt.subplots(figsize=(7.5, 4))
ax.plot(weeks, naive_active, label="naive: append-only (all active)", color="tab:red")
ax.plot(weeks, ours_stored, label="ours: stored (active + archived history)", color="tab:blue", ls="--")
ax.plot(weeks, ours_active, label="ours: active (what retrieval sees)", color="tab:blue")
ax.axvline(52, color="grey", ls=":", label="archived history is kept 365 days")
ax.set_xlabel("week")
ax.set_ylabel("records")
ax.set_title("4. Bloat: memories over 18 months with and without the retention sweep")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
"""),
        md("""
## 5. Version drift

An embedding model upgrade changes every vector. The article's engine (a plain Chroma collection)
happily embeds new queries with the new model and compares them to vectors of the old one: nothing
fails, the scores just stop meaning anything. Below, six statements are stored with the USE
embedder, then the store is reopened with a different embedder of the same size
(`DeterministicFakeEmbedding(size=512)` stands in for "the new model").

Ours stores the embedder's fingerprint with the collections: opening them with another embedder is
an `EmbeddingMismatchError` that says what to do, and `lifecycle.reindex` re-embeds every record
into a new generation and switches atomically.
"""),
        code("""
from langchain_chroma import Chroma

from langchain_lifecycle_memory import ChromaMemoryStore, EmbeddingMismatchError
from langchain_lifecycle_memory.lifecycle import reindex

use = UniversalSentenceEncoderEmbeddings()
new_model = DeterministicFakeEmbedding(size=512)
drift_dir = scratch("drift")
STATEMENTS = [f["content"] for f in PROFILE]
PROBES = [(s, s) for s in STATEMENTS[:3]] + [(q, next(f["content"] for f in PROFILE if f["attribute"] == a))
                                              for q, a in PARAPHRASES[0:6:2]]


def seed_engine(embeddings):
    \"\"\"The article's store: one Chroma collection on disk, cosine space.\"\"\"
    return Chroma("seed_memory", embeddings, persist_directory=str(drift_dir / "naive"),
                  collection_metadata={"hnsw:space": "cosine"})


def needed_score(hits, wanted):
    \"\"\"(cosine of the wanted statement, whether it ranked first).\"\"\"
    scores = {text: score for text, score in hits}
    return scores.get(wanted, 0.0), bool(hits) and hits[0][0] == wanted


def naive_probe(db):
    return [needed_score([(d.page_content, 1 - dist) for d, dist in db.similarity_search_with_score(q, k=6)], w)
            for q, w in PROBES]


db = seed_engine(use)
db.add_texts(STATEMENTS)
naive_before = naive_probe(db)
naive_after = naive_probe(seed_engine(new_model))  # the "upgrade": reopened with the new model, no error
print("naive top-1 correct: before", sum(t for _, t in naive_before), "/ after", sum(t for _, t in naive_after),
      f"of {len(PROBES)} (no error, no warning)")
"""),
        code("""
store = ChromaMemoryStore(drift_dir / "ours", embeddings=use)
LifecycleMemory(store).add_facts(PROFILE, "u5", at="2024-01-01T10:00:00Z")
NS = ("memories", "u5")


def ours_probe(s):
    hits = [s.search_records(NS, q, k=6, now=NOW) for q, _ in PROBES]
    return [needed_score([(r.content, score) for r, score in h], w) for h, (_, w) in zip(hits, PROBES)]


ours_before = ours_probe(store)
try:
    ChromaMemoryStore(drift_dir / "ours", embeddings=new_model)
except EmbeddingMismatchError as e:
    print("EmbeddingMismatchError:", e)
"""),
        code("""
migrating = ChromaMemoryStore(drift_dir / "ours", embeddings=new_model, verify_fingerprint=False)
report = reindex(migrating, new_model, progress=False)
print(f"reindexed {report.items} items: generation {report.old_generation} -> {report.new_generation}")
ours_after = ours_probe(ChromaMemoryStore(drift_dir / "ours", embeddings=new_model))  # opens cleanly now
reindex(migrating, use, progress=False)  # and back to the original model
ours_back = ours_probe(ChromaMemoryStore(drift_dir / "ours", embeddings=use))
print("ours top-1 correct: before", sum(t for _, t in ours_before), "/ after reindex", sum(t for _, t in ours_after),
      "/ back on USE", sum(t for _, t in ours_back), f"of {len(PROBES)}")
"""),
        code("""
series = [("before the swap (USE, both engines)", naive_before), ("naive, after swap (mixed vectors)", naive_after),
          ("ours, after reindex (new model)", ours_after), ("ours, reindexed back (USE)", ours_back)]
fig, ax = plt.subplots(figsize=(11, 4))
x = np.arange(len(PROBES))
for i, (label, values) in enumerate(series):
    ax.bar(x + (i - 1.5) * 0.2, [v for v, _ in values], 0.2, label=label)
ax.axhline(0, color="black", lw=0.5)
ax.set_xticks(x, [f"exact {i + 1}" if q == w else f"paraphrase {i - 2}" for i, (q, w) in enumerate(PROBES)])
ax.set_ylabel("cosine of the right statement")
ax.set_title("5. Version drift: scores before and after an embedder swap")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
"""),
        md("""
Reading the drift plot: with mixed vectors the article's engine scores even an *exact* repeat of a
stored sentence near zero, and nothing tells you. After `reindex` our scores are consistent again:
exact repeats score 1.0 under the new model; paraphrases score low because the stand-in "new model"
is a hash with no semantics (a real upgrade would keep them high, and you would recalibrate
`ScoreCalibration` for its cosine scale). Reindexing back to USE restores the original scores
exactly.

**Summary.** Every failure above happens *after* a successful write. `04_langsmith_experiments.ipynb`
measures the same five modes (and TTL, sensitive data, tenant isolation and point-in-time questions)
on the public scenario suite, ours vs naive.
"""),
    ]


# ---------------------------------------------------------------------------------------- 03
@notebook("03_langgraph_agent.ipynb")
def langgraph_agent() -> list[nbformat.NotebookNode]:
    return [
        md("""
# Memory in a LangGraph agent, across threads

A LangGraph *thread* (`thread_id`) is one conversation: the checkpointer keeps its messages.
Long-term memory is what survives **between** threads. The package gives two subgraphs to put
around any model node of a `StateGraph` over `MessagesState`:

* `create_memory_reader(store)`: `retrieve_memories → inject_memories`: finds what is known
  about the user for the last human message and adds it as one system message (with a fixed id,
  so each turn replaces it instead of piling up);
* `create_memory_writer(store, extractor=...)`: `extract_memories → update_memories →
  store_memories`: remembers the last turn, archiving what it supersedes.

The user comes from `config["configurable"]["user_id"]`; `memory_now` replays dates (here: a
conversation spread over two months). The model is a `GenericFakeChatModel` with scripted replies,
so the notebook runs offline; **the memory blocks printed below are real**. With `OPENAI_API_KEY`
set, `ChatOpenAI` answers and extracts instead.
"""),
        code("""
%matplotlib inline
import os
import shutil
from collections import Counter

import matplotlib.pyplot as plt
from _helpers import scratch
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_lifecycle_memory import ChromaMemoryStore
from langchain_lifecycle_memory.nodes import MEMORY_MESSAGE_ID, create_memory_reader, create_memory_writer

workdir = scratch("agent")
store = ChromaMemoryStore(workdir)  # embedded Chroma, offline USE embedder

SCRIPTED_REPLIES = [
    "好的，记住了：你写代码用 Vim。",
    "Noted: you're allergic to penicillin. I'll keep that in mind.",
    "Since you use Vim, try vim-plug with ALE for linting and jedi-vim for Python.",
    "明白，以后按 VS Code 给你推荐。",
    "For VS Code: the Python and Pylance extensions, plus Ruff for linting.",
    "Mention your penicillin allergy to the doctor before they prescribe anything.",
]
if os.environ.get("OPENAI_API_KEY"):
    from langchain_openai import ChatOpenAI

    model = extractor = ChatOpenAI(model="gpt-4o-mini", temperature=0)
else:
    model, extractor = GenericFakeChatModel(messages=iter(AIMessage(r) for r in SCRIPTED_REPLIES)), "rule"
"""),
        md("""
## The graph: recall → chatbot → remember
"""),
        code("""
def chatbot(state: MessagesState) -> dict:
    return {"messages": [model.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("recall", create_memory_reader(store))
builder.add_node("chatbot", chatbot)
builder.add_node("remember", create_memory_writer(store, extractor=extractor))
builder.add_edge(START, "recall")
builder.add_edge("recall", "chatbot")
builder.add_edge("chatbot", "remember")
builder.add_edge("remember", END)
graph = builder.compile(checkpointer=InMemorySaver(), store=store, name="memory_chat")
print(graph.get_graph(xray=1).draw_mermaid())
"""),
        code("""
USER = "lin"
status_log = []  # record counts by status after each turn


def chat(text: str, thread: str, when: str) -> None:
    config = {"configurable": {"user_id": USER, "thread_id": thread, "memory_now": when}}
    state = graph.invoke({"messages": [("user", text)]}, config)
    memory = next(m for m in state["messages"] if m.id == MEMORY_MESSAGE_ID)
    lines = [line for line in memory.content.splitlines() if line.startswith("- [")]
    print(f"[{thread} · {when[:10]}] user: {text}")
    print("  memory injected:", "\\n                   ".join(lines) or memory.content.splitlines()[-1])
    print("  assistant:", state["messages"][-1].content)
    print(f"  ({len(state['messages'])} messages in this thread's state)\\n")
    counts = Counter(r.status.value for r in store.list_records(("memories", USER)))
    status_log.append((f"{len(status_log) + 1}. {thread}\\n{when[5:10]}", counts))
"""),
        md("""
## Thread 1: the user tells us things

The first turn finds nothing (the block then says "nothing known" rather than leaving the model to
guess). The writer extracts `user.editor = Vim` and `user.allergy = penicillin`.
"""),
        code("""
chat("我喜欢使用 Vim 编辑器", thread="monday", when="2024-01-08T09:00:00Z")
chat("I'm allergic to penicillin.", thread="monday", when="2024-01-08T09:05:00Z")
"""),
        md("""
## Thread 2: a new conversation, the memory is there

A new `thread_id` starts with an empty message history, but the reader recalls the editor from
thread 1. Then the user changes their mind: the writer archives Vim and stores VS Code.
"""),
        code("""
chat("Which plugins should I install to write Python faster?", thread="friday", when="2024-01-12T17:00:00Z")
chat("我现在改用 VS Code 了", thread="friday", when="2024-03-01T10:00:00Z")
"""),
        md("""
## Back in thread 1: the change is respected

Thread 1's own history still contains the old "Vim" exchange, but the injected memory (the latest
system message, replaced each turn) now says VS Code, and the allergy is recalled when it matters.
"""),
        code("""
chat("What should I set up for Python?", thread="monday", when="2024-03-02T09:00:00Z")
chat("医生要给我开抗生素，我需要提醒什么？", thread="monday", when="2024-03-02T09:10:00Z")
print([(r.value, r.status.value) for r in store.history(("memories", USER), "user", "editor")])
"""),
        code("""
labels = [label for label, _ in status_log]
bottom = [0] * len(labels)
fig, ax = plt.subplots(figsize=(8, 3.5))
for status, color in (("active", "tab:green"), ("pending", "tab:orange"), ("archived", "tab:grey")):
    values = [counts.get(status, 0) for _, counts in status_log]
    ax.bar(labels, values, bottom=bottom, label=status, color=color)
    bottom = [b + v for b, v in zip(bottom, values)]
ax.set_ylabel("records")
ax.yaxis.get_major_locator().set_params(integer=True)
ax.set_title("The user's memory records by status after each turn")
ax.legend()
fig.tight_layout()
plt.show()
"""),
        md("""
## The prebuilt agent

`create_memory_agent(model, store)` wires the same three steps around a LangGraph ReAct agent (tools
welcome); the memory block reaches the model as its first system message and stays out of the saved
conversation.
"""),
        code("""
from langchain_lifecycle_memory.nodes import create_memory_agent

agent_model = model if os.environ.get("OPENAI_API_KEY") else GenericFakeChatModel(
    messages=iter([AIMessage("You switched to VS Code in March, so: the Python extension and Ruff.")])
)
agent = create_memory_agent(agent_model, store, extractor=extractor, checkpointer=InMemorySaver())
config = {"configurable": {"user_id": USER, "thread_id": "weekend", "memory_now": "2024-03-09T10:00:00Z"}}
out = agent.invoke({"messages": [("user", "Remind me which editor I use these days?")]}, config)
print(out["memory_block"])
print("\\nassistant:", out["messages"][-1].content)
shutil.rmtree(workdir, ignore_errors=True)
"""),
    ]


# ---------------------------------------------------------------------------------------- 04
@notebook("04_langsmith_experiments.ipynb")
def langsmith_experiments() -> list[nbformat.NotebookNode]:
    return [
        md("""
# Tracing and experiments, LangSmith style, without an account

Two things a LangSmith user wants from a memory layer:

1. **Readable traces.** Every runnable of the package has a run name (`memory_reader`,
   `retrieve_memories`, `memory_writer`, `extract_memories`, ...), and the retriever reports
   LangSmith's retriever metadata (`ls_retriever_name`, the vector store, the embedder) and returns
   its documents with per-channel scores.
2. **Experiments.** The scenario suite is a dataset of examples, a `target(inputs) -> outputs`
   function and evaluators with the `evaluate(target, data, evaluators)` signature.

Tracing to LangSmith is **off** here (`LANGSMITH_TRACING=false`). Runs are captured in memory by a
small tracer instead, and the experiment runs locally with a loop that does what `langsmith.evaluate`
does. The last cell shows the real `langsmith.evaluate` call, which runs when `LANGSMITH_API_KEY` is
set.
"""),
        code("""
%matplotlib inline
import os

os.environ.setdefault("LANGSMITH_TRACING", "false")  # "true" + LANGSMITH_API_KEY sends the same runs to LangSmith

import inspect
import time
from collections import defaultdict

import matplotlib.pyplot as plt
import numpy as np
from _helpers import CachedEmbeddings, shared_dir
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tracers.base import BaseTracer
from langchain_core.tracers.schemas import Run
from langgraph.graph import END, START, MessagesState, StateGraph

from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings
from langchain_lifecycle_memory.eval import (
    empty_evaluator,
    expect_evaluator,
    forbid_evaluator,
    probe_evaluator,
    run_scenarios,
    scenario_examples,
    scenario_target,
)
from langchain_lifecycle_memory.naive import fresh_store
from langchain_lifecycle_memory.nodes import create_memory_reader, create_memory_writer

emb = CachedEmbeddings(UniversalSentenceEncoderEmbeddings())
"""),
        md("""
## 1. What a traced turn looks like

A `BaseTracer` subclass receives every run (with its children, inputs, outputs, tags and metadata)
when the root run ends; `LangChainTracer`, which uploads to LangSmith, is one of them. Ours just
keeps the root runs in a list. Pass it in `config["callbacks"]`.
"""),
        code("""
class InMemoryTracer(BaseTracer):
    \"\"\"Keeps finished root runs (and through them, the whole tree) in memory.\"\"\"

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[Run] = []

    def _persist_run(self, run: Run) -> None:
        self.runs.append(run)


store = fresh_store(UniversalSentenceEncoderEmbeddings())
model = GenericFakeChatModel(messages=iter([AIMessage("好的，记住了。"), AIMessage("Vim, with a Python plugin.")]))


def chatbot(state: MessagesState) -> dict:
    return {"messages": [model.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("recall", create_memory_reader(store))
builder.add_node("chatbot", chatbot)
builder.add_node("remember", create_memory_writer(store))
builder.add_edge(START, "recall")
builder.add_edge("recall", "chatbot")
builder.add_edge("chatbot", "remember")
builder.add_edge("remember", END)
graph = builder.compile(name="memory_chat")

tracer = InMemoryTracer()
TURNS = [("我喜欢使用 Vim 编辑器", "2024-01-01T10:00:00Z"), ("我适合用什么工具写 Python？", "2024-01-04T09:00:00Z")]
for text, when in TURNS:
    config = {
        "configurable": {"user_id": "u1", "thread_id": "t1", "memory_now": when},
        "metadata": {"user_id": "u1"},  # LangChain does not copy configurable keys into run metadata
        "callbacks": [tracer],
    }
    graph.invoke({"messages": [("user", text)]}, config)
print(len(tracer.runs), "root runs captured")
"""),
        md("""
The tree of the second turn: the reader subgraph retrieves (a `retriever` run with LangSmith's
`ls_*` metadata) and injects; the model answers; the writer extracts, updates and stores.
LangGraph's bookkeeping metadata (`langgraph_*`) and step tags are left out for readability.
`thread_id` reaches the metadata by itself; `user_id` does only because the config above puts it
in `metadata` too (LangChain no longer copies `configurable` values into run metadata), which is
what lets LangSmith filter traces by user.
"""),
        code("""
KEEP = ("user_id", "thread_id", "ls_retriever_name", "ls_vector_store_provider", "ls_embedding_provider",
        "ls_embedding_model", "ls_provider", "ls_model_type")


def walk(run: Run, depth: int = 0):
    yield depth, run
    for child in sorted(run.child_runs, key=lambda r: r.start_time):
        yield from walk(child, depth + 1)


turn = tracer.runs[-1]
for depth, run in walk(turn):
    metadata = run.extra.get("metadata", {})
    shown = {k: metadata[k] for k in KEEP if metadata.get(k) and (depth == 0 or k.startswith("ls_"))}
    ms = (run.end_time - run.start_time).total_seconds() * 1000
    print(f"{'    ' * depth}{run.name} [{run.run_type}] {ms:.0f} ms {shown or ''}")

retriever_run = next(run for _, run in walk(turn) if run.run_type == "retriever")
print("\\nretriever outputs:")
for doc in retriever_run.outputs["documents"]:
    print(f"  score={doc.metadata['score']:.2f} channels={doc.metadata['scores']} {doc.page_content}")
"""),
        code("""
spans = list(walk(turn))
t0 = turn.start_time
fig, ax = plt.subplots(figsize=(9, 0.32 * len(spans) + 1))
colors = {"chain": "tab:blue", "retriever": "tab:green", "llm": "tab:purple", "tool": "tab:orange"}
for i, (_, run) in enumerate(spans):
    start = (run.start_time - t0).total_seconds() * 1000
    width = max((run.end_time - run.start_time).total_seconds() * 1000, 0.5)
    ax.barh(i, width, left=start, color=colors.get(run.run_type, "grey"))
ax.set_yticks(range(len(spans)), ["  " * d + r.name for d, r in spans], fontsize=8)
ax.invert_yaxis()
ax.set_xlabel("ms since the turn started")
ax.set_title("One writer + reader turn as a trace (blue: chain, green: retriever, purple: model)")
fig.tight_layout()
plt.show()
"""),
        md("""
## 2. The scenario suite as an experiment

`scenario_examples` turns `shared/scenarios/public.jsonl` into one example per probe:
`inputs` = the scenario and the probe's step, `outputs` = what must (`expect`) and must not
(`forbid`, `expect_empty`) appear in the injected block, `metadata` = scenario and category.
"""),
        code("""
SHARED = shared_dir()
scenario_file = SHARED / "scenarios" / "public.jsonl" if SHARED else None
if scenario_file is not None and scenario_file.is_file():
    source = scenario_file
else:  # a fresh clone without shared/: the example scenario of DESIGN.md
    print("shared/scenarios/public.jsonl not found: using a one-scenario stand-in")
    source = \"\"\"{"id": "conflict-editor-zh", "category": "conflict", "user_id": "u1", "steps": [
 {"type": "turn", "at": "2024-01-01T10:00:00Z", "user": "我喜欢使用 Vim 编辑器", "facts": [{"entity": "user",
  "attribute": "editor", "value": "Vim", "content": "用户喜欢使用 Vim 编辑器", "kind": "preference"}]},
 {"type": "turn", "at": "2024-03-01T10:00:00Z", "user": "我现在改用 VS Code 了", "facts": [{"entity": "user",
  "attribute": "editor", "value": "VS Code", "content": "用户现在使用 VS Code 编辑器", "kind": "preference"}]},
 {"type": "probe", "at": "2024-03-02T10:00:00Z", "query": "我适合用什么工具写 Python？", "expect": ["VS Code"],
  "forbid": ["Vim"]},
 {"type": "probe", "query": "今天天气怎么样？", "expect_empty": true}]}\"\"\".replace("\\n", "")

examples = scenario_examples(source)
print(len(examples), "examples;", "first:", examples[0]["metadata"], examples[0]["outputs"])

texts = {example["metadata"]["query"] for example in examples}
for example in examples:
    for step in example["inputs"]["scenario"]["steps"]:
        texts.update(f["content"] for f in step.get("facts") or [])
emb.warm(texts)  # every statement and query embedded once, in batches
"""),
        md("""
**The target.** `scenario_target(engine=...)` is the exact LangSmith target: for each example it
replays the scenario in a fresh store up to the probe and returns the injected block. Replaying from
the start for every probe costs time quadratic in the scenario length, so the local run below
replays each scenario **once** (`run_scenarios` on that scenario) and answers its probes from that
replay; the steps before a probe are the same either way, so the outputs are too (checked on the
first examples).
"""),
        code("""
def replay_target(engine: str):
    played: dict[str, dict] = {}

    def target(inputs: dict) -> dict:
        scenario = inputs["scenario"]
        if scenario["id"] not in played:
            report = run_scenarios([scenario], engine=engine, embeddings=emb)
            played[scenario["id"]] = {probe.step: probe for probe in report.probes}
        probe = played[scenario["id"]][inputs["step"]]
        errors = [r for r in probe.reasons if r.startswith("engine error")]
        return {"injected": probe.injected, **({"error": errors[0]} if errors else {})}

    target.__name__ = f"{engine}_memory"
    return target


exact = scenario_target(engine="ours", embeddings=emb)
for example in examples[:3]:
    assert exact(example["inputs"])["injected"] == replay_target("ours")(example["inputs"])["injected"]
print("replayed target == scenario_target on the first examples")
"""),
        md("""
**The evaluators** take `(outputs, reference_outputs)` and return `{"key", "score", "comment"}`,
the shape `langsmith.evaluate` accepts. `evaluate_locally` mimics it: run the target on every
example, hand each evaluator the arguments its signature asks for, collect the feedback.
"""),
        code("""
EVALUATORS = [probe_evaluator, expect_evaluator, forbid_evaluator, empty_evaluator]


def evaluate_locally(target, data, evaluators, experiment_prefix=""):
    \"\"\"A local stand-in for `langsmith.evaluate(target, data=..., evaluators=...)`.\"\"\"
    rows = []
    for example in data:
        started = time.perf_counter()
        outputs = target(example["inputs"])
        latency = time.perf_counter() - started
        available = {"inputs": example["inputs"], "outputs": outputs, "reference_outputs": example["outputs"]}
        feedback = {}
        for evaluator in evaluators:
            wanted = inspect.signature(evaluator).parameters
            result = evaluator(**{k: v for k, v in available.items() if k in wanted})
            feedback[result["key"]] = result
        rows.append({"example": example, "outputs": outputs, "feedback": feedback, "latency": latency})
    scores = {key: np.mean([r["feedback"][key]["score"] for r in rows]) for key in rows[0]["feedback"]}
    print(f"{experiment_prefix:<8}", "  ".join(f"{k}={v:.2f}" for k, v in scores.items()))
    return rows


started = time.perf_counter()
experiments = {
    engine: evaluate_locally(replay_target(engine), examples, EVALUATORS, experiment_prefix=engine)
    for engine in ("ours", "naive")
}
print(f"({len(examples)} examples x 2 engines in {time.perf_counter() - started:.0f} s)")
"""),
        code("""
def pass_rate_by_category(rows):
    cells = defaultdict(list)
    for row in rows:
        cells[row["example"]["metadata"]["category"]].append(row["feedback"]["probe_passed"]["score"])
    return {category: np.mean(scores) for category, scores in cells.items()}


rates = {engine: pass_rate_by_category(rows) for engine, rows in experiments.items()}
categories = sorted(rates["ours"])
x = np.arange(len(categories))
fig, ax = plt.subplots(figsize=(10, 4))
for offset, engine, color in ((-0.2, "ours", "tab:blue"), (0.2, "naive", "tab:red")):
    ax.bar(x + offset, [rates[engine][c] for c in categories], 0.4, label=engine, color=color)
ax.set_xticks(x, categories)
ax.set_ylim(0, 1.05)
ax.set_ylabel("probes passed")
ax.set_title("Public scenario suite: pass rate by category, ours vs the naive (seed article) engine")
ax.legend()
fig.tight_layout()
plt.show()
"""),
        md("""
What the naive engine gets wrong, in the evaluators' words (the same comments LangSmith would show
per example):
"""),
        code("""
for engine, rows in experiments.items():
    failed = [r for r in rows if not r["feedback"]["probe_passed"]["score"]]
    print(f"{engine}: {len(failed)} of {len(rows)} probes failed")
    for row in failed[:6]:
        meta = row["example"]["metadata"]
        print(f"   {meta['scenario']:<26} {meta['query'][:40]:<42} {row['feedback']['probe_passed']['comment'][:70]}")
"""),
        md("""
## 3. The same experiment on LangSmith

With an API key the dataset is uploaded once and `langsmith.evaluate` runs the exact target,
recording one experiment per engine; traces of every replay appear under it (set
`LANGSMITH_TRACING=true`). Without a key this cell only says so.
"""),
        code("""
if os.environ.get("LANGSMITH_API_KEY"):
    from langsmith import Client, evaluate

    client = Client()
    dataset = "lifecycle-memory-public-scenarios"
    if not client.has_dataset(dataset_name=dataset):
        client.create_examples(dataset_id=client.create_dataset(dataset).id, examples=examples)
    for engine in ("ours", "naive"):
        evaluate(
            scenario_target(engine=engine),
            data=dataset,
            evaluators=EVALUATORS,
            experiment_prefix=f"lifecycle-{engine}",
            max_concurrency=2,
            client=client,
        )
else:
    print("LANGSMITH_API_KEY is not set: the experiment above ran locally only.")
"""),
    ]


# ---------------------------------------------------------------------------------------- 05
@notebook("05_benchmarks.ipynb")
def benchmarks() -> list[nbformat.NotebookNode]:
    return [
        md("""
# Benchmarks: LoCoMo evidence recall and store latency

Charts of the two benchmark scripts' results, next to their baselines:

* **LoCoMo evidence recall** (`python -m langchain_lifecycle_memory.eval locomo
  ../shared/data/locomo/locomo7.json --json benchmarks/results/locomo.json`): every turn of a long
  conversation is stored as an `episode`; for each question, recall@k is the share of the turns its
  answer rests on that come back in the top k. Baselines run in the same process on the same
  embedder: dense-only (`search_records`) and BM25-only.
* **Store latency** (`python benchmarks/store_latency.py`): put / get / search p50 and p95 of
  `ChromaMemoryStore` (LangGraph store API and record API), the hybrid `LifecycleRetriever`, plain
  `langchain-chroma` and LangGraph's `InMemoryStore`, same embedder.

When `benchmarks/results/*.json` exist they are plotted as they are. Otherwise (a fresh clone, CI)
this notebook runs small versions itself: store latency at 300 records, and LoCoMo on its first
conversation if the data is in `shared/` (it is CC BY-NC 4.0: read from `shared/`, never copied;
only numbers are printed). Set `LIFECYCLE_MEMORY_NOTEBOOK_RERUN=1` to ignore saved results.
"""),
        code("""
%matplotlib inline
import importlib.util
import json
import os
import time

import matplotlib.pyplot as plt
import numpy as np
from _helpers import REPO, CachedEmbeddings, scratch, shared_dir

from langchain_lifecycle_memory import UniversalSentenceEncoderEmbeddings

RESULTS = REPO / "benchmarks" / "results"
RERUN = os.environ.get("LIFECYCLE_MEMORY_NOTEBOOK_RERUN") == "1"
emb = UniversalSentenceEncoderEmbeddings()


def saved(name: str, required_key: str | None = None):
    \"\"\"A result file of the benchmark scripts, or None (missing, unreadable, RERUN set).\"\"\"
    path = RESULTS / name
    if RERUN or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        print(f"{path} is unreadable ({e}): running the small version instead")
        return None
    if not isinstance(data, dict) or (required_key and required_key not in data):
        print(f"{path} has an unexpected layout: running the small version instead")
        return None
    print("using", path.relative_to(REPO))
    return data
"""),
        md("""
## 1. LoCoMo evidence recall per category

Categories: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop (category 5, adversarial, has no
evidence turns and is not scored). `default` is `LifecycleMemory.search` with its defaults,
threshold included, so it may return fewer than k turns; `dense` and `bm25` are single-channel
baselines over the same stored episodes.
"""),
        code("""
locomo = saved("locomo.json", required_key="retrievers")
if locomo is None:
    shared = shared_dir()
    data_file = shared / "data" / "locomo" / "locomo7.json" if shared else None
    if data_file is not None and data_file.is_file():
        from langchain_lifecycle_memory.eval.locomo import evaluate_locomo, find_audit_file

        started = time.perf_counter()
        locomo = evaluate_locomo(
            data_file,
            limit_conversations=1,
            retrievers=("default", "dense", "bm25"),
            audit=find_audit_file(data_file),
            embeddings=emb,
        )
        print(f"LoCoMo, first conversation only, in {time.perf_counter() - started:.0f} s")
    else:
        print("shared/data/locomo/locomo7.json not found: the LoCoMo chart is skipped.")
if locomo is not None:
    print("conversations:", len(locomo["conversations"]), "| questions per category:", locomo["questions_by_category"])
"""),
        code("""
CATEGORY_NAMES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "all": "all"}
if locomo is not None:
    k = 10 if 10 in locomo["ks"] else max(locomo["ks"])
    retrievers = list(locomo["retrievers"])
    cats = [c for c in ("1", "2", "3", "4", "all") if c in locomo["questions_by_category"]]
    width = 0.8 / len(retrievers)
    fig, ax = plt.subplots(figsize=(10, 4))
    for i, name in enumerate(retrievers):
        values = [locomo["retrievers"][name][f"recall@{k}"].get(c, 0.0) for c in cats]
        ax.bar(np.arange(len(cats)) + (i - (len(retrievers) - 1) / 2) * width, values, width, label=name)
    labels = [f"{CATEGORY_NAMES[c]}\\n(n={locomo['questions_by_category'][c]})" for c in cats]
    ax.set_xticks(np.arange(len(cats)), labels)
    ax.set_ylim(0, 1)
    ax.set_ylabel(f"recall@{k}")
    ax.set_title(f"LoCoMo evidence recall@{k} per category ({len(locomo['conversations'])} conversation(s))")
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()
    for name in retrievers:
        recall = locomo["retrievers"][name][f"recall@{k}"]
        row = "  ".join(f"{CATEGORY_NAMES[c]}={recall.get(c, 0.0):.2f}" for c in cats)
        print(f"{name:<22} {row}")
    print("median injected tokens:", locomo.get("median_injected_tokens"))
"""),
        md("""
## 2. Store latency

Milliseconds per operation, median (p50) over the benchmark's queries, log scale. The small run
here caches embeddings (each text is embedded once, so repeated puts and queries skip the model):
its numbers are the stores' own overhead, while `benchmarks/store_latency.py` keeps the embedder in
the loop. Search latency is dominated by metadata filtering in Chroma (see DESIGN.md), not by the
vector search itself.
"""),
        code("""
latency = saved("store_latency.json")
if latency is None:
    spec = importlib.util.spec_from_file_location("store_latency", REPO / "benchmarks" / "store_latency.py")
    store_latency = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(store_latency)
    started = time.perf_counter()
    latency = {"300": store_latency.run(300, 20, CachedEmbeddings(emb), scratch("latency"))}
    print(f"store latency at 300 records, 20 operations each, in {time.perf_counter() - started:.0f} s")

sizes = sorted(latency, key=int)
fig, axes = plt.subplots(1, len(sizes), figsize=(7 * len(sizes), 4.2), squeeze=False)
for ax, size in zip(axes[0], sizes):
    systems = list(latency[size])
    for i, op in enumerate(("put", "get", "search")):
        values = [latency[size][s].get(f"{op}_p50", np.nan) for s in systems]
        ax.bar(np.arange(len(systems)) + (i - 1) * 0.27, values, 0.27, label=f"{op} p50")
    ax.set_xticks(np.arange(len(systems)), [s.replace(" (", "\\n(") for s in systems], fontsize=8, rotation=15)
    ax.set_yscale("log")
    ax.set_ylabel("ms (log scale)")
    ax.set_title(f"{size} records")
    ax.legend(fontsize=8)
fig.suptitle("Store latency: ChromaMemoryStore and the hybrid retriever vs baselines")
fig.tight_layout()
plt.show()
for size in sizes:
    for system, row in latency[size].items():
        ops = [op for op in ("put_p50", "get_p50", "search_p50", "search_p95") if op in row]
        cells = "  ".join(f"{op}={row[op]:.1f}" for op in ops)
        print(f"{size:>6} {system:<30} {cells}")
"""),
    ]


def main(prefixes: list[str]) -> None:
    for name, cells in NOTEBOOKS.items():
        if prefixes and not any(name.startswith(p) for p in prefixes):
            continue
        nb = new_notebook(cells=cells, metadata=KERNEL)
        for i, cell in enumerate(nb.cells):
            cell.id = f"{name[:2]}-{i:02d}"
        nbformat.validate(nb)
        nbformat.write(nb, HERE / name)
        print("wrote", HERE / name)


if __name__ == "__main__":
    main(sys.argv[1:])
