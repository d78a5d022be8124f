"""What the framework tests share: the scripts a user's test would write, and the
journal read back as (protocol, turn, instruction id)."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest

from mockllm import InstructionChain


def skip_module_unless_installed(*packages: str, reason: str) -> None:
    """Skip the calling test module unless every package in ``packages`` is installed.

    Found, not imported: a framework costs ~1 s of CPU to import, which every xdist worker
    would pay at collection for tests that only one of them runs. The tests import it."""
    if any(importlib.util.find_spec(name) is None for name in packages):
        pytest.skip(reason, allow_module_level=True)


GREETING = "Hello from the mock, through the framework."
STREAMED = "One two three four five six seven eight."
ANSWER = "It is sunny in Paris."


def script(*instructions: dict[str, Any], prompt: str = "Help me plan the day.") -> str:
    """A user message carrying ``instructions`` as an instruction chain."""
    return InstructionChain.model_validate({"instruction_chain": list(instructions)}).tagged(prompt)


PLAIN = script({"id": "greet", "messages": [{"text_message": {"text": GREETING}}]})
"""One reply: ``GREETING``."""

STREAM = script({"id": "count", "messages": [{"text_message": {"text": STREAMED}}]})
"""One reply, streamed a word a chunk by default: ``STREAMED``."""

TOOL_LOOP = script(
    {"id": "look-up", "messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Paris"}}]}]},
    {"id": "answer", "messages": [{"text_message": {"text": ANSWER}}]},
)
"""Two turns: a call of ``get_weather`` for Paris, then ``ANSWER`` once its result is back."""

WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def get_weather(city: str) -> str:
    """The weather in a city (the tool every loop here runs)."""
    return json.dumps({"city": city, "sky": "sunny"})


OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "description": "The weather in a city.", "parameters": WEATHER_SCHEMA},
    }
]
"""``get_weather`` as OpenAI-style tools (what LiteLLM takes for every provider)."""


def trail(door: Any) -> list[tuple[str, int, str | None]]:
    """The model requests the mock saw: (protocol, turn index, instruction id), oldest
    first; requests that are no model call (Ollama's ``/api/show``) left out."""
    return [(e["protocol"], e["turn_index"], e["instruction_id"]) for e in door.journal() if e["protocol"] is not None]


def streamed(door: Any) -> list[bool]:
    """Whether each model request asked for a stream, oldest first. (A framework may
    stream where its user did not ask: ``ChatOllama.invoke`` does.)"""
    return [e["stream"] for e in door.journal() if e["protocol"] is not None]
