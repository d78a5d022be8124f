"""Bedrock Runtime through boto3's ``bedrock-runtime`` client, unmodified, against the
loopback server (boto3 sends over urllib3, so HTTP only): ``converse`` and
``converse_stream``, a tool loop whose turns are counted from the history's assistant
messages, reasoning, a scripted error with ``times`` that boto3's own retry gets past,
an error mid-stream, a ``ValidationException``, and ``invoke_model`` /
``invoke_model_with_response_stream`` with an Anthropic body. SigV4 signs every request
with dummy credentials; the mock accepts it unchecked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from harness.golden.extension import golden_text
from harness.golden.records import VolatileRules
from harness.plugin.fixtures import MockLLMServer
from mockllm import MintedIds
from tests.mockllm.sdk_support import script

boto3 = pytest.importorskip("boto3", reason="boto3 is not installed (the test extra)")
from botocore.config import Config  # noqa: E402
from botocore.exceptions import ClientError, EventStreamError  # noqa: E402
from botocore.retries.standard import ExponentialBackoff  # noqa: E402

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
            }
        }
    ]
}
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
STREAM = pytest.mark.parametrize("stream", [False, True], ids=["converse", "converse_stream"])


@pytest.fixture
def server(mock_server_url: str) -> Iterator[MockLLMServer]:
    mock = MockLLMServer(mock_server_url, pid=-1)
    mock.reset()
    try:
        yield mock
    finally:
        mock.close()


def client(server: MockLLMServer, *, attempts: int = 1) -> Any:
    return boto3.client(
        "bedrock-runtime",
        endpoint_url=server.base_url,
        region_name="us-east-1",
        aws_access_key_id="AKIDMOCKLLM",
        aws_secret_access_key="not-a-secret",
        config=Config(retries={"mode": "standard", "max_attempts": attempts}),
    )


def converse(bedrock: Any, stream: bool, model_id: str = MODEL, **kwargs: Any) -> dict[str, Any]:
    """``converse``, or ``converse_stream`` folded into the same shape: the message's
    content blocks, the stop reason, usage and metrics."""
    if not stream:
        return bedrock.converse(modelId=model_id, **kwargs)
    blocks: dict[int, dict[str, Any]] = {}
    out: dict[str, Any] = {}
    for event in bedrock.converse_stream(modelId=model_id, **kwargs)["stream"]:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            blocks[start["contentBlockIndex"]] = {"toolUse": {**start["start"]["toolUse"], "input": ""}}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            block = blocks.setdefault(delta["contentBlockIndex"], {})
            if "text" in delta["delta"]:
                block["text"] = block.get("text", "") + delta["delta"]["text"]
            elif "toolUse" in delta["delta"]:
                block["toolUse"]["input"] += delta["delta"]["toolUse"]["input"]
            else:
                reasoning = block.setdefault("reasoningContent", {"reasoningText": {"text": ""}})["reasoningText"]
                reasoning["text"] += delta["delta"]["reasoningContent"].get("text", "")
                if "signature" in delta["delta"]["reasoningContent"]:
                    reasoning["signature"] = delta["delta"]["reasoningContent"]["signature"]
        elif "messageStop" in event:
            out["stopReason"] = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            out.update(event["metadata"])
    for block in blocks.values():
        if "toolUse" in block:
            block["toolUse"]["input"] = json.loads(block["toolUse"]["input"])
    out["output"] = {"message": {"role": "assistant", "content": [blocks[i] for i in sorted(blocks)]}}
    return out


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text}]}


@STREAM
def test_a_tool_loop_counts_turns_from_assistant_messages(server: MockLLMServer, stream: bool) -> None:
    bedrock = client(server)
    messages = [user(LOOP)]
    first = converse(bedrock, stream, messages=messages, toolConfig=TOOLS)
    content = first["output"]["message"]["content"]
    assert first["stopReason"] == "tool_use"
    assert content[0] == {"text": "Let me check."}
    call = content[1]["toolUse"]
    assert (call["name"], call["input"]) == ("get_weather", {"city": "Paris"})
    messages.append(first["output"]["message"])
    result = {"toolResult": {"toolUseId": call["toolUseId"], "content": [{"json": {"sky": "sunny"}}]}}
    messages.append({"role": "user", "content": [result]})
    second = converse(bedrock, stream, messages=messages, toolConfig=TOOLS)
    assert second["output"]["message"]["content"] == [{"text": "It is sunny in Paris."}]
    assert second["stopReason"] == "end_turn"
    usage = second["usage"]
    assert usage["inputTokens"] > first["usage"]["inputTokens"] > 0 and usage["outputTokens"] > 0
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]
    assert second["metrics"]["latencyMs"] > 0
    assert [(e.protocol, e.turn_index, e.instruction_id, e.stream) for e in server.journal] == [
        ("bedrock-converse", 0, "look-up", stream),
        ("bedrock-converse", 1, "answer", stream),
    ]
    assert server.findings().counts == {}


@STREAM
def test_reasoning_content_when_thinking_is_asked_for(server: MockLLMServer, stream: bool) -> None:
    chain = script({"id": "think", "reasoning": {"length": 6}, "messages": [{"text_message": {"length": 4}}]})
    thinking = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    bedrock = client(server)
    asked = converse(bedrock, stream, messages=[user(chain)], additionalModelRequestFields=thinking)
    reasoning, text = asked["output"]["message"]["content"]
    assert len(reasoning["reasoningContent"]["reasoningText"]["text"].split()) == 6
    assert reasoning["reasoningContent"]["reasoningText"]["signature"]
    assert len(text["text"].split()) == 4
    plain = converse(bedrock, stream, messages=[user(chain)], system=[{"text": "Be brief."}])
    assert [list(block) for block in plain["output"]["message"]["content"]] == [["text"]]


def test_a_throttling_error_with_times_is_retried_by_boto3(
    server: MockLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # boto3 backs off a throttling error by a random share of 1 s (its jitter): here of
    # 10 ms, so that the test waits for boto3's own retry, not for the jitter.
    monkeypatch.setitem(ExponentialBackoff._DEFAULT_BACKOFF_CONFIG, "throttling_base_scale", 0.01)
    chain = script({"id": "busy", "error": {"status": 429, "times": 1}, "messages": [{"text_message": {"text": "ok"}}]})
    answer = client(server, attempts=3).converse(modelId=MODEL, messages=[user(chain)])
    assert answer["output"]["message"]["content"] == [{"text": "ok"}]
    assert answer["ResponseMetadata"]["RetryAttempts"] == 1
    assert [(e.status, e.attempt) for e in server.journal] == [(429, 0), (200, 1)]


def test_an_error_without_retries_is_the_exception_boto3_names(server: MockLLMServer) -> None:
    chain = script({"id": "down", "error": {"status": 503, "message": "Try later."}})
    with pytest.raises(ClientError) as caught:
        client(server).converse(modelId=MODEL, messages=[user(chain)])
    error = caught.value.response
    assert error["Error"] == {"Code": "ServiceUnavailableException", "Message": "Try later."}
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 503 and error["ResponseMetadata"]["RequestId"]


def test_an_error_mid_stream_is_boto3s_event_stream_error(server: MockLLMServer) -> None:
    chain = script(
        {"id": "cut", "error": {"status": 429, "after_chunks": 3}, "messages": [{"text_message": {"length": 9}}]}
    )
    events = []
    with pytest.raises(EventStreamError) as caught:
        for event in client(server).converse_stream(modelId=MODEL, messages=[user(chain)])["stream"]:
            events.append(event)
    assert [next(iter(e)) for e in events] == ["messageStart", "contentBlockDelta", "contentBlockDelta"]
    assert caught.value.response["Error"]["Code"] == "throttlingException"


def test_an_invalid_request_is_a_validation_exception_naming_the_field(server: MockLLMServer) -> None:
    bedrock = client(server)
    call = {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {}}}
    messages = [user("hi"), {"role": "assistant", "content": [call]}, user("what now?")]
    with pytest.raises(bedrock.exceptions.ValidationException) as caught:
        bedrock.converse(modelId=MODEL, messages=messages, toolConfig=TOOLS)
    assert caught.value.response["Error"]["Message"] == (
        "Expected toolResult blocks at messages.2.content for the following Ids: tooluse_1"
    )
    assert server.findings().counts  # an unscripted 4xx: the verdict sees it


def anthropic_body(prompt: str) -> str:
    return json.dumps(
        {
            "anthropic_version": "bedrock-2023-05-31",
            "max_tokens": 512,
            "messages": [{"role": "user", "content": prompt}],
            "tools": [{"name": "get_weather", "input_schema": TOOLS["tools"][0]["toolSpec"]["inputSchema"]["json"]}],
        }
    )


def test_invoke_model_with_an_anthropic_body(server: MockLLMServer) -> None:
    reply = client(server).invoke_model(modelId=MODEL, body=anthropic_body(LOOP))
    assert reply["contentType"] == "application/json"
    message = json.loads(reply["body"].read())
    assert message["model"] == MODEL and message["stop_reason"] == "tool_use"
    assert [block["type"] for block in message["content"]] == ["text", "tool_use"]
    assert message["content"][1]["input"] == {"city": "Paris"}
    assert server.journal[-1].protocol == "bedrock-invoke"


def test_invoke_model_with_response_stream_carries_anthropic_events(server: MockLLMServer) -> None:
    reply = client(server).invoke_model_with_response_stream(modelId=MODEL, body=anthropic_body(LOOP))
    events = [json.loads(event["chunk"]["bytes"]) for event in reply["body"]]
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    text = "".join(e["delta"].get("text", "") for e in events if e["type"] == "content_block_delta")
    arguments = "".join(e["delta"].get("partial_json", "") for e in events if e["type"] == "content_block_delta")
    assert text == "Let me check." and json.loads(arguments) == {"city": "Paris"}
    metrics = events[-1]["amazon-bedrock-invocationMetrics"]
    assert metrics["outputTokenCount"] > 0 and metrics["inputTokenCount"] > 0


PROFILE = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-sonnet-20240620-v1:0"


def said(text: str) -> list[dict[str, Any]]:
    return [{"id": text.split()[0].lower(), "messages": [{"text_message": {"text": text}}]}]


@STREAM
def test_a_script_matching_on_model_answers_the_model_id_in_the_path(server: MockLLMServer, stream: bool) -> None:
    nova = server.script(said("Nova answers."), match={"model": "amazon.nova-pro-v1:0"})
    sonnet = server.script(said("Sonnet answers."), match={"model": MODEL})
    profile = server.script(said("Profile answers."), match={"model": PROFILE})
    try:
        bedrock = client(server)
        for model_id, text in ((MODEL, "Sonnet answers."), (PROFILE, "Profile answers.")):
            reply = converse(bedrock, stream, model_id, messages=[user("What is the weather?")])
            assert reply["output"]["message"]["content"] == [{"text": text}]
        invoked = bedrock.invoke_model(modelId=MODEL, body=anthropic_body("What is the weather?"))
        assert json.loads(invoked["body"].read())["content"] == [{"type": "text", "text": "Sonnet answers."}]
        journal = server.journal
        assert [(e.protocol, e.model, e.script_id) for e in journal] == [
            ("bedrock-converse", MODEL, sonnet),
            ("bedrock-converse", PROFILE, profile),
            ("bedrock-invoke", MODEL, sonnet),
        ]
        assert nova not in {e.script_id for e in journal}
        assert len(journal.requests(model=PROFILE)) == 1
    finally:
        server.reset()


# -- one golden for every protocol ---------------------------------------------------

GOLDEN_LOOP = script(
    {
        "id": "look-up",
        "reasoning": {"length": 5},
        "messages": [
            {"text_message": {"text": "Let me check."}},
            {"tool_call": [{"name": "get_weather", "args": {"city": "Paris"}}]},
        ],
    },
    {"id": "answer", "messages": [{"text_message": {"length": 8}}]},
)


def bedrock_agent(server: MockLLMServer, stream: bool) -> list[dict[str, Any]]:
    """A user's agent loop over Bedrock Converse, as the events it would snapshot."""
    bedrock, events = client(server), [{"type": "user", "content": GOLDEN_LOOP}]
    messages = [user(GOLDEN_LOOP)]
    thinking = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    while True:
        reply = converse(bedrock, stream, messages=messages, toolConfig=TOOLS, additionalModelRequestFields=thinking)
        message = reply["output"]["message"]
        messages.append(message)
        results = []
        for block in message["content"]:
            if "reasoningContent" in block:
                events.append({"type": "reasoning", "content": block["reasoningContent"]["reasoningText"]["text"]})
            elif "text" in block:
                events.append({"type": "answer", "content": block["text"]})
            else:
                call = block["toolUse"]
                events.append(
                    {"type": "tool_call", "name": call["name"], "args": call["input"], "toolUseId": call["toolUseId"]}
                )
                events.append({"type": "tool_result", "toolUseId": call["toolUseId"], "output": "sunny"})
                results.append({"toolResult": {"toolUseId": call["toolUseId"], "content": [{"text": "sunny"}]}})
        if not results:
            return events
        messages.append({"role": "user", "content": results})


