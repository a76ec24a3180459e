"""LangMem's memory tools on ``ChromaMemoryStore``: a LangGraph agent writes plain items, users see lifecycles.

Black-box: LangMem's public tools, a LangGraph/LangChain agent, the store's ``BaseStore`` API, our
reader and retriever, and the ``lifecycle-memory`` CLI as a real process. The chat model is
scripted (it emits the tool calls), so nothing here needs a network or a key. The store uses the
default embedder: whether "User prefers VS Code" replaces "User prefers Vim" is a matter of meaning.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.store.base import PutOp
from pydantic import Field

from langchain_lifecycle_memory import ChromaMemoryStore, LifecycleRetriever, create_memory_reader

USER = "alice"
NS = ("memories", USER)
CONFIG = {"configurable": {"langgraph_user_id": USER, "user_id": USER}}


class ToolScriptedChat(BaseChatModel):
    """Replies with scripted messages (tool calls included); ``bind_tools`` keeps the script."""

    replies: list[AIMessage] = Field(default_factory=list)
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "tool-scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolScriptedChat:  # type: ignore[override]
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.replies.pop(0))])


def _call(name: str, args: dict[str, Any], n: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{n}", "type": "tool_call"}])


def _agent(model: BaseChatModel, tools: list[Any], store: ChromaMemoryStore) -> Any:
    try:
        from langchain.agents import create_agent
    except ImportError:
        from langgraph.prebuilt import create_react_agent

        return create_react_agent(model, tools, store=store)
    return create_agent(model, tools, store=store)


def cli(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "langchain_lifecycle_memory", "--path", str(path), *args]
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, check=False)


@pytest.fixture(scope="module")
def langmem_run(embeddings: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The agent creates "User prefers Vim", later "User prefers VS Code", then searches "editor"."""
    langmem = pytest.importorskip("langmem")
    path = tmp_path_factory.mktemp("langmem") / "m"
    store = ChromaMemoryStore(path, embeddings=embeddings)
    template = ("memories", "{langgraph_user_id}")
    tools = [
        langmem.create_manage_memory_tool(namespace=template),
        langmem.create_search_memory_tool(namespace=template),
    ]
    model = ToolScriptedChat(
        replies=[
            _call("manage_memory", {"content": "User prefers Vim", "action": "create"}, 1),
            AIMessage(content="Noted."),
            _call("manage_memory", {"content": "User prefers VS Code", "action": "create"}, 2),
            AIMessage(content="Noted."),
            _call("search_memory", {"query": "editor"}, 3),
            AIMessage(content="You use VS Code."),
        ]
    )
    agent = _agent(model, tools, store)

    first = agent.invoke({"messages": [("user", "I prefer Vim")]}, CONFIG)
    created = [m for m in first["messages"] if isinstance(m, ToolMessage)][-1].content
    vim_key = re.search(r"[0-9a-f]{8}-[0-9a-f-]{27}", str(created)).group(0)  # type: ignore[union-attr]
    put = store.get(NS, vim_key)
    assert put is not None
    agent.invoke({"messages": [("user", "I switched to VS Code")]}, CONFIG)
    third = agent.invoke({"messages": [("user", "Which editor do I use?")]}, CONFIG)
    searched = [m for m in third["messages"] if isinstance(m, ToolMessage)][-1].content
    return {"store": store, "path": path, "vim_key": vim_key, "created_at": put.created_at, "searched": str(searched)}


def test_langmem_search_tool_returns_the_current_preference_only(langmem_run: dict[str, Any]) -> None:
    searched = langmem_run["searched"]

    assert "VS Code" in searched and "Vim" not in searched, searched


def test_our_reader_and_retriever_inject_the_current_langmem_preference_only(langmem_run: dict[str, Any]) -> None:
    store = langmem_run["store"]
    question = "Which editor should I use?"

    out = create_memory_reader(store).invoke({"messages": [("user", question)]}, CONFIG)
    block = out["memory_block"]
    docs = [d.page_content for d in LifecycleRetriever(store=store).invoke(question, CONFIG)]

    assert "VS Code" in block and "Vim" not in block, block
    assert any("VS Code" in d for d in docs) and not any("Vim" in d for d in docs), docs


