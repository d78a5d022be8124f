"""Each invariant accepts the seed's flows and rejects a broken sequence, showing it."""

from __future__ import annotations

from typing import Any

import pytest

from harness import invariants as inv
from harness.events import Event
from tests.harness.event_flows import Flow


def simple(start: int = 0) -> Flow:
    return (
        Flow(start)
        .add("user_message_sent", content="Hello")
        .chunks("message_chunk", "Business Central is an ERP")
        .add("message", content="Business Central is an ERP ", messageId="msg_1", stopReason="end_turn")
        .add("complete", "transient", reason="success")
    )


def thinking() -> Flow:
    return (
        Flow()
        .add("user_message_sent", content="Explain")
        .chunks("thinking_chunk", "let me think", 0)
        .add("thinking_complete", "transient", content="let me think ", blockIndex=0)
        .chunks("message_chunk", "the cycle", 1)
        .add("thinking", content="let me think ", messageId="msg_1")
        .add("message", content="the cycle ", messageId="msg_1", stopReason="end_turn")
        .add("complete", "transient", reason="success")
    )


def tool_use(approved: bool | None = None) -> Flow:
    f = (
        Flow()
        .add("user_message_sent", content="List")
        .chunks("message_chunk", "Let me list.")
        .add("message", content="Let me list. ", messageId="msg_1", stopReason="tool_use")
        .add("tool_use", toolUseId="toolu_01ABC", toolName="list_all_entities", args={})
    )
    if approved is not None:
        f.add(
            "approval_requested",
            "pending",
            approvalId="ap_1",
            toolName="list_all_entities",
            toolUseId="toolu_01ABC",
            description="create",
        )
        f.add("approval_resolved", "transient", approvalId="ap_1", approved=approved)
    if approved is False:
        f.add(
            "tool_result",
            toolUseId="toolu_01ABC",
            toolName="list_all_entities",
            result=None,
            success=False,
            error="User rejected",
        )
    else:
        f.add("tool_result", toolUseId="toolu_01ABC", toolName="list_all_entities", result="[]", success=True)
    return (
        f.chunks("message_chunk", "Found them.")
        .add("message", content="Found them. ", messageId="msg_2", stopReason="end_turn")
        .add("complete", "transient", reason="success")
    )


def error() -> Flow:
    return Flow().add("user_message_sent", content="fail").add("error", error="API Error", code=500)


def broken(flow: Flow, index: int, **changes: Any) -> list[dict[str, Any]]:
    events = [dict(e, data=dict(e["data"])) for e in flow.events]
    data_changes = changes.pop("data", {})
    events[index].update(changes)
    events[index]["data"].update(data_changes)
    return events


def test_the_seed_flows_pass_their_checks() -> None:
    inv.check_simple_message_flow(simple().events)
    inv.check_extended_thinking_flow(thinking().events)
    inv.check_tool_use_flow(tool_use().events)
    inv.check_approval_flow(tool_use(approved=True).events)
    inv.check_approval_flow(tool_use(approved=False).events)
    inv.check_error_flow(error().events)
    inv.check_attachment_flow(simple().events)


def test_checks_accept_event_models_as_well_as_dicts() -> None:
    inv.check_simple_message_flow([Event.model_validate(e) for e in simple().events])


def test_failure_shows_the_table_with_the_offending_event_marked() -> None:
    events = simple().events
    events.insert(0, events.pop(-1))  # complete first
    for i, e in enumerate(events):
        e["eventIndex"] = i
    with pytest.raises(AssertionError) as info:
        inv.check_user_message_first(events)
    message = str(info.value)
    assert message.startswith("invariant broken: user_message_sent is always first\n")
    assert "SEQ  EVENT TYPE" in message
    assert 'complete                 transient    reason="success"   <-- expected user_message_sent' in message


