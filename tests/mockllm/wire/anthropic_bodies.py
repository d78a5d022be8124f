"""Anthropic Messages request bodies the codec tests send: a question, a tool use and its result."""

from __future__ import annotations

MODEL = "claude-mock-1"
BASE = {"model": MODEL, "max_tokens": 2048}
ASK = {"role": "user", "content": "Weather?"}
USE_A = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"city": "Paris"}},
    ],
}
RESULT_A = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "sunny"}]}
