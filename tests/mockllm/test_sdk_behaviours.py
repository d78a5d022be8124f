"""What every protocol does through its official SDK, written once and run for each.

Each test runs for OpenAI Chat Completions, Anthropic Messages and OpenAI Responses (the
``sdk`` adapter, ``tests/mockllm/sdk_*_support.py``), through the in-process transport
and the loopback server (``door``), with the sync and the async client. A model call is
made ``json`` (``create``), ``sse`` (``create(stream=True)``, raw events accumulated the
way an agent loop would) or ``helper`` (the SDK's stream helper and its final reply).
Async code runs under ``asyncio.run``; the sync client is called from the same
coroutines so that one driver serves both. What only one protocol has is tested in its
own ``test_sdk_<protocol>.py``.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

import pytest

from tests.mockllm.sdk_adapters_support import EACH_PROTOCOL
from tests.mockllm.sdk_support import (
    ALL_MODES,
    LOOP_SCRIPT,
    MIXED_CALLS,
    REASONING_SCRIPT,
    STREAMED,
    SYNC_ASYNC,
    SDKAdapter,
    mixed_script,
    run_tools,
    script,
)


def steps(door: Any) -> list[tuple[str | None, int | None, int]]:
    """(instruction id, turn index, status) of each request in the journal."""
    return [(e["instruction_id"], e["turn_index"], e["status"]) for e in door.journal()]


# -- tool loops --------------------------------------------------------------------------

NATIVE_STOPS = {
    "openai-chat": ["tool_calls", "tool_calls", "stop"],
    "anthropic-messages": ["tool_use", "tool_use", "end_turn"],
    "openai-responses": ["completed"] * 3,
}
"""What each protocol says where the neutral stops are tool_use, tool_use, end_turn."""
LOOP_HISTORY = {
    "openai-chat": ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"],
    "anthropic-messages": ["user", "assistant", "user", "assistant", "user", "assistant"],
    "openai-responses": [
        "message",
        "message",
        "function_call",
        "function_call_output",
        "function_call",
        "function_call_output",
        "message",
    ],
}
"""The history a three-turn loop leaves: each call paired with its result."""


@EACH_PROTOCOL
@SYNC_ASYNC
@ALL_MODES
def test_three_turn_tool_loop_runs_each_scripted_turn(door: Any, sdk: SDKAdapter, is_async: bool, mode: str) -> None:
    async def main() -> None:
        door.reset_journal()
        async with sdk.client(door, is_async) as client:
            history, options = sdk.start(LOOP_SCRIPT, system="You are terse.")
            turns, executed = await sdk.agent_loop(client, mode, history, **options)

        assert [t.stop for t in turns] == ["tool_use", "tool_use", "end_turn"]
        assert [t.native_stop for t in turns] == NATIVE_STOPS[sdk.protocol]
        assert [t.parts for t in turns] == [["text", "tool"], ["tool"], ["text"]]
        assert turns[0].text == "Let me check the weather."
        assert turns[1].text is None
        assert turns[2].text == "It is sunny in Paris, and it is noon."
        assert turns[2].calls == []
        assert executed == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Europe/Paris"})]
        ids = [turns[0].calls[0].id, turns[1].calls[0].id]
        assert ids[0] != ids[1] and all(i.startswith(sdk.call_id_prefix) for i in ids)
        assert sdk.history_kinds(history) == LOOP_HISTORY[sdk.protocol]

        entries = door.journal()
        assert steps(door) == [("look-up", 0, 200), ("clock", 1, 200), ("answer", 2, 200)]
        assert {e["protocol"] for e in entries} == {sdk.protocol}
        assert {e["stream"] for e in entries} == {mode != "json"}
        assert len({e["chain_id"] for e in entries}) == 1

    asyncio.run(main())


@EACH_PROTOCOL
@SYNC_ASYNC
@ALL_MODES
def test_parallel_tool_calls_have_distinct_ids_and_pair_back(
    door: Any, sdk: SDKAdapter, is_async: bool, mode: str
) -> None:
    fixed = f"{sdk.call_id_prefix}fixed_1"
    chain = script(
        {
            "id": "fan-out",
            "messages": [
                {
                    "tool_call": [
                        {"name": "get_weather", "args": {"city": "Oslo"}},
                        {"name": "convert", "args": {"amount": 2.5, "unit": "km"}, "id": fixed},
                        {"name": "get_weather", "args": {"city": "Lima"}},
                    ]
                }
            ],
        },
        {"id": "gather", "messages": [{"text_message": {"length": 9}}]},
    )

    async def main() -> None:
        door.reset_journal()
        async with sdk.client(door, is_async) as client:
            history, _ = sdk.start(chain)
            first = await sdk.turn(client, mode, history, tools=sdk.tools, **sdk.parallel_options)
            assert first.stop == "tool_use"
            assert [(c.name, c.args) for c in first.calls] == [
                ("get_weather", {"city": "Oslo"}),
                ("convert", {"amount": 2.5, "unit": "km"}),
                ("get_weather", {"city": "Lima"}),
            ]
            ids = [c.id for c in first.calls]
            assert len(set(ids)) == 3 and ids[1] == fixed
            assert all(i.startswith(sdk.call_id_prefix) for i in ids)

            # Answer in reverse order: results pair by id, not by position.
            sdk.append(history, first, reversed(run_tools(first, [])))
            second = await sdk.turn(client, mode, history, tools=sdk.tools)

        assert second.stop == "end_turn"
        assert second.text is not None and len(second.text.split()) == 9
        if mode == "helper":
            assert sdk.streamed_arguments(first) == [
                (0, "get_weather", {"city": "Oslo"}),
                (1, "convert", {"amount": 2.5, "unit": "km"}),
                (2, "get_weather", {"city": "Lima"}),
            ]
        assert steps(door) == [("fan-out", 0, 200), ("gather", 1, 200)]

    asyncio.run(main())


MISSING_RESULT = {
    "openai-chat": (
        "messages.[1].role",
        "An assistant message with 'tool_calls' must be followed by tool "
        "messages responding to each 'tool_call_id'. The following tool_call_ids did not have "
        "response messages: {}",
    ),
    "anthropic-messages": (
        None,
        "messages.1: `tool_use` ids were found without `tool_result` blocks "
        "immediately after: {}. Each `tool_use` block must have a corresponding "
        "`tool_result` block in the next message.",
    ),
    "openai-responses": ("input", "No tool output found for function call {}."),
}
"""Where each provider points, and what it says, when a call's result is missing."""


