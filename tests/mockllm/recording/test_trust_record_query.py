"""Recording in pytest (``record=True``) forwards the URL's query to the upstream and
keeps it: Gemini's ``alt=sse`` asks for a server-sent-events stream, Azure's
``api-version`` is required. Before, the query was dropped, so a correct Gemini streaming
app failed in record mode with google-genai's "Failed to parse response as JSON" (the
upstream answered the JSON array it sends without ``alt=sse``)."""

from __future__ import annotations

import json
from pathlib import Path

from harness.plugin.recording import serve_in_thread
from mockllm import MockLLM
from mockllm._recording.proxy import Upstreams
from mockllm._recording.session import RecordingSession

STREAM = "/v1beta/models/gemini-2.0-flash:streamGenerateContent"
BODY = json.dumps({"contents": [{"role": "user", "parts": [{"text": "Say hi"}]}]}).encode()


def test_the_query_reaches_the_upstream_and_the_recording(tmp_path: Path) -> None:
    upstream = MockLLM()
    with serve_in_thread(upstream) as server:
        session = RecordingSession(tmp_path / "rec.json", "once", upstreams=Upstreams(server.base_url))
        answered = session.answer("POST", STREAM, {}, BODY, "alt=sse")
        assert answered is not None
        reply, _ = answered
        body = b"".join(chunk for _, chunk in reply.paced_chunks())
        assert dict(reply.headers)["content-type"].startswith("text/event-stream")
        assert body.startswith(b"data: {")
        written = session.save()
    assert written is not None
    (exchange,) = json.loads(written.read_text())["exchanges"]
    assert exchange["request"]["query"] == {"alt": "sse"}
    assert exchange["response"]["events"]
