"""LLM extraction with fake chat models: structured output, JSON fallback, retries, errors, dates."""

from __future__ import annotations

import doctest
import json
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tracers.context import collect_runs
from pydantic import Field

from langchain_lifecycle_memory.errors import ExtractionError
from langchain_lifecycle_memory.schema import Fact
from langchain_lifecycle_memory.write import _dates, _rules, extraction
from langchain_lifecycle_memory.write.extraction import create_extractor, create_rule_extractor
from tests.scripted_chat import ScriptedChatModel

NOW = datetime(2024, 3, 15, 10, 0, tzinfo=timezone.utc)


class ToolCallingChatModel(ScriptedChatModel):
    """A model with tool calling: every reply is a call of the bound schema with scripted args."""

    bound_tools: list[Any] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, BaseMessage]:  # type: ignore[override]
        self.bound_tools.extend(tools)
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append(list(messages))
        args = self.replies.pop(0)
        message = AIMessage(content="", tool_calls=[{"name": "ExtractedFacts", "args": args, "id": "call_1"}])
        return ChatResult(generations=[ChatGeneration(message=message)])


def _fact(**kw: Any) -> dict[str, Any]:
    return {"entity": "user", "kind": "preference", "confidence": 0.9, **kw}


VIM = _fact(attribute="editor", value="Vim", content="用户喜欢使用 Vim 编辑器")


def test_structured_output_path_returns_facts_and_grounds_the_prompt_on_now() -> None:
    model = ToolCallingChatModel(replies=[{"facts": [VIM]}])
    facts = create_extractor(model).invoke({"messages": [HumanMessage("我喜欢使用 Vim 编辑器")], "now": NOW})

    assert model.bound_tools == [extraction.ExtractedFacts]
    assert [(f.entity, f.attribute, f.value, f.kind) for f in facts] == [("user", "editor", "Vim", "preference")]
    assert facts[0].valid_from == NOW
    system, human = model.prompts[0][0].text, model.prompts[0][1].text
    assert "2024-03-15" in human and "never against today" in system
    assert "editor: code editor or IDE they use" in system
    assert "[user] 我喜欢使用 Vim 编辑器" in human


async def test_async_structured_output() -> None:
    model = ToolCallingChatModel(replies=[{"facts": [VIM]}])
    facts = await create_extractor(model).ainvoke([HumanMessage("我喜欢使用 Vim 编辑器")])
    assert [f.value for f in facts] == ["Vim"]


def test_structured_output_with_loose_types_is_still_used() -> None:
    loose = _fact(attribute="Favorite Band", value="Fleetwood Mac", content="x", confidence="high", ttl_days=-3)
    model = ToolCallingChatModel(replies=[{"facts": [loose]}])
    [fact] = create_extractor(model).invoke([HumanMessage("Fleetwood Mac is my all-time favorite band.")])
    assert (fact.attribute, fact.confidence, fact.ttl_days) == ("favorite_band", 0.7, None)


def test_json_fallback_strips_fences_for_models_without_tool_calling() -> None:
    reply = "Here you go:\n```json\n" + json.dumps({"facts": [VIM]}, ensure_ascii=False) + "\n```"
    model = FakeListChatModel(responses=[reply])
    facts = create_extractor(model).invoke([HumanMessage("我喜欢使用 Vim 编辑器")])
    assert [(f.attribute, f.value) for f in facts] == [("editor", "Vim")]


def test_malformed_json_then_valid_json_retries_once() -> None:
    model = ScriptedChatModel(replies=['{"facts": [{"entity": "user",', json.dumps({"facts": [VIM]})])
    facts = create_extractor(model).invoke([HumanMessage("我喜欢使用 Vim 编辑器")])

    assert [f.value for f in facts] == ["Vim"]
    assert len(model.prompts) == 2
    assert "could not be used" in model.prompts[1][-1].text


def test_always_malformed_raises_extraction_error_carrying_the_turn(caplog: pytest.LogCaptureFixture) -> None:
    model = ScriptedChatModel(replies=["no JSON here", "still none", "nope"])
    turn = [HumanMessage("I live in Oslo."), AIMessage("Nice.")]

    with pytest.raises(ExtractionError) as info:
        create_extractor(model, max_retries=2).invoke({"messages": turn, "now": NOW})

    assert len(model.prompts) == 3
    err = info.value
    assert err.messages == turn  # type: ignore[attr-defined]
    assert err.raw_output == "nope"  # type: ignore[attr-defined]
    assert "after 3 attempt(s)" in str(err) and "malformed model output" in str(err)
    assert "attempt 3/3 failed" in caplog.text


def test_model_exception_becomes_extraction_error() -> None:
    boom = ConnectionError("endpoint down")
    model = ScriptedChatModel(replies=[boom, boom])
    with pytest.raises(ExtractionError, match="ConnectionError: endpoint down") as info:
        create_extractor(model).invoke([HumanMessage("I live in Oslo.")])
    assert info.value.__cause__ is boom
    assert "credentials" in str(info.value)


def test_no_retry_when_max_retries_is_zero() -> None:
    model = ScriptedChatModel(replies=["garbage", json.dumps({"facts": [VIM]})])
    with pytest.raises(ExtractionError):
        create_extractor(model, max_retries=0).invoke([HumanMessage("我喜欢使用 Vim 编辑器")])
    assert len(model.prompts) == 1


@pytest.mark.parametrize("messages", [[], [AIMessage("How can I help?")], [HumanMessage("   ")]])
def test_nothing_said_by_the_user_means_no_model_call(messages: list[BaseMessage]) -> None:
    model = ScriptedChatModel(replies=[])
    assert create_extractor(model).invoke({"messages": messages, "now": NOW}) == []
    assert model.prompts == []


