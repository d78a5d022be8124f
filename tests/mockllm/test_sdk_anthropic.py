"""The official ``anthropic`` SDK against the mock's Messages API, through both doors.

Every test runs through the in-process transport and the loopback server (the ``door``
fixture), with the sync and the async client. A model call is made in one of three
ways: ``json`` (``messages.create``), ``sse`` (``create(stream=True)``, raw events
accumulated here into content blocks) and ``helper`` (``messages.stream`` and its
``get_final_message()``). Async code runs under ``asyncio.run``; the sync client is
called from the same coroutines so that one driver serves both.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import pytest

from tests.mockllm.sdk_anthropic_support import (
    MAX_TOKENS,
    MODEL,
    THINKING,
    TOOLS,
    Turn,
    agent_loop,
    anthropic_turn,
    run_tools,
)
from tests.mockllm.sdk_support import ALL_MODES, LOOP_SCRIPT, SYNC_ASYNC, anthropic_client, script


# -- tool loops --------------------------------------------------------------------------

@SYNC_ASYNC
@ALL_MODES
def test_three_turn_tool_loop_runs_each_scripted_turn(door: Any, is_async: bool, mode: str) -> None:
    async def main() -> None:
        door.reset_journal()
        async with anthropic_client(door, is_async) as client:
            messages = [{"role": "user", "content": LOOP_SCRIPT}]
            turns, executed = await agent_loop(client, mode, messages, system="You are terse.")

        assert [t.stop_reason for t in turns] == ["tool_use", "tool_use", "end_turn"]
        assert [t.kinds() for t in turns] == [["text", "tool_use"], ["tool_use"], ["text"]]
        assert turns[0].text == "Let me check the weather."
        assert turns[2].text == "It is sunny in Paris, and it is noon."
        assert executed == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Europe/Paris"})]
        ids = [turns[0].tool_uses[0][0], turns[1].tool_uses[0][0]]
        assert ids[0] != ids[1] and all(i.startswith("toolu_") for i in ids)
        assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user", "assistant"]

        entries = door.journal()
        assert [(e["instruction_id"], e["turn_index"], e["status"]) for e in entries] == [
            ("look-up", 0, 200), ("clock", 1, 200), ("answer", 2, 200)]
        assert {e["protocol"] for e in entries} == {"anthropic-messages"}
        assert {e["stream"] for e in entries} == {mode != "json"}
        assert len({e["chain_id"] for e in entries}) == 1

    asyncio.run(main())


@SYNC_ASYNC
@ALL_MODES
def test_parallel_tool_uses_have_distinct_ids_and_pair_back(door: Any, is_async: bool, mode: str) -> None:
    chain = script(
        {"id": "fan-out", "messages": [{"tool_call": [
            {"name": "get_weather", "args": {"city": "Oslo"}},
            {"name": "convert", "args": {"amount": 2.5, "unit": "km"}, "id": "toolu_fixed_1"},
            {"name": "get_weather", "args": {"city": "Lima"}},
        ]}]},
        {"id": "gather", "messages": [{"text_message": {"length": 9}}]},
    )

    async def main() -> None:
        door.reset_journal()
        async with anthropic_client(door, is_async) as client:
            messages: list[dict[str, Any]] = [{"role": "user", "content": chain}]
            first = await anthropic_turn(client, mode, messages=messages, tools=TOOLS)
            assert first.stop_reason == "tool_use"
            assert [(name, args) for _, name, args in first.tool_uses] == [
                ("get_weather", {"city": "Oslo"}),
                ("convert", {"amount": 2.5, "unit": "km"}),
                ("get_weather", {"city": "Lima"}),
            ]
            ids = [call_id for call_id, _, _ in first.tool_uses]
            assert len(set(ids)) == 3 and ids[1] == "toolu_fixed_1"

            # Answer in reverse order: results pair by id, not by position.
            messages.append({"role": "assistant", "content": first.content})
            messages.append({"role": "user", "content": list(reversed(run_tools(first, [])))})
            second = await anthropic_turn(client, mode, messages=messages, tools=TOOLS)

        assert second.stop_reason == "end_turn"
        assert len(second.text.split()) == 9
        entries = door.journal()
        assert [(e["instruction_id"], e["turn_index"], e["status"]) for e in entries] == [
            ("fan-out", 0, 200), ("gather", 1, 200)]

    asyncio.run(main())


@SYNC_ASYNC
def test_a_missing_tool_result_is_rejected_as_bad_request(door: Any, is_async: bool) -> None:
    chain = script({"messages": [{"tool_call": [{"name": "get_time", "args": {"tz": "UTC"}},
                                                {"name": "get_time", "args": {"tz": "CET"}}]}]},
                   {"messages": [{"text_message": {"length": 3}}]})

    async def main() -> None:
        async with anthropic_client(door, is_async) as client:
            messages: list[dict[str, Any]] = [{"role": "user", "content": chain}]
            first = await anthropic_turn(client, "json", messages=messages, tools=TOOLS)
            messages.append({"role": "assistant", "content": first.content})
            messages.append({"role": "user", "content": run_tools(first, [])[:1]})
            with pytest.raises(anthropic.BadRequestError) as info:
                await anthropic_turn(client, "json", messages=messages, tools=TOOLS)
        error = info.value
        assert error.status_code == 400
        assert error.body["error"]["type"] == "invalid_request_error"
        missing = first.tool_uses[1][0]
        assert f"tool_use` ids were found without `tool_result` blocks immediately after: {missing}" in (
            error.body["error"]["message"])

    asyncio.run(main())


# -- thinking ----------------------------------------------------------------------------


@SYNC_ASYNC
@ALL_MODES
def test_thinking_blocks_come_first_and_go_back_with_tool_results(door: Any, is_async: bool, mode: str) -> None:
    chain = script(
        {"id": "think-call", "reasoning": {"text": "The user wants weather, so call the tool."},
         "messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Rome"}}]}]},
        {"id": "think-answer", "reasoning": {"length": 7},
         "messages": [{"text_message": {"text": "Rome is sunny."}}]},
    )

    async def main() -> None:
        door.reset_journal()
        async with anthropic_client(door, is_async) as client:
            messages: list[dict[str, Any]] = [{"role": "user", "content": chain}]
            turns, executed = await agent_loop(client, mode, messages, thinking=THINKING)
        assert executed == [("get_weather", {"city": "Rome"})]
        assert [t.kinds() for t in turns] == [["thinking", "tool_use"], ["thinking", "text"]]
        assert turns[0].thinking == "The user wants weather, so call the tool."
        assert turns[1].thinking is not None and len(turns[1].thinking.split()) == 7
        assert turns[1].text == "Rome is sunny."
        signatures = [Turn._get(t.blocks("thinking")[0], "signature") for t in turns]
        assert all(signatures) and signatures[0] != signatures[1]
        # The thinking block went back, signature and all, and the request was accepted.
        assert Turn._get(messages[1]["content"][0], "signature") == signatures[0]
        entries = door.journal()
        assert [(e["instruction_id"], e["turn_index"], e["status"]) for e in entries] == [
            ("think-call", 0, 200), ("think-answer", 1, 200)]

    asyncio.run(main())


@SYNC_ASYNC
def test_stream_helper_emits_thinking_and_signature_events(door: Any, is_async: bool) -> None:
    chain = script({"reasoning": {"text": "First think, then act."},
                    "messages": [{"tool_call": [{"name": "get_time", "args": {"tz": "Asia/Tokyo"}}]}]})

    async def main() -> None:
        async with anthropic_client(door, is_async) as client:
            turn = await anthropic_turn(client, "helper", messages=[{"role": "user", "content": chain}],
                                        tools=TOOLS, thinking=THINKING)
        thinking = [e for e in turn.events if e.type == "thinking"]
        assert [e.thinking for e in thinking] == ["First ", "think, ", "then ", "act."]
        assert thinking[-1].snapshot == "First think, then act."
        signature = [e.signature for e in turn.events if e.type == "signature"]
        assert signature == [turn.blocks("thinking")[0].signature]

    asyncio.run(main())


@pytest.mark.parametrize("budget", [512, 2048])
def test_a_thinking_budget_the_api_refuses_is_a_bad_request(door: Any, budget: int) -> None:
    chain = script({"messages": [{"text_message": {"length": 3}}]})
    with door.anthropic() as client, pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, messages=[{"role": "user", "content": chain}],
                               thinking={"type": "enabled", "budget_tokens": budget})
    assert "budget_tokens" in info.value.body["error"]["message"]


# -- usage -------------------------------------------------------------------------------


@SYNC_ASYNC
@ALL_MODES
def test_usage_counts_input_and_output_tokens(door: Any, is_async: bool, mode: str) -> None:
    chain = script({"messages": [{"text_message": {"length": 40}}]})

    async def main() -> None:
        async with anthropic_client(door, is_async) as client:
            turn = await anthropic_turn(client, mode, messages=[{"role": "user", "content": chain}])
            whole = await anthropic_turn(client, "json", messages=[{"role": "user", "content": chain}])
        usage = turn.usage if isinstance(turn.usage, dict) else turn.usage.model_dump()
        assert usage["input_tokens"] > 0
        assert usage["output_tokens"] > 1
        # input_tokens is estimated from the request body, which "stream": true lengthens.
        assert abs(usage["input_tokens"] - whole.usage.input_tokens) <= 3
        assert usage["output_tokens"] == whole.usage.output_tokens

    asyncio.run(main())


# -- retries and errors ------------------------------------------------------------------


@SYNC_ASYNC
@pytest.mark.parametrize("mode", ["json", "helper"])
def test_a_429_is_retried_and_then_succeeds(door: Any, is_async: bool, mode: str) -> None:
    chain = script({"id": "flaky", "error": {"status": 429, "retry_after_ms": 1, "times": 1},
                    "messages": [{"text_message": {"text": "Worked on the second try."}}]})

    async def main() -> None:
        door.reset_journal()
        async with anthropic_client(door, is_async, max_retries=2) as client:
            turn = await anthropic_turn(client, mode, messages=[{"role": "user", "content": chain}])
        assert turn.text == "Worked on the second try."
        entries = door.journal()
        assert [(e["attempt"], e["status"], e["instruction_id"]) for e in entries] == [
            (0, 429, "flaky"), (1, 200, "flaky")]

    asyncio.run(main())


# Each status is raised once streamed and once not, once sync and once async.
ERROR_CASES = [
    (400, anthropic.BadRequestError, "invalid_request_error", "json", False),
    (400, anthropic.BadRequestError, "invalid_request_error", "sse", True),
    (429, anthropic.RateLimitError, "rate_limit_error", "json", True),
    (429, anthropic.RateLimitError, "rate_limit_error", "helper", False),
    (500, anthropic.InternalServerError, "api_error", "json", False),
    (500, anthropic.InternalServerError, "api_error", "helper", True),
    (529, anthropic.OverloadedError, "overloaded_error", "json", True),
    (529, anthropic.OverloadedError, "overloaded_error", "sse", False),
]


@pytest.mark.parametrize(("status", "error_class", "error_type", "mode", "is_async"), ERROR_CASES,
                         ids=[f"{c[0]}-{c[3]}-{'async' if c[4] else 'sync'}" for c in ERROR_CASES])
def test_scripted_http_errors_raise_the_sdk_classes(door: Any, status: int, error_class: type[Exception],
                                                     error_type: str, mode: str, is_async: bool) -> None:
    chain = script({"error": {"status": status}})

    async def main() -> None:
        door.reset_journal()
        async with anthropic_client(door, is_async) as client:
            with pytest.raises(error_class) as info:
                await anthropic_turn(client, mode, messages=[{"role": "user", "content": chain}])
        error = info.value
        assert error.status_code == status
        assert error.body["type"] == "error"
        assert error.body["error"]["type"] == error_type
        assert error.body["error"]["message"]
        assert error.request_id is not None and error.request_id.startswith("req_")
        if status == 529 and int(anthropic.__version__.split(".")[0]) >= 1:
            # anthropic>=1 files OverloadedError under InternalServerError (0.x does not).
            assert isinstance(error, anthropic.InternalServerError)
        assert [e["status"] for e in door.journal()] == [status]

    asyncio.run(main())


@SYNC_ASYNC
@pytest.mark.parametrize("mode", ["sse", "helper"])
def test_a_mid_stream_error_raises_api_status_error_and_is_not_retried(door: Any, is_async: bool,
                                                                         mode: str) -> None:
    chain = script({"error": {"status": 529, "after_chunks": 6},
                    "messages": [{"text_message": {"text": "one two three four five six"}}]})

    async def main() -> None:
        door.reset_journal()
        received: list[str] = []
        kwargs = {"model": MODEL, "max_tokens": MAX_TOKENS, "messages": [{"role": "user", "content": chain}]}
        async with anthropic_client(door, is_async, max_retries=2) as client:
            with pytest.raises(anthropic.APIStatusError) as info:
                if is_async and mode == "sse":
                    async with await client.messages.create(stream=True, **kwargs) as stream:
                        async for event in stream:
                            if event.type == "content_block_delta":
                                received.append(event.delta.text)
                elif mode == "sse":
                    with client.messages.create(stream=True, **kwargs) as stream:
                        for event in stream:
                            if event.type == "content_block_delta":
                                received.append(event.delta.text)
                elif is_async:
                    async with client.messages.stream(**kwargs) as helper:
                        async for text in helper.text_stream:
                            received.append(text)
                else:
                    with client.messages.stream(**kwargs) as helper:
                        for text in helper.text_stream:
                            received.append(text)  # noqa: PERF402 (keep what came before the error)
        error = info.value
        assert error.status_code == 200  # the HTTP status of the stream that failed
        assert error.body == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        # message_start, ping, content_block_start, then three deltas arrived first.
        assert "".join(received) == "one two three "
        assert [(e["attempt"], e["status"]) for e in door.journal()] == [(0, 200)]

    asyncio.run(main())


# -- the stream helper and raw events ----------------------------------------------------


@SYNC_ASYNC
def test_stream_helper_accumulates_to_the_non_streamed_message(door: Any, is_async: bool) -> None:
    chain = script({"id": "mixed", "chunk_words": 2, "messages": [
        {"text_message": {"length": 11}},
        {"tool_call": [{"name": "convert", "args": {"amount": 12.75, "unit": "miles per hour"}},
                       {"name": "get_time", "args": {"tz": "America/Argentina/Buenos_Aires"}}]},
        {"text_message": {"text": "Done."}},
    ]})
    kwargs = {"model": MODEL, "max_tokens": MAX_TOKENS, "tools": TOOLS,
              "messages": [{"role": "user", "content": chain}]}

    async def main() -> None:
        texts: list[str]
        async with anthropic_client(door, is_async) as client:
            if is_async:
                async with client.messages.stream(**kwargs) as stream:
                    texts = [text async for text in stream.text_stream]
                    final = await stream.get_final_message()
                whole = await client.messages.create(**kwargs)
            else:
                with client.messages.stream(**kwargs) as stream:
                    texts = list(stream.text_stream)
                    final = stream.get_final_message()
                whole = client.messages.create(**kwargs)
        assert [b.type for b in final.content] == ["text", "tool_use", "tool_use", "text"]
        assert len(texts) == 7  # 11 words two a delta, then "Done."
        assert "".join(texts) == final.content[0].text + "Done."
        # input_tokens is estimated from the request body, which "stream": true lengthens.
        skip = {"content": True, "usage": {"input_tokens"}}
        assert final.model_dump(exclude=skip) == whole.model_dump(exclude=skip)
        assert [b.model_dump(exclude_none=True) for b in final.content] == [
            b.model_dump(exclude_none=True) for b in whole.content]
        assert final.content[1].input == {"amount": 12.75, "unit": "miles per hour"}
        assert final.stop_reason == "tool_use"

    asyncio.run(main())


@SYNC_ASYNC
def test_stream_helper_input_json_snapshots_grow_to_the_full_input(door: Any, is_async: bool) -> None:
    args = {"amount": 1234.5, "unit": "degrees \"Kelvin\" \u00b0K"}
    chain = script({"messages": [{"tool_call": [{"name": "convert", "args": args}]}]})

    async def main() -> None:
        async with anthropic_client(door, is_async) as client:
            turn = await anthropic_turn(client, "helper", messages=[{"role": "user", "content": chain}], tools=TOOLS)
        pieces = [e for e in turn.events if e.type == "input_json"]
        assert len(pieces) > 3  # split mid-token into several deltas
        assert json.loads("".join(e.partial_json for e in pieces)) == args
        assert pieces[-1].snapshot == args
        stops = [e for e in turn.events if e.type == "content_block_stop"]
        assert stops[-1].content_block.input == args

    asyncio.run(main())


@SYNC_ASYNC
def test_raw_stream_events_follow_the_message_lifecycle(door: Any, is_async: bool) -> None:
    chain = script({"reasoning": {"length": 2},
                    "messages": [{"text_message": {"length": 2}},
                                 {"tool_call": [{"name": "get_weather", "args": {"city": "Bern"}}]}]})

    async def main() -> None:
        async with anthropic_client(door, is_async) as client:
            turn = await anthropic_turn(client, "sse", messages=[{"role": "user", "content": chain}],
                                        tools=TOOLS, thinking=THINKING)
        kinds = [(e.type, getattr(getattr(e, "delta", None), "type", None)) for e in turn.events]
        assert kinds == [
            ("message_start", None),
            ("content_block_start", None),
            ("content_block_delta", "thinking_delta"), ("content_block_delta", "thinking_delta"),
            ("content_block_delta", "signature_delta"),
            ("content_block_stop", None),
            ("content_block_start", None),
            ("content_block_delta", "text_delta"), ("content_block_delta", "text_delta"),
            ("content_block_stop", None),
            ("content_block_start", None),
            ("content_block_delta", "input_json_delta"), ("content_block_delta", "input_json_delta"),
            ("content_block_stop", None),
            ("message_delta", None),
            ("message_stop", None),
        ]
        indexes = [e.index for e in turn.events if e.type == "content_block_start"]
        assert indexes == [0, 1, 2]
        start = turn.events[0].message
        assert start.role == "assistant" and start.content == [] and start.stop_reason is None
        assert turn.kinds() == ["thinking", "text", "tool_use"]
        assert turn.stop_reason == "tool_use"

    asyncio.run(main())
