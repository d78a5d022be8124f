"""The MCP SDK's side of the chain MCP server over HTTP (``mcp_http``): its streamable
HTTP transport, with sessions, each request made as its bearer token's principal.

``mcp_http`` imports this module with the first request that carries a known token:
it is what imports the SDK, about a second of CPU.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from harness.systems.service.auth import Principal
from harness.systems.service.core import ChainService
from harness.systems.service.mcp_chain import PRINCIPAL_SCOPE_KEY, chain_mcp_server

__all__ = ["LOOPBACK_SECURITY", "McpTransport"]

LOOPBACK_SECURITY = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
    allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
)
"""DNS-rebinding protection for a server on the loopback interface (the SDK's own choice)."""


def _user(principal: Principal, token: str) -> AuthenticatedUser:
    # The SDK's session manager ties a session to the user that opened it.
    return AuthenticatedUser(
        AccessToken(
            token=token, client_id=principal.user, scopes=[], subject=f"{principal.organization}/{principal.user}"
        )
    )


class McpTransport:
    """The SDK's session manager for ``service``'s MCP server, and its ASGI app."""

    def __init__(self, service: ChainService, transport_security: TransportSecuritySettings | None) -> None:
        self.session_manager = StreamableHTTPSessionManager(
            app=chain_mcp_server(service), security_settings=transport_security
        )
        self._app = StreamableHTTPASGIApp(self.session_manager)

    def run(self) -> AbstractAsyncContextManager[None]:
        """Run the session manager (once): requests are served while it runs."""
        return self.session_manager.run()

    async def serve(self, principal: Principal, token: str, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one HTTP request, made as ``principal`` (whose bearer token is ``token``)."""
        await self._app({**scope, PRINCIPAL_SCOPE_KEY: principal, "user": _user(principal, token)}, receive, send)
