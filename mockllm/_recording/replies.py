"""What a recorded reply said, whatever its protocol: text, reasoning, tool calls, error.

``read_reply`` reads a recorded response — a JSON body or a stream's events — of OpenAI
Chat Completions, Anthropic Messages or OpenAI Responses into a ``RecordedTurn``: the
neutral content of one assistant turn. ``scenario from-recording`` turns it into an
instruction; the importers read other tools' cassettes with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mockllm._recording.format import ExchangeResponse

__all__ = ["RecordedError", "RecordedTurn", "read_reply"]


@dataclass
class RecordedError:
    status: int
    type: str | None
    message: str | None
    after_events: int | None = None
    """For an error inside a stream: how many events came before it."""


@dataclass
class RecordedTurn:
    reasoning: str = ""
    text: str = ""
    tool_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    """(id, name, arguments) of each tool call, in order."""
    error: RecordedError | None = None


def _arguments(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {"_raw": text}
    return value if isinstance(value, dict) else {"_value": value}


def _error_of(status: int, body: Any, after: int | None = None) -> RecordedError:
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        error = body if isinstance(body, dict) else {}
    message = error.get("message") if isinstance(error.get("message"), str) else None
    kind = error.get("type") if isinstance(error.get("type"), str) else None
    return RecordedError(status, kind, message, after)


def read_reply(protocol: str | None, response: ExchangeResponse) -> RecordedTurn:
    """The turn ``response`` holds (its status >= 400: the error alone)."""
    if response.status >= 400:
        return RecordedTurn(error=_error_of(response.status, response.body or response.body_text))
    if response.events is not None:
        events = [(e.event, e.data) for e in response.events if isinstance(e.data, dict)]
        readers = {"anthropic-messages": _anthropic_stream, "openai-responses": _responses_stream}
        return readers.get(protocol or "", _chat_stream)(events)
    body = response.body if isinstance(response.body, dict) else {}
    readers_json = {"anthropic-messages": _anthropic_json, "openai-responses": _responses_json}
    return readers_json.get(protocol or "", _chat_json)(body)


def _chat_json(body: dict[str, Any]) -> RecordedTurn:
    turn = RecordedTurn()
    for choice in body.get("choices", [])[:1]:
        message = choice.get("message") or {}
        turn.text = message.get("content") or ""
        turn.reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            turn.tool_calls.append(
                (call.get("id", ""), function.get("name", ""), _arguments(function.get("arguments")))
            )
    return turn


def _chat_stream(events: list[tuple[str | None, Any]]) -> RecordedTurn:
    turn = RecordedTurn()
    calls: dict[int, list[str]] = {}
    for i, (_, data) in enumerate(events):
        if "error" in data:
            turn.error = _error_of(500, data, after=i)
            break
        for choice in data.get("choices") or []:
            delta = choice.get("delta") or {}
            turn.text += delta.get("content") or ""
            turn.reasoning += delta.get("reasoning_content") or delta.get("reasoning") or ""
            for piece in delta.get("tool_calls") or []:
                entry = calls.setdefault(piece.get("index", 0), ["", "", ""])
                function = piece.get("function") or {}
                entry[0] = entry[0] or piece.get("id") or ""
                entry[1] += function.get("name") or ""
                entry[2] += function.get("arguments") or ""
    turn.tool_calls = [(cid, name, _arguments(args)) for _, (cid, name, args) in sorted(calls.items())]
    return turn


def _anthropic_json(body: dict[str, Any]) -> RecordedTurn:
    turn = RecordedTurn()
    for block in body.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            turn.text += block.get("text", "")
        elif kind == "thinking":
            turn.reasoning += block.get("thinking", "")
        elif kind == "tool_use":
            turn.tool_calls.append((block.get("id", ""), block.get("name", ""), _arguments(block.get("input"))))
    return turn


def _anthropic_stream(events: list[tuple[str | None, Any]]) -> RecordedTurn:
    blocks: dict[int, dict[str, Any]] = {}
    turn = RecordedTurn()
    for i, (name, data) in enumerate(events):
        kind = data.get("type") or name
        if kind == "error":
            turn.error = _error_of(529 if "overloaded" in json.dumps(data) else 500, data, after=i)
            break
        if kind == "content_block_start":
            blocks[data.get("index", 0)] = {**data.get("content_block", {}), "_json": ""}
        elif kind == "content_block_delta":
            block, delta = blocks.setdefault(data.get("index", 0), {"_json": ""}), data.get("delta", {})
            block["text"] = block.get("text", "") + delta.get("text", "")
            block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
            block["_json"] += delta.get("partial_json", "")
    for _, block in sorted(blocks.items()):
        if block.get("type") == "text":
            turn.text += block.get("text", "")
        elif block.get("type") == "thinking":
            turn.reasoning += block.get("thinking", "")
        elif block.get("type") == "tool_use":
            arguments = _arguments(block["_json"]) if block["_json"] else _arguments(block.get("input"))
            turn.tool_calls.append((block.get("id", ""), block.get("name", ""), arguments))
    return turn


def _responses_json(body: dict[str, Any]) -> RecordedTurn:
    turn = RecordedTurn()
    for item in body.get("output") or []:
        if item.get("type") == "message":
            turn.text += "".join(p.get("text", "") for p in item.get("content") or [] if p.get("type") == "output_text")
        elif item.get("type") == "reasoning":
            parts = (item.get("summary") or []) + (item.get("content") or [])
            turn.reasoning += "".join(p.get("text", "") for p in parts)
        elif item.get("type") == "function_call":
            turn.tool_calls.append((item.get("call_id", ""), item.get("name", ""), _arguments(item.get("arguments"))))
    return turn


def _responses_stream(events: list[tuple[str | None, Any]]) -> RecordedTurn:
    for i, (name, data) in enumerate(events):
        kind = data.get("type") or name
        if kind in ("response.completed", "response.incomplete"):
            return _responses_json(data.get("response") or {})
        if kind in ("error", "response.failed"):
            return RecordedTurn(error=_error_of(500, data.get("response", data), after=i))
    turn = RecordedTurn()
    for _, data in events:
        if data.get("type") == "response.output_text.delta":
            turn.text += data.get("delta", "")
    return turn
