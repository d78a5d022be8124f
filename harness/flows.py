"""The seed flows a scenario's ``expect.flow`` (or a turn's ``flow``) names, and the
invariant check each one runs: the one list of flow names (seed 002's six flows, and
``chain`` for the chain executor's events)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness import invariants

__all__ = ["FLOW_CHECKS", "known_flow"]

FLOW_CHECKS: dict[str, Callable[..., None]] = {
    "simple_message": invariants.check_simple_message_flow,
    "extended_thinking": invariants.check_extended_thinking_flow,
    "tool_use": invariants.check_tool_use_flow,
    "approval": invariants.check_approval_flow,
    "error": invariants.check_error_flow,
    "attachment": invariants.check_attachment_flow,
    "chain": invariants.check_chain_flow,
}


def known_flow(value: Any) -> Any:
    """``value`` when it names a flow; a ``ValueError`` listing the flows otherwise."""
    if value not in FLOW_CHECKS:
        raise ValueError(f"{value!r} is not a flow; use one of {', '.join(FLOW_CHECKS)}")
    return value
