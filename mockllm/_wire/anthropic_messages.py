"""Anthropic Messages (``POST /v1/messages``), streaming and not.

The stream is what ``anthropic.MessageStream`` accumulates: ``message_start``, a
``ping``, then per content block ``content_block_start`` / ``content_block_delta`` … /
``content_block_stop``, then ``message_delta`` (stop reason, output tokens) and
``message_stop``. Every event carries both its ``event:`` line and a ``type`` field.
A thinking block, when the plan has reasoning, comes first and ends with one
``signature_delta``; tool arguments stream as ``input_json_delta`` slices cut mid-token.
"""

from __future__ import annotations

import base64
import hashlib
import json
from itertools import chain
from json.encoder import encode_basestring as encode_string
from typing import TYPE_CHECKING, Any

from mockllm._conversation import Conversation
from mockllm._cutting import argument_batches
from mockllm._plan import ReplyPlan, TextPart
from mockllm._wire.anthropic_threads import ThreadStore

if TYPE_CHECKING:
    from mockllm._state import State

from mockllm._wire.anthropic_requests import checked_messages, read_messages
from mockllm._wire.deltas import DeltaRun, StreamItems, expanded, joined
from mockllm._wire.encoding import dumps, sse_event
from mockllm._wire.ids import MESSAGE_PREFIX
from mockllm._wire.reading import (
    DeclaredTools,
    ReplyContract,
    ToolChoice,
    reply_contract,
    schema_format,
    tool_choice,
    tools_declared,
)
from mockllm._wire.rendering import EventBatches, StreamRenderer, first_events

__all__ = [
    "AnthropicMessagesCodec",
    "SSEFraming",
    "anthropic_messages",
    "message_start",
    "stream_events",
    "thinking_signature",
]

# Characters per ``input_json_delta``: small enough that any real arguments object
# arrives in several pieces, each cut wherever the slice falls (inside keys, strings,
# numbers), as the real API does. Every prefix of compact JSON parses in the SDK's
# partial mode.
JSON_SLICE = 8

_STOP_REASONS = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "content_filter": "refusal",
}

_TYPE_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

_MESSAGE_BY_TYPE = {
    "invalid_request_error": "Invalid request.",
    "authentication_error": "invalid x-api-key",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "The requested resource could not be found.",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "This request would exceed your rate limit. Please try again later.",
    "api_error": "Internal server error",
    "overloaded_error": "Overloaded",
}


def _error_type(status: int) -> str:
    if status in _TYPE_BY_STATUS:
        return _TYPE_BY_STATUS[status]
    return "api_error" if status >= 500 else "invalid_request_error"


def _error_object(status: int, type: str | None, message: str | None) -> dict[str, Any]:
    kind = type or _error_type(status)
    text = message or _MESSAGE_BY_TYPE.get(kind) or f"Error code: {status}"
    return {"type": "error", "error": {"type": kind, "message": text}}


def _tool_input(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"tool call arguments must be a JSON object, got {arguments!r}") from exc
    if not isinstance(value, dict):
        raise ValueError(f"tool call arguments must be a JSON object, got {arguments!r}")
    return value


def thinking_signature(plan: ReplyPlan) -> str:
    """The signature of the plan's thinking block: the scripted one, or one derived from the reply."""
    if plan.reasoning_signature:
        return plan.reasoning_signature
    # The real API's signatures are opaque base64; clients only need one, stable.
    digest = hashlib.sha256(f"mockllm-thinking:{plan.response_id}".encode()).digest()
    return base64.b64encode(digest).decode()


def _stop_reason(plan: ReplyPlan) -> str:
    return _STOP_REASONS.get(plan.stop_reason, "end_turn")


def _message(
    plan: ReplyPlan, body: dict[str, Any], content: list[dict[str, Any]], stop_reason: str | None, output_tokens: int
) -> dict[str, Any]:
    """A ``Message``: the whole reply, or (no content, no stop reason) the one ``message_start`` opens."""
    return {
        "id": MESSAGE_PREFIX + plan.response_id,
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(plan, output_tokens),
    }


def message_start(plan: ReplyPlan, body: dict[str, Any]) -> str:
    """The ``message_start`` event's JSON: ``{"type": "message_start", "message": ...}``
    of the ``_message`` with no content yet, written out as ``dumps`` writes it (made
    once a stream, it was a tenth of a short stream's rendering)."""
    usage = plan.usage
    return (
        f'{{"type":"message_start","message":{{"id":{dumps(MESSAGE_PREFIX + plan.response_id)},"type":"message",'
        f'"role":"assistant","model":{dumps(body.get("model"))},"content":[],"stop_reason":null,'
        f'"stop_sequence":null,"usage":{{"input_tokens":{max(1, usage.input_tokens)},'
        f'"cache_creation_input_tokens":0,"cache_read_input_tokens":0,'
        f'"output_tokens":{min(1, usage.output_tokens)}}}}}}}'
    )


