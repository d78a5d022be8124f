"""Reading the JSON a model answers with: its object, and the plan steps it proposes.

Planning and routing answers are both "a JSON object, perhaps wrapped in prose or a
code fence, whose steps are plan steps"; both read them here. Problems are
``ValueError``s that say where (``steps[1].ragLimit: ...``).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from harness.systems.chain.models import PlanStep, StepType
from harness.validation_problems import validation_problems

__all__ = ["read_json_object", "read_steps"]


def read_json_object(text: str, what: str) -> dict[str, Any]:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError(f"no JSON object in the {what} reply {text[:80]!r}")
    try:
        data = json.loads(text[start : end + 1])
    except ValueError as exc:
        raise ValueError(f"the {what} reply is not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"the {what} reply is not a JSON object")
    return data


def read_steps(raw_steps: list[Any], field: str) -> list[PlanStep]:
    steps = []
    for index, raw in enumerate(raw_steps):
        try:
            step = PlanStep.model_validate(raw)
        except ValidationError as exc:
            raise ValueError(f"{field}[{index}].{validation_problems(exc, 'step')[0]}") from exc
        if step.step_type is StepType.UNKNOWN:
            raise ValueError(f"{field}[{index}].stepType: UNKNOWN cannot run")
        steps.append(step)
    return steps
