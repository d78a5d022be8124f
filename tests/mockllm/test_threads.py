"""Server-held conversations: the anthropic SDK's tool runner at its default settings
(message threads on) and with ``thread=False``, streamed and not, through both doors."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest
from anthropic import beta_tool

from mockllm import MockLLM
from mockllm._transports import HTTPX2Transport
from tests.mockllm.server_support import two_city_weather_chain as _chain

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

MODEL = "claude-mock-1"


@beta_tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("thread", ["default", "off"])
def test_tool_runner_runs_the_whole_loop(door: Any, stream: bool, thread: str) -> None:
    door.reset_journal()
    client = door.anthropic()
    extra = {"thread": False} if thread == "off" else {}
    runner = client.beta.messages.tool_runner(
        model=MODEL,
        max_tokens=1024,
        tools=[get_weather],
        stream=stream,
        messages=[{"role": "user", "content": _chain(thread)}],
        **extra,
    )
    if stream:
        finals = [s.get_final_message() for s in runner]
    else:
        finals = list(runner)
    assert [m.stop_reason for m in finals] == ["tool_use", "tool_use", "end_turn"]
    assert finals[-1].content[0].text == "Both are sunny."
    entries = [e for e in door.journal() if e["protocol"] == "anthropic-messages"]
    assert [(e["turn_index"], e["status"]) for e in entries] == [(0, 200), (1, 200), (2, 200)]
    # The rebuilt history counts as the whole one: input tokens grow turn by turn.
    assert finals[0].usage.input_tokens < finals[1].usage.input_tokens < finals[2].usage.input_tokens


def test_a_thread_the_mock_does_not_hold_is_a_404_the_sdk_replays(door: Any) -> None:
    client = door.anthropic()
    prompt = _chain("lost")
    first = client.beta.messages.create(
        model=MODEL,
        max_tokens=256,
        betas=["message-threads-2026-08-12"],
        messages=[{"role": "user", "content": prompt}],
        extra_body={"thread": {"type": "create"}},
    )
    door.reset_journal()  # also forgets the held conversations
    with pytest.raises(anthropic.NotFoundError) as raised:
        client.beta.messages.create(
            model=MODEL,
            max_tokens=256,
            betas=["message-threads-2026-08-12"],
            messages=[
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": first.content[0].id, "content": "sunny"}],
                }
            ],
            extra_body={"thread": {"type": "continue", "previous_message_id": first.id}},
        )
    error = raised.value.body["error"]
    assert error["type"] == "not_found_error"
    assert error["details"] == {"error_code": "thread_not_found"}
    assert "the mock does not hold message" in error["message"] and "reset" in error["message"]


def test_the_default_runner_really_continues_threads() -> None:
    sent: list[Any] = []
    http = httpx2.Client(
        transport=HTTPX2Transport(MockLLM()), event_hooks={"request": [lambda req: sent.append(json.loads(req.read()))]}
    )
    client = anthropic.Anthropic(api_key="test", base_url="http://mockllm", http_client=http, max_retries=0)
    runner = client.beta.messages.tool_runner(
        model=MODEL, max_tokens=256, tools=[get_weather], messages=[{"role": "user", "content": _chain("check")}]
    )
    assert [m.stop_reason for m in runner] == ["tool_use", "tool_use", "end_turn"]
    assert [body["thread"]["type"] for body in sent] == ["create", "continue", "continue"]
    assert [len(body["messages"]) for body in sent] == [1, 1, 1]
    http.close()
