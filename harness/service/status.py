"""A chain's status, derived from its stored plan and its run's record.

The plan's step statuses say what ran; the run's last event says how it ended (a
cancel or the step limit leave no mark on the steps alone)::

    running     the run has not ended
    failed      a step FAILED
    cancelled   the run was cancelled (a SKIPPED step, or chainCancelled)
    gated       a policy gate denied (a GATED step)
    maxSteps    the chain stopped at its step limit
    completed   the run ended otherwise
    pending     stored, never run
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from harness.chain import ChainEvent, ChainPlan, StepStatus

__all__ = ["ENDINGS", "ChainState", "ChainStatus", "derive_status"]

ChainState = Literal["running", "completed", "failed", "cancelled", "gated", "maxSteps", "pending"]

ENDINGS = frozenset({"chainComplete", "chainMaxSteps", "chainCancelled"})
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
        return {"planId": self.plan_id, "planUri": self.plan_uri, "status": self.status,
                "stepNumber": self.step_number, "totalSteps": self.total_steps, "executed": self.executed,
                "error": self.error}


def _state(plan: ChainPlan, running: bool, last: str | None) -> ChainState:
    statuses = {s.step_status for s in plan.steps}
    if running:
        return "running"
    if StepStatus.FAILED in statuses:
        return "failed"
    if last == "chainCancelled" or StepStatus.SKIPPED in statuses:
        return "cancelled"
    if StepStatus.GATED in statuses:
        return "gated"
    if last == "chainMaxSteps":
        return "maxSteps"
    return "completed" if plan.executed else "pending"


def derive_status(plan: ChainPlan, plan_uri: str, *, running: bool, last_event: ChainEvent | None,
                  error: str | None) -> ChainStatus:
    """The status of ``plan`` (known as ``plan_uri``): ``running`` while its run lasts,
    ``last_event`` the run's latest, ``error`` why the run failed (else the ending's
    message)."""
    ran = [s for s in plan.steps if s.step_status is not StepStatus.PENDING]
    last = last_event.event_type if last_event is not None else None
    if error is None and last_event is not None and last in ENDINGS:
        error = last_event.error_message
    return ChainStatus(plan.object_id or "", plan_uri, _state(plan, running, last), ran[-1].step_number if ran else 0,
                       len(plan.steps), plan.executed, error)
