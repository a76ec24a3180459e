"""Structured output on any OpenAI-compatible server: the fallback chain, offline.

A tiny HTTP server on 127.0.0.1 speaks the OpenAI chat-completions protocol and rejects the
methods a test names the way real servers do (llama.cpp: HTTP 500 "Input should be 'text' or
'json_object'" for json_schema); the real ``ChatOpenAI`` client talks to it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from langchain_lifecycle_memory.errors import ExtractionError
from langchain_lifecycle_memory.write._structured import MethodChain, is_capability_error, loads_tolerant
from langchain_lifecycle_memory.write.extraction import ExtractedFacts, create_extractor

NOW = datetime(2024, 3, 1, 10, tzinfo=timezone.utc)
FACTS = {
    "facts": [
        {
            "entity": "user",
            "attribute": "editor",
            "value": "VS Code",
            "content": "The user now uses VS Code.",
            "kind": "preference",
        }
    ]
}
REJECTIONS = {
    "json_schema": (
        500,
        "1 validation error: ('body', 'response_format', 'type') Input should be 'text' or 'json_object'",
    ),
    "function_calling": (400, "This model does not support tools"),
    "json_mode": (400, "response_format of type json_object is not supported by this model"),
}


def method_of(body: dict[str, Any]) -> str:
    kind = (body.get("response_format") or {}).get("type")
    if kind == "json_schema":
        return "json_schema"
    if body.get("tools"):
        return "function_calling"
    return "json_mode" if kind == "json_object" else "prompt"


class FakeOpenAI(ThreadingHTTPServer):
    """Records every request; rejects ``reject`` methods; replies with ``replies`` (text) then FACTS."""

    def __init__(self, reject: set[str], replies: list[Any] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reject, self.replies = reject, list(replies or [])
        self.requests: list[dict[str, Any]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    @property
    def methods(self) -> list[str]:
        return [method_of(b) for b in self.requests]


class _Handler(BaseHTTPRequestHandler):
    server: FakeOpenAI

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        method = method_of(body)
        if method in self.server.reject:
            status, text = REJECTIONS[method]
            self._send(status, {"error": {"message": text, "type": "invalid_request_error"}})
            return
        reply = self.server.replies.pop(0) if self.server.replies else FACTS
        if isinstance(reply, tuple):  # (status, message): a scripted non-capability error
            self._send(reply[0], {"error": {"message": reply[1], "type": "server_error"}})
            return
        text = reply if isinstance(reply, str) else json.dumps(reply)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if method == "function_calling":
            name = body["tools"][0]["function"]["name"]
            call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": text}}
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        self._send(
            200,
            {"id": "c1", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice]}
            | {"usage": usage},
        )


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[FakeOpenAI] = []

    def start(reject: set[str], replies: list[Any] | None = None) -> FakeOpenAI:
        server = FakeOpenAI(reject, replies)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def model_for(server: FakeOpenAI) -> ChatOpenAI:
    return ChatOpenAI(base_url=server.base_url, api_key="local", model="local", temperature=0, max_retries=0)


def turn(text: str = "I've switched to VS Code now") -> dict[str, Any]:
    return {"messages": [HumanMessage(text)], "now": NOW}


def editor_values(facts: list[Any]) -> list[tuple[str | None, str | None]]:
    return [(f.attribute, f.value) for f in facts]


def test_json_schema_rejected_like_llama_cpp_falls_back_to_tools_and_remembers(serve: Any) -> None:
    server = serve({"json_schema"})
    extractor = create_extractor(model_for(server))
    assert editor_values(extractor.invoke(turn())) == [("editor", "VS Code")]
    assert server.methods == ["json_schema", "function_calling"]
    assert editor_values(extractor.invoke(turn())) == [("editor", "VS Code")]
    assert server.methods[2:] == ["function_calling"]  # remembered: no second json_schema request


def test_json_schema_then_tools_rejected_uses_json_object_with_the_shape_in_the_prompt(serve: Any) -> None:
    server = serve({"json_schema", "function_calling"})
    facts = create_extractor(model_for(server)).invoke(turn())
    assert editor_values(facts) == [("editor", "VS Code")]
    assert server.methods == ["json_schema", "function_calling", "json_mode"]
    system = server.requests[-1]["messages"][0]["content"]
    assert "Reply with JSON only" in system


def test_every_method_rejected_ends_on_the_prompt_and_a_tolerant_parser(serve: Any) -> None:
    fenced = '```json\n{"facts": [{"entity": "I", "attribute": "editor", "value": "VS Code", "content": "x",},],}\n```'
    server = serve({"json_schema", "function_calling", "json_mode"}, replies=[fenced])
    facts = create_extractor(model_for(server)).invoke(turn())
    assert [(f.entity, f.attribute, f.value) for f in facts] == [("user", "editor", "VS Code")]
    assert server.methods == ["json_schema", "function_calling", "json_mode", "prompt"]
    assert "response_format" not in server.requests[-1] and "tools" not in server.requests[-1]


async def test_async_path_falls_back_the_same_way(serve: Any) -> None:
    server = serve({"json_schema", "function_calling"})
    facts = await create_extractor(model_for(server)).ainvoke(turn())
    assert editor_values(facts) == [("editor", "VS Code")]
    assert server.methods == ["json_schema", "function_calling", "json_mode"]


def test_bad_json_is_a_content_error_retried_with_the_same_method(serve: Any) -> None:
    server = serve({"json_schema", "function_calling"}, replies=["{not json at all", FACTS])
    facts = create_extractor(model_for(server)).invoke(turn())
    assert editor_values(facts) == [("editor", "VS Code")]
    assert server.methods == ["json_schema", "function_calling", "json_mode", "json_mode"]
    assert "could not be used" in server.requests[-1]["messages"][-1]["content"]


def test_a_server_error_that_is_not_about_the_method_does_not_fall_back(serve: Any) -> None:
    server = serve(set(), replies=[(500, "CUDA error: out of memory"), (500, "CUDA error: out of memory")])
    extractor = create_extractor(model_for(server))
    with pytest.raises(ExtractionError) as err:
        extractor.invoke(turn())
    assert server.methods == ["json_schema", "json_schema"]  # retried, never downgraded
    assert [m.text for m in err.value.messages] == ["I've switched to VS Code now"]
    assert editor_values(extractor.invoke(turn())) == [("editor", "VS Code")]
    assert server.methods[-1] == "json_schema"


def test_rate_limit_is_not_a_capability_error(serve: Any) -> None:
    server = serve(set(), replies=[(429, "Rate limit reached for tools endpoint"), FACTS])
    facts = create_extractor(model_for(server)).invoke(turn())
    assert editor_values(facts) == [("editor", "VS Code")]
    assert server.methods == ["json_schema", "json_schema"]


def test_model_class_without_tool_calling_goes_straight_to_the_prompt() -> None:
    model = FakeListChatModel(responses=[json.dumps(FACTS)])
    chain = MethodChain(model, ExtractedFacts)
    method, _ = chain.step()
    assert method == "prompt"
    assert set(chain.rejected) == {"json_schema", "function_calling", "json_mode"}


class _StatusError(Exception):
    def __init__(self, status: int, text: str) -> None:
        super().__init__(text)
        self.status_code = status


@pytest.mark.parametrize(
    ("error", "capability"),
    [
        (NotImplementedError("bind_tools"), True),
        (_StatusError(500, "Input should be 'text' or 'json_object'"), True),
        (_StatusError(400, "'tools' is not supported for this model"), True),
        (_StatusError(422, "response_format: unknown variant json_schema"), True),
        (_StatusError(500, "CUDA error: out of memory"), False),
        (_StatusError(429, "rate limit for tools"), False),
        (_StatusError(401, "invalid api key"), False),
        (TimeoutError("timed out"), False),
        (ValueError("response_format"), False),
    ],
)
def test_capability_errors_are_classified_by_status_and_text(error: Exception, capability: bool) -> None:
    assert is_capability_error(error) is capability


def test_tolerant_json_parser() -> None:
    assert loads_tolerant('Sure! {"facts": [], } trailing prose') == {"facts": []}
    assert loads_tolerant('{"a": None, "b": True}') == {"a": None, "b": True}
    with pytest.raises(ValueError, match="no JSON"):
        loads_tolerant("nothing to remember")


# ---------------------------------------------------------------- the conflict judge on the same chain


def _japan_trip(store: Any) -> tuple[Any, Any]:
    from langchain_lifecycle_memory.schema import Fact
    from langchain_lifecycle_memory.write.update import reconcile

    ns = ("memories", "judge")
    reconcile(store, ns, [Fact(content="The user is planning a trip to Japan in May.", kind="event")], at="2024-01-01")
    return ns, store.list_records(ns)[0]


def _cancel(store: Any, ns: Any, judge: Any) -> Any:
    from langchain_lifecycle_memory.schema import Fact
    from langchain_lifecycle_memory.write.update import UpdateConfig, reconcile

    cancelled = Fact(content="The user cancelled the Japan trip in May.", kind="event")
    return reconcile(store, ns, [cancelled], at="2024-02-01", config=UpdateConfig(judge=judge))


def test_conflict_judge_falls_back_like_extraction_on_a_llama_cpp_server(serve: Any, mem_store: Any) -> None:
    from langchain_lifecycle_memory.write.update import create_conflict_judge

    ns, old = _japan_trip(mem_store)
    server = serve({"json_schema"}, replies=[{"superseded_ids": [old.id]}])
    result = _cancel(mem_store, ns, create_conflict_judge(model_for(server)))
    assert server.methods == ["json_schema", "function_calling"]
    assert [r.id for r in result.archived] == [old.id]
    history = {r.id: r.status.value for r in mem_store.list_records(ns, statuses=None)}
    assert history[old.id] == "archived" and len(history) == 2  # archived, never deleted


async def test_conflict_judge_async_ends_on_the_prompt_with_the_json_shape(serve: Any) -> None:
    from langchain_lifecycle_memory.schema import MemoryRecord
    from langchain_lifecycle_memory.write.update import ConflictVerdict, create_conflict_judge

    old = MemoryRecord(namespace=("memories", "judge"), content="The user lives in Denver.")
    server = serve(
        {"json_schema", "function_calling", "json_mode"},
        replies=[f'```json\n{{"superseded_ids": ["{old.id}",],}}\n```'],
    )
    verdict = await create_conflict_judge(model_for(server)).ainvoke(
        {"new": "The user moved to Austin.", "candidates": [old]}
    )
    assert verdict == ConflictVerdict(superseded_ids=[old.id])
    assert server.methods == ["json_schema", "function_calling", "json_mode", "prompt"]
    assert '{"superseded_ids"' in server.requests[-1]["messages"][-1]["content"]


def test_conflict_judge_unusable_reply_archives_nothing(serve: Any, mem_store: Any) -> None:
    from langchain_lifecycle_memory.write.update import create_conflict_judge

    ns, old = _japan_trip(mem_store)
    server = serve({"json_schema", "function_calling"}, replies=['{"superseded": "all of them"'])
    result = _cancel(mem_store, ns, create_conflict_judge(model_for(server)))
    assert result.archived == [] and len(result.added) == 1
    assert {r.status.value for r in mem_store.list_records(ns, statuses=None, resolve=False)} == {"active"}  # as stored


def test_conflict_judge_maps_decorated_ids_back_and_drops_unknown_ones(serve: Any) -> None:
    """Qwen2.5-1.5B on llama.cpp answered ``"id=<uuid>"`` (the prompt's label copied): it still names the record."""
    from langchain_lifecycle_memory.schema import MemoryRecord
    from langchain_lifecycle_memory.write.update import create_conflict_judge

    trip, dog, cat = (MemoryRecord(namespace=("memories", "judge"), content=c) for c in ("trip", "dog", "cat"))
    answer = [f"id={trip.id}", dog.id[:10], "id=00000000-not-offered", cat.id[:4]]
    server = serve({"json_schema"}, replies=[{"superseded_ids": answer}])
    verdict = create_conflict_judge(model_for(server)).invoke({"new": "x", "candidates": [trip, dog, cat]})
    assert verdict.superseded_ids == [trip.id, dog.id]  # a 4-character prefix is too short to trust
