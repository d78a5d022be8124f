"""Dynamic step insertion: the routing prompt and the reading of its answer.

After an LLM step the executor asks the model what comes next; the answer must be the
JSON ``{"complete": bool, "reason": str, "nextSteps": [step, ...]}``. At most
``MAX_INSERTED_PER_DECISION`` proposed steps are taken.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.exceptions import HarnessError
from harness.systems.chain.json_replies import read_json_object, read_steps
from harness.systems.chain.models import PlanStep

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


class RoutingError(HarnessError, ValueError):
    """The routing answer is not the routing JSON; the message says what is wrong."""


@dataclass
class RoutingDecision:
    complete: bool
    reason: str = ""
    next_steps: list[PlanStep] = field(default_factory=list)


def parse_routing(text: str) -> RoutingDecision:
    """Read a routing answer (a JSON object, possibly wrapped in prose or a fence)."""
    try:
        data = read_json_object(text, "routing")
        if not isinstance(data.get("complete", True), bool):
            raise ValueError(f"'complete' must be true or false, got {data.get('complete')!r}")
        proposed = data.get("nextSteps") or []
        if not isinstance(proposed, list):
            raise ValueError(f"'nextSteps' must be a list, got {type(proposed).__name__}")
        steps = read_steps(proposed[:MAX_INSERTED_PER_DECISION], "nextSteps")
    except ValueError as exc:
        raise RoutingError(str(exc)) from exc
    return RoutingDecision(bool(data.get("complete", True)), str(data.get("reason", "")), steps)
