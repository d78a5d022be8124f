"""Record from an upstream server through ``python -m mockllm record``, stop them both,
then replay with ``python -m mockllm serve --recordings`` and in process: the official
SDKs see the same content, tool calls and event boundaries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from mockllm import HTTPX2Transport, InstructionChain, MockLLM
from mockllm._recording.replay import RecordingLibrary
from tests.mockllm.recording.support import mock_upstream, recording_proxy, replay_in_thread, replay_server

httpx2 = pytest.importorskip("httpx2")

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def tagged(*steps: dict[str, Any], prompt: str = "Hello") -> str:
    return InstructionChain(instruction_chain=list(steps)).tagged(prompt)


TEXT = tagged({"reasoning": {"length": 6}, "messages": [{"text_message": {"length": 40}}]})
ANTHROPIC_TEXT = tagged(
    {"messages": [{"text_message": {"length": 25}}, {"tool_call": [{"name": "f", "args": {"a": 1}}]}]}
)
LOOP = tagged(
    {"messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Paris"}}]}]},
    {"messages": [{"text_message": {"text": "It is sunny in Paris."}}]},
    prompt="Weather in Paris?",
)
FAILING = tagged({"error": {"status": 429, "message": "Slow down", "retry_after_ms": 1}})


def openai_client(base_url: str, http_client: Any = None) -> openai.OpenAI:
    return openai.OpenAI(api_key=KEY, base_url=f"{base_url}/v1", max_retries=0, http_client=http_client)


def anthropic_client(base_url: str, http_client: Any = None) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=base_url, max_retries=0, http_client=http_client)


def tool_loop(client: openai.OpenAI) -> list[Any]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": LOOP},
    ]
    seen = []
    for _ in range(3):
        reply = client.chat.completions.create(model="gpt-rec", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        seen.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return seen
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny"})
    return seen


def conversation(base_url: str, http_client: Any = None) -> dict[str, Any]:
    """Everything the SDKs see in one session: streams (chunk by chunk), plain replies,
    a tool loop, and a provider error."""
    oai = openai_client(base_url, http_client)
    ant = anthropic_client(base_url, http_client)
    seen: dict[str, Any] = {}
    stream = oai.chat.completions.create(model="gpt-rec", messages=[{"role": "user", "content": TEXT}], stream=True)
    seen["openai_stream"] = [chunk.model_dump() for chunk in stream]
    seen["openai_plain"] = oai.chat.completions.create(
        model="gpt-rec", messages=[{"role": "user", "content": TEXT}]
    ).model_dump()
    with ant.messages.stream(
        model="claude-rec", max_tokens=200, system="Be brief.", messages=[{"role": "user", "content": ANTHROPIC_TEXT}]
    ) as events:
        seen["anthropic_stream"] = [event.model_dump() for event in events]
    seen["anthropic_plain"] = ant.messages.create(
        model="claude-rec", max_tokens=200, messages=[{"role": "user", "content": ANTHROPIC_TEXT}]
    ).model_dump()
    seen["tool_loop"] = tool_loop(oai)
    with pytest.raises(openai.RateLimitError) as failed:
        oai.chat.completions.create(model="gpt-rec", messages=[{"role": "user", "content": FAILING}])
    seen["error"] = (failed.value.status_code, failed.value.body, failed.value.request_id)
    return seen


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """(recordings folder, what the SDKs saw from the upstream directly, through the proxy);
    the upstream and the proxy are stopped when it returns."""
    tmp = tmp_path_factory.mktemp("record")
    out = tmp / "recordings"
    with mock_upstream() as upstream, recording_proxy(tmp, upstream, out) as proxy:
        direct = conversation(upstream)
        through_proxy = conversation(proxy)
    return out, direct, through_proxy


def test_the_proxy_is_transparent(recorded: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    _, direct, through_proxy = recorded
    assert through_proxy == direct


def test_replay_server_gives_the_sdks_what_was_recorded(
    recorded: tuple[Path, dict[str, Any], dict[str, Any]], tmp_path: Path
) -> None:
    out, _, through_proxy = recorded
    with replay_server(tmp_path, out) as replay:
        assert conversation(replay) == through_proxy


def test_in_process_replay_gives_the_sdks_what_was_recorded(
    recorded: tuple[Path, dict[str, Any], dict[str, Any]],
) -> None:
    out, _, through_proxy = recorded
    mock = MockLLM(recordings=RecordingLibrary.from_directory(out))
    with httpx2.Client(transport=HTTPX2Transport(mock)) as http:
        assert conversation("http://mockllm.test", http) == through_proxy
    assert [entry.status for entry in mock.journal] == [200, 200, 200, 200, 200, 200, 429]


def test_the_tool_loop_replays_its_tool_calls(recorded: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    _, _, seen = recorded
    first, answer = seen["tool_loop"]
    assert first["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert answer["content"] == "It is sunny in Paris."


def test_an_upstream_error_is_recorded_as_it_was(recorded: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    out, _, seen = recorded
    assert seen["error"][0] == 429
    files = [json.loads(p.read_text()) for p in out.glob("*.json")]
    errors = [ex["response"] for f in files for ex in f["exchanges"] if ex["response"]["status"] != 200]
    assert len(errors) == 1
    assert errors[0]["status"] == 429
    assert errors[0]["body"]["error"]["message"] == "Slow down"
    assert errors[0]["headers"]["retry-after-ms"] == "1"


def test_recordings_hold_no_secret(recorded: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    out, _, _ = recorded
    text = "".join(p.read_text() for p in out.glob("*.json"))
    assert KEY not in text
    assert "authorization" not in text.lower() and "x-api-key" not in text.lower()


def test_each_stream_event_is_kept_with_its_delay(recorded: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    out, _, seen = recorded
    streamed = [
        ex["response"]["events"]
        for p in out.glob("openai-chat-*.json")
        for ex in json.loads(p.read_text())["exchanges"]
        if "events" in ex["response"]
    ]
    (events,) = streamed
    # One recorded event per chunk the SDK saw, plus [DONE].
    assert len(events) == len(seen["openai_stream"]) + 1
    assert events[-1] == {"delay_ms": events[-1]["delay_ms"], "text": "[DONE]"}
    assert all(event["delay_ms"] >= 0 for event in events)


def test_a_changed_prompt_fails_with_the_field_diff(recorded: tuple[Path, dict[str, Any], dict[str, Any]]) -> None:
    out, _, _ = recorded
    with replay_in_thread(out) as replay:
        client = openai_client(replay)
        messages = [{"role": "system", "content": "You are chatty."}, {"role": "user", "content": LOOP}]
        with pytest.raises(openai.NotFoundError) as missed:
            client.chat.completions.create(model="gpt-rec", messages=messages, tools=TOOLS)
    message = str(missed.value)
    assert "No recording matches this request" in message
    assert "messages[0].content differs" in message
    assert "You are chatty." in message and "You are terse." in message
    assert "Nearest recording" in message and ".json (exchange 0)" in message
