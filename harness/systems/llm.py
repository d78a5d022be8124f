"""The harness's model client: one assistant turn at a time, streamed over HTTP.

Everything in the harness that needs an LLM (the agent runner, the chain executor's LLM
steps, the planner) talks to it through a ``ModelClient``, which drives an official SDK
(``anthropic`` or ``openai``) over HTTP, to whatever model server it is given (in the
tests, the mock: over loopback, or through an HTTP client whose transport serves it in
process). That keeps every run a real end-to-end check of the wire protocol, streaming
and parsing.

The conversation is kept provider-neutral (``UserMessage``, ``AssistantTurn``,
``ToolResults``) and written in the provider's own form on each call.

The SDKs come with the ``agent`` extra (``pip install "mockllm-harness[agent]"``); both
generations work: openai 2.x (on ``httpx``) and 3.x (on ``httpx2``), anthropic 0.x
(``httpx``) and 1.x or later (``httpx2``). A client built without its SDK installed
fails with an ``ImportError`` naming the extra.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Protocol, Union

import httpx

from harness.exceptions import HarnessError, missing_extra

__all__ = [
    "AnthropicModelClient",
    "AssistantTurn",
    "ModelClient",
    "ModelError",
    "OpenAIChatModelClient",
    "TextDelta",
    "ThinkingDelta",
    "ToolCall",
    "ToolResult",
    "ToolResults",
    "ToolSpec",
    "TurnComplete",
    "UserMessage",
    "http_library",
    "model_client",
    "require_sdk",
    "sdk_for",
]

DEFAULT_MODEL = {"anthropic-messages": "claude-mock-1", "openai-chat": "gpt-mock"}
_SDKS = {"anthropic": "anthropic", "anthropic-messages": "anthropic", "openai": "openai", "openai-chat": "openai"}


def _require(name: str, *, needed_by: str, extra: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise  # the package is there but broken: its own error says more
        raise missing_extra(name, needed_by=needed_by, extra=extra) from exc


def require_sdk(name: str, *, needed_by: str) -> ModuleType:
    """The SDK ``name`` (``openai``, ``anthropic``), imported; or ``MissingExtra`` naming
    the ``agent`` extra."""
    return _require(name, needed_by=needed_by, extra="agent")


def sdk_for(protocol: str) -> ModuleType:
    """The official SDK module that speaks ``protocol`` (``anthropic`` or ``openai``),
    imported; a ``MissingExtra`` naming the ``agent`` extra if it is not installed."""
    if protocol not in _SDKS:
        raise ValueError(f"unknown protocol {protocol!r}; use 'anthropic-messages' or 'openai-chat'")
    return require_sdk(_SDKS[protocol], needed_by=f"harness.systems.llm's {protocol} client")


def http_library(sdk: ModuleType) -> ModuleType:
    """The HTTP library an official SDK (``openai``, ``anthropic``) is built on, whose
    clients it takes as ``http_client=``: ``httpx2`` (openai>=3, anthropic>=1) or ``httpx``
    (openai 2.x, anthropic 0.x), read off its default client's base classes."""
    bases = {cls.__module__.partition(".")[0] for cls in sdk.DefaultHttpxClient.__mro__}
    if "httpx2" not in bases:
        return httpx
    return _require("httpx2", needed_by=f"{sdk.__name__} {sdk.__version__}", extra="httpx2")


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


class _SDKModelClient:
    client: Any

    async def aclose(self) -> None:
        """Close the SDK client's HTTP connections."""
        await self.client.close()


def _parse_arguments(raw: str, name: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError as exc:
        raise ModelError(f"the model called {name!r} with arguments that are not JSON: {raw!r}", kind="reply") from exc
    if not isinstance(value, dict):
        raise ModelError(f"the model called {name!r} with arguments that are not an object: {raw!r}", kind="reply")
    return value


class AnthropicModelClient(_SDKModelClient):
    """Anthropic Messages over an ``anthropic.AsyncAnthropic`` client."""

    protocol = "anthropic-messages"

    def __init__(self, client: Any, model: str = DEFAULT_MODEL["anthropic-messages"]) -> None:
        self.client = client
        self.model = model

    @staticmethod
    def messages(conversation: Sequence[ConversationItem]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for item in conversation:
            if isinstance(item, UserMessage):
                out.append({"role": "user", "content": item.text})
            elif isinstance(item, AssistantTurn):
                blocks: list[dict[str, Any]] = []
                if item.thinking is not None:
                    blocks.append(
                        {"type": "thinking", "thinking": item.thinking, "signature": item.thinking_signature or ""}
                    )
                if item.text:
                    blocks.append({"type": "text", "text": item.text})
                blocks.extend(
                    {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in item.tool_calls
                )
                out.append({"role": "assistant", "content": blocks})
            else:
                out.append(
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": r.tool_call_id,
                                "content": r.content,
                                "is_error": r.is_error,
                            }
                            for r in item.results
                        ],
                    }
                )
        return out

    async def stream_turn(
        self,
        conversation: Sequence[ConversationItem],
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
        thinking_budget: int | None = None,
        max_tokens: int = 4096,
    ) -> AsyncIterator[StreamEvent]:
        anthropic = sdk_for(self.protocol)

        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": self.messages(conversation),
        }
        if system:
            params["system"] = system
        if tools:
            params["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools
            ]
        if thinking_budget is not None:
            params["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
            params["max_tokens"] = max(max_tokens, thinking_budget + 1)
        try:
            async with self.client.messages.stream(**params) as stream:
                async for event in stream:
                    if event.type == "content_block_delta":
                        if event.delta.type == "thinking_delta":
                            yield ThinkingDelta(event.delta.thinking, event.index)
                        elif event.delta.type == "text_delta":
                            yield TextDelta(event.delta.text, event.index)
                message = await stream.get_final_message()
        except anthropic.APIStatusError as exc:
            # An error event inside a 200 stream surfaces with status 200: it is a stream
            # failure, not an HTTP status.
            mid_stream = exc.status_code == 200
            raise ModelError(
                _anthropic_message(exc),
                status=None if mid_stream else exc.status_code,
                kind="stream" if mid_stream else "http",
            ) from exc
        except anthropic.APIError as exc:
            raise ModelError(str(exc), kind="stream") from exc
        thinking = signature = None
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in message.content:
            if block.type == "thinking":
                thinking, signature = (thinking or "") + block.thinking, block.signature
            elif block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                calls.append(ToolCall(block.id, block.name, dict(block.input)))
        turn = AssistantTurn(
            "".join(texts), tuple(calls), thinking, signature, message.stop_reason or "end_turn", message.id
        )
        yield TurnComplete(turn, message.usage.input_tokens, message.usage.output_tokens)


def _anthropic_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
    return str(getattr(exc, "message", exc))


_OPENAI_STOP = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
}


