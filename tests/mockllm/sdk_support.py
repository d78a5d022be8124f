"""What the SDK end-to-end test files share: scripts, tools, clients, calls and the loop.

Each ``test_sdk_*`` file keeps only what is its protocol's own: how a reply is read
back (an accumulator of raw events) and how a turn and its tool results are appended to
the history.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import anthropic
import openai
import pytest

from mockllm import InstructionChain

SYNC_ASYNC = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
"""Run a test with the sync and with the async client."""

MODES = ("json", "sse", "helper")
ALL_MODES = pytest.mark.parametrize("mode", MODES)
"""``create``, ``create(stream=True)`` accumulated by the test, and the SDK's stream helper."""

Executed = list[tuple[str, dict[str, Any]]]
"""The tools an agent loop ran: (name, arguments), in order."""


def script(*instructions: dict[str, Any], prompt: str = "Help me plan the day.") -> str:
    """A user message carrying ``instructions`` as an instruction chain."""
    return InstructionChain.model_validate({"instruction_chain": list(instructions)}).tagged(prompt)


LOOP_SCRIPT = script(
    {"id": "look-up", "messages": [{"text_message": {"text": "Let me check the weather."}},
                                   {"tool_call": [{"name": "get_weather", "args": {"city": "Paris"}}]}]},
    {"id": "clock", "messages": [{"tool_call": [{"name": "get_time", "args": {"tz": "Europe/Paris"}}]}]},
    {"id": "answer", "messages": [{"text_message": {"text": "It is sunny in Paris, and it is noon."}}]},
)
"""A three-turn tool loop: text and a tool call, a tool call, the answer."""

# -- tools --------------------------------------------------------------------------------

TOOL_PROPERTIES: dict[str, dict[str, str]] = {
    "get_weather": {"city": "string"},
    "get_time": {"tz": "string"},
    "convert": {"amount": "number", "unit": "string"},
}

TOOL_FUNCTIONS: dict[str, Callable[..., dict[str, Any]]] = {
    "get_weather": lambda city: {"city": city, "sky": "sunny", "celsius": 21},
    "get_time": lambda tz: {"tz": tz, "time": "12:00"},
    "convert": lambda amount, unit: {"value": amount * 2, "unit": unit},
}


def _parameters(properties: dict[str, str], *, strict: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {key: {"type": kind} for key, kind in properties.items()},
        "required": list(properties),
    }
    if strict:  # so that the openai stream helpers may auto-parse the arguments
        schema["additionalProperties"] = False
    return schema


CHAT_TOOLS = [
    {"type": "function", "function": {"name": name, "description": f"The {name} tool.",
                                      "parameters": _parameters(props, strict=True), "strict": True}}
    for name, props in TOOL_PROPERTIES.items()
]
RESPONSES_TOOLS = [
    {"type": "function", "name": name, "description": f"The {name} tool.",
     "parameters": _parameters(props, strict=True), "strict": True}
    for name, props in TOOL_PROPERTIES.items()
]
ANTHROPIC_TOOLS = [
    {"name": name, "description": f"The {name} tool.", "input_schema": _parameters(props, strict=False)}
    for name, props in TOOL_PROPERTIES.items()
]


def run_tool(name: str, args: dict[str, Any], executed: Executed) -> str:
    """Run tool ``name``, note it in ``executed``, and return its output as JSON text."""
    executed.append((name, dict(args)))
    return json.dumps(TOOL_FUNCTIONS[name](**args))


# -- clients and calls --------------------------------------------------------------------


@contextlib.asynccontextmanager
async def sdk_client(door: Any, is_async: bool, *, sdk: str, **kwargs: Any) -> AsyncIterator[Any]:
    """The ``sdk`` ("openai" or "anthropic") client of ``door``, sync or async."""
    build = getattr(door, sdk)
    if is_async:
        async with build(is_async=True, **kwargs) as client:
            yield client
    else:
        with build(**kwargs) as client:
            yield client


openai_client = functools.partial(sdk_client, sdk="openai")
anthropic_client = functools.partial(sdk_client, sdk="anthropic")


def _is_async(client: Any) -> bool:
    return isinstance(client, (openai.AsyncOpenAI, anthropic.AsyncAnthropic))


async def sdk_call(client: Any, endpoint: Any, mode: str, final: str, **kwargs: Any) -> tuple[Any, list[Any]]:
    """One model call through ``endpoint`` (e.g. ``client.messages``) the way ``mode`` says.

    ``json``: (the reply, []); ``sse``: (None, every raw event of ``create(stream=True)``);
    ``helper``: (the helper's ``final`` method's result, the helper's events).
    """
    is_async = _is_async(client)
    if mode == "json":
        return (await endpoint.create(**kwargs) if is_async else endpoint.create(**kwargs)), []
    if mode == "sse":
        if is_async:
            async with await endpoint.create(stream=True, **kwargs) as stream:
                return None, [event async for event in stream]
        with endpoint.create(stream=True, **kwargs) as stream:
            return None, list(stream)
    assert mode == "helper", mode
    if is_async:
        async with endpoint.stream(**kwargs) as stream:
            events = [event async for event in stream]
            return await getattr(stream, final)(), events
    with endpoint.stream(**kwargs) as stream:
        events = list(stream)
        return getattr(stream, final)(), events


T = TypeVar("T")


def accumulate(accumulator: Any, events: list[Any]) -> Any:
    """Feed raw stream ``events`` to ``accumulator`` (``add``) and return its ``turn()``."""
    for event in events:
        accumulator.add(event)
    return accumulator.turn()


async def agent_loop(take_turn: Callable[[], Awaitable[T]], answer: Callable[[T, Executed], bool], *,
                     max_turns: int = 6) -> tuple[list[T], Executed]:
    """Call the model, run its tools, append everything, until it stops asking for tools.

    ``take_turn()`` makes one call on the history; ``answer(turn, executed)`` appends the
    turn (and, when it asked for tools, their results) and says whether it asked.
    """
    turns: list[T] = []
    executed: Executed = []
    for _ in range(max_turns):
        turn = await take_turn()
        turns.append(turn)
        if not answer(turn, executed):
            return turns, executed
    raise AssertionError(f"the loop did not stop after {max_turns} turns: {turns}")
