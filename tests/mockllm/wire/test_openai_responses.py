"""The Responses codec, read back through the real ``openai`` SDK."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import openai
import pytest
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from mockllm._conversation import Message
from mockllm._exceptions import RequestRejected
from mockllm._plan import ErrorPlan, ReplyPlan, TextPart, ToolCallPart, Usage
from mockllm._wire.openai_responses import OpenAIResponsesCodec
from mockllm._wire.openai_responses import openai_responses as codec
from tests.mockllm.wire.wire_support import rendered

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

BODY: dict[str, Any] = {"model": "gpt-test", "input": "Hello"}
WEATHER_ARGS = '{"city":"Paris","units":"celsius"}'
STREAM_EVENT = TypeAdapter(ResponseStreamEvent)


def make_plan(
    *parts: TextPart | ToolCallPart,
    reasoning: str | None = None,
    stop_reason: str = "end_turn",
    error: ErrorPlan | None = None,
    chunk_words: int = 1,
    response_id: str = "0f3a9c",
) -> ReplyPlan:
    return ReplyPlan(
        reasoning=reasoning,
        parts=parts,
        stop_reason=stop_reason,
        usage=Usage(input_tokens=12, output_tokens=9),
        response_id=response_id,
        created=1_700_000_000,
        chunk_words=chunk_words,
        error=error,
    )


Handler = Callable[[httpx2.Request], httpx2.Response]


def replying(plan: ReplyPlan) -> Handler:
    """A handler answering as the engine would: SSE when asked, JSON otherwise."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return rendered(codec, plan, json.loads(request.content))

    return handler


