"""The chain service's MCP tools and plan resources, driven by the official SDK's own
client over both transports: ``python -m harness.systems.service.mcp_server --stdio`` as a
subprocess serving one principal, and ``mcp_asgi_app`` under uvicorn on 127.0.0.1 in
this process, every request authenticated by its bearer token. One server per
transport serves the module's tests (starting a subprocess takes seconds)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from harness.in_process_mock import mock_http_clients
from harness.systems.service.auth import TokenAuth
from harness.systems.service.mcp_server import LOOPBACK_SECURITY, mcp_asgi_app, service_from_file
from tests.harness.systems.service.mcp_support import (
    CANCEL,
    CHAT,
    EXECUTE,
    PARIS_DOC,
    SEED_EXECUTE_PROPERTIES,
    STATUS,
    TIMEOUT_S,
    McpClient,
    Tokens,
    ToolGate,
    answer_query,
    gated_query,
    http_mcp,
    llm_step,
    planned_query,
    serving,
    stdio_mcp,
    write_config,
)

pytestmark = pytest.mark.anyio

DONE = '{"complete": true}'


@dataclass
class Door:
    """One transport's server for the module: ``connect(token)`` opens a client session
    as that token's principal."""

    tokens: Tokens
    connect: Callable[[str], AbstractAsyncContextManager[McpClient]]


@pytest.fixture(scope="module", params=["stdio", "http"])
async def door(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Door]:
    tokens = Tokens()
    directory = tmp_path_factory.mktemp(request.param)
    if request.param == "stdio":  # a server subprocess per principal, on one plan database and mock server
        model_url = request.getfixturevalue("mockllm_server_process").base_url
        yield Door(tokens, lambda token: stdio_mcp(directory, tokens, token, model_url))
        return
    app = mcp_asgi_app(
        service_from_file(str(write_config(directory)), http_client=mock_http_clients()),
        TokenAuth.from_json(tokens.table()),
        transport_security=LOOPBACK_SECURITY,
    )
    async with serving(app) as base:
        yield Door(tokens, lambda token: http_mcp(f"{base}/mcp", token))


@pytest.fixture(scope="module")
async def alice(door: Door) -> AsyncIterator[McpClient]:
    """alice of acme, one session for the module's tests."""
    async with door.connect(door.tokens.alice) as client:
        yield client


