"""The stream shape ``finish_with_last_delta``: the finish rides in the chunk of the last
delta, as vLLM, Groq and other Chat Completions servers, Gemini and Ollama send it.

Through both doors, each protocol's official client sees the finish reason in the chunk
that carries the last text (or call) with the knob, in a chunk of its own without it, and
joins the same text either way; the SDKs' stream helpers reassemble the same message. A
client that stops at the finish before reading that chunk's text passes on the default
shape and is caught by ``mockllm.strategies.stream_shapes`` within its default budget.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest
from hypothesis import Phase, given, settings

import mockllm.strategies
from harness.plugin.fixtures import MockLLMFixture, MockLLMServer
from harness.systems.llm.sdks import http_library
from mockllm import MockLLM, StreamShape
from mockllm._transports import HTTPXTransport
from tests.mockllm.doors_support import door_clients  # noqa: F401  (the fixture "clients")

Clients = MockLLMFixture | MockLLMServer
FINISH = StreamShape(finish_with_last_delta=True)
TEXT = "Héllo wörld ☃, the answer is 42."
LAST = "42."
TEXT_CHAIN = [{"messages": [{"text_message": {"text": TEXT}}]}]
CALL_CHAIN = [
    {
        "messages": [
            {"text_message": {"text": "Looking."}},
            {"tool_call": [{"name": "fetch", "args": {"url": "https://ex.am/ple?q=ü", "n": 3}}]},
        ]
    }
]
PROMPT = [{"role": "user", "content": "Go"}]
CHAT_TOOLS = [{"type": "function", "function": {"name": "fetch", "parameters": {"type": "object"}}}]


def _chat_chunks(client: Any, model: str = "m") -> list[tuple[str | None, str | None]]:
    """(content, finish_reason) of each chunk with a choice, through ``create(stream=True)``."""
    stream = client.chat.completions.create(model=model, messages=PROMPT, stream=True)
    return [(c.choices[0].delta.content, c.choices[0].finish_reason) for c in stream if c.choices]


def chat(clients: Clients) -> list[tuple[str | None, str | None]]:
    return _chat_chunks(clients.openai())


def azure(clients: Clients) -> list[tuple[str | None, str | None]]:
    client = openai.AzureOpenAI(
        azure_endpoint=clients.base_url,
        api_key="k",
        api_version="2024-10-21",
        max_retries=0,
        # openai 3.x sends through httpx2, openai 2.x (the lean CI run) through httpx.
        http_client=clients.httpx2_client() if http_library(openai).__name__ == "httpx2" else clients.httpx_client(),
    )
    return _chat_chunks(client, model="my-deployment")


def gemini(clients: Clients) -> list[tuple[str | None, str | None]]:
    genai = pytest.importorskip("google.genai", reason="google-genai is not installed (the test extra)")
    types = pytest.importorskip("google.genai.types")
    options = types.HttpOptions(base_url=clients.base_url, httpx_client=clients.httpx_client())
    client = genai.Client(api_key="k", http_options=options)
    found = []
    for chunk in client.models.generate_content_stream(model="m", contents="Go"):
        candidate = chunk.candidates[0]
        parts = candidate.content.parts if candidate.content and candidate.content.parts else []
        reason = candidate.finish_reason.value if candidate.finish_reason else None
        found.append(("".join(p.text or "" for p in parts) or None, reason))
    return found


def _ollama(clients: Clients) -> Any:
    """An ``ollama.Client`` on the mock, to use in a ``with`` (it owns its HTTP client)."""
    ollama = pytest.importorskip("ollama", reason="the ollama client is not installed (the test extra)")
    mock = getattr(clients, "mock", None)
    return ollama.Client(host=clients.base_url, transport=HTTPXTransport(mock) if mock else None)


def ollama_chat(clients: Clients) -> list[tuple[str | None, str | None]]:
    with _ollama(clients) as client:
        parts = list(client.chat(model="m", messages=PROMPT, stream=True))
    return [(p.message.content or None, p.done_reason) for p in parts]


CLIENTS: dict[str, Callable[[Clients], list[tuple[str | None, str | None]]]] = {
    "openai-chat": chat,
    "azure-openai": azure,
    "gemini": gemini,
    "ollama": ollama_chat,
}


def default_and_shaped(clients: Clients, chain: Any, read: Callable[[Clients], Any]) -> tuple[Any, Any]:
    """What ``read`` gets from ``chain`` streamed in the default shape, then with the knob."""
    clients.script(chain)
    default = read(clients)
    clients.script(chain, stream=FINISH)  # the same chain again: replaces the default's
    return default, read(clients)


@pytest.mark.parametrize("protocol", CLIENTS)
def test_the_finish_comes_with_the_last_text_only_with_the_knob(clients: Clients, protocol: str) -> None:
    default, shaped = default_and_shaped(clients, TEXT_CHAIN, CLIENTS[protocol])

    for chunks in (default, shaped):
        assert "".join(text or "" for text, _ in chunks) == TEXT
        assert [reason for _, reason in chunks if reason] == ["stop" if protocol != "gemini" else "STOP"]
    assert [text for text, reason in default if reason] == [None]  # the finish alone, by default
    assert [text for text, reason in shaped if reason] == [LAST]  # with the knob: the last word's chunk
    assert len(shaped) == len(default) - 1


# -- the SDKs' stream helpers, and the calls: the same message with the knob ----------


def chat_helper(clients: Clients) -> Any:
    with clients.openai().chat.completions.stream(model="m", messages=PROMPT, tools=CHAT_TOOLS) as stream:
        return stream.get_final_completion().choices[0].model_dump()


def chat_accumulated(clients: Clients) -> Any:
    """What a careful ``create(stream=True)`` loop gathers: text, calls, the finish."""
    text, calls, finish = "", {}, None
    for chunk in clients.openai().chat.completions.create(model="m", messages=PROMPT, tools=CHAT_TOOLS, stream=True):
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        text += choice.delta.content or ""
        for call in choice.delta.tool_calls or []:
            entry = calls.setdefault(call.index, {"id": call.id, "name": call.function.name, "arguments": ""})
            entry["arguments"] += call.function.arguments or ""
        finish = choice.finish_reason or finish
    return text, [{**c, "arguments": json.loads(c["arguments"])} for _, c in sorted(calls.items())], finish


def gemini_parts(clients: Clients) -> Any:
    genai = pytest.importorskip("google.genai", reason="google-genai is not installed (the test extra)")
    types = pytest.importorskip("google.genai.types")
    options = types.HttpOptions(base_url=clients.base_url, httpx_client=clients.httpx_client())
    config = types.GenerateContentConfig(
        tools=[{"function_declarations": [{"name": "fetch", "parameters": {"type": "OBJECT"}}]}]
    )
    client = genai.Client(api_key="k", http_options=options)
    parts, usage, finish = [], None, None
    for chunk in client.models.generate_content_stream(model="m", contents="Go", config=config):
        candidate = chunk.candidates[0]
        parts += [p.model_dump(exclude_none=True) for p in (candidate.content.parts or [] if candidate.content else [])]
        finish = candidate.finish_reason or finish
        usage = chunk.usage_metadata or usage
    return parts, finish, usage.model_dump(exclude_none=True) if usage else None


def ollama_message(clients: Clients) -> Any:
    with _ollama(clients) as client:
        parts = list(client.chat(model="m", messages=PROMPT, tools=CHAT_TOOLS, stream=True))
    text, calls, done = "", [], None
    for part in parts:
        text += part.message.content or ""
        calls += [(c.function.name, dict(c.function.arguments)) for c in part.message.tool_calls or []]
        done = (part.done_reason, part.eval_count) if part.done else done
    return text, calls, done


REASSEMBLED: dict[str, Callable[[Clients], Any]] = {
    "chat-stream-helper": chat_helper,
    "chat-create-stream": chat_accumulated,
    "gemini": gemini_parts,
    "ollama": ollama_message,
}


@pytest.mark.parametrize("reader", REASSEMBLED)
def test_the_clients_reassemble_the_same_message_and_calls_with_the_knob(clients: Clients, reader: str) -> None:
    default, shaped = default_and_shaped(clients, CALL_CHAIN, REASSEMBLED[reader])
    assert shaped == default
    assert "ex.am" in repr(default)  # the call is there, its arguments whole


def test_a_chat_call_s_last_arguments_piece_carries_finish_reason_tool_calls() -> None:
    """The call's last piece and ``finish_reason: "tool_calls"`` in one chunk, as vLLM's
    tool parsers send them; the chunk of its own is gone."""
    fixture = MockLLMFixture(MockLLM())
    try:
        fixture.script(
            [{"messages": [{"tool_call": [{"name": "fetch", "args": {"url": "https://ex.am/ple"}}]}]}], stream=FINISH
        )
        chunks = list(
            fixture.openai().chat.completions.create(model="m", messages=PROMPT, tools=CHAT_TOOLS, stream=True)
        )
    finally:
        fixture.close()
    last = chunks[-1].choices[0]
    assert last.finish_reason == "tool_calls"
    assert last.delta.tool_calls and last.delta.tool_calls[0].function.arguments == 'e"}'


# -- the client bug the knob reproduces, caught by the strategy -------------------------


def gemini_text_naive(mock: MockLLM) -> str:
    """Stops at the finish before reading the chunk's parts (the bug)."""
    genai = pytest.importorskip("google.genai", reason="google-genai is not installed (the test extra)")
    types = pytest.importorskip("google.genai.types")
    text = ""
    with httpx.Client(transport=HTTPXTransport(mock), base_url="http://mock.test") as http:
        client = genai.Client(
            api_key="k", http_options=types.HttpOptions(base_url="http://mock.test", httpx_client=http)
        )
        for chunk in client.models.generate_content_stream(model="m", contents="Go"):
            candidate = chunk.candidates[0]
            if candidate.finish_reason:
                return text
            text += "".join(p.text or "" for p in candidate.content.parts or [])
    return text


