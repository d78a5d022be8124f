"""The model client's neutral conversation: what is sent (``UserMessage``, ``AssistantTurn``,
``ToolResults``, ``ToolSpec``) and what streams back (``ThinkingDelta``, ``TextDelta``,
``TurnComplete``).

Each protocol's client (``anthropic_messages``, ``openai_chat``, ``gemini``, on the base
in ``client``) writes these in its provider's own form on each call and reads the reply
back into them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

__all__ = [
    "AssistantTurn",
    "ConversationItem",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCall",
    "ToolResult",
    "ToolResults",
    "ToolSpec",
    "TurnComplete",
    "UserMessage",
]


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model: name, description and JSON-schema of its input."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class UserMessage:
    text: str


@dataclass(frozen=True)
class AssistantTurn:
    """One assistant response, as it must be sent back in the history."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    thinking: str | None = None
    thinking_signature: str | None = None
    stop_reason: str = "end_turn"
    message_id: str | None = None


@dataclass(frozen=True)
class ToolResult:
    tool_call_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class ToolResults:
    results: tuple[ToolResult, ...]


ConversationItem = Union[UserMessage, AssistantTurn, ToolResults]


# -- stream events -----------------------------------------------------------------------


@dataclass(frozen=True)
class ThinkingDelta:
    text: str
    block_index: int


@dataclass(frozen=True)
class TextDelta:
    text: str
    block_index: int


@dataclass(frozen=True)
class TurnComplete:
    turn: AssistantTurn
    input_tokens: int = 0
    output_tokens: int = 0


StreamEvent = Union[ThinkingDelta, TextDelta, TurnComplete]
