"""The Responses adapter of the SDK tests: a turn is the response's output items, read
from the response, rebuilt from raw events (and checked against ``response.completed``)
or from the stream helper; ``function_call_output`` items as results, sent back with the
output items in ``input`` (the whole conversation, as a stateless client sends it).
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
        "name": name,
        "description": f"The {name} tool.",
        "parameters": tool_parameters(props, strict=True),
        "strict": True,
    }
    for name, props in TOOL_PROPERTIES.items()
]
_PART = {"reasoning": "reasoning", "message": "text", "function_call": "tool"}


def _turn(response: Any, events: list[Any]) -> Turn:
    output = list(response.output)
    messages = [item for item in output if item.type == "message"]
    reasoning = [item for item in output if item.type == "reasoning"]
    calls = [
        Call(item.call_id, item.name, json.loads(item.arguments), item.arguments)
        for item in output
        if item.type == "function_call"
    ]
    if response.status == "incomplete":
        reason = response.incomplete_details.reason
        stop = {"max_output_tokens": "max_tokens"}.get(reason, reason)
    else:
        stop = "tool_use" if calls else "end_turn"
    usage = response.usage
    return Turn(
        text="".join(c.text for item in messages for c in item.content) if messages else None,
        calls=calls,
        reasoning="".join(s.text for item in reasoning for s in item.summary) if reasoning else None,
        parts=[_PART[item.type] for item in output],
        stop=stop,
        native_stop=response.status,
        usage=Usage(
            usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.output_tokens_details.reasoning_tokens
        ),
        raw=response,
        events=events,
    )


def _from_events(events: list[Any]) -> Turn:
    """Rebuild the output items from raw events, as a client without the helper would,
    and check them against what ``response.completed`` reports."""
    items: dict[int, dict[str, str]] = {}
    completed: Any = None
    for event in events:
        if event.type == "response.output_item.added":
            assert event.output_index not in items, f"output_index {event.output_index} added twice"
            items[event.output_index] = {"type": event.item.type, "text": "", "arguments": "", "summary": ""}
        elif event.type == "response.output_text.delta":
            items[event.output_index]["text"] += event.delta
        elif event.type == "response.function_call_arguments.delta":
            items[event.output_index]["arguments"] += event.delta
        elif event.type == "response.reasoning_summary_text.delta":
            items[event.output_index]["summary"] += event.delta
        elif event.type == "response.completed":
            completed = event.response
    assert events[0].type == "response.created"
    assert completed is not None, "the stream ended without response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    for index, item in enumerate(completed.output):
        built = items[index]
        if item.type == "message":
            assert built["text"] == "".join(c.text for c in item.content)
        elif item.type == "function_call":
            assert built["arguments"] == item.arguments
        elif item.type == "reasoning":
            assert built["summary"] == "".join(s.text for s in item.summary)
    return _turn(completed, events)


class ResponsesSDK(OpenAIAdapter):
    protocol = "openai-responses"
    tools = TOOLS
    reasoning_options = {"reasoning": {"effort": "low", "summary": "auto"}}
    preamble_events = 4  # created, in_progress, output_item.added, content_part.added

    def start(self, prompt: str, *, system: str | None = None) -> tuple[list[Any], dict[str, Any]]:
        return [{"role": "user", "content": prompt}], ({"instructions": system} if system is not None else {})

    async def turn(
        self, client: Any, mode: str, history: list[Any], *, events: list[Any] | None = None, **kwargs: Any
    ) -> Turn:
        events = [] if events is None else events
        kwargs.setdefault("model", self.model)
        response = await sdk_call(client, client.responses, mode, "get_final_response", events, input=history, **kwargs)
        return _from_events(events) if mode == "sse" else _turn(response, events)

    def append(self, history: list[Any], turn: Turn, results: Results = ()) -> None:
        history.extend(turn.raw.output)
        history.extend(
            {"type": "function_call_output", "call_id": call_id, "output": output} for call_id, output in results
        )

    def history_kinds(self, history: list[Any]) -> list[str]:
        return [getattr(item, "type", None) or item.get("type", "message") for item in history]

    def text_deltas(self, events: list[Any], mode: str) -> list[str]:
        return [e.delta for e in events if e.type == "response.output_text.delta"]

    def reasoning_deltas(self, events: list[Any], mode: str) -> list[str]:
        return [e.delta for e in events if e.type == "response.reasoning_summary_text.delta"]

    def streamed_arguments(self, turn: Turn) -> list[tuple[int, str, Any]]:
        return [
            (e.output_index, turn.raw.output[e.output_index].name, json.loads(e.arguments))
            for e in turn.events
            if e.type == "response.function_call_arguments.done"
        ]

    def comparable(self, turn: Turn) -> dict[str, Any]:
        # input_tokens is estimated from the request body, which "stream": true lengthens.
        # The helper's ParsedResponse adds "parsed" fields (None for text) and, the tools
        # being strict, parsed_arguments.
        dump = turn.raw.model_dump(exclude={"usage": {"input_tokens", "total_tokens"}}, exclude_none=True)
        for item in dump["output"]:
            item.pop("parsed_arguments", None)
        return dump


RESPONSES = ResponsesSDK()
