"""Stream shapes: every legal shape gives the same message through the official SDKs.

For each protocol and any shape ``mockllm.strategies.stream_shapes`` draws, the openai
(Chat Completions, Responses) and anthropic SDKs' stream helpers reassemble exactly the
message they reassemble from the default shape: in process, and in a smaller run over
the loopback server (gzip included). The google-genai (Gemini) and ollama clients, in
process, join their streamed text (and collect the whole calls) to the default's too.
"""

from __future__ import annotations

import functools
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings

import mockllm.strategies
from harness.plugin.fixtures import MockLLMFixture, MockLLMServer
from mockllm import MockLLM, StreamShape
from mockllm._transports import HTTPXTransport

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


@functools.cache
def default_message(protocol: str) -> Any:
    """What the SDK's stream helper reassembles from the default shape: made once, when a
    test first needs it (not at collection, which every xdist worker does)."""
    return in_process(protocol, None)


@pytest.mark.parametrize("protocol", SDK_PROTOCOLS)
def test_the_sdks_reassemble_the_default_message_from_every_legal_shape_in_process(protocol: str) -> None:
    @settings(max_examples=40, deadline=None, database=None)
    @given(shape=mockllm.strategies.stream_shapes(protocol=protocol))
    def same_message(shape: StreamShape) -> None:
        assert in_process(protocol, shape) == default_message(protocol)

    same_message()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=mockllm.strategies.stream_shapes(server=True))
def test_the_sdks_reassemble_the_default_message_from_every_legal_shape_over_the_server(
    mockllm_server: MockLLMServer, shape: StreamShape
) -> None:
    mockllm_server.script(CHAIN, stream=shape)  # replaces the previous example's registration
    for protocol in SDK_PROTOCOLS:
        assert reassembled(mockllm_server, protocol) == default_message(protocol)


EACH_KNOB: list[dict[str, Any]] = [
    {"text": {"size": 1}, "arguments": {"size": 1}},
    {"text": {"at": [1, 4]}, "arguments": {"at": [1]}},
    {"text": {"seed": 7, "max_size": 3}, "id_with_arguments": True, "empty_first_delta": True},
    {"usage_chunk": True, "ping_every": 1, "keep_alive_every": 1, "finish_with_last_delta": True},
    {"finish_with_last_delta": True, "empty_first_delta": True, "id_with_arguments": True},
    {"writes": {"size": 1}, "split_utf8": True},
    {"writes": {"at": [3, 50, 51]}},
]


@pytest.mark.parametrize("shape", EACH_KNOB)
def test_each_knob_keeps_the_message(shape: dict[str, Any]) -> None:
    for protocol in SDK_PROTOCOLS:
        assert in_process(protocol, StreamShape.model_validate(shape)) == default_message(protocol)


# -- Gemini (google-genai) and Ollama: their clients join the streamed parts themselves --

GEMINI_TOOLS = [{"function_declarations": [{"name": n, "parameters": {"type": "OBJECT"}} for n in ("fetch", "noop")]}]
OLLAMA_TOOLS = [{"type": "function", "function": {"name": n, "parameters": OBJECT}} for n in ("fetch", "noop")]
BASE_URL = "http://mock.test"


def gemini_joined(mock: MockLLM) -> Any:
    """The text google-genai streams (thoughts apart), and the calls, as the client
    reads them from ``generate_content_stream``."""
    genai = pytest.importorskip("google.genai", reason="google-genai is not installed (the test extra)")
    types = pytest.importorskip("google.genai.types")
    http = httpx.Client(transport=HTTPXTransport(mock), base_url=BASE_URL)
    client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=BASE_URL, httpx_client=http))
    config = types.GenerateContentConfig(
        tools=GEMINI_TOOLS, thinking_config=types.ThinkingConfig(include_thoughts=True)
    )
    text, thoughts, calls = "", "", []
    try:
        for chunk in client.models.generate_content_stream(model="m", contents="Go", config=config):
            for part in chunk.candidates[0].content.parts or [] if chunk.candidates[0].content else []:
                if part.function_call is not None:
                    calls.append((part.function_call.name, part.function_call.args))
                elif part.thought:
                    thoughts += part.text or ""
                else:
                    text += part.text or ""
    finally:
        http.close()
    return text, thoughts, calls