class OpenAIChatModelClient(_SDKModelClient):
    """OpenAI Chat Completions over an ``openai.AsyncOpenAI`` client."""

    protocol = "openai-chat"

    def __init__(self, client: Any, model: str = DEFAULT_MODEL["openai-chat"]) -> None:
        self.client = client
        self.model = model

    @staticmethod
    def messages(conversation: Sequence[ConversationItem], system: str | None = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        for item in conversation:
            if isinstance(item, UserMessage):
                out.append({"role": "user", "content": item.text})
            elif isinstance(item, AssistantTurn):
                message: dict[str, Any] = {"role": "assistant", "content": item.text or None}
                if item.tool_calls:
                    message["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                        }
                        for c in item.tool_calls
                    ]
                out.append(message)
            else:
                out.extend({"role": "tool", "tool_call_id": r.tool_call_id, "content": r.content} for r in item.results)
        return out

    async def stream_turn(
        self,
        conversation: Sequence[ConversationItem],
        *,
        system: str | None = None,
        tools: Sequence[ToolSpec] = (),
        thinking_budget: int | None = None,
        max_tokens: int = 4096,
    ) -> AsyncIterator[StreamEvent]:
        openai = sdk_for(self.protocol)

        params: dict[str, Any] = {
            "model": self.model,
            "messages": self.messages(conversation, system),
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": max_tokens,
        }
        if tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
                }
                for t in tools
            ]
        thinking: list[str] = []
        texts: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        finish = "stop"
        message_id = None
        usage = (0, 0)
        try:
            stream = await self.client.chat.completions.create(**params)
            async with stream:
                async for chunk in stream:
                    message_id = chunk.id
                    if chunk.usage is not None:
                        usage = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                    for choice in chunk.choices:
                        delta = choice.delta
                        reasoning = getattr(delta, "reasoning_content", None)
                        if reasoning:
                            thinking.append(reasoning)
                            yield ThinkingDelta(reasoning, 0)
                        if delta.content:
                            texts.append(delta.content)
                            yield TextDelta(delta.content, 1 if thinking else 0)
                        for piece in delta.tool_calls or ():
                            call = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
                            call["id"] += piece.id or ""
                            if piece.function is not None:
                                call["name"] += piece.function.name or ""
                                call["arguments"] += piece.function.arguments or ""
                        if choice.finish_reason:
                            finish = choice.finish_reason
        except openai.APIStatusError as exc:
            raise ModelError(_openai_message(exc), status=exc.status_code) from exc
        except openai.APIError as exc:
            raise ModelError(exc.message, kind="stream") from exc
        tool_calls = tuple(
            ToolCall(c["id"], c["name"], _parse_arguments(c["arguments"], c["name"])) for _, c in sorted(calls.items())
        )
        turn = AssistantTurn(
            "".join(texts),
            tool_calls,
            "".join(thinking) if thinking else None,
            None,
            _OPENAI_STOP.get(finish, finish),
            message_id,
        )
        yield TurnComplete(turn, *usage)


def _openai_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    return str(getattr(exc, "message", exc))


def model_client(
    protocol: str = "anthropic-messages",
    *,
    base_url: str | None = None,
    http_client: Any = None,
    model: str | None = None,
    api_key: str = "test",
    max_retries: int = 0,
) -> ModelClient:
    """A ``ModelClient`` for ``protocol``: ``anthropic-messages`` (the default) or ``openai-chat``.

    ``base_url`` is the model server's root (``http://127.0.0.1:PORT``, no ``/v1``);
    without one the SDK decides, as it does for any application: its environment variable
    (``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``), else the provider's API. ``http_client``
    is a client of the SDK's HTTP library (``http_library``) to send through, e.g. one
    whose transport serves requests in process.
    """
    sdk = sdk_for(protocol)
    if sdk.__name__ == "anthropic":
        client = sdk.AsyncAnthropic(
            api_key=api_key, base_url=base_url, http_client=http_client, max_retries=max_retries
        )
        return AnthropicModelClient(client, model or DEFAULT_MODEL["anthropic-messages"])
    openai_url = f"{base_url.rstrip('/')}/v1" if base_url else None
    client = sdk.AsyncOpenAI(api_key=api_key, base_url=openai_url, http_client=http_client, max_retries=max_retries)
    return OpenAIChatModelClient(client, model or DEFAULT_MODEL["openai-chat"])
