"""What the MCP door's tests share: a service configuration, scripted queries, a gate
that holds a chain at a TOOL step, and a client as the SDK's own ``ClientSession`` over
either transport — ``stdio_mcp`` (a server subprocess serving one token's principal)
or ``http_mcp`` (a session with a server that ``serving`` runs under uvicorn here).

The gate is a socket on 127.0.0.1: the ``waitForRelease`` tool connects to it and
returns the line the test sends, so a test knows when the chain is at that step and
decides when it moves on — in this process or in a server subprocess, with no sleeps.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import uvicorn
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from mockllm import InstructionChain
from mockllm._server import bind_socket
from mockllm.testing import PromptServer
from tests.harness.systems.service.gate_tool import wait_for_release

TIMEOUT_S = 15
"""A guard against a hang, never a pace: every wait here ends on an event."""

EXECUTE, STATUS, CANCEL = "am7_chain_execute", "am7_chain_status", "am7_chain_cancel"
CHAT = "am7://acme/chat.config/default"
REPO = Path(__file__).resolve().parents[4]
SERVER = [sys.executable, "-m", "harness.systems.service.mcp_server"]
PARIS_DOC = "am7://acme/data.data/paris"

SEED_EXECUTE_PROPERTIES = {  # seed 001, Phase 3.4
    "query": {"type": "string", "description": "The chain query/objective"},
    "chatConfigUri": {"type": "string", "description": "am7:// URI of chat config"},
    "promptConfigUri": {"type": "string", "description": "am7:// URI of prompt config"},
    "maxSteps": {"type": "integer", "default": 20},
    "dataReferences": {
        "type": "array",
        "items": {"type": "string"},
        "description": "am7:// URIs of data sources for RAG steps",
    },
}


@dataclass(frozen=True)
class Tokens:
    """Fresh bearer tokens for two users of two organizations."""

    alice: str = field(default_factory=lambda: secrets.token_urlsafe(16))  # organization acme
    bob: str = field(default_factory=lambda: secrets.token_urlsafe(16))  # organization other

    def table(self) -> dict[str, dict[str, str]]:
        return {
            self.alice: {"user": "alice", "organization": "acme"},
            self.bob: {"user": "bob", "organization": "other"},
        }

    def env_json(self) -> str:
        return json.dumps(self.table())


def write_config(directory: Path, model_url: str | None = None, protocol: str = "anthropic-messages") -> Path:
    """A service configuration: the model server ``model_url`` (None: none, so the caller
    gives the service an ``http_client``) spoken to in ``protocol``, a ``default`` chat
    config, the gate tool, one document of acme's, and a plan database servers in
    ``directory`` share.
    (The gate tool is named by its module's dotted name: a server subprocess started in
    the repository imports it as this process does.)"""
    path = directory / "service.yaml"
    llm = {"protocol": protocol, **({"base_url": model_url} if model_url else {})}
    path.write_text(
        json.dumps(
            {  # JSON is YAML
                "llm": llm,
                "chat_configs": {"default": llm},
                "tools": {"waitForRelease": f"{wait_for_release.__module__}:wait_for_release"},
                "documents": {"acme": [{"uri": PARIS_DOC, "text": "Paris is the capital of France."}]},
                "database": str(directory / "plans.db"),
            }
        ),
        encoding="utf-8",
    )
    return path


def _text(text: str) -> dict[str, Any]:
    return {"messages": [{"text_message": {"text": text}}]}


def planned_query(question: str, steps: list[dict[str, Any]], *replies: str) -> str:
    """A query the model plans as ``steps`` (its first reply), then answers with ``replies``
    (each LLM step: its answer, then a routing decision)."""
    return InstructionChain.model_validate(
        {"instruction_chain": [_text(json.dumps({"steps": steps})), *map(_text, replies)]}
    ).tagged(question)


def llm_step(prompt: str) -> dict[str, Any]:
    return {"stepType": "LLM", "inputs": {"prompt": prompt}}


def answer_query(answer: str, question: str = "What is the capital of France?") -> str:
    """A query the model plans as a RAG step over ``PARIS_DOC`` and an LLM step that
    answers ``answer`` and then routes to the end."""
    search = {"stepType": "RAG_QUERY", "ragQuery": "capital of France", "vectorReferenceUri": PARIS_DOC}
    return planned_query(
        question, [search, llm_step("Answer the query using the context above.")], answer, '{"complete": true}'
    )


def gated_query(port: int, tools: int = 1) -> str:
    """A query planned as one LLM step that routes to ``tools`` TOOL steps that each wait
    at the gate on ``port``."""
    steps = [
        {
            "stepType": "TOOL",
            "toolName": "waitForRelease",
            "inputs": {"port": port},
            "description": f"wait at the gate ({n})",
        }
        for n in range(1, tools + 1)
    ]
    return planned_query(
        "Gate?",
        [llm_step("Ask the gate.")],
        "Asking the gate.",
        json.dumps({"complete": False, "reason": "the gate decides", "nextSteps": steps}),
    )


class ToolGate:
    """Holds ``waitForRelease`` TOOL steps until the test releases them, in arrival order."""

    def __init__(self) -> None:
        self._arrivals: asyncio.Queue[asyncio.StreamWriter] = asyncio.Queue()
        self._held: list[asyncio.StreamWriter] = []
        self.port = 0

    async def __aenter__(self) -> ToolGate:
        self._server = await asyncio.start_server(self._arrive, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        for writer in self._held:
            writer.close()
        self._server.close()
        await self._server.wait_closed()

    async def _arrive(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._held.append(writer)
        await self._arrivals.put(writer)

    async def reached(self) -> None:
        """Return once the next TOOL step is running, held at the gate."""
        with anyio.fail_after(TIMEOUT_S):
            await self._arrivals.get()

    async def release(self, text: str) -> None:
        """Let the oldest held TOOL step return ``text``."""
        writer = self._held.pop(0)
        writer.write(text.encode() + b"\n")
        await writer.drain()
        writer.close()


class Updates:
    """The ``notifications/resources/updated`` a client session is sent."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[str] = asyncio.Queue()

    async def __call__(self, message: object) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.queue.put_nowait(message.params.uri)

    async def next(self, uri: str) -> str:
        """Return ``uri`` once the next notification that it changed has come (others are skipped)."""
        with anyio.fail_after(TIMEOUT_S):
            while await self.queue.get() != uri:
                pass
        return uri


