"""A replayed request's journal names its model as a scripted one's does: from the body,
or from the path where the provider puts it there (Gemini, Bedrock), so a journal read
after a replayed run says which model each call asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mockllm._recording.format import Recording
from mockllm._recording.replay import RecordingLibrary

GEMINI = "/v1beta/models/gemini-2.0-flash:generateContent"
BEDROCK = "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse"
CHAT = "/v1/chat/completions"
BODIES = {
    GEMINI: {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]},
    BEDROCK: {"messages": [{"role": "user", "content": [{"text": "Hi"}]}]},
    CHAT: {"model": "gpt-rec", "messages": [{"role": "user", "content": "Hi"}]},
}


def exchange(path: str) -> dict[str, object]:
    return {
        "request": {"method": "POST", "path": path, "body": BODIES[path]},
        "response": {"status": 200, "headers": {"content-type": "application/json"}, "body": {"ok": True}},
    }


@pytest.fixture
def library(tmp_path: Path) -> RecordingLibrary:
    recording = Recording.model_validate({"exchanges": [exchange(path) for path in BODIES]})
    return RecordingLibrary([(tmp_path / "r.json", recording)])


@pytest.mark.parametrize(
    ("path", "model"),
    [(GEMINI, "gemini-2.0-flash"), (BEDROCK, "anthropic.claude-3-5-sonnet-20240620-v1:0"), (CHAT, "gpt-rec")],
)
def test_a_replayed_request_journals_its_model(library: RecordingLibrary, path: str, model: str) -> None:
    answered = library.answer("POST", path, {}, json.dumps(BODIES[path]).encode())
    assert answered is not None
    response, journal = answered
    assert response.status == 200
    assert journal["model"] == model


def test_a_replay_miss_journals_the_model_it_asked_for(library: RecordingLibrary) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "Something else"}]}]}
    answered = library.answer("POST", GEMINI, {}, json.dumps(body).encode())
    assert answered is not None
    response, journal = answered
    assert (response.status, journal["model"]) == (404, "gemini-2.0-flash")
