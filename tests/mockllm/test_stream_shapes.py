"""Stream shapes: every legal shape gives the same message through the official SDKs.

For each protocol and any shape ``mockllm.strategies.stream_shapes`` draws, the openai
(Chat Completions, Responses) and anthropic SDKs' stream helpers reassemble exactly the
message they reassemble from the default shape: in process, and in a smaller run over
the loopback server (gzip included).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

import mockllm.strategies
from harness.plugin.fixtures import MockLLMFixture, MockLLMServer
from mockllm import MockLLM, StreamShape

CHAIN = [
    {
        "reasoning": {"text": "Thinking über ☃ things, twice."},
        "messages": [
            {"text_message": {"text": "Héllo wörld ☃ 🎉, the answer is 42."}},
            {
                "tool_call": [
                    {"name": "fetch", "args": {"url": "https://ex.am/ple?q=ü", "n": 3, "deep": {"a": [1, 2]}}},
                    {"name": "noop", "args": {}},
                ]
            },
        ],
    }
]
PROMPT = [{"role": "user", "content": "Go"}]
# The requests declare the tools the chain calls, as a real app's do (the verdict refuses
# a tool call the request did not declare).
OBJECT = {"type": "object"}
CHAT_TOOLS = [{"type": "function", "function": {"name": n, "parameters": OBJECT}} for n in ("fetch", "noop")]
RESPONSES_TOOLS = [{"type": "function", "name": n, "parameters": OBJECT} for n in ("fetch", "noop")]
ANTHROPIC_TOOLS = [{"name": n, "input_schema": OBJECT} for n in ("fetch", "noop")]
# The protocols whose SDKs' stream helpers this file drives.
SDK_PROTOCOLS = ("openai-chat", "anthropic-messages", "openai-responses")


def reassembled(clients: MockLLMFixture | MockLLMServer, protocol: str) -> Any:
    """The message the SDK's stream helper builds for ``protocol``."""
    if protocol == "openai-chat":
        with clients.openai().chat.completions.stream(model="m", messages=PROMPT, tools=CHAT_TOOLS) as stream:
            choice = stream.get_final_completion().choices[0]
        return choice.model_dump()
    if protocol == "openai-responses":
        with clients.openai().responses.stream(model="m", input="Go", tools=RESPONSES_TOOLS) as stream:
            response = stream.get_final_response()
        return [item.model_dump() for item in response.output], response.status
    with clients.anthropic().messages.stream(
        model="m", max_tokens=100, messages=PROMPT, tools=ANTHROPIC_TOOLS
    ) as stream:
        message = stream.get_final_message()
    return message.id, message.model_dump()["content"], message.stop_reason, message.usage.output_tokens


def in_process(protocol: str, shape: StreamShape | None) -> Any:
    mock = MockLLM()
    mock.script(CHAIN, stream=shape)
    fixture = MockLLMFixture(mock)
    try:
        return reassembled(fixture, protocol)
    finally:
        fixture.close()


DEFAULT = {protocol: in_process(protocol, None) for protocol in SDK_PROTOCOLS}


@pytest.mark.parametrize("protocol", SDK_PROTOCOLS)
def test_the_sdks_reassemble_the_default_message_from_every_legal_shape_in_process(protocol: str) -> None:
    @settings(max_examples=40, deadline=None, database=None)
    @given(shape=mockllm.strategies.stream_shapes(protocol=protocol))
    def same_message(shape: StreamShape) -> None:
        assert in_process(protocol, shape) == DEFAULT[protocol]

    same_message()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=mockllm.strategies.stream_shapes(server=True))
def test_the_sdks_reassemble_the_default_message_from_every_legal_shape_over_the_server(
    mockllm_server: MockLLMServer, shape: StreamShape
) -> None:
    mockllm_server.script(CHAIN, stream=shape)  # replaces the previous example's registration
    for protocol in SDK_PROTOCOLS:
        assert reassembled(mockllm_server, protocol) == DEFAULT[protocol]


@pytest.mark.parametrize(
    "shape",
    [
        {"text": {"size": 1}, "arguments": {"size": 1}},
        {"text": {"at": [1, 4]}, "arguments": {"at": [1]}},
        {"text": {"seed": 7, "max_size": 3}, "id_with_arguments": True, "empty_first_delta": True},
        {"usage_chunk": True, "ping_every": 1, "keep_alive_every": 1},
        {"writes": {"size": 1}, "split_utf8": True},
        {"writes": {"at": [3, 50, 51]}},
    ],
)
def test_each_knob_keeps_the_message(shape: dict[str, Any]) -> None:
    for protocol in SDK_PROTOCOLS:
        assert in_process(protocol, StreamShape.model_validate(shape)) == DEFAULT[protocol]
