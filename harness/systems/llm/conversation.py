"""The model client's neutral conversation: what is sent (``UserMessage``, ``AssistantTurn``,
``ToolResults``, ``ToolSpec``), what streams back (``ThinkingDelta``, ``TextDelta``,
``TurnComplete``), the ``ModelClient`` base every client follows, and ``ModelError``.

Each protocol's client (``anthropic_messages``, ``openai_chat``, ``gemini``) writes these
in its provider's own form on each call and reads the reply back into them.
"""

from __future__ import annotations

import abc
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from harness.exceptions import HarnessError
from harness.systems.llm.sdks import DEFAULT_MODEL

__all__ = [
    "AssistantTurn",
    "ConversationItem",
    "ModelClient",
    "ModelError",
    "SDKModelClient",
    "StreamEvent",
    "StreamedTurn",
    "TextDelta",
    "ThinkingDelta",
    "ToolCall",
    "ToolResult",
    "ToolResults",
    "ToolSpec",
    "TurnComplete",
    "TurnRequest",
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


@dataclass(frozen=True)
class TurnRequest:
    """What one call asks for beside the conversation (``ModelClient.stream_turn``'s options)."""

    system: str | None
    tools: tuple[ToolSpec, ...]
    thinking_budget: int | None
    max_tokens: int


class ModelClient(abc.ABC):
    """Streams one assistant turn for a conversation; raises ``ModelError`` on failure.

    The call's options and their defaults are read here, once; each protocol's client
    writes them in its provider's form (``_stream``).
    """

    protocol: str

    def stream_turn(
        self,
        conversation: Sequence[ConversationItem],
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
        thinking_budget: int | None = None,
        max_tokens: int = 4096,
    ) -> AsyncIterator[StreamEvent]:
        return self._stream(conversation, TurnRequest(system, tuple(tools), thinking_budget, max_tokens))

    @abc.abstractmethod
    def _stream(self, conversation: Sequence[ConversationItem], request: TurnRequest) -> AsyncIterator[StreamEvent]:
        """The turn, streamed in this client's protocol."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Close the HTTP connections the client holds."""


class SDKModelClient(ModelClient):
    """What the model clients share: the SDK client they drive, closed by ``aclose``, and
    the model they ask for (the protocol's ``DEFAULT_MODEL`` unless named)."""

    def __init__(self, client: Any, model: str | None = None) -> None:
        self.client = client
        self.model = DEFAULT_MODEL[self.protocol] if model is None else model

    async def aclose(self) -> None:
        """Close the SDK client's HTTP connections."""
        await self.client.close()


class StreamedTurn:
    """A turn read piece by piece, for the SDKs that hand back no final message (OpenAI
    Chat, Gemini): thinking is block 0, and the text follows it (block 1 after thinking)."""

    def __init__(self) -> None:
        self.thinking: list[str] = []
        self.texts: list[str] = []
        self.message_id: str | None = None
        self.usage = (0, 0)

    def think(self, text: str) -> ThinkingDelta:
        self.thinking.append(text)
        return ThinkingDelta(text, 0)

    def say(self, text: str) -> TextDelta:
        self.texts.append(text)
        return TextDelta(text, 1 if self.thinking else 0)

    def complete(self, tool_calls: tuple[ToolCall, ...], stop_reason: str) -> TurnComplete:
        """The whole turn, with the calls and the stop reason in the neutral form."""
        thinking = "".join(self.thinking) if self.thinking else None
        turn = AssistantTurn("".join(self.texts), tool_calls, thinking, None, stop_reason, self.message_id)
        return TurnComplete(turn, *self.usage)


def parse_arguments(raw: str, name: str) -> dict[str, Any]:
    """A tool call's arguments sent as JSON text, as an object; ``ModelError`` if they are not one."""
    try:
        value = json.loads(raw or "{}")
    except ValueError as exc:
        raise ModelError(f"the model called {name!r} with arguments that are not JSON: {raw!r}", kind="reply") from exc
    if not isinstance(value, dict):
        raise ModelError(f"the model called {name!r} with arguments that are not an object: {raw!r}", kind="reply")
    return value
