"""The planner prompts of ADR-002: agents described by their actions, JSON examples
that use ``action``, and MainLLMAgent text in ``prompt`` (never in ``args``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["fallback_planner_prompt", "planner_prompt"]

_EXAMPLES = """Examples:

Simple conversation (no tools):
{"thought": "This is a simple greeting, no tools needed.",
 "steps": [{"agent": "MainLLMAgent", "action": "generateResponse", "args": {},
            "prompt": "Hello, how are you?"}]}

Calculator flow (multi-step):
{"thought": "User wants to calculate 15 * 3, then get a natural response.",
 "steps": [{"agent": "CalculatorAgent", "action": "calculate", "args": {"expression": "15 * 3"}},
           {"agent": "MainLLMAgent", "action": "generateResponse", "args": {},
            "prompt": "The result of 15 * 3 is {{step1_result}}. Provide a friendly response."}]}"""

_RULES = """Rules:
- Every step has "agent", "action" and "args"; name the agent's action in "action" (never "method").
- A MainLLMAgent step puts its text in "prompt" and leaves "args" empty ({}).
- Refer to the result of step N (counting from 1) as {{stepN_result}} inside a later prompt.
- Answer with the JSON plan only: {"thought": "...", "steps": [...]}."""


def _agents(agents: Mapping[str, Sequence[str]]) -> str:
    return "\n".join(f"- {name}: Actions: {', '.join(actions)}" for name, actions in agents.items())


def planner_prompt(agents: Mapping[str, Sequence[str]]) -> str:
    """The planner's system prompt for the registered ``agents`` (name -> actions)."""
    return (
        f"You are a planner. Break the user's request into steps, each run by one agent.\n\n"
        f"Available agents and their Actions:\n{_agents(agents)}\n\n{_RULES}\n\n{_EXAMPLES}"
    )


def fallback_planner_prompt(agents: Mapping[str, Sequence[str]]) -> str:
    """The shorter prompt used when the first planning attempt gave no usable plan."""
    return (
        f"Plan the user's request as JSON. Agents and their Actions:\n{_agents(agents)}\n\n{_RULES}\n\n"
        'When in doubt, use one step: {"agent": "MainLLMAgent", "action": "generateResponse", '
        '"args": {}, "prompt": "<the user request>"}.'
    )
