"""The Chat Completions adapter of the SDK tests: a ``Turn`` read from a completion, from
raw chunks (as an agent loop concatenates them) or from the stream helper's final
completion; role=tool messages as tool results.
"""

from __future__ import annotations

import json
from typing import Any

from tests.mockllm.sdk_support import (
    TOOL_PROPERTIES,
    Call,
    OpenAIAdapter,
    Results,
    Turn,
    Usage,
    sdk_call,
    tool_parameters,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"The {name} tool.",
            "parameters": tool_parameters(props, strict=True),
            "strict": True,
        },
    }
    for name, props in TOOL_PROPERTIES.items()
]
STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens", "content_filter": "content_filter"}
"""finish_reason -> the neutral stop reason."""


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    details = usage.completion_tokens_details
    return Usage(
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.total_tokens,
        details.reasoning_tokens if details is not None else None,
    )


def _turn(
    content: str | None,
    reasoning: str | None,
    calls: list[tuple[str, str, str]],
    finish_reason: str,
    usage: Any,
    raw: Any,
    events: list[Any],
) -> Turn:
    parts = (["reasoning"] if reasoning else []) + (["text"] if content else []) + ["tool"] * len(calls)
    return Turn(
        text=content,
        calls=[Call(i, n, json.loads(a), a) for i, n, a in calls],
        reasoning=reasoning,
        parts=parts,
        stop=STOP[finish_reason],
        native_stop=finish_reason,
        usage=_usage(usage),
        raw=raw,
        events=events,
    )


def _from_chunks(chunks: list[Any]) -> Turn:
    """What an agent does with raw chunks: concatenate content, reasoning and arguments."""
    content: str | None = None
    reasoning: str | None = None
    calls: dict[int, list[str]] = {}
    finish_reason: str | None = None
    usage: Any = None
    for chunk in chunks:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            delta = choice.delta
            if delta.content is not None:
                content = (content or "") + delta.content
            piece = getattr(delta, "reasoning_content", None)
            if piece is not None:
                reasoning = (reasoning or "") + piece
            for part in delta.tool_calls or ():
                call = calls.setdefault(part.index, ["", "", ""])
                call[0] += part.id or ""
                if part.function is not None:
                    call[1] += part.function.name or ""
                    call[2] += part.function.arguments or ""
            if choice.finish_reason is not None:
                finish_reason = choice.finish_reason
    assert finish_reason is not None, "the stream ended without a finish_reason"
    ordered = [(c[0], c[1], c[2]) for _, c in sorted(calls.items())]
    if content == "" and ordered:
        content = None
    return _turn(content, reasoning, ordered, finish_reason, usage, None, chunks)


class ChatCompletionsSDK(OpenAIAdapter):
    protocol = "openai-chat"
    tools = TOOLS
    usage_options = {"stream_options": {"include_usage": True}}
    interleaves_text = False  # one message: its content, then its tool_calls
    preamble_events = 1  # the role chunk

    def start(self, prompt: str, *, system: str | None = None) -> tuple[list[Any], dict[str, Any]]:
        history = [{"role": "system", "content": system}] if system is not None else []
        return [*history, {"role": "user", "content": prompt}], {}

    async def turn(
        self, client: Any, mode: str, history: list[Any], *, events: list[Any] | None = None, **kwargs: Any
    ) -> Turn:
        events = [] if events is None else events
        kwargs.setdefault("model", self.model)
        final = await sdk_call(
            client, client.chat.completions, mode, "get_final_completion", events, messages=history, **kwargs
        )
        if mode == "sse":
            return _from_chunks(events)
        choice = final.choices[0]
        message = choice.message
        calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or ()]
        return _turn(
            message.content,
            getattr(message, "reasoning_content", None),
            calls,
            choice.finish_reason,
            final.usage,
            final,
            events,
        )

    def append(self, history: list[Any], turn: Turn, results: Results = ()) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": turn.text}
        if turn.calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in turn.calls
            ]
        history.append(message)
        history.extend({"role": "tool", "tool_call_id": call_id, "content": output} for call_id, output in results)

    def history_kinds(self, history: list[Any]) -> list[str]:
        return [m["role"] for m in history]

    def _chunks(self, events: list[Any], mode: str) -> list[Any]:
        return [e.chunk for e in events if e.type == "chunk"] if mode == "helper" else events

    def text_deltas(self, events: list[Any], mode: str) -> list[str]:
        return [
            c.choices[0].delta.content for c in self._chunks(events, mode) if c.choices and c.choices[0].delta.content
        ]

    def reasoning_deltas(self, events: list[Any], mode: str) -> list[str]:
        pieces = [
            getattr(c.choices[0].delta, "reasoning_content", None) for c in self._chunks(events, mode) if c.choices
        ]
        return [p for p in pieces if p is not None]

    def streamed_arguments(self, turn: Turn) -> list[tuple[int, str, Any]]:
        return [
            (e.index, e.name, e.parsed_arguments) for e in turn.events if e.type == "tool_calls.function.arguments.done"
        ]

    def comparable(self, turn: Turn) -> dict[str, Any]:
        # The helper's ParsedChatCompletion adds "parsed", parsed_arguments and the
        # chunks' tool-call index; usage comes in a stream only when stream_options asks.
        dump = turn.raw.model_dump(exclude={"usage"}, exclude_none=True)
        for choice in dump["choices"]:
            for call in choice["message"].get("tool_calls", ()):
                call.pop("index", None)
                call["function"].pop("parsed_arguments", None)
        return dump


CHAT = ChatCompletionsSDK()
