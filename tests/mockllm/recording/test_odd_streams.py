"""Odd-but-legal stream shapes from a plain Starlette upstream come back byte for byte,
at their recorded pace when asked."""

from __future__ import annotations

import json
import time
from pathlib import Path

import openai
import pytest

from mockllm import HTTPX2Transport, MockLLM
from mockllm._recording.replay import RecordingLibrary
from tests.mockllm.recording.odd_upstream import PAUSE_S, WRITES
from tests.mockllm.recording.support import odd_upstream, recording_proxy, replay_in_thread

httpx2 = pytest.importorskip("httpx2")
BODY = {"model": "odd-model", "stream": True, "messages": [{"role": "user", "content": "odd"}]}


def raw_stream(client: httpx2.Client, url: str) -> tuple[bytes, float]:
    started = time.perf_counter()
    with client.stream("POST", url, json=BODY) as response:
        body = b"".join(response.iter_raw())
    return body, time.perf_counter() - started


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes, list[str]]:
    tmp = tmp_path_factory.mktemp("odd")
    out = tmp / "recordings"
    with odd_upstream() as upstream, recording_proxy(tmp, upstream, out) as proxy, httpx2.Client() as client:
        body, _ = raw_stream(client, f"{proxy}/v1/chat/completions")
        sdk = openai.OpenAI(api_key="test", base_url=f"{proxy}/v1", max_retries=0)
        texts = [c.choices[0].delta.content for c in sdk.chat.completions.create(**BODY) if c.choices]
    return out, body, texts


def test_the_client_of_the_proxy_gets_the_upstream_bytes(recorded: tuple[Path, bytes, list[str]]) -> None:
    _, body, texts = recorded
    assert body == b"".join(WRITES)
    assert "".join(t or "" for t in texts) == "Odd shapes cut across writes and more."


def test_every_odd_event_is_kept_exactly(recorded: tuple[Path, bytes, list[str]]) -> None:
    out, _, _ = recorded
    (path,) = out.glob("*.json")
    events = json.loads(path.read_text())["exchanges"][0]["response"]["events"]
    kinds = [next(k for k in ("data", "text", "raw") if k in e) for e in events]
    # comment and CRLF and id: stay raw; spaced JSON stays text; compact JSON is readable data.
    assert kinds == ["raw", "raw", "raw", "text", "data", "data", "data", "data", "text"]
    # the event cut across two writes waited for its second half
    assert events[4]["delay_ms"] >= PAUSE_S * 1000 * 1.5


def test_replay_sends_the_same_bytes_in_process_and_over_http(recorded: tuple[Path, bytes, list[str]]) -> None:
    out, body, _ = recorded
    mock = MockLLM(recordings=RecordingLibrary.from_directory(out))
    with httpx2.Client(transport=HTTPX2Transport(mock)) as client:
        assert raw_stream(client, "http://mockllm.test/v1/chat/completions")[0] == body
    with replay_in_thread(out) as replay, httpx2.Client() as client:
        assert raw_stream(client, f"{replay}/v1/chat/completions")[0] == body


def test_replay_at_recorded_pace_takes_the_recorded_time(recorded: tuple[Path, bytes, list[str]]) -> None:
    out, body, _ = recorded
    instant = MockLLM(recordings=RecordingLibrary.from_directory(out))
    paced = MockLLM(recordings=RecordingLibrary.from_directory(out, speed=1.0))
    with (
        httpx2.Client(transport=HTTPX2Transport(instant)) as fast,
        httpx2.Client(transport=HTTPX2Transport(paced)) as slow,
    ):
        fast_body, fast_s = raw_stream(fast, "http://mockllm.test/v1/chat/completions")
        slow_body, slow_s = raw_stream(slow, "http://mockllm.test/v1/chat/completions")
    assert fast_body == slow_body == body
    recorded_s = len(WRITES) * PAUSE_S
    assert slow_s >= recorded_s * 0.7
    assert fast_s < slow_s
