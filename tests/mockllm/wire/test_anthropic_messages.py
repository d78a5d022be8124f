"""The Anthropic Messages codec, read back through the real ``anthropic`` SDK."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import anthropic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm._plan import ErrorPlan, ReplyPlan, TextPart, ToolCallPart, Usage
from mockllm._wire.anthropic_messages import anthropic_messages as codec
from mockllm._wire.bedrock_invoke import bedrock_invoke
from mockllm._wire.encoding import dumps, sse_event
from mockllm._wire.eventstream import event_message
from tests.mockllm.wire.anthropic_bodies import ASK, USE_A
from tests.mockllm.wire.wire_support import rendered

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

MODEL = "claude-mock-1"
USER = [{"role": "user", "content": "What is the weather in Paris?"}]
WEATHER_ARGS = dumps({"query": "weather in Paris", "units": "metric", "days": 3})


def make_plan(
    *parts: TextPart | ToolCallPart,
    reasoning: str | None = None,
    stop_reason: str = "end_turn",
    signature: str = "",
    chunk_words: int = 1,
    error: ErrorPlan | None = None,
    usage: Usage = Usage(12, 34),  # noqa: B008 (a frozen value)
) -> ReplyPlan:
    return ReplyPlan(
        reasoning=reasoning,
        parts=tuple(parts),
        stop_reason=stop_reason,
        usage=usage,
        response_id="0123abcd",
        created=1_700_000_000,
        chunk_words=chunk_words,
        error=error,
        reasoning_signature=signature,
    )


def serve(plan: ReplyPlan, seen: list[dict[str, Any]] | None = None):
    """A handler answering like the mock server: validate, then render the plan."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        if seen is not None:
            seen.append(body)
        return rendered(codec, plan, body)

    return handler


def client_for(handler) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key="test",
        base_url="http://mock.test",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )


def error_client(status: int, type: str | None = None, message: str | None = None):
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            status, headers={"content-type": "application/json"}, content=codec.render_error(status, type, message)
        )

    return client_for(handler)


