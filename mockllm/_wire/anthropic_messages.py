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
from typing import Any

from mockllm._conversation import Conversation, Row, text_of
from mockllm._cutting import argument_batches, text_batches
from mockllm._generation import TOOL_CALL_ID
from mockllm._plan import ReplyPlan, TextPart
from mockllm._wire.base import (
    DeclaredTools,
    EventBatches,
    RequestRejected,
    StreamRenderer,
    dumps,
    first_events,
    sse_event,
    tools_declared,
)
from mockllm._wire.parameter_types import Kind, wrong_type

__all__ = ["AnthropicMessagesCodec", "anthropic_messages", "thinking_signature"]

# Characters per ``input_json_delta``: small enough that any real arguments object
# arrives in several pieces, each cut wherever the slice falls (inside keys, strings,
# numbers), as the real API does. Every prefix of compact JSON parses in the SDK's
# partial mode.
JSON_SLICE = 8

THINKING_MIN_BUDGET = 1024

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

# The parameters whose type the API checks (``max_tokens`` may not be null), and its words.
_TYPES: dict[str, Kind] = {"max_tokens": "integer", "stream": "boolean", "temperature": "decimal", "top_p": "decimal"}
_TYPE_WORDS = {"boolean": "boolean", "integer": "integer", "decimal": "number"}
_BUDGET_ABOVE_MAX_TOKENS = (
    "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
    "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
    "#max-tokens-and-context-window-size"
)


def _error_type(status: int) -> str:
    if status in _TYPE_BY_STATUS:
        return _TYPE_BY_STATUS[status]
    return "api_error" if status >= 500 else "invalid_request_error"


def _error_object(status: int, type: str | None, message: str | None) -> dict[str, Any]:
    kind = type or _error_type(status)
    text = message or _MESSAGE_BY_TYPE.get(kind) or f"Error code: {status}"
    return {"type": "error", "error": {"type": kind, "message": text}}


def _reject(message: str) -> RequestRejected:
    return RequestRejected(message, status=400, type="invalid_request_error")