@EACH_PROTOCOL
@SYNC_ASYNC
def test_a_missing_tool_result_is_rejected_as_bad_request(door: Any, sdk: SDKAdapter, is_async: bool) -> None:
    chain = script(
        {
            "messages": [
                {
                    "tool_call": [
                        {"name": "get_time", "args": {"tz": "UTC"}},
                        {"name": "get_time", "args": {"tz": "CET"}},
                    ]
                }
            ]
        },
        {"messages": [{"text_message": {"length": 3}}]},
    )

    async def main() -> None:
        async with sdk.client(door, is_async) as client:
            history, _ = sdk.start(chain)
            first = await sdk.turn(client, "json", history, tools=sdk.tools)
            sdk.append(history, first, run_tools(first, [])[:1])  # the second call is left unanswered
            with pytest.raises(sdk.status_errors[400][0]) as info:
                await sdk.turn(client, "json", history, tools=sdk.tools)
        error = info.value
        assert error.status_code == 400  # type: ignore[attr-defined]
        view = sdk.error_view(error)
        param, message = MISSING_RESULT[sdk.protocol]
        assert view.type == "invalid_request_error"
        assert (view.param, view.message) == (param, message.format(first.calls[1].id))
        assert first.calls[0].id not in view.message

    asyncio.run(main())


# -- reasoning ---------------------------------------------------------------------------


