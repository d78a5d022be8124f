"""harness.planner: the action-schema planner and task executor (seed 004, ADR-002)."""

from harness.planner.calculator import CalculationError, calculate
from harness.planner.executor import PlanningResult, StepError, TaskExecutor, fallback_plan, interpolate
from harness.planner.models import ActionStep, Plan, PlanValidationError, parse_plan
from harness.planner.prompts import fallback_planner_prompt, planner_prompt

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
    "fallback_planner_prompt",
    "interpolate",
    "parse_plan",
    "planner_prompt",
]