def client_for(handler: Handler) -> openai.OpenAI:
    return openai.OpenAI(
        api_key="test",
        base_url="http://mock.test/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )


def raw_events(plan: ReplyPlan, body: dict[str, Any] = BODY) -> list[tuple[str, dict[str, Any]]]:
    """(event line, data) for each rendered SSE event."""
    out = []
    for chunk in codec.render_events(plan, body):
        text = chunk.decode()
        assert text.endswith("\n\n"), text
        event_line, data_line = text[:-2].split("\n")
        assert event_line.startswith("event: ") and data_line.startswith("data: "), text
        out.append((event_line[len("event: ") :], json.loads(data_line[len("data: ") :])))
    return out


def test_streamed_events_come_in_order_with_consecutive_sequence_numbers() -> None:
    plan = make_plan(TextPart("Hi there"))
    with client_for(replying(plan)) as client:
        events = list(client.responses.create(model="gpt-test", input="Hello", stream=True))
    assert [e.type for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert events[0].response.id == events[-1].response.id == "resp_0f3a9c"
    assert events[0].response.status == "in_progress" and events[0].response.output == []
    assert [e.delta for e in events if e.type == "response.output_text.delta"] == ["Hi ", "there"]


RICH_PLANS = {
    "text": make_plan(TextPart("One two three."), chunk_words=2),
    "reasoning+calls": make_plan(
        TextPart("Checking."),
        ToolCallPart("call_a", "get_weather", WEATHER_ARGS),
        ToolCallPart("call_b", "get_time", '{"tz":"Europe/Paris"}'),
        reasoning="The user wants weather and time.",
        stop_reason="tool_use",
    ),
    "incomplete": make_plan(TextPart("Cut off mid"), stop_reason="max_tokens"),
    "refusal": make_plan(TextPart("I can't help with that."), stop_reason="refusal"),
    "empty": make_plan(),
}


@pytest.mark.parametrize("plan", RICH_PLANS.values(), ids=RICH_PLANS.keys())
def test_every_event_validates_against_the_sdk_types(plan: ReplyPlan) -> None:
    events = raw_events(plan)
    for event_line, data in events:
        assert event_line == data["type"]
        STREAM_EVENT.validate_python(data)
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    Response.model_validate(json.loads(codec.render_json(plan, BODY)))


def test_stream_helper_final_response_gives_the_text() -> None:
    plan = make_plan(TextPart("Hello, "), TextPart("world."), chunk_words=2)
    with client_for(replying(plan)) as client:
        with client.responses.stream(model="gpt-test", input="Hello") as stream:
            deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
            final = stream.get_final_response()
    assert "".join(deltas) == "Hello, world."
    assert final.output_text == "Hello, world."
    assert [item.type for item in final.output] == ["message", "message"]
    assert final.status == "completed"


def test_stream_helper_returns_parallel_function_calls() -> None:
    plan = make_plan(
        ToolCallPart("call_a", "get_weather", WEATHER_ARGS),
        ToolCallPart("call_b", "get_time", '{"tz":"Europe/Paris"}'),
        stop_reason="tool_use",
    )
    with client_for(replying(plan)) as client:
        with client.responses.stream(model="gpt-test", input="Weather and time?") as stream:
            final = stream.get_final_response()
    calls = [(i.type, i.call_id, i.name, json.loads(i.arguments)) for i in final.output]
    assert calls == [
        ("function_call", "call_a", "get_weather", {"city": "Paris", "units": "celsius"}),
        ("function_call", "call_b", "get_time", {"tz": "Europe/Paris"}),
    ]
    assert final.output[0].id != final.output[1].id
    assert final.output_text == ""


def test_reasoning_comes_first_then_the_tool_call() -> None:
    plan = make_plan(
        ToolCallPart("call_a", "get_weather", WEATHER_ARGS), reasoning="Need the weather first.", stop_reason="tool_use"
    )
    with client_for(replying(plan)) as client:
        with client.responses.stream(model="gpt-test", input="Weather?") as stream:
            summary = [e.delta for e in stream if e.type == "response.reasoning_summary_text.delta"]
            final = stream.get_final_response()
    assert "".join(summary) == "Need the weather first."
    reasoning, call = final.output
    assert reasoning.type == "reasoning"
    assert [s.text for s in reasoning.summary] == ["Need the weather first."]
    assert (call.type, call.call_id, call.arguments) == ("function_call", "call_a", WEATHER_ARGS)
    assert final.usage is not None and final.usage.output_tokens_details.reasoning_tokens > 0


def test_non_streaming_create_gives_output_text_and_usage() -> None:
    plan = make_plan(TextPart("Plain answer."))
    with client_for(replying(plan)) as client:
        response = client.responses.create(model="gpt-test", input="Hello")
    assert response.id == "resp_0f3a9c"
    assert response.output_text == "Plain answer."
    assert response.status == "completed"
    assert response.model == "gpt-test"
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.total_tokens) == (12, 9, 21)
    assert response.usage.input_tokens_details.cached_tokens == 0


def test_json_body_is_the_completed_events_response() -> None:
    plan = RICH_PLANS["reasoning+calls"]
    _, completed = raw_events(plan)[-1]
    assert completed["type"] == "response.completed"
    assert json.loads(codec.render_json(plan, BODY)) == completed["response"]


def _inside_string(text: str) -> list[bool]:
    """For each character: is it inside a JSON string literal (quotes excluded)?"""
    inside, escaped, out = False, False, []
    for ch in text:
        if inside and escaped:
            escaped = False
        elif inside and ch == "\\":
            escaped = True
        elif ch == '"':
            inside = not inside
            out.append(False)
            continue
        out.append(inside)
    return out


def test_argument_deltas_split_the_json_inside_tokens() -> None:
    plan = make_plan(ToolCallPart("call_a", "get_weather", WEATHER_ARGS), stop_reason="tool_use")
    with client_for(replying(plan)) as client:
        events = list(client.responses.create(model="gpt-test", input="Weather?", stream=True))
    deltas = [e.delta for e in events if e.type == "response.function_call_arguments.delta"]
    assert len(deltas) > 1 and "".join(deltas) == WEATHER_ARGS
    done = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert [e.arguments for e in done] == [WEATHER_ARGS]
    added = next(e for e in events if e.type == "response.output_item.added")
    assert added.item.arguments == "" and added.item.call_id == "call_a"
    inside = _inside_string(WEATHER_ARGS)
    cuts = [sum(len(d) for d in deltas[:i]) for i in range(1, len(deltas))]
    assert any(inside[cut - 1] and inside[cut] for cut in cuts), deltas


def test_max_tokens_ends_with_response_incomplete() -> None:
    plan = make_plan(TextPart("Cut off mid"), stop_reason="max_tokens")
    with client_for(replying(plan)) as client:
        events = list(client.responses.create(model="gpt-test", input="Hello", stream=True))
        response = client.responses.create(model="gpt-test", input="Hello")
        # The SDK helper only accepts response.completed, as it does with the real API.
        with client.responses.stream(model="gpt-test", input="Hello") as stream:
            with pytest.raises(RuntimeError, match="response.completed"):
                stream.get_final_response()
    last = events[-1]
    assert last.type == "response.incomplete"
    assert "response.completed" not in [e.type for e in events]
    for result in (last.response, response):
        assert result.status == "incomplete"
        assert result.incomplete_details is not None
        assert result.incomplete_details.reason == "max_output_tokens"
        assert result.output_text == "Cut off mid"
        assert result.output[-1].status == "incomplete"


def test_refusal_is_a_refusal_content_part() -> None:
    plan = make_plan(TextPart("I can't help with that."), stop_reason="refusal")
    with client_for(replying(plan)) as client:
        response = client.responses.create(model="gpt-test", input="Hello")
    (message,) = response.output
    assert [(c.type, c.refusal) for c in message.content] == [("refusal", "I can't help with that.")]
    assert response.output_text == ""


@pytest.mark.parametrize("after", [0, 3, 7])
def test_mid_stream_error_after_k_events_raises_api_error(after: int) -> None:
    plan = make_plan(TextPart("one two three four five"), error=ErrorPlan(500, None, "boom", None, after_chunks=after))
    seen: list[str] = []
    with client_for(replying(plan)) as client:
        stream = client.responses.create(model="gpt-test", input="Hello", stream=True)
        with pytest.raises(openai.APIError, match="boom") as info:
            for event in stream:
                seen.append(event.type)
    assert len(seen) == after
    assert not isinstance(info.value, openai.APIStatusError)
    assert info.value.type == "server_error"
    event_line, data = raw_events(plan)[-1]
    assert (event_line, data["type"], data["sequence_number"]) == ("error", "error", after)
    assert (data["code"], data["message"], data["param"]) == ("server_error", "boom", None)


def test_mid_stream_error_never_follows_the_terminal_event() -> None:
    plan = make_plan(TextPart("short"), error=ErrorPlan(429, None, None, None, after_chunks=999))
    types = [data["type"] for _, data in raw_events(plan)]
    assert types[-1] == "error" and "response.completed" not in types
    assert raw_events(plan)[-1][1]["code"] == "rate_limit_exceeded"


def _error_client(status: int, type: str | None, message: str | None, param: str | None = None) -> openai.OpenAI:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            status,
            headers={"content-type": "application/json", "x-request-id": "req_123"},
            content=codec.render_error(status, type, message, param),
        )

    return client_for(handler)


