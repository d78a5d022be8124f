"""A replayed request is the same question only if its path is the same: Gemini, Bedrock
and Azure name the model (or deployment) in the path, and Gemini and Bedrock say there
whether the reply streams. Before, the path was left out of the match, so an app that
switched model or switched to streaming still got the old recording."""

from __future__ import annotations

import json
from pathlib import Path

from mockllm import MockLLM
from mockllm._recording.format import Exchange, Recording
from mockllm._recording.replay import RecordingLibrary

GEMINI = "/v1beta/models/gemini-2.0-flash:generateContent"
BODY = {"contents": [{"role": "user", "parts": [{"text": "Say hi"}]}]}


def mock_replaying(path: str) -> MockLLM:
    exchange = Exchange.model_validate(
        {"request": {"path": path, "body": BODY}, "response": {"status": 200, "body": {"answer": "recorded"}}}
    )
    return MockLLM(recordings=RecordingLibrary([(Path("rec.json"), Recording(exchanges=[exchange]))]))


def ask(mock: MockLLM, path: str) -> tuple[int, dict[str, object]]:
    reply = mock.handle("POST", path, {}, json.dumps(BODY).encode())
    return reply.status, json.loads(reply.body)


def test_another_gemini_model_is_a_miss_naming_the_path() -> None:
    mock = mock_replaying(GEMINI)
    assert ask(mock, GEMINI) == (200, {"answer": "recorded"})
    status, error = ask(mock, "/v1beta/models/gemini-1.5-pro:generateContent")
    assert status == 404
    message = error["error"]["message"]  # type: ignore[index]
    assert "the path differs (sent: /v1beta/models/gemini-1.5-pro:generateContent, recorded: " in message


def test_a_streamed_request_does_not_get_the_recorded_whole_reply() -> None:
    status, _ = ask(mock_replaying(GEMINI), "/v1beta/models/gemini-2.0-flash:streamGenerateContent")
    assert status == 404


def test_another_bedrock_model_or_azure_deployment_is_a_miss() -> None:
    converse = "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"
    mock = mock_replaying(converse)
    # The recording keeps the path as sent; the server hands the engine the decoded one.
    assert ask(mock, "/model/anthropic.claude-3-5-sonnet-20240620-v1:0/converse")[0] == 200
    assert ask(mock, "/model/anthropic.claude-3-haiku-20240307-v1:0/converse")[0] == 404
    assert ask(mock, "/model/anthropic.claude-3-5-sonnet-20240620-v1:0/converse-stream")[0] == 404
    azure = mock_replaying("/openai/deployments/gpt-4o/chat/completions")
    assert ask(azure, "/openai/deployments/gpt-4o-mini/chat/completions")[0] == 404
