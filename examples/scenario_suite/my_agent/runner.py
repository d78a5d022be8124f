"""Plays a scenario file through the agent (the harness's runner contract)."""

from __future__ import annotations

from typing import Any

from harness import RunnerContext, speaks
from my_agent.agent import run_agent


@speaks("openai-chat", "openai-responses")
def run(context: RunnerContext) -> list[dict[str, Any]]:
    api = "responses" if context.protocol == "openai-responses" else "chat"
    return run_agent(context.openai(), context.scenario.tagged_prompt(), api=api)
