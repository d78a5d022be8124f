"""The chain MCP server over streamable HTTP, behind bearer tokens.

``mcp_asgi_app(service, auth)`` is an ASGI app that serves MCP (the official SDK's
streamable HTTP transport, with sessions) at whatever path it is routed to. Every HTTP
request must carry ``Authorization: Bearer <token>`` with a token ``auth`` knows;
without one, or with an unknown one, the answer is ``401`` with the JSON body
``{"status": 401, "detail": "..."}`` (and a JSON-RPC ``error`` beside them, for MCP
clients). The token's principal is who that request's MCP
calls are made as, and a session belongs to the principal that opened it: any other
principal's requests to it are answered ``404`` as if it did not exist.

The app serves while its lifespan runs. Served by itself (``serve_mcp_http``, or any
ASGI server with lifespan on), the ASGI lifespan is its lifespan. Mounted in another
app, that app's lifespan must enter ``mcp_app.lifespan()``: Starlette does not run a
mounted app's lifespan.

The MCP SDK (``mcp_transport``) is imported, and its session manager started in a task
of the lifespan, by the first request with a known token: the SDK costs about a second
of CPU to import, which a server asked nothing over MCP, or asked only without a token,
need not pay (the 401 is answered without it).
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from harness.systems.lazy_names import LazyNames
from harness.systems.service.auth import TokenAuth
from harness.systems.service.errors import Unauthorized

if TYPE_CHECKING:
    from anyio.abc import TaskGroup, TaskStatus
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.types import Receive, Scope, Send

    from harness.systems.service.core import ChainService
    from harness.systems.service.mcp_transport import LOOPBACK_SECURITY as LOOPBACK_SECURITY
    from harness.systems.service.mcp_transport import McpTransport

__all__ = ["LOOPBACK_SECURITY", "McpHttpApp", "mcp_asgi_app", "serve_mcp_http"]

# LOOPBACK_SECURITY is the SDK's settings object: imported with the SDK, when first used.
__getattr__ = LazyNames(__name__)

INVALID_REQUEST = -32600
"""JSON-RPC's "Invalid Request" error code (the SDK's ``INVALID_REQUEST``), in a 401's body."""


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


class McpHttpApp:
    """The ASGI app ``mcp_asgi_app`` returns; see the module docstring."""

    def __init__(
        self, service: ChainService, auth: TokenAuth, *, transport_security: TransportSecuritySettings | None = None
    ) -> None:
        self.service, self.auth = service, auth
        self.transport_security = transport_security
        self._transport: McpTransport | None = None  # built by the first request with a known token
        self._running: _Running | None = None  # while the lifespan runs

    @asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        """The app serves while this runs (once per app); the SDK's session manager runs
        in it from the first request with a known token on."""
        async with anyio.create_task_group() as tasks:
            self._running = running = _Running(tasks)
            try:
                yield
            finally:
                self._running = None
                running.stop.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            raise RuntimeError(f"the chain MCP app serves HTTP requests, not {scope['type']!r} connections")
        authorization = _header(scope, b"authorization")
        try:
            principal = self.auth.authenticate(authorization)
        except Unauthorized as exc:
            # {status, detail} as every door answers; the JSON-RPC error beside it is what
            # an MCP client shows its user instead of a bare "error response".
            body = {
                **exc.body(),
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": INVALID_REQUEST, "message": f"401 Unauthorized: {exc.detail}"},
            }
            await _send_json(send, exc.status, body, [(b"www-authenticate", b"Bearer")])
            return
        assert authorization is not None
        token = authorization.partition(" ")[2].strip()
        transport = self._transport or await self._start()
        await transport.serve(principal, token, scope, receive, send)

    def _security(self) -> TransportSecuritySettings | None:
        return self.transport_security

    async def _start(self) -> McpTransport:
        running = self._running
        if running is None:
            raise RuntimeError(
                "the chain MCP app serves only while its lifespan runs: served alone, run it with the ASGI "
                "lifespan on; mounted, enter mcp_app.lifespan() in the host app's lifespan"
            )
        async with running.starting:  # one start, however many requests come first
            if self._transport is None:
                from harness.systems.service.mcp_transport import McpTransport

                transport = McpTransport(self.service, self._security())
                await running.tasks.start(running.run, transport)
                self._transport = transport
        return self._transport

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        started = False
        try:
            async with self.lifespan():
                await send({"type": "lifespan.startup.complete"})
                started = True
                await receive()  # lifespan.shutdown
        except Exception as exc:
            failed = "lifespan.shutdown.failed" if started else "lifespan.startup.failed"
            await send({"type": failed, "message": f"{type(exc).__name__}: {exc}"})
            return
        await send({"type": "lifespan.shutdown.complete"})


class _LoopbackMcpHttpApp(McpHttpApp):
    """``serve_mcp_http``'s app on a loopback address: ``LOOPBACK_SECURITY``, imported
    with the SDK."""

    def _security(self) -> TransportSecuritySettings | None:
        from harness.systems.service.mcp_transport import LOOPBACK_SECURITY

        return LOOPBACK_SECURITY


class _Running:
    """What the app holds while its lifespan runs: the task group where the SDK's session
    manager runs, from its start until ``stop``."""

    def __init__(self, tasks: TaskGroup) -> None:
        self.tasks = tasks
        self.starting = anyio.Lock()
        self.stop = anyio.Event()

    async def run(self, transport: McpTransport, *, task_status: TaskStatus[None]) -> None:
        async with transport.run():
            task_status.started()
            await self.stop.wait()


async def _send_json(send: Send, status: int, body: object, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


def mcp_asgi_app(
    service: ChainService, auth: TokenAuth, *, transport_security: TransportSecuritySettings | None = None
) -> McpHttpApp:
    """The chain MCP server as an ASGI app behind ``auth``'s bearer tokens.

    ``transport_security``: the SDK's DNS-rebinding protection (Host/Origin checks);
    ``LOOPBACK_SECURITY`` for a server on 127.0.0.1. Off by default: the bearer token,
    which a browser does not send on its own, is what guards the app.
    """
    return McpHttpApp(service, auth, transport_security=transport_security)


async def serve_mcp_http(
    service: ChainService,
    auth: TokenAuth,
    *,
    host: str = "127.0.0.1",
    port: int = 8766,
    sockets: list[socket.socket] | None = None,
) -> None:
    """Serve the chain MCP app under uvicorn at ``http://host:port/mcp`` until SIGINT or SIGTERM.

    ``sockets``: listening sockets, already bound to ``host``, to serve instead of ``port``.
    On the loopback interface the SDK's DNS-rebinding protection is on.
    """
    import uvicorn

    loopback = host in ("127.0.0.1", "localhost", "::1")
    app = _LoopbackMcpHttpApp(service, auth) if loopback else McpHttpApp(service, auth)
    config = uvicorn.Config(app, host=host, port=port, lifespan="on", log_level="warning")
    await uvicorn.Server(config).serve(sockets=sockets)
