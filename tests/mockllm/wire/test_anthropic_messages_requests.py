"""The Anthropic Messages codec reading requests: what the real API rejects is rejected with
its words (strict and lenient), good histories are accepted, tool results read as tool messages."""

from __future__ import annotations

import pytest

from mockllm._conversation import Message
from mockllm._exceptions import RequestRejected
from mockllm._wire.anthropic_messages import anthropic_messages as codec
from tests.mockllm.wire.anthropic_bodies import ASK, BASE, MODEL, RESULT_A, USE_A


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], "Input should be a valid dictionary or object to extract fields from"),
        ({"max_tokens": 10, "messages": [ASK]}, "model: Field required"),
        ({"model": MODEL, "messages": [ASK]}, "max_tokens: Field required"),
        ({**BASE}, "messages: Field required"),
        ({**BASE, "messages": "hi"}, "messages: Input should be a valid list"),
        (
            {**BASE, "messages": [ASK, {"role": "system", "content": "x"}]},
            "messages.1.role: Input should be 'user' or 'assistant'",
        ),
        (
            {**BASE, "messages": [ASK], "thinking": {"type": "enabled", "budget_tokens": 1000}},
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        ),
        (
            {**BASE, "messages": [ASK], "thinking": {"type": "enabled", "budget_tokens": 2048}},
            "`max_tokens` must be greater than `thinking.budget_tokens`.",
        ),
        (
            {**BASE, "messages": [ASK, RESULT_A]},
            "messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_a. "
            "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
        ),
        (
            {**BASE, "messages": [ASK, USE_A, ASK]},
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
            "toolu_a. Each `tool_use` block must have a corresponding `tool_result` block in the next "
            "message.",
        ),
        (
            {**BASE, "system": "Be brief.", "messages": [ASK, USE_A]},
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after",
        ),
        (
            {
                **BASE,
                "messages": [
                    ASK,
                    USE_A,
                    RESULT_A,
                    {"role": "assistant", "content": "ok"},
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "again"},
                            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "x"},
                        ],
                    },
                ],
            },
            "messages.4.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_a.",
        ),
    ],
)
def test_read_request_rejects_like_the_real_api(body, message):
    with pytest.raises(RequestRejected) as info:
        codec.read_request(body, lenient=False)
    assert info.value.message.startswith(message)
    assert (info.value.status, info.value.type) == (400, "invalid_request_error")


def test_lenient_skips_pairing_but_not_required_fields():
    codec.read_request({**BASE, "messages": [ASK, RESULT_A]}, lenient=True)
    codec.read_request({**BASE, "messages": [ASK, USE_A, ASK]}, lenient=True)
    with pytest.raises(RequestRejected, match="model: Field required"):
        codec.read_request({"max_tokens": 10, "messages": [ASK]}, lenient=True)


def test_read_request_accepts_good_requests():
    codec.read_request({**BASE, "messages": [ASK, USE_A, RESULT_A]}, lenient=False)
    codec.read_request(
        {**BASE, "messages": [ASK], "thinking": {"type": "enabled", "budget_tokens": 1024}}, lenient=False
    )
    codec.read_request({**BASE, "messages": [ASK], "thinking": {"type": "disabled"}}, lenient=False)


def test_conversation_reads_tool_results_as_tool_messages():
    conversation = codec.read({**BASE, "system": "Be brief.", "messages": [ASK, USE_A, RESULT_A]})
    assert conversation.messages == (
        Message("system"),
        Message("user", "Weather?", position=0),
        Message("assistant", tool_calls=("toolu_a",), position=1),
        Message("tool", tool_results=("toolu_a",), position=2),
    )


def test_wants_stream_only_for_true():
    assert codec.wants_stream({"stream": True})
    assert not codec.wants_stream({"stream": False})
    assert not codec.wants_stream({"stream": "true"})
    assert not codec.wants_stream({})
