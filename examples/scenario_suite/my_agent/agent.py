"""A tool-using agent on the official ``openai`` SDK.

``run_agent`` asks the model, runs the tools it calls, hands their results back and
repeats until the model answers in words. It speaks Chat Completions or the Responses
API and records what happened as events (plain dicts), numbered with ``seq``.
"""

from __future__ import annotations

import json
from typing import Any

from openai import OpenAI

from my_agent.tools import SCHEMAS, TOOLS

MODEL = "gpt-4o-mini"
MAX_TURNS = 5


class Recorder:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __call__(self, type: str, **fields: Any) -> None:
        self.events.append({"type": type, "seq": len(self.events), **fields})


def _call_tool(name: str, arguments: str) -> str:
    return TOOLS[name](**json.loads(arguments or "{}"))


def _chat(client: OpenAI, prompt: str, record: Recorder) -> None:
    tools = [{"type": "function", "function": {"name": n, "parameters": s}} for n, s in SCHEMAS.items()]
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for _ in range(MAX_TURNS):
        message = client.chat.completions.create(model=MODEL, messages=messages, tools=tools).choices[0].message
        if not message.tool_calls:
            record("answer", content=message.content)
            return
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            record("tool_call", name=call.function.name, arguments=call.function.arguments, call_id=call.id)
            output = _call_tool(call.function.name, call.function.arguments)
            record("tool_result", call_id=call.id, output=output)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
    record("gave_up", turns=MAX_TURNS)


def _responses(client: OpenAI, prompt: str, record: Recorder) -> None:
    tools = [{"type": "function", "name": n, "parameters": s} for n, s in SCHEMAS.items()]
    inputs: list[Any] = [{"role": "user", "content": prompt}]
    for _ in range(MAX_TURNS):
        response = client.responses.create(model=MODEL, input=inputs, tools=tools)
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            record("answer", content=response.output_text)
            return
        inputs += [item.model_dump(exclude_none=True) for item in response.output]
        for call in calls:
            record("tool_call", name=call.name, arguments=call.arguments, call_id=call.call_id)
            output = _call_tool(call.name, call.arguments)
            record("tool_result", call_id=call.call_id, output=output)
            inputs.append({"type": "function_call_output", "call_id": call.call_id, "output": output})
    record("gave_up", turns=MAX_TURNS)


def run_agent(client: OpenAI, prompt: str, *, api: str = "chat") -> list[dict[str, Any]]:
    """Answer ``prompt`` with the tools; the events of the run."""
    record = Recorder()
    record("user", content=prompt)
    (_responses if api == "responses" else _chat)(client, prompt, record)
    return record.events
