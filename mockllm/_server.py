"""The mock as a real HTTP server: a Starlette app run by uvicorn on loopback.

This is the only module that imports Starlette. Routes:

- ``POST …/chat/completions``, ``POST …/messages``, ``POST …/responses`` — the three
  provider protocols (any path prefix, so ``/v1`` and ``/api/v1`` both work);
- ``GET /_mockllm/health`` — 200 when serving;
- ``GET /metrics`` — Prometheus metrics (``mockllm._metrics``; 501 without the
  ``metrics`` extra, 404 with ``serve --no-metrics``);
- ``GET /_mockllm/requests`` — the request journal, newest last;
- ``POST /_mockllm/reset`` — forget the journal, used steps and registered scripts
  (of that mock: a session's reset is its own, and the server's leaves sessions be);
- ``GET /_mockllm/unused`` — scripted steps no request reached;
- ``GET /_mockllm/findings`` — what the verdict judges (``mockllm._verdict.Findings``);
- ``POST /_mockllm/scripts`` (a chain and a ``match``; 201 with its ``id``), ``GET
  /_mockllm/scripts``, ``GET``/``DELETE /_mockllm/scripts/{id}`` — registered scripts
  for conversations without instruction tags (``mockllm._registered``);
- ``POST /_mockllm/sessions`` (``{"seed": 0, "lenient": false, "stream": {...}}``) and ``DELETE
  /_mockllm/sessions/{id}`` — a session is a mock of its own (journal, scripts, settings)
  served under ``/_mockllm/sessions/{id}/``, every route above included; the pytest
  plugin gives each test one, so that no test sees another's requests. At most
  ``Limits.max_sessions`` are open at once (409 past it). Sessions live in the mock's
  state (``mockllm._state``), so every worker of ``serve --workers`` serves each one; a
  shared state that stops answering is a JSON 503 naming it.

A body past ``Limits.max_body_bytes`` is a 413 (in the protocol's error shape on the
provider routes), refused as soon as its Content-Length or its bytes so far pass the
cap, never buffered past it.

Every reply is what ``MockLLM.handle`` returns. A complete reply with no pacing goes out
in one write, with a Content-Length; with pacing each event is its own write, after its
delay; a long stream is written in pieces rendered as they go (``mockllm._mock_response``), so
the whole reply is never held, and uvicorn's flow control holds the next piece back
while the client is slow to read. A client that goes away mid-stream just ends that
response: the watcher task and the sender live in one task group, so nothing outlives
the request.
"""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import socket
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from types import FrameType
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import Receive, Scope, Send

from mockllm._delivery import deliver
from mockllm._engine import MockLLM, MockResponse
from mockllm._exceptions import ScriptLimitReached
from mockllm._instructions import InstructionChain
from mockllm._limits import nested_deeper_than, non_finite_path, surrogate_path
from mockllm._metrics import ServerMetrics
from mockllm._optional import MissingExtraError
from mockllm._paced_sender import RAW_SEND, send_pieces
from mockllm._parsing import MAX_NESTING
from mockllm._registered import ScriptRequest
from mockllm._sessions import ServerSessions
from mockllm._shapes import StreamShape
from mockllm._state import StateUnavailable
from mockllm._validation import validation_problems

__all__ = ["create_app", "serve"]


class _PiecewiseResponse(Response):
    """Sends a reply in pieces: a paced stream event by event, waiting as the script
    asks; a lazy stream in writes rendered just before they go (``MockResponse``)."""

    def __init__(self, reply: MockResponse, chunks: Iterator[tuple[float, bytes]] | None = None) -> None:
        self.reply = reply
        self.chunks = chunks if chunks is not None else deliver(reply)
        self.status_code = reply.status
        self.background = None
        self.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send_pieces(self.chunks, self.reply.delivery, self.status_code, self.raw_headers, scope, receive, send)


class _App(Starlette):
    """Keeps the ASGI server's own ``send`` in the scope, for ``send_pieces``' body writes."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[RAW_SEND] = send
        await super().__call__(scope, receive, send)


def _reply_response(reply: MockResponse, metrics: ServerMetrics | None = None, started: float = 0.0) -> Response:
    length = reply.length
    if length is None:
        return _PiecewiseResponse(reply, metrics.answered(reply, started) if metrics is not None else None)
    if metrics is not None:
        metrics.answered_whole(reply, started)
    response = Response(reply.body, status_code=reply.status)
    response.raw_headers = [(b"content-length", str(length).encode())] + [
        (k.encode("latin-1"), v.encode("latin-1")) for k, v in reply.headers
    ]
    return response


class _SessionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    lenient: bool = False
    stream: StreamShape | None = None


def _refused(status: int, message: str, problems: list[str] | None = None) -> JSONResponse:
    error: dict[str, Any] = {"message": message}
    if problems is not None:
        error["problems"] = problems
    return JSONResponse({"error": error}, status_code=status)


class _TooLarge(Exception):
    """A request body past ``Limits.max_body_bytes``: ``size`` bytes (or more, ``at_least``)."""

    def __init__(self, size: int, at_least: bool) -> None:
        self.size = size
        self.at_least = at_least


async def _body(request: Request, cap: int) -> bytes:
    """The request body, counted as it arrives and never held past ``cap`` bytes
    (``_TooLarge`` then). uvicorn drops what the client still sends after the reply, so
    the keep-alive connection stays usable."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise _TooLarge(int(declared), at_least=False)
    pieces, size = [], 0
    async for piece in request.stream():
        size += len(piece)
        if size > cap:
            raise _TooLarge(size, at_least=True)
        pieces.append(piece)
    return b"".join(pieces)


