"""harness.systems.planner: the action-schema planner and task executor (seed 004, ADR-002)."""

from harness.systems.planner.calculator import CalculationError, calculate
from harness.systems.planner.executor import PlanningResult, StepError, TaskExecutor, fallback_plan, interpolate
from harness.systems.planner.models import ActionStep, Plan, PlanValidationError, parse_plan

__all__ = [
    "ActionStep",
    "CalculationError",
    "Plan",
    "PlanValidationError",
    "PlanningResult",
    "StepError",
    "TaskExecutor",
    "calculate",
    "fallback_plan",
    "interpolate",
    "parse_plan",
]
