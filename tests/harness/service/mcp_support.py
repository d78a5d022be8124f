"""What the MCP door's tests share: a service configuration, scripted queries, a gate
that holds a chain at a TOOL step, a client as the SDK's own ``ClientSession``, and the
checks a client of either transport must pass (``check_*``).

The gate is a socket on 127.0.0.1: the ``waitForRelease`` tool connects to it and
returns the line the test sends, so a test knows when the chain is at that step and
decides when it moves on — in this process or in a server subprocess, with no sleeps.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from mockllm import InstructionChain

TIMEOUT_S = 15
"""A guard against a hang, never a pace: every wait here ends on an event."""

EXECUTE, STATUS, CANCEL = "am7_chain_execute", "am7_chain_status", "am7_chain_cancel"
CHAT = "am7://acme/chat.config/default"
PARIS_DOC = "am7://acme/data.data/paris"

SEED_EXECUTE_PROPERTIES = {  # seed 001, Phase 3.4
    "query": {"type": "string", "description": "The chain query/objective"},
    "chatConfigUri": {"type": "string", "description": "am7:// URI of chat config"},
    "promptConfigUri": {"type": "string", "description": "am7:// URI of prompt config"},
    "maxSteps": {"type": "integer", "default": 20},
    "dataReferences": {"type": "array", "items": {"type": "string"},
                       "description": "am7:// URIs of data sources for RAG steps"},
}


@dataclass(frozen=True)
class Tokens:
    """Fresh bearer tokens for two users of two organizations."""

    alice: str = field(default_factory=lambda: secrets.token_urlsafe(16))  # organization acme
    bob: str = field(default_factory=lambda: secrets.token_urlsafe(16))  # organization other

    def table(self) -> dict[str, dict[str, str]]:
        return {self.alice: {"user": "alice", "organization": "acme"},
                self.bob: {"user": "bob", "organization": "other"}}

    def env_json(self) -> str:
        return json.dumps(self.table())


def write_config(directory: Path) -> Path:
    """A service configuration: the in-process mock, a ``default`` chat config, the gate
    tool, one document of acme's, and a plan database servers in ``directory`` share."""
    path = directory / "service.yaml"
    path.write_text(json.dumps({  # JSON is YAML
        "llm": {"protocol": "anthropic-messages"},
        "chat_configs": {"default": {"protocol": "anthropic-messages"}},
        "tools": {"waitForRelease": "mcp_support:wait_for_release"},
        "documents": {"acme": [{"uri": PARIS_DOC, "text": "Paris is the capital of France."}]},
        "database": str(directory / "plans.db"),
    }), encoding="utf-8")
    return path


def _text(text: str) -> dict[str, Any]:
    return {"messages": [{"text_message": {"text": text}}]}


def answer_query(answer: str, question: str = "What is the capital of France?") -> str:
    """A query whose one LLM step answers ``answer`` and then routes to the end."""
    return InstructionChain.model_validate({"instruction_chain": [
        _text(answer), _text('{"complete": true}')]}).tagged(question)


def gated_query(port: int, tools: int = 1) -> str:
    """A query whose LLM step routes to ``tools`` TOOL steps that each wait at the gate on ``port``."""
    steps = [{"stepType": "TOOL", "toolName": "waitForRelease", "inputs": {"port": port},
              "description": f"wait at the gate ({n})"} for n in range(1, tools + 1)]
    return InstructionChain.model_validate({"instruction_chain": [
        _text("Asking the gate."),
        _text(json.dumps({"complete": False, "reason": "the gate decides", "nextSteps": steps}))]}).tagged("Gate?")


async def wait_for_release(port: int) -> str:
    """The gate's TOOL step: returns the line the test releases it with."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        line = await reader.readline()
    finally:
        writer.close()
    if not line:
        raise RuntimeError("the test closed the gate without releasing this step")
    return line.decode().strip()


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
    """

    session: ClientSession
    updates: Updates
    notifications_ready: Callable[[], Awaitable[None]]

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
        await self.session.send_request(types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri)),
                                        types.EmptyResult)


# -- the checks both transports must pass ---------------------------------------------