def ollama_joined(mock: MockLLM) -> Any:
    """``message.content`` (and ``thinking``) joined over ``chat(stream=True)``, and the calls."""
    ollama = pytest.importorskip("ollama", reason="the ollama client is not installed (the test extra)")
    client = ollama.Client(host=BASE_URL, transport=HTTPXTransport(mock))
    text, thinking, calls = "", "", []
    for part in client.chat(model="m", messages=PROMPT, tools=OLLAMA_TOOLS, think=True, stream=True):
        text += part.message.content or ""
        thinking += part.message.thinking or ""
        calls += [(c.function.name, dict(c.function.arguments)) for c in part.message.tool_calls or []]
    return text, thinking, calls


JOINED = {"gemini": gemini_joined, "ollama": ollama_joined}


def joined_in_process(protocol: str, shape: StreamShape | None) -> Any:
    mock = MockLLM()
    mock.script(CHAIN, stream=shape)
    return JOINED[protocol](mock)


@pytest.mark.parametrize("protocol", JOINED)
def test_gemini_and_ollama_clients_join_the_default_text_from_every_legal_shape(protocol: str) -> None:
    default = joined_in_process(protocol, None)
    assert default[0] == "Héllo wörld ☃ 🎉, the answer is 42."
    assert default[1] == "Thinking über ☃ things, twice."
    assert [name for name, _ in default[2]] == ["fetch", "noop"]

    @settings(max_examples=15, deadline=None, database=None)
    @given(shape=mockllm.strategies.stream_shapes(protocol=protocol))
    def same_text(shape: StreamShape) -> None:
        assert joined_in_process(protocol, shape) == default

    same_text()


@pytest.mark.parametrize("protocol", JOINED)
def test_each_knob_keeps_the_gemini_and_ollama_text(protocol: str) -> None:
    """The fixed shapes above, every knob on at least once (those a protocol does not
    express, such as keep-alive comments here, are left out of its stream)."""
    default = joined_in_process(protocol, None)
    for shape in EACH_KNOB:
        assert joined_in_process(protocol, StreamShape.model_validate(shape)) == default, shape


@pytest.mark.parametrize("protocol", JOINED)
def test_gemini_and_ollama_cut_their_text_as_the_shape_says(protocol: str) -> None:
    """One character a delta: as many text chunks as characters, the same text joined."""
    seen: list[str] = []
    mock = MockLLM()
    mock.script([{"messages": [{"text_message": {"text": "Héllo ☃!"}}]}], stream={"text": {"size": 1}})
    if protocol == "ollama":
        ollama = pytest.importorskip("ollama", reason="the ollama client is not installed (the test extra)")
        client = ollama.Client(host=BASE_URL, transport=HTTPXTransport(mock))
        seen = [p.message.content for p in client.chat(model="m", messages=PROMPT, stream=True) if not p.done]
    else:
        genai = pytest.importorskip("google.genai", reason="google-genai is not installed (the test extra)")
        types = pytest.importorskip("google.genai.types")
        with httpx.Client(transport=HTTPXTransport(mock), base_url=BASE_URL) as http:
            client = genai.Client(api_key="k", http_options=types.HttpOptions(base_url=BASE_URL, httpx_client=http))
            chunks = client.models.generate_content_stream(model="m", contents="Go")
            seen = [c.text for c in chunks if c.candidates[0].content and c.candidates[0].content.parts]
    assert seen == list("Héllo ☃!")


def test_keep_alive_is_drawn_and_sent_only_where_the_client_reads_comments() -> None:
    """NDJSON (Ollama) has no comments, and google-genai's SSE reader takes every line
    for JSON: the strategy never draws ``keep_alive_every`` for them, and a scripted one
    is left out of the stream rather than breaking it."""
    knobs = mockllm.strategies._knobs
    assert "keep_alive_every" in knobs("openai-chat") and "keep_alive_every" in knobs("azure-openai")
    assert "keep_alive_every" not in knobs("ollama") and "keep_alive_every" not in knobs("gemini")
    assert "arguments" not in knobs("ollama") and "arguments" not in knobs("gemini")
    mock = MockLLM()
    mock.script([{"messages": [{"text_message": {"text": "a b"}}]}], stream={"keep_alive_every": 1})
    with httpx.Client(transport=HTTPXTransport(mock), base_url=BASE_URL) as http:
        body = http.post("/api/chat", json={"model": "m", "messages": PROMPT}).content
    assert b"keep-alive" not in body
    gemini_url = "/v1beta/models/m:streamGenerateContent?alt=sse"
    with httpx.Client(transport=HTTPXTransport(mock), base_url=BASE_URL) as http:
        gemini_body = http.post(gemini_url, json={"contents": [{"parts": [{"text": "Go"}]}]}).content
    assert b'"text":"a "' in gemini_body and b"keep-alive" not in gemini_body
    assert [line["done"] for line in map(__import__("json").loads, body.splitlines())] == [False, False, True]
