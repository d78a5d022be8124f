"""A chain's status, read from its stored plan and its run's record.

The executor records how a run ended in the plan (``outcome``, ``error``), so the
status survives the live entry's eviction and a restart; a plan still recorded as
``running`` that nothing runs was cut off, and reads ``failed``. Plans stored without
an outcome fall back to the step statuses and the run's last event::

    running     the run has not ended
    failed      a step FAILED
    cancelled   the run was cancelled (a SKIPPED step, or chainCancelled)
    gated       a policy gate denied (a GATED step)
    maxSteps    the chain stopped at its step limit
    stalled     two LLM steps in a row gave the same output
    completed   the run ended otherwise
    pending     stored, never run
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from harness.systems.camel_case import camel_case_json
from harness.systems.chain import ChainEvent, ChainPlan, StepStatus
from harness.systems.chain.models import CHAIN_ENDINGS

__all__ = ["ENDINGS", "ChainState", "ChainStatus", "derive_status"]

ChainState = Literal["running", "completed", "failed", "cancelled", "gated", "maxSteps", "stalled", "pending"]

ENDINGS = CHAIN_ENDINGS
"""The events that end a run."""


@dataclass
class ChainStatus:
    """What a status read answers (``as_json`` in the doors' spelling)."""

    plan_id: str
    plan_uri: str
    status: ChainState
    step_number: int
    total_steps: int
    executed: bool
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        return camel_case_json(self)


_RECORDED: frozenset[str] = frozenset({"completed", "failed", "cancelled", "gated", "maxSteps", "stalled"})
CUT_OFF = "the run was cut off before it ended (the service stopped or crashed while it ran)"


def _state(plan: ChainPlan, running: bool, last: str | None) -> ChainState:
    statuses = {s.step_status for s in plan.steps}
    if running:
        return "running"
    if plan.outcome in _RECORDED:  # what the executor recorded wins: it outlives the live entry
        return plan.outcome  # type: ignore[return-value]
    if plan.outcome == "running":
        return "failed"  # stored as running, yet nothing runs it: cut off
    if StepStatus.FAILED in statuses:
        return "failed"
    if last == "chainCancelled" or StepStatus.SKIPPED in statuses:
        return "cancelled"
    if StepStatus.GATED in statuses:
        return "gated"
    if last == "chainMaxSteps":
        return "maxSteps"
    if last == "chainStalled":
        return "stalled"
    return "completed" if plan.executed else "pending"


def derive_status(
    plan: ChainPlan, plan_uri: str, *, running: bool, last_event: ChainEvent | None, error: str | None
) -> ChainStatus:
    """The status of ``plan`` (known as ``plan_uri``): ``running`` while its run lasts,
    ``last_event`` the run's latest, ``error`` why the run failed (else the ending's
    message)."""
    ran = [s for s in plan.steps if s.step_status is not StepStatus.PENDING]
    last = last_event.event_type if last_event is not None else None
    if error is None and last_event is not None and last in ENDINGS:
        error = last_event.error_message
    if error is None and not running:
        error = CUT_OFF if plan.outcome == "running" else plan.error
    return ChainStatus(
        plan.object_id or "",
        plan_uri,
        _state(plan, running, last),
        ran[-1].step_number if ran else 0,
        len(plan.steps),
        plan.executed,
        error,
    )
