"""A parameter of the wrong JSON type (``"stream": "yes"``, ``"max_tokens": "ten"``) is a
400 in the provider's own error shape naming the parameter, never a reply: over real
HTTP to the mock server, as raw HTTP and through the official SDKs' error classes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from harness.plugin.fixtures import MockLLMServer

CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
RESPONSES = {"model": "gpt-4o", "input": "hi"}
MESSAGES = {"model": "claude-x", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def server(mock_server_url: str) -> Iterator[MockLLMServer]:
    with MockLLMServer(mock_server_url).session() as session:
        yield session


def _post(server: MockLLMServer, path: str, body: dict[str, Any]) -> httpx.Response:
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        return http.post(path, json=body, headers={"x-api-key": "test", "anthropic-version": "2023-06-01"})


@pytest.mark.parametrize(
    ("path", "body", "param", "message"),
    [
        ("/v1/chat/completions", {**CHAT, "stream": "yes"}, "stream", "expected a boolean, but got a string"),
        ("/v1/chat/completions", {**CHAT, "max_tokens": "ten"}, "max_tokens", "expected an integer, but got a string"),
        ("/v1/chat/completions", {**CHAT, "temperature": "hot"}, "temperature", "expected a decimal, but got a string"),
        ("/v1/chat/completions", {**CHAT, "n": 1.5}, "n", "expected an integer, but got a decimal"),
        ("/v1/responses", {**RESPONSES, "stream": "yes"}, "stream", "expected a boolean, but got a string"),
        (
            "/v1/responses",
            {**RESPONSES, "max_output_tokens": True},
            "max_output_tokens",
            "expected an integer, but got a boolean",
        ),
        ("/v1/responses", {**RESPONSES, "temperature": "hot"}, "temperature", "expected a decimal, but got a string"),
    ],
)
def test_openai_names_the_parameter_of_the_wrong_type(
    server: MockLLMServer, path: str, body: dict[str, Any], param: str, message: str
) -> None:
    response = _post(server, path, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"] == f"Invalid type for {param!r}: {message} instead."
    assert (error["type"], error["param"]) == ("invalid_request_error", param)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({**MESSAGES, "stream": "yes"}, "stream: Input should be a valid boolean"),
        ({**MESSAGES, "max_tokens": "ten"}, "max_tokens: Input should be a valid integer"),
        ({**MESSAGES, "max_tokens": None}, "max_tokens: Input should be a valid integer"),
        ({**MESSAGES, "temperature": "hot"}, "temperature: Input should be a valid number"),
    ],
)
def test_anthropic_names_the_parameter_of_the_wrong_type(
    server: MockLLMServer, body: dict[str, Any], message: str
) -> None:
    response = _post(server, "/v1/messages", body)
    assert response.status_code == 400
    assert response.json() == {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def test_null_and_the_right_types_are_served(server: MockLLMServer) -> None:
    fine = {"stream": False, "max_tokens": 10, "temperature": 1, "top_p": 0.5, "n": None}
    assert _post(server, "/v1/chat/completions", {**CHAT, **fine}).status_code == 200
    assert _post(server, "/v1/responses", {**RESPONSES, "stream": None, "temperature": 0.2}).status_code == 200
    assert _post(server, "/v1/messages", {**MESSAGES, "stream": False, "temperature": 0}).status_code == 200


def test_the_sdks_raise_their_bad_request_error_naming_the_parameter(server: MockLLMServer) -> None:
    with server.openai(max_retries=0) as client, pytest.raises(openai.BadRequestError) as chat:
        client.chat.completions.create(model="gpt-4o", messages=CHAT["messages"], extra_body={"stream": "yes"})
    assert chat.value.param == "stream" and "expected a boolean" in chat.value.message
    with server.openai(max_retries=0) as client, pytest.raises(openai.BadRequestError) as responses:
        client.responses.create(model="gpt-4o", input="hi", extra_body={"temperature": "hot"})
    assert responses.value.param == "temperature"
    with server.anthropic(max_retries=0) as client, pytest.raises(anthropic.BadRequestError) as messages:
        client.messages.create(
            model="claude-x", max_tokens=64, messages=MESSAGES["messages"], extra_body={"stream": "yes"}
        )
    assert "stream: Input should be a valid boolean" in messages.value.message
