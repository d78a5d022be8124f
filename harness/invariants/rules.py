"""The rules every seed flow is built from (seed 002): who comes first, persistence
states, sequence numbers and event indexes, chunks against the final message, tool and
approval pairing, the terminal event."""

from __future__ import annotations

from typing import Any

from harness.golden.table import CHUNK_TYPES
from harness.invariants.report import Events, InvariantError, data_of, fail, records_of

__all__ = [
    "check_approval_ordering",
    "check_common",
    "check_event_indexes",
    "check_final_content_matches_chunks",
    "check_persistence_states",
    "check_sequence_numbers",
    "check_terminal_event",
    "check_thinking_before_text",
    "check_tool_pairing",
    "check_user_message_first",
]

# -- general checks -------------------------------------------------------------------


def check_user_message_first(events: Events) -> None:
    """``user_message_sent`` is the first event, and persisted."""
    records = records_of(events)
    if not records:
        raise InvariantError("invariant broken: user_message_sent is first\n(no events at all)")
    first = records[0]
    if first.get("type") != "user_message_sent":
        fail("user_message_sent is always first", records, {0: "expected user_message_sent"})
    if first.get("persistence") != "persisted":
        fail("the user message is always persisted", records, {0: "not persisted"})


def check_persistence_states(events: Events) -> None:
    """Persisted events carry a sequenceNumber; transient and pending ones never do;
    streamed chunks are transient."""
    records = records_of(events)
    marks: dict[int, str] = {}
    for i, r in enumerate(records):
        persisted = r.get("persistence") == "persisted"
        has_seq = r.get("sequenceNumber") is not None
        if r.get("type") in CHUNK_TYPES and r.get("persistence") != "transient":
            marks[i] = "a streamed chunk must be transient"
        elif persisted and not has_seq:
            marks[i] = "persisted without a sequenceNumber"
        elif not persisted and has_seq:
            marks[i] = f"{r.get('persistence')} event with a sequenceNumber"
    if marks:
        fail("sequenceNumber is carried by persisted events only", records, marks)


def check_sequence_numbers(events: Events, *, start: int | None = None) -> None:
    """Sequence numbers are consecutive per session, with no gaps and no duplicates,
    from the session's starting number: ``start``, or by default the number the first
    persisted event carries (a session's second message continues where the first
    ended). A ``pending`` event takes the next number when it is stored, right after it
    is emitted (``harness.systems.agent.emitter``), so the next persisted event skips it."""
    records = records_of(events)
    slots: dict[Any, list[tuple[int, int | None]]] = {}
    for i, r in enumerate(records):
        seq = r.get("sequenceNumber")
        if seq is not None or r.get("persistence") == "pending":
            slots.setdefault(r.get("sessionId"), []).append((i, seq))
    for session_slots in slots.values():
        numbered = [(k, seq) for k, (_, seq) in enumerate(session_slots) if seq is not None]
        if not numbered:
            continue
        base = start if start is not None else numbered[0][1] - numbered[0][0]
        for k, (i, seq) in enumerate(session_slots):
            if seq is not None and seq != base + k:
                fail(
                    f"sequence numbers are consecutive per session from {base} (no gap, no duplicate)",
                    records,
                    {i: f"sequenceNumber {seq}, expected {base + k}"},
                )


def check_event_indexes(events: Events) -> None:
    """``eventIndex`` is present on every event and strictly increasing."""
    records = records_of(events)
    previous = None
    for i, r in enumerate(records):
        index = r.get("eventIndex")
        if index is None:
            fail("every event carries an eventIndex", records, {i: "no eventIndex"})
        if previous is not None and index <= previous:
            fail(
                "eventIndex is strictly increasing over all events",
                records,
                {i: f"eventIndex {index} after {previous}"},
            )
        previous = index


def check_common(events: Events, *, start: int | None = None) -> None:
    """The rules every flow obeys: user message first, persistence states, sequence
    numbers (from ``start``, see ``check_sequence_numbers``) and event indexes."""
    check_user_message_first(events)
    check_persistence_states(events)
    check_sequence_numbers(events, start=start)
    check_event_indexes(events)


def check_final_content_matches_chunks(events: Events) -> None:
    """Each final ``message`` (``thinking``) equals the ``message_chunk``
    (``thinking_chunk``) contents streamed since the previous one; a
    ``thinking_complete`` carries the thinking accumulated so far."""
    records = records_of(events)
    pending: dict[str, list[str]] = {"message": [], "thinking": []}
    chunk_of = {"message_chunk": "message", "thinking_chunk": "thinking"}
    for i, r in enumerate(records):
        kind = r.get("type")
        content = data_of(r).get("content", "")
        if kind in chunk_of:
            pending[chunk_of[kind]].append(str(content))
        elif kind == "thinking_complete" and pending["thinking"]:
            if content != "".join(pending["thinking"]):
                fail(
                    "thinking_complete carries the accumulated thinking",
                    records,
                    {i: "differs from the thinking chunks"},
                )
        elif kind in pending:
            streamed = "".join(pending[kind])
            if pending[kind] and content != streamed:
                fail(
                    f"the final {kind} equals the accumulated {kind}_chunk contents",
                    records,
                    {i: f"final content differs from the {len(pending[kind])} chunks"},
                )
            pending[kind] = []


