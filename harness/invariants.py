"""Invariants over event sequences (seed 002), checked on every run.

Each check takes a sequence of events (``harness.events.Event`` or their JSON dicts)
and raises ``InvariantError`` — an ``AssertionError`` — when the rule is broken. The
message names the rule and shows the whole sequence in the golden-table form with the
offending events marked::

    invariant broken: tool_use is followed by the tool_result of the same toolUseId
    SEQ  EVENT TYPE               PERSISTENCE  KEY FIELDS
    ...
    2    tool_use                 persisted    args={} toolName="f" toolUseId="<tool:1>"   <-- no tool_result

The general checks are combined into one named check per seed flow
(``check_simple_message_flow`` … ``check_attachment_flow``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.events import Event
from harness.exceptions import HarnessError
from harness.golden.table import CHUNK_TYPES, render_event_table
from harness.systems.chain.models import CHAIN_ENDINGS

__all__ = [
    "InvariantError",
    "check_approval_ordering",
    "check_approval_flow",
    "check_attachment_flow",
    "check_common",
    "check_error_flow",
    "check_event_indexes",
    "check_extended_thinking_flow",
    "check_final_content_matches_chunks",
    "check_persistence_states",
    "check_sequence_numbers",
    "check_simple_message_flow",
    "check_terminal_event",
    "check_thinking_before_text",
    "check_chain_flow",
    "check_tool_pairing",
    "check_tool_use_flow",
    "check_user_message_first",
]

Events = Sequence[Event | Mapping[str, Any]]


class InvariantError(HarnessError, AssertionError):
    """An invariant broke; the message shows the offending events."""


def _records(events: Iterable[Event | Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [e.to_json_dict() if isinstance(e, Event) else dict(e) for e in events]


def _fail(rule: str, records: list[dict[str, Any]], marks: Mapping[int, str]) -> None:
    raise InvariantError(f"invariant broken: {rule}\n" + render_event_table(records, marks=marks))


def _data(record: Mapping[str, Any]) -> Mapping[str, Any]:
    data = record.get("data")
    return data if isinstance(data, Mapping) else {}


# -- general checks -------------------------------------------------------------------


def check_user_message_first(events: Events) -> None:
    """``user_message_sent`` is the first event, and persisted."""
    records = _records(events)
    if not records:
        raise InvariantError("invariant broken: user_message_sent is first\n(no events at all)")
    first = records[0]
    if first.get("type") != "user_message_sent":
        _fail("user_message_sent is always first", records, {0: "expected user_message_sent"})
    if first.get("persistence") != "persisted":
        _fail("the user message is always persisted", records, {0: "not persisted"})


def check_persistence_states(events: Events) -> None:
    """Persisted events carry a sequenceNumber; transient and pending ones never do;
    streamed chunks are transient."""
    records = _records(events)
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
        _fail("sequenceNumber is carried by persisted events only", records, marks)


def check_sequence_numbers(events: Events, *, start: int | None = None) -> None:
    """Sequence numbers are consecutive per session, with no gaps and no duplicates,
    from the session's starting number: ``start``, or by default the number the first
    persisted event carries (a session's second message continues where the first
    ended). A ``pending`` event takes the next number when it is stored, right after it
    is emitted (``harness.systems.agent.emitter``), so the next persisted event skips it."""
    records = _records(events)
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
                _fail(
                    f"sequence numbers are consecutive per session from {base} (no gap, no duplicate)",
                    records,
                    {i: f"sequenceNumber {seq}, expected {base + k}"},
                )


def check_event_indexes(events: Events) -> None:
    """``eventIndex`` is present on every event and strictly increasing."""
    records = _records(events)
    previous = None
    for i, r in enumerate(records):
        index = r.get("eventIndex")
        if index is None:
            _fail("every event carries an eventIndex", records, {i: "no eventIndex"})
        if previous is not None and index <= previous:
            _fail(
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
    records = _records(events)
    pending: dict[str, list[str]] = {"message": [], "thinking": []}
    chunk_of = {"message_chunk": "message", "thinking_chunk": "thinking"}
    for i, r in enumerate(records):
        kind = r.get("type")
        content = _data(r).get("content", "")
        if kind in chunk_of:
            pending[chunk_of[kind]].append(str(content))
        elif kind == "thinking_complete" and pending["thinking"]:
            if content != "".join(pending["thinking"]):
                _fail(
                    "thinking_complete carries the accumulated thinking",
                    records,
                    {i: "differs from the thinking chunks"},
                )
        elif kind in pending:
            streamed = "".join(pending[kind])
            if pending[kind] and content != streamed:
                _fail(
                    f"the final {kind} equals the accumulated {kind}_chunk contents",
                    records,
                    {i: f"final content differs from the {len(pending[kind])} chunks"},
                )
            pending[kind] = []


def check_thinking_before_text(events: Events) -> None:
    """Within a model turn, no ``thinking_chunk`` comes after a ``message_chunk``, and
    ``thinking_complete`` comes between them."""
    records = _records(events)
    text_started = False
    thinking_seen = False
    for i, r in enumerate(records):
        kind = r.get("type")
        if kind == "message_chunk":
            if thinking_seen and not any(x.get("type") == "thinking_complete" for x in records[:i]):
                _fail(
                    "thinking_complete signals the switch from thinking to text",
                    records,
                    {i: "text before thinking_complete"},
                )
            text_started = True
        elif kind == "thinking_chunk":
            if text_started:
                _fail("thinking_chunk events come before message_chunk events", records, {i: "thinking after text"})
            thinking_seen = True
        elif kind == "message":
            text_started = thinking_seen = False


def check_tool_pairing(events: Events) -> None:
    """Every ``tool_use`` is followed by exactly one ``tool_result`` of the same
    ``toolUseId``; no tool event is duplicated; no result comes without its use."""
    records = _records(events)
    # By toolUseId; an event without one counts under None.
    open_uses: dict[str | None, int] = {}
    used: set[str | None] = set()
    answered: set[str | None] = set()
    for i, r in enumerate(records):
        kind = r.get("type")
        tool_id = _data(r).get("toolUseId")
        if kind == "tool_use":
            if tool_id in used:
                _fail("tool events are not duplicated (deduplicated by toolUseId)", records, {i: "duplicate tool_use"})
            used.add(tool_id)
            open_uses[tool_id] = i
        elif kind == "tool_result":
            if tool_id in answered:
                _fail(
                    "tool events are not duplicated (deduplicated by toolUseId)", records, {i: "duplicate tool_result"}
                )
            if tool_id not in open_uses:
                _fail(
                    "a tool_result answers an earlier tool_use of the same toolUseId",
                    records,
                    {i: "no tool_use before it"},
                )
            answered.add(tool_id)
            del open_uses[tool_id]
    if open_uses:
        _fail(
            "tool_use is always followed by the tool_result of the same toolUseId",
            records,
            {i: "no tool_result" for i in open_uses.values()},
        )


def check_approval_ordering(events: Events) -> None:
    """``approval_requested`` (pending) follows its ``tool_use`` and precedes its
    ``approval_resolved``, which precedes the ``tool_result``; a rejection gives a
    failed result with ``error="User rejected"``."""
    records = _records(events)
    requested: dict[Any, int] = {}
    decisions: dict[Any, bool] = {}
    tool_of_approval: dict[Any, Any] = {}
    seen_uses: set[Any] = set()
    for i, r in enumerate(records):
        kind = r.get("type")
        data = _data(r)
        if kind == "tool_use":
            seen_uses.add(data.get("toolUseId"))
        elif kind == "approval_requested":
            if r.get("persistence") != "pending":
                _fail("approval_requested is pending", records, {i: "not pending"})
            tool_id = data.get("toolUseId")
            if tool_id is not None and tool_id not in seen_uses:
                _fail("approval_requested follows its tool_use", records, {i: "before its tool_use"})
            requested[data.get("approvalId")] = i
            tool_of_approval[data.get("approvalId")] = tool_id
        elif kind == "approval_resolved":
            approval = data.get("approvalId")
            if approval not in requested:
                _fail(
                    "approval_resolved follows its approval_requested", records, {i: "no approval_requested before it"}
                )
            decisions[tool_of_approval.get(approval)] = bool(data.get("approved"))
            del requested[approval]
        elif kind == "tool_result":
            tool_id = data.get("toolUseId")
            if any(tool_of_approval.get(a) == tool_id for a in requested):
                _fail(
                    "the tool runs only after its approval is resolved",
                    records,
                    {i: "tool_result before approval_resolved"},
                )
            if decisions.get(tool_id) is False and (
                data.get("success") is not False or data.get("error") != "User rejected"
            ):
                _fail(
                    "a rejected tool gives success=false and error='User rejected'",
                    records,
                    {i: "rejected but not reported as such"},
                )
    if requested:
        _fail("every approval_requested is resolved", records, {i: "never resolved" for i in requested.values()})


def check_terminal_event(events: Events, *, success: bool) -> None:
    """On success ``complete`` is last (and once); after an ``error`` nothing follows
    and there is no ``complete``."""
    records = _records(events)
    completes = [i for i, r in enumerate(records) if r.get("type") == "complete"]
    errors = [i for i, r in enumerate(records) if r.get("type") == "error"]
    if success:
        if not completes or completes[-1] != len(records) - 1:
            _fail(
                "complete is always last on success",
                records,
                {len(records) - 1: "expected complete here"} if records else {},
            )
        if len(completes) > 1 or errors:
            _fail(
                "a successful run has one complete and no error",
                records,
                {i: "unexpected" for i in completes[:-1] + errors},
            )
    else:
        if completes:
            _fail("there is no complete after an error", records, {i: "complete after error" for i in completes})
        if not errors or errors[-1] != len(records) - 1:
            _fail(
                "error is terminal: it is the last event",
                records,
                {errors[0]: "events follow the error"} if errors else {},
            )
        if records[errors[-1]].get("persistence") != "persisted":
            _fail("the error is persisted", records, {errors[-1]: "not persisted"})


# -- one check per seed flow ----------------------------------------------------------


def _only(events: Events, allowed: set[str], flow: str) -> None:
    records = _records(events)
    marks = {i: "not part of this flow" for i, r in enumerate(records) if r.get("type") not in allowed}
    if marks:
        _fail(f"the {flow} flow emits only {sorted(allowed)}", records, marks)


_SIMPLE = {"user_message_sent", "message_chunk", "message", "complete"}


def check_simple_message_flow(events: Events, *, start: int | None = None) -> None:
    """Flow 1: user message first, transient chunks, final message equal to them,
    complete last, consecutive sequence numbers."""
    _only(events, _SIMPLE, "simple message")
    check_common(events, start=start)
    check_final_content_matches_chunks(events)
    check_terminal_event(events, success=True)


def check_extended_thinking_flow(events: Events, *, start: int | None = None) -> None:
    """Flow 2: thinking chunks before text chunks, thinking_complete at the switch,
    thinking and message persisted with sequence numbers."""
    _only(events, _SIMPLE | {"thinking_chunk", "thinking_complete", "thinking"}, "extended thinking")
    check_common(events, start=start)
    check_thinking_before_text(events)
    check_final_content_matches_chunks(events)
    records = _records(events)
    for kind in ("thinking", "message"):
        if not any(r.get("type") == kind and r.get("sequenceNumber") is not None for r in records):
            _fail(f"a persisted {kind} event with a sequenceNumber is emitted", records, {})
    check_terminal_event(events, success=True)


def check_tool_use_flow(events: Events, *, start: int | None = None) -> None:
    """Flow 3: an intermediate message with stopReason='tool_use' before the tool
    events, tool_use/tool_result paired by provider id, persisted, never duplicated."""
    check_common(events, start=start)
    check_tool_pairing(events)
    check_final_content_matches_chunks(events)
    records = _records(events)
    for i, r in enumerate(records):
        if r.get("type") in ("tool_use", "tool_result") and r.get("persistence") != "persisted":
            _fail("tool events are persisted", records, {i: "not persisted"})
        if r.get("type") == "tool_use":
            previous_messages = [x for x in records[:i] if x.get("type") == "message"]
            if not previous_messages or _data(previous_messages[-1]).get("stopReason") != "tool_use":
                _fail(
                    "an intermediate message with stopReason='tool_use' precedes tool events",
                    records,
                    {i: "no tool_use message before it"},
                )
    check_terminal_event(events, success=True)


def check_approval_flow(events: Events, *, start: int | None = None) -> None:
    """Flow 4: the tool-use rules plus approval ordering and the rejection outcome."""
    check_tool_use_flow(events, start=start)
    check_approval_ordering(events)


def check_error_flow(events: Events, *, start: int | None = None) -> None:
    """Flow 5: the user message stays persisted, the error is persisted and terminal,
    and there is no complete."""
    check_common(events, start=start)
    check_terminal_event(events, success=False)


def check_attachment_flow(events: Events, *, start: int | None = None) -> None:
    """Flow 6: the simple-message rules (the file context is in the prompt, which the
    runner's tests check against the request journal)."""
    check_simple_message_flow(events, start=start)


_CHAIN_ENDINGS = CHAIN_ENDINGS


def check_chain_flow(events: Events) -> None:
    """A chain executor run: each ``stepStart`` is closed by the ``stepComplete`` or
    ``stepError`` of the same step before another starts (only ``chainCancelled`` may
    interrupt one); at most one ending event, and it is last; none after a
    ``stepError``; ``totalSteps`` never shrinks; event indexes increase."""
    check_event_indexes(events)
    records = _records(events)
    open_step: tuple[int, Any] | None = None
    failed = None
    for i, record in enumerate(records):
        kind, data = record.get("type"), _data(record)
        if kind == "stepStart":
            if open_step is not None:
                _fail(
                    "a step ends before the next one starts",
                    records,
                    {open_step[0]: "never ended", i: "next step started"},
                )
            open_step = (i, data.get("stepNumber"))
        elif kind in ("stepComplete", "stepError"):
            if open_step is None and not (kind == "stepError" and data.get("stepNumber") in (None, 0)):
                _fail("a step ends only after it started", records, {i: "no stepStart before"})
            if open_step is not None and data.get("stepNumber") != open_step[1]:
                _fail(
                    "a step ends as the step that started",
                    records,
                    {open_step[0]: "started", i: "a different step ended"},
                )
            open_step = None
            if kind == "stepError":
                failed = i
        elif kind in _CHAIN_ENDINGS:
            if open_step is not None and kind != "chainCancelled":
                _fail("the chain ends only between steps", records, {open_step[0]: "still running", i: "ended"})
            if i != len(records) - 1:
                _fail("the chain's ending event is the last event", records, {i: "events follow"})
    endings = [i for i, r in enumerate(records) if r.get("type") in _CHAIN_ENDINGS]
    if failed is not None and (endings or failed != len(records) - 1):
        _fail(
            "a failed step ends the run: nothing follows its stepError",
            records,
            {failed: "stepError", **{i: "after the error" for i in range(failed + 1, len(records))}},
        )
    if failed is None and len(endings) != 1:
        _fail(
            "a run that did not fail ends with exactly one ending event",
            records,
            {i: "ending" for i in endings} or ({len(records) - 1: "no ending after this"} if records else {}),
        )
    totals = [(i, total) for i, r in enumerate(records) if (total := _data(r).get("totalSteps")) is not None]
    for (_, before), (i, after) in zip(totals, totals[1:], strict=False):
        if after < before:
            _fail("totalSteps never shrinks", records, {i: f"{before} -> {after}"})
