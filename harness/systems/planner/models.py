"""The plan contract of ADR-002: ``thought`` and ``steps`` of ``{agent, action, args, prompt?}``.

A step names its agent action in ``action`` (never ``method``); a MainLLMAgent step
carries its text in ``prompt`` (never in ``args``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.exceptions import HarnessError
from harness.validation_problems import validation_problems

__all__ = ["Plan", "ActionStep", "PlanValidationError", "parse_plan"]


class PlanValidationError(HarnessError, ValueError):
    """A plan the executor cannot run; the message names the step and the field."""


class ActionStep(BaseModel):
    """One step of a plan: an agent's action with its arguments (and, for MainLLMAgent, its prompt)."""

    model_config = ConfigDict(extra="forbid")

    agent: str = Field(min_length=1)
    action: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    prompt: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_method(cls, data: Any) -> Any:
        if isinstance(data, dict) and "method" in data and "action" not in data:
            raise ValueError(f"the step uses 'method' ({data['method']!r}); the contract names it 'action'")
        return data

    @model_validator(mode="after")
    def _main_llm_prompt_in_its_field(self) -> ActionStep:
        # ADR-002 moved the MainLLMAgent text out of args: a plan that still puts it
        # there is rejected rather than run on the original query with the text dropped.
        if self.agent == "MainLLMAgent" and "prompt" in self.args:
            raise ValueError(
                "the MainLLMAgent step carries its text in 'args.prompt'; the contract "
                "(ADR-002) puts it in the step's 'prompt' field and leaves 'args' empty"
            )
        return self


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    thought: str = ""
    steps: list[ActionStep] = Field(min_length=1)


def parse_plan(data: Any) -> Plan:
    """Validate ``data`` as a plan; errors name the step and field."""
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        problems = validation_problems(exc, "plan")[:3]
        raise PlanValidationError("invalid plan: " + "; ".join(problems)) from exc
