"""Reading what a recorded reply said, for every protocol, streamed or not."""

from __future__ import annotations

import json

import pytest

from mockllm import InstructionChain, MockLLM
from mockllm._recording.capture import Capture, exchange_request
from mockllm._recording.replies import read_reply

PATHS = {
    "openai-chat": "/v1/chat/completions",
    "anthropic-messages": "/v1/messages",
    "openai-responses": "/v1/responses",
}


def body(protocol: str, step: dict[str, object], stream: bool) -> dict[str, object]:
    text = InstructionChain(instruction_chain=[step]).tagged("Go")
    if protocol == "openai-responses":
        return {"model": "m", "input": text, "stream": stream}
    request: dict[str, object] = {"model": "m", "messages": [{"role": "user", "content": text}], "stream": stream}
    if protocol == "anthropic-messages":
        request["max_tokens"] = 1000
    return request


def recorded(protocol: str, step: dict[str, object], stream: bool):  # type: ignore[no-untyped-def]
    raw = json.dumps(body(protocol, step, stream)).encode()
    reply = MockLLM().handle("POST", PATHS[protocol], {}, raw)
    capture = Capture(exchange_request("POST", PATHS[protocol], [], {}, raw))
    capture.started(reply.status, reply.headers)
    for _, chunk in reply.paced_chunks():
        capture.chunk(chunk)
    return read_reply(protocol, capture.finished().response)


@pytest.mark.parametrize("protocol", list(PATHS))
@pytest.mark.parametrize("stream", [False, True])
def test_text_reasoning_and_tool_calls_are_read_back(protocol: str, stream: bool) -> None:
    step = {
        "reasoning": {"text": "Think first."},
        "messages": [
            {"text_message": {"text": "Here you go."}},
            {"tool_call": [{"name": "a", "args": {"x": 1}}, {"name": "b", "args": {"y": [2]}}]},
        ],
    }
    turn = recorded(protocol, step, stream)
    assert turn.text == "Here you go."
    assert turn.reasoning == "Think first."
    assert [(name, args) for _, name, args in turn.tool_calls] == [("a", {"x": 1}), ("b", {"y": [2]})]
    assert turn.error is None


@pytest.mark.parametrize("protocol", list(PATHS))
def test_errors_are_read_back_with_their_place(protocol: str) -> None:
    http = recorded(protocol, {"error": {"status": 429, "message": "Slow down"}}, True)
    assert http.error is not None and (http.error.status, http.error.message) == (429, "Slow down")
    step = {
        "error": {"status": 500, "message": "Broke", "after_chunks": 2},
        "messages": [{"text_message": {"length": 30}}],
    }
    mid = recorded(protocol, step, True)
    assert mid.error is not None and mid.error.message == "Broke" and mid.error.after_events == 2
