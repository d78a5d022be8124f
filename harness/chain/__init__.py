"""harness.chain: the ChainExecutor of seeds 000/001 (first part: TOOL and LLM steps)."""

from harness.chain.executor import ABSOLUTE_MAX_STEPS, ChainExecutor, PlanExecutionError, PromptConfig
from harness.chain.models import ChainEvent, ChainPlan, PlanStep, StepStatus, StepType

__all__ = [
    "ABSOLUTE_MAX_STEPS",
    "ChainEvent",
    "ChainExecutor",
    "ChainPlan",
    "PlanExecutionError",
    "PlanStep",
    "PromptConfig",
    "StepStatus",
    "StepType",
]