def test_a_gemini_client_that_stops_at_the_finish_passes_by_default_and_the_strategy_catches_it() -> None:
    mock = MockLLM()
    mock.script(TEXT_CHAIN)
    assert gemini_text_naive(mock) == TEXT

    # The default budget, derandomised (the same examples every run), no explain phase.
    no_explain = [phase for phase in Phase if phase is not Phase.explain]

    @settings(deadline=None, database=None, derandomize=True, phases=no_explain)
    @given(shape=mockllm.strategies.stream_shapes(protocol="gemini"))
    def every_shape(shape: StreamShape) -> None:
        shaped = MockLLM()
        shaped.script(TEXT_CHAIN, stream=shape)
        assert gemini_text_naive(shaped) == TEXT

    with pytest.raises(AssertionError) as failure:
        every_shape()
    notes = "\n".join(getattr(failure.value, "__notes__", []))
    assert "StreamShape(finish_with_last_delta=True)" in notes
    assert '"stream": {"finish_with_last_delta": true}' in notes


def test_the_knob_is_drawn_only_for_the_protocols_whose_chunks_can_carry_both() -> None:
    knobs = mockllm.strategies._knobs
    for protocol in ("openai-chat", "azure-openai", "gemini", "ollama"):
        assert "finish_with_last_delta" in knobs(protocol), protocol
    for protocol in ("anthropic-messages", "openai-responses", "bedrock-converse"):
        assert "finish_with_last_delta" not in knobs(protocol), protocol
