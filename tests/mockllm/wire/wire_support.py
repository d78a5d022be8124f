"""What the codec tests share: a reply plan rendered by a codec as the engine sends it."""

from __future__ import annotations

from typing import Any

import pytest

from mockllm._exceptions import RequestRejected
from mockllm._plan import ReplyPlan
from mockllm._wire.base import WireCodec

# The codec tests hand the rendered bytes to the openai>=3 / anthropic>=1 SDKs, on httpx2.
httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

JSON = {"content-type": "application/json"}
SSE = {"content-type": "text/event-stream"}


def rendered(codec: WireCodec, plan: ReplyPlan, body: dict[str, Any]) -> httpx2.Response:
    """``body`` validated strictly, then ``plan`` rendered for it: SSE when the body asks
    to stream, JSON otherwise; a rejected body is the codec's error reply."""
    try:
        codec.read_request(body, lenient=False)
    except RequestRejected as exc:
        return httpx2.Response(exc.status, headers=JSON, content=codec.render_error(exc.status, exc.type, exc.message))
    if codec.wants_stream(body):
        return httpx2.Response(200, headers=SSE, content=b"".join(codec.render_events(plan, body)))
    return httpx2.Response(200, headers=JSON, content=codec.render_json(plan, body))