@EACH_PROTOCOL
@SYNC_ASYNC
@ALL_MODES
def test_reasoning_comes_first_and_goes_back_with_the_tool_results(
    door: Any, sdk: SDKAdapter, is_async: bool, mode: str
) -> None:
    async def main() -> None:
        door.reset_journal()
        async with sdk.client(door, is_async) as client:
            history, _ = sdk.start(REASONING_SCRIPT)
            turns, executed = await sdk.agent_loop(client, mode, history, **sdk.reasoning_options)
        assert executed == [("get_weather", {"city": "Rome"})]
        assert [t.parts for t in turns] == [["reasoning", "tool"], ["reasoning", "text"]]
        assert turns[0].reasoning == "The user wants weather, so call the tool."
        assert turns[0].text is None
        assert turns[1].reasoning is not None and len(turns[1].reasoning.split()) == 7
        assert turns[1].text == "Rome is sunny."
        # Where the protocol counts reasoning tokens, one a word.
        assert turns[0].usage is None or turns[0].usage.reasoning in (None, 8)
        if mode != "json":
            # One word per delta, all before any tool call.
            assert sdk.reasoning_deltas(turns[0].events, mode) == [
                "The ",
                "user ",
                "wants ",
                "weather, ",
                "so ",
                "call ",
                "the ",
                "tool.",
            ]
        assert steps(door) == [("think-call", 0, 200), ("think-answer", 1, 200)]

    asyncio.run(main())


# -- usage -------------------------------------------------------------------------------


@EACH_PROTOCOL
@SYNC_ASYNC
@ALL_MODES
def test_usage_counts_input_and_output_tokens(door: Any, sdk: SDKAdapter, is_async: bool, mode: str) -> None:
    chain = script({"messages": [{"text_message": {"length": 40}}]})

    async def main() -> None:
        async with sdk.client(door, is_async) as client:
            options = sdk.usage_options if mode != "json" else {}
            turn = await sdk.turn(client, mode, sdk.start(chain)[0], **options)
            whole = await sdk.turn(client, "json", sdk.start(chain)[0])
        usage, expected = turn.usage, whole.usage
        assert usage is not None and expected is not None
        assert usage.input > 0 and usage.output > 1
        assert usage.total in (None, usage.input + usage.output)
        assert usage.reasoning in (None, 0)
        # input_tokens is estimated from the request body, which "stream": true lengthens.
        assert abs(usage.input - expected.input) <= 3
        assert usage.output == expected.output
        assert turn.text == whole.text

    asyncio.run(main())


# -- retries and errors ------------------------------------------------------------------


@EACH_PROTOCOL
@SYNC_ASYNC
@pytest.mark.parametrize("mode", ["json", "helper"])
def test_a_429_is_retried_and_then_succeeds(door: Any, sdk: SDKAdapter, is_async: bool, mode: str) -> None:
    chain = script(
        {
            "id": "flaky",
            "error": {"status": 429, "retry_after_ms": 1, "times": 1},
            "messages": [{"text_message": {"text": "Worked on the second try."}}],
        }
    )

    async def main() -> None:
        door.reset_journal()
        async with sdk.client(door, is_async, max_retries=2) as client:
            turn = await sdk.turn(client, mode, sdk.start(chain)[0])
        assert turn.text == "Worked on the second try."
        assert [(e["attempt"], e["status"], e["instruction_id"]) for e in door.journal()] == [
            (0, 429, "flaky"),
            (1, 200, "flaky"),
        ]

    asyncio.run(main())


# Each status is raised once streamed and once not, once sync and once async; the
# script gives the message when not streamed and leaves the provider's usual one else.
# None stands for the provider's overloaded status (503, Anthropic's 529).
ERROR_CASES = [
    (400, "json", False),
    (400, "sse", True),
    (429, "json", True),
    (429, "helper", False),
    (500, "json", False),
    (500, "helper", True),
    (None, "json", True),
    (None, "sse", False),
]


