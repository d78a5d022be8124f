"""Retries by clients that send no ``x-stainless-retry-count``: the Nth identical request
for a scripted error is attempt N-1; with the header, the header wins."""

from __future__ import annotations

import json

import httpx
import pytest

from mockllm import MockLLM
from mockllm._transports import HTTPXTransport
from tests.mockllm.server_support import PATHS, script, uid, user_body


def _retry_loop(client: httpx.Client, path: str, body: bytes, *, tries: int) -> list[httpx.Response]:
    """What a hand-written client does: resend the same bytes while the answer is a 429."""
    responses = []
    for _ in range(tries):
        response = client.post(path, content=body, headers={"content-type": "application/json"})
        responses.append(response)
        if response.status_code != 429:
            break
    return responses


def _body(protocol: str, *, times: int | None = 2) -> bytes:
    step = {"id": uid("limit"), "error": {"status": 429, "retry_after_ms": 1, "times": times}}
    return json.dumps(user_body(protocol, script(step))).encode()


@pytest.mark.parametrize("protocol", list(PATHS))
def test_plain_httpx_loop_reaches_the_answer_on_the_third_attempt(protocol: str) -> None:
    mock = MockLLM()
    with httpx.Client(transport=HTTPXTransport(mock), base_url="http://mockllm") as client:
        responses = _retry_loop(client, PATHS[protocol], _body(protocol), tries=5)
    assert [r.status_code for r in responses] == [429, 429, 200]
    entries = mock.journal
    assert [(e.attempt, e.attempt_rule) for e in entries] == [(0, "repeat"), (1, "repeat"), (2, "repeat")]


def test_over_the_server_the_loop_counts_the_same(mock_server_url: str) -> None:
    body = _body("openai-chat")
    with httpx.Client(base_url=mock_server_url) as client:
        responses = _retry_loop(client, PATHS["openai-chat"], body, tries=5)
    assert [r.status_code for r in responses] == [429, 429, 200]


def test_the_header_wins_over_the_repeat_count() -> None:
    mock = MockLLM()
    body = _body("openai-chat")
    with httpx.Client(transport=HTTPXTransport(mock), base_url="http://mockllm") as client:
        statuses = [
            client.post(PATHS["openai-chat"], content=body, headers={"x-stainless-retry-count": "0"}).status_code
            for _ in range(3)
        ]
        retried = client.post(PATHS["openai-chat"], content=body, headers={"x-stainless-retry-count": "2"})
    assert statuses == [429, 429, 429]
    assert retried.status_code == 200
    assert {e.attempt_rule for e in mock.journal} == {"header"}


def test_a_different_body_is_a_new_first_attempt_and_reset_forgets() -> None:
    mock = MockLLM()
    first, other = _body("openai-chat", times=1), _body("openai-chat", times=1)
    with httpx.Client(transport=HTTPXTransport(mock), base_url="http://mockllm") as client:
        post = lambda body: client.post(PATHS["openai-chat"], content=body).status_code  # noqa: E731
        assert [post(first), post(first), post(other)] == [429, 200, 429]
        mock.reset()
        assert post(first) == 429


def test_requests_without_a_scripted_error_are_not_counted() -> None:
    mock = MockLLM()
    body = json.dumps(
        user_body("openai-chat", script({"id": uid("t"), "messages": [{"text_message": {"length": 3}}]}))
    ).encode()
    with httpx.Client(transport=HTTPXTransport(mock), base_url="http://mockllm") as client:
        for _ in range(2):
            client.post(PATHS["openai-chat"], content=body)
    assert [(e.attempt, e.attempt_rule) for e in mock.journal] == [(0, None), (0, None)]