def anthropic_agent(server: MockLLMServer) -> list[dict[str, Any]]:
    """The same agent over Anthropic Messages, with the official SDK."""
    claude, events = server.anthropic(), [{"type": "user", "content": GOLDEN_LOOP}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": GOLDEN_LOOP}]
    tools = [{"name": "get_weather", "input_schema": TOOLS["tools"][0]["toolSpec"]["inputSchema"]["json"]}]
    while True:
        reply = claude.messages.create(
            model="claude-mock",
            max_tokens=4096,
            messages=messages,
            tools=tools,
            thinking={"type": "enabled", "budget_tokens": 1024},
        )
        messages.append({"role": "assistant", "content": [block.model_dump() for block in reply.content]})
        results = []
        for block in reply.content:
            if block.type == "thinking":
                events.append({"type": "reasoning", "content": block.thinking})
            elif block.type == "text":
                events.append({"type": "answer", "content": block.text})
            else:
                events.append({"type": "tool_call", "name": block.name, "args": block.input, "toolUseId": block.id})
                events.append({"type": "tool_result", "toolUseId": block.id, "output": "sunny"})
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": "sunny"})
        if not results:
            return events
        messages.append({"role": "user", "content": results})


def test_a_golden_is_byte_identical_over_bedrock_and_anthropic(server: MockLLMServer) -> None:
    runs = {
        "bedrock converse": bedrock_agent(server, stream=False),
        "bedrock converse_stream": bedrock_agent(server, stream=True),
        "anthropic messages": anthropic_agent(server),
    }
    minted = MintedIds.of(server.journal)  # a golden normalises the ids this mock minted
    goldens = {name: golden_text(events, rules=VolatileRules(minted=minted)) for name, events in runs.items()}
    assert len(set(goldens.values())) == 1, goldens
    golden = goldens["anthropic messages"]
    assert "tool_call" in golden and 'toolUseId="<tool:1>"' in golden and golden.count("answer") == 2
