"""The Bedrock codecs' bytes and rules, through the engine: ``Converse`` JSON and the
``ConverseStream`` event stream, Bedrock's errors and validation, faults, ``InvokeModel``
with Anthropic bodies, and the properties every protocol has (determinism, turn counting
from assistant messages, a fallback and never a 5xx)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm import MockLLM
from mockllm._wire.eventstream import decode_messages
from tests.mockllm.conversation_support import (
    assistant,
    chain,
    results,
    tagged,
    text_step,
    to_anthropic,
    to_bedrock,
    to_bedrock_invoke,
    user,
)
from tests.mockllm.fuzz_strategies import json_values

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
CONVERSE, STREAM = f"/model/{MODEL}/converse", f"/model/{MODEL}/converse-stream"
INVOKE, INVOKE_STREAM = f"/model/{MODEL}/invoke", f"/model/{MODEL}/invoke-with-response-stream"
SCRIPT = chain(text_step("one", length=5), text_step("two", length=3))
TOOLS = {"tools": [{"toolSpec": {"name": "fetch", "inputSchema": {"json": {"type": "object"}}}}]}
THINKING = {"additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}}}
CALL_THEN_TEXT = chain(
    {
        "id": "call",
        "reasoning": {"length": 4},
        "messages": [
            {"text_message": {"text": "Let me look."}},
            {"tool_call": [{"name": "fetch", "args": {"q": [1]}}]},
        ],
    }
)


def _post(mock: MockLLM, path: str, body: Any, headers: dict[str, str] | None = None) -> Any:
    return mock.handle("POST", path, headers or {}, json.dumps(body).encode())


def _events(reply: Any) -> list[tuple[str, Any]]:
    """The stream's events: (event or exception type, parsed payload)."""
    out = []
    for message in decode_messages(reply.body):
        kind = message.headers.get(":event-type") or message.headers[":exception-type"]
        out.append((kind, json.loads(message.payload)))
    return out


