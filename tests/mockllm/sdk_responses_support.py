"""The Responses side of the SDK tests: a ``Turn`` is the response's output items, read
from the response, rebuilt from raw events (and checked against ``response.completed``)
or from the stream helper; ``function_call_output`` items as results; the agent loop on
``input``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.mockllm.sdk_support import RESPONSES_TOOLS, Executed, accumulate, run_tool, sdk_call
from tests.mockllm.sdk_support import agent_loop as _agent_loop

MODEL = "gpt-mock"
TOOLS = RESPONSES_TOOLS


@dataclass
class Turn:
    """One response: its output items as the SDK parsed them."""

    response: Any
    events: list[Any] = field(default_factory=list)

    @property
    def output(self) -> list[Any]:
        return list(self.response.output)

    def kinds(self) -> list[str]:
        return [item.type for item in self.output]

    @property
    def calls(self) -> list[Any]:
        return [item for item in self.output if item.type == "function_call"]

    @property
    def reasoning(self) -> str | None:
        items = [item for item in self.output if item.type == "reasoning"]
        return "".join(s.text for item in items for s in item.summary) if items else None


class _EventAccumulator:
    """Rebuild the output items from raw events, as a client without the helper would."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.items: dict[int, dict[str, Any]] = {}
        self.completed: Any = None

    def add(self, event: Any) -> None:
        self.events.append(event)
        if event.type == "response.output_item.added":
            assert event.output_index not in self.items, f"output_index {event.output_index} added twice"
            self.items[event.output_index] = {"type": event.item.type, "text": "", "arguments": "",
                                              "summary": ""}
        elif event.type == "response.output_text.delta":
            self.items[event.output_index]["text"] += event.delta
        elif event.type == "response.function_call_arguments.delta":
            self.items[event.output_index]["arguments"] += event.delta
        elif event.type == "response.reasoning_summary_text.delta":
            self.items[event.output_index]["summary"] += event.delta
        elif event.type == "response.completed":
            self.completed = event.response

    def turn(self) -> Turn:
        assert self.events[0].type == "response.created"
        assert self.completed is not None, "the stream ended without response.completed"
        assert [e.sequence_number for e in self.events] == list(range(len(self.events)))
        # What the deltas built is what response.completed reports.
        for index, item in enumerate(self.completed.output):
            built = self.items[index]
            if item.type == "message":
                assert built["text"] == "".join(c.text for c in item.content)
            elif item.type == "function_call":
                assert built["arguments"] == item.arguments
            elif item.type == "reasoning":
                assert built["summary"] == "".join(s.text for s in item.summary)
        return Turn(self.completed, self.events)


async def responses_turn(client: Any, mode: str, **kwargs: Any) -> Turn:
    """One model call, made the way ``mode`` says, sync or async after the client."""
    kwargs.setdefault("model", MODEL)
    response, events = await sdk_call(client, client.responses, mode, "get_final_response", **kwargs)
    if mode == "sse":
        return accumulate(_EventAccumulator(), events)
    return Turn(response, events)


def run_tools(turn: Turn, executed: Executed) -> list[dict[str, Any]]:
    """Execute each requested function; the results as ``function_call_output`` items."""
    return [{"type": "function_call_output", "call_id": call.call_id,
             "output": run_tool(call.name, json.loads(call.arguments), executed)}
            for call in turn.calls]


async def agent_loop(client: Any, mode: str, items: list[Any],
                     **kwargs: Any) -> tuple[list[Turn], Executed]:
    """Call the model, run its tools, append everything, until it stops asking for tools."""
    def answer(turn: Turn, executed: Executed) -> bool:
        items.extend(turn.output)
        if not turn.calls:
            return False
        items.extend(run_tools(turn, executed))
        return True

    return await _agent_loop(lambda: responses_turn(client, mode, input=items, tools=TOOLS, **kwargs), answer)
