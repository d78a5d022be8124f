"""One check per seed flow (seed 002's six agent flows), each combining the general rules,
and the chain executor's flow."""

from __future__ import annotations

from typing import Any

from harness.invariants.report import Events, data_of, fail, records_of
from harness.invariants.rules import (
    check_approval_ordering,
    check_common,
    check_event_indexes,
    check_final_content_matches_chunks,
    check_terminal_event,
    check_thinking_before_text,
    check_tool_pairing,
)
from harness.systems.chain.models import CHAIN_ENDINGS

__all__ = [
    "check_approval_flow",
    "check_attachment_flow",
    "check_chain_flow",
    "check_error_flow",
    "check_extended_thinking_flow",
    "check_simple_message_flow",
    "check_tool_use_flow",
]


def _only(events: Events, allowed: set[str], flow: str) -> None:
    records = records_of(events)
    marks = {i: "not part of this flow" for i, r in enumerate(records) if r.get("type") not in allowed}
    if marks:
        fail(f"the {flow} flow emits only {sorted(allowed)}", records, marks)


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
    records = records_of(events)
    for kind in ("thinking", "message"):
        if not any(r.get("type") == kind and r.get("sequenceNumber") is not None for r in records):
            fail(f"a persisted {kind} event with a sequenceNumber is emitted", records, {})
    check_terminal_event(events, success=True)


def check_tool_use_flow(events: Events, *, start: int | None = None) -> None:
    """Flow 3: an intermediate message with stopReason='tool_use' before the tool
    events, tool_use/tool_result paired by provider id, persisted, never duplicated."""
    check_common(events, start=start)
    check_tool_pairing(events)
    check_final_content_matches_chunks(events)
    records = records_of(events)
    for i, r in enumerate(records):
        if r.get("type") in ("tool_use", "tool_result") and r.get("persistence") != "persisted":
            fail("tool events are persisted", records, {i: "not persisted"})
        if r.get("type") == "tool_use":
            previous_messages = [x for x in records[:i] if x.get("type") == "message"]
            if not previous_messages or data_of(previous_messages[-1]).get("stopReason") != "tool_use":
                fail(
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


def check_chain_flow(events: Events) -> None:
    """A chain executor run: each ``stepStart`` is closed by the ``stepComplete`` or
    ``stepError`` of the same step before another starts (only ``chainCancelled`` may
    interrupt one); at most one ending event, and it is last; none after a
    ``stepError``; ``totalSteps`` never shrinks; event indexes increase."""
    check_event_indexes(events)
    records = records_of(events)
    open_step: tuple[int, Any] | None = None
    failed = None
    for i, record in enumerate(records):
        kind, data = record.get("type"), data_of(record)
        if kind == "stepStart":
            if open_step is not None:
                fail(
                    "a step ends before the next one starts",
                    records,
                    {open_step[0]: "never ended", i: "next step started"},
                )
            open_step = (i, data.get("stepNumber"))
        elif kind in ("stepComplete", "stepError"):
            if open_step is None and not (kind == "stepError" and data.get("stepNumber") in (None, 0)):
                fail("a step ends only after it started", records, {i: "no stepStart before"})
            if open_step is not None and data.get("stepNumber") != open_step[1]:
                fail(
                    "a step ends as the step that started",
                    records,
                    {open_step[0]: "started", i: "a different step ended"},
                )
            open_step = None
            if kind == "stepError":
                failed = i
        elif kind in CHAIN_ENDINGS:
            if open_step is not None and kind != "chainCancelled":
                fail("the chain ends only between steps", records, {open_step[0]: "still running", i: "ended"})
            if i != len(records) - 1:
                fail("the chain's ending event is the last event", records, {i: "events follow"})
    endings = [i for i, r in enumerate(records) if r.get("type") in CHAIN_ENDINGS]
    if failed is not None and (endings or failed != len(records) - 1):
        fail(
            "a failed step ends the run: nothing follows its stepError",
            records,
            {failed: "stepError", **{i: "after the error" for i in range(failed + 1, len(records))}},
        )
    if failed is None and len(endings) != 1:
        fail(
            "a run that did not fail ends with exactly one ending event",
            records,
            {i: "ending" for i in endings} or ({len(records) - 1: "no ending after this"} if records else {}),
        )
    totals = [(i, total) for i, r in enumerate(records) if (total := data_of(r).get("totalSteps")) is not None]
    for (_, before), (i, after) in zip(totals, totals[1:], strict=False):
        if after < before:
            fail("totalSteps never shrinks", records, {i: f"{before} -> {after}"})