def _user(script: Any, **body: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": [{"text": tagged(script)}]}], **body}


def test_tool_results_are_no_user_turn_and_the_assistant_message_is_the_turn() -> None:
    mock = MockLLM()
    body = to_bedrock(
        [user(tagged(SCRIPT)), assistant(None, [("tooluse_1", "fetch", {"q": 1})]), results(("tooluse_1", "ok"))]
    )
    reply = _post(mock, CONVERSE, {**body, "toolConfig": TOOLS})
    assert reply.status == 200 and mock.journal[-1].turn_index == 1 and mock.journal[-1].instruction_id == "two"
    assert mock.journal[-1].protocol == "bedrock-converse"
    content = json.loads(reply.body)["output"]["message"]["content"]
    assert len(content) == 1 and len(content[0]["text"].split()) == 3


def test_converse_carries_reasoning_text_and_tool_use_with_usage_and_metrics() -> None:
    reply = _post(MockLLM(), CONVERSE, _user(CALL_THEN_TEXT, toolConfig=TOOLS, **THINKING))
    answer = json.loads(reply.body)
    content = answer["output"]["message"]["content"]
    assert [next(iter(block)) for block in content] == ["reasoningContent", "text", "toolUse"]
    assert len(content[0]["reasoningContent"]["reasoningText"]["text"].split()) == 4
    assert content[0]["reasoningContent"]["reasoningText"]["signature"]
    assert content[2]["toolUse"]["name"] == "fetch" and content[2]["toolUse"]["input"] == {"q": [1]}
    assert content[2]["toolUse"]["toolUseId"].startswith("tooluse_")
    assert answer["stopReason"] == "tool_use"
    usage = answer["usage"]
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"] and usage["outputTokens"] > 0
    assert answer["metrics"]["latencyMs"] > 0
    headers = dict(reply.headers)
    assert headers["x-amzn-RequestId"] and headers["x-mockllm-protocol"] == "bedrock-converse"


def test_reasoning_only_when_the_request_asks_for_it() -> None:
    plain = json.loads(_post(MockLLM(), CONVERSE, _user(CALL_THEN_TEXT, toolConfig=TOOLS)).body)
    assert [next(iter(block)) for block in plain["output"]["message"]["content"]] == ["text", "toolUse"]
    nova = {"additionalModelRequestFields": {"reasoning_config": {"type": "enabled"}}}
    asked = json.loads(_post(MockLLM(), CONVERSE, _user(CALL_THEN_TEXT, toolConfig=TOOLS, **nova)).body)
    assert "reasoningContent" in asked["output"]["message"]["content"][0]


def test_the_stream_is_the_event_stream_of_the_same_reply() -> None:
    body = _user(CALL_THEN_TEXT, toolConfig=TOOLS, **THINKING)
    reply = _post(MockLLM(), STREAM, body)
    assert reply.streaming and dict(reply.headers)["content-type"] == "application/vnd.amazon.eventstream"
    events = _events(reply)
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "messageStart" and kinds[-2:] == ["messageStop", "metadata"]
    assert kinds.count("contentBlockStart") == 1  # tool uses only, as Bedrock sends it
    assert kinds.count("contentBlockStop") == 3
    whole = json.loads(_post(MockLLM(), CONVERSE, body).body)
    reasoning = "".join(
        e["delta"]["reasoningContent"].get("text", "")
        for k, e in events
        if e.get("contentBlockIndex") == 0 and k == "contentBlockDelta"
    )
    text = "".join(e["delta"]["text"] for k, e in events if k == "contentBlockDelta" and "text" in e["delta"])
    tool_input = "".join(
        e["delta"]["toolUse"]["input"] for k, e in events if k == "contentBlockDelta" and "toolUse" in e["delta"]
    )
    blocks = whole["output"]["message"]["content"]
    assert reasoning == blocks[0]["reasoningContent"]["reasoningText"]["text"]
    assert text == blocks[1]["text"] and json.loads(tool_input) == blocks[2]["toolUse"]["input"]
    start = next(e for k, e in events if k == "contentBlockStart")
    assert start == {
        "contentBlockIndex": 2,
        "start": {"toolUse": {k: blocks[2]["toolUse"][k] for k in ("toolUseId", "name")}},
    }
    assert events[-2][1] == {"stopReason": "tool_use"}
    assert events[-1][1] == {"usage": whole["usage"], "metrics": whole["metrics"]}


def test_after_chunks_ends_the_stream_with_an_exception_message() -> None:
    script = chain(
        {"id": "cut", "messages": [{"text_message": {"length": 9}}], "error": {"status": 429, "after_chunks": 3}}
    )
    events = _events(_post(MockLLM(), STREAM, _user(script)))
    assert [kind for kind, _ in events] == [
        "messageStart",
        "contentBlockDelta",
        "contentBlockDelta",
        "throttlingException",
    ]
    assert events[-1][1]["message"]


@pytest.mark.parametrize(
    ("error", "status", "exception"),
    [
        ({"status": 429}, 429, "ThrottlingException"),
        ({"status": 400}, 400, "ValidationException"),
        ({"status": 404}, 404, "ResourceNotFoundException"),
        ({"status": 424}, 424, "ModelErrorException"),
        ({"status": 500}, 500, "InternalServerException"),
        ({"status": 503}, 503, "ServiceUnavailableException"),
        ({"status": 500, "type": "ModelErrorException", "message": "boom"}, 500, "ModelErrorException"),
        ({"status": 429, "type": "rate_limit_error"}, 429, "ThrottlingException"),  # another provider's type
    ],
)
def test_a_scripted_error_is_bedrocks_message_and_error_type_header(
    error: dict[str, Any], status: int, exception: str
) -> None:
    reply = _post(MockLLM(), CONVERSE, _user(chain({"id": "e", "error": error})))
    headers = dict(reply.headers)
    assert reply.status == status
    assert headers["x-amzn-ErrorType"].split(":")[0] == exception and headers["x-amzn-RequestId"]
    body = json.loads(reply.body)
    assert list(body) == ["message"] and body["message"] == error.get("message", body["message"]) and body["message"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({}, "at 'messages' failed to satisfy constraint: Member must not be null"),
        ({"messages": []}, "A conversation must start with a user message"),
        ({"messages": [{"role": "robot", "content": [{"text": "x"}]}]}, "at 'messages.0.member.role'"),
        (
            {"messages": [{"role": "user", "content": []}]},
            "The content field in the Message object at messages.0 is empty",
        ),
        (
            {"messages": [{"role": "user", "content": [{"text": "x", "image": {}}]}]},
            "messages.0.content.0: a ContentBlock",
        ),
        ({"messages": [{"role": "assistant", "content": [{"text": "x"}]}]}, "must start with a user message"),
        (
            {"messages": [{"role": "user", "content": [{"text": "x"}]}], "inferenceConfig": {"maxTokens": 0}},
            "'inferenceConfig.maxTokens'",
        ),
        (
            {"messages": [{"role": "user", "content": [{"text": "x"}]}], "inferenceConfig": {"temperature": 3}},
            "'inferenceConfig.temperature'",
        ),
        (
            {"messages": [{"role": "user", "content": [{"text": "x"}]}], "toolConfig": {"tools": []}},
            "'toolConfig.tools'",
        ),
        (
            {
                "messages": [{"role": "user", "content": [{"text": "x"}]}],
                "toolConfig": {"tools": [{"toolSpec": {"name": "a b"}}]},
            },
            "'toolConfig.tools.0.member.toolSpec.name'",
        ),
        (
            to_bedrock([user("x"), assistant(None, [("t1", "fetch", {})]), results(("t1", "ok"))]),
            "The toolConfig field must be defined when using toolUse and toolResult content blocks",
        ),
        (
            {**to_bedrock([user("x"), assistant(None, [("t1", "fetch", {})]), user("no result")]), "toolConfig": TOOLS},
            "Expected toolResult blocks at messages.2.content for the following Ids: t1",
        ),
        (
            {"messages": [{"role": "user", "content": [{"text": "a"}]}, {"role": "user", "content": [{"text": "b"}]}]},
            "A conversation must alternate between user and assistant roles",
        ),
    ],
)
def test_invalid_requests_are_validation_exceptions_naming_the_field(body: dict[str, Any], words: str) -> None:
    reply = _post(MockLLM(), CONVERSE, body)
    assert reply.status == 400, reply.body
    assert dict(reply.headers)["x-amzn-ErrorType"].startswith("ValidationException:")
    assert words in json.loads(reply.body)["message"]


