"""A scripted reply no real provider could give to its request fails the test.

A provider cuts a reply at the request's output-token limit (and says ``length``,
``max_tokens``, ``MAX_TOKENS``, ``incomplete``), and its strict structured output always
fits the request's schema. A script may say otherwise; the test then exercised a branch
of the app production never reaches (a whole reply past ``max_tokens``, text the schema
refuses) and passed. These are the ``impossible_reply`` problem, through each protocol's
own SDK, unmodified.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from harness.plugin.fixtures import MockLLMFixture, MockLLMServer
from mockllm import MockLLM, ProblemKind, ReplyBreach, StrictnessError, verify_findings
from mockllm._transports import HTTPXTransport
from tests.mockllm.sdk_support import script
from tests.mockllm.test_sdk_bedrock import MODEL
from tests.mockllm.test_sdk_bedrock import client as bedrock

genai = pytest.importorskip("google.genai", reason="google-genai is not installed (the test extra)")
ollama = pytest.importorskip("ollama", reason="the ollama client is not installed (the test extra)")
boto3 = pytest.importorskip("boto3", reason="boto3 is not installed (the test extra)")

LONG = script({"id": "long", "messages": [{"text_message": {"length": 40}}]})
"""One reply of 40 generated words: about 60 tokens by the mock's rule, past a limit of 10."""
CUT = script({"id": "cut", "stop_reason": "max_tokens", "messages": [{"text_message": {"length": 40}}]})
"""The same reply scripted as cut at the limit: the test of truncation."""
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def said(text: str, **step: Any) -> str:
    return script({"id": "said", **step, "messages": [{"text_message": {"text": text}}]})


BAD_PERSON = said('{"name": "Ada", "age": "old"}')
GOOD_PERSON = said('{"name": "Ada", "age": 36}')


@pytest.fixture
def mock() -> Iterator[MockLLMFixture]:
    fixture = MockLLMFixture(MockLLM())
    try:
        yield fixture
    finally:
        fixture.close()


def failure(mock: MockLLMFixture | MockLLMServer) -> str:
    """The verdict's message for what ``mock`` saw ("" when the test may pass)."""
    try:
        verify_findings(mock.findings())
    except StrictnessError as exc:
        return str(exc)
    return ""


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


# -- the output-token limit -----------------------------------------------------------


@pytest.mark.parametrize("field", ["max_tokens", "max_completion_tokens"])
def test_a_chat_reply_longer_than_the_limit_fails(mock: MockLLMFixture, field: str) -> None:
    reply = mock.openai().chat.completions.create(model="m", messages=user(LONG), **{field: 10})
    tokens = reply.usage.completion_tokens
    assert tokens > 10
    message = failure(mock)
    assert "1 scripted reply(ies) were ones a real provider never gives to such a request:" in message
    assert (
        f"POST /v1/chat/completions (request 0, turn 0) (instruction 'long'): the reply is {tokens} tokens" in message
    )
    assert f"the request allows {field}=10" in message
    assert "script stop_reason: max_tokens to test how the code handles a truncated reply" in message
    assert "allow this with MockLLM(allow_impossible_replies=True)" in message


def test_a_responses_reply_longer_than_max_output_tokens_fails(mock: MockLLMFixture) -> None:
    reply = mock.openai().responses.create(model="m", input=LONG, max_output_tokens=16)
    assert f"the reply is {reply.usage.output_tokens} tokens" in failure(mock)
    assert "the request allows max_output_tokens=16" in failure(mock)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_an_anthropic_reply_longer_than_max_tokens_fails(mock: MockLLMFixture, stream: bool) -> None:
    client = mock.anthropic()
    if stream:
        with client.messages.stream(model="c", max_tokens=10, messages=user(LONG)) as events:
            reply = events.get_final_message()
    else:
        reply = client.messages.create(model="c", max_tokens=10, messages=user(LONG))
    assert reply.stop_reason == "end_turn"  # what production never says past the limit
    assert f"the reply is {reply.usage.output_tokens} tokens" in failure(mock)
    assert "the request allows max_tokens=10" in failure(mock)


def test_reasoning_and_tool_call_arguments_count_as_output(mock: MockLLMFixture) -> None:
    chain = script(
        {
            "reasoning": {"text": "x" * 30},
            "messages": [{"tool_call": [{"name": "note", "args": {"text": "y" * 20}}]}],
        }
    )
    tools = [{"name": "note", "input_schema": {"type": "object"}}]
    reply = mock.anthropic().messages.create(model="c", max_tokens=12, messages=user(chain), tools=tools)
    # 30 reasoning characters and the 33 of {"text":"yyy…"}: ceil(63 / 4) = 16 tokens.
    assert reply.usage.output_tokens == 16
    assert "the reply is 16 tokens" in failure(mock)


