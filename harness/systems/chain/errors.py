"""The chain executor's error: a step that could not run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.exceptions import HarnessError

if TYPE_CHECKING:
    from harness.systems.chain.models import ChainPlan

__all__ = ["PlanExecutionError"]


class PlanExecutionError(HarnessError):
    """A step could not run: the step is FAILED, the message says why, and ``plan`` is
    the plan as it stood (also saved to the executor's store, if it has one)."""

    def __init__(self, message: str, plan: ChainPlan | None = None) -> None:
        super().__init__(message)
        self.plan = plan