def check_thinking_before_text(events: Events) -> None:
    """Within a model turn, no ``thinking_chunk`` comes after a ``message_chunk``, and
    ``thinking_complete`` comes between them."""
    records = records_of(events)
    text_started = False
    thinking_seen = False
    for i, r in enumerate(records):
        kind = r.get("type")
        if kind == "message_chunk":
            if thinking_seen and not any(x.get("type") == "thinking_complete" for x in records[:i]):
                fail(
                    "thinking_complete signals the switch from thinking to text",
                    records,
                    {i: "text before thinking_complete"},
                )
            text_started = True
        elif kind == "thinking_chunk":
            if text_started:
                fail("thinking_chunk events come before message_chunk events", records, {i: "thinking after text"})
            thinking_seen = True
        elif kind == "message":
            text_started = thinking_seen = False


def check_tool_pairing(events: Events) -> None:
    """Every ``tool_use`` is followed by exactly one ``tool_result`` of the same
    ``toolUseId``; no tool event is duplicated; no result comes without its use."""
    records = records_of(events)
    # By toolUseId; an event without one counts under None.
    open_uses: dict[str | None, int] = {}
    used: set[str | None] = set()
    answered: set[str | None] = set()
    for i, r in enumerate(records):
        kind = r.get("type")
        tool_id = data_of(r).get("toolUseId")
        if kind == "tool_use":
            if tool_id in used:
                fail("tool events are not duplicated (deduplicated by toolUseId)", records, {i: "duplicate tool_use"})
            used.add(tool_id)
            open_uses[tool_id] = i
        elif kind == "tool_result":
            if tool_id in answered:
                fail(
                    "tool events are not duplicated (deduplicated by toolUseId)", records, {i: "duplicate tool_result"}
                )
            if tool_id not in open_uses:
                fail(
                    "a tool_result answers an earlier tool_use of the same toolUseId",
                    records,
                    {i: "no tool_use before it"},
                )
            answered.add(tool_id)
            del open_uses[tool_id]
    if open_uses:
        fail(
            "tool_use is always followed by the tool_result of the same toolUseId",
            records,
            {i: "no tool_result" for i in open_uses.values()},
        )


def check_approval_ordering(events: Events) -> None:
    """``approval_requested`` (pending) follows its ``tool_use`` and precedes its
    ``approval_resolved``, which precedes the ``tool_result``; a rejection gives a
    failed result with ``error="User rejected"``."""
    records = records_of(events)
    requested: dict[Any, int] = {}
    decisions: dict[Any, bool] = {}
    tool_of_approval: dict[Any, Any] = {}
    seen_uses: set[Any] = set()
    for i, r in enumerate(records):
        kind = r.get("type")
        data = data_of(r)
        if kind == "tool_use":
            seen_uses.add(data.get("toolUseId"))
        elif kind == "approval_requested":
            if r.get("persistence") != "pending":
                fail("approval_requested is pending", records, {i: "not pending"})
            tool_id = data.get("toolUseId")
            if tool_id is not None and tool_id not in seen_uses:
                fail("approval_requested follows its tool_use", records, {i: "before its tool_use"})
            requested[data.get("approvalId")] = i
            tool_of_approval[data.get("approvalId")] = tool_id
        elif kind == "approval_resolved":
            approval = data.get("approvalId")
            if approval not in requested:
                fail(
                    "approval_resolved follows its approval_requested", records, {i: "no approval_requested before it"}
                )
            decisions[tool_of_approval.get(approval)] = bool(data.get("approved"))
            del requested[approval]
        elif kind == "tool_result":
            tool_id = data.get("toolUseId")
            if any(tool_of_approval.get(a) == tool_id for a in requested):
                fail(
                    "the tool runs only after its approval is resolved",
                    records,
                    {i: "tool_result before approval_resolved"},
                )
            if decisions.get(tool_id) is False and (
                data.get("success") is not False or data.get("error") != "User rejected"
            ):
                fail(
                    "a rejected tool gives success=false and error='User rejected'",
                    records,
                    {i: "rejected but not reported as such"},
                )
    if requested:
        fail("every approval_requested is resolved", records, {i: "never resolved" for i in requested.values()})


def check_terminal_event(events: Events, *, success: bool) -> None:
    """On success ``complete`` is last (and once); after an ``error`` nothing follows
    and there is no ``complete``."""
    records = records_of(events)
    completes = [i for i, r in enumerate(records) if r.get("type") == "complete"]
    errors = [i for i, r in enumerate(records) if r.get("type") == "error"]
    if success:
        if not completes or completes[-1] != len(records) - 1:
            fail(
                "complete is always last on success",
                records,
                {len(records) - 1: "expected complete here"} if records else {},
            )
        if len(completes) > 1 or errors:
            fail(
                "a successful run has one complete and no error",
                records,
                {i: "unexpected" for i in completes[:-1] + errors},
            )
    else:
        if completes:
            fail("there is no complete after an error", records, {i: "complete after error" for i in completes})
        if not errors or errors[-1] != len(records) - 1:
            fail(
                "error is terminal: it is the last event",
                records,
                {errors[0]: "events follow the error"} if errors else {},
            )
        if records[errors[-1]].get("persistence") != "persisted":
            fail("the error is persisted", records, {errors[-1]: "not persisted"})
