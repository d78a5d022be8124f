"""Which recorded exchanges no request got: an app that stops sending a request it
sent when recorded (a tool loop that never sends the tool result back) leaves one.
The mechanism for a verdict like the unused scripted steps' (the plugin's to wire)."""

from __future__ import annotations

import json
from pathlib import Path

from mockllm import MockLLM
from mockllm._recording.format import Exchange, Recording
from mockllm._recording.replay import RecordingLibrary

PATH = "/v1/chat/completions"


def exchange(question: str) -> Exchange:
    body = {"model": "m", "messages": [{"role": "user", "content": question}]}
    return Exchange.model_validate({"request": {"path": PATH, "body": body}, "response": {"status": 200, "body": {}}})


def ask(mock: MockLLM, question: str) -> int:
    body = {"model": "m", "messages": [{"role": "user", "content": question}]}
    return mock.handle("POST", PATH, {}, json.dumps(body).encode()).status


def test_unserved_lists_the_exchanges_no_request_got_in_file_order() -> None:
    recording = Recording(exchanges=[exchange("weather?"), exchange("with the result"), exchange("weather?")])
    library = RecordingLibrary([(Path("t.json"), recording)])
    mock = MockLLM(recordings=library)
    assert library.unserved() == ["t.json#0", "t.json#1", "t.json#2"]
    assert ask(mock, "weather?") == 200
    assert library.unserved() == ["t.json#1", "t.json#2"]
    assert ask(mock, "weather?") == 200 and ask(mock, "weather?") == 200  # past the end: the last again
    assert library.unserved() == ["t.json#1"]
    assert ask(mock, "with the result") == 200
    assert library.unserved() == []
