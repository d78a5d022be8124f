"""The mock as a real HTTP server: a Starlette app run by uvicorn on loopback.

This is the only module that imports Starlette. Routes:

- ``POST …/chat/completions``, ``POST …/messages``, ``POST …/responses`` — the three
  provider protocols (any path prefix, so ``/v1`` and ``/api/v1`` both work);
- ``GET /_mockllm/health`` — 200 when serving;
- ``GET /_mockllm/requests`` — the request journal, newest last;
- ``POST /_mockllm/reset`` — forget the journal.

Every reply is what ``MockLLM.handle`` returns. A streamed reply with no pacing goes out
in one write; with pacing each event is its own write, after its delay. A client that
goes away mid-stream just ends that response: the watcher task and the sender live in
one task group, so nothing outlives the request.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from mockllm.engine import MockLLM, MockResponse

__all__ = ["create_app", "serve"]


class _PacedResponse(Response):
    """Sends a scripted stream event by event, waiting as the script asks."""

    def __init__(self, reply: MockResponse) -> None:
        self.reply = reply
        self.status_code = reply.status
        self.background = None
        self.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await send({"type": "http.response.start", "status": self.status_code,
                        "headers": self.raw_headers})
            async with anyio.create_task_group() as group:

                async def watch_disconnect() -> None:
                    while (await receive())["type"] != "http.disconnect":
                        pass
                    group.cancel_scope.cancel()

                group.start_soon(watch_disconnect)
                for wait, chunk in self.reply.paced_chunks():
                    if wait:
                        await anyio.sleep(wait)
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                group.cancel_scope.cancel()
        except OSError:
            # The client went away; there is no one left to tell.
            return


def _reply_response(reply: MockResponse) -> Response:
    if reply.pacing is not None:
        return _PacedResponse(reply)
    response = Response(reply.body, status_code=reply.status)
    response.raw_headers = [(b"content-length", str(len(reply.body)).encode())] + [
        (k.encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers
    ]
    return response


def create_app(mock: MockLLM | None = None) -> Starlette:
    """The Starlette app serving ``mock`` (a new ``MockLLM()`` if None)."""
    engine = mock if mock is not None else MockLLM()

    async def provider(request: Request) -> Response:
        body = await request.body()
        reply = engine.handle(request.method, request.url.path, request.headers, body)
        return _reply_response(reply)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def requests(request: Request) -> Response:
        return JSONResponse([entry.model_dump(mode="json") for entry in engine.journal])

    async def reset(request: Request) -> Response:
        engine.reset()
        return JSONResponse({"status": "reset"})

    app = Starlette(
        routes=[
            Route("/_mockllm/health", health, methods=["GET"]),
            Route("/_mockllm/requests", requests, methods=["GET"]),
            Route("/_mockllm/reset", reset, methods=["POST"]),
            Route("/{path:path}", provider, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
        ]
    )
    app.state.mock = engine
    return app


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP (not 0): asyncio sets TCP_NODELAY on accepted connections only
    # when the socket says it is TCP; without it a reply written in two pieces (headers,
    # then body) waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


class _Stopped(Exception):
    """Raised by the SIGTERM handler so that serve() returns normally."""


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise _Stopped


def serve(mock: MockLLM, *, host: str = "127.0.0.1", port: int = 8000,
          on_ready: Callable[[str], None] | None = None) -> None:
    """Run the server until SIGINT/SIGTERM. ``on_ready`` gets the base URL once bound."""
    import uvicorn

    sock = bind_socket(host, port)
    bound_port = sock.getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(create_app(mock), log_level="warning", access_log=False,
                            lifespan="off", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(f"http://{shown_host}:{bound_port}")
    run_until_signalled(server, sock)


def run_until_signalled(server: Any, sock: socket.socket) -> None:
    """Run uvicorn ``server`` on ``sock`` until SIGINT or SIGTERM, then return normally
    (the process can exit 0); ``sock`` is closed either way."""
    # uvicorn shuts down gracefully on SIGINT/SIGTERM and then re-raises the signal
    # with the handlers it found installed; ended_by_signals makes those end quietly.
    try:
        with ended_by_signals():
            server.run(sockets=[sock])
    finally:
        sock.close()


@contextlib.contextmanager
def ended_by_signals() -> Iterator[None]:
    """SIGINT or SIGTERM ends the block quietly, so that the process can exit 0."""
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_stopped) if in_main else None
    try:
        yield
    except (KeyboardInterrupt, _Stopped):
        pass
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
