"""Gemini through the official ``google-genai`` SDK, unmodified, through both doors.

Sync and async, ``generate_content`` and its stream (``alt=sse``), a tool loop whose
turns are counted from ``contents`` (function responses are no new user message),
thought parts when ``include_thoughts`` asks for them, usage, faults (``error``,
``after_chunks``), ``count_tokens`` and ``embed_content``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mockllm._transports import HTTPXTransport
from tests.mockllm.sdk_support import SYNC_ASYNC, script

genai = pytest.importorskip("google.genai", reason="google-genai is not installed (the test extra)")
types = pytest.importorskip("google.genai.types")
errors = pytest.importorskip("google.genai.errors")

MODEL = "gemini-mock-flash"

WEATHER = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="get_weather",
            description="The weather in a city.",
            parameters=types.Schema(type="OBJECT", properties={"city": types.Schema(type="STRING")}),
        )
    ]
)

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


def _client(door: Any, *, vertex: bool = False) -> Any:
    options: dict[str, Any] = {"base_url": door.base_url}
    if door.mock is not None:
        transport = HTTPXTransport(door.mock)
        options["httpx_client"] = httpx.Client(transport=transport, base_url=door.base_url)
        options["httpx_async_client"] = httpx.AsyncClient(transport=transport, base_url=door.base_url)
    http_options = types.HttpOptions(**options)
    if vertex:
        from google.oauth2.credentials import Credentials  # a fixed token: never refreshed

        return genai.Client(
            vertexai=True,
            project="p",
            location="us-central1",
            credentials=Credentials(token="test-token"),
            http_options=http_options,
        )
    return genai.Client(api_key="test-key", http_options=http_options)


async def _generate(client: Any, is_async: bool, stream: bool, contents: Any, config: Any = None) -> list[Any]:
    """The responses of one call: one, or the stream's chunks."""
    models = client.aio.models if is_async else client.models
    if not stream:
        call = models.generate_content(model=MODEL, contents=contents, config=config)
        return [await call if is_async else call]
    if is_async:
        return [
            chunk async for chunk in await models.generate_content_stream(model=MODEL, contents=contents, config=config)
        ]
    return list(models.generate_content_stream(model=MODEL, contents=contents, config=config))


def _parts(responses: list[Any]) -> list[Any]:
    return [part for r in responses for part in (r.candidates[0].content.parts or [])]


STREAM = pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])


@SYNC_ASYNC
@STREAM
def test_tool_loop_counts_turns_from_contents(door: Any, is_async: bool, stream: bool) -> None:
    async def main() -> None:
        door.reset_journal()
        client = _client(door)
        config = types.GenerateContentConfig(tools=[WEATHER])
        contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=LOOP)])]
        first = await _generate(client, is_async, stream, contents, config)
        parts = _parts(first)
        assert "".join(p.text for p in parts if p.text) == "Let me check."
        calls = [p.function_call for p in parts if p.function_call]
        assert [(c.name, c.args) for c in calls] == [("get_weather", {"city": "Paris"})]
        contents.append(types.Content(role="model", parts=parts))
        contents.append(
            types.Content(
                role="user",
                parts=[types.Part.from_function_response(name="get_weather", response={"sky": "sunny"})],
            )
        )
        second = await _generate(client, is_async, stream, contents, config)
        assert "".join(p.text for p in _parts(second) if p.text) == "It is sunny in Paris."
        usage = second[-1].usage_metadata
        assert usage.prompt_token_count > 0 and usage.candidates_token_count > 0
        assert second[-1].candidates[0].finish_reason == types.FinishReason.STOP
        journal = door.journal()
        assert [(e["protocol"], e["turn_index"], e["instruction_id"]) for e in journal] == [
            ("gemini", 0, "look-up"),
            ("gemini", 1, "answer"),
        ]
        assert all(e["stream"] is stream for e in journal)

    asyncio.run(main())


@STREAM
def test_thought_parts_only_when_thoughts_are_asked_for(door: Any, stream: bool) -> None:
    chain = script({"id": "think", "reasoning": {"length": 6}, "messages": [{"text_message": {"length": 4}}]})
    client = _client(door)
    thinking = types.GenerateContentConfig(thinking_config=types.ThinkingConfig(include_thoughts=True))
    with_thoughts = _parts(asyncio.run(_generate(client, False, stream, chain, thinking)))
    assert [bool(p.thought) for p in with_thoughts] == ([True] * (6 if stream else 1)) + [False] * (4 if stream else 1)
    plain = _parts(asyncio.run(_generate(client, False, stream, chain)))
    assert not any(p.thought for p in plain)
    assert "".join(p.text for p in plain) == "".join(p.text for p in with_thoughts if not p.thought)


