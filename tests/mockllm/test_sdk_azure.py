"""Azure OpenAI through the official ``openai.AzureOpenAI`` client, unmodified, through
both doors: chat, stream, a tool loop, the ``api-version`` rule, Azure's error shape,
and the ``/openai/v1/`` route with the plain ``openai.OpenAI`` client."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from mockllm._transports import HTTPX2Transport
from tests.mockllm.sdk_support import script

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

DEPLOYMENT = "my-gpt-deployment"
API_VERSION = "2024-10-21"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
LOOP = script(
    {"id": "look-up", "messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Paris"}}]}]},
    {"id": "answer", "messages": [{"text_message": {"text": "Sunny in Paris."}}]},
)


def _http(door: Any) -> Any:
    return httpx2.Client(transport=HTTPX2Transport(door.mock)) if door.mock is not None else None


def _azure(door: Any, api_version: str = API_VERSION) -> openai.AzureOpenAI:
    return openai.AzureOpenAI(
        azure_endpoint=door.base_url,
        api_key="azure-key",
        api_version=api_version,
        max_retries=0,
        http_client=_http(door),
    )


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_tool_loop_through_a_deployment(door: Any, stream: bool) -> None:
    door.reset_journal()
    client = _azure(door)
    messages: list[dict[str, Any]] = [{"role": "user", "content": LOOP}]
    for expected in ("look-up", "answer"):
        if stream:
            with client.chat.completions.stream(model=DEPLOYMENT, messages=messages, tools=TOOLS) as events:
                for _ in events:
                    pass
                message = events.get_final_completion().choices[0].message
        else:
            message = (
                client.chat.completions.create(model=DEPLOYMENT, messages=messages, tools=TOOLS).choices[0].message
            )
        if expected == "look-up":
            (call,) = message.tool_calls
            assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", {"city": "Paris"})
            messages.append(message.model_dump(exclude_none=True))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": '{"sky": "sunny"}'})
        else:
            assert message.content == "Sunny in Paris."
    journal = door.journal()
    assert [(e["protocol"], e["instruction_id"]) for e in journal] == [
        ("azure-openai", "look-up"),
        ("azure-openai", "answer"),
    ]
    assert all(e["path"] == f"/openai/deployments/{DEPLOYMENT}/chat/completions" for e in journal)


def test_missing_api_version_is_azures_404_saying_what_to_add(door: Any) -> None:
    http = _http(door) or httpx2.Client()
    with http:
        reply = http.post(
            f"{door.base_url}/openai/deployments/{DEPLOYMENT}/chat/completions",
            json={"messages": [{"role": "user", "content": "hi"}]},
            headers={"api-key": "k"},
        )
    assert reply.status_code == 404
    error = reply.json()["error"]
    assert error["code"] == "404" and "api-version" in error["message"]


def test_scripted_errors_come_in_azures_shape(door: Any) -> None:
    chain = script({"id": "busy", "error": {"status": 429}})
    with pytest.raises(openai.RateLimitError) as raised:
        _azure(door).chat.completions.create(model=DEPLOYMENT, messages=[{"role": "user", "content": chain}])
    assert raised.value.body["code"] == "429" and "rate limit" in raised.value.body["message"]


def test_validation_keeps_openais_400_with_its_param(door: Any) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        _azure(door).chat.completions.create(model=DEPLOYMENT, messages=[])
    assert raised.value.body["param"] == "messages"


def test_the_v1_route_serves_the_plain_openai_client(door: Any) -> None:
    chain = script({"id": "v1", "messages": [{"text_message": {"length": 4}}]})
    client = openai.OpenAI(base_url=f"{door.base_url}/openai/v1/", api_key="k", http_client=_http(door))
    chunks = list(
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": chain}], stream=True)
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert len(text.split()) == 4
    assert door.journal()[-1]["protocol"] == "azure-openai"
