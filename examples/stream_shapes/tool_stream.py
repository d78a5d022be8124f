"""A streaming client that collects the tool calls of an OpenAI Chat Completions stream.

``collect_tool_calls_naive`` has the classic bug: when a delta opens a call (it has an
``id``) it starts the call with empty arguments, dropping any arguments that arrive in
that same delta. The mock's default stream never sends arguments with the id, so every
example-based test passes; a provider (or a proxy) that does breaks it. The strategy
``mockllm.strategies.stream_shapes`` finds it (see tests/). ``collect_tool_calls`` is
the fix: one line.
"""

from __future__ import annotations

import json
from typing import Any

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}},
    },
]


def _stream(client: Any, prompt: str) -> Any:
    return client.chat.completions.create(
        model="gpt-mock", messages=[{"role": "user", "content": prompt}], tools=TOOLS, stream=True
    )


def collect_tool_calls_naive(client: Any, prompt: str) -> list[dict[str, Any]]:
    calls: dict[int, dict[str, Any]] = {}
    for chunk in _stream(client, prompt):
        if not chunk.choices:
            continue
        for call in chunk.choices[0].delta.tool_calls or []:
            if call.id:  # a new call starts here...
                calls[call.index] = {"name": call.function.name, "arguments": ""}  # ...and its first piece is lost
            else:
                calls[call.index]["arguments"] += call.function.arguments or ""
    return [{"name": c["name"], "args": json.loads(c["arguments"])} for _, c in sorted(calls.items())]


def collect_tool_calls(client: Any, prompt: str) -> list[dict[str, Any]]:
    calls: dict[int, dict[str, Any]] = {}
    for chunk in _stream(client, prompt):
        if not chunk.choices:
            continue
        for call in chunk.choices[0].delta.tool_calls or []:
            if call.id:
                calls[call.index] = {"name": call.function.name, "arguments": call.function.arguments or ""}
            else:
                calls[call.index]["arguments"] += call.function.arguments or ""
    return [{"name": c["name"], "args": json.loads(c["arguments"])} for _, c in sorted(calls.items())]
