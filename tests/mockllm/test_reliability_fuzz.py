"""Fuzzing the three provider endpoints (issue 16): whatever the bytes, the reply is a
JSON body (or a stream) with a status below 500 — unless the script itself asked for a
server error — and the journal still renders.

In process on the engine at CI size; ``bench/fuzz_server.py`` runs the same generators
against ``python -m mockllm serve`` at 100,000 requests.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings

from mockllm import MockLLM
from mockllm._wire.eventstream import EVENT_STREAM_MEDIA_TYPE, decode_messages
from tests.mockllm.fuzz_strategies import fuzz_request, is_scripted_fault

ENGINE = MockLLM()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fuzz_request())
def test_any_request_gets_a_provider_shaped_reply_below_500(request: tuple[str, dict[str, str], bytes]) -> None:
    path, headers, body = request
    reply = ENGINE.handle("POST", path, headers, body)
    if reply.status >= 500:  # only a fault the script asked for (an instruction's "error")
        assert is_scripted_fault(reply.headers, reply.body), reply.body[:500]
    media = dict(reply.headers)["content-type"]
    if reply.streaming and media.startswith("text/event-stream"):
        assert reply.body.startswith((b"data: ", b"event: "))
    elif reply.streaming and media == "application/x-ndjson":  # Ollama: one JSON object a line
        assert all(isinstance(json.loads(line), dict) for line in reply.body.splitlines())
    elif reply.streaming and media == EVENT_STREAM_MEDIA_TYPE:  # Bedrock: framed JSON messages, CRCs right
        assert all(isinstance(json.loads(m.payload), dict) for m in decode_messages(reply.body))
    elif reply.streaming:  # Gemini's JSON-array stream: one JSON array once complete
        assert isinstance(json.loads(reply.body), list)
    else:
        parsed = json.loads(reply.body)
        assert isinstance(parsed, dict)
        if reply.status >= 400:  # Bedrock's error body is {"message": ...}, its type in a header
            assert "error" in parsed or "x-amzn-ErrorType" in dict(reply.headers)
    for name, value in reply.headers:
        assert value == value.strip() and value.isascii() and not any(ord(c) < 32 for c in value), (name, value)
    # Each request is journaled, newest last; the older entries rendered in their own examples.
    newest = ENGINE.journal[-1]
    assert newest.path == path, newest
    json.dumps(newest.model_dump(mode="json")).encode()
