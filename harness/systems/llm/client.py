"""What every model client follows: ``ModelClient`` (one assistant turn, streamed), the
call's options (``TurnRequest``), ``ModelError``, and ``SDKModelClient`` (the clients that
drive an official SDK).
"""

from __future__ import annotations

import abc
import functools
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from harness.exceptions import HarnessError
from harness.systems.llm.conversation import ConversationItem, StreamEvent, ToolSpec
from harness.systems.llm.sdks import DEFAULT_MODEL, sdk_for

__all__ = ["ModelClient", "ModelError", "SDKModelClient", "TurnRequest"]


class ModelError(HarnessError):
    """The model call failed: an HTTP error (``status``), a mid-stream error event, or
    a reply the harness cannot use. ``message`` is the provider's own message."""

    def __init__(self, message: str, *, status: int | None = None, kind: str = "http") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.kind = kind


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
    """What the model clients share: the SDK client they drive, closed by ``aclose``, the
    model they ask for (the protocol's ``DEFAULT_MODEL`` unless named), the SDK's module
    (``sdk``: its error classes), and a turn's two stages: the call's parameters
    (``_params``), then the call, streamed (``_send``)."""

    def __init__(self, client: Any, model: str | None = None) -> None:
        self.client = client
        self.model = DEFAULT_MODEL[self.protocol] if model is None else model

    @functools.cached_property
    def sdk(self) -> ModuleType:
        """The official SDK that speaks this client's protocol (``sdks.sdk_for``)."""
        return sdk_for(self.protocol)

    def _stream(self, conversation: Sequence[ConversationItem], request: TurnRequest) -> AsyncIterator[StreamEvent]:
        return self._send(self._params(conversation, request))

    @abc.abstractmethod
    def _params(self, conversation: Sequence[ConversationItem], request: TurnRequest) -> dict[str, Any]:
        """What the SDK's call is given for this turn: the model, the conversation in the
        provider's form, the options."""

    @abc.abstractmethod
    def _send(self, params: dict[str, Any]) -> AsyncIterator[StreamEvent]:
        """The SDK's call with ``params``, its stream read as neutral events."""

    async def aclose(self) -> None:
        """Close the SDK client's HTTP connections."""
        await self.client.close()
