"""The streamed Chat Completions reply: ``chat.completion.chunk`` events, made event by
event in batches (``chunk_batches``) or, for a short reply of generated words, whole at
once (``joined_chunks``); the same bytes either way. The choices behind them are in
``mockllm._wire.openai_chat``'s docstring.
"""

from __future__ import annotations

from itertools import chain
from json.encoder import encode_basestring as encode_string
from typing import Any

from mockllm._cutting import argument_batches, text_batches
from mockllm._limits import STREAM_HEAD_EVENTS
from mockllm._plan import ReplyPlan, ToolCallPart, Usage
from mockllm._wire.base import EventBatches, dumps, spaced_deltas, sse_event

__all__ = [
    "ARGUMENT_SLICE",
    "DONE",
    "SYSTEM_FINGERPRINT",
    "chunk_batches",
    "finish_reason",
    "joined_chunks",
    "message_content",
    "usage_fields",
]

SYSTEM_FINGERPRINT = "fp_mockllm"

# Tool-call arguments are streamed in slices of this many characters, cutting through
# JSON tokens as the real API does, so clients must concatenate before parsing.
ARGUMENT_SLICE = 8

_FINISH_REASONS = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "content_filter": "content_filter",
    "refusal": "stop",
}


def finish_reason(stop_reason: str) -> str:
    try:
        return _FINISH_REASONS[stop_reason]
    except KeyError:
        raise ValueError(f"unknown stop_reason {stop_reason!r}; use one of {list(_FINISH_REASONS)}") from None


def message_content(plan: ReplyPlan) -> str | None:
    """The message ``content``: null for a reply made only of tool calls, as OpenAI sends."""
    text = plan.text
    return None if not text and plan.tool_calls else text


def usage_fields(usage: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
    }


DONE = sse_event("[DONE]")
_BATCH_EVENTS = 256


def chunk_batches(plan: ReplyPlan, body: dict[str, Any]) -> EventBatches:
    """The ``chat.completion.chunk`` events of ``plan`` (no ``[DONE]``), in batches."""
    # Every chunk is the same object around a different delta, so the JSON text
    # around the delta is built once and only the delta is encoded per chunk
    # (a 200-word reply is 200 chunks; dumping each whole object dominated).
    frame = _Frame(plan, body)
    head, tail = frame.head, frame.tail

    def event(delta: str) -> bytes:
        return (head + delta + tail).encode()

    # Events gather in ``out``, handed on every few hundred: one batch for a short
    # reply, a few tens of KiB at a time for a long one.
    out = [frame.opening(plan).encode()]
    for key, text in (("reasoning_content", plan.reasoning or ""), ("content", plan.text)):
        before, after = f'{head}{{"{key}":', "}" + tail
        for pieces in text_batches(text, plan):
            out += [(before + encode_string(piece) + after).encode() for piece in pieces]
            if len(out) >= _BATCH_EVENTS:
                yield out
                out = []
    together = plan.stream is not None and plan.stream.id_with_arguments
    for index, call in enumerate(plan.tool_calls):
        batches = iter(argument_batches(call.arguments, ARGUMENT_SLICE, plan))
        first = ""
        if together:  # the first piece rides in the delta that opens the call
            opening = next(batches, [""])
            first, batches = opening[0], chain([opening[1:]], batches)
        out.append(event(_call_delta(index, call, first)))
        for pieces in batches:
            out += [event(_arguments_delta(index, piece)) for piece in pieces]
            if len(out) >= _BATCH_EVENTS:
                yield out
                out = []
    out += [event.encode() for event in frame.closing(plan)]
    yield out


def joined_chunks(plan: ReplyPlan, body: dict[str, Any]) -> bytes | None:
    """The stream of ``chunk_batches`` and ``[DONE]`` joined, made as a few strings
    (``spaced_deltas``) rather than event by event, for a reply of the default shape
    whose texts are single-spaced words and which fits in one write
    (``STREAM_HEAD_EVENTS``); None for any other."""
    if plan.stream is not None or plan.chunk_words != 1:
        return None
    frame = _Frame(plan, body)
    head, tail = frame.head, frame.tail
    parts = [frame.opening(plan)]
    count = 2 + frame.include_usage  # the opening, the finish and the usage chunks
    for key, text in (("reasoning_content", plan.reasoning or ""), ("content", plan.text)):
        if not text:
            continue
        deltas = spaced_deltas(f'{head}{{"{key}":', "}" + tail, text)
        if deltas is None:
            return None
        parts.append(deltas[0])
        count += deltas[1]
    for index, call in enumerate(plan.tool_calls):
        arguments = call.arguments
        count += 1 + -(-len(arguments) // ARGUMENT_SLICE)
        parts.append(head + _call_delta(index, call, "") + tail)
        parts += [
            head + _arguments_delta(index, arguments[i : i + ARGUMENT_SLICE]) + tail
            for i in range(0, len(arguments), ARGUMENT_SLICE)
        ]
    if count + 1 > STREAM_HEAD_EVENTS:  # with [DONE]: a lazy stream, rendered as sent
        return None
    parts += frame.closing(plan)
    return "".join(parts).encode() + DONE


class _Frame:
    """The text around every ``chat.completion.chunk`` delta of one reply, and the
    chunks that open and close its stream."""

    __slots__ = ("base", "head", "include_usage", "tail", "usage_null")

    def __init__(self, plan: ReplyPlan, body: dict[str, Any]) -> None:
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        if plan.stream is not None and plan.stream.usage_chunk:
            include_usage = True
        self.include_usage = include_usage
        self.base = (
            f'data: {{"id":{dumps(f"chatcmpl-{plan.response_id}")},"object":"chat.completion.chunk",'
            f'"created":{plan.created},"model":{dumps(body.get("model"))},'
            f'"system_fingerprint":{dumps(SYSTEM_FINGERPRINT)},'
        )
        self.head = self.base + '"choices":[{"index":0,"delta":'
        self.usage_null = ',"usage":null' if include_usage else ""
        self.tail = ',"logprobs":null,"finish_reason":null}]' + self.usage_null + "}\n\n"

    def opening(self, plan: ReplyPlan) -> str:
        """The first chunk: the role, and an empty ``content`` (null for a reply made
        only of tool calls)."""
        content = message_content(plan)
        delta = dumps({"role": "assistant", "content": "" if content is not None else None, "refusal": None})
        return self.head + delta + self.tail

    def closing(self, plan: ReplyPlan) -> list[str]:
        """The chunk with the finish reason, then the usage chunk if asked for."""
        finish = f',"logprobs":null,"finish_reason":{dumps(finish_reason(plan.stop_reason))}}}]'
        chunks = [self.head + "{}" + finish + self.usage_null + "}\n\n"]
        if self.include_usage:
            chunks.append(self.base + f'"choices":[],"usage":{dumps(usage_fields(plan.usage))}}}\n\n')
        return chunks


def _call_delta(index: int, call: ToolCallPart, arguments: str) -> str:
    """The delta opening tool call ``index``: its id, name and first ``arguments``."""
    opening = {
        "index": index,
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    }
    return dumps({"tool_calls": [opening]})


def _arguments_delta(index: int, piece: str) -> str:
    return f'{{"tool_calls":[{{"index":{index},"function":{{"arguments":{encode_string(piece)}}}}}]}}'
