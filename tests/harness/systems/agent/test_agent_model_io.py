"""What the agent runner tells the model (system prompt, tools, each tool's outcome),
where its events go, and the approval manager on its own: rules mutation testing found
untested (docs/mutation.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from harness import invariants as inv
from harness.systems.agent import ApprovalManager, ToolRegistry
from harness.systems.agent.approvals import ApprovalRequest
from harness.systems.agent.runner import REJECTED
from harness.systems.agent.store import InMemoryMessageQueue, SQLiteEventStore
from tests.harness.systems.agent.agent_support import Harness, call, script, text


@pytest.fixture
def harnesses() -> Iterator[list[Harness]]:
    made: list[Harness] = []
    yield made
    for harness in made:
        harness.runner.close()


def lookup_tools() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.register(
        description="Look a customer up.", input_schema={"type": "object", "properties": {"no": {"type": "string"}}}
    )
    def lookup(no: str) -> dict[str, str]:
        return {"no": no, "name": "Test Corp"}

    @tools.register()
    def explode() -> None:
        raise RuntimeError("disk full")

    @tools.register()
    def create_customer(name: str) -> str:
        return f"created {name}"

    return tools


def test_the_model_receives_the_system_prompt_the_tools_and_each_tool_result(harnesses: list[Harness]) -> None:
    h = Harness("anthropic-messages", tools=lookup_tools())
    harnesses.append(h)
    result = h.run(
        script("Find C-1", {"messages": [call("lookup", no="C-1")]}, {"messages": [text("Found.")]}),
        system="Be brief.",
        max_tokens=512,
    )
    assert result.success and result.session_id == "s1"
    first, second = h.requests
    for body in (first, second):
        assert body["system"] == "Be brief." and body["max_tokens"] == 512
        assert body["tools"][0] == {
            "name": "lookup",
            "description": "Look a customer up.",
            "input_schema": {"type": "object", "properties": {"no": {"type": "string"}}},
        }
        assert [t["name"] for t in body["tools"]] == ["lookup", "explode", "create_customer"]
    (sent,) = second["messages"][-1]["content"]
    use = next(e for e in result.events if e.type == "tool_use")
    assert use.data == {"toolUseId": sent["tool_use_id"], "toolName": "lookup", "args": {"no": "C-1"}}
    assert sent == {
        "type": "tool_result",
        "tool_use_id": use.data["toolUseId"],
        "content": '{"name": "Test Corp", "no": "C-1"}',
        "is_error": False,
    }
    outcome = next(e for e in result.events if e.type == "tool_result")
    assert outcome.data == {
        "toolUseId": use.data["toolUseId"],
        "toolName": "lookup",
        "result": '{"name": "Test Corp", "no": "C-1"}',
        "success": True,
    }


@pytest.mark.parametrize(
    ("tool", "error"), [("explode", "disk full"), ("missing", "Unknown tool 'missing'."), ("create_customer", REJECTED)]
)
def test_a_tool_that_failed_or_was_rejected_is_sent_back_as_an_error(
    harnesses: list[Harness], tool: str, error: str
) -> None:
    h = Harness("anthropic-messages", tools=lookup_tools(), approvals=ApprovalManager(decide=lambda r: False))
    harnesses.append(h)
    args = {"name": "X"} if tool == "create_customer" else {}
    result = h.run(script("Go", {"messages": [call(tool, **args)]}, {"messages": [text("Sorry.")]}))
    (sent,) = h.requests[1]["messages"][-1]["content"]
    assert (sent["content"], sent["is_error"]) == (error, True)
    outcome = next(e for e in result.events if e.type == "tool_result")
    assert outcome.data == {
        "toolUseId": sent["tool_use_id"],
        "toolName": tool,
        "result": None,
        "success": False,
        "error": error,
    }
    inv.check_tool_use_flow(result.events)


def test_an_approval_request_names_the_tool_call_and_its_arguments(harnesses: list[Harness]) -> None:
    asked: list[ApprovalRequest] = []
    h = Harness(
        "anthropic-messages", tools=lookup_tools(), approvals=ApprovalManager(decide=lambda r: asked.append(r) is None)
    )
    harnesses.append(h)
    result = h.run(
        script("Create", {"messages": [call("create_customer", name="Test Corp")]}, {"messages": [text("Done.")]})
    )
    use = next(e for e in result.events if e.type == "tool_use")
    requested = next(e for e in result.events if e.type == "approval_requested")
    tool_id = use.data["toolUseId"]
    assert requested.data == {
        "approvalId": f"approval-{tool_id}",
        "toolUseId": tool_id,
        "toolName": "create_customer",
        "args": {"name": "Test Corp"},
        "description": "create_customer with {'name': 'Test Corp'}",
    }
    assert asked == [
        ApprovalRequest(
            f"approval-{tool_id}",
            "create_customer",
            tool_id,
            {"name": "Test Corp"},
            "create_customer with {'name': 'Test Corp'}",
        )
    ]


def test_a_tool_registered_with_requires_approval_overrides_its_name(harnesses: list[Harness]) -> None:
    tools, ran = ToolRegistry(), []
    tools.register("create_note", requires_approval=False)(lambda: ran.append("create_note") or "ok")
    tools.register("send_email", requires_approval=True)(lambda: ran.append("send_email") or "sent")
    asked: list[str] = []
    h = Harness(
        "anthropic-messages", tools=tools, approvals=ApprovalManager(decide=lambda r: asked.append(r.tool_name) is None)
    )
    harnesses.append(h)
    result = h.run(
        script(
            "Note, then mail",
            {"messages": [call("create_note")]},
            {"messages": [call("send_email")]},
            {"messages": [text("Done.")]},
        )
    )
    assert asked == ["send_email"] and ran == ["create_note", "send_email"]
    inv.check_approval_flow(result.events)


def test_a_store_and_a_queue_of_the_callers_get_the_events_and_stay_open(harnesses: list[Harness]) -> None:
    store, queue = SQLiteEventStore(), InMemoryMessageQueue()
    h = Harness("anthropic-messages", store=store, queue=queue)
    harnesses.append(h)
    result = h.run(script("Hi", {"messages": [text("Hello.")]}))
    h.runner.close()  # closes only what the runner made
    persisted = [e for e in result.events if e.sequence_number is not None]
    assert store.events("s1") == persisted == queue.events("s1")
    store.close()


def test_too_many_tool_turns_end_in_an_error_coded_limit(harnesses: list[Harness]) -> None:
    h = Harness("anthropic-messages")
    harnesses.append(h)
    result = h.run(script("Loop", *[{"messages": [call("list_all_entities")]}] * 3), max_turns=2)
    assert result.events[-1].data == {"error": result.error, "code": "limit"}
    assert result.session_id == "s1" and result.final_text == ""  # the model's last turn had no text


# -- the approval manager -------------------------------------------------------------

REQUEST = ApprovalRequest("approval-1", "create_customer", "toolu_1", {"name": "X"}, "create_customer with X")


@pytest.mark.parametrize("approved", [True, False])
def test_a_decision_given_before_the_wait_is_kept(approved: bool) -> None:
    approvals = ApprovalManager(timeout_s=5)
    approvals.resolve("approval-1", approved)
    decision = asyncio.run(approvals.wait(REQUEST))
    assert (decision.approved, decision.reason) == (approved, "approved" if approved else "rejected")
    assert approvals.pending == []


@pytest.mark.parametrize("approved", [True, False])
def test_an_async_decide_callback_is_awaited(approved: bool) -> None:
    async def decide(request: ApprovalRequest) -> bool:
        await asyncio.sleep(0)
        return approved

    approvals = ApprovalManager(timeout_s=5, decide=decide)
    decision = asyncio.run(approvals.wait(REQUEST))
    assert (decision.approved, decision.reason) == (approved, "approved" if approved else "rejected")
    assert approvals.pending == []


def test_a_request_is_pending_only_while_the_run_waits() -> None:
    approvals = ApprovalManager(timeout_s=5)
    seen: list[list[str]] = []

    async def main() -> Any:
        waiting = asyncio.ensure_future(approvals.wait(REQUEST))
        await asyncio.sleep(0)
        seen.append(approvals.pending)
        approvals.resolve("approval-1", True)
        return await waiting

    decision = asyncio.run(main())
    assert seen == [["approval-1"]] and approvals.pending == []
    assert (decision.approved, decision.reason) == (True, "approved")
