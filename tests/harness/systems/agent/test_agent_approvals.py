"""The agent runner against the mock: seed 002's flow 4, approval, event by event: a write
tool pauses until the user decides (or from elsewhere, or a timeout rejects it)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from harness import invariants as inv
from harness.events import Event
from harness.systems.agent import AgentResult, ApprovalManager, ToolRegistry
from harness.systems.agent.runner import REJECTED
from tests.harness.systems.agent.agent_support import APPROVAL_SCRIPT, call, script, text, types


@pytest.mark.parametrize(("decision", "approved"), [(True, True), (False, False)])
def test_flow4_approval_pauses_until_the_user_decides(make: Any, decision: bool, approved: bool) -> None:
    requests: list[str] = []

    def decide(request: Any) -> bool:
        requests.append(request.tool_name)
        return decision

    h = make("anthropic-messages", approvals=ApprovalManager(decide=decide))
    result = h.run(APPROVAL_SCRIPT)
    assert requests == ["create_customer"]
    assert types(result) == [
        "user_message_sent",
        "message_chunk*",
        "message",
        "tool_use",
        "approval_requested",
        "approval_resolved",
        "tool_result",
        "message_chunk*",
        "message",
        "complete",
    ]
    requested = next(e for e in result.events if e.type == "approval_requested")
    assert requested.persistence.value == "pending" and requested.sequence_number is None
    assert requested.data["toolName"] == "create_customer"
    # Pending: stored (and queued) right after it was emitted, taking the next number.
    stored = h.runner.store.events("s1")
    assert [(e.sequence_number, e.type) for e in stored][2:5] == [
        (2, "tool_use"),
        (3, "approval_requested"),
        (4, "tool_result"),
    ]
    assert stored[3].persistence.value == "persisted" and stored[3].data == requested.data
    assert stored == h.runner.queue.events("s1")
    assert "approval_resolved" not in [e.type for e in stored]  # transient
    resolved = next(e for e in result.events if e.type == "approval_resolved")
    assert resolved.data["approved"] is approved
    outcome = next(e for e in result.events if e.type == "tool_result")
    if approved:
        assert outcome.data["success"] is True and "Test Corp" in outcome.data["result"]
    else:
        assert outcome.data == {**outcome.data, "success": False, "error": REJECTED}
    inv.check_approval_flow(result.events)


@pytest.mark.parametrize("tool", ["create_customer", "update_customer", "delete_customer"])
def test_every_write_tool_pauses_for_approval_and_a_read_tool_does_not(make: Any, tool: str) -> None:
    ran: list[str] = []
    tools = ToolRegistry()
    for name in (tool, "get_customer"):
        tools.register(name)(lambda name=name, **kwargs: ran.append(name) or "ok")
    asked: list[str] = []
    h = make(
        "anthropic-messages",
        tools=tools,
        approvals=ApprovalManager(decide=lambda request: asked.append(request.tool_name) is None),
    )
    result = h.run(
        script(
            "Write then read",
            {"messages": [call(tool, no="C-1")]},
            {"messages": [call("get_customer", no="C-1")]},
            {"messages": [text("Done.")]},
        )
    )
    assert asked == [tool] and ran == [tool, "get_customer"]
    assert [e.data["toolName"] for e in result.events if e.type == "approval_requested"] == [tool]
    inv.check_approval_flow(result.events)


def test_a_tool_call_the_model_repeats_by_toolUseId_runs_once(make: Any) -> None:
    ran: list[int] = []
    tools = ToolRegistry()
    tools.register("list_all_entities")(lambda: ran.append(1) or "[]")
    h = make("anthropic-messages", tools=tools)
    repeat = {"tool_call": [{"id": "toolu_01ABC", "name": "list_all_entities", "args": {}}]}
    result = h.run(script("List", {"messages": [repeat]}, {"messages": [text("Again:"), repeat]}))
    assert ran == [1]
    assert [(e.type, e.data["toolUseId"]) for e in result.events if e.type.startswith("tool_")] == [
        ("tool_use", "toolu_01ABC"),
        ("tool_result", "toolu_01ABC"),
    ]
    assert [e.type for e in h.runner.store.events("s1")].count("tool_use") == 1
    inv.check_tool_use_flow(result.events)


def test_approval_timeout_counts_as_a_rejection(make: Any) -> None:
    h = make("anthropic-messages", approvals=ApprovalManager(timeout_s=0.05))
    result = h.run(APPROVAL_SCRIPT)
    resolved = next(e for e in result.events if e.type == "approval_resolved")
    assert resolved.data == {"approvalId": resolved.data["approvalId"], "approved": False, "reason": "timeout"}
    assert next(e for e in result.events if e.type == "tool_result").data["error"] == REJECTED
    inv.check_approval_flow(result.events)


def test_execution_pauses_until_resolved_from_elsewhere(make: Any) -> None:
    approvals = ApprovalManager(timeout_s=10)
    h = make("anthropic-messages", approvals=approvals)

    async def main() -> AgentResult:
        seen: list[str] = []

        async def listen(event: Event) -> None:
            seen.append(event.type)
            if event.type == "approval_requested":
                # The run is paused: nothing after the request until we resolve it.
                asyncio.get_running_loop().call_later(
                    0.01, lambda: (seen.append("resolving"), approvals.resolve(event.data["approvalId"], True))
                )

        result = await h.runner.run(APPROVAL_SCRIPT, "s1", listen, "user-1")
        assert seen[seen.index("approval_requested") + 1] == "resolving"
        return result

    result = asyncio.run(main())
    assert next(e for e in result.events if e.type == "tool_result").data["success"] is True
