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

from harness.invariants import flows, rules
from harness.invariants.flows import *  # noqa: F403 (flows.__all__)
from harness.invariants.report import InvariantError
from harness.invariants.rules import *  # noqa: F403 (rules.__all__)

__all__ = ["InvariantError", *rules.__all__, *flows.__all__]