@pytest.mark.parametrize(
    ("check", "events", "rule"),
    [
        (
            inv.check_user_message_first,
            lambda: broken(simple(), 0, persistence="transient", sequenceNumber=None),
            "the user message is always persisted",
        ),
        (
            inv.check_persistence_states,
            lambda: broken(simple(), 1, sequenceNumber=7),
            "sequenceNumber is carried by persisted events only",
        ),
        (
            inv.check_persistence_states,
            lambda: broken(simple(), 1, persistence="persisted"),
            "sequenceNumber is carried by persisted events only",
        ),
        (
            inv.check_sequence_numbers,
            lambda: broken(simple(), -2, sequenceNumber=2),
            "sequence numbers are consecutive per session from 0",
        ),
        (inv.check_event_indexes, lambda: broken(simple(), 3, eventIndex=1), "eventIndex is strictly increasing"),
        (
            inv.check_final_content_matches_chunks,
            lambda: broken(simple(), -2, data={"content": "other"}),
            "the final message equals the accumulated message_chunk contents",
        ),
        (
            inv.check_final_content_matches_chunks,
            lambda: broken(thinking(), 4, data={"content": "x"}),
            "thinking_complete carries the accumulated thinking",
        ),
        (
            inv.check_tool_pairing,
            lambda: [e for e in tool_use().events if e["type"] != "tool_result"],
            "tool_use is always followed by the tool_result of the same toolUseId",
        ),
        (
            inv.check_tool_pairing,
            lambda: broken(tool_use(), 6, data={"toolUseId": "toolu_other"}),
            "a tool_result answers an earlier tool_use",
        ),
        (inv.check_terminal_event, lambda: simple().events[:-1], "complete is always last on success"),
    ],
)
def test_each_check_rejects_a_broken_sequence(check: Any, events: Any, rule: str) -> None:
    with pytest.raises(inv.InvariantError, match="invariant broken: " + rule):
        check(events()) if check is not inv.check_terminal_event else check(events(), success=True)


def test_duplicate_tool_use_is_rejected() -> None:
    flow = tool_use()
    events = flow.events[:6] + [dict(flow.events[5], eventIndex=99, sequenceNumber=None)]
    with pytest.raises(inv.InvariantError, match="not duplicated"):
        inv.check_tool_pairing(events)


def test_thinking_after_text_is_rejected() -> None:
    events = thinking().events
    chunk = dict(events[1], data={"content": "late ", "blockIndex": 0})
    events.insert(7, chunk)
    with pytest.raises(inv.InvariantError, match="thinking_chunk events come before message_chunk"):
        inv.check_thinking_before_text(events)


def test_text_without_thinking_complete_is_rejected() -> None:
    events = [e for e in thinking().events if e["type"] != "thinking_complete"]
    with pytest.raises(inv.InvariantError, match="thinking_complete signals the switch"):
        inv.check_thinking_before_text(events)


def test_rejected_approval_must_report_user_rejected() -> None:
    events = tool_use(approved=False).events
    result = next(i for i, e in enumerate(events) if e["type"] == "tool_result")
    events[result]["data"]["error"] = "whatever"
    with pytest.raises(inv.InvariantError, match="success=false and error='User rejected'"):
        inv.check_approval_ordering(events)


def test_tool_running_before_its_approval_is_rejected() -> None:
    events = tool_use(approved=True).events
    resolved = next(i for i, e in enumerate(events) if e["type"] == "approval_resolved")
    events[resolved], events[resolved + 1] = events[resolved + 1], events[resolved]
    with pytest.raises(inv.InvariantError, match="only after its approval is resolved"):
        inv.check_approval_ordering(events)


def test_unresolved_and_non_pending_approvals_are_rejected() -> None:
    events = tool_use(approved=True).events
    cut = next(i for i, e in enumerate(events) if e["type"] == "approval_requested")
    with pytest.raises(inv.InvariantError, match="every approval_requested is resolved"):
        inv.check_approval_ordering(events[: cut + 1])
    events = tool_use(approved=True).events
    requested = next(i for i, e in enumerate(events) if e["type"] == "approval_requested")
    events[requested]["persistence"] = "transient"
    with pytest.raises(inv.InvariantError, match="approval_requested is pending"):
        inv.check_approval_ordering(events)


def test_complete_after_error_and_events_after_error_are_rejected() -> None:
    with pytest.raises(inv.InvariantError, match="no complete after an error"):
        inv.check_error_flow(error().add("complete", "transient", reason="success").events)
    events = error().events + [
        dict(error().events[1], type="message_chunk", persistence="transient", sequenceNumber=None, eventIndex=5)
    ]
    with pytest.raises(inv.InvariantError, match="error is terminal"):
        inv.check_terminal_event(events, success=False)


def test_flow_checks_reject_foreign_events() -> None:
    events = simple().events
    events.insert(2, dict(events[1], type="thinking_chunk"))
    for i, e in enumerate(events):
        e["eventIndex"] = i
    with pytest.raises(inv.InvariantError, match="the simple message flow emits only"):
        inv.check_simple_message_flow(events)


def test_tool_use_without_intermediate_tool_use_message_is_rejected() -> None:
    events = broken(tool_use(), 4, data={"stopReason": "end_turn"})
    with pytest.raises(inv.InvariantError, match="intermediate message with stopReason='tool_use'"):
        inv.check_tool_use_flow(events)


