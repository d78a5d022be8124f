"""The chain service's MCP server over streamable HTTP, driven by the official SDK's own
client: ``mcp_asgi_app`` under uvicorn on 127.0.0.1 in this process, every request
authenticated by its bearer token."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated, listen
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.routing import Route

from harness.service.core import TokenAuth
from harness.service.mcp_server import LOOPBACK_SECURITY, McpHttpApp, mcp_asgi_app, service_from_file
from mockllm.server import bind_socket
from mcp_support import (
    CHAT,
    EXECUTE,
    TIMEOUT_S,
    McpClient,
    ToolGate,
    Tokens,
    Updates,
    check_a_caller_that_stops_waiting_stops_its_chain,
    check_a_subscriber_hears_a_running_chain,
    check_another_organization_finds_nothing,
    check_bad_requests_are_tool_errors,
    check_cancel_stops_a_running_chain,
    check_execute_answers_with_the_chain,
    check_tools_are_the_seeds,
    gated_query,
    write_config,
)

pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """``app`` under uvicorn on a free 127.0.0.1 port (bound before it starts, so no
    request can come too early); its base URL, and it is stopped afterwards."""
    sock = bind_socket("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, lifespan="on", log_config=None, log_level="warning",
                                           timeout_graceful_shutdown=5))
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@pytest.fixture
def tokens() -> Tokens:
    return Tokens()


@pytest.fixture
def app(tmp_path: Path, tokens: Tokens) -> McpHttpApp:
    service = service_from_file(str(write_config(tmp_path)))
    return mcp_asgi_app(service, TokenAuth.from_json(tokens.table()), transport_security=LOOPBACK_SECURITY)


@pytest.fixture
async def url(app: McpHttpApp) -> AsyncIterator[str]:
    async with serving(app) as base:
        yield f"{base}/mcp"


def http_client(token: str | None, on_response: Any = None) -> httpx2.AsyncClient:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300),
                              event_hooks={"response": [on_response] if on_response else []})


@asynccontextmanager
async def http_mcp(url: str, token: str, *, modern: bool = False) -> AsyncIterator[McpClient]:
    """An SDK client session of ``token``'s principal: the 2025 handshake, or 2026-07-28's discover."""
    stream_open = anyio.Event()

    async def watch(response: httpx2.Response) -> None:
        if response.request.method == "GET" and response.status_code == 200:
            stream_open.set()  # the session's GET stream, which carries its notifications

    async def notifications_ready() -> None:
        with anyio.fail_after(TIMEOUT_S):
            await stream_open.wait()

    updates = Updates()
    async with http_client(token, watch) as http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write, message_handler=updates) as session:
            await (session.discover() if modern else session.initialize())
            yield McpClient(session, updates, notifications_ready)


async def test_tools_and_resource_template_are_the_seeds(url: str, tokens: Tokens) -> None:
    async with http_mcp(url, tokens.alice) as alice:
        await check_tools_are_the_seeds(alice)


async def test_execute_waits_for_the_chain_and_answers_with_output_steps_and_plan_uri(url: str, tokens: Tokens
                                                                                     ) -> None:
    async with http_mcp(url, tokens.alice) as alice:
        await check_execute_answers_with_the_chain(alice)


async def test_bad_requests_are_tool_errors_that_say_what_is_wrong(url: str, tokens: Tokens) -> None:
    async with http_mcp(url, tokens.alice) as alice:
        await check_bad_requests_are_tool_errors(alice)


async def test_another_organizations_plan_is_not_found(url: str, tokens: Tokens) -> None:
    async with http_mcp(url, tokens.alice) as alice, http_mcp(url, tokens.bob) as bob:
        uri = await check_execute_answers_with_the_chain(alice)
        await check_another_organization_finds_nothing(alice, bob, uri)


async def test_cancel_stops_a_chain_held_at_a_tool_step(url: str, tokens: Tokens) -> None:
    async with http_mcp(url, tokens.alice) as alice:
        await check_cancel_stops_a_running_chain(alice)


async def test_a_caller_that_stops_waiting_for_its_chain_cancels_it(url: str, tokens: Tokens) -> None:
    async with http_mcp(url, tokens.alice) as alice:
        await check_a_caller_that_stops_waiting_stops_its_chain(alice)


async def test_a_subscriber_is_told_of_every_change_while_the_chain_runs(url: str, tokens: Tokens) -> None:
    async with http_mcp(url, tokens.alice) as alice:
        await check_a_subscriber_hears_a_running_chain(alice)


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
        async with http_mcp(url, tokens.bob, modern=True) as bob:
            with pytest.raises(MCPError, match=f"not found: {uri}"):
                async with listen(bob.session, resource_subscriptions=[uri]):
                    pass


@pytest.mark.parametrize(("authorization", "detail"), [
    (None, "missing bearer token: send 'Authorization: Bearer <token>'"),
    ("Bearer not-a-listed-token", "unknown bearer token"),
    ("Basic YWxpY2U6cHc=", "the Authorization header must be 'Bearer <token>'"),
], ids=["none", "unknown-token", "not-bearer"])
async def test_a_request_without_a_known_bearer_token_is_401_with_a_json_body(url: str, authorization: str | None,
                                                                             detail: str) -> None:
    headers = {**MCP_HEADERS, **({"authorization": authorization} if authorization else {})}
    async with httpx2.AsyncClient() as http:
        response = await http.post(url, content=json.dumps(INITIALIZE), headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    body = response.json()
    assert body["status"] == 401 and body["detail"] == detail
    assert body["error"]["message"] == f"401 Unauthorized: {detail}"  # what an MCP client shows
    assert "mcp-session-id" not in response.headers


async def test_the_sdk_client_without_a_token_cannot_connect(url: str) -> None:
    async with http_client(None) as http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            with pytest.raises(MCPError, match=re.escape("401 Unauthorized: missing bearer token")):
                await session.initialize()


async def test_a_session_answers_only_the_principal_that_opened_it(url: str, tokens: Tokens) -> None:
    list_tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    async with httpx2.AsyncClient(headers=MCP_HEADERS) as http:
        opened = await http.post(url, content=json.dumps(INITIALIZE),
                                 headers={"authorization": f"Bearer {tokens.alice}"})
        assert opened.status_code == 200
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        for token, status in ((tokens.bob, 404), (tokens.alice, 200)):
            response = await http.post(url, content=json.dumps(list_tools),
                                       headers={**session, "authorization": f"Bearer {token}"})
            assert response.status_code == status, response.text


async def test_the_app_mounted_in_a_starlette_app_serves_mcp_when_its_lifespan_runs(app: McpHttpApp,
                                                                                    tokens: Tokens) -> None:
    """What docs/mcp.md tells the mounting app to do: route to the app, run its lifespan."""
    host = Starlette(routes=[Route("/mcp", endpoint=app, methods=["GET", "POST", "DELETE"])],
                     lifespan=lambda _: app.lifespan())
    async with serving(host) as base, http_mcp(f"{base}/mcp", tokens.alice) as alice:
        names = [tool.name for tool in (await alice.session.list_tools()).tools]
        assert names == ["am7_chain_execute", "am7_chain_status", "am7_chain_cancel"]
