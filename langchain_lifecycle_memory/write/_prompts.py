"""What the extraction model is asked, and the shape it answers in (schema and prompt texts)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ExtractedFact(BaseModel):
    """One fact the user stated that is worth remembering long-term."""

    entity: str = Field(description="'user' for the speaker; others as snake_case relation_name, e.g. 'sister_maya'.")
    # Required (but nullable): servers that constrain tool calls by a grammar (llama.cpp) let a small model skip
    # optional fields, and a fact without its slot name can never supersede anything.
    attribute: str | None = Field(description="snake_case slot name, e.g. 'editor', 'city' (null if none fits).")
    value: str | None = Field(description="The slot value in its original spelling, e.g. 'VS Code'.")
    content: str = Field(description="One standalone sentence in the user's language about 'the user' / '用户'.")
    kind: str = Field(default="fact", description="preference, profile, fact, event or sensitive.")
    confidence: float = Field(default=0.8, description="0..1; 0.9 explicit, 0.6 implied.")
    valid_from: str | None = Field(default=None, description="YYYY-MM-DD when it became true, if the text dates it.")
    ttl_days: float | None = Field(default=None, description="Lifetime in days for temporary statements, else null.")
    operation: Literal["assert", "retract"] = Field(default="assert", description="'retract': no longer true.")
    cues: list[str] = Field(
        default_factory=list,
        description="2-4 short situations (3-8 words) where remembering this fact helps, in the user's language.",
    )


class ExtractedFacts(BaseModel):
    """Facts from the conversation worth remembering long-term (an empty list when there are none)."""

    facts: list[ExtractedFact] = Field(default_factory=list)


_SYSTEM = """You extract long-term memories from a conversation between a user and an assistant.
你负责从用户与助手的对话中提取值得长期记住的事实。

The conversation's date / 对话日期 comes with it ("Conversation on YYYY-MM-DD"). Resolve every relative date
against that date, never against today:
"yesterday"/"昨天" is the day before it; "last week"/"上周", "last month"/"上个月", "last year"/"去年" likewise.

What to extract / 提取什么:
- Only facts the USER states about themselves or about people, pets and things in their life. Assistant turns
  are context only (they explain a short reply such as "Yes, tea"). 助手说的话不是事实来源。
- Skip questions, greetings, chit-chat, hypotheticals ("if I lived in Paris") and requests ("I'd like a coffee").
- "I don't like X" / "我不喜欢 X" is not a like-fact. A stable negative trait is a fact: "我不喝酒" -> alcohol = 不喝酒.
- A change ("I switched to X", "我现在改用 X 了") is ONE fact with the new value on the same slot.
- "No longer" without a replacement ("I no longer use Vim", "我不再用 Vim 了") is a fact with operation "retract"
  and the old value.

Fields / 字段:
- entity: "user" for the speaker. Another person: snake_case relation plus romanised given name, e.g.
  "sister_maya", "wife_fang" (我老婆小芳), "colleague_li"; only the relation when unnamed ("mother").
- attribute: a snake_case English slot name. Use these when they fit:
{vocabulary}
  Otherwise make up a short one in the same style (e.g. "running_shoes", "favorite_movie").
- value: the slot's value, short, in its original spelling and language ("VS Code", "黑咖啡", "Tesla Model 3").
- content: ONE standalone sentence in the language the user wrote in. Chinese turn -> Chinese
  ("用户喜欢使用 Vim 编辑器"); English turn -> English ("The user likes using the Vim editor."). Say "the user" /
  "用户", never "I" / "我"; write dates as absolute dates ("2024年2月", "in February 2024"), never "last month".
- kind: preference | profile | fact | event | sensitive (phone numbers, email addresses, ID numbers, home
  addresses and bank cards are always "sensitive").
- confidence: 0.9 for explicit statements, 0.6-0.7 for implied ones.
- valid_from: YYYY-MM-DD when the fact became true if the text dates it ("last month" -> a day in the previous
  month), else null.
- ttl_days: only for temporary statements: "this week"/"这周" -> 7, "today"/"今天" -> 1, "this weekend" -> 3,
  "for a month" -> 30; else null.
- operation: "assert", or "retract" as described above.
- cues: 2-4 short situations or requests (3-8 words each) where an assistant should remember this fact,
  including ones that share no word with it: a fear of heights -> "booking a hotel room", "planning a hike";
  a bad knee -> "choosing a running route". In the user's language.

Split compound statements ("I'm a nurse in Boston" -> job and city). If a slot changes during the conversation,
give each value in the order stated (the last one is current). If nothing is worth remembering, return an empty
list."""

_JSON_FORMAT = """

Reply with JSON only (no prose, no code fences) in exactly this shape:
{"facts": [{"entity": "user", "attribute": "editor", "value": "VS Code", "content": "The user now uses the VS Code \
editor.", "kind": "preference", "confidence": 0.9, "valid_from": null, "ttl_days": null, "operation": "assert", \
"cues": ["choosing IDE plugins", "setting up a new laptop"]}]}
Use {"facts": []} when there is nothing to remember."""

_SLOTS_NOTE = """Already stored for this user (entity.attribute: current value). When a statement is about one of
these slots, reuse exactly that entity and attribute name (a new value for the same thing goes on the same slot,
e.g. a different editor is still "editor"); make up a new name only for something not listed here. These are
NOT part of the conversation: never output one of them unless the conversation itself states it.
"""
