"""The chain service over HTTP: a Starlette app with the REST doors, the WebSocket
progress door and the progress page.

- ``POST /chat/chain`` — run a chain to its end. 200 with the plan result, whatever the
  chain's end: a failed, gated, cancelled, step-limited or stalled chain is a result too, told
  apart by its ``status`` (the request was fine; the chain ran).
- ``GET /chat/chain/status/{planId}`` — the chain's status.
- ``WS /chat/chain/ws`` — run chains and hear their events as they happen
  (``harness.systems.service.websocket``).
- ``GET /chain`` — the progress page; ``/chain/assets/*`` its script and style.
- ``GET /healthz`` — 200 while serving.
- ``/scim/v2/…`` — the organization's users and groups over SCIM 2.0
  (``harness.systems.service.scim``; its errors are SCIM ``Error`` bodies).

Every error is ``{"status": ..., "detail": ...}`` with that HTTP status: 400 for a body
that is not JSON or not a valid chain request, 401 for a missing or unknown bearer
token, 404 for an unknown plan — another organization's plan included, never 403 — or
an unknown route, 405 for a wrong method, 413 for a body past ``MAX_BODY_BYTES``. A bug
of the service's own is a 500 of the same shape whose detail carries a request id (also
in ``x-request-id``, and logged with the traceback); the connection stays usable, and a
WebSocket is closed with code 1011.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from harness.systems.chain import ChainPlan, chain_chat_history
from harness.systems.chain.export import MAGIC8_KEYS, step_summaries
from harness.systems.service.auth import TokenAuth
from harness.systems.service.core import ChainRequest, ChainService
from harness.systems.service.errors import ChainServiceError, read_json
from harness.systems.service.mcp_http import mcp_asgi_app
from harness.systems.service.scim import scim_mount
from harness.systems.service.status import ChainStatus
from harness.systems.service.websocket import ChainSocket

__all__ = ["MAX_BODY_BYTES", "PAGE_DIR", "create_app", "plan_result"]

PAGE_DIR = Path(__file__).parent / "page"
"""The progress page's static files (no build step)."""

MAX_BODY_BYTES = 1024 * 1024
"""The largest chain request body; a longer one is a 413, refused before it is all read."""

INTERNAL_ERROR = 1011
"""The WebSocket close code after a bug of the service's own."""

_log = logging.getLogger("harness.systems.service")


def plan_result(status: ChainStatus, plan: ChainPlan) -> dict[str, Any]:
    """A finished chain as the doors answer it: its status, output, steps (number,
    type and label, status, summary), its chat history, and its chat config and
    characters (``chatConfigId``, ``systemCharacter``, ``userCharacter``).

    A gated chain has no output: the plan's output is then the very fact the gate
    denied, which must not reach the user as the answer (the chat history says the
    chain was halted instead).
    """
    output = None if status.status == "gated" else plan.model_dump(mode="json", include={"output"})["output"]
    history = chain_chat_history(plan)  # with its chat config and characters (Group K)
    steps = step_summaries(plan)
    return {
        **status.as_json(),
        "name": plan.name,
        "output": output,
        "steps": steps,
        "chatHistory": history["chatHistory"],
        **{key: history[key] for key in MAGIC8_KEYS},
    }


def _error(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"status": status, "detail": detail}, status_code=status, headers=headers)


async def _service_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ChainServiceError)
    return _error(exc.status, exc.detail)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        detail = f"there is no {request.url.path!r} here; the chain service serves /chat/chain, /chain and /healthz"
    elif exc.status_code == 405:
        allowed = {k.lower(): v for k, v in (exc.headers or {}).items()}.get("allow", "")
        detail = f"{request.method} is not allowed on {request.url.path!r}; use {allowed or 'another method'}"
    else:
        detail = str(exc.detail)
    return _error(exc.status_code, detail, dict(exc.headers or {}))


