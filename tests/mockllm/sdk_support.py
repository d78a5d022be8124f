"""What the SDK end-to-end tests share: scripts, tools, calls, and the protocol adapter.

A test of a behaviour every protocol has is written once, against :class:`SDKAdapter`,
and runs for each protocol (``sdk_adapters_support.EACH_PROTOCOL``). An adapter is what
is the protocol's own: building its SDK client, making a call (``json``, ``sse`` or
``helper``), reading text, tool calls, reasoning and usage back from the SDK's objects
into a :class:`Turn`, and appending a turn and its tool results to the history.
Each protocol's adapter lives in ``sdk_<protocol>_support``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import anthropic
import openai
import pytest

from mockllm import InstructionChain

SYNC_ASYNC = pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
"""Run a test with the sync and with the async client."""

MODES = ("json", "sse", "helper")
ALL_MODES = pytest.mark.parametrize("mode", MODES)
"""``create``, ``create(stream=True)`` accumulated by the test, and the SDK's stream helper."""
STREAMED = pytest.mark.parametrize("mode", ["sse", "helper"])

Executed = list[tuple[str, dict[str, Any]]]
"""The tools an agent loop ran: (name, arguments), in order."""

Results = Iterable[tuple[str, str]]
"""Tool results to send back: (call id, output text), in the order to send them."""


def script(*instructions: dict[str, Any], prompt: str = "Help me plan the day.") -> str:
    """A user message carrying ``instructions`` as an instruction chain."""
    return InstructionChain.model_validate({"instruction_chain": list(instructions)}).tagged(prompt)


LOOP_SCRIPT = script(
    {
        "id": "look-up",
        "messages": [
            {"text_message": {"text": "Let me check the weather."}},
            {"tool_call": [{"name": "get_weather", "args": {"city": "Paris"}}]},
        ],
    },
    {"id": "clock", "messages": [{"tool_call": [{"name": "get_time", "args": {"tz": "Europe/Paris"}}]}]},
    {"id": "answer", "messages": [{"text_message": {"text": "It is sunny in Paris, and it is noon."}}]},
)
"""A three-turn tool loop: text and a tool call, a tool call, the answer."""

REASONING_SCRIPT = script(
    {
        "id": "think-call",
        "reasoning": {"text": "The user wants weather, so call the tool."},
        "messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Rome"}}]}],
    },
    {"id": "think-answer", "reasoning": {"length": 7}, "messages": [{"text_message": {"text": "Rome is sunny."}}]},
)
"""Two turns with reasoning: reasoning then a tool call, reasoning then the answer."""


def mixed_script(*, text_after_calls: bool) -> str:
    """One reply, two words a delta: 11 words, two tool calls, and maybe "Done." after them."""
    done = [{"text_message": {"text": "Done."}}] if text_after_calls else []
    return script(
        {
            "id": "mixed",
            "chunk_words": 2,
            "messages": [
                {"text_message": {"length": 11}},
                {
                    "tool_call": [
                        {"name": "convert", "args": {"amount": 12.75, "unit": "miles per hour"}},
                        {"name": "get_time", "args": {"tz": "America/Argentina/Buenos_Aires"}},
                    ]
                },
                *done,
            ],
        }
    )


MIXED_CALLS = [
    ("convert", {"amount": 12.75, "unit": "miles per hour"}),
    ("get_time", {"tz": "America/Argentina/Buenos_Aires"}),
]
"""The calls of ``mixed_script``: (name, arguments)."""

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


def tool_parameters(properties: dict[str, str], *, strict: bool) -> dict[str, Any]:
    """The JSON schema of a tool taking ``properties`` (name -> JSON type), all required."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {key: {"type": kind} for key, kind in properties.items()},
        "required": list(properties),
    }
    if strict:  # so that the openai stream helpers may auto-parse the arguments
        schema["additionalProperties"] = False
    return schema


# -- what is read back ------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One tool call as the SDK returned it: its id, the tool's name, its arguments
    parsed and as the text the wire carried (what a client sends back)."""

    id: str
    name: str
    args: dict[str, Any]
    arguments: str


@dataclass(frozen=True)
class Usage:
    """Token counts; ``total`` and ``reasoning`` where the protocol reports them."""

    input: int
    output: int
    total: int | None = None
    reasoning: int | None = None


@dataclass(frozen=True)
class ErrorView:
    """What an SDK error says, whichever SDK raised it (None where it says nothing)."""

    type: str | None
    message: str | None
    code: str | None = None
    param: str | None = None
    request_id: str | None = None