@EACH_PROTOCOL
@pytest.mark.parametrize(
    ("status", "mode", "is_async"),
    ERROR_CASES,
    ids=[f"{c[0] or 'overloaded'}-{c[1]}-{'async' if c[2] else 'sync'}" for c in ERROR_CASES],
)
def test_scripted_http_errors_raise_the_sdk_classes(
    door: Any, sdk: SDKAdapter, status: int | None, mode: str, is_async: bool
) -> None:
    status = status or sdk.overloaded_status
    error_class, error_type, error_code = sdk.status_errors[status]
    scripted = f"scripted {status}" if mode == "json" else None
    chain = script({"error": {"status": status, **({"message": scripted} if scripted else {})}})

    async def main() -> None:
        door.reset_journal()
        async with sdk.client(door, is_async) as client:
            with pytest.raises(error_class) as info:
                await sdk.turn(client, mode, sdk.start(chain)[0])
        error = info.value
        assert error.status_code == status  # type: ignore[attr-defined]
        # A server error is one for the SDK, the overloaded ones included (anthropic 0.x,
        # the httpx generation, files its OverloadedError apart: the SDK's choice).
        sdk_major = int(importlib.import_module(sdk.sdk).__version__.split(".")[0])
        if not (status == 529 and sdk_major < 1):
            assert isinstance(error, sdk.status_errors[500][0]) == (status >= 500)
        view = sdk.error_view(error)
        # The provider's usual type and code for the status, since the script gave none.
        assert (view.type, view.code) == (error_type, error_code)
        assert view.message and view.message == (scripted or view.message)
        assert view.request_id is not None and view.request_id.startswith("req_")
        assert [e["status"] for e in door.journal()] == [status]

    asyncio.run(main())


@EACH_PROTOCOL
@SYNC_ASYNC
def test_an_error_on_every_attempt_exhausts_the_retries(door: Any, sdk: SDKAdapter, is_async: bool) -> None:
    chain = script({"id": "down", "error": {"status": 500, "retry_after_ms": 1}})

    async def main() -> None:
        door.reset_journal()
        async with sdk.client(door, is_async, max_retries=2) as client:
            with pytest.raises(sdk.status_errors[500][0]):
                await sdk.turn(client, "json", sdk.start(chain)[0])
        assert [(e["attempt"], e["status"]) for e in door.journal()] == [(0, 500), (1, 500), (2, 500)]

    asyncio.run(main())


@EACH_PROTOCOL
@SYNC_ASYNC
@STREAMED
def test_a_mid_stream_error_raises_an_api_error_and_is_not_retried(
    door: Any, sdk: SDKAdapter, is_async: bool, mode: str
) -> None:
    status = sdk.overloaded_status
    # Three words arrive first, after the events every stream opens with.
    chain = script(
        {
            "error": {"status": status, "after_chunks": sdk.preamble_events + 3, "message": "stream broke"},
            "messages": [{"text_message": {"text": "one two three four five six"}}],
        }
    )

    async def main() -> None:
        door.reset_journal()
        events: list[Any] = []
        async with sdk.client(door, is_async, max_retries=2) as client:
            with pytest.raises(sdk.api_error) as info:
                await sdk.turn(client, mode, sdk.start(chain)[0], events=events)
        error = info.value
        # openai: an APIError, not a status error; anthropic: the status of the stream that failed.
        assert getattr(error, "status_code", None) == sdk.mid_stream_status
        view = sdk.error_view(error)
        assert (view.type, view.message) == (sdk.status_errors[status][1], "stream broke")
        assert "".join(sdk.text_deltas(events, mode)) == "one two three "
        assert [(e["attempt"], e["status"]) for e in door.journal()] == [(0, 200)]

    asyncio.run(main())


# -- the stream helper -------------------------------------------------------------------


@EACH_PROTOCOL
@SYNC_ASYNC
def test_stream_helper_accumulates_to_the_non_streamed_reply(door: Any, sdk: SDKAdapter, is_async: bool) -> None:
    chain = mixed_script(text_after_calls=sdk.interleaves_text)
    done = ["Done."] if sdk.interleaves_text else []

    async def main() -> None:
        async with sdk.client(door, is_async) as client:
            streamed = await sdk.turn(client, "helper", sdk.start(chain)[0], tools=sdk.tools)
            whole = await sdk.turn(client, "json", sdk.start(chain)[0], tools=sdk.tools)
        deltas = sdk.text_deltas(streamed.events, "helper")
        assert len(deltas) == 6 + len(done)  # 11 words two a delta, then "Done."
        assert "".join(deltas) == streamed.text == whole.text
        assert streamed.parts == whole.parts == ["text", "tool", "tool"] + ["text"] * len(done)
        assert streamed.calls == whole.calls
        assert [(c.name, c.args) for c in whole.calls] == MIXED_CALLS
        assert [(name, args) for _, name, args in sdk.streamed_arguments(streamed)] == MIXED_CALLS
        assert sdk.comparable(streamed) == sdk.comparable(whole)
        assert streamed.stop == whole.stop == "tool_use"

    asyncio.run(main())
