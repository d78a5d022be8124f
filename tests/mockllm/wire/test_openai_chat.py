"""The Chat Completions codec, read back through the real ``openai`` SDK."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from mockllm._exceptions import RequestRejected
from mockllm._plan import ErrorPlan, ReplyPart, ReplyPlan, TextPart, ToolCallPart, Usage
from mockllm._wire.openai_chat import openai_chat
from tests.mockllm.wire.wire_support import rendered

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

MESSAGES = [{"role": "user", "content": "hi"}]
WEATHER_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    }
    for name in ("get_weather", "get_time")
]


def make_plan(
    *parts: ReplyPart,
    reasoning: str | None = None,
    stop_reason: str = "end_turn",
    error: ErrorPlan | None = None,
    chunk_words: int = 1,
) -> ReplyPlan:
    return ReplyPlan(
        reasoning=reasoning,
        parts=tuple(parts),
        stop_reason=stop_reason,
        usage=Usage(input_tokens=11, output_tokens=7),
        response_id="0123abcd",
        created=1_700_000_000,
        chunk_words=chunk_words,
        error=error,
    )


def weather_call(city: str = "Paris", call_id: str = "call_1", name: str = "get_weather") -> ToolCallPart:
    return ToolCallPart(id=call_id, name=name, arguments=json.dumps({"city": city}, separators=(",", ":")))


class Recorder:
    """An httpx2 handler that answers every request with ``plan`` through the codec."""

    def __init__(self, plan: ReplyPlan, status: int | None = None, error_body: bytes = b"") -> None:
        self.plan = plan
        self.status = status
        self.error_body = error_body
        self.bodies: list[dict[str, Any]] = []
        self.events: list[bytes] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        assert request.url.path == "/v1" + openai_chat.route
        body = json.loads(request.content)
        self.bodies.append(body)
        if self.status is not None:
            return httpx2.Response(
                self.status,
                headers={"content-type": "application/json", "x-request-id": "req_1"},
                content=self.error_body,
            )
        response = rendered(openai_chat, self.plan, body)
        if openai_chat.wants_stream(body) and response.status_code == 200:
            self.events = openai_chat.render_events(self.plan, body)  # the same bytes again
        return response

    def chunks(self) -> list[dict[str, Any]]:
        """The JSON payloads of the streamed events, ``[DONE]`` left out."""
        payloads = [e.decode().removeprefix("data: ").rstrip("\n") for e in self.events]
        return [json.loads(p) for p in payloads if p != "[DONE]"]


def make_client(recorder: Recorder) -> openai.OpenAI:
    return openai.OpenAI(
        api_key="test",
        base_url="http://mock.test/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(recorder)),
    )


def test_text_stream_accumulates_to_the_exact_text() -> None:
    text = "Hello there,  general\nKenobi. "
    recorder = Recorder(make_plan(TextPart(text)))
    stream = make_client(recorder).chat.completions.create(model="gpt-x", messages=MESSAGES, stream=True)
    chunks = list(stream)

    assert "".join(c.choices[0].delta.content or "" for c in chunks) == text
    assert [c.choices[0].delta.role for c in chunks].count("assistant") == 1
    assert {(c.id, c.created, c.model, c.system_fingerprint) for c in chunks} == {
        ("chatcmpl-0123abcd", 1_700_000_000, "gpt-x", "fp_mockllm")
    }
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.choices[0].finish_reason is None for c in chunks[:-1])
    assert recorder.events[-1] == b"data: [DONE]\n\n"
    assert all("usage" not in c and c["choices"][0]["logprobs"] is None for c in recorder.chunks())


def test_stream_helper_final_completion_has_text_and_tool_calls() -> None:
    call = ToolCallPart(id="call_abc", name="get_weather", arguments='{"city":"San Francisco, CA","unit":"celsius"}')
    recorder = Recorder(make_plan(TextPart("Let me check."), call, stop_reason="tool_use"))
    with make_client(recorder).chat.completions.stream(model="gpt-x", messages=MESSAGES) as stream:
        final = stream.get_final_completion()

    message = final.choices[0].message
    assert message.content == "Let me check."
    assert final.choices[0].finish_reason == "tool_calls"
    assert [(c.id, c.type, c.function.name) for c in message.tool_calls or []] == [
        ("call_abc", "function", "get_weather")
    ]
    assert json.loads(message.tool_calls[0].function.arguments) == {"city": "San Francisco, CA", "unit": "celsius"}


def test_parallel_tool_calls_are_split_mid_token_and_never_interleaved() -> None:
    calls = [weather_call("Paris", "call_1"), weather_call("Reykjavik", "call_2", "get_time")]
    recorder = Recorder(make_plan(*calls, stop_reason="tool_use"))
    done: list[tuple[int, str, Any]] = []
    with make_client(recorder).chat.completions.stream(
        model="gpt-x",
        messages=MESSAGES,
        tools=WEATHER_TOOLS,  # type: ignore[arg-type]
    ) as stream:
        for event in stream:
            if event.type == "tool_calls.function.arguments.done":
                done.append((event.index, event.name, event.parsed_arguments))
        final = stream.get_final_completion()

    assert done == [(0, "get_weather", {"city": "Paris"}), (1, "get_time", {"city": "Reykjavik"})]
    tool_calls = final.choices[0].message.tool_calls or []
    assert [(c.id, c.function.name, c.function.parsed_arguments) for c in tool_calls] == [
        ("call_1", "get_weather", {"city": "Paris"}),
        ("call_2", "get_time", {"city": "Reykjavik"}),
    ]
    pieces = [tc for c in recorder.chunks() for tc in c["choices"][0]["delta"].get("tool_calls", [])]
    indexes = [p["index"] for p in pieces]
    assert indexes == sorted(indexes)
    for index, call in enumerate(calls):
        first, *rest = [p for p in pieces if p["index"] == index]
        assert first == {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        assert len(rest) >= 2
        assert all(set(p) == {"index", "function"} and set(p["function"]) == {"arguments"} for p in rest)
        assert "".join(p["function"]["arguments"] for p in rest) == call.arguments


def test_text_scripted_after_a_tool_call_is_sent_before_it() -> None:
    recorder = Recorder(make_plan(weather_call(), TextPart("after"), stop_reason="tool_use"))
    with make_client(recorder).chat.completions.stream(model="gpt-x", messages=MESSAGES) as stream:
        final = stream.get_final_completion()
    deltas = [c["choices"][0]["delta"] for c in recorder.chunks()]
    assert final.choices[0].message.content == "after"
    assert deltas.index({"content": "after"}) < next(i for i, d in enumerate(deltas) if "tool_calls" in d)


@pytest.mark.parametrize(
    ("stop_reason", "finish_reason"),
    [
        ("end_turn", "stop"),
        ("tool_use", "tool_calls"),
        ("max_tokens", "length"),
        ("stop_sequence", "stop"),
        ("content_filter", "content_filter"),
        ("refusal", "stop"),
    ],
)
def test_finish_reason_mapping(stop_reason: str, finish_reason: str) -> None:
    client = make_client(Recorder(make_plan(TextPart("x"), stop_reason=stop_reason)))
    chunks = list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))
    completion = client.chat.completions.create(model="m", messages=MESSAGES)
    assert chunks[-1].choices[0].finish_reason == finish_reason
    assert completion.choices[0].finish_reason == finish_reason


def test_unknown_stop_reason_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="'paused'"):
        openai_chat.render_json(make_plan(TextPart("x"), stop_reason="paused"), {"model": "m"})


def test_include_usage_adds_a_last_chunk_without_choices() -> None:
    recorder = Recorder(make_plan(TextPart("two words")))
    chunks = list(
        make_client(recorder).chat.completions.create(
            model="m", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
    )

    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens, chunks[-1].usage.total_tokens) == (
        11,
        7,
        18,
    )
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert all(c["usage"] is None for c in recorder.chunks()[:-1])


def test_non_streaming_completion() -> None:
    recorder = Recorder(make_plan(TextPart("Sure. "), TextPart("Calling."), weather_call(), stop_reason="tool_use"))
    completion = make_client(recorder).chat.completions.create(model="gpt-x", messages=MESSAGES)

    assert (completion.id, completion.object, completion.model) == ("chatcmpl-0123abcd", "chat.completion", "gpt-x")
    choice = completion.choices[0]
    assert choice.message.content == "Sure. Calling."
    assert choice.finish_reason == "tool_calls"
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in choice.message.tool_calls or []] == [
        ("call_1", "get_weather", {"city": "Paris"})
    ]
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens, completion.usage.total_tokens) == (
        11,
        7,
        18,
    )


def test_tool_calls_only_have_null_content_streamed_or_not() -> None:
    client = make_client(Recorder(make_plan(weather_call(), stop_reason="tool_use")))
    completion = client.chat.completions.create(model="m", messages=MESSAGES)
    with client.chat.completions.stream(model="m", messages=MESSAGES) as stream:
        final = stream.get_final_completion()
    assert completion.choices[0].message.content is None
    assert final.choices[0].message.content is None
    assert (
        "tool_calls"
        not in json.loads(openai_chat.render_json(make_plan(TextPart("x")), {"model": "m"}))["choices"][0]["message"]
    )


def test_reasoning_content_is_streamed_first_and_kept_as_an_extra() -> None:
    client = make_client(Recorder(make_plan(TextPart("Answer."), reasoning="Think hard first.")))
    chunks = list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))
    reasoning = [(c.choices[0].delta.model_extra or {}).get("reasoning_content") for c in chunks]
    first_text = next(i for i, c in enumerate(chunks) if c.choices[0].delta.content)
    completion = client.chat.completions.create(model="m", messages=MESSAGES)

    assert "".join(r for r in reasoning if r) == "Think hard first."
    assert max(i for i, r in enumerate(reasoning) if r) < first_text
    assert completion.choices[0].message.reasoning_content == "Think hard first."


def test_mid_stream_error_raises_api_error_after_k_chunks() -> None:
    error = ErrorPlan(status=500, type="server_error", message="boom", retry_after_ms=None, after_chunks=3)
    recorder = Recorder(make_plan(TextPart("one two three four five"), error=error))
    received = []
    with pytest.raises(openai.APIError, match="boom") as excinfo:
        for chunk in make_client(recorder).chat.completions.create(model="m", messages=MESSAGES, stream=True):
            received.append(chunk)
    assert len(received) == 3
    assert not isinstance(excinfo.value, openai.APIStatusError)
    assert len(recorder.events) == 4
    assert json.loads(recorder.events[-1].removeprefix(b"data: ")) == {
        "error": {"message": "boom", "type": "server_error", "param": None, "code": None}
    }


def test_mid_stream_error_defaults_to_the_usual_message_for_its_status() -> None:
    error = ErrorPlan(status=503, type=None, message=None, retry_after_ms=None, after_chunks=0)
    events = openai_chat.render_events(make_plan(TextPart("x"), error=error), {"model": "m"})
    assert events == [
        b'data: {"error":{"message":"The engine is currently overloaded, please try again '
        b'later.","type":"server_error","param":null,"code":null}}\n\n'
    ]


@pytest.mark.parametrize(
    ("status", "error_type", "message", "exception"),
    [
        (400, None, "Bad thing.", openai.BadRequestError),
        (401, None, None, openai.AuthenticationError),
        (404, None, None, openai.NotFoundError),
        (429, None, None, openai.RateLimitError),
        (429, "tokens", "Slow down on tokens.", openai.RateLimitError),
        (500, None, None, openai.InternalServerError),
        (503, None, None, openai.InternalServerError),
    ],
)
def test_error_bodies_raise_the_sdk_exception_for_their_status(
    status: int, error_type: str | None, message: str | None, exception: type[openai.APIStatusError]
) -> None:
    body = openai_chat.render_error(status, error_type, message, param="messages" if status == 400 else None)
    client = make_client(Recorder(make_plan(), status=status, error_body=body))
    with pytest.raises(exception) as excinfo:
        client.chat.completions.create(model="m", messages=MESSAGES)
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert excinfo.value.status_code == status
    assert excinfo.value.request_id == "req_1"
    assert error["message"] in excinfo.value.message
    if message is not None:
        assert error["message"] == message
    if error_type is not None:
        assert error["type"] == error_type


def test_default_error_fields_by_status() -> None:
    def error(status: int) -> dict[str, Any]:
        return json.loads(openai_chat.render_error(status, None, None))["error"]

    assert error(429) == {
        "message": "Rate limit reached for requests. Please try again later.",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
    assert error(500)["message"] == ("The server had an error while processing your request. Sorry about that!")
    assert (error(500)["type"], error(502)["type"], error(418)["type"]) == (
        "server_error",
        "server_error",
        "invalid_request_error",
    )
    assert error(401)["code"] == "invalid_api_key"


def assistant_call(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids],
    }


def tool_result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding "
    "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
)
ORPHAN = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."


@pytest.mark.parametrize(
    ("body", "param", "message"),
    [
        ([1, 2], None, "We could not parse the JSON body"),
        ({"messages": MESSAGES}, None, "you must provide a model parameter"),
        ({"model": 3, "messages": MESSAGES}, "model", "Invalid type for 'model'"),
        ({"model": "m"}, "messages", "Missing required parameter: 'messages'."),
        ({"model": "m", "messages": []}, "messages", "Invalid 'messages': empty array."),
        ({"model": "m", "messages": "hi"}, "messages", "Invalid type for 'messages'"),
        ({"model": "m", "messages": [MESSAGES[0], "hi"]}, "messages[1]", "Invalid type for 'messages[1]'"),
        (
            {"model": "m", "messages": [{"content": "hi"}]},
            "messages[0].role",
            "Missing required parameter: 'messages[0].role'.",
        ),
        (
            {"model": "m", "messages": [{"role": "robot", "content": "hi"}]},
            "messages[0].role",
            "Invalid value: \"robot\". Supported values are: 'system', 'assistant', 'user', 'function', "
            "'tool', and 'developer'.",
        ),
        (
            {"model": "m", "messages": MESSAGES, "stream_options": {"include_usage": True}},
            "stream_options",
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        ),
        ({"model": "m", "messages": [*MESSAGES, tool_result("call_x")]}, "messages.[1].role", ORPHAN),
        (
            {
                "model": "m",
                "messages": [
                    {"role": "system", "content": "s"},
                    *MESSAGES,
                    assistant_call("call_a", "call_b"),
                    tool_result("call_a"),
                    {"role": "user", "content": "next"},
                ],
            },
            "messages.[2].role",
            UNANSWERED + "call_b",
        ),
        (
            {"model": "m", "messages": [*MESSAGES, assistant_call("call_a", "call_b")]},
            "messages.[1].role",
            UNANSWERED + "call_a, call_b",
        ),
    ],
)
def test_read_request_rejects_what_openai_rejects(body: Any, param: str | None, message: str) -> None:
    with pytest.raises(RequestRejected) as excinfo:
        openai_chat.read_request(body, lenient=False)
    assert excinfo.value.status == 400
    assert excinfo.value.param == param
    assert excinfo.value.message.startswith(message)


def test_read_request_accepts_a_paired_tool_loop_and_n() -> None:
    body = {
        "model": "m",
        "n": 2,
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [*MESSAGES, assistant_call("call_a"), tool_result("call_a")],
    }
    conversation = openai_chat.read_request(body, lenient=False)
    assert [(m.role, m.position) for m in conversation.messages] == [("user", 0), ("assistant", 1), ("tool", 2)]


def test_lenient_skips_only_the_pairing_check() -> None:
    orphan = {"model": "m", "messages": [*MESSAGES, tool_result("call_x")]}
    openai_chat.read_request(orphan, lenient=True)
    with pytest.raises(RequestRejected, match="you must provide a model parameter"):
        openai_chat.read_request({"messages": MESSAGES}, lenient=True)


def test_wants_stream_only_for_true() -> None:
    assert openai_chat.wants_stream({"stream": True})
    assert not openai_chat.wants_stream({"stream": "true"})
    assert not openai_chat.wants_stream({})


def test_same_plan_gives_the_same_bytes() -> None:
    plan = make_plan(
        TextPart("Some text here."),
        weather_call(),
        weather_call("Oslo", "call_2"),
        reasoning="hmm ok",
        stop_reason="tool_use",
        chunk_words=2,
    )
    body = {"model": "m", "messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}}
    assert openai_chat.render_events(plan, body) == openai_chat.render_events(plan, body)
    assert openai_chat.render_json(plan, body) == openai_chat.render_json(plan, body)
    assert openai_chat.render_error(429, None, None) == openai_chat.render_error(429, None, None)


async def _async_stream(recorder: Recorder) -> tuple[str, list[str]]:
    client = openai.AsyncOpenAI(
        api_key="test",
        base_url="http://mock.test/v1",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(recorder)),
    )
    async with client.chat.completions.stream(model="m", messages=MESSAGES) as stream:
        final = await stream.get_final_completion()
    await client.close()
    message = final.choices[0].message
    return message.content or "", [c.function.name for c in message.tool_calls or []]


def test_async_client_streams_text_and_tool_calls() -> None:
    import asyncio

    recorder = Recorder(make_plan(TextPart("Async hello."), weather_call(), stop_reason="tool_use"))
    assert asyncio.run(_async_stream(recorder)) == ("Async hello.", ["get_weather"])


@pytest.mark.parametrize("model", ["m", "\x00mockllm:content\x00"])
def test_several_text_parts_make_one_content_whatever_the_model_name_echoes(model: str) -> None:
    parts = (TextPart('héllo "quoted"\n'), ToolCallPart("call_1", "f", "{}"), TextPart("and\tmore"))
    rendered = openai_chat.render_json(make_plan(*parts), {"model": model})
    completion = json.loads(rendered)
    assert completion["model"] == model
    assert completion["choices"][0]["message"]["content"] == 'héllo "quoted"\nand\tmore'
    # The same bytes as one text part holding the joined text.
    assert rendered == openai_chat.render_json(
        make_plan(TextPart('héllo "quoted"\nand\tmore'), parts[1]), {"model": model}
    )
