"""The mock as a real HTTP server: a Starlette app run by uvicorn on loopback.

This module, with the three beside it that it is made of, is all that imports Starlette:
``mockllm._server_routes`` (the routes of one mock), ``mockllm._server_io`` (a body in,
a reply out, the last guard) and ``mockllm._serving`` (the socket and the signals).
Routes:

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
  ``Limits.max_sessions`` are open at once (409 past it). A model call to a deleted
  session is a *late request* (its test had ended): a 404 saying so, kept for ``GET
  /_mockllm/late`` (and the ``late`` of each ``DELETE``'s reply) so that the plugin fails
  the run naming the test. Sessions live in the mock's
  state (``mockllm._state``), so every worker of ``serve --workers`` serves each one; a
  shared state that stops answering is a JSON 503 naming it.

A body past ``Limits.max_body_bytes`` is a 413 (in the protocol's error shape on the
provider routes), refused as soon as its Content-Length or its bytes so far pass the
cap, never buffered past it.

Every reply is what ``MockLLM.handle`` returns (a model call at the root goes to it past
the router and Starlette's middleware: ``_App``). A complete reply with no pacing goes out
in one write, with a Content-Length; with pacing each event is its own write, after its
delay; a long stream is written in pieces rendered as they go (``mockllm._mock_response``), so
the whole reply is never held, and uvicorn's flow control holds the next piece back
while the client is slow to read. A client that goes away mid-stream just ends that
response: the watcher task and the sender live in one task group, so nothing outlives
the request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import BaseModel, ConfigDict
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import Receive, Scope, Send

from mockllm._engine import MockLLM
from mockllm._metrics import ServerMetrics
from mockllm._optional import MissingExtraError
from mockllm._paced_sender import RAW_SEND
from mockllm._server_io import LastGuard, guarded, refused, validated
from mockllm._server_routes import engine_routes, is_root_model_call, model_call
from mockllm._serving import bind_socket
from mockllm._sessions import ServerSessions
from mockllm._shapes import StreamShape

__all__ = ["bind_socket", "create_app"]


class _App(Starlette):
    """Answers a model call at the root with ``model_call`` straight away, under the last
    guard alone (``is_root_model_call``); sends everything else through Starlette,
    keeping the ASGI server's own ``send`` in the scope for ``send_pieces``' body writes."""

    engine: MockLLM
    metrics: ServerMetrics | None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[RAW_SEND] = send
        if is_root_model_call(scope):
            await guarded(self._model_call, scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    async def _model_call(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await model_call(scope, receive, self.engine, scope["path"], self.metrics)
        await response(scope, receive, send)


class _SessionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    seed: int = 0
    lenient: bool = False
    stream: StreamShape | None = None


def create_app(mock: MockLLM | None = None, *, metrics: bool = True) -> Starlette:
    """The Starlette app serving ``mock`` (a new ``MockLLM()`` if None); with ``metrics``
    (and ``prometheus-client``), counting for ``GET /metrics`` (``mockllm._metrics``)."""
    engine = mock if mock is not None else MockLLM()
    counted, why_not = _server_metrics(engine, metrics)
    sessions = ServerSessions(engine)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def create_session(request: Request) -> Response:
        checked = await validated(request, _SessionRequest, engine.limits.max_body_bytes)
        if isinstance(checked, JSONResponse):
            return checked
        assert isinstance(checked, _SessionRequest)
        if len(sessions) >= engine.limits.max_sessions:
            return refused(
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
            return refused(404, f"There is no mock session {session!r} on this server.")
        # The late requests so far, to any session: the plugin reads them here, no extra call.
        return JSONResponse({"id": session, "status": "deleted", "late": sessions.late()})

    async def late_requests(request: Request) -> Response:
        return JSONResponse(sessions.late())

    def late_call(request: Request) -> Response | None:
        session, method, path = request.path_params["session"], request.method, "/" + request.path_params["path"]
        record = sessions.record_late(session, method, path)
        if record is None:
            return None
        return refused(
            404,
            f"There is no mock session {session!r} on this server any more: it was deleted before this "
            f"request ({method} {path}) came, as its test had ended, so nothing checks what it gets (late request "
            f"{record['index'] + 1} to this server). Join the thread or await the task that sends it "
            "before the test returns; or, if a later test sent it, build its client in that test: this one "
            "was kept from the ended test, with its URL. The pytest plugin fails the run naming the test.",
        )

    app = _App(
        middleware=[Middleware(LastGuard)],
        routes=[
            Route("/_mockllm/health", health, methods=["GET"]),
            Route("/_mockllm/sessions", create_session, methods=["POST"]),
            Route("/_mockllm/sessions/{session}", delete_session, methods=["DELETE"]),
            Route("/_mockllm/late", late_requests, methods=["GET"]),
            Route("/metrics", _metrics_endpoint(counted, why_not), methods=["GET"]),
            Mount(
                "/_mockllm/sessions/{session}",
                routes=engine_routes(lambda request: sessions.get(request.path_params["session"]), counted, late_call),
            ),
            *engine_routes(lambda request: engine, counted),
        ],
    )
    app.engine, app.metrics = engine, counted
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
            return refused(404 if "--no-metrics" in why_not else 501, why_not)
        body, content_type = metrics.exposition()
        return Response(body, headers={"content-type": content_type})

    return endpoint