async def test_tools_and_resource_template_are_the_seeds(alice: McpClient) -> None:
    client = alice
    assert client.session.server_capabilities is not None
    resources = client.session.server_capabilities.resources
    assert resources is not None and resources.subscribe is True
    tools = {tool.name: tool for tool in (await client.session.list_tools()).tools}
    assert list(tools) == [EXECUTE, STATUS, CANCEL]
    execute = tools[EXECUTE].input_schema
    assert execute["required"] == ["query", "chatConfigUri"]
    assert {k: v for k, v in execute["properties"].items() if k != "wait"} == SEED_EXECUTE_PROPERTIES
    assert execute["properties"]["wait"]["type"] == "boolean" and execute["properties"]["wait"]["default"] is True
    assert tools[STATUS].input_schema == {
        "type": "object",
        "required": ["planUri"],
        "properties": {"planUri": {"type": "string", "description": "am7:// URI of the chain plan"}},
    }
    assert tools[CANCEL].input_schema == {
        "type": "object",
        "required": ["planUri"],
        "properties": {"planUri": {"type": "string"}},
    }
    templates = (await client.session.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["am7://{organization}/tool.plan/{planId}"]


async def test_execute_waits_for_the_chain_and_answers_with_output_steps_and_plan_uri(alice: McpClient) -> None:
    await execute_a_chain(alice)


async def execute_a_chain(client: McpClient) -> str:
    """Run a RAG + LLM chain to its end and check the answer; returns its plan URI."""
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    result = await client.session.call_tool(
        EXECUTE,
        {"query": answer_query("Paris."), "chatConfigUri": CHAT, "dataReferences": [PARIS_DOC]},
        progress_callback=on_progress,
    )
    assert not result.is_error, result.content
    body = result.structured_content
    assert isinstance(body, dict)
    uri = body["planUri"]
    assert uri.startswith("am7://acme/tool.plan/") and uri.endswith(body["planId"])
    assert (body["status"], body["executed"], body["output"], body["totalExecutedSteps"]) == (
        "completed",
        True,
        "Paris.",
        2,
    )
    assert [(s["stepNumber"], s["label"], s["status"]) for s in body["steps"]] == [
        (1, "RAG", "COMPLETED"),
        (2, "LLM", "COMPLETED"),
    ]
    assert body["steps"][0]["summary"].startswith("1 result(s)") and body["steps"][1]["summary"] == "Paris."
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert text.text.splitlines()[0] == f"Chain completed: {uri}" and text.text.endswith("Output:\nParis.")
    assert "1. [RAG] COMPLETED: 1 result(s)" in text.text and "2. [LLM] COMPLETED: Paris." in text.text
    assert any(isinstance(c, types.ResourceLink) and c.uri == uri for c in result.content)
    assert progress and progress[-1] == f"chainComplete: {uri}" and all(uri in m for m in progress)

    status = await client.ok(STATUS, planUri=uri)
    assert (status["status"], status["stepNumber"], status["totalSteps"], status["executed"]) == (
        "completed",
        2,
        2,
        True,
    )
    plan = await client.read_plan(uri)
    assert (plan["objectId"], plan["executed"], plan["output"], plan["totalExecutedSteps"]) == (
        body["planId"],
        True,
        "Paris.",
        2,
    )
    assert [s["stepStatus"] for s in plan["steps"]] == ["COMPLETED", "COMPLETED"]
    assert "chainContextJson" in plan
    listed = [r.uri for r in (await client.session.list_resources()).resources]
    assert uri in listed
    return uri


async def test_bad_requests_are_tool_errors_that_say_what_is_wrong(alice: McpClient) -> None:
    client = alice
    assert "'chatConfigUri' is a required property" in await client.refused(EXECUTE, query="Hi")
    assert "not an am7:// URI: 'chat-default'" in await client.refused(
        EXECUTE, query="Hi", chatConfigUri="chat-default"
    )
    assert "chatConfigUri: not found: am7://other/chat.config/default" in await client.refused(
        EXECUTE, query="Hi", chatConfigUri="am7://other/chat.config/default"
    )
    assert "unknown argument(s) 'steps'" in await client.refused(EXECUTE, query="Hi", chatConfigUri=CHAT, steps=[])
    assert "maxSteps: 'many' is not of type 'integer'" in await client.refused(
        EXECUTE, query="Hi", chatConfigUri=CHAT, maxSteps="many"
    )
    assert "planUri: not an am7:// URI: 'plan-1'" in await client.refused(STATUS, planUri="plan-1")
    assert "not found: am7://acme/tool.plan/nope" in await client.refused(CANCEL, planUri="am7://acme/tool.plan/nope")
    with pytest.raises(MCPError, match="unknown tool 'am7_chain_pause'"):
        await client.call("am7_chain_pause")


async def test_another_organizations_plan_is_not_found(alice: McpClient, door: Door) -> None:
    """bob, of another organization, on a server sharing alice's plan database."""
    owner, uri = alice, await execute_a_chain(alice)
    async with door.connect(door.tokens.bob) as other:
        await _finds_nothing(owner, other, uri)


async def _finds_nothing(owner: McpClient, other: McpClient, uri: str) -> None:
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


async def test_cancel_stops_a_chain_held_at_a_tool_step(alice: McpClient) -> None:
    client = alice
    async with ToolGate() as gate:
        started = await client.ok(EXECUTE, query=gated_query(gate.port), chatConfigUri=CHAT, wait=False)
        uri = started["planUri"]
        assert started["status"] == "running"
        await gate.reached()
        status = await client.ok(STATUS, planUri=uri)
        assert (status["status"], status["stepNumber"], status["totalSteps"], status["executed"]) == (
            "running",
            2,
            2,
            False,
        )
        cancelled = await client.ok(CANCEL, planUri=uri)
        assert (cancelled["status"], cancelled["stepNumber"]) == ("cancelled", 2)
    plan = await client.read_plan(uri)
    assert [(s["stepType"], s["stepStatus"]) for s in plan["steps"]] == [("LLM", "COMPLETED"), ("TOOL", "SKIPPED")]
    assert plan["steps"][1]["summaryText"] == "cancelled while running" and plan["executed"] is False
    assert (await client.ok(CANCEL, planUri=uri))["status"] == "cancelled"  # a stopped chain stays stopped


async def test_a_subscriber_is_told_of_every_change_while_the_chain_runs(alice: McpClient) -> None:
    client = alice
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
            ("COMPLETED", "Asking the gate."),
            ("COMPLETED", "first"),
            ("EXECUTING", None),
        ]
        await gate.release("second")
        while not (plan := await client.read_plan(await client.updates.next(uri)))["executed"]:
            pass
    assert plan["output"] == "second" and [s["stepStatus"] for s in plan["steps"]] == ["COMPLETED"] * 3
    assert {s["dynamic"] for s in plan["steps"][1:]} == {True}


