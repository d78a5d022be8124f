"""Planning a chain from its query: the plan prompt and the reading of its answer.

A plan with a query and no steps is planned by the model as its run's first call
(the seed's ``createChainPlan``), in the run's one conversation, so the same
instruction chain scripts the plan and everything after it.
"""

from __future__ import annotations

from harness.exceptions import HarnessError
from harness.systems.chain.json_replies import read_json_object, read_steps
from harness.systems.chain.models import PlanStep

__all__ = ["PLAN_PROMPT", "PlanningError", "parse_plan_reply"]

PLAN_PROMPT = """Plan the steps that answer the query above, at most {max_steps}.
Each step has a stepType (default TOOL):
- TOOL: toolName (one of: {tools}) and inputs (the tool's arguments);
- LLM: inputs.prompt, optionally promptConfigName (one of: {prompts});
- RAG_QUERY: ragQuery and ragLimit, optionally vectorReferenceUri, the am7:// URI of the
  one data source to search (data sources named for this query: {sources});
- POLICY_GATE: policyName (one of: {policies}), checking the previous step's output.
Give a step an outputName to use its output later as {{{{outputName}}}} in inputs.
Answer with JSON only: {{"steps": [{{"stepType": "...", "description": "...", ...}}]}}"""


class PlanningError(HarnessError, ValueError):
    """The model's plan is not usable; the message says what is wrong."""


def parse_plan_reply(text: str, max_steps: int) -> list[PlanStep]:
    """The steps of a planning answer (a JSON object with ``steps``), numbered from 1."""
    try:
        raw_steps = read_json_object(text, "planning").get("steps")
        if not isinstance(raw_steps, list) or not raw_steps:
            raise ValueError("the planning reply needs a non-empty 'steps' list")
        steps = read_steps(raw_steps[:max_steps], "steps")
    except ValueError as exc:
        raise PlanningError(str(exc)) from exc
    for number, step in enumerate(steps, start=1):
        step.step_number = number
    return steps
