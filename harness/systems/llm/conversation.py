"""The model client's neutral conversation: what is sent (``UserMessage``, ``AssistantTurn``,
``ToolResults``, ``ToolSpec``), what streams back (``ThinkingDelta``, ``TextDelta``,
``TurnComplete``), the ``ModelClient`` protocol every client follows, and ``ModelError``.

Each protocol's client (``anthropic_messages``, ``openai_chat``, ``gemini``) writes these
in its provider's own form on each call and reads the reply back into them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Union

from harness.exceptions import HarnessError

__all__ = [
    "AssistantTurn",
    "ConversationItem",
    "ModelClient",
    "ModelError",
    "SDKModelClient",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCall",
    "ToolResult",
    "ToolResults",
    "ToolSpec",
    "TurnComplete",
    "UserMessage",
    "parse_arguments",
]


class ModelError(HarnessError):
    """The model call failed: an HTTP error (``status``), a mid-stream error event, or
    a reply the harness cannot use. ``message`` is the provider's own message."""

    def __init__(self, message: str, *, status: int | None = None, kind: str = "http") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.kind = kind


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


class ModelClient(Protocol):
    """Streams one assistant turn for a conversation; raises ``ModelError`` on failure."""

    protocol: str

    def stream_turn(
        self,
        conversation: Sequence[ConversationItem],
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
        thinking_budget: int | None = None,
        max_tokens: int = 4096,
    ) -> AsyncIterator[StreamEvent]: ...

    async def aclose(self) -> None:
        """Close the HTTP connections the client holds."""
        ...


class SDKModelClient:
    """What the model clients share: the SDK client they drive, closed by ``aclose``."""

    client: Any

    async def aclose(self) -> None:
        """Close the SDK client's HTTP connections."""
        await self.client.close()


def parse_arguments(raw: str, name: str) -> dict[str, Any]:
    """A tool call's arguments sent as JSON text, as an object; ``ModelError`` if they are not one."""
    try:
        value = json.loads(raw or "{}")
    except ValueError as exc:
        raise ModelError(f"the model called {name!r} with arguments that are not JSON: {raw!r}", kind="reply") from exc
    if not isinstance(value, dict):
        raise ModelError(f"the model called {name!r} with arguments that are not an object: {raw!r}", kind="reply")
    return value
