"""The agent runner against the mock: the six flows of seed 002, event by event."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from harness import invariants as inv
from harness.systems.agent import (
    AgentOptions,
    AgentResult,
    AgentRunner,
    FileStore,
    ToolRegistry,
)
from harness.systems.llm import model_client
from tests.harness.systems.agent.agent_support import APPROVAL_SCRIPT, PROTOCOLS, call, persisted, script, text, types
from tests.http_support import sdk_http_client

# -- flow 1: simple message -----------------------------------------------------------


@PROTOCOLS
def test_flow1_simple_message(make: Any, protocol: str) -> None:
    h = make(protocol)
    result = h.run(script("Hello, what is Business Central?", {"messages": [{"text_message": {"length": 12}}]}))
    assert result.success and result.error is None
    assert types(result) == ["user_message_sent", "message_chunk*", "message", "complete"]
    assert persisted(result) == [(0, "user_message_sent"), (1, "message")]
    message = result.events[-2]
    assert message.data["stopReason"] == "end_turn" and message.data["messageId"]
    assert len(message.data["content"].split()) == 12 == len([e for e in result.events if e.type == "message_chunk"])
    assert result.final_text == message.data["content"]
    assert result.events[-1].data == {"reason": "success"}
    stamps = [e.timestamp for e in result.events]  # the run's clock, as a chain's: strictly increasing
    assert all(a < b for a, b in zip(stamps, stamps[1:], strict=False)), stamps
    inv.check_simple_message_flow(result.events)


# -- flow 2: extended thinking --------------------------------------------------------


@PROTOCOLS
def test_flow2_extended_thinking(make: Any, protocol: str) -> None:
    h = make(protocol)
    result = h.run(
        script(
            "Explain the accounting cycle", {"reasoning": {"length": 8}, "messages": [{"text_message": {"length": 6}}]}
        ),
        enable_thinking=True,
        thinking_budget=1024,
    )
    assert types(result) == [
        "user_message_sent",
        "thinking_chunk*",
        "thinking_complete",
        "message_chunk*",
        "thinking",
        "message",
        "complete",
    ]
    assert persisted(result) == [(0, "user_message_sent"), (1, "thinking"), (2, "message")]
    thinking = next(e for e in result.events if e.type == "thinking")
    assert len(thinking.data["content"].split()) == 8
    inv.check_extended_thinking_flow(result.events)


def test_thinking_is_requested_from_the_model_only_when_enabled(make: Any) -> None:
    h = make("anthropic-messages")
    h.run(script("Hi", {"messages": [text("ok")]}))
    h.run(script("Hi", {"messages": [text("ok")]}), session="s2", enable_thinking=True, thinking_budget=2048)
    assert [e.status for e in h.mock.journal] == [200, 200]
    off, on = h.requests
    assert "thinking" not in off
    assert on["thinking"] == {"type": "enabled", "budget_tokens": 2048}


# -- flow 3: tool use -----------------------------------------------------------------


@PROTOCOLS
def test_flow3_tool_use(make: Any, protocol: str) -> None:
    h = make(protocol)
    result = h.run(
        script(
            "List all BC entities",
            {"messages": [text("Let me list the entities."), call("list_all_entities")]},
            {"messages": [text("I found the entities.")]},
        )
    )
    assert types(result) == [
        "user_message_sent",
        "message_chunk*",
        "message",
        "tool_use",
        "tool_result",
        "message_chunk*",
        "message",
        "complete",
    ]
    assert persisted(result) == [
        (0, "user_message_sent"),
        (1, "message"),
        (2, "tool_use"),
        (3, "tool_result"),
        (4, "message"),
    ]
    use, outcome = (next(e for e in result.events if e.type == t) for t in ("tool_use", "tool_result"))
    assert use.data["toolUseId"] == outcome.data["toolUseId"]
    # The provider's own id, not one the harness made up.
    assert use.data["toolUseId"].startswith("toolu_" if protocol == "anthropic-messages" else "call_")
    assert outcome.data["success"] is True and "Customer" in outcome.data["result"]
    assert next(e for e in result.events if e.type == "message").data["stopReason"] == "tool_use"
    assert result.final_text == "I found the entities."
    inv.check_tool_use_flow(result.events)


def test_parallel_tool_calls_run_in_one_turn_and_pair_by_id(make: Any) -> None:
    h = make("anthropic-messages")
    result = h.run(
        script(
            "Two at once",
            {
                "messages": [
                    {
                        "tool_call": [
                            {"name": "list_all_entities", "args": {}},
                            {"name": "list_all_entities", "args": {}},
                        ]
                    }
                ]
            },
            {"messages": [text("Done.")]},
        )
    )
    uses = [e.data["toolUseId"] for e in result.events if e.type == "tool_use"]
    assert len(uses) == 2 and len(set(uses)) == 2
    inv.check_tool_use_flow(result.events)


def test_a_failing_or_unknown_tool_is_reported_and_the_run_goes_on(make: Any) -> None:
    tools = ToolRegistry()

    @tools.register()
    def explode() -> None:
        raise RuntimeError("disk full")

    @tools.register()
    def lookup(customer_no: int) -> str:
        return f"customer {customer_no}"

    h = make("anthropic-messages", tools=tools)
    result = h.run(
        script(
            "Go",
            {"messages": [call("explode")]},
            {"messages": [call("missing_tool")]},
            {"messages": [call("explode", unexpected=1)]},
            {"messages": [call("lookup", customer_no="C-1")]},
            {"messages": [call("lookup", customer_no="42")]},
            {"messages": [text("Sorry.")]},
        )
    )
    outcomes = [e.data for e in result.events if e.type == "tool_result"]
    assert [o["success"] for o in outcomes] == [False, False, False, False, True]
    assert outcomes[0]["error"] == "disk full"
    assert outcomes[1]["error"] == "Unknown tool 'missing_tool'."
    assert "cannot take the arguments ['unexpected']" in outcomes[2]["error"]
    # Arguments are checked against the tool's annotations, as a chain's TOOL steps are.
    assert outcomes[3]["error"].startswith("tool 'lookup': customer_no: Input should be a valid integer")
    assert outcomes[3]["error"].endswith("(got 'C-1')")
    assert outcomes[4]["result"] == "customer 42"
    assert result.success
    inv.check_tool_use_flow(result.events)


def test_too_many_tool_turns_end_in_an_error(make: Any) -> None:
    h = make("anthropic-messages")
    result = h.run(script("Loop", *[{"messages": [call("list_all_entities")]}] * 3), max_turns=2)
    assert not result.success and "more than 2 turns" in (result.error or "")
    inv.check_error_flow(result.events)


# -- flow 5: errors -------------------------------------------------------------------


@PROTOCOLS
@pytest.mark.parametrize(
    "fault",
    [
        {"status": 500, "message": "API Error"},
        {"status": 529, "message": "API Error"},
        {"status": 500, "message": "API Error", "after_chunks": 3},
    ],
    ids=["http-500", "http-529", "mid-stream"],
)
def test_flow5_model_errors(make: Any, protocol: str, fault: dict[str, Any]) -> None:
    h = make(protocol)
    result = h.run(script("This will fail", {"error": fault, "messages": [{"text_message": {"length": 20}}]}))
    assert result.success is False and "API Error" in (result.error or "")
    assert [e.type for e in result.events if not e.type.endswith("_chunk")] == ["user_message_sent", "error"]
    assert persisted(result) == [(0, "user_message_sent"), (1, "error")]
    error = result.events[-1]
    assert error.data["error"] == result.error
    assert error.data["code"] == (fault["status"] if "after_chunks" not in fault else "stream")
    assert h.runner.store.events("s1") == [e for e in result.events if e.sequence_number is not None]
    inv.check_error_flow(result.events)


# -- flow 6: attachments --------------------------------------------------------------


def test_flow6_attachments_are_injected_cited_and_recorded(make: Any) -> None:
    files = FileStore()
    files.add("f1", "ledger.csv", "account,amount\n4000,120", owner="user-1")
    h = make("anthropic-messages", files=files)
    result = h.run(
        script("Analyze this file", {"messages": [text("According to ledger.csv, revenue is 120.")]}),
        attachments=["f1"],
    )
    assert types(result) == ["user_message_sent", "message_chunk*", "message", "complete"]
    assert result.events[0].data["attachments"] == ["f1"]
    message = next(e for e in result.events if e.type == "message")
    assert message.data["citations"] == ["ledger.csv"]
    (sent,) = h.requests
    user_text = sent["messages"][0]["content"]
    assert user_text.startswith("Analyze this file")
    assert '<file name="ledger.csv">\naccount,amount\n4000,120\n</file>' in user_text
    assert [(u.file_id, u.session_id, u.message_id) for u in files.usage] == [("f1", "s1", message.data["messageId"])]
    inv.check_attachment_flow(result.events)


def test_flow6_file_context_reaches_the_model(mock_server_url: str, request: pytest.FixtureRequest) -> None:
    files = FileStore()
    files.add("f1", "ledger.csv", "account,amount\n4000,120", owner="user-1")
    sent: list[dict[str, Any]] = []  # the bodies as they went over real HTTP

    async def record(request: Any) -> None:
        sent.append(json.loads(request.content))

    client = model_client(
        "anthropic-messages",
        base_url=mock_server_url,
        http_client=sdk_http_client("anthropic-messages", event_hooks={"request": [record]}),
    )
    runner = AgentRunner(client, files=files)
    request.addfinalizer(runner.close)

    async def main() -> AgentResult:
        try:
            return await runner.run(
                script("Analyze this file", {"messages": [text("Seen.")]}),
                "s-files",
                None,
                "user-1",
                AgentOptions(attachments=["f1"]),
            )
        finally:
            await client.aclose()

    result = asyncio.run(main())
    assert result.success and result.final_text == "Seen."
    with httpx.Client() as client:
        entry = client.get(f"{mock_server_url}/_mockllm/requests").json()[-1]
    assert entry["instruction_id"] == "0"  # the tagged prompt still scripted the reply
    assert sent and "account,amount\n4000,120" in sent[-1]["messages"][0]["content"]


@pytest.mark.parametrize("file_id", ["f-other", "f-missing"])
def test_flow6_access_denied_fails_at_once_and_sends_nothing(make: Any, file_id: str) -> None:
    files = FileStore()
    files.add("f-other", "secret.txt", "no", owner="someone-else")
    h = make("anthropic-messages", files=files)
    result = h.run(script("Analyze", {"messages": [text("x")]}), attachments=[file_id])
    assert result.success is False and f"file {file_id!r} is not available" in (result.error or "")
    assert result.events == [] and h.mock.journal == [] and h.runner.store.events("s1") == []


# -- sequence numbers, store and queue ------------------------------------------------


def test_event_index_covers_all_events_and_sequence_numbers_only_persisted(make: Any) -> None:
    h = make("anthropic-messages")
    result = h.run(APPROVAL_SCRIPT.replace("create_customer", "list_all_entities"))
    assert [e.event_index for e in result.events] == list(range(len(result.events)))
    for event in result.events:
        assert (event.sequence_number is not None) == (event.persistence.value == "persisted")
    inv.check_common(result.events)


@PROTOCOLS
def test_a_sessions_second_message_continues_the_numbers_and_passes_its_flow(make: Any, protocol: str) -> None:
    h = make(protocol)
    first = h.run(script("One", {"messages": [text("a")]}))
    second = h.run(script("Two", {"messages": [call("list_all_entities")]}, {"messages": [text("b")]}))
    assert persisted(first) == [(0, "user_message_sent"), (1, "message")]
    assert persisted(second)[0] == (2, "user_message_sent") and persisted(second)[-1] == (6, "message")
    inv.check_simple_message_flow(first.events)
    inv.check_tool_use_flow(second.events)  # from the session's starting number, 2
    inv.check_tool_use_flow(second.events, start=2)
    with pytest.raises(inv.InvariantError, match="consecutive per session from 0"):
        inv.check_tool_use_flow(second.events, start=0)
    stored = h.runner.store.events("s1")
    assert [e.sequence_number for e in stored] == list(range(7))
    inv.check_sequence_numbers(stored, start=0)
    assert stored == h.runner.queue.events("s1")


def test_fifty_concurrent_sessions_keep_their_own_consecutive_numbers(make: Any) -> None:
    h = make("anthropic-messages")
    prompt = script("List", {"messages": [text("Looking."), call("list_all_entities")]}, {"messages": [text("Done.")]})

    async def main() -> list[AgentResult]:
        return await asyncio.gather(*(h.runner.run(prompt, f"session-{i}", None, "u") for i in range(50)))

    results = asyncio.run(main())
    assert all(r.success for r in results)
    for i, result in enumerate(results):
        stored = h.runner.store.events(f"session-{i}")
        assert [e.sequence_number for e in stored] == list(range(5))
        assert stored == [e for e in result.events if e.sequence_number is not None]  # each stored once
        assert stored == h.runner.queue.events(f"session-{i}")
        inv.check_tool_use_flow(result.events)


def test_a_failed_run_keeps_what_it_persisted(make: Any) -> None:
    h = make("anthropic-messages")
    result = h.run(script("Go", {"messages": [call("list_all_entities")]}, {"error": {"status": 500}}))
    assert not result.success
    assert [e.type for e in h.runner.store.events("s1")] == [
        "user_message_sent",
        "message",
        "tool_use",
        "tool_result",
        "error",
    ]
