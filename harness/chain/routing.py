"""Dynamic step insertion: the routing prompt and the reading of its answer.

After an LLM step the executor asks the model what comes next; the answer must be the
JSON ``{"complete": bool, "reason": str, "nextSteps": [step, ...]}``. At most
``MAX_INSERTED_PER_DECISION`` proposed steps are taken.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic import ValidationError

from harness.chain.models import PlanStep, StepType

__all__ = ["MAX_INSERTED_PER_DECISION", "ROUTE_PROMPT", "RoutingDecision", "RoutingError", "parse_routing"]

MAX_INSERTED_PER_DECISION = 3

ROUTE_PROMPT = """Decide what the chain should do next.
Plan query: {query}
Output of step {step_number}: {output}
Context available: {context}
Step types you may add: TOOL (toolName, inputs), LLM (inputs.prompt, promptConfigName),
RAG_QUERY (ragQuery, ragLimit), POLICY_GATE (policyName).
Answer with JSON only: {{"complete": true|false, "reason": "...", "nextSteps": [{{"stepType": "...",
"toolName": "...", "description": "...", "inputs": {{}}}}]}} with at most 3 nextSteps."""


class RoutingError(ValueError):
    """The routing answer is not the routing JSON; the message says what is wrong."""


@dataclass
class RoutingDecision:
    complete: bool
    reason: str = ""
    next_steps: list[PlanStep] = field(default_factory=list)


def parse_routing(text: str) -> RoutingDecision:
    """Read a routing answer (a JSON object, possibly wrapped in prose or a fence)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise RoutingError(f"no JSON object in the routing reply {text[:80]!r}")
    try:
        data = json.loads(text[start:end + 1])
    except ValueError as exc:
        raise RoutingError(f"the routing reply is not valid JSON ({exc})") from exc
    if not isinstance(data.get("complete", True), bool):
        raise RoutingError(f"'complete' must be true or false, got {data.get('complete')!r}")
    proposed = data.get("nextSteps") or []
    if not isinstance(proposed, list):
        raise RoutingError(f"'nextSteps' must be a list, got {type(proposed).__name__}")
    steps = []
    for number, raw in enumerate(proposed[:MAX_INSERTED_PER_DECISION], start=1):
        try:
            step = PlanStep.model_validate(raw)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"]) or "step"
            raise RoutingError(f"nextSteps[{number - 1}].{where}: {problem['msg']}") from exc
        if step.step_type is StepType.UNKNOWN:
            raise RoutingError(f"nextSteps[{number - 1}].stepType: UNKNOWN cannot run")
        steps.append(step)
    return RoutingDecision(bool(data.get("complete", True)), str(data.get("reason", "")), steps)