def test_langmem_items_read_back_as_they_were_put(langmem_run: dict[str, Any]) -> None:
    store = langmem_run["store"]
    store.search(NS, query="editor")  # reads must not change what get() returns
    LifecycleRetriever(store=store).invoke("Which editor should I use?", CONFIG)

    item = store.get(NS, langmem_run["vim_key"])

    assert item is not None
    assert item.value == {"content": "User prefers Vim"}
    assert item.key == langmem_run["vim_key"]
    assert item.created_at == langmem_run["created_at"]


def test_ids_the_cli_lists_for_langmem_items_resolve_everywhere(langmem_run: dict[str, Any]) -> None:
    path = langmem_run["path"]
    listed = cli(path, "list", "-u", USER, "--json")
    assert listed.returncode == 0, listed.stderr
    records = json.loads(listed.stdout)["records"]
    ids = [r["id"] for r in records]
    assert ids

    for record_id in ids:
        shown = cli(path, "show", record_id, "-u", USER, "--json")
        assert shown.returncode == 0, f"`show {record_id}` exited {shown.returncode}: {shown.stderr.strip()}"
    first = next(r["id"] for r in records if r["status"] == "active")  # forget takes a live memory
    for args in (["history", first], ["forget", "--id", first, "--yes"], ["restore", first]):
        done = cli(path, *args, "-u", USER)
        assert done.returncode == 0, f"`{' '.join(args)}` exited {done.returncode}: {done.stderr.strip()}"


# ---------------------------------------------------------------------- without LangMem installed
def test_plain_items_put_the_way_langmem_puts_them_follow_the_lifecycle(embeddings: Any, tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "m", embeddings=embeddings)
    store.put(NS, "k-vim", {"content": "User prefers Vim"})
    store.put(NS, "k-code", {"content": "User prefers VS Code"})

    found = [item.value.get("content") for item in store.search(NS, query="editor")]

    assert found == ["User prefers VS Code"], found
    assert store.get(NS, "k-vim").value == {"content": "User prefers Vim"}  # type: ignore[union-attr]


def test_item_lifecycle_false_keeps_plain_items_plain(tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "m", embeddings=DeterministicFakeEmbedding(size=32), item_lifecycle=False)
    store.put(NS, "k-vim", {"content": "User prefers Vim"})
    store.put(NS, "k-code", {"content": "User prefers VS Code"})

    found = {item.key for item in store.search(NS, query="editor")}

    assert found == {"k-vim", "k-code"}
    assert store.get(NS, "k-vim").value == {"content": "User prefers Vim"}  # type: ignore[union-attr]
    assert store.get(NS, "k-code").value == {"content": "User prefers VS Code"}  # type: ignore[union-attr]


def test_an_item_is_one_record_under_its_key_and_deleting_it_leaves_nothing(embeddings: Any, tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "m", embeddings=embeddings)
    store.put(NS, "appt", {"content": "Dentist on Thursday at 4pm, bring the referral letter"})
    store.put(NS, "taste", {"content": "User likes harmonium music", "kind": "preference"})

    assert sorted(item.key for item in store.search(NS)) == ["appt", "taste"]
    assert store.get(NS, "taste").value == {"content": "User likes harmonium music", "kind": "preference"}  # type: ignore[union-attr]

    store.delete(NS, "appt")
    store.delete(NS, "taste")
    assert store.search(NS, query="dentist referral letter") == []
    assert store.search(NS, query="harmonium music") == []


def test_deleting_an_item_brings_back_the_one_that_said_the_same(embeddings: Any, tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "m", embeddings=embeddings)
    store.put(NS, "first", {"content": "User practises the harmonium on Sundays"})
    store.put(NS, "again", {"content": "User practises the harmonium on Sundays"})
    assert [item.key for item in store.search(NS)] == ["first"]  # one memory, said twice

    store.delete(NS, "first")

    assert [item.key for item in store.search(NS, query="harmonium")] == ["again"]


def test_a_batch_of_item_puts_and_deletes_applies_in_order(embeddings: Any, tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "m", embeddings=embeddings)
    store.batch([PutOp(NS, "k1", None), PutOp(NS, "k1", {"content": "User collects cuckoo clocks"})])
    store.batch([PutOp(NS, "k2", {"x": 1}), PutOp(NS, "k2", {"content": "User carves quills"})])

    assert store.get(NS, "k1").value == {"content": "User collects cuckoo clocks"}  # type: ignore[union-attr]
    assert store.get(NS, "k2").value == {"content": "User carves quills"}  # type: ignore[union-attr]