def gemini_client(mock: MockLLMFixture) -> Any:
    transport = HTTPXTransport(mock.mock)
    http = genai.types.HttpOptions(
        base_url=mock.base_url, httpx_client=httpx.Client(transport=transport, base_url=mock.base_url)
    )
    return genai.Client(api_key="test", http_options=http)


def test_a_gemini_reply_longer_than_max_output_tokens_fails(mock: MockLLMFixture) -> None:
    config = genai.types.GenerateContentConfig(max_output_tokens=10)
    reply = gemini_client(mock).models.generate_content(model="g", contents=LONG, config=config)
    assert reply.candidates[0].finish_reason == "STOP"
    tokens = reply.usage_metadata.candidates_token_count
    assert f"the reply is {tokens} tokens" in failure(mock)
    assert "the request allows generationConfig.maxOutputTokens=10" in failure(mock)


def ollama_client(mock: MockLLMFixture) -> Any:
    return ollama.Client(host=mock.base_url, transport=HTTPXTransport(mock.mock))


def test_an_ollama_reply_longer_than_num_predict_fails_and_a_negative_one_is_unlimited(
    mock: MockLLMFixture,
) -> None:
    client = ollama_client(mock)
    reply = client.chat(model="llama", messages=user(LONG), options={"num_predict": 10})
    assert f"the reply is {reply.eval_count} tokens" in failure(mock)
    assert "the request allows options.num_predict=10" in failure(mock)
    mock.mock.reset()
    client.chat(model="llama", messages=user(LONG), options={"num_predict": -1})
    assert failure(mock) == ""


@pytest.mark.mockllm(allow_impossible_replies=True)  # the test reads the server's findings itself
def test_a_bedrock_reply_longer_than_max_tokens_fails_through_the_server(mockllm_server: MockLLMServer) -> None:
    server = mockllm_server
    client = bedrock(server)
    messages = [{"role": "user", "content": [{"text": LONG}]}]
    reply = client.converse(modelId=MODEL, messages=messages, inferenceConfig={"maxTokens": 10})
    assert reply["stopReason"] == "end_turn"
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 12, "messages": user(LONG)}
    client.invoke_model(modelId=MODEL, body=json.dumps(body))
    message = failure(server)  # read from the server's GET /_mockllm/findings
    assert "2 scripted reply(ies) were ones a real provider never gives" in message
    assert f"the reply is {reply['usage']['outputTokens']} tokens" in message
    assert "the request allows inferenceConfig.maxTokens=10" in message
    assert "the request allows max_tokens=12" in message
    problems = [p for p in server.findings().problems if p.kind is ProblemKind.IMPOSSIBLE_REPLY]
    assert [p.breach for p in problems] == [ReplyBreach.OVER_OUTPUT_LIMIT] * 2


def test_a_reply_scripted_as_cut_at_the_limit_passes_and_says_so(mock: MockLLMFixture) -> None:
    chat = mock.openai().chat.completions.create(model="m", messages=user(CUT), max_tokens=10)
    assert chat.choices[0].finish_reason == "length"
    message = mock.anthropic().messages.create(model="c", max_tokens=10, messages=user(CUT))
    assert message.stop_reason == "max_tokens"
    response = mock.openai().responses.create(model="m", input=CUT, max_output_tokens=10)
    assert response.status == "incomplete"
    assert failure(mock) == ""


def test_a_reply_within_the_limit_and_a_scripted_error_pass(mock: MockLLMFixture) -> None:
    client = mock.anthropic()
    client.messages.create(model="c", max_tokens=10, messages=user(said("Short.")))
    error = script({"error": {"status": 429, "times": 1}, "messages": [{"text_message": {"length": 40}}]})
    with pytest.raises(Exception, match="429"):
        client.messages.create(model="c", max_tokens=10, messages=user(error))
    assert failure(mock) == ""  # the error is no reply
    retry = {"x-stainless-retry-count": "1"}  # what the SDK's own retry sends
    client.messages.create(model="c", max_tokens=10, messages=user(error), extra_headers=retry)  # the whole reply
    assert failure(mock).count("the reply is") == 1


# -- structured output -----------------------------------------------------------------

STRICT_CHAT = {"type": "json_schema", "json_schema": {"name": "person", "strict": True, "schema": PERSON}}


