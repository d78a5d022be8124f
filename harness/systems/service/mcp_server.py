"""The chain service's MCP server: the entry point, and the names to import.

::

    python -m harness.systems.service.mcp_server --stdio [--config service.yaml] [--llm-base-url URL]
    python -m harness.systems.service.mcp_server --http [--host 127.0.0.1] [--port 8766] [--config ...]

Over stdio the server serves one principal: ``HARNESS_CHAIN_TOKEN`` holds a bearer
token that ``HARNESS_CHAIN_TOKENS`` maps to a user and an organization (see
``harness.systems.service.auth.TokenAuth``). With no token, or one not listed, the server does
not start: it says why on stderr and exits with status 2. Over HTTP each request's
bearer token is checked (``harness.systems.service.mcp_http``).

The configuration is ``harness.systems.service.config``'s YAML; its ``llm`` section is also the
chat config named ``default`` (``am7://<org>/chat.config/default``) unless the file
defines one by that name.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import socket
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from harness.systems.lazy_names import LazyNames
from harness.systems.service.auth import Principal, TokenAuth
from harness.systems.service.errors import Unauthorized

if TYPE_CHECKING:
    from harness.systems.service.config import HttpClientFactory
    from harness.systems.service.core import ChainService
    from harness.systems.service.mcp_chain import PRINCIPAL_SCOPE_KEY as PRINCIPAL_SCOPE_KEY
    from harness.systems.service.mcp_chain import chain_mcp_server as chain_mcp_server
    from harness.systems.service.mcp_http import LOOPBACK_SECURITY as LOOPBACK_SECURITY
    from harness.systems.service.mcp_http import McpHttpApp as McpHttpApp
    from harness.systems.service.mcp_http import mcp_asgi_app as mcp_asgi_app
    from harness.systems.service.mcp_http import serve_mcp_http as serve_mcp_http

__all__ = [
    "LOOPBACK_SECURITY",
    "PRINCIPAL_SCOPE_KEY",
    "TOKEN_ENV",
    "McpHttpApp",
    "chain_mcp_server",
    "main",
    "mcp_asgi_app",
    "run_stdio",
    "serve_mcp_http",
    "service_from_file",
    "stdio_principal",
]

# The names this module offers from the modules that import MCP and the service, imported
# when first used: a server that refuses to start (no token) exits before importing them,
# a second and a half of CPU sooner.
__getattr__ = LazyNames(__name__)


TOKEN_ENV = "HARNESS_CHAIN_TOKEN"
"""The bearer token a stdio server serves (looked up in ``HARNESS_CHAIN_TOKENS``)."""


def stdio_principal(environ: Mapping[str, str] = os.environ) -> Principal:
    """Whom a stdio server serves; a ``ValueError`` says what is missing or wrong."""
    token = environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise ValueError(
            f"{TOKEN_ENV} is not set: set it to a bearer token listed in HARNESS_CHAIN_TOKENS "
            f"(a JSON object, or a JSON file's path, of token -> {{user, organization}})"
        )
    try:
        return TokenAuth.from_env(environ).authenticate(f"Bearer {token}")
    except Unauthorized as exc:
        raise ValueError(f"{TOKEN_ENV}: {exc.detail}: it is not listed in HARNESS_CHAIN_TOKENS") from exc


def service_from_file(
    path: str | None, *, base_url: str | None = None, http_client: HttpClientFactory | None = None
) -> ChainService:
    """A chain service configured by YAML file ``path``, with a ``default`` chat config
    (``base_url`` and ``http_client`` as ``load_service_config`` takes them)."""
    from harness.systems.service.config import load_service_config
    from harness.systems.service.core import ChainService

    config = load_service_config(path, base_url=base_url, http_client=http_client)
    config.chat_configs.setdefault("default", config.client)
    return ChainService(config)


async def run_stdio(service: ChainService, principal: Principal) -> None:
    """Serve MCP on this process's stdin and stdout, as ``principal``, until stdin closes."""
    from mcp.server.stdio import stdio_server

    from harness.systems.service.mcp_chain import chain_mcp_server

    server = chain_mcp_server(service, principal)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m harness.systems.service.mcp_server",
        description="The chain service's MCP server (tools am7_chain_execute, "
        "am7_chain_status, am7_chain_cancel; plans as resources).",
    )
    transport = parser.add_mutually_exclusive_group(required=True)
    transport.add_argument("--stdio", action="store_true", help=f"serve on stdin/stdout, as {TOKEN_ENV}'s principal")
    transport.add_argument(
        "--http", action="store_true", help="serve streamable HTTP at /mcp, bearer tokens from HARNESS_CHAIN_TOKENS"
    )
    parser.add_argument("--config", help="the service's YAML configuration (default: built-in defaults)")
    parser.add_argument(
        "--llm-base-url", help="the model server to use (default: the config's, else the SDK's default)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="--http: address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port",
        type=int,
        default=8766,
        help="--http: port to listen on (default 8766; 0: any free one, named on stderr)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until stdin closes (stdio), SIGINT or SIGTERM; 2 when it cannot start (the reason
    is on stderr)."""
    args = _arguments(argv)
    try:
        principal = stdio_principal() if args.stdio else None
        auth = TokenAuth.from_env()
        service = service_from_file(args.config, base_url=args.llm_base_url)
    except (ValueError, OSError) as exc:
        print(f"harness.systems.service.mcp_server: cannot start: {exc}", file=sys.stderr)
        return 2
    if principal is None and not auth.tokens:
        print(
            "harness.systems.service.mcp_server: cannot start: HARNESS_CHAIN_TOKENS lists no tokens, so no request "
            "could be served",
            file=sys.stderr,
        )
        return 2
    # Once the server is sure to start: one that refuses ends before it imports asyncio.
    import asyncio

    from harness.systems.service.mcp_http import serve_mcp_http

    # SIGTERM ends the server as Ctrl-C does: uvicorn shuts down gracefully on either and
    # then re-raises it, and here either ends the process with status 0.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        if principal is not None:
            asyncio.run(run_stdio(service, principal))
        else:
            family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
            sock = socket.create_server((args.host, args.port), family=family)
            # Accepted connections inherit it: a reply written in pieces does not wait ~40 ms
            # for the client's delayed ACK.
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            print(
                f"harness.systems.service.mcp_server: MCP at http://{args.host}:{sock.getsockname()[1]}/mcp",
                file=sys.stderr,
            )
            asyncio.run(serve_mcp_http(service, auth, host=args.host, sockets=[sock]))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    status = main()
    # The process ends here: what it made is left to the operating system rather than walked
    # once more by the cyclic collector as the interpreter finalizes (a stdio server that
    # ran chains spent 0.3 CPU-s and 0.6 s on it after its client closed stdin).
    gc.freeze()
    sys.exit(status)