def test_thinking_flow_requires_persisted_thinking() -> None:
    events = [e for e in thinking().events if e["type"] != "thinking"]
    for i, e in enumerate(events):
        e["eventIndex"] = i
    seq = 0
    for e in events:
        if e["sequenceNumber"] is not None:
            e["sequenceNumber"], seq = seq, seq + 1
    with pytest.raises(inv.InvariantError, match="a persisted thinking event"):
        inv.check_extended_thinking_flow(events)


# -- sequence numbers across a session's messages (002 Flow 1 inv 5) -------------------


def test_a_sessions_second_message_passes_from_where_the_first_ended() -> None:
    first = simple().events
    second = simple(start=2).events
    inv.check_simple_message_flow(first)
    inv.check_simple_message_flow(second)  # starts at 2: the first run took 0 and 1
    inv.check_simple_message_flow(second, start=2)
    inv.check_sequence_numbers(first + [dict(e, eventIndex=e["eventIndex"] + 100) for e in second])
    with pytest.raises(inv.InvariantError, match="consecutive per session from 0"):
        inv.check_simple_message_flow(second, start=0)


@pytest.mark.parametrize(
    ("change", "expected"),
    [(1, "sequenceNumber 4, expected 3"), (-1, "sequenceNumber 2, expected 3")],
    ids=["gap", "duplicate"],
)
def test_a_gap_or_a_duplicate_within_a_later_run_is_rejected(change: int, expected: str) -> None:
    events = simple(start=2).events
    events[-2]["sequenceNumber"] += change
    with pytest.raises(inv.InvariantError, match=expected):
        inv.check_sequence_numbers(events)


def test_a_pending_event_takes_the_next_number() -> None:
    events = tool_use(approved=True).events
    inv.check_approval_flow(events)
    result = next(e for e in events if e["type"] == "tool_result")
    assert result["sequenceNumber"] == 4  # 3 went to the stored approval_requested
    result["sequenceNumber"] = 3
    with pytest.raises(inv.InvariantError, match="sequenceNumber 3, expected 4"):
        inv.check_sequence_numbers(events)


# -- rules found untested by mutation testing (docs/mutation.md) -----------------------


def renumbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` with eventIndex 0, 1, 2… in their new order."""
    return [dict(e, eventIndex=i) for i, e in enumerate(events)]


@pytest.mark.parametrize(
    ("check", "flow"),
    [
        (inv.check_simple_message_flow, lambda: simple(start=2)),
        (inv.check_extended_thinking_flow, lambda: thinking_from(2)),
        (inv.check_tool_use_flow, lambda: tool_use_from(2)),
        (inv.check_approval_flow, lambda: tool_use_from(2, approved=True)),
        (inv.check_error_flow, lambda: error_from(2)),
        (inv.check_attachment_flow, lambda: simple(start=2)),
    ],
    ids=["simple", "thinking", "tool_use", "approval", "error", "attachment"],
)
def test_every_flow_check_counts_from_the_sessions_starting_number(check: Any, flow: Any) -> None:
    events = flow().events
    check(events, start=2)
    with pytest.raises(inv.InvariantError, match="consecutive per session from 0"):
        check(events, start=0)


def thinking_from(start: int) -> Flow:
    flow = thinking()
    for e in flow.events:
        if e["sequenceNumber"] is not None:
            e["sequenceNumber"] += start
    return flow


def tool_use_from(start: int, approved: bool | None = None) -> Flow:
    flow = tool_use(approved)
    for e in flow.events:
        if e["sequenceNumber"] is not None:
            e["sequenceNumber"] += start
    return flow


def error_from(start: int) -> Flow:
    return Flow(start).add("user_message_sent", content="fail").add("error", error="API Error", code=500)


def test_numbers_are_counted_per_session_when_sessions_interleave() -> None:
    one, two = simple().events, simple(start=5).events
    for e in two:
        e["sessionId"] = "s2"
    mixed = renumbered([e for pair in zip(one, two, strict=False) for e in pair])
    inv.check_sequence_numbers(mixed)  # s1 from 0, s2 from 5: each consecutive in its session
    two[-2]["sequenceNumber"] = 9
    with pytest.raises(inv.InvariantError, match="sequenceNumber 9, expected 6"):
        inv.check_sequence_numbers(renumbered([e for pair in zip(one, two, strict=False) for e in pair]))


def test_a_run_whose_first_numbered_event_is_pending_counts_from_it() -> None:
    events = tool_use(approved=True).events
    fragment = events[next(i for i, e in enumerate(events) if e["type"] == "approval_requested") :]
    inv.check_sequence_numbers(fragment)  # the pending request took 3, so the result's 4 follows
    inv.check_sequence_numbers(fragment, start=3)
    with pytest.raises(inv.InvariantError, match="sequenceNumber 4, expected 5"):
        inv.check_sequence_numbers(fragment, start=4)


def test_a_streamed_chunk_stored_with_a_number_is_rejected() -> None:
    events = broken(simple(), 1, persistence="persisted", sequenceNumber=1)
    with pytest.raises(inv.InvariantError, match="sequenceNumber is carried by persisted events only") as info:
        inv.check_persistence_states(events)
    assert "a streamed chunk must be transient" in str(info.value)


@pytest.mark.parametrize(
    ("change", "mark"),
    [({"eventIndex": None}, "no eventIndex"), ({"eventIndex": 1}, "eventIndex 1 after 1")],
    ids=["missing", "repeated"],
)
def test_an_event_index_missing_or_repeated_is_rejected(change: dict[str, Any], mark: str) -> None:
    events = broken(simple(), 2, **change)
    with pytest.raises(
        inv.InvariantError, match="invariant broken: (every event carries|eventIndex is strictly)"
    ) as info:
        inv.check_event_indexes(events)
    assert mark in str(info.value)


def test_tool_events_that_are_not_persisted_are_rejected() -> None:
    events = tool_use().events
    use = next(i for i, e in enumerate(events) if e["type"] == "tool_use")
    events = broken(tool_use(), use, persistence="transient", sequenceNumber=None)
    seq = 0
    for e in events:  # numbered without the tool_use, so that only this rule breaks
        if e["sequenceNumber"] is not None:
            e["sequenceNumber"], seq = seq, seq + 1
    with pytest.raises(inv.InvariantError, match="invariant broken: tool events are persisted"):
        inv.check_tool_use_flow(events)


def test_a_duplicated_tool_result_is_rejected() -> None:
    events = tool_use().events
    result = next(i for i, e in enumerate(events) if e["type"] == "tool_result")
    events = renumbered(events[: result + 1] + [dict(events[result], sequenceNumber=None)] + events[result + 1 :])
    with pytest.raises(inv.InvariantError, match="not duplicated") as info:
        inv.check_tool_pairing(events)
    assert "duplicate tool_result" in str(info.value)


@pytest.mark.parametrize("move", ["request_before_use", "resolution_without_request"])
def test_approval_events_out_of_place_are_rejected(move: str) -> None:
    events = tool_use(approved=True).events
    use = next(i for i, e in enumerate(events) if e["type"] == "tool_use")
    request = next(i for i, e in enumerate(events) if e["type"] == "approval_requested")
    if move == "request_before_use":
        events.insert(use, events.pop(request))
        rule = "approval_requested follows its tool_use"
    else:
        del events[request]
        rule = "approval_resolved follows its approval_requested"
    with pytest.raises(inv.InvariantError, match="invariant broken: " + rule):
        inv.check_approval_ordering(renumbered(events))


def test_a_successful_run_has_one_complete_and_no_error() -> None:
    twice = simple().add("complete", "transient", reason="success").events
    with pytest.raises(inv.InvariantError, match="a successful run has one complete and no error"):
        inv.check_terminal_event(twice, success=True)
    flow = simple()
    flow.events.insert(-1, {**error().events[1], "eventIndex": 90, "sequenceNumber": None, "persistence": "persisted"})
    with pytest.raises(inv.InvariantError, match="a successful run has one complete and no error"):
        inv.check_terminal_event(flow.events, success=True)


def test_an_error_that_is_not_persisted_is_rejected() -> None:
    events = broken(error(), 1, persistence="transient", sequenceNumber=None)
    with pytest.raises(inv.InvariantError, match="invariant broken: the error is persisted"):
        inv.check_terminal_event(events, success=False)


def test_thinking_order_is_judged_per_model_turn() -> None:
    # A text turn (a tool call), then a turn that thinks before it answers: each turn is in order.
    events = (
        Flow()
        .add("user_message_sent", content="Go")
        .chunks("message_chunk", "Let me look.")
        .add("message", content="Let me look. ", messageId="msg_1", stopReason="tool_use")
        .chunks("thinking_chunk", "now think", 0)
        .add("thinking_complete", "transient", content="now think ", blockIndex=0)
        .chunks("message_chunk", "Found.", 1)
        .add("message", content="Found. ", messageId="msg_2", stopReason="end_turn")
    ).events
    inv.check_thinking_before_text(events)
    inv.check_thinking_before_text(simple().events)  # no thinking at all: nothing to switch from