def _too_large(exc: _TooLarge, cap: int) -> JSONResponse:
    return _refused(
        413,
        f"The request body is {'more than ' if exc.at_least else ''}{exc.size} bytes, over "
        f"the mock's cap of {cap} bytes per request; send less, or raise it with serve "
        "--max-body-bytes.",
    )


async def _validated(request: Request, model: type[BaseModel], cap: int) -> BaseModel | JSONResponse:
    """The request's JSON body as ``model``, or the 400 (413) that says what is wrong."""
    try:
        raw = await _body(request, cap)
    except _TooLarge as exc:
        return _too_large(exc, cap)
    try:
        parsed = json.loads(raw or b"{}")
        problem = _unkeepable(parsed)
        if problem is not None:
            return _refused(400, f"invalid request: {problem}", [problem])
        return model.model_validate(parsed)
    except ValueError as exc:  # bad JSON and ValidationError alike
        problems = (
            [str(p) for p in validation_problems(exc, model)] if isinstance(exc, ValidationError) else [f"body: {exc}"]
        )
        return _refused(400, "invalid request: " + "; ".join(problems), problems)
    except RecursionError:
        return _refused(
            400, "invalid request: the body is nested too deeply to read", ["body: nested too deeply to read"]
        )


def _unkeepable(value: Any) -> str | None:
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