async def check_tools_are_the_seeds(client: McpClient) -> None:
    assert client.session.server_capabilities is not None
    resources = client.session.server_capabilities.resources
    assert resources is not None and resources.subscribe is True
    tools = {tool.name: tool for tool in (await client.session.list_tools()).tools}
    assert list(tools) == [EXECUTE, STATUS, CANCEL]
    execute = tools[EXECUTE].input_schema
    assert execute["required"] == ["query", "chatConfigUri"]
    assert {k: v for k, v in execute["properties"].items() if k != "wait"} == SEED_EXECUTE_PROPERTIES
    assert execute["properties"]["wait"]["type"] == "boolean" and execute["properties"]["wait"]["default"] is True
    assert tools[STATUS].input_schema == {"type": "object", "required": ["planUri"], "properties": {
        "planUri": {"type": "string", "description": "am7:// URI of the chain plan"}}}
    assert tools[CANCEL].input_schema == {"type": "object", "required": ["planUri"],
                                          "properties": {"planUri": {"type": "string"}}}
    templates = (await client.session.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["am7://{organization}/tool.plan/{planId}"]


async def check_execute_answers_with_the_chain(client: McpClient) -> str:
    """Run a RAG + LLM chain to its end; returns its plan URI."""
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    result = await client.session.call_tool(EXECUTE, {
        "query": answer_query("Paris."), "chatConfigUri": CHAT, "dataReferences": [PARIS_DOC]},
        progress_callback=on_progress)
    assert not result.is_error, result.content
    body = result.structured_content
    assert isinstance(body, dict)
    uri = body["planUri"]
    assert uri.startswith("am7://acme/tool.plan/") and uri.endswith(body["planId"])
    assert (body["status"], body["executed"], body["output"], body["totalExecutedSteps"]) == (
        "completed", True, "Paris.", 2)
    assert [(s["stepNumber"], s["label"], s["status"]) for s in body["steps"]] == [
        (1, "RAG", "COMPLETED"), (2, "LLM", "COMPLETED")]
    assert body["steps"][0]["summary"].startswith("1 result(s)") and body["steps"][1]["summary"] == "Paris."
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert text.text.splitlines()[0] == f"Chain completed: {uri}" and text.text.endswith("Output:\nParis.")
    assert "1. [RAG] COMPLETED: 1 result(s)" in text.text and "2. [LLM] COMPLETED: Paris." in text.text
    assert any(isinstance(c, types.ResourceLink) and c.uri == uri for c in result.content)
    assert progress and progress[-1] == f"chainComplete: {uri}" and all(uri in m for m in progress)

    status = await client.ok(STATUS, planUri=uri)
    assert (status["status"], status["stepNumber"], status["totalSteps"], status["executed"]) == (
        "completed", 2, 2, True)
    plan = await client.read_plan(uri)
    assert (plan["objectId"], plan["executed"], plan["output"], plan["totalExecutedSteps"]) == (
        body["planId"], True, "Paris.", 2)
    assert [s["stepStatus"] for s in plan["steps"]] == ["COMPLETED", "COMPLETED"]
    assert "chainContextJson" in plan
    listed = [r.uri for r in (await client.session.list_resources()).resources]
    assert uri in listed
    return uri


async def check_bad_requests_are_tool_errors(client: McpClient) -> None:
    assert "'chatConfigUri' is a required property" in await client.refused(EXECUTE, query="Hi")
    assert "not an am7:// URI: 'chat-default'" in await client.refused(EXECUTE, query="Hi",
                                                                        chatConfigUri="chat-default")
    assert ("chatConfigUri: not found: am7://other/chat.config/default"
            in await client.refused(EXECUTE, query="Hi", chatConfigUri="am7://other/chat.config/default"))
    assert "unknown argument(s) 'steps'" in await client.refused(EXECUTE, query="Hi", chatConfigUri=CHAT, steps=[])
    assert "maxSteps: 'many' is not of type 'integer'" in await client.refused(
        EXECUTE, query="Hi", chatConfigUri=CHAT, maxSteps="many")
    assert "planUri: not an am7:// URI: 'plan-1'" in await client.refused(STATUS, planUri="plan-1")
    assert "not found: am7://acme/tool.plan/nope" in await client.refused(CANCEL, planUri="am7://acme/tool.plan/nope")
    with pytest.raises(MCPError, match="unknown tool 'am7_chain_pause'"):
        await client.call("am7_chain_pause")


async def check_another_organization_finds_nothing(owner: McpClient, other: McpClient, uri: str) -> None:
    """``uri`` is a plan of ``owner``'s; ``other`` is of another organization."""
    same_id_in_others_org = uri.replace("am7://acme/", "am7://other/")
    for tried in (uri, same_id_in_others_org):
        for tool in (STATUS, CANCEL):
            assert f"not found: {tried} (status 404)" == await other.refused(tool, planUri=tried)
        for attempt in (other.read_plan, other.subscribe):
            with pytest.raises(MCPError, match="not found") as caught:
                await attempt(tried)
            assert caught.value.error.data["status"] == 404 and "steps" not in str(caught.value.error.data)
    assert uri not in [r.uri for r in (await other.session.list_resources()).resources]
    assert (await owner.read_plan(uri))["executed"] is True  # still there for its owner


async def check_cancel_stops_a_running_chain(client: McpClient) -> None:
    async with ToolGate() as gate:
        started = await client.ok(EXECUTE, query=gated_query(gate.port), chatConfigUri=CHAT, wait=False)
        uri = started["planUri"]
        assert started["status"] == "running"
        await gate.reached()
        status = await client.ok(STATUS, planUri=uri)
        assert (status["status"], status["stepNumber"], status["totalSteps"], status["executed"]) == (
            "running", 2, 2, False)
        cancelled = await client.ok(CANCEL, planUri=uri)
        assert (cancelled["status"], cancelled["stepNumber"]) == ("cancelled", 2)
    plan = await client.read_plan(uri)
    assert [(s["stepType"], s["stepStatus"]) for s in plan["steps"]] == [("LLM", "COMPLETED"), ("TOOL", "SKIPPED")]
    assert plan["steps"][1]["summaryText"] == "cancelled while running" and plan["executed"] is False
    assert (await client.ok(CANCEL, planUri=uri))["status"] == "cancelled"  # a stopped chain stays stopped


async def check_a_subscriber_hears_a_running_chain(client: McpClient) -> None:
    async with ToolGate() as gate:
        started = await client.ok(EXECUTE, query=gated_query(gate.port, tools=2), chatConfigUri=CHAT, wait=False)
        uri = started["planUri"]
        await client.subscribe(uri)
        await gate.reached()
        await client.notifications_ready()
        await gate.release("first")
        await gate.reached()  # the chain is held at step 3 now, so ...
        await client.updates.next(uri)  # ... this came while it runs
        midway = await client.read_plan(uri)
        assert midway["executed"] is False
        assert [(s["stepStatus"], s["output"]) for s in midway["steps"]] == [
            ("COMPLETED", "Asking the gate."), ("COMPLETED", "first"), ("EXECUTING", None)]
        await gate.release("second")
        while not (plan := await client.read_plan(await client.updates.next(uri)))["executed"]:
            pass
    assert plan["output"] == "second" and [s["stepStatus"] for s in plan["steps"]] == ["COMPLETED"] * 3
    assert {s["dynamic"] for s in plan["steps"][1:]} == {True}


async def check_a_caller_that_stops_waiting_stops_its_chain(client: McpClient) -> None:
    """With ``wait`` (the default) the chain is the call's: abandoning the call cancels it."""
    uri = ""
    at_the_tool = anyio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        nonlocal uri
        if message and message.startswith("stepStart step 2 of 2: "):
            uri = message.rsplit(" ", 1)[1]
            at_the_tool.set()

    async with ToolGate() as gate:  # held until the end: the step must not finish on its own
        async with anyio.create_task_group() as calls:
            calls.start_soon(lambda: client.session.call_tool(
                EXECUTE, {"query": gated_query(gate.port), "chatConfigUri": CHAT}, progress_callback=on_progress))
            await gate.reached()
            with anyio.fail_after(TIMEOUT_S):
                await at_the_tool.wait()
            await client.subscribe(uri)
            await client.notifications_ready()
            calls.cancel_scope.cancel()
        while (plan := await client.read_plan(await client.updates.next(uri)))["steps"][1]["stepStatus"] != "SKIPPED":
            pass
    assert plan["executed"] is False and plan["steps"][1]["summaryText"] == "cancelled while running"
    assert (await client.ok(STATUS, planUri=uri))["status"] == "cancelled"