def raw_events(chunks: list[bytes]) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) per SSE event, checking the framing of each."""
    out = []
    for chunk in chunks:
        text = chunk.decode()
        assert text.endswith("\n\n") and text.count("\n\n") == 1, text
        event_line, data_line = text.rstrip("\n").split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: "), text
        out.append((event_line[len("event: ") :], json.loads(data_line[len("data: ") :])))
    return out


def test_text_stream_events_in_order_with_event_lines_matching_types():
    plan = make_plan(TextPart("Sunny and warm today."))
    with client_for(serve(plan)) as client:
        events = list(client.messages.create(model=MODEL, max_tokens=100, messages=USER, stream=True))
    assert [e.type for e in events] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[0].message.id == "msg_0123abcd"
    assert events[0].message.model == MODEL
    assert "".join(e.delta.text for e in events if e.type == "content_block_delta") == ("Sunny and warm today.")
    for name, data in raw_events(codec.render_events(plan, {"model": MODEL})):
        assert name == data["type"]


def test_ping_follows_message_start_and_the_sdk_skips_it():
    names = [n for n, _ in raw_events(codec.render_events(make_plan(TextPart("hi")), {}))]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]


def test_text_stream_helper_yields_pieces_joining_to_the_text():
    text = "The quick brown fox jumps over the lazy dog."
    with client_for(serve(make_plan(TextPart(text), chunk_words=2))) as client:
        with client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
            pieces = list(stream.text_stream)
    assert len(pieces) == 5
    assert "".join(pieces) == text


def test_streamed_final_message_equals_the_non_streaming_message():
    plan = make_plan(
        TextPart("Let me look that up."),
        ToolCallPart("toolu_01", "search", WEATHER_ARGS),
        reasoning="The user wants the weather, so I should search.",
        stop_reason="tool_use",
    )
    with client_for(serve(plan)) as client:
        with client.messages.stream(model=MODEL, max_tokens=4096, messages=USER) as stream:
            streamed = stream.get_final_message()
        created = client.messages.create(model=MODEL, max_tokens=4096, messages=USER)
    assert streamed.model_dump() == created.model_dump()
    thinking, text, tool = streamed.content
    assert thinking.type == "thinking"
    assert thinking.thinking == "The user wants the weather, so I should search."
    assert thinking.signature
    assert text.type == "text" and text.text == "Let me look that up."
    assert tool.type == "tool_use" and (tool.id, tool.name) == ("toolu_01", "search")
    assert tool.input == json.loads(WEATHER_ARGS)
    assert streamed.stop_reason == "tool_use"
    assert (streamed.usage.input_tokens, streamed.usage.output_tokens) == (12, 34)


def test_thinking_and_tool_use_in_one_turn():
    plan = make_plan(
        ToolCallPart("toolu_01", "get_weather", '{"city":"Paris"}'),
        reasoning="Need the weather tool.",
        stop_reason="tool_use",
        signature="c2lnbmF0dXJl",
    )
    with client_for(serve(plan)) as client:
        with client.messages.stream(model=MODEL, max_tokens=4096, messages=USER) as stream:
            final = stream.get_final_message()
    assert [b.type for b in final.content] == ["thinking", "tool_use"]
    assert final.content[0].signature == "c2lnbmF0dXJl"
    assert final.content[1].input == {"city": "Paris"}
    assert final.stop_reason == "tool_use"


def test_parallel_tool_use_blocks_keep_their_order_and_ids():
    plan = make_plan(
        ToolCallPart("toolu_a", "get_weather", '{"city":"Paris"}'),
        ToolCallPart("toolu_b", "get_weather", '{"city":"Tokyo"}'),
        stop_reason="tool_use",
    )
    with client_for(serve(plan)) as client:
        with client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
            final = stream.get_final_message()
    assert [(b.id, b.input) for b in final.content] == [("toolu_a", {"city": "Paris"}), ("toolu_b", {"city": "Tokyo"})]
    starts = [d for n, d in raw_events(codec.render_events(plan, {})) if n == "content_block_start"]
    assert [s["index"] for s in starts] == [0, 1]


def test_input_json_deltas_split_the_arguments_mid_token():
    plan = make_plan(ToolCallPart("toolu_01", "search", WEATHER_ARGS), stop_reason="tool_use")
    pieces = [
        d["delta"]["partial_json"] for n, d in raw_events(codec.render_events(plan, {})) if n == "content_block_delta"
    ]
    assert len(pieces) >= 3
    assert "".join(pieces) == WEATHER_ARGS
    # Some cut falls inside a string literal, as the real API's cuts do.
    cuts = [len("".join(pieces[:i])) for i in range(1, len(pieces))]
    assert any(WEATHER_ARGS[:cut].count('"') % 2 == 1 for cut in cuts)


def test_empty_arguments_stream_as_an_empty_input():
    plan = make_plan(ToolCallPart("toolu_01", "now", "{}"), stop_reason="tool_use")
    with client_for(serve(plan)) as client:
        with client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
            final = stream.get_final_message()
        created = client.messages.create(model=MODEL, max_tokens=100, messages=USER)
    assert final.content[0].input == {} == created.content[0].input


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3),
    max_leaves=8,
)


@settings(max_examples=40, deadline=None)
@given(args=st.dictionaries(st.text(), json_values, max_size=4))
def test_any_arguments_object_survives_the_sdks_partial_parsing(args):
    plan = make_plan(ToolCallPart("toolu_01", "f", dumps(args)), stop_reason="tool_use")
    with client_for(serve(plan)) as client:
        with client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
            final = stream.get_final_message()
    assert final.content[0].input == args


@settings(max_examples=40, deadline=None)
@given(
    text=st.text(min_size=1), reasoning=st.text(min_size=1), args=st.dictionaries(st.text(), json_values, max_size=3)
)
def test_every_streamed_event_is_its_data_dumped_whole_and_invoke_model_carries_the_same_json(text, reasoning, args):
    """The deltas are built around their encoded piece (no per-event dump): each event's
    bytes are still exactly its data dumped compactly, for any text, and the InvokeModel
    stream's ``chunk``s carry those very JSON bytes (pings apart, metrics on the last)."""
    plan = make_plan(TextPart(text), ToolCallPart("toolu_01", "f", dumps(args)), reasoning=reasoning)
    events = codec.render_events(plan, {"model": MODEL})
    datas = [data for _, data in raw_events(events)]
    assert events == [sse_event(data, event=data["type"]) for data in datas]
    invoke = bedrock_invoke.for_request(f"/model/{MODEL}/invoke-with-response-stream", {})
    datas = [data for data in datas if data["type"] != "ping"]
    metrics = {"inputTokenCount": 12, "outputTokenCount": 34, "invocationLatency": 440, "firstByteLatency": 100}
    datas[-1] = {**datas[-1], "amazon-bedrock-invocationMetrics": metrics}
    payloads = [b'{"bytes":"' + base64.b64encode(dumps(data).encode()) + b'"}' for data in datas]
    assert invoke.render_events(plan, {}) == [event_message("chunk", payload) for payload in payloads]