def _usage(plan: ReplyPlan, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": max(1, plan.usage.input_tokens),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }


def _content_blocks(plan: ReplyPlan) -> list[dict[str, Any]]:
    """The finished content blocks, in stream order."""
    blocks: list[dict[str, Any]] = []
    if plan.reasoning:
        blocks.append({"type": "thinking", "thinking": plan.reasoning, "signature": thinking_signature(plan)})
    for part in plan.parts:
        if isinstance(part, TextPart):
            blocks.append({"type": "text", "text": part.text})
        else:
            blocks.append({"type": "tool_use", "id": part.id, "name": part.name, "input": _tool_input(part.arguments)})
    return blocks


def _event(data: dict[str, Any]) -> bytes:
    return sse_event(data, event=data["type"])


_PING = _event({"type": "ping"})
_THINKING_START = dumps({"type": "thinking", "thinking": "", "signature": ""})
_TEXT_START = dumps({"type": "text", "text": ""})
_MESSAGE_STOP = dumps({"type": "message_stop"})


class SSEFraming:
    """How the stream's events become bytes: SSE events (``_event``'s), with ``ping``s.
    ``mockllm._wire.bedrock_invoke`` frames the same events as event-stream ``chunk``s."""

    ping: tuple[bytes, ...]

    def __init__(self) -> None:
        self.ping = (_PING,)

    def event(self, kind: str, data: str) -> bytes:
        """One whole event: its ``type`` and its JSON."""
        return f"event: {kind}\ndata: {data}\n\n".encode()

    def deltas(self, head: str, pieces: list[str]) -> list[bytes]:
        """One ``content_block_delta`` per piece: its JSON is ``head``, the piece as a
        JSON string, then ``}}``. Every delta is the same event around a different piece,
        so only the piece is encoded per event (dumping each whole object cost four times
        the Chat Completions codec's stream)."""
        prefix = "event: content_block_delta\ndata: " + head
        return [(prefix + encode_string(piece) + "}}\n\n").encode() for piece in pieces]

    def text_deltas(self, head: str, text: str, plan: ReplyPlan) -> StreamItems:
        """``deltas`` of ``text`` as ``plan`` cuts it: one run (``mockllm._wire.deltas``)."""
        return [DeltaRun("event: content_block_delta\ndata: " + head, "}}\n\n", text)]


def _block_events(index: int, block: dict[str, Any], plan: ReplyPlan, framing: SSEFraming) -> StreamItems:
    """start / deltas / stop for one finished block, in batches."""
    # The fixed events' JSON is written out, as the deltas' is (what ``dumps`` gives).
    kind = block["type"]
    if kind == "tool_use":
        start = dumps({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}})
    else:
        start = _THINKING_START if kind == "thinking" else _TEXT_START
    opening = f'{{"type":"content_block_start","index":{index},"content_block":{start}}}'
    yield [framing.event("content_block_start", opening)]
    head = f'{{"type":"content_block_delta","index":{index},"delta":{{"type":'
    if kind == "tool_use":
        head += '"input_json_delta","partial_json":'
        for batch in argument_batches(dumps(block["input"]), JSON_SLICE, plan):
            yield framing.deltas(head, batch)
    else:
        head += '"thinking_delta","thinking":' if kind == "thinking" else '"text_delta","text":'
        yield from framing.text_deltas(head, block[kind], plan)
    last = [framing.event("content_block_stop", f'{{"type":"content_block_stop","index":{index}}}')]
    if kind == "thinking":
        signature = {"type": "signature_delta", "signature": block["signature"]}
        closing = dumps({"type": "content_block_delta", "index": index, "delta": signature})
        last.insert(0, framing.event("content_block_delta", closing))
    yield last


def stream_events(plan: ReplyPlan, body: dict[str, Any], framing: SSEFraming) -> StreamItems:
    """The stream's events, without ``ping_every``'s pings, framed by ``framing``
    (``mockllm._wire.deltas.expanded`` makes its runs' events)."""
    yield [framing.event("message_start", message_start(plan, body)), *framing.ping]
    for index, block in enumerate(_content_blocks(plan)):
        yield from _block_events(index, block, plan, framing)
    usage: dict[str, int] = {"output_tokens": plan.usage.output_tokens}
    if plan.stream is not None and plan.stream.usage_chunk:
        usage = _usage(plan, plan.usage.output_tokens)  # the whole usage, as newer API versions send
    delta = {"stop_reason": _stop_reason(plan), "stop_sequence": None}
    yield [
        framing.event("message_delta", dumps({"type": "message_delta", "delta": delta, "usage": usage})),
        framing.event("message_stop", _MESSAGE_STOP),
    ]


_SSE = SSEFraming()


def _with_pings(batches: EventBatches, every: int) -> EventBatches:
    """``batches`` with a ``ping`` after every ``every`` events (pings included in the
    count are only the stream's own), before the terminal ``message_stop``."""
    count = 0
    for batch in batches:
        out: list[bytes] = []
        for event in batch:
            out.append(event)
            if event is _PING:
                continue
            count += 1
            if count % every == 0 and not event.startswith(b"event: message_stop"):
                out.append(_PING)
        yield out