def test_an_items_secrets_are_masked_before_they_are_stored(embeddings: Any, tmp_path: Path) -> None:
    store = ChromaMemoryStore(tmp_path / "m", embeddings=embeddings)
    card, key = "4556 7375 8689 9855", "sk-9fJ2kLmQ7rTx4vBn8cWz1yHd"
    store.put(NS, "p", {"content": f"User's card is {card} and the API key is {key}"})

    shown = [store.get(NS, "p").value["content"], *(i.value["content"] for i in store.search(NS, query="card"))]  # type: ignore[union-attr]
    assert all(card not in text and key not in text for text in shown), shown
    on_disk = subprocess.run(["grep", "-rlF", card, str(tmp_path / "m")], capture_output=True, text=True).stdout
    assert on_disk == ""


def test_an_item_updated_under_its_key_keeps_its_earlier_version_in_history(embeddings: Any, tmp_path: Path) -> None:
    """LangMem's "update" puts new content under the same key: the old city is history, not gone."""
    from langchain_lifecycle_memory import LifecycleMemory

    store = ChromaMemoryStore(tmp_path / "m", embeddings=embeddings)
    store.put(NS, "home", {"content": "User lives in Podgorica"})
    store.put(NS, "home", {"content": "User lives in Skopje"})

    history = LifecycleMemory(store=store).history(USER, "user", "city")
    assert [(r.value, r.status.value) for r in history] == [("Podgorica", "archived"), ("Skopje", "active")]
    assert history[1].id == "home" and history[1].supersedes == history[0].id != "home"
    assert [item.value["content"] for item in store.search(NS, query="Which city?")] == ["User lives in Skopje"]


def test_deleting_the_current_item_gives_its_place_back_to_the_one_it_replaced(embeddings: Any, tmp_path: Path) -> None:
    """As on LangGraph's ``InMemoryStore``: deleting the newer memory leaves the older one, and it is current."""
    from langchain_lifecycle_memory import LifecycleMemory

    store = ChromaMemoryStore(tmp_path / "m", embeddings=embeddings)
    store.put(NS, "city-1", {"content": "User lives in Podgorica"})
    store.put(NS, "city-2", {"content": "User lives in Skopje"})
    store.delete(NS, "city-2")

    assert [item.key for item in store.search(NS, query="Which city do I live in?")] == ["city-1"]
    block = LifecycleMemory(store=store).inject("Which city do I live in?", USER)
    assert "Podgorica" in block.text and "Skopje" not in block.text


def test_an_item_that_ends_something_is_what_holds_now(embeddings: Any, tmp_path: Path) -> None:
    """ "User no longer plays the dulcimer" ends the earlier item and is itself found (it was stored archived)."""
    store = ChromaMemoryStore(tmp_path / "m", embeddings=embeddings)
    store.put(NS, "music", {"content": "User plays the hammered dulcimer"})
    store.put(NS, "stopped", {"content": "User no longer plays the hammered dulcimer"})

    found = [item.value["content"] for item in store.search(NS, query="dulcimer")]
    assert found == ["User no longer plays the hammered dulcimer"], found


def test_a_status_filter_reaches_the_items_that_became_records(embeddings: Any, tmp_path: Path) -> None:
    """``search(filter={"status": "archived"})`` shows what was replaced, LangMem's items included."""
    store = ChromaMemoryStore(tmp_path / "m", embeddings=embeddings)
    store.put(NS, "city-1", {"content": "User lives in Podgorica"})
    store.put(NS, "city-2", {"content": "User lives in Skopje"})

    assert [item.key for item in store.search(NS, filter={"status": "archived"})] == ["city-1"]
    assert [item.key for item in store.search(NS, filter={"status": "active"})] == ["city-2"]
    assert store.search(NS, filter={"status": "archived"})[0].value == {"content": "User lives in Podgorica"}


def test_an_item_that_says_their_means_the_users_own(embeddings: Any, tmp_path: Path) -> None:
    """ "User uses Kakoune as their editor" was read as someone else's editor: each new one joined the others."""
    store = ChromaMemoryStore(tmp_path / "m", embeddings=embeddings)
    store.put(NS, "e1", {"content": "User uses Kakoune as their editor"})
    store.put(NS, "e2", {"content": "User uses Geany as their editor"})

    assert [item.key for item in store.search(NS, query="Which editor?")] == ["e2"]
