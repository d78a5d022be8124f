"""The streamed Chat Completions reply: ``chat.completion.chunk`` events
(``chunk_items``: made event by event, or a short stream whole at once, by
``mockllm._wire.deltas``; the same bytes either way). The choices behind them are in
``mockllm._wire.openai_chat``'s docstring.
"""

from __future__ import annotations

from itertools import chain
from json.encoder import encode_basestring as encode_string
from typing import Any

from mockllm._cutting import argument_batches
from mockllm._plan import ReplyPlan, ToolCallPart, Usage
from mockllm._wire.deltas import DeltaRun, StreamItems
from mockllm._wire.encoding import dumps, sse_event
from mockllm._wire.ids import CHAT_COMPLETION_PREFIX

__all__ = [
    "ARGUMENT_SLICE",
    "DONE",
    "SYSTEM_FINGERPRINT",
    "chunk_items",
    "finish_reason",
    "message_content",
    "usage_fields",
    "with_finish",
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
_FINGERPRINT_JSON = dumps(SYSTEM_FINGERPRINT)
# The opening chunk's delta (its ``content`` "", or null for a reply made only of tool
# calls) and the closing chunk's finish, by stop reason: made once, not once a reply.
_OPENING_DELTAS = {
    has_content: dumps({"role": "assistant", "content": "" if has_content else None, "refusal": None})
    for has_content in (True, False)
}
_OPENING_REFUSAL = dumps({"role": "assistant", "content": None, "refusal": ""})
_FINISHES = {
    reason: f',"logprobs":null,"finish_reason":{dumps(finish)}}}]' for reason, finish in _FINISH_REASONS.items()
}


_FINISH_FIELD = b',"logprobs":null,"finish_reason":'


def with_finish(delta_chunk: bytes, finishing_chunk: bytes) -> bytes:
    """``delta_chunk`` carrying ``finishing_chunk``'s ``finish_reason``, as vLLM, Groq
    and other Chat servers send a stream's last text or arguments piece (the stream
    shape's ``finish_with_last_delta``): the text after the field is the frame's, the
    same in both but for the reason."""
    return delta_chunk[: delta_chunk.rindex(_FINISH_FIELD)] + finishing_chunk[finishing_chunk.rindex(_FINISH_FIELD) :]


def chunk_items(plan: ReplyPlan, body: dict[str, Any]) -> StreamItems:
    """The ``chat.completion.chunk`` events of ``plan`` (no ``[DONE]``): batches, and
    its texts as runs of deltas (``mockllm._wire.deltas``)."""
    # Every chunk is the same object around a different delta, so the JSON text
    # around the delta is built once and only the delta is encoded per chunk
    # (a 200-word reply is 200 chunks; dumping each whole object dominated).
    frame = _Frame(plan, body)
    head, tail = frame.head, frame.tail

    def event(delta: str) -> bytes:
        return (head + delta + tail).encode()

    yield [frame.opening(plan).encode()]
    yield DeltaRun(head + '{"reasoning_content":', "}" + tail, plan.reasoning or "")
    said = "refusal" if plan.stop_reason == "refusal" else "content"
    yield DeltaRun(head + f'{{"{said}":', "}" + tail, plan.text)
    together = plan.stream is not None and plan.stream.id_with_arguments
    for index, call in enumerate(plan.tool_calls):
        batches = iter(argument_batches(call.arguments, ARGUMENT_SLICE, plan))
        first = ""
        if together:  # the first piece rides in the delta that opens the call
            opening = next(batches, [""])
            first, batches = opening[0], chain([opening[1:]], batches)
        yield [event(_call_delta(index, call, first))]
        for pieces in batches:
            yield [event(_arguments_delta(index, piece)) for piece in pieces]
    yield [event.encode() for event in frame.closing(plan)]


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
            f'data: {{"id":{dumps(CHAT_COMPLETION_PREFIX + plan.response_id)},"object":"chat.completion.chunk",'
            f'"created":{plan.created},"model":{dumps(body.get("model"))},'
            f'"system_fingerprint":{_FINGERPRINT_JSON},'
        )
        self.head = self.base + '"choices":[{"index":0,"delta":'
        self.usage_null = ',"usage":null' if include_usage else ""
        self.tail = ',"logprobs":null,"finish_reason":null}]' + self.usage_null + "}\n\n"

    def opening(self, plan: ReplyPlan) -> str:
        """The first chunk: the role, and an empty ``content`` (null for a reply made
        only of tool calls)."""
        if plan.stop_reason == "refusal" and plan.text:
            return self.head + _OPENING_REFUSAL + self.tail
        return self.head + _OPENING_DELTAS[message_content(plan) is not None] + self.tail

    def closing(self, plan: ReplyPlan) -> list[str]:
        """The chunk with the finish reason, then the usage chunk if asked for."""
        reason = plan.stop_reason
        # An unknown stop reason: ``finish_reason`` raises its ValueError, as before.
        finish = _FINISHES[reason] if reason in _FINISHES else finish_reason(reason)
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
