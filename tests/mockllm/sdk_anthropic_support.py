"""The Anthropic Messages side of the SDK tests: a ``Turn`` is the message's content
blocks, read from the message, rebuilt from raw events by index (as an agent does) or
from the stream helper's final message; ``tool_result`` blocks as results; the agent
loop on ``messages``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.mockllm.sdk_support import ANTHROPIC_TOOLS, Executed, accumulate, run_tool, sdk_call
from tests.mockllm.sdk_support import agent_loop as _agent_loop

MODEL = "claude-mock-1"
MAX_TOKENS = 2048
THINKING = {"type": "enabled", "budget_tokens": 1024}
TOOLS = ANTHROPIC_TOOLS


@dataclass
class Turn:
    """One assistant message: its content blocks (as the API would take them back)."""

    content: list[Any]
    stop_reason: str
    usage: Any = None
    message: Any = None
    events: list[Any] = field(default_factory=list)

    @staticmethod
    def _get(block: Any, key: str) -> Any:
        return block[key] if isinstance(block, dict) else getattr(block, key)

    def blocks(self, kind: str) -> list[Any]:
        return [b for b in self.content if self._get(b, "type") == kind]

    @property
    def text(self) -> str:
        return "".join(self._get(b, "text") for b in self.blocks("text"))

    @property
    def thinking(self) -> str | None:
        blocks = self.blocks("thinking")
        return "".join(self._get(b, "thinking") for b in blocks) if blocks else None

    @property
    def tool_uses(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(id, name, input) of each tool_use block, in order."""
        return [(self._get(b, "id"), self._get(b, "name"), self._get(b, "input")) for b in self.blocks("tool_use")]

    def kinds(self) -> list[str]:
        return [self._get(b, "type") for b in self.content]


class _EventAccumulator:
    """What an agent does with raw events: build the content blocks by index."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.blocks: dict[int, dict[str, Any]] = {}
        self.partial_json: dict[int, str] = {}
        self.stop_reason: str | None = None
        self.usage: dict[str, int] = {}

    def add(self, event: Any) -> None:
        self.events.append(event)
        if event.type == "message_start":
            self.usage = {"input_tokens": event.message.usage.input_tokens,
                          "output_tokens": event.message.usage.output_tokens}
        elif event.type == "content_block_start":
            block = event.content_block.model_dump(exclude_none=True)
            self.blocks[event.index] = block
            if block["type"] == "tool_use":
                self.partial_json[event.index] = ""
        elif event.type == "content_block_delta":
            block, delta = self.blocks[event.index], event.delta
            if delta.type == "text_delta":
                block["text"] += delta.text
            elif delta.type == "thinking_delta":
                block["thinking"] += delta.thinking
            elif delta.type == "signature_delta":
                block["signature"] = delta.signature
            elif delta.type == "input_json_delta":
                self.partial_json[event.index] += delta.partial_json
        elif event.type == "content_block_stop":
            if event.index in self.partial_json:
                text = self.partial_json.pop(event.index)
                self.blocks[event.index]["input"] = json.loads(text) if text else {}
        elif event.type == "message_delta":
            self.stop_reason = event.delta.stop_reason
            self.usage["output_tokens"] = event.usage.output_tokens

    def turn(self) -> Turn:
        assert self.stop_reason is not None, "the stream ended without a message_delta"
        assert self.events[-1].type == "message_stop"
        content = [self.blocks[i] for i in sorted(self.blocks)]
        return Turn(content, self.stop_reason, self.usage, events=self.events)


async def anthropic_turn(client: Any, mode: str, **kwargs: Any) -> Turn:
    """One model call, made the way ``mode`` says, sync or async after the client."""
    kwargs.setdefault("model", MODEL)
    kwargs.setdefault("max_tokens", MAX_TOKENS)
    message, events = await sdk_call(client, client.messages, mode, "get_final_message", **kwargs)
    if mode == "sse":
        return accumulate(_EventAccumulator(), events)
    return Turn(list(message.content), message.stop_reason, message.usage, message, events)


def run_tools(turn: Turn, executed: Executed) -> list[dict[str, Any]]:
    """Execute each requested tool; the results as ``tool_result`` blocks."""
    return [{"type": "tool_result", "tool_use_id": call_id, "content": run_tool(name, args, executed)}
            for call_id, name, args in turn.tool_uses]


async def agent_loop(client: Any, mode: str, messages: list[dict[str, Any]],
                     **kwargs: Any) -> tuple[list[Turn], Executed]:
    """Call the model, run its tools, append everything, until it stops asking for tools."""
    def answer(turn: Turn, executed: Executed) -> bool:
        # The content as returned, thinking blocks (with their signatures) included.
        messages.append({"role": "assistant", "content": turn.content})
        if turn.stop_reason != "tool_use":
            return False
        messages.append({"role": "user", "content": run_tools(turn, executed)})
        return True

    return await _agent_loop(lambda: anthropic_turn(client, mode, messages=messages, tools=TOOLS, **kwargs),
                             answer)
