"""A plain Starlette app serving odd-but-legal stream shapes, as an upstream to record
(``tests.mockllm.recording.support.odd_upstream`` serves it).

``POST /v1/chat/completions`` answers an OpenAI chunk stream written the ways the SSE
rules allow and the mock never writes: CRLF line ends, a comment, an ``id:`` field,
spaced (non-compact) JSON, one event cut across writes mid-line, two events in one
write, and waits between writes. Every shape must come back byte for byte on replay.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


def chunk(delta: dict, finish: str | None = None) -> dict:
    return {
        "id": "chatcmpl-odd",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "odd-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def compact(value: dict) -> str:
    return json.dumps(value, separators=(",", ":"))


WRITES: list[bytes] = [
    b": keepalive\r\n\r\n",
    f"data: {compact(chunk({'role': 'assistant', 'content': ''}))}\r\n\r\n".encode(),
    f"id: 7\ndata: {compact(chunk({'content': 'Odd '}))}\n\n".encode(),
    f"data: {json.dumps(chunk({'content': 'shapes '}))}\n\n".encode(),  # spaced JSON
    f"data: {compact(chunk({'content': 'cut across'}))[:40]}".encode(),
    f"{compact(chunk({'content': 'cut across'}))[40:]}\n\n".encode(),
    (
        f"data: {compact(chunk({'content': ' writes'}))}\n\ndata: {compact(chunk({'content': ' and more.'}))}\n\n"
    ).encode(),
    f"data: {compact(chunk({}, 'stop'))}\n\n".encode(),
    b"data: [DONE]\n\n",
]
PAUSE_S = 0.03


async def chat(request: Request) -> Response:
    body = await request.json()
    if not body.get("stream"):
        return JSONResponse(
            {"error": {"message": "only streams here", "type": "invalid_request_error", "param": None, "code": None}},
            status_code=400,
            headers={"x-request-id": "req_odd_400"},
        )

    async def writes() -> AsyncIterator[bytes]:
        for piece in WRITES:
            await asyncio.sleep(PAUSE_S)
            yield piece

    return StreamingResponse(writes(), media_type="text/event-stream", headers={"x-request-id": "req_odd"})


app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
