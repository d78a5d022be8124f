"""Planning a chain from its query: the plan prompt and the reading of its answer.

A plan with a query and no steps is planned by the model as its run's first call
(the seed's ``createChainPlan``), in the run's one conversation, so the same
instruction chain scripts the plan and everything after it.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from harness.chain.models import PlanStep, StepType

__all__ = ["PLAN_PROMPT", "PlanningError", "parse_plan_reply"]

PLAN_PROMPT = """Plan the steps that answer the query above, at most {max_steps}.
Each step has a stepType (default TOOL):
- TOOL: toolName (one of: {tools}) and inputs (the tool's arguments);
- LLM: inputs.prompt, optionally promptConfigName (one of: {prompts});
- RAG_QUERY: ragQuery and ragLimit, optionally vectorReferenceUri (am7://org/type/id);
- POLICY_GATE: policyName (one of: {policies}), checking the previous step's output.
Give a step an outputName to use its output later as {{{{outputName}}}} in inputs.
Answer with JSON only: {{"steps": [{{"stepType": "...", "description": "...", ...}}]}}"""


class PlanningError(ValueError):
    """The model's plan is not usable; the message says what is wrong."""


def parse_plan_reply(text: str, max_steps: int) -> list[PlanStep]:
    """The steps of a planning answer (a JSON object with ``steps``), numbered from 1."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise PlanningError(f"no JSON object in the planning reply {text[:80]!r}")
    try:
        data = json.loads(text[start:end + 1])
    except ValueError as exc:
        raise PlanningError(f"the planning reply is not valid JSON ({exc})") from exc
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise PlanningError("the planning reply needs a non-empty 'steps' list")
    steps = []
    for number, raw in enumerate(raw_steps[:max_steps], start=1):
        try:
            step = PlanStep.model_validate(raw)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"]) or "step"
            raise PlanningError(f"steps[{number - 1}].{where}: {problem['msg']}") from exc
        if step.step_type is StepType.UNKNOWN:
            raise PlanningError(f"steps[{number - 1}].stepType: UNKNOWN cannot run")
        step.step_number = number
        steps.append(step)
    return steps
