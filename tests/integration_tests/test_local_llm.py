"""The LLM path against a real local model behind an OpenAI-compatible server (opt-in).

Run with ``LIFECYCLE_MEMORY_TEST_LOCAL_LLM=1``: the session starts ``../shared/llm/start-local-llm``
(llama.cpp's server with Qwen2.5-Coder-1.5B-Instruct; ~1 min to install the first time) on
``LIFECYCLE_MEMORY_TEST_LOCAL_LLM_PORT`` (default 8765), or uses the server already answering
there, and stops only a server it started. Slow: ~10-100 s per model call on one CPU thread.
"""

from __future__ import annotations

import os
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler

from langchain_lifecycle_memory import LifecycleMemory
from langchain_lifecycle_memory.schema import MemoryStatus
from langchain_lifecycle_memory.write._structured import is_capability_error

pytestmark = pytest.mark.local_llm

ENV = "LIFECYCLE_MEMORY_TEST_LOCAL_LLM"
SCRIPT = Path(__file__).resolve().parents[2].parent / "shared" / "llm" / "start-local-llm"
SEED = {
    "zh": [
        ("我喜欢使用 Vim 编辑器", "好的，已记录你的编辑器偏好。", "2024-01-01T10:00:00Z"),
        ("我现在改用 VS Code 了", "明白，已更新你的工具偏好。", "2024-03-01T10:00:00Z"),
        "我适合用什么工具写 Python？",
    ],
    "en": [
        ("I like using the Vim editor", "Got it, I've noted your editor preference.", "2024-01-01T10:00:00Z"),
        ("I've switched to VS Code now", "Understood, I've updated your tool preference.", "2024-03-01T10:00:00Z"),
        "What tool should I use to write Python?",
    ],
}


def _answers(base_url: str) -> bool:
    try:
        urllib.request.urlopen(f"{base_url}/models", timeout=2)
    except OSError:
        return False
    return True


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    if os.environ.get(ENV) != "1":
        pytest.skip(f"local-model tests are opt-in: set {ENV}=1 (starts ../shared/llm/start-local-llm)")
    port = os.environ.get(f"{ENV}_PORT", "8765")
    url = f"http://127.0.0.1:{port}/v1"
    if _answers(url):
        yield url
        return
    if not SCRIPT.is_file():
        pytest.skip(f"{SCRIPT} not found: the shared local-model script is needed")
    done = subprocess.run([str(SCRIPT), port], capture_output=True, text=True, timeout=900, check=False)
    line = [x for x in done.stdout.splitlines() if x.startswith("LOCAL_LLM_BASE_URL=")]
    if done.returncode != 0 or not line:
        pytest.fail(f"start-local-llm failed: {done.stdout[-500:]} {done.stderr[-500:]}")
    pid_file = Path(os.environ.get("LOCAL_LLM_HOME", Path.home() / ".cache" / "local-llm")) / f"server-{port}.pid"
    try:
        yield line[0].split("=", 1)[1]
    finally:
        if pid_file.is_file():
            subprocess.run(["kill", pid_file.read_text().strip()], check=False)


class MethodErrors(BaseCallbackHandler):
    def __init__(self) -> None:
        self.capability: list[str] = []

    def on_llm_error(self, error: BaseException, **kwargs: Any) -> None:
        if is_capability_error(error):
            self.capability.append(str(error)[:120])


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_seed_demo_end_to_end_with_a_real_model(base_url: str, tmp_path: Path, lang: str) -> None:
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(base_url=base_url, api_key="local", model="local", temperature=0, max_retries=0)
    memory = LifecycleMemory(path=tmp_path / "memory", extractor=model)
    (first, second, query) = SEED[lang]
    errors: list[str] = []
    for user, assistant, at in (first, second):
        errors += memory.add_messages([("user", user), ("ai", assistant)], "u1", at=at).errors
    assert errors == [], f"extraction failed: {errors}"
    records = memory.list("u1")
    seen = [(r.entity, r.attribute, r.value, r.status) for r in records]
    vim = [r for r in records if r.value and "vim" in r.value.casefold()]
    vscode = [r for r in records if r.value and "vs code" in r.value.casefold()]
    assert vim and all(r.status == MemoryStatus.ARCHIVED for r in vim), seen
    assert [r.status for r in vscode] == [MemoryStatus.ACTIVE], seen
    assert vscode[0].slot == vim[0].slot, seen
    block = memory.inject(query, "u1", now="2024-03-02T09:00:00Z").text
    assert "VS Code" in block and "Vim" not in block


def test_the_fallback_settles_on_a_method_the_server_accepts(base_url: str) -> None:
    from langchain_core.messages import HumanMessage
    from langchain_openai import ChatOpenAI

    from langchain_lifecycle_memory.write.extraction import create_extractor

    model = ChatOpenAI(base_url=base_url, api_key="local", model="local", temperature=0, max_retries=0)
    extractor = create_extractor(model)
    counter = MethodErrors()
    facts = extractor.invoke({"messages": [HumanMessage("I live in Lisbon")]}, {"callbacks": [counter]})
    assert facts, "no fact extracted"
    assert len(counter.capability) <= 1  # json_schema is refused by llama.cpp's server, once
    again = MethodErrors()
    extractor.invoke({"messages": [HumanMessage("I work as a nurse")]}, {"callbacks": [again]})
    assert again.capability == []  # the working method is remembered


def test_the_conflict_judge_answers_on_the_real_server(base_url: str) -> None:
    """The judge reaches a verdict on llama.cpp's server (which refuses json_schema) and names only offered ids."""
    from langchain_openai import ChatOpenAI

    from langchain_lifecycle_memory.schema import MemoryRecord
    from langchain_lifecycle_memory.write.update import ConflictVerdict, create_conflict_judge

    model = ChatOpenAI(base_url=base_url, api_key="local", model="local", temperature=0, max_retries=0)
    trip = MemoryRecord(namespace=("memories", "u1"), content="The user is planning a trip to Japan in May.")
    dog = MemoryRecord(namespace=("memories", "u1"), content="The user has a dog named Bruno.")
    counter = MethodErrors()
    verdict = create_conflict_judge(model).invoke(
        {"new": "The user cancelled the Japan trip in May.", "candidates": [trip, dog]}, {"callbacks": [counter]}
    )
    assert isinstance(verdict, ConflictVerdict)
    assert len(counter.capability) <= 1
    assert dog.id not in verdict.superseded_ids  # unrelated facts stay (the small model may miss the trip)
    assert set(verdict.superseded_ids) <= {trip.id}