class _LastGuard:
    """Whatever fails inside the app, the client gets a JSON 500 carrying a request id
    (logged with the traceback) and the keep-alive connection stays usable: Starlette's
    own last handler re-raises, and uvicorn then closes the connection."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Any) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
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
            _log.exception(
                "mockllm failed on %s %s (request id %s)", scope.get("method"), scope.get("path"), request_id
            )
            if started:  # part of a reply is out: nothing sound can follow it
                raise
            detail = (
                f"mockllm failed on this request; this is a bug in mockllm, please report it with "
                f"request id {request_id}."
            )
            await JSONResponse(
                {"error": {"message": detail, "type": "server_error", "param": None, "code": None}},
                status_code=500,
                headers={"x-request-id": request_id},
            )(scope, receive, send)


EngineHandler = Callable[[Request, MockLLM], Awaitable[Response]]


def _engine_routes(engine_of: Callable[[Request], MockLLM | None], metrics: ServerMetrics | None) -> list[Route]:
    """The routes one mock serves: its provider endpoints and its ``/_mockllm`` routes."""

    def bound(handler: EngineHandler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            engine = engine_of(request)
            if engine is None:
                session = request.path_params.get("session")
                return _refused(
                    404,
                    f"There is no mock session {session!r} on this server: a session "
                    "lives until it is deleted (the pytest plugin deletes a test's "
                    "session when the test ends). Create one with POST /_mockllm/sessions.",
                )
            return await handler(request, engine)

        return endpoint

    async def provider(request: Request, engine: MockLLM) -> Response:
        started = time.perf_counter()  # metrics: latencies count from here
        path = "/" + request.path_params["path"]
        try:
            body = await _body(request, engine.limits.max_body_bytes)
        except _TooLarge as exc:
            return _reply_response(engine.too_large(request.method, path, exc.size, at_least=exc.at_least))
        # handle() never raises; this guard keeps even a failure in delivery (a header
        # that will not encode) a JSON 500, so the keep-alive connection stays usable.
        try:
            reply = engine.handle(request.method, path, request.headers, body, request.url.query)
            if reply.length is not None and reply.delivery is not None and reply.delivery.stall_s:
                await anyio.sleep(reply.delivery.stall_s)  # a whole reply's simulated generation time
            return _reply_response(reply, metrics, started)
        except StateUnavailable:
            raise  # _LastGuard's 503
        except Exception as exc:
            detail = f"mockllm failed to deliver this reply ({type(exc).__name__}); this is a bug in mockllm."
            return JSONResponse(
                {"error": {"message": detail, "type": "server_error", "param": None, "code": None}}, status_code=500
            )

    async def requests(request: Request, engine: MockLLM) -> Response:
        # ASCII-escaped: a kept request body may hold a lone surrogate, which UTF-8 cannot carry.
        entries = [entry.model_dump(mode="json") for entry in engine.journal]
        return Response(json.dumps(entries, ensure_ascii=True), media_type="application/json")

    async def findings(request: Request, engine: MockLLM) -> Response:
        return JSONResponse(engine.findings().model_dump(mode="json"))

    async def reset(request: Request, engine: MockLLM) -> Response:
        engine.reset()
        return JSONResponse({"status": "reset"})

    async def unused(request: Request, engine: MockLLM) -> Response:
        return JSONResponse([vars(step) for step in engine.unused_steps()])

    async def add_script(request: Request, engine: MockLLM) -> Response:
        checked = await _validated(request, ScriptRequest, engine.limits.max_body_bytes)
        if isinstance(checked, JSONResponse):
            return checked
        assert isinstance(checked, ScriptRequest)
        chain = InstructionChain(instruction_chain=checked.instruction_chain)
        try:
            return JSONResponse(engine.script(chain, checked.match).as_json(), status_code=201)
        except ScriptLimitReached as exc:
            return _refused(409, str(exc))

    async def list_scripts(request: Request, engine: MockLLM) -> Response:
        return JSONResponse([entry.as_json() for entry in engine.scripts])

    async def one_script(request: Request, engine: MockLLM) -> Response:
        script_id = request.path_params["script_id"]
        found = engine.scripts.remove(script_id) if request.method == "DELETE" else engine.scripts.get(script_id)
        if found is None:
            return _refused(404, f"No script {script_id!r} is registered; GET /_mockllm/scripts lists them.")
        return JSONResponse(found.as_json())

    return [
        Route("/_mockllm/requests", bound(requests), methods=["GET"]),
        Route("/_mockllm/reset", bound(reset), methods=["POST"]),
        Route("/_mockllm/unused", bound(unused), methods=["GET"]),
        Route("/_mockllm/findings", bound(findings), methods=["GET"]),
        Route("/_mockllm/scripts", bound(add_script), methods=["POST"]),
        Route("/_mockllm/scripts", bound(list_scripts), methods=["GET"]),
        Route("/_mockllm/scripts/{script_id}", bound(one_script), methods=["GET", "DELETE"]),
        Route("/{path:path}", bound(provider), methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
    ]


def create_app(mock: MockLLM | None = None, *, metrics: bool = True) -> Starlette:
    """The Starlette app serving ``mock`` (a new ``MockLLM()`` if None); with ``metrics``
    (and ``prometheus-client``), counting for ``GET /metrics`` (``mockllm._metrics``)."""
    engine = mock if mock is not None else MockLLM()
    counted, why_not = _server_metrics(engine, metrics)
    sessions = ServerSessions(engine)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def create_session(request: Request) -> Response:
        checked = await _validated(request, _SessionRequest, engine.limits.max_body_bytes)
        if isinstance(checked, JSONResponse):
            return checked
        assert isinstance(checked, _SessionRequest)
        if len(sessions) >= engine.limits.max_sessions:
            return _refused(
                409,
                f"{len(sessions)} mock sessions are open on this server, the most it keeps "
                f"(serve --max-sessions). Delete the ones you are done with "
                "(DELETE /_mockllm/sessions/{id}; the pytest plugin deletes a test's "
                "session when the test ends).",
            )
        session = sessions.open(checked.model_dump(mode="json", exclude_none=True))
        return JSONResponse({"id": session, "path": f"/_mockllm/sessions/{session}"}, status_code=201)

    async def delete_session(request: Request) -> Response:
        session = request.path_params["session"]
        if not sessions.close(session):
            return _refused(404, f"There is no mock session {session!r} on this server.")
        return JSONResponse({"id": session, "status": "deleted"})

    app = _App(
        middleware=[Middleware(_LastGuard)],
        routes=[
            Route("/_mockllm/health", health, methods=["GET"]),
            Route("/_mockllm/sessions", create_session, methods=["POST"]),
            Route("/_mockllm/sessions/{session}", delete_session, methods=["DELETE"]),
            Route("/metrics", _metrics_endpoint(counted, why_not), methods=["GET"]),
            Mount(
                "/_mockllm/sessions/{session}",
                routes=_engine_routes(lambda request: sessions.get(request.path_params["session"]), counted),
            ),
            *_engine_routes(lambda request: engine, counted),
        ],
    )
    app.state.mock = engine
    return app


def _server_metrics(engine: MockLLM, wanted: bool) -> tuple[ServerMetrics | None, str]:
    """The server's metrics, counting ``engine``'s replies; or None and why not."""
    if not wanted:
        return None, "Metrics are off on this server (serve --no-metrics)."
    try:
        metrics = ServerMetrics()
    except MissingExtraError as exc:
        return None, str(exc)
    engine.on_plan = metrics.planned
    return metrics, ""


def _metrics_endpoint(metrics: ServerMetrics | None, why_not: str) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        if metrics is None:
            return _refused(404 if "--no-metrics" in why_not else 501, why_not)
        body, content_type = metrics.exposition()
        return Response(body, headers={"content-type": content_type})

    return endpoint


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


def serve(
    mock: MockLLM,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    on_ready: Callable[[str], None] | None = None,
    metrics: bool = True,
) -> None:
    """Run the server until SIGINT/SIGTERM. ``on_ready`` gets the base URL once bound."""
    import uvicorn

    sock = bind_socket(host, port)
    bound_port = sock.getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(
        create_app(mock, metrics=metrics),
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
    )
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
