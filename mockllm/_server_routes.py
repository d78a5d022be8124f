"""The routes one mock serves: its provider endpoints (every model call and the routes
beside them, all answered by ``MockLLM.handle``) and its ``/_mockllm`` admin routes
(journal, findings, reset, unused steps, registered scripts). The server mounts them at
the root for its own mock and under ``/_mockllm/sessions/{id}`` for each session.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable

import anyio
from starlette.datastructures import URL, Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope

from mockllm._engine import MockLLM
from mockllm._exceptions import ScriptLimitReached
from mockllm._instructions import InstructionChain
from mockllm._metrics import ServerMetrics
from mockllm._registered import ScriptRequest
from mockllm._server_io import ReplyResponse, _TooLarge, receive_body, refused, validated
from mockllm._state import StateUnavailable

__all__ = ["engine_routes", "is_root_model_call", "model_call"]


EngineHandler = Callable[[Request, MockLLM], Awaitable[Response]]

PROVIDER_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
"""The methods the provider routes take (others are the router's 405)."""


async def model_call(
    scope: Scope, receive: Receive, engine: MockLLM, path: str, metrics: ServerMetrics | None
) -> Response:
    """A provider route of ``engine`` (every model call, and the routes beside them):
    the body read under its cap, then what ``MockLLM.handle`` answers, ready to send.
    Plain ASGI, no Starlette ``Request``: this is the path of every model call."""
    started = time.perf_counter()  # metrics: latencies count from here
    headers = Headers(scope=scope)
    method = scope["method"]
    try:
        body = await receive_body(_declared_length(scope), receive, engine.limits.max_body_bytes)
    except _TooLarge as exc:
        return ReplyResponse(engine.too_large(method, path, exc.size, at_least=exc.at_least))
    # Starlette's ``URL`` parses the whole URL; the query is all it needs, and most calls have none.
    query = URL(scope=scope).query if scope.get("query_string") else ""
    # handle() never raises; this guard keeps even a failure in delivery (a header
    # that will not encode) a JSON 500, so the keep-alive connection stays usable.
    try:
        if engine.recordings is not None and getattr(engine.recordings, "records", False):
            # It may forward to an upstream (a blocking call of seconds): off the loop, so
            # the server's other requests go on meanwhile.
            reply = await anyio.to_thread.run_sync(engine.handle, method, path, headers, body, query)
        else:
            reply = engine.handle(method, path, headers, body, query)
        if reply.length is not None and reply.delivery is not None and reply.delivery.stall_s:
            await anyio.sleep(reply.delivery.stall_s)  # a whole reply's simulated generation time
        return ReplyResponse(reply, metrics, started)
    except StateUnavailable:
        raise  # guarded's 503
    except Exception as exc:
        detail = f"mockllm failed to deliver this reply ({type(exc).__name__}); this is a bug in mockllm."
        return JSONResponse(
            {"error": {"message": detail, "type": "server_error", "param": None, "code": None}}, status_code=500
        )


def _declared_length(scope: Scope) -> str:
    """The request's Content-Length as sent ("" if none): ``Headers.get`` of it, read
    straight from the scope's raw headers (ASGI names them in lower case)."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            return value.decode("latin-1")  # type: ignore[no-any-return]
    return ""


def is_root_model_call(scope: Scope) -> bool:
    """Whether ``scope`` asks the root mock's provider routes (any path outside
    ``/_mockllm`` and ``/metrics``): what the app answers with ``model_call`` straight
    away, past Starlette's middleware and router (whose dozen pattern matches were a
    tenth of the server's own cost of a model call); the router would send it to the
    same place."""
    return (
        scope["type"] == "http"
        and scope["method"] in PROVIDER_METHODS
        and not scope.get("root_path")
        and not scope.get("path", "").startswith(("/_mockllm", "/metrics"))
    )


def engine_routes(
    engine_of: Callable[[Request], MockLLM | None],
    metrics: ServerMetrics | None,
    late: Callable[[Request], Response | None] | None = None,
) -> list[Route]:
    """The routes one mock serves: its provider endpoints and its ``/_mockllm`` routes;
    ``late`` answers (and keeps) a model call to a mock that is gone, if it was there once."""

    def bound(handler: EngineHandler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            engine = engine_of(request)
            if engine is None:
                answer = late(request) if late is not None and handler is provider else None
                if answer is not None:
                    return answer
                session = request.path_params.get("session")
                return refused(
                    404,
                    f"There is no mock session {session!r} on this server: a session "
                    "lives until it is deleted (the pytest plugin deletes a test's "
                    "session when the test ends). Create one with POST /_mockllm/sessions.",
                )
            return await handler(request, engine)

        return endpoint

    async def provider(request: Request, engine: MockLLM) -> Response:
        return await model_call(request.scope, request.receive, engine, "/" + request.path_params["path"], metrics)

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
        checked = await validated(request, ScriptRequest, engine.limits.max_body_bytes)
        if isinstance(checked, JSONResponse):
            return checked
        assert isinstance(checked, ScriptRequest)
        chain = InstructionChain(instruction_chain=checked.instruction_chain)
        try:
            return JSONResponse(engine.script(chain, checked.match).as_json(), status_code=201)
        except ScriptLimitReached as exc:
            return refused(409, str(exc))

    async def list_scripts(request: Request, engine: MockLLM) -> Response:
        return JSONResponse([entry.as_json() for entry in engine.scripts])

    async def one_script(request: Request, engine: MockLLM) -> Response:
        script_id = request.path_params["script_id"]
        found = engine.scripts.remove(script_id) if request.method == "DELETE" else engine.scripts.get(script_id)
        if found is None:
            return refused(404, f"No script {script_id!r} is registered; GET /_mockllm/scripts lists them.")
        return JSONResponse(found.as_json())

    return [
        Route("/_mockllm/requests", bound(requests), methods=["GET"]),
        Route("/_mockllm/reset", bound(reset), methods=["POST"]),
        Route("/_mockllm/unused", bound(unused), methods=["GET"]),
        Route("/_mockllm/findings", bound(findings), methods=["GET"]),
        Route("/_mockllm/scripts", bound(add_script), methods=["POST"]),
        Route("/_mockllm/scripts", bound(list_scripts), methods=["GET"]),
        Route("/_mockllm/scripts/{script_id}", bound(one_script), methods=["GET", "DELETE"]),
        Route("/{path:path}", bound(provider), methods=list(PROVIDER_METHODS)),
    ]
