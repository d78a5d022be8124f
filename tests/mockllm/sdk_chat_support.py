"""The Chat Completions side of the SDK tests: a ``Turn`` read from a completion, from
raw chunks (as an agent loop concatenates them) or from the stream helper's final
completion; role=tool messages as tool results; the agent loop on ``messages``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.mockllm.sdk_support import CHAT_TOOLS, Executed, accumulate, run_tool, sdk_call
from tests.mockllm.sdk_support import agent_loop as _agent_loop

MODEL = "gpt-mock"
TOOLS = CHAT_TOOLS


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str

    @property
    def args(self) -> dict[str, Any]:
        return json.loads(self.arguments)


@dataclass
class Turn:
    """One assistant turn, whichever way it was received."""

    content: str | None
    reasoning: str | None
    tool_calls: list[ToolCall]
    finish_reason: str
    usage: Any = None
    chunks: list[Any] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)

    def assistant_message(self) -> dict[str, Any]:
        """The message an agent appends to its history."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message


def _from_message(message: Any, finish_reason: str, usage: Any) -> Turn:
    calls = [ToolCall(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or ()]
    reasoning = getattr(message, "reasoning_content", None)
    return Turn(message.content, reasoning, calls, finish_reason, usage)


class _ChunkAccumulator:
    """What an agent does with raw chunks: concatenate content, reasoning and arguments."""

    def __init__(self) -> None:
        self.chunks: list[Any] = []
        self.content: str | None = None
        self.reasoning: str | None = None
        self.calls: dict[int, ToolCall] = {}
        self.finish_reason: str | None = None
        self.usage: Any = None

    def add(self, chunk: Any) -> None:
        self.chunks.append(chunk)
        if chunk.usage is not None:
            self.usage = chunk.usage
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content is not None:
                self.content = (self.content or "") + delta.content
            reasoning = getattr(delta, "reasoning_content", None)
            if reasoning is not None:
                self.reasoning = (self.reasoning or "") + reasoning
            for piece in delta.tool_calls or ():
                call = self.calls.setdefault(piece.index, ToolCall("", "", ""))
                call.id += piece.id or ""
                if piece.function is not None:
                    call.name += piece.function.name or ""
                    call.arguments += piece.function.arguments or ""
            if choice.finish_reason is not None:
                self.finish_reason = choice.finish_reason

    def turn(self) -> Turn:
        assert self.finish_reason is not None, "the stream ended without a finish_reason"
        calls = [self.calls[i] for i in sorted(self.calls)]
        content = None if self.content == "" and calls else self.content
        return Turn(content, self.reasoning, calls, self.finish_reason, self.usage, chunks=self.chunks)


async def chat_turn(client: Any, mode: str, **kwargs: Any) -> Turn:
    """One model call, made the way ``mode`` says, sync or async after the client."""
    kwargs.setdefault("model", MODEL)
    final, events = await sdk_call(client, client.chat.completions, mode, "get_final_completion", **kwargs)
    if mode == "sse":
        return accumulate(_ChunkAccumulator(), events)
    choice = final.choices[0]
    turn = _from_message(choice.message, choice.finish_reason, final.usage)
    turn.events = events
    return turn


def run_tools(turn: Turn, executed: Executed) -> list[dict[str, Any]]:
    """Execute each requested tool and answer it with a role=tool message."""
    return [{"role": "tool", "tool_call_id": call.id, "content": run_tool(call.name, call.args, executed)}
            for call in turn.tool_calls]


async def agent_loop(client: Any, mode: str, messages: list[dict[str, Any]],
                     **kwargs: Any) -> tuple[list[Turn], Executed]:
    """Call the model, run its tools, append everything, until it stops asking for tools."""
    def answer(turn: Turn, executed: Executed) -> bool:
        messages.append(turn.assistant_message())
        if turn.finish_reason != "tool_calls":
            return False
        messages.extend(run_tools(turn, executed))
        return True

    return await _agent_loop(lambda: chat_turn(client, mode, messages=messages, tools=TOOLS, **kwargs), answer)
