"""A short stream going out in one write is made whole at once (``render_joined``,
``mockllm._wire.deltas``), not event by event: its bytes must be its events' joined,
whatever its texts, tool calls and request hold, in every codec that makes it so.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm._generation import generate_words
from mockllm._limits import STREAM_HEAD_EVENTS
from mockllm._plan import ReplyPlan, TextPart, ToolCallPart, Usage
from mockllm._wire.anthropic_messages import message_start
from mockllm._wire.base import WireCodec
from mockllm._wire.deltas import DeltaRun, expanded, joined
from mockllm._wire.registry import codec_for_path

MESSAGES = [{"role": "user", "content": "hi"}]

# (path, query, body) of a streamed request, by the name the test shows; ``{model}``
# is the model the example draws.
REQUESTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "openai-chat": ("/v1/chat/completions", "", {"messages": MESSAGES, "stream": True}),
    "openai-chat usage": (
        "/v1/chat/completions",
        "",
        {"messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}},
    ),
    "anthropic-messages": ("/v1/messages", "", {"messages": MESSAGES, "max_tokens": 9, "stream": True}),
    "gemini sse": (
        "/v1beta/models/m:streamGenerateContent",
        "alt=sse",
        {"generationConfig": {"thinkingConfig": {"includeThoughts": True}}},
    ),
    "gemini array": ("/v1beta/models/m:streamGenerateContent", "", {}),
    "ollama chat": ("/api/chat", "", {"messages": MESSAGES, "think": True}),
    "ollama generate": ("/api/generate", "", {"prompt": "hi", "think": True}),
    "bedrock-converse": (
        "/model/m/converse-stream",
        "",
        {"messages": MESSAGES, "additionalModelRequestFields": {"thinking": {"type": "enabled"}}},
    ),
    "bedrock-invoke": ("/model/m/invoke-with-response-stream", "", {"messages": MESSAGES, "max_tokens": 9}),
}

_TEXTS = st.text(alphabet=st.sampled_from(list('ab é"\\ \n\t\u00a0\x00.')), max_size=30)
_GENERATED = st.integers(min_value=0, max_value=60).map(lambda count: generate_words(count, "joined", count))


def _codec(name: str) -> tuple[WireCodec, dict[str, Any]]:
    path, query, body = REQUESTS[name]
    found = codec_for_path(path)
    assert found is not None
    params = dict(pair.split("=") for pair in query.split("&")) if query else {}
    return found.for_request(path, params), body


# Every codec on each example, rather than a test a codec: hypothesis's own work for an
# example (most of this test's CPU, drawing it) is done once, not once a codec; each codec
# still sees 150 examples of the same inputs, and a failure names the codec.
@settings(max_examples=150, deadline=None)
@given(
    texts=st.lists(_TEXTS | _GENERATED, max_size=3),
    reasoning=st.none() | _TEXTS | _GENERATED,
    arguments=st.lists(st.text(alphabet=st.sampled_from(list('a"é\\{}: ')), max_size=20), max_size=2),
    chunk_words=st.integers(min_value=1, max_value=2),
    model=st.sampled_from(["m", 'odd "model" é', None]),
)
def test_a_stream_made_whole_is_its_events_joined(
    texts: list[str], reasoning: str | None, arguments: list[str], chunk_words: int, model: str | None
) -> None:
    made_whole = chunk_words == 1 and all(
        t == "" or (t.strip() == t and "  " not in t and t.isprintable()) for t in [*texts, reasoning or ""]
    )
    for name in REQUESTS:
        codec, body = _codec(name)
        body = {**body, "model": model}
        plan = _plan(texts, reasoning, arguments, chunk_words)
        whole = codec.render_joined(plan, body)
        events = codec.render_events(plan, body)
        assert whole is None or whole == b"".join(events), name
        if made_whole and len(events) <= STREAM_HEAD_EVENTS:
            assert whole is not None, name  # generated words always are made so


def _plan(texts: list[str], reasoning: str | None, arguments: list[str], chunk_words: int) -> ReplyPlan:
    calls = [
        ToolCallPart(f"call_{i}", "get_weather", json.dumps({"a": a}, ensure_ascii=False, separators=(",", ":")))
        for i, a in enumerate(arguments)
    ]
    return ReplyPlan(
        reasoning=reasoning,
        parts=(*[TextPart(t) for t in texts], *calls),
        stop_reason="tool_use" if calls else "end_turn",
        usage=Usage(12, 34),
        response_id="0f3a9c",
        created=1_700_000_000,
        chunk_words=chunk_words,
    )


@pytest.mark.parametrize("name", list(REQUESTS))
def test_a_stream_too_long_for_one_write_is_not_made_whole(name: str) -> None:
    # Past STREAM_HEAD_EVENTS events a stream is rendered as it is sent: the joined
    # rendering declines before making the text's events.
    codec, body = _codec(name)
    words = generate_words(STREAM_HEAD_EVENTS + 1, "long")
    plan = ReplyPlan(None, (TextPart(words),), "end_turn", Usage(1, 1), "0f3a9c", 1_700_000_000)
    assert codec.render_joined(plan, {**body, "model": "m"}) is None
    body = {**body, "model": "m"}
    shorter = ReplyPlan(None, (TextPart(generate_words(200, "short")),), "end_turn", Usage(1, 1), "0f3a9c", 1)
    assert codec.render_joined(shorter, body) == b"".join(codec.render_events(shorter, body))


@pytest.mark.parametrize("model", ["m", 'odd "model" é', None, 7])
@pytest.mark.parametrize("usage", [Usage(0, 0), Usage(12, 34)])
def test_anthropic_message_start_is_its_message_dumped(model: Any, usage: Usage) -> None:
    # ``message_start`` is written out rather than dumped: the same bytes as the dict.
    plan = ReplyPlan(None, (TextPart("hi"),), "end_turn", usage, "0f3a9c", 1_700_000_000)
    start = {
        "id": "msg_0f3a9c",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": max(1, usage.input_tokens),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": min(1, usage.output_tokens),
        },
    }
    expected = json.dumps({"type": "message_start", "message": start}, separators=(",", ":"), ensure_ascii=False)
    assert message_start(plan, {"model": model}) == expected


@pytest.mark.parametrize("text", [generate_words(9, "nul"), "one two three"])
def test_a_stream_holding_a_nul_byte_elsewhere_is_still_its_events_joined(text: str) -> None:
    # ``joined`` marks a run's spaces with a NUL byte and replaces the marks in the
    # whole stream at once; a NUL byte in another event (no JSON codec writes one, but
    # a stream may) is left as it is.
    plan = ReplyPlan(None, (TextPart(text),), "end_turn", Usage(1, 1), "0f3a9c", 1)
    items = [[b"start\x00 \x00\n"], DeltaRun("before ", " after\x00\n", text), [b"end \x00"]]
    whole = joined(items, plan)
    assert whole == b"".join(b"".join(batch) for batch in expanded(items, plan))