@pytest.mark.parametrize(
    ("neutral", "wire"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence"),
        ("refusal", "refusal"),
        ("content_filter", "refusal"),
    ],
)
def test_stop_reason_and_usage_reach_the_final_message(neutral, wire):
    plan = make_plan(TextPart("Partial answer"), stop_reason=neutral, usage=Usage(7, 99))
    with client_for(serve(plan)) as client:
        with client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
            final = stream.get_final_message()
    assert final.stop_reason == wire
    assert (final.usage.input_tokens, final.usage.output_tokens) == (7, 99)


def test_non_streaming_create_parses_into_a_message():
    plan = make_plan(TextPart("Hello there."), usage=Usage(0, 3))
    with client_for(serve(plan)) as client:
        message = client.messages.create(model=MODEL, max_tokens=100, messages=USER)
    assert isinstance(message, anthropic.types.Message)
    assert (message.id, message.role, message.model) == ("msg_0123abcd", "assistant", MODEL)
    assert message.content[0].text == "Hello there."
    assert message.stop_reason == "end_turn" and message.stop_sequence is None
    assert message.usage.input_tokens > 0 and message.usage.output_tokens == 3


def test_async_client_streams_the_same_final_message():
    plan = make_plan(
        TextPart("Async works."),
        ToolCallPart("toolu_9", "f", '{"x":[1,2,3]}'),
        reasoning="Thinking async.",
        stop_reason="tool_use",
    )

    async def run() -> anthropic.types.Message:
        transport = httpx2.MockTransport(serve(plan))
        async with anthropic.AsyncAnthropic(
            api_key="test",
            base_url="http://mock.test",
            max_retries=0,
            http_client=httpx2.AsyncClient(transport=transport),
        ) as client:
            async with client.messages.stream(model=MODEL, max_tokens=4096, messages=USER) as stream:
                return await stream.get_final_message()

    final = asyncio.run(run())
    assert [b.type for b in final.content] == ["thinking", "text", "tool_use"]
    assert final.content[2].input == {"x": [1, 2, 3]}


def test_mid_stream_error_after_k_events_raises_api_status_error():
    plan = make_plan(
        TextPart("one two three four"), error=ErrorPlan(529, None, None, retry_after_ms=None, after_chunks=4)
    )
    chunks = codec.render_events(plan, {"model": MODEL})
    normal = codec.render_events(make_plan(TextPart("one two three four")), {"model": MODEL})
    assert chunks[:4] == normal[:4] and len(chunks) == 5
    assert raw_events(chunks)[-1] == (
        "error",
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )

    received = []
    with client_for(serve(plan)) as client:
        with pytest.raises(anthropic.APIStatusError) as info:
            for event in client.messages.create(model=MODEL, max_tokens=100, messages=USER, stream=True):
                received.append(event.type)
    # The ping is the SDK's to skip: four events on the wire, three reach the caller.
    assert received == ["message_start", "content_block_start", "content_block_delta"]
    assert info.value.status_code == 200
    assert info.value.body["error"]["type"] == "overloaded_error"


