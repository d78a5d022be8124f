"""The engine hands the URL's query to the recordings: a Gemini streaming call recorded
with ``record=True`` reaches the upstream with ``alt=sse`` (google-genai's reader parses
server-sent events; without it the upstream answers a JSON array and the SDK fails with
"Failed to parse response as JSON")."""

from __future__ import annotations

import json
from pathlib import Path

from harness.plugin.recording import serve_in_thread
from mockllm import MockLLM
from mockllm._recording.proxy import Upstreams
from mockllm._recording.session import RecordingSession

STREAM = "/v1beta/models/gemini-2.0-flash:streamGenerateContent"
BODY = json.dumps({"contents": [{"role": "user", "parts": [{"text": "Say hi"}]}]}).encode()


def test_a_recorded_gemini_stream_is_a_stream(tmp_path: Path) -> None:
    with serve_in_thread(MockLLM()) as upstream:
        session = RecordingSession(tmp_path / "rec.json", "once", upstreams=Upstreams(upstream.base_url))
        reply = MockLLM(recordings=session).handle("POST", STREAM, {}, BODY, "alt=sse")
        assert dict(reply.headers)["content-type"].startswith("text/event-stream")
        assert b"".join(chunk for _, chunk in reply.paced_chunks()).startswith(b"data: {")
        session.save()
    (exchange,) = json.loads((tmp_path / "rec.json").read_text())["exchanges"]
    assert exchange["request"]["query"] == {"alt": "sse"}