async def test_a_caller_that_stops_waiting_for_its_chain_cancels_it(alice: McpClient) -> None:
    client = alice
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
            calls.start_soon(
                lambda: client.session.call_tool(
                    EXECUTE, {"query": gated_query(gate.port), "chatConfigUri": CHAT}, progress_callback=on_progress
                )
            )
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


async def test_step_limited_and_stalled_chains_end_with_their_own_status(alice: McpClient) -> None:
    """Seed Group G through the MCP door: neither is a tool error (the chain ran and was
    stopped as it should be); the status says how it ended, and why."""
    client = alice
    capped = await client.call(
        EXECUTE,
        chatConfigUri=CHAT,
        maxSteps=1,
        query=planned_query("Two answers?", [llm_step("one"), llm_step("two")], "One.", DONE),
    )
    assert not capped.is_error and isinstance(capped.structured_content, dict)
    body = capped.structured_content
    assert (body["status"], body["error"], body["executed"], body["totalExecutedSteps"]) == (
        "maxSteps",
        "the chain stopped at 1 steps",
        True,
        1,
    )
    assert [s["status"] for s in body["steps"]] == ["COMPLETED", "PENDING"]
    text = capped.content[0]
    assert isinstance(text, types.TextContent)
    assert text.text.splitlines()[:2] == [f"Chain maxSteps: {body['planUri']}", "Error: the chain stopped at 1 steps"]
    assert (await client.ok(STATUS, planUri=body["planUri"]))["status"] == "maxSteps"

    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    stalled = await client.session.call_tool(
        EXECUTE,
        {
            "chatConfigUri": CHAT,
            "query": planned_query(
                "Again?", [llm_step("first"), llm_step("second"), llm_step("third")], "Same.", DONE, "Same.", DONE
            ),
        },
        progress_callback=on_progress,
    )
    assert not stalled.is_error and isinstance(stalled.structured_content, dict)
    body = stalled.structured_content
    why = "steps 1 and 2 gave the same LLM output twice in a row"
    assert (body["status"], body["error"], body["output"]) == ("stalled", why, "Same.")
    assert [s["status"] for s in body["steps"]] == ["COMPLETED", "COMPLETED", "PENDING"]
    assert progress[-1] == f"chainStalled: {body['planUri']}"
    status = await client.ok(STATUS, planUri=body["planUri"])
    assert (status["status"], status["error"], status["stepNumber"], status["totalSteps"]) == ("stalled", why, 2, 3)


async def test_plans_record_the_mcp_session_that_started_them(alice: McpClient, door: Door) -> None:
    """Seed 001 §1.4: ``mcpSessionId`` is the session of the ``am7_chain_execute`` call
    (over HTTP the transport's ``mcp-session-id``); every plan is in chain mode."""
    first = await alice.ok(EXECUTE, query=answer_query("Paris."), chatConfigUri=CHAT, dataReferences=[PARIS_DOC])
    second = await alice.ok(EXECUTE, query=answer_query("Paris."), chatConfigUri=CHAT, wait=False)
    async with door.connect(door.tokens.alice) as again:
        third = await again.ok(EXECUTE, query=answer_query("Paris."), chatConfigUri=CHAT)
        plans = [await alice.read_plan(started["planUri"]) for started in (first, second, third)]
        other_session = again.transport_session()
    sessions = [plan["mcpSessionId"] for plan in plans]
    assert sessions[0] and sessions[0] == sessions[1] != sessions[2] and sessions[2]
    if alice.transport_session() is not None:  # HTTP: the very id the transport uses
        assert sessions[:2] == [alice.transport_session()] * 2 and sessions[2] == other_session
    assert {(plan["chainMode"], plan["streamSessionId"]) for plan in plans} == {(True, None)}
