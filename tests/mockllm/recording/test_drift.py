"""``python -m mockllm drift``: differences of shape are drift, differences of content are not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from mockllm import HTTPXTransport, InstructionChain, MockLLM
from mockllm._cli import main
from mockllm._recording.capture import Capture, exchange_request
from mockllm._recording.drift import check_drift
from mockllm._recording.format import Exchange, Recording
from mockllm._recording.proxy import Upstreams
from mockllm._recording.store import write_recording
from tests.mockllm.recording.support import mock_upstream, odd_upstream

TEXT = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"length": 20}}]}]).tagged("Hi")
REQUESTS = [
    ("/v1/chat/completions", {"model": "m", "stream": True, "messages": [{"role": "user", "content": TEXT}]}),
    ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": TEXT}]}),
    ("/v1/messages", {"model": "c", "max_tokens": 99, "stream": True, "messages": [{"role": "user", "content": TEXT}]}),
]


def exchange(mock: MockLLM, path: str, body: dict[str, Any]) -> Exchange:
    sent = json.dumps(body).encode()
    reply = mock.handle("POST", path, {}, sent)
    capture = Capture(exchange_request("POST", path, [], {}, sent))
    capture.started(reply.status, reply.headers)
    for _, chunk in reply.paced_chunks():
        capture.chunk(chunk)
    return capture.finished()


@pytest.fixture
def recordings(tmp_path: Path) -> Path:
    mock = MockLLM()
    write_recording(Recording(exchanges=[exchange(mock, p, b) for p, b in REQUESTS]), tmp_path / "rec" / "r.json")
    return tmp_path / "rec"


def test_other_words_in_the_same_shape_are_no_drift(recordings: Path) -> None:
    with httpx.Client(transport=HTTPXTransport(MockLLM(seed=7))) as client:
        report = check_drift(recordings, Upstreams("http://provider.test"), client=client)
    assert not report.drifted and report.checked == 3, report.describe()


def changed_provider(request: httpx.Request) -> httpx.Response:
    reply = MockLLM(seed=3).handle(request.method, request.url.path, request.headers, request.read())
    body = reply.body.replace(b'"system_fingerprint":"fp_mockllm",', b"")
    if not reply.streaming:
        parsed = json.loads(body)
        parsed.pop("system_fingerprint", None)
        body = json.dumps(parsed).encode()
    body = body.replace(b'"stop_reason":"end_turn"', b'"stop_reason":["end_turn"]')
    body = body.replace(b"event: message_stop\r\ndata:", b"event: message_done\r\ndata:")
    body = body.replace(b"event: message_stop\ndata:", b"event: message_done\ndata:")
    return httpx.Response(reply.status, headers=reply.headers, content=body)


def test_changed_fields_types_and_event_order_are_drift(recordings: Path) -> None:
    with httpx.Client(transport=httpx.MockTransport(changed_provider)) as client:
        report = check_drift(recordings, Upstreams("http://provider.test"), client=client)
    text = report.describe()
    assert report.drifted, text
    assert "chunk: field system_fingerprint is gone" in text
    assert "body: field system_fingerprint is gone" in text
    assert "message_delta: field delta.stop_reason was string, is now array" in text
    assert "message_delta > message_stop is now" in text and "message_delta > message_done" in text


def test_the_command_exits_non_zero_on_drift(recordings: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with mock_upstream() as same:
        assert main(["drift", str(recordings), "--upstream", same]) == 0
    assert "No drift: 3 recorded exchange(s)" in capsys.readouterr().out
    with mock_upstream() as anthropic_side, odd_upstream() as chat_side:
        argv = ["drift", str(recordings), "--upstream", chat_side, "--upstream", f"anthropic-messages={anthropic_side}"]
        assert main(argv) == 1
    out = capsys.readouterr().out
    assert "Drift in 2 of 3 recorded exchange(s)" in out
    assert "status 200 is now 400" in out and "field system_fingerprint is gone" in out
