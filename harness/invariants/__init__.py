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

from harness.invariants.flows import (
    check_approval_flow,
    check_attachment_flow,
    check_chain_flow,
    check_error_flow,
    check_extended_thinking_flow,
    check_simple_message_flow,
    check_tool_use_flow,
)
from harness.invariants.report import InvariantError
from harness.invariants.rules import (
    check_approval_ordering,
    check_common,
    check_event_indexes,
    check_final_content_matches_chunks,
    check_persistence_states,
    check_sequence_numbers,
    check_terminal_event,
    check_thinking_before_text,
    check_tool_pairing,
    check_user_message_first,
)

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