def test_fifty_turn_batch_is_one_call() -> None:
    turns: list[BaseMessage] = []
    for i in range(50):
        turns += [HumanMessage(f"My locker number {i} is L{i}."), AIMessage("Noted.")]
    reply = {
        "facts": [_fact(attribute=f"locker_{i}", value=f"L{i}", content=f"Locker {i} is L{i}.") for i in range(50)]
    }
    model = ScriptedChatModel(replies=[json.dumps(reply)])

    facts = create_extractor(model).invoke({"messages": turns, "now": NOW})

    assert len(model.prompts) == 1
    assert len(facts) == 50
    assert model.prompts[0][-1].text.count("[user]") == 50


def test_model_dates_and_relative_dates_are_resolved_against_now() -> None:
    reply = {
        "facts": [
            _fact(attribute="city", value="上海", content="用户上个月搬到了上海", kind="profile"),
            _fact(attribute="employer", value="Acme", content="The user works at Acme.", valid_from="2023-09"),
            _fact(attribute="cuisine", value="Thai food", content="The user is craving Thai food this week."),
        ]
    }
    model = ScriptedChatModel(replies=[json.dumps(reply, ensure_ascii=False)])
    city, employer, cuisine = create_extractor(model).invoke({"messages": [HumanMessage("...")], "now": NOW})

    assert city.valid_from is not None and (city.valid_from.year, city.valid_from.month) == (2024, 2)
    assert employer.valid_from == datetime(2023, 9, 1, tzinfo=timezone.utc)
    assert cuisine.valid_from == NOW and cuisine.ttl_days == 7


def test_retraction_and_entities_are_normalised() -> None:
    reply = {
        "facts": [
            {"entity": "User", "attribute": "editor", "value": "Vim", "content": "x", "operation": "retract"},
            {"entity": "Sister Maya", "attribute": "Job", "value": "dentist", "content": "y"},
        ]
    }
    model = ScriptedChatModel(replies=[json.dumps(reply)])
    retract, sister = create_extractor(model).invoke([HumanMessage("...")])
    assert (retract.entity, retract.operation) == ("user", "retract")
    assert (sister.entity, sister.attribute) == ("sister_maya", "job")


def test_a_fact_without_content_is_dropped_but_valid_ones_are_kept() -> None:
    reply = {"facts": [VIM, {"entity": "user", "attribute": "city", "value": "Oslo"}]}
    model = ScriptedChatModel(replies=[json.dumps(reply, ensure_ascii=False)])
    facts = create_extractor(model).invoke([HumanMessage("...")])
    assert [f.value for f in facts] == ["Vim"]


def test_prompt_teaches_bilingual_content_and_custom_attributes() -> None:
    from langchain_lifecycle_memory.vocabulary import AttributeSpec

    model = ScriptedChatModel(replies=['{"facts": []}'])
    spec = AttributeSpec("favorite_snack", "snack they like most", "零食", "preference")
    create_extractor(model, attributes=[spec]).invoke([HumanMessage("我最喜欢的零食是薯片")])
    system = model.prompts[0][0].text
    assert "favorite_snack: snack they like most (零食)" in system
    assert "Chinese turn -> Chinese" in system and "JSON only" in system


@pytest.mark.parametrize("bad", ["I like Vim", ["I like Vim"], {"msgs": []}, HumanMessage("hi"), 42])
def test_non_message_input_is_a_type_error(bad: Any) -> None:
    with pytest.raises(TypeError, match="HumanMessage|messages"):
        create_extractor(ScriptedChatModel()).invoke(bad)
    with pytest.raises(TypeError):
        create_rule_extractor().invoke(bad)


def test_bad_arguments_say_how_to_fix_them() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        create_extractor(ScriptedChatModel(), max_retries=-1)
    with pytest.raises(TypeError, match="AttributeSpec"):
        create_rule_extractor(attributes=["editor"])  # type: ignore[list-item]


def test_run_names_and_hidden_parser() -> None:
    model = ScriptedChatModel(replies=[json.dumps({"facts": [VIM]})])
    with collect_runs() as cb:
        create_extractor(model, run_name="my_extract").invoke([HumanMessage("我喜欢使用 Vim 编辑器")])
        create_rule_extractor().invoke([HumanMessage("I live in Oslo.")])
    roots = {run.name for run in cb.traced_runs}
    assert {"my_extract", "rule_extract_memories"} <= roots
    [root] = [run for run in cb.traced_runs if run.name == "my_extract"]
    children = {child.name: child for child in root.child_runs}
    assert "langsmith:hidden" in (children["parse_facts"].tags or [])
    assert "ScriptedChatModel" in children


def test_rule_extractor_mines_only_user_messages() -> None:
    facts = create_rule_extractor().invoke(
        {"messages": [AIMessage("I love Emacs."), HumanMessage("我喜欢使用 Vim 编辑器")], "now": NOW}
    )
    assert [(f.attribute, f.value, f.content) for f in facts] == [("editor", "Vim", "用户喜欢使用 Vim 编辑器")]
    assert all(isinstance(f, Fact) and f.valid_from == NOW for f in facts)


def test_rule_extractor_chinese_input_gives_chinese_content_and_resolves_dates() -> None:
    [fact] = create_rule_extractor().invoke({"messages": [HumanMessage("上个月我搬到了上海")], "now": NOW})
    assert (fact.attribute, fact.value, fact.content) == ("city", "上海", "2024年2月用户搬到了上海")
    assert fact.valid_from is not None and (fact.valid_from.year, fact.valid_from.month) == (2024, 2)


@pytest.mark.parametrize("module", [extraction, _rules, _dates])
def test_docstring_examples_run(module: Any) -> None:
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