def test_mid_stream_error_keeps_a_scripted_type_and_message():
    plan = make_plan(
        TextPart("hi"), error=ErrorPlan(429, "rate_limit_error", "Slow down.", retry_after_ms=1, after_chunks=0)
    )
    assert raw_events(codec.render_events(plan, {})) == [
        ("error", {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down."}})
    ]


@pytest.mark.parametrize(
    ("status", "error_class", "error_type"),
    [
        (400, anthropic.BadRequestError, "invalid_request_error"),
        (401, anthropic.AuthenticationError, "authentication_error"),
        (403, anthropic.PermissionDeniedError, "permission_error"),
        (404, anthropic.NotFoundError, "not_found_error"),
        (413, anthropic.ContentTooLargeError, "request_too_large"),
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (500, anthropic.InternalServerError, "api_error"),
        (529, anthropic.OverloadedError, "overloaded_error"),
        (422, anthropic.UnprocessableEntityError, "invalid_request_error"),
        (502, anthropic.InternalServerError, "api_error"),
    ],
)
def test_http_error_bodies_raise_the_sdks_error_classes(status, error_class, error_type):
    with error_client(status) as client:
        with pytest.raises(error_class) as info:
            client.messages.create(model=MODEL, max_tokens=100, messages=USER)
    assert info.value.status_code == status
    assert info.value.body["type"] == "error"
    assert info.value.body["error"]["type"] == error_type
    assert info.value.body["error"]["message"]


def test_overloaded_is_an_internal_server_error_with_the_real_message():
    with error_client(529) as client:
        with pytest.raises(anthropic.InternalServerError) as info:
            client.messages.create(model=MODEL, max_tokens=100, messages=USER)
    assert info.value.body == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def test_render_error_keeps_a_given_type_and_message():
    assert json.loads(codec.render_error(400, "invalid_request_error", "bad thing")) == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "bad thing"},
    }


def test_a_rejected_request_reaches_the_sdk_as_a_bad_request():
    with client_for(serve(make_plan(TextPart("never")))) as client:
        with pytest.raises(anthropic.BadRequestError) as info:
            client.messages.create(model=MODEL, max_tokens=100, messages=[ASK, USE_A, ASK])
    assert "`tool_use` ids were found without `tool_result` blocks" in info.value.message


def test_the_mocks_own_reply_is_accepted_back_as_history():
    """Thinking blocks with signatures and every emitted field go back in the next request."""
    plan = make_plan(
        ToolCallPart("toolu_01", "get_weather", '{"city":"Paris"}'), reasoning="Use the tool.", stop_reason="tool_use"
    )
    seen: list[dict[str, Any]] = []
    with client_for(serve(plan, seen)) as client:
        with client.messages.stream(
            model=MODEL, max_tokens=4096, messages=USER, thinking={"type": "enabled", "budget_tokens": 1024}
        ) as stream:
            first = stream.get_final_message()
        history = [
            *USER,
            {"role": "assistant", "content": first.content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "sunny"}]},
        ]
        client.messages.create(
            model=MODEL, max_tokens=4096, messages=history, thinking={"type": "enabled", "budget_tokens": 1024}
        )
    sent = seen[-1]["messages"][1]["content"]
    assert [b["type"] for b in sent] == ["thinking", "tool_use"]
    assert sent[0]["signature"]


def test_same_plan_gives_the_same_bytes():
    def plan() -> ReplyPlan:
        return make_plan(
            TextPart("Same words."),
            ToolCallPart("toolu_1", "f", WEATHER_ARGS),
            reasoning="Same thoughts.",
            stop_reason="tool_use",
        )

    body = {"model": MODEL}
    assert codec.render_events(plan(), body) == codec.render_events(plan(), body)
    assert codec.render_json(plan(), body) == codec.render_json(plan(), body)
    signature = json.loads(codec.render_json(plan(), body))["content"][0]["signature"]
    other = make_plan(TextPart("x"), reasoning="y")
    assert signature == json.loads(codec.render_json(other, body))["content"][0]["signature"]


def test_signature_derives_from_the_response_id_when_the_plan_has_none():
    first = make_plan(TextPart("x"), reasoning="y")
    second = ReplyPlan(
        reasoning="y",
        parts=(TextPart("x"),),
        stop_reason="end_turn",
        usage=Usage(1, 1),
        response_id="ffff0000",
        created=0,
    )
    signatures = {json.loads(codec.render_json(p, {}))["content"][0]["signature"] for p in (first, second)}
    assert len(signatures) == 2 and all(signatures)