@dataclass(frozen=True)
class Neutral:
    """A reply reduced to what every protocol can say."""

    reasoning: str | None
    parts: tuple[tuple[Any, ...], ...]
    """("text", text) once, with all text joined, then ("tool", name, args) per call."""
    stop: str

    @property
    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        return [(p[1], p[2]) for p in self.parts if p[0] == "tool"]


@dataclass
class Turn:
    """One assistant reply, however it was received, read into the same fields.

    ``parts`` is the reply's kinds in order ("reasoning", "text", "tool"); ``stop`` the
    neutral stop reason ("end_turn", "tool_use", "max_tokens") read from the protocol's
    own (``native_stop``); ``raw`` the SDK's reply object where there is one (the
    completion, message or response), ``events`` what the stream yielded.
    """

    text: str | None
    calls: list[Call]
    reasoning: str | None
    parts: list[str]
    stop: str
    native_stop: str
    usage: Usage | None
    raw: Any = None
    events: list[Any] = field(default_factory=list)

    def neutral(self) -> Neutral:
        parts: list[tuple[Any, ...]] = [("text", self.text)] if self.text else []
        parts += [("tool", c.name, c.args) for c in self.calls]
        return Neutral(self.reasoning or None, tuple(parts), self.stop)


def run_tools(turn: Turn, executed: Executed) -> list[tuple[str, str]]:
    """Run each tool ``turn`` asks for, note it in ``executed``; (call id, output JSON)."""
    results = []
    for call in turn.calls:
        executed.append((call.name, dict(call.args)))
        results.append((call.id, json.dumps(TOOL_FUNCTIONS[call.name](**call.args))))
    return results


# -- calls --------------------------------------------------------------------------------


def _is_async(client: Any) -> bool:
    return isinstance(client, (openai.AsyncOpenAI, anthropic.AsyncAnthropic))


async def sdk_call(client: Any, endpoint: Any, mode: str, final: str, events: list[Any], **kwargs: Any) -> Any:
    """One model call through ``endpoint`` (e.g. ``client.messages``) the way ``mode`` says.

    ``json``: the reply; ``sse``: None, each raw event of ``create(stream=True)`` appended
    to ``events`` as it arrives; ``helper``: the helper's ``final`` method's result, the
    helper's events appended as they arrive (so a stream that breaks leaves what came).
    """
    is_async = _is_async(client)
    if mode == "json":
        return await endpoint.create(**kwargs) if is_async else endpoint.create(**kwargs)
    if mode == "sse":
        if is_async:
            async with await endpoint.create(stream=True, **kwargs) as stream:
                async for event in stream:
                    events.append(event)
        else:
            with endpoint.create(stream=True, **kwargs) as stream:
                for event in stream:
                    events.append(event)  # noqa: PERF402 (keep what came before an error)
        return None
    assert mode == "helper", mode
    if is_async:
        async with endpoint.stream(**kwargs) as stream:
            async for event in stream:
                events.append(event)
            return await getattr(stream, final)()
    with endpoint.stream(**kwargs) as stream:
        for event in stream:
            events.append(event)  # noqa: PERF402
        return getattr(stream, final)()


# -- the adapter --------------------------------------------------------------------------