class _LastGuard:
    """Whatever fails inside the app, an HTTP client gets a JSON 500 ``{status, detail}``
    carrying a request id, and its keep-alive connection stays usable (Starlette's own
    last handler re-raises, and uvicorn then closes the connection); a WebSocket gets a
    close frame with code 1011. The traceback goes to the log, under the same id."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        sent: set[str] = set()

        async def watched(message: Message) -> None:
            sent.add(message["type"])
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception:
            request_id = f"req_{uuid.uuid4().hex[:24]}"
            _log.exception(
                "the chain service failed on %s %s (request id %s)",
                scope.get("method", "WS"),
                scope.get("path"),
                request_id,
            )
            if scope["type"] == "websocket":
                if "websocket.close" not in sent:
                    with contextlib.suppress(Exception):  # the client may be gone already
                        await send(
                            {
                                "type": "websocket.close",
                                "code": INTERNAL_ERROR,
                                "reason": f"internal error, request id {request_id}",
                            }
                        )
                return
            if "http.response.start" in sent:  # part of a reply is out: nothing sound can follow
                raise
            detail = (
                f"the chain service failed on {scope.get('method')} {scope.get('path')}; this is a bug "
                f"in the service, please report it with request id {request_id}"
            )
            await _error(500, detail, {"x-request-id": request_id})(scope, receive, send)


async def _body(request: Request) -> bytes | None:
    """The request body, or None once it passes ``MAX_BODY_BYTES`` (never held past it)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return None
    pieces, size = [], 0
    async for piece in request.stream():
        size += len(piece)
        if size > MAX_BODY_BYTES:
            return None
        pieces.append(piece)
    return b"".join(pieces)


def create_app(service: ChainService, auth: TokenAuth, *, mcp: bool = True) -> Starlette:
    """The Starlette app serving ``service`` to the holders of ``auth``'s tokens.

    With ``mcp`` the chain MCP server (streamable HTTP) is routed at ``/mcp``, serving
    while the app's lifespan runs.
    """

    async def run_chain(request: Request) -> Response:
        principal = auth.authenticate(request.headers.get("authorization"))
        raw = await _body(request)
        if raw is None:
            return _error(
                413,
                f"the request body is over {MAX_BODY_BYTES} bytes, the most a chain request "
                "may be; send a smaller plan",
            )
        chain = ChainRequest.parse(read_json(raw, "the request body"))
        plan_id = service.start(principal, chain)
        # wait() shields the run: a client that hangs up does not cancel its chain.
        plan = await service.wait(principal, plan_id)
        return JSONResponse(plan_result(service.status(principal, plan_id), plan))

    async def chain_status(request: Request) -> Response:
        principal = auth.authenticate(request.headers.get("authorization"))
        return JSONResponse(service.status(principal, request.path_params["plan_id"]).as_json())

    async def page(request: Request) -> Response:
        return FileResponse(PAGE_DIR / "index.html", media_type="text/html")

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    socket = ChainSocket.endpoint(service, auth, plan_result)
    # The MCP app imports the MCP SDK with its first request with a known token.
    door = mcp_asgi_app(service, auth) if mcp else None
    # A Route, not a Mount (which would redirect /mcp to /mcp/); Starlette does not run a
    # routed app's lifespan, so it runs in this one's.
    mcp_routes = [Route("/mcp", endpoint=door, methods=["GET", "POST", "DELETE"])] if door else []

    def lifespan(_: Starlette) -> AbstractAsyncContextManager[None]:
        return door.lifespan() if door else contextlib.nullcontext()

    return Starlette(
        lifespan=lifespan,
        middleware=[Middleware(_LastGuard)],
        routes=[
            *mcp_routes,
            Route("/chat/chain", run_chain, methods=["POST"]),
            Route("/chat/chain/status/{plan_id}", chain_status, methods=["GET"]),
            WebSocketRoute("/chat/chain/ws", socket),
            Route("/chain", page, methods=["GET"]),
            Mount("/chain/assets", app=StaticFiles(directory=PAGE_DIR)),
            Route("/healthz", healthz, methods=["GET"]),
            scim_mount(service.config.identity, auth.authenticate),
        ],
        exception_handlers={ChainServiceError: _service_error, HTTPException: _http_error},
    )