@pytest.mark.parametrize(
    ("status", "error_class", "type", "code"),
    [
        (400, openai.BadRequestError, "invalid_request_error", None),
        (401, openai.AuthenticationError, "invalid_request_error", "invalid_api_key"),
        (404, openai.NotFoundError, "invalid_request_error", "model_not_found"),
        (429, openai.RateLimitError, "requests", "rate_limit_exceeded"),
        (500, openai.InternalServerError, "server_error", None),
        (503, openai.InternalServerError, "server_error", None),
    ],
)
def test_render_error_defaults_make_the_sdk_raise(
    status: int, error_class: type[Exception], type: str, code: str | None
) -> None:
    with _error_client(status, None, None) as client:
        with pytest.raises(error_class) as info:
            client.responses.create(model="gpt-test", input="Hello")
    error = info.value
    assert isinstance(error, openai.APIStatusError)
    assert (error.status_code, error.type, error.code) == (status, type, code)
    assert error.request_id == "req_123"
    assert isinstance(error.body, dict) and error.body["message"]


def test_render_error_keeps_the_given_message_type_and_param() -> None:
    with _error_client(400, "invalid_request_error", "Bad input.", "input") as client:
        with pytest.raises(openai.BadRequestError, match="Bad input.") as info:
            client.responses.create(model="gpt-test", input="Hello")
    assert info.value.param == "input"
    assert json.loads(codec.render_error(503, None, None)) == {
        "error": {
            "message": "The engine is currently overloaded, please try again later.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }


def _call(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "get_weather", "arguments": "{}"}


def _output(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "sunny"}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


REJECTED = {
    "not an object": (["model"], None, "expected a JSON object"),
    "missing model": ({"input": "Hi"}, "model", "Missing required parameter: 'model'."),
    "missing input": ({"model": "m"}, "input", "Missing required parameter: 'input'."),
    "input of wrong type": ({"model": "m", "input": {"role": "user"}}, "input", "Invalid type for 'input'"),
    "orphan output": (
        {"model": "m", "input": [_user("Hi"), _output("call_x")]},
        "input",
        "No tool call found for function call output with call_id call_x.",
    ),
    "call unanswered at the end": (
        {"model": "m", "input": [_user("Hi"), _call("call_x")]},
        "input",
        "No tool output found for function call call_x.",
    ),
    "call unanswered before user": (
        {"model": "m", "input": [_user("Hi"), _call("call_x"), _user("And?")]},
        "input",
        "No tool output found for function call call_x.",
    ),
}


@pytest.mark.parametrize(("body", "param", "message"), REJECTED.values(), ids=REJECTED.keys())
def test_read_request_rejects_what_the_api_rejects(body: Any, param: str | None, message: str) -> None:
    with pytest.raises(RequestRejected) as info:
        codec.read_request(body, lenient=False)
    assert info.value.status == 400
    assert info.value.param == param
    assert message in info.value.message


def test_lenient_skips_only_the_pairing_checks() -> None:
    codec.read_request({"model": "m", "input": [_output("call_x")]}, lenient=True)
    codec.read_request({"model": "m", "input": [_call("call_x")]}, lenient=True)
    with pytest.raises(RequestRejected):
        codec.read_request({"model": "m"}, lenient=True)


def test_the_sdk_can_send_back_what_it_received() -> None:
    """A tool loop: the first reply's output items go back in the next request's input."""
    first = make_plan(
        TextPart("Let me check."),
        ToolCallPart("call_a", "get_weather", WEATHER_ARGS),
        reasoning="Weather needed.",
        stop_reason="tool_use",
    )
    second = make_plan(TextPart("It is sunny."), response_id="77aa01")
    with client_for(replying(first)) as client:
        previous = client.responses.create(model="gpt-test", input="Weather?")
    history: list[Any] = [
        _user("Weather?"),
        *(i.model_dump(exclude_none=True) for i in previous.output),
        _output("call_a"),
    ]
    with client_for(replying(second)) as client:
        answer = client.responses.create(model="gpt-test", input=history)
    assert answer.output_text == "It is sunny."
    assert answer.id == "resp_77aa01"


def test_async_client_streams_to_a_final_response() -> None:
    plan = make_plan(
        TextPart("Async hello."), ToolCallPart("call_a", "get_weather", WEATHER_ARGS), stop_reason="tool_use"
    )
    handler = replying(plan)

    async def run() -> Any:
        http_client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
        async with openai.AsyncOpenAI(
            api_key="test", base_url="http://mock.test/v1", http_client=http_client, max_retries=0
        ) as client:
            async with client.responses.stream(model="gpt-test", input="Hello") as stream:
                return await stream.get_final_response()

    final = asyncio.run(run())
    assert final.output_text == "Async hello."
    assert final.output[-1].call_id == "call_a"


def test_same_plan_gives_the_same_bytes() -> None:
    plan = RICH_PLANS["reasoning+calls"]
    other = OpenAIResponsesCodec()
    assert codec.render_events(plan, BODY) == other.render_events(plan, BODY)
    assert codec.render_json(plan, BODY) == other.render_json(plan, BODY)
    renamed = make_plan(*plan.parts, reasoning=plan.reasoning, stop_reason="tool_use", response_id="ffff00")
    assert codec.render_json(renamed, BODY) != codec.render_json(plan, BODY)


def test_request_settings_are_echoed_in_the_response() -> None:
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}, "strict": True}]
    body = {
        **BODY,
        "instructions": "Be brief.",
        "tools": tools,
        "tool_choice": "required",
        "temperature": 0.2,
        "parallel_tool_calls": False,
    }
    response = Response.model_validate(json.loads(codec.render_json(make_plan(TextPart("ok")), body)))
    assert (response.instructions, response.tool_choice, response.temperature, response.parallel_tool_calls) == (
        "Be brief.",
        "required",
        0.2,
        False,
    )
    assert [t.name for t in response.tools] == ["get_weather"]


def test_wants_stream_only_when_stream_is_true() -> None:
    assert codec.wants_stream({**BODY, "stream": True})
    assert not codec.wants_stream({**BODY, "stream": False})
    assert not codec.wants_stream({**BODY, "stream": "true"})
    assert not codec.wants_stream(BODY)


def test_codec_identity_and_conversation() -> None:
    assert (codec.name, codec.route, codec.request_id_header, codec.tool_call_prefix) == (
        "openai-responses",
        "/responses",
        "x-request-id",
        "call",
    )
    body = {
        "model": "m",
        "instructions": "Sys",
        "input": [
            _user("Hi"),
            {"type": "reasoning", "summary": []},
            _call("c1"),
            _output("c1"),
            {"type": "item_reference", "id": "x"},
            {"type": "message", "role": "developer", "content": "D"},
        ],
    }
    assert codec.read(body).messages == (
        Message("system"),
        Message("user", "Hi", position=0),
        Message("assistant", position=1),
        Message("assistant", tool_calls=("c1",), position=2),
        Message("tool", tool_results=("c1",), position=3),
        Message("system", position=5),
    )