def _read_message(position: int, message: dict[str, Any], out: list[Row]) -> None:
    """Append the neutral reading of one request message to ``out``.

    A user message's ``tool_result`` blocks become a tool message; its text (or, with no
    results, the message itself) a user message after it, at the same position.
    """
    role = message.get("role")
    content = message.get("content")
    if role == "assistant":
        calls = (
            tuple([str(b.get("id")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"])
            if isinstance(content, list)
            else ()
        )
        out.append(("assistant", "", calls, (), position))
    elif role == "user":
        if isinstance(content, str):
            out.append(("user", content, (), (), position))
            return
        results: list[str] = []
        has_text = False
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    kind = block.get("type")
                    if kind == "tool_result":
                        results.append(str(block.get("tool_use_id")))
                    elif kind == "text":
                        has_text = True
        if results:
            out.append(("tool", "", (), tuple(results), position))
        if has_text or not results:
            out.append(("user", text_of(content, ("text",)), (), (), position))


def _pairing_rejection(conversation: Conversation, messages: list[Any]) -> RequestRejected | None:
    """The real API's rule: results answer the tool uses of the message just before."""
    rows = conversation.rows
    calls_at = {index: calls for role, _, calls, _, index in rows if role == "assistant"}
    results_at = {index: results for role, _, _, results, index in rows if role == "tool"}
    for role, _, calls, results, index in rows:
        if index is None:
            continue
        if role == "assistant" and calls:
            answered = results_at.get(index + 1, ())
            missing = [call_id for call_id in calls if call_id not in answered]
            if missing:
                return _reject(
                    f"messages.{index}: `tool_use` ids were found without `tool_result` "
                    f"blocks immediately after: {', '.join(missing)}. Each `tool_use` block "
                    "must have a corresponding `tool_result` block in the next message."
                )
        elif role == "tool":
            issued = calls_at.get(index - 1, ())
            for call_id in results:
                if call_id not in issued:
                    block = next(
                        i
                        for i, b in enumerate(messages[index]["content"])
                        if isinstance(b, dict)
                        and b.get("type") == "tool_result"
                        and str(b.get("tool_use_id")) == call_id
                    )
                    return _reject(
                        f"messages.{index}.content.{block}: unexpected `tool_use_id` "
                        f"found in `tool_result` blocks: {call_id}. Each `tool_result` block "
                        "must have a corresponding `tool_use` block in the previous message."
                    )
    return None


_THINKING_FIRST = (
    "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
    "include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. "
    "Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)


def _thinking_rejection(body: dict[str, Any], messages: list[Any]) -> RequestRejected | None:
    """With thinking enabled, the final assistant message, when it made tool calls, must
    start with its thinking block (the client must send it back), as the real API checks.

    A message whose tool calls all carry mock-made ids is a reply of the mock's own: the
    mock sends a thinking block only where the script gives reasoning, so it does not
    hold a missing one against the client.
    """
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return None
    final = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"), None)
    if final is None:
        return None
    content = messages[final].get("content")
    if not isinstance(content, list) or not content:
        return None
    kinds = [b.get("type") if isinstance(b, dict) else None for b in content]
    if "tool_use" not in kinds or kinds[0] in ("thinking", "redacted_thinking"):
        return None
    ids = [str(b.get("id")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
    if all(TOOL_CALL_ID.search(call_id) for call_id in ids):
        return None
    return _reject(
        f"messages.{final}.content.0.type: Expected `thinking` or `redacted_thinking`, "
        f"but found `{kinds[0]}`. {_THINKING_FIRST}"
    )


def _check_thinking(thinking: Any, max_tokens: int | None) -> None:
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return
    budget = thinking.get("budget_tokens")
    if budget is None:
        raise _reject("thinking.enabled.budget_tokens: Field required")
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise _reject("thinking.enabled.budget_tokens: Input should be a valid integer")
    if budget < THINKING_MIN_BUDGET:
        raise _reject(f"thinking.enabled.budget_tokens: Input should be greater than or equal to {THINKING_MIN_BUDGET}")
    if max_tokens is not None and budget >= max_tokens:
        raise _reject(_BUDGET_ABOVE_MAX_TOKENS)


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
        "id": f"msg_{plan.response_id}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": _usage(plan, output_tokens),
    }


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


def _block_events(index: int, block: dict[str, Any], plan: ReplyPlan) -> EventBatches:
    """start / deltas / stop for one finished block, in batches."""
    start: dict[str, Any]
    if block["type"] == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        kind, field, pieces = "thinking_delta", "thinking", text_batches(block["thinking"], plan)
    elif block["type"] == "text":
        start = {"type": "text", "text": ""}
        kind, field, pieces = "text_delta", "text", text_batches(block["text"], plan)
    else:
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        kind, field, pieces = (
            "input_json_delta",
            "partial_json",
            argument_batches(dumps(block["input"]), JSON_SLICE, plan),
        )
    yield [_event({"type": "content_block_start", "index": index, "content_block": start})]
    for batch in pieces:
        yield [
            _event({"type": "content_block_delta", "index": index, "delta": {"type": kind, field: piece}})
            for piece in batch
        ]
    last = [_event({"type": "content_block_stop", "index": index})]
    if block["type"] == "thinking":
        signature = {"type": "signature_delta", "signature": block["signature"]}
        last.insert(0, _event({"type": "content_block_delta", "index": index, "delta": signature}))
    yield last


def _event(data: dict[str, Any]) -> bytes:
    return sse_event(data, event=data["type"])


_PING = _event({"type": "ping"})


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

    def read(self, body: Any) -> Conversation:
        """The neutral conversation: ``system``, then the request's ``messages``."""
        if not isinstance(body, dict):
            return Conversation(())
        out: list[Row] = []
        if body.get("system"):
            out.append(("system", "", (), (), None))
        messages = body.get("messages")
        if isinstance(messages, list):
            for position, message in enumerate(messages):
                if isinstance(message, dict):
                    _read_message(position, message, out)
        return Conversation(tuple(out))

    def read_request(self, body: Any, *, lenient: bool) -> Conversation:
        """Reject what the real API answers with a 400 ``invalid_request_error``; else
        ``read(body)``."""
        return self._checked(body, lenient=lenient, counting=False)

    def read_count_request(self, body: Any, *, lenient: bool) -> Conversation:
        """The same checks for ``POST /v1/messages/count_tokens``, which takes no
        ``max_tokens``."""
        return self._checked(body, lenient=lenient, counting=True)

    def _checked(self, body: Any, *, lenient: bool, counting: bool) -> Conversation:
        if not isinstance(body, dict):
            raise _reject("Input should be a valid dictionary or object to extract fields from")
        if "model" not in body:
            raise _reject("model: Field required")
        if not isinstance(body["model"], str):
            raise _reject("model: Input should be a valid string")
        max_tokens = body.get("max_tokens")
        if not counting:
            if "max_tokens" not in body:
                raise _reject("max_tokens: Field required")
            wrong = wrong_type({**body, "max_tokens": max_tokens if max_tokens is not None else ""}, _TYPES)
            if wrong is not None:
                raise _reject(f"{wrong[0]}: Input should be a valid {_TYPE_WORDS[wrong[1]]}")
        if "messages" not in body:
            raise _reject("messages: Field required")
        messages = body["messages"]
        if not isinstance(messages, list):
            raise _reject("messages: Input should be a valid list")
        for index, message in enumerate(messages):
            if not isinstance(message, dict):
                raise _reject(f"messages.{index}: Input should be a valid dictionary")
            if message.get("role") not in ("user", "assistant"):
                raise _reject(f"messages.{index}.role: Input should be 'user' or 'assistant'")
        _check_thinking(body.get("thinking"), None if counting else max_tokens)
        conversation = self.read(body)
        if not lenient:
            rejection = _pairing_rejection(conversation, messages) or _thinking_rejection(body, messages)
            if rejection is not None:
                raise rejection
        return conversation

    def wants_stream(self, body: dict[str, Any]) -> bool:
        return body.get("stream") is True

    def declared_tools(self, body: dict[str, Any]) -> DeclaredTools:
        """``tools[]`` by ``name``, with ``input_schema`` (server tools have none)."""
        return tools_declared(body.get("tools"), "input_schema")

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

    def _events(self, plan: ReplyPlan, body: dict[str, Any]) -> EventBatches:
        shape = plan.stream
        if shape is not None and shape.ping_every:
            return _with_pings(self._shaped_events(plan, body), shape.ping_every)
        return self._shaped_events(plan, body)

    def _shaped_events(self, plan: ReplyPlan, body: dict[str, Any]) -> EventBatches:
        start = _message(plan, body, [], None, min(1, plan.usage.output_tokens))
        yield [_event({"type": "message_start", "message": start}), _PING]
        for index, block in enumerate(_content_blocks(plan)):
            yield from _block_events(index, block, plan)
        usage: dict[str, int] = {"output_tokens": plan.usage.output_tokens}
        if plan.stream is not None and plan.stream.usage_chunk:
            usage = _usage(plan, plan.usage.output_tokens)  # the whole usage, as newer API versions send
        yield [
            _event(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": _stop_reason(plan), "stop_sequence": None},
                    "usage": usage,
                }
            ),
            _event({"type": "message_stop"}),
        ]

    def render_error(self, status: int, type: str | None, message: str | None, param: str | None = None) -> bytes:
        """``{"type":"error","error":{"type","message"}}``; Anthropic has no ``param``."""
        return dumps(_error_object(status, type, message)).encode()


anthropic_messages = AnthropicMessagesCodec()
