"""The chain MCP server over streamable HTTP, behind bearer tokens.

``mcp_asgi_app(service, auth)`` is an ASGI app that serves MCP (the official SDK's
streamable HTTP transport, with sessions) at whatever path it is routed to. Every HTTP
request must carry ``Authorization: Bearer <token>`` with a token ``auth`` knows;
without one, or with an unknown one, the answer is ``401`` with the JSON body
``{"status": 401, "detail": "..."}`` (and a JSON-RPC ``error`` beside them, for MCP
clients). The token's principal is who that request's MCP
calls are made as, and a session belongs to the principal that opened it: any other
principal's requests to it are answered ``404`` as if it did not exist.

The SDK's session manager must be running while requests are served. Served by itself
(``serve_mcp_http``, or any ASGI server with lifespan on), the app runs it from the
ASGI lifespan. Mounted in another app, that app's lifespan must enter
``mcp_app.lifespan()``: Starlette does not run a mounted app's lifespan.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager

import mcp_types as types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from harness.systems.service.auth import Principal, TokenAuth
from harness.systems.service.core import ChainService
from harness.systems.service.errors import Unauthorized
from harness.systems.service.mcp_chain import PRINCIPAL_SCOPE_KEY, chain_mcp_server

__all__ = ["LOOPBACK_SECURITY", "McpHttpApp", "mcp_asgi_app", "serve_mcp_http"]

LOOPBACK_SECURITY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
    allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
)
"""DNS-rebinding protection for a server on the loopback interface (the SDK's own choice)."""


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _user(principal: Principal, token: str) -> AuthenticatedUser:
    # The SDK's session manager ties a session to the user that opened it.
    return AuthenticatedUser(
        AccessToken(
            token=token, client_id=principal.user, scopes=[], subject=f"{principal.organization}/{principal.user}"
        )
    )


class McpHttpApp:
    """The ASGI app ``mcp_asgi_app`` returns; see the module docstring."""

    def __init__(
        self, service: ChainService, auth: TokenAuth, *, transport_security: TransportSecuritySettings | None = None
    ) -> None:
        self.auth = auth
        self.session_manager = StreamableHTTPSessionManager(
            app=chain_mcp_server(service), security_settings=transport_security
        )
        self._mcp = StreamableHTTPASGIApp(self.session_manager)

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        """Run the SDK's session manager for as long as requests are served (once per app)."""
        return self.session_manager.run()

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
                "error": {"code": types.INVALID_REQUEST, "message": f"401 Unauthorized: {exc.detail}"},
            }
            await _send_json(send, exc.status, body, [(b"www-authenticate", b"Bearer")])
            return
        assert authorization is not None
        token = authorization.partition(" ")[2].strip()
        await self._mcp({**scope, PRINCIPAL_SCOPE_KEY: principal, "user": _user(principal, token)}, receive, send)

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
    app = mcp_asgi_app(service, auth, transport_security=LOOPBACK_SECURITY if loopback else None)
    config = uvicorn.Config(app, host=host, port=port, lifespan="on", log_level="warning")
    await uvicorn.Server(config).serve(sockets=sockets)
