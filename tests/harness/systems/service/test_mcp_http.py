"""What only the streamable HTTP door does: bearer tokens on every request, sessions
owned by their principal, the 2026 protocol's listen stream, and the app mounted in
another. (The MCP tools over HTTP are tested in ``test_mcp_tools``.)"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated, listen
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.routing import Route

from harness.in_process_mock import mock_http_clients
from harness.systems.service.auth import TokenAuth
from harness.systems.service.mcp_http import _LoopbackMcpHttpApp
from harness.systems.service.mcp_server import LOOPBACK_SECURITY, McpHttpApp, mcp_asgi_app, service_from_file
from tests.harness.systems.service.mcp_support import (
    CHAT,
    EXECUTE,
    TIMEOUT_S,
    Tokens,
    ToolGate,
    gated_query,
    http_client,
    http_mcp,
    serving,
    write_config,
)

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture
def tokens() -> Tokens:
    return Tokens()


@pytest.fixture
def app(tmp_path: Path, tokens: Tokens) -> McpHttpApp:
    service = service_from_file(str(write_config(tmp_path)), http_client=mock_http_clients())
    return mcp_asgi_app(service, TokenAuth.from_json(tokens.table()), transport_security=LOOPBACK_SECURITY)


@pytest.fixture
async def url(app: McpHttpApp) -> AsyncIterator[str]:
    async with serving(app) as base:
        yield f"{base}/mcp"


async def test_a_2026_client_listens_to_a_running_chain(url: str, tokens: Tokens) -> None:
    """The 2026-07-28 protocol has no resources/subscribe: a subscriptions/listen stream
    names the plan URIs, and only the caller's own plans are accepted."""
    async with http_mcp(url, tokens.alice, modern=True) as alice, ToolGate() as gate:
        assert alice.session.protocol_version == "2026-07-28"
        started = await alice.ok(EXECUTE, query=gated_query(gate.port), chatConfigUri=CHAT, wait=False)
        uri = started["planUri"]
        async with listen(alice.session, resource_subscriptions=[uri]) as changes:
            await gate.reached()
            await gate.release("done")
            with anyio.fail_after(TIMEOUT_S):
                async for change in changes:
                    assert change == ResourceUpdated(uri)
                    if (plan := await alice.read_plan(uri))["executed"]:
                        break
        assert plan["output"] == "done"
        assert (plan["chainMode"], plan["mcpSessionId"]) == (True, None)  # this protocol version has no sessions
        async with http_mcp(url, tokens.bob, modern=True) as bob:
            with pytest.raises(MCPError, match=f"not found: {uri}"):
                async with listen(bob.session, resource_subscriptions=[uri]):
                    pass


@pytest.mark.parametrize(
    ("authorization", "detail"),
    [
        (None, "missing bearer token: send 'Authorization: Bearer <token>'"),
        ("Bearer not-a-listed-token", "unknown bearer token"),
        ("Basic YWxpY2U6cHc=", "the Authorization header must be 'Bearer <token>'"),
    ],
    ids=["none", "unknown-token", "not-bearer"],
)
async def test_a_request_without_a_known_bearer_token_is_401_with_a_json_body(
    url: str, authorization: str | None, detail: str
) -> None:
    headers = {**MCP_HEADERS, **({"authorization": authorization} if authorization else {})}
    async with httpx2.AsyncClient() as http:
        response = await http.post(url, content=json.dumps(INITIALIZE), headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    body = response.json()
    assert body["status"] == 401 and body["detail"] == detail
    assert body["error"]["message"] == f"401 Unauthorized: {detail}"  # what an MCP client shows
    assert body["error"]["code"] == types.INVALID_REQUEST
    assert "mcp-session-id" not in response.headers


async def test_the_sdk_client_without_a_token_cannot_connect(url: str) -> None:
    async with http_client(None) as http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            with pytest.raises(MCPError, match=re.escape("401 Unauthorized: missing bearer token")):
                await session.initialize()


async def test_a_session_answers_only_the_principal_that_opened_it(url: str, tokens: Tokens) -> None:
    list_tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    async with httpx2.AsyncClient(headers=MCP_HEADERS) as http:
        opened = await http.post(
            url, content=json.dumps(INITIALIZE), headers={"authorization": f"Bearer {tokens.alice}"}
        )
        assert opened.status_code == 200
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        for token, status in ((tokens.bob, 404), (tokens.alice, 200)):
            response = await http.post(
                url, content=json.dumps(list_tools), headers={**session, "authorization": f"Bearer {token}"}
            )
            assert response.status_code == status, response.text


async def test_the_app_mounted_in_a_starlette_app_serves_mcp_when_its_lifespan_runs(
    app: McpHttpApp, tokens: Tokens
) -> None:
    """What docs/mcp.md tells the mounting app to do: route to the app, run its lifespan."""
    host = Starlette(
        routes=[Route("/mcp", endpoint=app, methods=["GET", "POST", "DELETE"])], lifespan=lambda _: app.lifespan()
    )
    async with serving(host) as base, http_mcp(f"{base}/mcp", tokens.alice) as alice:
        names = [tool.name for tool in (await alice.session.list_tools()).tools]
        assert names == ["am7_chain_execute", "am7_chain_status", "am7_chain_cancel"]


async def test_served_on_loopback_a_request_naming_another_host_is_refused(tmp_path: Path, tokens: Tokens) -> None:
    """The app ``serve_mcp_http`` (``--http``) serves on 127.0.0.1 has the SDK's
    DNS-rebinding protection, ``LOOPBACK_SECURITY``, though the SDK is imported only by
    the first request with a known token."""
    service = service_from_file(str(write_config(tmp_path)), http_client=mock_http_clients())
    app = _LoopbackMcpHttpApp(service, TokenAuth.from_json(tokens.table()))
    headers = {**MCP_HEADERS, "authorization": f"Bearer {tokens.alice}"}
    async with serving(app) as base, httpx2.AsyncClient() as http:
        rebound = await http.post(
            f"{base}/mcp", content=json.dumps(INITIALIZE), headers={**headers, "host": "evil.test"}
        )
        assert (rebound.status_code, rebound.text) == (421, "Invalid Host header")
        assert (await http.post(f"{base}/mcp", content=json.dumps(INITIALIZE), headers=headers)).status_code == 200
