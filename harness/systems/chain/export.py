"""A finished chain as chat history (seed Group K, server side).

The history a chat view (or another model) is given after a chain: the user's query,
one system message listing every step that ran with its type label (Tool/LLM/RAG/Gate),
status and summary, the RAG citations as their MCP context blocks, and the chain's
result as a normal assistant message.

With it, what a Magic8-style consumer needs besides the messages (``sendToMagic8``'s
``{chatHistory, systemCharacter, userCharacter, chatConfigId}``): the chain's chat
config and its two characters, as full records. They are read from the plan's chain
context, where the service puts them when it makes the plan (``harness.systems.chain.characters``);
a plan made without them has ``None`` there.
"""

from __future__ import annotations

from typing import Any

from harness.systems.chain.context import restore_context
from harness.systems.chain.mcp_context import parse_context
from harness.systems.chain.models import ChainPlan, StepStatus, StepType
from harness.systems.quoting import quotable

__all__ = ["MAGIC8_KEYS", "TYPE_LABELS", "chain_chat_history", "step_summaries"]

MAGIC8_KEYS = ("systemCharacter", "userCharacter", "chatConfigId")
"""The chain context entries the history carries beside its messages."""

TYPE_LABELS = {
    StepType.TOOL: "Tool",
    StepType.LLM: "LLM",
    StepType.RAG_QUERY: "RAG",
    StepType.POLICY_GATE: "Gate",
    StepType.UNKNOWN: "Step",
}


def step_summaries(plan: ChainPlan) -> list[dict[str, Any]]:
    """Each step as the doors publish it: number, type, label, status, summary (the step's
    own summary, else its description), toolName and dynamic. The REST door sends these
    keys; the MCP door renames two of them (``mcp_tools``)."""
    return [
        {
            "number": s.step_number,
            "type": s.step_type.value,
            "label": TYPE_LABELS[s.step_type],
            "status": s.step_status.value,
            "summary": s.summary_text or s.description,
            "toolName": s.tool_name,
            "dynamic": s.dynamic,
        }
        for s in plan.steps
    ]


def chain_chat_history(plan: ChainPlan) -> dict[str, Any]:
    """``{"chatHistory": {"messages": [...]}, "systemCharacter": {...}, "userCharacter": {...},
    "chatConfigId": ..., "planName": ..., "executed": ...}``."""
    messages: list[dict[str, str]] = []
    query = quotable(plan.plan_query)
    if query:
        messages.append({"role": "user", "content": query})
    ran = [s for s in plan.steps if s.step_status is not StepStatus.PENDING]
    if ran:
        lines = [
            f"{s.step_number}. [{TYPE_LABELS[s.step_type]}] {s.step_status.value}"
            f"{' (dynamic)' if s.dynamic else ''}: {s.summary_text or s.description}"
            for s in ran
        ]
        messages.append({"role": "system", "content": "Chain steps:\n" + "\n".join(lines)})
    citations = [
        s.output
        for s in ran
        if s.step_type is StepType.RAG_QUERY and isinstance(s.output, str) and parse_context(s.output).blocks
    ]
    if citations:
        messages.append({"role": "system", "content": "\n".join(citations)})
    gated = next((s for s in ran if s.step_status is StepStatus.GATED), None)
    if gated is not None:
        # The plan's output is then the very text the gate denied: never the answer.
        messages.append(
            {
                "role": "assistant",
                "content": f"The chain was halted at step {gated.step_number}: policy {gated.policy_name!r} denied it.",
            }
        )
    elif plan.output is not None:
        output = plan.output if isinstance(plan.output, str) else str(plan.output)
        messages.append({"role": "assistant", "content": output})
    try:
        context = restore_context(plan.context_blocks)
    except ValueError:  # a context that cannot be read has no characters to give
        context = {}
    return {
        "chatHistory": {"messages": messages},
        **{key: context.get(key) for key in MAGIC8_KEYS},
        "planName": plan.name,
        "executed": plan.executed,
    }