class AnthropicMessagesCodec(StreamRenderer):
    """The Anthropic Messages protocol, as the ``anthropic`` SDK reads it."""

    name = "anthropic-messages"
    aliases: tuple[str, ...] = ("anthropic", "messages")
    route = "/messages"
    request_id_header = "request-id"
    tool_call_prefix = "toolu"
    prompt_fields: tuple[str, ...] = ("system", "messages", "tools")
    shape_knobs: tuple[str, ...] = ("arguments", "usage_chunk", "ping_every", "keep_alive_every")
    """The protocol-specific stream-shape knobs this codec honours (``mockllm._shapes``)."""

    def held_conversations(self, state: State) -> ThreadStore:
        """Message threads (``"thread": {"type": "continue", …}``), as the SDK's tool
        runner uses them: ``mockllm._wire.anthropic_threads``."""
        return ThreadStore(state=state)

    def read(self, body: Any) -> Conversation:
        """The neutral conversation: ``system``, then the request's ``messages``."""
        return read_messages(body)

    def read_request(self, body: Any, *, lenient: bool) -> Conversation:
        """Reject what the real API answers with a 400 ``invalid_request_error``; else
        ``read(body)``."""
        return checked_messages(body, lenient=lenient, counting=False)

    def read_count_request(self, body: Any, *, lenient: bool) -> Conversation:
        """The same checks for ``POST /v1/messages/count_tokens``, which takes no
        ``max_tokens``."""
        return checked_messages(body, lenient=lenient, counting=True)

    def wants_stream(self, body: dict[str, Any]) -> bool:
        return body.get("stream") is True

    def declared_tools(self, body: dict[str, Any]) -> DeclaredTools:
        """``tools[]`` by ``name``, with ``input_schema`` (server tools have none)."""
        return tools_declared(body.get("tools"), "input_schema")

    def tool_choice(self, body: dict[str, Any]) -> ToolChoice:
        """``tool_choice``: ``{"type": "none"}``, ``{"type": "tool", "name": ...}``, and
        ``disable_parallel_tool_use``."""
        value = body.get("tool_choice")
        if not isinstance(value, dict):
            return tool_choice(None, "tool_choice", value)
        name = value.get("name")
        allowed = {"none": frozenset(), "tool": frozenset({name}) if isinstance(name, str) else None}
        return tool_choice(
            allowed.get(str(value.get("type"))),
            "tool_choice",
            value,
            parallel=value.get("disable_parallel_tool_use") is not True,
            parallel_said="tool_choice.disable_parallel_tool_use=true",
            required=value.get("type") in ("any", "tool"),
        )

    def reply_contract(self, body: dict[str, Any]) -> ReplyContract:
        """``max_tokens``, and structured outputs: ``output_config.format`` (the beta's
        ``output_format``)."""
        config, found = body.get("output_config"), None
        if isinstance(config, dict) and config.get("format") is not None:
            found = schema_format(config["format"], "output_config.format")
        elif body.get("output_format") is not None:
            found = schema_format(body["output_format"], "output_format")
        return reply_contract(body.get("max_tokens"), "max_tokens", found)

    def render_json(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes:
        """The non-streaming ``Message``."""
        message = _message(plan, body, _content_blocks(plan), _stop_reason(plan), plan.usage.output_tokens)
        return dumps(message).encode()

    def render_stream(self, plan: ReplyPlan, body: dict[str, Any]) -> EventBatches:
        """The SSE stream; cut after ``plan.error.after_chunks`` events by an error event."""
        error = plan.error
        if error is None:
            return self._events(plan, body)
        # An error with no cut point fails before the first event.
        kept = error.after_chunks or 0
        return chain(
            first_events(self._events(plan, body), kept),
            [[self.render_stream_error(error.status, error.type, error.message, kept)]],
        )

    def render_stream_error(self, status: int, type: str | None, message: str | None, sequence: int) -> bytes:
        """``event: error`` carrying the error object of ``render_error``."""
        return _event(_error_object(status, type, message))

    def render_joined(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes | None:
        """``render_stream``'s bytes made at once (``mockllm._wire.deltas.joined``)."""
        return joined(stream_events(plan, body, _SSE), plan)

    def _events(self, plan: ReplyPlan, body: dict[str, Any]) -> EventBatches:
        events = expanded(stream_events(plan, body, _SSE), plan)
        shape = plan.stream
        if shape is not None and shape.ping_every:
            return _with_pings(events, shape.ping_every)
        return events

    def render_error(self, status: int, type: str | None, message: str | None, param: str | None = None) -> bytes:
        """``{"type":"error","error":{"type","message"}}``; Anthropic has no ``param``."""
        return dumps(_error_object(status, type, message)).encode()


anthropic_messages = AnthropicMessagesCodec()
