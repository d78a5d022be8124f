"""A stream the upstream broke off while it was recorded (``interrupted``) is broken off
in replay too. Before, replay sent the recorded events and ended the body cleanly, so an
app that ignores a broken stream (and never saw its finish reason) passed against the
replay though it fails against the provider."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from harness.plugin.recording import serve_in_thread
from mockllm import HTTPXTransport, MockLLM
from mockllm._recording.format import Exchange, Recording
from mockllm._recording.replay import RecordingLibrary

PATH = "/v1/chat/completions"
BODY = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
FIRST = {"choices": [{"index": 0, "delta": {"content": "Hel"}}]}


def mock_replaying(response: dict[str, object]) -> MockLLM:
    exchange = Exchange.model_validate({"request": {"path": PATH, "body": BODY}, "response": response})
    return MockLLM(recordings=RecordingLibrary([(Path("rec.json"), Recording(exchanges=[exchange]))]))


BROKEN_STREAM = {
    "status": 200,
    "headers": {"content-type": "text/event-stream"},
    "interrupted": "the upstream stream broke: RemoteProtocolError: peer closed connection",
    "events": [{"delay_ms": 0.0, "data": FIRST}],
}


def read_all(client: httpx.Client, url: str) -> bytes:
    with client.stream("POST", url, json=BODY) as reply:
        return b"".join(reply.iter_raw())


def test_in_process_the_replayed_stream_breaks_after_the_recorded_events() -> None:
    client = httpx.Client(transport=HTTPXTransport(mock_replaying(BROKEN_STREAM)))
    with client.stream("POST", "http://mock" + PATH, json=BODY) as reply:
        received = []
        with pytest.raises(httpx.ReadError, match="the recorded upstream broke this reply off here"):
            for piece in reply.iter_raw():
                received.append(piece)
    assert b"".join(received) == b'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n'


def test_over_http_the_replayed_stream_breaks_as_the_upstream_did() -> None:
    with serve_in_thread(mock_replaying(BROKEN_STREAM)) as server, httpx.Client() as client:
        with pytest.raises(httpx.RemoteProtocolError):
            read_all(client, server.base_url + PATH)


def test_a_broken_whole_body_breaks_too_and_a_clean_one_does_not() -> None:
    broken = {"status": 200, "interrupted": "the upstream broke", "body_text": '{"choices": [{"ind'}
    with serve_in_thread(mock_replaying(broken)) as server, httpx.Client() as client:
        with pytest.raises(httpx.RemoteProtocolError):
            read_all(client, server.base_url + PATH)
    clean = {**BROKEN_STREAM, "interrupted": None}
    with serve_in_thread(mock_replaying(clean)) as server, httpx.Client() as client:
        assert read_all(client, server.base_url + PATH).startswith(b"data: ")
