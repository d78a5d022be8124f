"""A small tool-using assistant on the openai SDK: the app under test.

It builds its client from the environment (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``)
unless given one, and templates the user's question into its own prompt, so a test
cannot put instruction tags into what the model sees.
"""

from __future__ import annotations

import json
from typing import Any

import openai

SYSTEM_PROMPT = "You are a weather assistant. Call the weather tool before you answer."
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "weather",
            "description": "Today's weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def weather(city: str) -> str:
    """The tool: a canned forecast."""
    return f"sunny, 21 degrees in {city}"


def answer(question: str, client: openai.OpenAI | None = None, model: str = "gpt-4o-mini") -> str:
    """Ask the model, run the tools it calls, and return its final text. A client it makes
    itself it closes: left to the garbage collector, its pooled socket is a
    ResourceWarning (an error under ``filterwarnings = error``) whenever the collector
    happens to finalize the socket before the client."""
    if client is None:
        with openai.OpenAI() as own:
            return answer(question, own, model)
    messages: list[Any] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"Question: {question}"},
    ]
    while True:
        reply = client.chat.completions.create(model=model, messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            result = weather(**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