@dataclass
class McpClient:
    """An initialized SDK ``ClientSession`` with what the server notified it of.

    ``notifications_ready`` returns once server-initiated notifications can reach the
    client (at once on stdio; over HTTP, once the session's GET stream is open).
    ``transport_session`` is the ``mcp-session-id`` the HTTP server gave (None on stdio).
    """

    session: ClientSession
    updates: Updates
    notifications_ready: Callable[[], Awaitable[None]]
    transport_session: Callable[[], str | None] = lambda: None

    async def call(self, tool: str, **arguments: Any) -> types.CallToolResult:
        return await self.session.call_tool(tool, arguments)

    async def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """The structured result of a call that must succeed."""
        result = await self.call(tool, **arguments)
        assert not result.is_error, result.content
        assert isinstance(result.structured_content, dict)
        return result.structured_content

    async def refused(self, tool: str, **arguments: Any) -> str:
        """The text of a call that must be a tool error."""
        result = await self.call(tool, **arguments)
        assert result.is_error, result.structured_content
        assert isinstance(result.content[0], types.TextContent)
        return result.content[0].text

    async def read_plan(self, uri: str) -> dict[str, Any]:
        contents = (await self.session.read_resource(uri)).contents
        assert len(contents) == 1 and contents[0].uri == uri and contents[0].mime_type == "application/json"
        assert isinstance(contents[0], types.TextResourceContents)
        return json.loads(contents[0].text)

    async def subscribe(self, uri: str) -> None:
        # The session's subscribe_resource is deprecated (2026-07-28 has listen instead);
        # a 2025-era server still takes resources/subscribe.
        await self.session.send_request(
            types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri)), types.EmptyResult
        )


# -- connecting over either transport ---------------------------------------------------


def server_env(tokens: Tokens, token: str | None) -> dict[str, str]:
    """This environment, with the tokens table and a stdio server's own token."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_CHAIN_TOKEN")}
    env["HARNESS_CHAIN_TOKENS"] = tokens.env_json()
    if token is not None:
        env["HARNESS_CHAIN_TOKEN"] = token
    return env


async def _stdio_ready() -> None:
    """Over stdio a notification can reach the client as soon as the session is up."""


@asynccontextmanager
async def stdio_mcp(directory: Path, tokens: Tokens, token: str, model_url: str) -> AsyncIterator[McpClient]:
    """A ``--stdio`` server subprocess serving ``token``'s principal, its model the mock
    server at ``model_url``, and an initialized client of it.

    The server speaks to the model in OpenAI's protocol (the MCP door's tests in this
    process, in Anthropic's): the model's protocol is no concern of these tests, and a
    fresh process imports OpenAI's SDK in a third of the CPU Anthropic's takes, a second
    and more for each server."""
    config = write_config(directory, model_url, protocol="openai-chat")
    params = StdioServerParameters(
        command=SERVER[0],
        args=[*SERVER[1:], "--stdio", "--config", str(config)],
        env=server_env(tokens, token),
        cwd=REPO,
    )
    errors = directory / f"server-{token[:6]}.stderr"
    updates = Updates()
    with errors.open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=updates) as session:
                await session.initialize()
                yield McpClient(session, updates, _stdio_ready)
    assert "Traceback" not in errors.read_text(), errors.read_text()


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """``app`` under uvicorn on a free 127.0.0.1 port (bound before it starts, so no
    request can come too early); its base URL, and it is stopped afterwards."""
    sock = bind_socket("127.0.0.1", 0)
    server = PromptServer(
        uvicorn.Config(app, lifespan="on", log_config=None, log_level="warning", timeout_graceful_shutdown=5)
    )
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
        sock.close()


def http_client(token: str | None, on_response: Any = None) -> httpx2.AsyncClient:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx2.AsyncClient(
        headers=headers,
        timeout=httpx2.Timeout(30, read=300),
        event_hooks={"response": [on_response] if on_response else []},
    )


@asynccontextmanager
async def http_mcp(url: str, token: str, *, modern: bool = False) -> AsyncIterator[McpClient]:
    """An SDK client session of ``token``'s principal: the 2025 handshake, or 2026-07-28's discover."""
    stream_open = anyio.Event()
    session_ids: list[str] = []

    async def watch(response: httpx2.Response) -> None:
        if "mcp-session-id" in response.headers:
            session_ids.append(response.headers["mcp-session-id"])
        if response.request.method == "GET" and response.status_code == 200:
            stream_open.set()  # the session's GET stream, which carries its notifications

    async def notifications_ready() -> None:
        with anyio.fail_after(TIMEOUT_S):
            await stream_open.wait()

    updates = Updates()
    async with http_client(token, watch) as http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write, message_handler=updates) as session:
            await (session.discover() if modern else session.initialize())
            yield McpClient(session, updates, notifications_ready, lambda: session_ids[0] if session_ids else None)