def test_same_request_same_bytes_through_both_families_of_path(door: Any) -> None:
    chain = script({"id": "words", "messages": [{"text_message": {"length": 12}}]})
    # Each client is kept in a name: a genai.Client closes its HTTP client when collected.
    google_client, vertex_client = _client(door), _client(door, vertex=True)
    google_ai = google_client.models.generate_content(model=MODEL, contents=chain)
    vertex = vertex_client.models.generate_content(model=MODEL, contents=chain)
    assert google_ai.text == vertex.text and len(google_ai.text.split()) == 12
    assert google_ai.response_id == vertex.response_id


def test_a_script_matching_on_model_answers_the_model_name_in_the_path(door: Any) -> None:
    door.reset_journal()
    said = [{"id": "flash", "messages": [{"text_message": {"text": "Flash answers."}}]}]
    pro = door.clients.script(
        [{"id": "pro", "messages": [{"text_message": {"text": "Pro answers."}}]}], match={"model": "gemini-mock-pro"}
    )
    flash = door.clients.script(said, match={"model": MODEL})
    try:
        google_client, vertex_client = _client(door), _client(door, vertex=True)
        question = "What is the weather?"
        assert google_client.models.generate_content(model=MODEL, contents=question).text == "Flash answers."
        # ``models/`` is the SDK's prefix of the same name: the path, and the model, are the same.
        stream = google_client.models.generate_content_stream(model=f"models/{MODEL}", contents=question)
        assert "".join(chunk.text or "" for chunk in stream) == "Flash answers."
        assert vertex_client.models.generate_content(model=MODEL, contents=question).text == "Flash answers."
        journal = door.journal()
        assert [(e["model"], e["script_id"]) for e in journal] == [(MODEL, flash)] * 3
        assert pro not in {e["script_id"] for e in journal}
    finally:
        door.reset_journal()


def test_scripted_error_is_the_sdks_api_error(door: Any) -> None:
    chain = script({"id": "boom", "error": {"status": 429, "message": "slow down"}})
    client = _client(door)
    with pytest.raises(errors.ClientError) as raised:
        client.models.generate_content(model=MODEL, contents=chain)
    assert raised.value.code == 429 and raised.value.status == "RESOURCE_EXHAUSTED"
    assert raised.value.message == "slow down"


def test_error_after_chunks_ends_the_stream_with_a_server_error(door: Any) -> None:
    chain = script(
        {"id": "cut", "messages": [{"text_message": {"length": 10}}], "error": {"status": 503, "after_chunks": 3}}
    )
    seen, client = [], _client(door)
    with pytest.raises(errors.ServerError) as raised:
        for chunk in client.models.generate_content_stream(model=MODEL, contents=chain):
            seen.append(chunk.text)
    assert len(seen) == 3 and raised.value.code == 503


def test_an_invalid_request_is_a_400_in_geminis_words(door: Any) -> None:
    contents = [
        types.Content(role="user", parts=[types.Part(text="hi")]),
        types.Content(
            role="user", parts=[types.Part.from_function_response(name="get_weather", response={"sky": "grey"})]
        ),
    ]
    client = _client(door)
    with pytest.raises(errors.ClientError) as raised:
        client.models.generate_content(model=MODEL, contents=contents)
    assert raised.value.code == 400 and raised.value.status == "INVALID_ARGUMENT"
    assert "function response turn comes immediately after a function call turn" in raised.value.message


def test_count_tokens_equals_the_prompt_tokens_reported(door: Any) -> None:
    client = _client(door)
    chain = script({"id": "count", "messages": [{"text_message": {"length": 3}}]})
    counted = client.models.count_tokens(model=MODEL, contents=chain)
    reply = client.models.generate_content(model=MODEL, contents=chain)
    assert counted.total_tokens == reply.usage_metadata.prompt_token_count > 0


def test_embed_content_is_deterministic(door: Any) -> None:
    client = _client(door)
    first = client.models.embed_content(model="text-embedding-mock", contents=["a cat", "a dog"])
    again = client.models.embed_content(model="text-embedding-mock", contents=["a cat"])
    assert len(first.embeddings) == 2 and len(first.embeddings[0].values) == 768
    assert first.embeddings[0].values == again.embeddings[0].values != first.embeddings[1].values


def test_the_api_key_may_come_in_the_query(door: Any) -> None:
    chain = script({"id": "keyed", "messages": [{"text_message": {"length": 2}}]})
    body = json.dumps({"contents": [{"role": "user", "parts": [{"text": chain}]}]})
    url = f"{door.base_url}/v1beta/models/{MODEL}:generateContent?key=secret"
    transport = HTTPXTransport(door.mock) if door.mock is not None else None
    with httpx.Client(transport=transport) as http:
        reply = http.post(url, content=body, headers={"content-type": "application/json"})
    assert reply.status_code == 200 and reply.headers["x-mockllm-protocol"] == "gemini"
    assert "secret" not in json.dumps(door.journal())