def test_chat_text_breaking_a_strict_json_schema_fails(mock: MockLLMFixture) -> None:
    reply = mock.openai().chat.completions.create(model="m", messages=user(BAD_PERSON), response_format=STRICT_CHAT)
    assert json.loads(reply.choices[0].message.content)["age"] == "old"
    message = failure(mock)
    assert (
        "(instruction 'said'): the reply's text breaks the request's response_format's strict json_schema, "
        "which a real provider guarantees: ['age']: 'old' is not of type 'integer'"
    ) in message
    assert "Script text that fits the schema (JSON)" in message


def test_chat_json_mode_needs_a_json_object(mock: MockLLMFixture) -> None:
    client = mock.openai()
    client.chat.completions.create(model="m", messages=user(said("Sure!")), response_format={"type": "json_object"})
    assert 'response_format={"type":"json_object"}' in failure(mock)
    assert "the text is not JSON" in failure(mock)


def test_responses_text_breaking_a_strict_format_fails(mock: MockLLMFixture) -> None:
    text = {"format": {"type": "json_schema", "name": "person", "strict": True, "schema": PERSON}}
    mock.openai().responses.create(model="m", input=BAD_PERSON, text=text)
    assert "text.format's strict json_schema" in failure(mock)
    assert "['age']: 'old' is not of type 'integer'" in failure(mock)


def test_anthropic_text_breaking_its_structured_output_fails(mock: MockLLMFixture) -> None:
    output_config = {"format": {"type": "json_schema", "schema": PERSON}}
    mock.anthropic().messages.create(model="c", max_tokens=99, messages=user(BAD_PERSON), output_config=output_config)
    assert "output_config.format's json_schema" in failure(mock)


def test_gemini_text_breaking_its_response_schema_fails(mock: MockLLMFixture) -> None:
    schema = genai.types.Schema(
        type="OBJECT",
        properties={"name": genai.types.Schema(type="STRING"), "age": genai.types.Schema(type="INTEGER")},
        required=["name", "age"],
    )
    config = genai.types.GenerateContentConfig(response_mime_type="application/json", response_schema=schema)
    gemini_client(mock).models.generate_content(model="g", contents=BAD_PERSON, config=config)
    assert "generationConfig.responseSchema" in failure(mock)
    assert "['age']: 'old' is not of type 'integer'" in failure(mock)


def test_ollama_text_breaking_its_format_fails(mock: MockLLMFixture) -> None:
    client = ollama_client(mock)
    client.chat(model="llama", messages=user(BAD_PERSON), format=PERSON)
    assert "format's schema" in failure(mock)
    mock.mock.reset()
    client.chat(model="llama", messages=user(said("not json")), format="json")
    assert 'format="json"' in failure(mock)


def test_text_that_fits_and_the_exempt_replies_pass(mock: MockLLMFixture) -> None:
    client = mock.openai()
    loose = {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON}}  # not strict: no guarantee
    for chain, response_format in [
        (GOOD_PERSON, STRICT_CHAT),
        (BAD_PERSON, loose),
        (said('{"name": "Ad', stop_reason="max_tokens"), STRICT_CHAT),  # cut: truncated JSON is real
        (said("I can't help with that.", stop_reason="refusal"), STRICT_CHAT),
    ]:
        client.chat.completions.create(model="m", messages=user(chain), response_format=response_format)
    calls = script({"messages": [{"tool_call": [{"name": "lookup", "args": {}}]}]})  # tool calls only: no text
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
    client.chat.completions.create(model="m", messages=user(calls), tools=tools, response_format=STRICT_CHAT)
    assert failure(mock) == ""


def test_the_opt_out_allows_them(mock: MockLLMFixture) -> None:
    mock.openai().chat.completions.create(model="m", messages=user(LONG), max_tokens=10)
    with pytest.raises(StrictnessError):
        mock.mock.verify()
    mock.mock.verify(allow_impossible_replies=True)
    with MockLLM(allow_impossible_replies=True) as allowed:
        allowed.script([{"messages": [{"text_message": {"length": 40}}]}])
        with httpx.Client(transport=HTTPXTransport(allowed), base_url="http://mock") as http:
            body = {"model": "c", "max_tokens": 10, "messages": user("Hi")}
            assert http.post("/v1/messages", json=body).status_code == 200
    assert allowed.journal[0].impossible_reply[0].breach is ReplyBreach.OVER_OUTPUT_LIMIT
    assert allowed.journal[0].impossible_reply[0].limit == 10
