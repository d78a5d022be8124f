"""Ollama through the official ``ollama`` client, unmodified, through both doors.

Sync and async, ``chat`` and its stream, a tool loop whose turns are counted from the
history's assistant messages (tool results are no user message), ``think``,
``generate``, usage in the timing fields, faults (``error``, ``after_chunks``), the 400
for a malformed request, and ``list``, ``show`` and ``embed``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mockllm._transports import HTTPXTransport
from tests.mockllm.sdk_support import SYNC_ASYNC, script

ollama = pytest.importorskip("ollama", reason="the ollama client is not installed (the test extra)")

MODEL = "llama-mock"

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}

LOOP = script(
    {
        "id": "look-up",
        "messages": [
            {"text_message": {"text": "Let me check."}},
            {"tool_call": [{"name": "get_weather", "args": {"city": "Paris"}}]},
        ],
    },
    {"id": "answer", "messages": [{"text_message": {"text": "It is sunny in Paris."}}]},
)

STREAM = pytest.mark.parametrize("stream", [False, True], ids=["json", "ndjson"])


def _options(door: Any) -> dict[str, Any]:
    return {"transport": HTTPXTransport(door.mock)} if door.mock is not None else {}


def _client(door: Any, *, is_async: bool = False) -> Any:
    cls = ollama.AsyncClient if is_async else ollama.Client
    return cls(host=door.base_url, **_options(door))


async def _chat(client: Any, is_async: bool, stream: bool, **kwargs: Any) -> list[Any]:
    """The responses of one call: one, or the stream's parts."""
    call = client.chat(model=MODEL, stream=stream, **kwargs)
    if is_async:
        call = await call
        return [part async for part in call] if stream else [call]
    return list(call) if stream else [call]


def _text(parts: list[Any]) -> str:
    return "".join(p.message.content or "" for p in parts)


def _calls(parts: list[Any]) -> list[Any]:
    return [call for p in parts for call in (p.message.tool_calls or [])]


@SYNC_ASYNC
@STREAM
def test_tool_loop_counts_turns_from_assistant_messages(door: Any, is_async: bool, stream: bool) -> None:
    async def main() -> None:
        door.reset_journal()
        client = _client(door, is_async=is_async)
        try:
            await loop(client)
        finally:
            await client.close() if is_async else client.close()

    async def loop(client: Any) -> None:
        messages: list[Any] = [{"role": "user", "content": LOOP}]
        first = await _chat(client, is_async, stream, messages=messages, tools=[WEATHER])
        assert _text(first) == "Let me check."
        calls = _calls(first)
        assert [(c.function.name, dict(c.function.arguments)) for c in calls] == [("get_weather", {"city": "Paris"})]
        messages.append({"role": "assistant", "content": _text(first), "tool_calls": calls})
        messages.append({"role": "tool", "content": json.dumps({"sky": "sunny"}), "tool_name": "get_weather"})
        second = await _chat(client, is_async, stream, messages=messages, tools=[WEATHER])
        assert _text(second) == "It is sunny in Paris."
        final = second[-1]
        assert final.done is True and final.done_reason == "stop"
        assert final.prompt_eval_count > 0 and final.eval_count > 0
        assert final.total_duration == final.load_duration + final.prompt_eval_duration + final.eval_duration
        journal = door.journal()
        assert [(e["protocol"], e["turn_index"], e["instruction_id"], e["stream"]) for e in journal] == [
            ("ollama", 0, "look-up", stream),
            ("ollama", 1, "answer", stream),
        ]

    asyncio.run(main())


@STREAM
def test_thinking_only_when_think_asks_for_it(door: Any, stream: bool) -> None:
    chain = script({"id": "think", "reasoning": {"length": 6}, "messages": [{"text_message": {"length": 4}}]})
    with _client(door) as client:
        check_thinking(client, chain, stream)


def check_thinking(client: Any, chain: str, stream: bool) -> None:
    messages = [{"role": "user", "content": chain}]
    thought = asyncio.run(_chat(client, False, stream, messages=messages, think=True))
    thinking = "".join(p.message.thinking or "" for p in thought)
    assert len(thinking.split()) == 6
    plain = asyncio.run(_chat(client, False, stream, messages=messages))
    assert not any(p.message.thinking for p in plain)
    assert _text(plain) == _text(thought) and len(_text(plain).split()) == 4


@STREAM
def test_generate_answers_the_prompt(door: Any, stream: bool) -> None:
    chain = script({"id": "words", "messages": [{"text_message": {"length": 7}}]})
    with _client(door) as client:
        reply = client.generate(model=MODEL, prompt=chain, system="Be brief.", stream=stream)
        parts = list(reply) if stream else [reply]
    assert len("".join(p.response for p in parts).split()) == 7
    assert parts[-1].done and parts[-1].eval_count > 0


def test_a_stream_is_the_default_and_is_ndjson(door: Any) -> None:
    chain = script({"id": "words", "messages": [{"text_message": {"length": 3}}]})
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": chain}]})
    with httpx.Client(**_options(door)) as http:
        reply = http.post(f"{door.base_url}/api/chat", content=body)
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in reply.text.splitlines()]
    assert [line["done"] for line in lines] == [False, False, False, True]
    timing = ("total_duration", "load_duration", "prompt_eval_count", "prompt_eval_duration", "eval_count")
    assert all(isinstance(lines[-1][name], int) for name in timing) and lines[-1]["done_reason"] == "stop"


def test_scripted_error_is_the_clients_response_error(door: Any) -> None:
    chain = script({"id": "boom", "error": {"status": 429, "message": "slow down"}})
    with _client(door) as client, pytest.raises(ollama.ResponseError) as raised:
        client.chat(model=MODEL, messages=[{"role": "user", "content": chain}])
    assert raised.value.status_code == 429 and raised.value.error == "slow down"


def test_error_after_chunks_ends_the_stream_with_an_error_line(door: Any) -> None:
    chain = script(
        {"id": "cut", "messages": [{"text_message": {"length": 10}}], "error": {"status": 503, "after_chunks": 3}}
    )
    seen = []
    with _client(door) as client, pytest.raises(ollama.ResponseError) as raised:
        for part in client.chat(model=MODEL, messages=[{"role": "user", "content": chain}], stream=True):
            seen.append(part.message.content)
    assert len(seen) == 3 and "try again" in raised.value.error


def test_a_malformed_request_is_a_400_in_ollamas_words(door: Any) -> None:
    with _client(door) as client, pytest.raises(ollama.ResponseError) as raised:
        client.chat(model=MODEL, messages=[{"role": "robot", "content": "hi"}])
    assert raised.value.status_code == 400 and "invalid role" in raised.value.error


def test_list_show_and_embed(door: Any) -> None:
    with _client(door) as client:
        check_catalogue(client)


def check_catalogue(client: Any) -> None:
    names = [m.model for m in client.list().models]
    assert names and all(name.endswith(":latest") for name in names)
    shown = client.show("qwen-mock:7b")
    assert shown.details.family == "qwen" and "tools" in shown.capabilities
    first = client.embed(model="nomic-embed-mock", input=["a cat", "a dog"])
    again = client.embed(model="nomic-embed-mock", input="a cat")
    assert len(first.embeddings) == 2 and len(first.embeddings[0]) == 768
    assert list(first.embeddings[0]) == list(again.embeddings[0]) != list(first.embeddings[1])
    with pytest.raises(ollama.ResponseError) as raised:
        client.embed(model="nomic-embed-mock", input="a cat", dimensions=100_000)
    assert raised.value.status_code == 400 and "invalid dimensions" in raised.value.error
