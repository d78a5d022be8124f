"""Bytes in and out of the mock's server: a request body read under its cap, a
``MockResponse`` sent (in one write, or piece by piece as its pacing says), the JSON
refusals of the ``/_mockllm`` routes, and the last-resort guard that keeps even the
mock's own failure a JSON 500.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from mockllm._delivery import deliver
from mockllm._limits import nested_deeper_than, non_finite_path, surrogate_path
from mockllm._metrics import ServerMetrics
from mockllm._mock_response import MockResponse
from mockllm._paced_sender import send_pieces
from mockllm._parsing import MAX_NESTING
from mockllm._state import StateUnavailable
from mockllm._validation import validation_problems

__all__ = [
    "LastGuard",
    "ReplyResponse",
    "guarded",
    "read_body",
    "receive_body",
    "refused",
    "too_large",
    "validated",
]


class ReplyResponse(Response):
    """Sends what the engine answered: a complete reply in one write with its
    Content-Length; a paced stream event by event, waiting as the script asks; a lazy
    stream in writes rendered just before they go (``MockResponse``). Made before the
    first byte goes out (the headers encoded, the reply counted), so that a failure
    there can still be a JSON 500."""

    def __init__(self, reply: MockResponse, metrics: ServerMetrics | None = None, started: float = 0.0) -> None:
        self.reply = reply
        self.status_code = reply.status
        self.background = None
        self.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers]
        length = reply.length
        self.chunks: Iterator[tuple[float, bytes]] | None = None
        if length is None:
            self.chunks = metrics.answered(reply, started) if metrics is not None else deliver(reply)
            return
        self.raw_headers.insert(0, (b"content-length", str(length).encode()))
        if metrics is not None:
            metrics.answered_whole(reply, started)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.chunks is not None:
            await send_pieces(
                self.chunks,
                self.reply.delivery,
                self.status_code,
                self.raw_headers,
                scope,
                receive,
                send,
                blocking=self.reply.blocking,
            )
            return
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        await send({"type": "http.response.body", "body": self.reply.body})


def refused(status: int, message: str, problems: list[str] | None = None) -> JSONResponse:
    error: dict[str, Any] = {"message": message}
    if problems is not None:
        error["problems"] = problems
    return JSONResponse({"error": error}, status_code=status)


class _TooLarge(Exception):
    """A request body past ``Limits.max_body_bytes``: ``size`` bytes (or more, ``at_least``)."""

    def __init__(self, size: int, at_least: bool) -> None:
        self.size = size
        self.at_least = at_least


async def read_body(request: Request, cap: int) -> bytes:
    """The request body, counted as it arrives and never held past ``cap`` bytes
    (``_TooLarge`` then)."""
    return await receive_body(request.headers.get("content-length", ""), request.receive, cap)


async def receive_body(declared: str, receive: Receive, cap: int) -> bytes:
    """The body of a request that declared Content-Length ``declared`` ("" if none),
    from ``receive``: counted as it arrives and never held past ``cap`` bytes
    (``_TooLarge`` then). uvicorn drops what the client still sends after the reply, so
    the keep-alive connection stays usable. A client gone before the end of its body
    is Starlette's ``ClientDisconnect``."""
    if declared.isdigit() and int(declared) > cap:
        raise _TooLarge(int(declared), at_least=False)
    pieces, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientDisconnect()
        piece = message.get("body", b"")
        size += len(piece)
        if size > cap:
            raise _TooLarge(size, at_least=True)
        pieces.append(piece)
        if not message.get("more_body", False):
            return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def too_large(exc: _TooLarge, cap: int) -> JSONResponse:
    return refused(
        413,
        f"The request body is {'more than ' if exc.at_least else ''}{exc.size} bytes, over "
        f"the mock's cap of {cap} bytes per request; send less, or raise it with serve "
        "--max-body-bytes.",
    )


async def validated(request: Request, model: type[BaseModel], cap: int) -> BaseModel | JSONResponse:
    """The request's JSON body as ``model``, or the 400 (413) that says what is wrong."""
    try:
        raw = await read_body(request, cap)
    except _TooLarge as exc:
        return too_large(exc, cap)
    try:
        parsed = json.loads(raw or b"{}")
        problem = unkeepable(parsed)
        if problem is not None:
            return refused(400, f"invalid request: {problem}", [problem])
        return model.model_validate(parsed)
    except ValueError as exc:  # bad JSON and ValidationError alike
        problems = (
            [str(p) for p in validation_problems(exc, model)] if isinstance(exc, ValidationError) else [f"body: {exc}"]
        )
        return refused(400, "invalid request: " + "; ".join(problems), problems)
    except RecursionError:
        return refused(
            400, "invalid request: the body is nested too deeply to read", ["body: nested too deeply to read"]
        )


def unkeepable(value: Any) -> str | None:
    """What in a parsed body the mock could not keep and give back as JSON, if anything."""
    if nested_deeper_than(value, MAX_NESTING):
        return f"body: nested more than {MAX_NESTING} levels deep"
    where = surrogate_path(value)
    if where is not None:
        return f"{where}: holds a lone UTF-16 surrogate, which is not valid Unicode"
    where = non_finite_path(value)
    if where is not None:
        return f"{where}: not a finite number (JSON has no Infinity or NaN)"
    return None


_log = logging.getLogger("mockllm.server")


class LastGuard:
    """Whatever fails inside the app, the client gets a JSON 500 carrying a request id
    (logged with the traceback) and the keep-alive connection stays usable: Starlette's
    own last handler re-raises, and uvicorn then closes the connection (``guarded``)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await guarded(self.app, scope, receive, send)


async def guarded(app: Any, scope: Scope, receive: Receive, send: Send) -> None:
    """Run the ASGI ``app`` on an HTTP request; if it fails before its reply started,
    answer a JSON 500 carrying a request id (logged with the traceback), or the 503 of
    a shared state that stopped answering; after, log and raise (uvicorn drops the
    connection: nothing sound can follow part of a reply)."""
    started = False

    async def watched(message: Any) -> None:
        nonlocal started
        started = started or message["type"] == "http.response.start"
        await send(message)

    try:
        await app(scope, receive, watched)
    except StateUnavailable as exc:
        if started:
            raise
        # The shared state is down: say so, as the provider routes do (mockllm._state).
        await JSONResponse(
            {"error": {"message": str(exc), "type": "service_unavailable", "param": None, "code": None}},
            status_code=503,
        )(scope, receive, send)
    except Exception:
        request_id = f"req_{uuid.uuid4().hex[:24]}"
        _log.exception("mockllm failed on %s %s (request id %s)", scope.get("method"), scope.get("path"), request_id)
        if started:  # part of a reply is out: nothing sound can follow it
            raise
        detail = (
            f"mockllm failed on this request; this is a bug in mockllm, please report it with request id {request_id}."
        )
        await JSONResponse(
            {"error": {"message": detail, "type": "server_error", "param": None, "code": None}},
            status_code=500,
            headers={"x-request-id": request_id},
        )(scope, receive, send)