class SDKAdapter:
    """One protocol as a test drives it through its official SDK."""

    protocol: ClassVar[str]
    """The protocol's name, as the journal gives it."""
    sdk: ClassVar[str]
    """The door's client builder: "openai" or "anthropic"."""
    model: ClassVar[str]
    call_id_prefix: ClassVar[str]
    tools: ClassVar[list[dict[str, Any]]]
    """The TOOL_PROPERTIES tools in the protocol's form."""
    reasoning_options: ClassVar[dict[str, Any]] = {}
    """What a request adds to get reasoning back."""
    usage_options: ClassVar[dict[str, Any]] = {}
    """What a streamed request adds to get usage back."""
    interleaves_text: ClassVar[bool] = True
    """Whether a reply can hold text after its tool calls."""
    preamble_events: ClassVar[int]
    """How many stream events come before the first text delta."""
    overloaded_status: ClassVar[int]
    """The status the provider sends when it is overloaded."""
    api_error: ClassVar[type[Exception]]
    """The root of the SDK's errors that come from the API."""
    status_errors: ClassVar[dict[int, tuple[type[Exception], str, str | None]]]
    """The SDK's exception class, the error type and code for each scripted status."""
    parallel_options: ClassVar[dict[str, Any]] = {}
    """What a request adds to allow parallel tool calls."""
    mid_stream_status: ClassVar[int | None]
    """The ``status_code`` of an error in a stream already begun (None: not a status error)."""

    def __repr__(self) -> str:
        return self.protocol

    @contextlib.asynccontextmanager
    async def client(self, door: Any, is_async: bool, **kwargs: Any) -> AsyncIterator[Any]:
        """This protocol's SDK client of ``door``, sync or async."""
        build = getattr(door, self.sdk)
        if is_async:
            async with build(is_async=True, **kwargs) as client:
                yield client
        else:
            with build(**kwargs) as client:
                yield client

    def start(self, prompt: str, *, system: str | None = None) -> tuple[list[Any], dict[str, Any]]:
        """A history holding the user's ``prompt``, and the call options for ``system``."""
        raise NotImplementedError

    async def turn(
        self, client: Any, mode: str, history: list[Any], *, events: list[Any] | None = None, **kwargs: Any
    ) -> Turn:
        """One model call on ``history`` made the way ``mode`` says, read into a Turn.

        ``events``, when given, collects the stream's events as they arrive.
        """
        raise NotImplementedError

    def append(self, history: list[Any], turn: Turn, results: Results = ()) -> None:
        """Append ``turn`` as the client sends it back, then ``results`` in that order."""
        raise NotImplementedError

    def history_kinds(self, history: list[Any]) -> list[str]:
        """The role (or item type) of each entry of ``history``."""
        raise NotImplementedError

    def text_deltas(self, events: list[Any], mode: str) -> list[str]:
        """The text pieces a stream's ``events`` carried, in order."""
        raise NotImplementedError

    def reasoning_deltas(self, events: list[Any], mode: str) -> list[str]:
        """The reasoning pieces a stream's ``events`` carried, in order."""
        raise NotImplementedError

    def streamed_arguments(self, turn: Turn) -> list[tuple[int, str, Any]]:
        """(index, name, parsed arguments) of each call as the stream helper ended it."""
        raise NotImplementedError

    def comparable(self, turn: Turn) -> dict[str, Any]:
        """The reply object's dump without what may differ between streamed and not."""
        raise NotImplementedError

    def error_view(self, error: Exception) -> ErrorView:
        raise NotImplementedError

    def reply(self, door: Any, is_async: bool, mode: str, prompt: str, **kwargs: Any) -> Turn:
        """One model call on a history holding ``prompt``, with a client of its own."""

        async def main() -> Turn:
            async with self.client(door, is_async) as client:
                return await self.turn(client, mode, self.start(prompt)[0], **kwargs)

        return asyncio.run(main())

    async def agent_loop(
        self, client: Any, mode: str, history: list[Any], *, max_turns: int = 6, **kwargs: Any
    ) -> tuple[list[Turn], Executed]:
        """Call the model, run its tools, append everything, until it stops asking for tools."""
        turns: list[Turn] = []
        executed: Executed = []
        kwargs.setdefault("tools", self.tools)
        for _ in range(max_turns):
            turn = await self.turn(client, mode, history, **kwargs)
            turns.append(turn)
            asked = turn.stop == "tool_use"
            self.append(history, turn, run_tools(turn, executed) if asked else ())
            if not asked:
                return turns, executed
        raise AssertionError(f"the loop did not stop after {max_turns} turns: {turns}")


class OpenAIAdapter(SDKAdapter):
    """What the two OpenAI protocols share: the ``openai`` SDK, its errors and OpenAI's."""

    sdk = "openai"
    model = "gpt-mock"
    call_id_prefix = "call_"
    parallel_options = {"parallel_tool_calls": True}
    overloaded_status = 503
    api_error = openai.APIError
    status_errors = {
        400: (openai.BadRequestError, "invalid_request_error", None),
        429: (openai.RateLimitError, "requests", "rate_limit_exceeded"),
        500: (openai.InternalServerError, "server_error", None),
        503: (openai.InternalServerError, "server_error", None),
    }
    mid_stream_status = None

    def error_view(self, error: Exception) -> ErrorView:
        """What an ``openai`` error says; its message holds the body's message (3.x ends
        with it, 2.x puts it after "Error code: N - " in the whole body)."""
        assert isinstance(error, openai.APIError), error
        body = error.body if isinstance(error.body, dict) else {}
        assert str(body.get("message")) in error.message, (error.message, body)
        return ErrorView(error.type, body.get("message"), error.code, error.param, getattr(error, "request_id", None))
