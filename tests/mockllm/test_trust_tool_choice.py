"""A scripted tool call the request's tool choice forbids fails the test.

A real provider never calls a tool when the request says ``tool_choice: "none"``, calls
the forced tool and no other, and makes one call a turn under ``parallel_tool_calls:
false``. A script may say otherwise; the test then exercised a branch of the app that
production never reaches, and passed. These are the ``undeclared_tool`` problem.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from mockllm import HTTPXTransport, MockLLM, StrictnessError

CITY = {"type": "object", "properties": {"city": {"type": "string"}}}
WEATHER = [{"name": "weather", "args": {"city": "Oslo"}}]
TWO_CALLS = [*WEATHER, {"name": "weather", "args": {"city": "Rome"}}]
OPENAI_TOOLS = [
    {"type": "function", "function": {"name": "weather", "parameters": CITY}},
    {"type": "function", "function": {"name": "clock", "parameters": {"type": "object"}}},
]
ANTHROPIC_TOOLS = [{"name": "weather", "input_schema": CITY}, {"name": "clock", "input_schema": {"type": "object"}}]
RESPONSES_TOOLS = [{"type": "function", "name": "weather", "parameters": CITY}]
GEMINI_TOOLS = [{"functionDeclarations": [{"name": "weather"}, {"name": "clock"}]}]
BEDROCK_TOOLS = [
    {"toolSpec": {"name": name, "inputSchema": {"json": {"type": "object"}}}} for name in ("weather", "clock")
]

USER = [{"role": "user", "content": "Weather in Oslo?"}]
CHAT = ("/v1/chat/completions", {"model": "m", "messages": USER, "tools": OPENAI_TOOLS})
MESSAGES = ("/v1/messages", {"model": "c", "max_tokens": 99, "messages": USER, "tools": ANTHROPIC_TOOLS})
RESPONSES = ("/v1/responses", {"model": "m", "input": "Weather in Oslo?", "tools": RESPONSES_TOOLS})
GEMINI = (
    "/v1beta/models/g:generateContent",
    {"contents": [{"role": "user", "parts": [{"text": "Weather in Oslo?"}]}], "tools": GEMINI_TOOLS},
)
BEDROCK = (
    "/model/anthropic.claude-mock-v1:0/converse",
    {"messages": [{"role": "user", "content": [{"text": "Weather in Oslo?"}]}], "toolConfig": {"tools": BEDROCK_TOOLS}},
)


def _ask(route: tuple[str, dict[str, Any]], calls: list[dict[str, Any]], **fields: Any) -> MockLLM:
    """One request with ``fields`` added, answered by a script making ``calls``."""
    path, body = route
    mock = MockLLM()
    mock.script([{"messages": [{"tool_call": calls}]}])
    with httpx.Client(transport=HTTPXTransport(mock), base_url="http://mock") as client:
        assert client.post(path, json=_merged(body, fields)).status_code == 200
    return mock


def _merged(body: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    merged = dict(body)
    for key, value in fields.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            value = {**merged[key], **value}
        merged[key] = value
    return merged


@pytest.mark.parametrize(
    ("route", "calls", "fields", "reason"),
    [
        (CHAT, WEATHER, {"tool_choice": "none"}, 'tool_choice="none" allows no tool call'),
        (CHAT, WEATHER, {"tool_choice": {"type": "function", "function": {"name": "clock"}}}, "allows 'clock'"),
        (CHAT, WEATHER, {"function_call": {"name": "clock"}}, 'function_call={"name":"clock"} allows \'clock\''),
        (
            CHAT,
            WEATHER,
            {"tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [OPENAI_TOOLS[1]]}}},
            "allows 'clock'",
        ),
        (CHAT, TWO_CALLS, {"parallel_tool_calls": False}, "one tool call a turn (parallel_tool_calls=false)"),
        (MESSAGES, WEATHER, {"tool_choice": {"type": "none"}}, 'tool_choice={"type":"none"} allows no tool call'),
        (MESSAGES, WEATHER, {"tool_choice": {"type": "tool", "name": "clock"}}, "allows 'clock'"),
        (
            MESSAGES,
            TWO_CALLS,
            {"tool_choice": {"type": "auto", "disable_parallel_tool_use": True}},
            "one tool call a turn (tool_choice.disable_parallel_tool_use=true), and this turn makes 2",
        ),
        (RESPONSES, WEATHER, {"tool_choice": "none"}, "allows no tool call"),
        (RESPONSES, WEATHER, {"tool_choice": {"type": "function", "name": "clock"}}, "allows 'clock'"),
        (GEMINI, WEATHER, {"toolConfig": {"functionCallingConfig": {"mode": "NONE"}}}, "allows no tool call"),
        (
            GEMINI,
            WEATHER,
            {"tool_config": {"function_calling_config": {"mode": "ANY", "allowed_function_names": ["clock"]}}},
            "allows 'clock'",
        ),
        (BEDROCK, WEATHER, {"toolConfig": {"toolChoice": {"tool": {"name": "clock"}}}}, "allows 'clock'"),
    ],
    ids=[
        "chat-none",
        "chat-forced",
        "chat-legacy-function_call",
        "chat-allowed_tools",
        "chat-parallel",
        "anthropic-none",
        "anthropic-forced",
        "anthropic-parallel",
        "responses-none",
        "responses-forced",
        "gemini-none",
        "gemini-allowed",
        "bedrock-forced",
    ],
)
def test_a_tool_call_the_tool_choice_forbids_fails(
    route: tuple[str, dict[str, Any]], calls: list[dict[str, Any]], fields: dict[str, Any], reason: str
) -> None:
    mock = _ask(route, calls, **fields)
    assert [call.name for call in mock.journal[0].undeclared_tool_calls] == ["weather"]
    with pytest.raises(StrictnessError, match="were not allowed by the request's declared tools") as info:
        mock.verify()
    assert reason in str(info.value)


@pytest.mark.parametrize(
    ("route", "fields"),
    [
        (CHAT, {"tool_choice": "auto"}),
        (CHAT, {"tool_choice": "required"}),
        (CHAT, {"tool_choice": {"type": "function", "function": {"name": "weather"}}}),
        (CHAT, {"parallel_tool_calls": True}),
        (MESSAGES, {"tool_choice": {"type": "any"}}),
        (MESSAGES, {"tool_choice": {"type": "tool", "name": "weather", "disable_parallel_tool_use": True}}),
        (RESPONSES, {"tool_choice": {"type": "file_search"}}),
        (GEMINI, {"toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["weather"]}}}),
        (BEDROCK, {"toolConfig": {"toolChoice": {"any": {}}}}),
    ],
)
def test_a_tool_call_the_tool_choice_allows_passes(route: tuple[str, dict[str, Any]], fields: dict[str, Any]) -> None:
    mock = _ask(route, WEATHER, **fields)
    assert mock.journal[0].undeclared_tool_calls == []
    mock.verify()


@pytest.mark.parametrize(
    ("route", "fields"),
    [
        (CHAT, {"tool_choice": "required"}),
        (CHAT, {"tool_choice": {"type": "function", "function": {"name": "weather"}}}),
        (MESSAGES, {"tool_choice": {"type": "any"}}),
        (RESPONSES, {"tool_choice": "required"}),
        (GEMINI, {"toolConfig": {"functionCallingConfig": {"mode": "ANY"}}}),
        (BEDROCK, {"toolConfig": {"toolChoice": {"any": {}}}}),
    ],
    ids=["chat-required", "chat-forced", "anthropic-any", "responses-required", "gemini-any", "bedrock-any"],
)
def test_a_text_reply_where_the_tool_choice_requires_a_call_fails(
    route: tuple[str, dict[str, Any]], fields: dict[str, Any]
) -> None:
    path, body = route
    mock = MockLLM()
    mock.script([{"messages": [{"text_message": {"text": "No tool today."}}]}])
    with httpx.Client(transport=HTTPXTransport(mock), base_url="http://mock") as client:
        assert client.post(path, json=_merged(body, fields)).status_code == 200
    with pytest.raises(StrictnessError) as info:
        mock.verify()
    assert "requires a tool call, and the scripted reply makes none" in str(info.value)
    assert "tool call ''" not in str(info.value)


def test_a_scripted_error_where_the_tool_choice_requires_a_call_passes() -> None:
    path, body = CHAT
    mock = MockLLM()
    mock.script([{"error": {"status": 429}}])
    with httpx.Client(transport=HTTPXTransport(mock), base_url="http://mock") as client:
        assert client.post(path, json=_merged(body, {"tool_choice": "required"})).status_code == 429
    mock.verify()
