"""The routes clients call beside the model calls, through the official SDKs and both
doors: models.list / retrieve (OpenAI and Anthropic shapes on one path), Anthropic's
count_tokens, OpenAI's embeddings — and each one's provider error shape."""

from __future__ import annotations

import base64
import math
import struct
from typing import Any

import anthropic
import openai
import pytest

from mockllm._usage import tokens_in
from mockllm._wire.models import ANTHROPIC_MODELS, OPENAI_MODELS
from tests.mockllm.server_support import script, uid

THINKING = {"type": "enabled", "budget_tokens": 1024}


def test_openai_models_list_and_retrieve(door: Any) -> None:
    client = door.openai()
    assert [m.id for m in client.models.list()] == list(OPENAI_MODELS)
    model = client.models.retrieve("gpt-4o-mini")
    assert (model.id, model.object, model.owned_by) == ("gpt-4o-mini", "model", "mockllm")


def test_anthropic_models_list_and_retrieve(door: Any) -> None:
    client = door.anthropic()
    page = client.models.list()
    assert [m.id for m in page] == list(ANTHROPIC_MODELS)
    assert page.has_more is False
    model = client.models.retrieve("claude-sonnet-4-5")
    assert (model.id, model.type, model.display_name) == ("claude-sonnet-4-5", "model", "claude-sonnet-4-5")


def test_models_are_read_only_in_the_callers_shape(door: Any) -> None:
    answer = door.clients.httpx_client().post("/v1/models", headers={"anthropic-version": "2023-06-01"})
    assert answer.status_code == 405
    assert answer.json()["type"] == "error"
    assert "send a GET request" in answer.json()["error"]["message"]


def _messages(prompt: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": prompt}]


def test_count_tokens_equals_the_usage_of_the_same_request(door: Any) -> None:
    client = door.anthropic()
    prompt = script({"id": uid("t"), "messages": [{"text_message": {"length": 4}}]})
    fields = {"model": "claude-mock-1", "system": "Be brief.", "messages": _messages(prompt)}
    counted = client.messages.count_tokens(**fields)
    created = client.messages.create(max_tokens=256, **fields)
    with client.messages.stream(max_tokens=256, **fields) as stream:
        streamed = stream.get_final_message()
    assert counted.input_tokens == created.usage.input_tokens == streamed.usage.input_tokens > 1
    assert created.usage.output_tokens == streamed.usage.output_tokens
    assert created.usage.output_tokens == tokens_in(created.content[0].text)


def test_count_tokens_rejects_in_anthropics_shape(door: Any) -> None:
    client = door.anthropic()
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.count_tokens(model="claude-mock-1", messages=[{"role": "system", "content": "x"}])
    assert raised.value.body["type"] == "error"
    assert raised.value.body["error"]["type"] == "invalid_request_error"
    assert raised.value.body["error"]["message"] == "messages.0.role: Input should be 'user' or 'assistant'"


def test_thinking_tool_use_without_its_thinking_block_is_a_400(door: Any) -> None:
    client = door.anthropic()
    messages = [
        {"role": "user", "content": "What is the weather?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}]},
    ]
    with pytest.raises(anthropic.BadRequestError) as raised:
        client.messages.create(model="claude-mock-1", max_tokens=2048, thinking=THINKING, messages=messages)
    message = raised.value.body["error"]["message"]
    assert message.startswith(
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`."
    )
    messages[1]["content"].insert(0, {"type": "thinking", "thinking": "hm", "signature": "c2ln"})
    reply = client.messages.create(model="claude-mock-1", max_tokens=2048, thinking=THINKING, messages=messages)
    assert reply.type == "message"


def _norm(vector: list[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


def test_embeddings_are_deterministic_unit_vectors(door: Any) -> None:
    client = door.openai()
    first = client.embeddings.create(model="text-embedding-mock", input=["apples", "pears", "apples"])
    again = client.embeddings.create(model="text-embedding-mock", input="apples", encoding_format="float")
    vectors = [d.embedding for d in first.data]
    assert [d.index for d in first.data] == [0, 1, 2]
    assert len(vectors[0]) == 1536
    assert vectors[0] == vectors[2] == again.data[0].embedding
    assert vectors[0] != vectors[1]
    assert _norm(vectors[0]) == pytest.approx(1.0, abs=1e-5)
    assert first.usage.prompt_tokens == 2 * tokens_in("apples") + tokens_in("pears")


def test_embeddings_honour_dimensions_base64_and_token_input(door: Any) -> None:
    client = door.openai()
    small = client.embeddings.create(model="m", input="apples", dimensions=8, encoding_format="float")
    raw = door.clients.httpx_client().post(
        "/v1/embeddings", json={"model": "m", "input": "apples", "dimensions": 8, "encoding_format": "base64"}
    )
    packed = raw.json()["data"][0]["embedding"]
    assert list(struct.unpack("<8f", base64.b64decode(packed))) == small.data[0].embedding
    tokens = client.embeddings.create(model="m", input=[[1, 2, 3], [1, 2, 3]], dimensions=4)
    assert tokens.data[0].embedding == tokens.data[1].embedding and len(tokens.data[0].embedding) == 4
    assert tokens.usage.prompt_tokens == 6


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"input": "x"}, "model"),
        ({"model": "m"}, "input"),
        ({"model": "m", "input": ""}, "input"),
        ({"model": "m", "input": [1.5]}, "input"),
        ({"model": "m", "input": "x", "dimensions": 0}, "dimensions"),
        ({"model": "m", "input": "x", "encoding_format": "int8"}, "encoding_format"),
    ],
)
def test_embeddings_reject_in_openais_shape(door: Any, fields: dict[str, Any], param: str) -> None:
    client = door.openai()
    with pytest.raises(openai.BadRequestError) as raised:
        client.embeddings.create(**{"model": openai.omit, "input": openai.omit, **fields})
    error = raised.value.body
    assert error["param"] == param and error["type"] == "invalid_request_error"
    assert error["message"]