def test_lenient_skips_the_pairing_and_alternation_rules() -> None:
    body = {
        "messages": [
            {"role": "user", "content": [{"text": tagged(SCRIPT)}]},
            {"role": "user", "content": [{"text": "b"}]},
        ]
    }
    assert _post(MockLLM(lenient=True), CONVERSE, body).status == 200


def test_sigv4_headers_are_accepted_unchecked_and_a_model_arn_routes() -> None:
    headers = {
        "authorization": "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250101/us-east-1/bedrock/aws4_request, "
        "SignedHeaders=host;x-amz-date, Signature=0000",
        "x-amz-date": "20250101T000000Z",
    }
    arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-sonnet-20240620-v1:0"
    reply = _post(MockLLM(), f"/model/{arn}/converse", _user(SCRIPT), headers)
    assert reply.status == 200 and "text" in json.loads(reply.body)["output"]["message"]["content"][0]


def test_an_undeclared_tool_call_is_a_finding() -> None:
    mock = MockLLM()
    tools = {"tools": [{"toolSpec": {"name": "other", "inputSchema": {"json": {"type": "object"}}}}]}
    assert _post(mock, CONVERSE, _user(CALL_THEN_TEXT, toolConfig=tools)).status == 200
    assert [call.name for call in mock.journal[-1].undeclared_tool_calls] == ["fetch"]


# -- InvokeModel with Anthropic bodies ------------------------------------------------


def _invoke_body(script: Any, **extra: Any) -> dict[str, Any]:
    return {**to_bedrock_invoke([user(tagged(script))]), **extra}


def test_invoke_model_answers_the_anthropic_codecs_message_with_the_paths_model() -> None:
    mock = MockLLM()
    thinking = {"max_tokens": 2048, "thinking": {"type": "enabled", "budget_tokens": 1024}}
    reply = _post(mock, INVOKE, _invoke_body(CALL_THEN_TEXT, **thinking))
    message = json.loads(reply.body)
    assert reply.status == 200 and message["model"] == MODEL and mock.journal[-1].protocol == "bedrock-invoke"
    assert [block["type"] for block in message["content"]] == ["thinking", "text", "tool_use"]
    direct = {**to_anthropic([user(tagged(CALL_THEN_TEXT))]), "model": MODEL, **thinking}
    assert message == json.loads(_post(MockLLM(), "/v1/messages", direct).body)


def test_invoke_stream_wraps_each_anthropic_event_base64_in_a_chunk() -> None:
    reply = _post(MockLLM(), INVOKE_STREAM, _invoke_body(SCRIPT))
    messages = decode_messages(reply.body)
    assert {m.headers[":event-type"] for m in messages} == {"chunk"}
    events = [json.loads(base64.b64decode(json.loads(m.payload)["bytes"])) for m in messages]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"] and "ping" not in kinds
    assert events[-1]["amazon-bedrock-invocationMetrics"]["outputTokenCount"] == events[-2]["usage"]["output_tokens"]
    text = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
    assert len(text.split()) == 5


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"max_tokens": 10, "messages": []}, "required key [anthropic_version] not found"),
        (
            {"anthropic_version": "bedrock-2023-05-31", "model": "m", "max_tokens": 10, "messages": []},
            "extraneous key [model]",
        ),
        ({"anthropic_version": "bedrock-2023-05-31", "messages": []}, "max_tokens: Field required"),
    ],
)
def test_invoke_rejections_are_validation_exceptions(body: dict[str, Any], words: str) -> None:
    reply = _post(MockLLM(), INVOKE, body)
    assert reply.status == 400 and dict(reply.headers)["x-amzn-ErrorType"].startswith("ValidationException:")
    assert words in json.loads(reply.body)["message"]


def test_invoke_stream_cut_by_after_chunks_ends_with_an_exception() -> None:
    script = chain(
        {"id": "cut", "messages": [{"text_message": {"length": 9}}], "error": {"status": 503, "after_chunks": 2}}
    )
    messages = decode_messages(_post(MockLLM(), INVOKE_STREAM, _invoke_body(script)).body)
    assert [m.headers.get(":event-type") or m.headers[":exception-type"] for m in messages] == [
        "chunk",
        "chunk",
        "serviceUnavailableException",
    ]


# -- the properties every protocol has -------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([CONVERSE, STREAM, INVOKE, INVOKE_STREAM]), json_values)
def test_any_body_is_a_reply_or_a_4xx_never_a_5xx_and_the_same_twice(path: str, body: Any) -> None:
    first, again = _post(MockLLM(), path, body), _post(MockLLM(), path, body)
    assert first.status < 500 and first.body == again.body
    if first.status >= 400:
        assert list(json.loads(first.body)) == ["message"]
