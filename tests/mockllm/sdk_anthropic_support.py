"""The Anthropic Messages adapter of the SDK tests: a turn is the message's content
blocks, read from the message, rebuilt from raw events by index (as an agent does) or
from the stream helper's final message; ``tool_result`` blocks as results.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import anthropic

from tests.mockllm.sdk_support import (
    TOOL_PROPERTIES,
    Call,
    ErrorView,
    Results,
    SDKAdapter,
    Turn,
    Usage,
    sdk_call,
    tool_parameters,
)

MODEL = "claude-mock-1"
MAX_TOKENS = 2048
THINKING = {"type": "enabled", "budget_tokens": 1024}
TOOLS = [
    {"name": name, "description": f"The {name} tool.", "input_schema": tool_parameters(props, strict=False)}
    for name, props in TOOL_PROPERTIES.items()
]
_PART = {"thinking": "reasoning", "text": "text", "tool_use": "tool"}


def field_of(block: Any, key: str) -> Any:
    """``key`` of a content block, an SDK object or a dict rebuilt from events."""
    return block[key] if isinstance(block, dict) else getattr(block, key)


@dataclass
class MessagesTurn(Turn):
    """A Turn that keeps the content blocks as the API would take them back."""

    blocks: list[Any] = field(default_factory=list)

    def kinds(self) -> list[str]:
        return [field_of(b, "type") for b in self.blocks]

    def of_kind(self, kind: str) -> list[Any]:
        return [b for b in self.blocks if field_of(b, "type") == kind]


def _turn(blocks: list[Any], stop_reason: str, usage: Usage, raw: Any, events: list[Any]) -> MessagesTurn:
    def joined(kind: str, key: str) -> str | None:
        found = [field_of(b, key) for b in blocks if field_of(b, "type") == kind]
        return "".join(found) if found else None

    calls = [
        Call(field_of(b, "id"), field_of(b, "name"), field_of(b, "input"), json.dumps(field_of(b, "input")))
        for b in blocks
        if field_of(b, "type") == "tool_use"
    ]
    return MessagesTurn(
        text=joined("text", "text"),
        calls=calls,
        reasoning=joined("thinking", "thinking"),
        parts=[_PART[field_of(b, "type")] for b in blocks],
        stop=stop_reason,
        native_stop=stop_reason,
        usage=usage,
        raw=raw,
        events=events,
        blocks=blocks,
    )


def _from_events(events: list[Any]) -> MessagesTurn:
    """What an agent does with raw events: build the content blocks by index."""
    blocks: dict[int, dict[str, Any]] = {}
    partial_json: dict[int, str] = {}
    stop_reason: str | None = None
    tokens = {"input": 0, "output": 0}
    for event in events:
        if event.type == "message_start":
            tokens = {"input": event.message.usage.input_tokens, "output": event.message.usage.output_tokens}
        elif event.type == "content_block_start":
            block = blocks[event.index] = event.content_block.model_dump(exclude_none=True)
            if block["type"] == "tool_use":
                partial_json[event.index] = ""
        elif event.type == "content_block_delta":
            block, delta = blocks[event.index], event.delta
            if delta.type == "text_delta":
                block["text"] += delta.text
            elif delta.type == "thinking_delta":
                block["thinking"] += delta.thinking
            elif delta.type == "signature_delta":
                block["signature"] = delta.signature
            elif delta.type == "input_json_delta":
                partial_json[event.index] += delta.partial_json
        elif event.type == "content_block_stop":
            if event.index in partial_json:
                text = partial_json.pop(event.index)
                blocks[event.index]["input"] = json.loads(text) if text else {}
        elif event.type == "message_delta":
            stop_reason = event.delta.stop_reason
            tokens["output"] = event.usage.output_tokens
    assert stop_reason is not None, "the stream ended without a message_delta"
    assert events[-1].type == "message_stop"
    return _turn(
        [blocks[i] for i in sorted(blocks)], stop_reason, Usage(tokens["input"], tokens["output"]), None, events
    )


class MessagesSDK(SDKAdapter):
    protocol = "anthropic-messages"
    sdk = "anthropic"
    model = MODEL
    call_id_prefix = "toolu_"
    tools = TOOLS
    reasoning_options = {"thinking": THINKING}
    preamble_events = 3  # message_start, ping, content_block_start
    overloaded_status = 529
    api_error = anthropic.APIError
    status_errors = {
        400: (anthropic.BadRequestError, "invalid_request_error", None),
        429: (anthropic.RateLimitError, "rate_limit_error", None),
        500: (anthropic.InternalServerError, "api_error", None),
        529: (anthropic.OverloadedError, "overloaded_error", None),
    }
    mid_stream_status = 200  # the HTTP status of the stream that failed

    def start(self, prompt: str, *, system: str | None = None) -> tuple[list[Any], dict[str, Any]]:
        return [{"role": "user", "content": prompt}], ({"system": system} if system is not None else {})

    async def turn(
        self, client: Any, mode: str, history: list[Any], *, events: list[Any] | None = None, **kwargs: Any
    ) -> MessagesTurn:
        events = [] if events is None else events
        kwargs.setdefault("model", MODEL)
        kwargs.setdefault("max_tokens", MAX_TOKENS)
        message = await sdk_call(client, client.messages, mode, "get_final_message", events, messages=history, **kwargs)
        if mode == "sse":
            return _from_events(events)
        usage = Usage(message.usage.input_tokens, message.usage.output_tokens)
        return _turn(list(message.content), message.stop_reason, usage, message, events)

    def append(self, history: list[Any], turn: Turn, results: Results = ()) -> None:
        assert isinstance(turn, MessagesTurn)
        # The content as returned, thinking blocks (with their signatures) included.
        history.append({"role": "assistant", "content": turn.blocks})
        answers = [{"type": "tool_result", "tool_use_id": call_id, "content": output} for call_id, output in results]
        if answers:
            history.append({"role": "user", "content": answers})

    def history_kinds(self, history: list[Any]) -> list[str]:
        return [m["role"] for m in history]

    def text_deltas(self, events: list[Any], mode: str) -> list[str]:
        if mode == "helper":
            return [e.text for e in events if e.type == "text"]
        return [e.delta.text for e in events if e.type == "content_block_delta" and e.delta.type == "text_delta"]

    def reasoning_deltas(self, events: list[Any], mode: str) -> list[str]:
        if mode == "helper":
            return [e.thinking for e in events if e.type == "thinking"]
        return [
            e.delta.thinking for e in events if e.type == "content_block_delta" and e.delta.type == "thinking_delta"
        ]

    def streamed_arguments(self, turn: Turn) -> list[tuple[int, str, Any]]:
        return [
            (e.index, e.content_block.name, e.content_block.input)
            for e in turn.events
            if e.type == "content_block_stop" and e.content_block.type == "tool_use"
        ]

    def comparable(self, turn: Turn) -> dict[str, Any]:
        # input_tokens is estimated from the request body, which "stream": true lengthens.
        return turn.raw.model_dump(exclude={"usage": {"input_tokens"}}, exclude_none=True)

    def error_view(self, error: Exception) -> ErrorView:
        assert isinstance(error, anthropic.APIStatusError), error
        body = error.body
        assert isinstance(body, dict) and body["type"] == "error", body
        return ErrorView(body["error"]["type"], body["error"]["message"], request_id=error.request_id)


MESSAGES = MessagesSDK()
