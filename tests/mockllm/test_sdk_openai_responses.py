"""The official ``openai`` SDK against the mock's Responses API, through both doors.

Every test runs through the in-process transport and the loopback server (the ``door``
fixture), with the sync and the async client. A model call is made in one of three
ways: ``json`` (``responses.create``), ``sse`` (``create(stream=True)``, output items
rebuilt here from the raw events) and ``helper`` (``responses.stream`` and its
``get_final_response()``). Async code runs under ``asyncio.run``; the sync client is
called from the same coroutines so that one driver serves both.

The mock is stateless: an agent sends the whole conversation in ``input`` — the
previous response's output items, then one ``function_call_output`` per call.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import openai
import pytest

from tests.mockllm.sdk_responses_support import (
    MODEL,
    TOOLS,
    agent_loop,
    responses_turn,
    run_tools,
)
from tests.mockllm.sdk_support import ALL_MODES, LOOP_SCRIPT, SYNC_ASYNC, openai_client, script


# -- tool loops --------------------------------------------------------------------------

@SYNC_ASYNC
@ALL_MODES
def test_three_turn_tool_loop_runs_each_scripted_turn(door: Any, is_async: bool, mode: str) -> None:
    async def main() -> None:
        door.reset_journal()
        async with openai_client(door, is_async) as client:
            items: list[Any] = [{"role": "user", "content": LOOP_SCRIPT}]
            turns, executed = await agent_loop(client, mode, items, instructions="You are terse.")

        assert [t.kinds() for t in turns] == [["message", "function_call"], ["function_call"], ["message"]]
        assert [t.response.status for t in turns] == ["completed"] * 3
        assert turns[0].response.output_text == "Let me check the weather."
        assert turns[2].response.output_text == "It is sunny in Paris, and it is noon."
        assert executed == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Europe/Paris"})]
        assert turns[0].calls[0].call_id != turns[1].calls[0].call_id
        assert turns[0].response.instructions == "You are terse."
        assert len({t.response.id for t in turns}) == 3
        assert [getattr(i, "type", None) or i.get("type", "message") for i in items] == [
            "message", "message", "function_call", "function_call_output",
            "function_call", "function_call_output", "message"]

        entries = door.journal()
        assert [(e["instruction_id"], e["turn_index"], e["status"]) for e in entries] == [
            ("look-up", 0, 200), ("clock", 1, 200), ("answer", 2, 200)]
        assert {e["protocol"] for e in entries} == {"openai-responses"}
        assert {e["stream"] for e in entries} == {mode != "json"}
        assert len({e["chain_id"] for e in entries}) == 1

    asyncio.run(main())


@SYNC_ASYNC
@ALL_MODES
def test_parallel_function_calls_have_distinct_ids_and_pair_back(door: Any, is_async: bool, mode: str) -> None:
    chain = script(
        {"id": "fan-out", "messages": [{"tool_call": [
            {"name": "get_weather", "args": {"city": "Oslo"}},
            {"name": "convert", "args": {"amount": 2.5, "unit": "km"}, "id": "call_fixed_1"},
            {"name": "get_weather", "args": {"city": "Lima"}},
        ]}]},
        {"id": "gather", "messages": [{"text_message": {"length": 9}}]},
    )

    async def main() -> None:
        door.reset_journal()
        async with openai_client(door, is_async) as client:
            items: list[Any] = [{"role": "user", "content": chain}]
            first = await responses_turn(client, mode, input=items, tools=TOOLS)
            assert [(c.name, json.loads(c.arguments)) for c in first.calls] == [
                ("get_weather", {"city": "Oslo"}),
                ("convert", {"amount": 2.5, "unit": "km"}),
                ("get_weather", {"city": "Lima"}),
            ]
            call_ids = [c.call_id for c in first.calls]
            assert len(set(call_ids)) == 3 and call_ids[1] == "call_fixed_1"
            assert len({c.id for c in first.calls}) == 3  # item ids too

            # Answer in reverse order: results pair by call_id, not by position.
            items.extend(first.output)
            items.extend(reversed(run_tools(first, [])))
            second = await responses_turn(client, mode, input=items, tools=TOOLS)

        assert second.kinds() == ["message"]
        assert len(second.response.output_text.split()) == 9
        if mode == "helper":
            done = [e for e in first.events if e.type == "response.function_call_arguments.done"]
            assert [(e.output_index, json.loads(e.arguments)) for e in done] == [
                (0, {"city": "Oslo"}), (1, {"amount": 2.5, "unit": "km"}), (2, {"city": "Lima"})]
        entries = door.journal()
        assert [(e["instruction_id"], e["turn_index"], e["status"]) for e in entries] == [
            ("fan-out", 0, 200), ("gather", 1, 200)]

    asyncio.run(main())


@SYNC_ASYNC
def test_a_missing_function_output_is_rejected_as_bad_request(door: Any, is_async: bool) -> None:
    chain = script({"messages": [{"tool_call": [{"name": "get_time", "args": {"tz": "UTC"}},
                                                {"name": "get_time", "args": {"tz": "CET"}}]}]},
                   {"messages": [{"text_message": {"length": 3}}]})

    async def main() -> None:
        async with openai_client(door, is_async) as client:
            items: list[Any] = [{"role": "user", "content": chain}]
            first = await responses_turn(client, "json", input=items, tools=TOOLS)
            items.extend(first.output)
            items.append(run_tools(first, [])[0])
            with pytest.raises(openai.BadRequestError) as info:
                await responses_turn(client, "json", input=items, tools=TOOLS)
        assert info.value.status_code == 400
        assert info.value.param == "input"
        # openai 2.x prefixes "Error code: 400 - " and the body; 3.x gives the message alone.
        assert f"No tool output found for function call {first.calls[1].call_id}." in info.value.message

    asyncio.run(main())


@SYNC_ASYNC
def test_previous_response_id_is_refused_with_a_reason(door: Any, is_async: bool) -> None:
    async def main() -> None:
        async with openai_client(door, is_async) as client:
            with pytest.raises(openai.BadRequestError) as info:
                await responses_turn(client, "json", input="hello", previous_response_id="resp_123")
        assert info.value.param == "previous_response_id"
        assert "not found" in info.value.message

    asyncio.run(main())


# -- reasoning ---------------------------------------------------------------------------


@SYNC_ASYNC
@ALL_MODES
def test_a_reasoning_item_comes_first_and_goes_back_with_the_outputs(door: Any, is_async: bool, mode: str) -> None:
    chain = script(
        {"id": "think-call", "reasoning": {"text": "The user wants weather, so call the tool."},
         "messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Rome"}}]}]},
        {"id": "think-answer", "reasoning": {"length": 7},
         "messages": [{"text_message": {"text": "Rome is sunny."}}]},
    )

    async def main() -> None:
        door.reset_journal()
        async with openai_client(door, is_async) as client:
            items: list[Any] = [{"role": "user", "content": chain}]
            turns, executed = await agent_loop(client, mode, items,
                                               reasoning={"effort": "low", "summary": "auto"})
        assert executed == [("get_weather", {"city": "Rome"})]
        assert [t.kinds() for t in turns] == [["reasoning", "function_call"], ["reasoning", "message"]]
        assert turns[0].reasoning == "The user wants weather, so call the tool."
        assert turns[1].reasoning is not None and len(turns[1].reasoning.split()) == 7
        assert turns[1].response.output_text == "Rome is sunny."
        assert turns[0].response.usage.output_tokens_details.reasoning_tokens == 8
        if mode == "helper":
            deltas = [e.delta for e in turns[0].events if e.type == "response.reasoning_summary_text.delta"]
            assert deltas == ["The ", "user ", "wants ", "weather, ", "so ", "call ", "the ", "tool."]
        entries = door.journal()
        assert [(e["instruction_id"], e["turn_index"], e["status"]) for e in entries] == [
            ("think-call", 0, 200), ("think-answer", 1, 200)]

    asyncio.run(main())


# -- usage -------------------------------------------------------------------------------


@SYNC_ASYNC
@ALL_MODES
def test_usage_counts_input_and_output_tokens(door: Any, is_async: bool, mode: str) -> None:
    chain = script({"messages": [{"text_message": {"length": 40}}]})

    async def main() -> None:
        async with openai_client(door, is_async) as client:
            turn = await responses_turn(client, mode, input=[{"role": "user", "content": chain}])
            whole = await responses_turn(client, "json", input=[{"role": "user", "content": chain}])
        usage = turn.response.usage
        assert usage.input_tokens > 0 and usage.output_tokens > 1
        assert usage.total_tokens == usage.input_tokens + usage.output_tokens
        assert usage.output_tokens_details.reasoning_tokens == 0
        assert usage.output_tokens == whole.response.usage.output_tokens

    asyncio.run(main())


# -- retries and errors ------------------------------------------------------------------


@SYNC_ASYNC
@pytest.mark.parametrize("mode", ["json", "helper"])
def test_a_429_is_retried_and_then_succeeds(door: Any, is_async: bool, mode: str) -> None:
    chain = script({"id": "flaky", "error": {"status": 429, "retry_after_ms": 1, "times": 1},
                    "messages": [{"text_message": {"text": "Worked on the second try."}}]})

    async def main() -> None:
        door.reset_journal()
        async with openai_client(door, is_async, max_retries=2) as client:
            turn = await responses_turn(client, mode, input=chain)
        assert turn.response.output_text == "Worked on the second try."
        assert [(e["attempt"], e["status"], e["instruction_id"]) for e in door.journal()] == [
            (0, 429, "flaky"), (1, 200, "flaky")]

    asyncio.run(main())


# Each status is raised once streamed and once not, once sync and once async.
ERROR_CASES = [
    (400, openai.BadRequestError, "json", False), (400, openai.BadRequestError, "sse", True),
    (429, openai.RateLimitError, "json", True), (429, openai.RateLimitError, "helper", False),
    (500, openai.InternalServerError, "json", False), (500, openai.InternalServerError, "sse", True),
    (503, openai.InternalServerError, "json", True), (503, openai.InternalServerError, "helper", False),
]


@pytest.mark.parametrize(("status", "error_class", "mode", "is_async"), ERROR_CASES,
                         ids=[f"{c[0]}-{c[2]}-{'async' if c[3] else 'sync'}" for c in ERROR_CASES])
def test_scripted_http_errors_raise_the_sdk_classes(door: Any, status: int, error_class: type[Exception],
                                                     mode: str, is_async: bool) -> None:
    chain = script({"error": {"status": status}})

    async def main() -> None:
        door.reset_journal()
        async with openai_client(door, is_async) as client:
            with pytest.raises(error_class) as info:
                await responses_turn(client, mode, input=chain)
        error = info.value
        assert error.status_code == status
        assert isinstance(error.body, dict) and error.body["message"]
        # OpenAI's usual type and code for the status, since the script gave none.
        assert error.type == {400: "invalid_request_error", 429: "requests"}.get(status, "server_error")
        assert error.code == ("rate_limit_exceeded" if status == 429 else None)
        assert error.request_id is not None and error.request_id.startswith("req_")
        assert [e["status"] for e in door.journal()] == [status]

    asyncio.run(main())


@SYNC_ASYNC
@pytest.mark.parametrize("mode", ["sse", "helper"])
def test_a_mid_stream_error_raises_api_error_and_is_not_retried(door: Any, is_async: bool, mode: str) -> None:
    chain = script({"error": {"status": 500, "after_chunks": 7, "message": "stream broke"},
                    "messages": [{"text_message": {"text": "one two three four five six"}}]})

    async def main() -> None:
        door.reset_journal()
        received: list[str] = []
        kwargs = {"model": MODEL, "input": chain}
        async with openai_client(door, is_async, max_retries=2) as client:
            with pytest.raises(openai.APIError) as info:
                if is_async and mode == "sse":
                    async with await client.responses.create(stream=True, **kwargs) as stream:
                        async for event in stream:
                            if event.type == "response.output_text.delta":
                                received.append(event.delta)
                elif mode == "sse":
                    with client.responses.create(stream=True, **kwargs) as stream:
                        for event in stream:
                            if event.type == "response.output_text.delta":
                                received.append(event.delta)
                elif is_async:
                    async with client.responses.stream(**kwargs) as helper:
                        async for event in helper:
                            if event.type == "response.output_text.delta":
                                received.append(event.delta)
                else:
                    with client.responses.stream(**kwargs) as helper:
                        for event in helper:
                            if event.type == "response.output_text.delta":
                                received.append(event.delta)
        assert not isinstance(info.value, openai.APIStatusError)
        assert info.value.message == "stream broke"
        # created, in_progress, item added, part added, then three deltas arrived first.
        assert "".join(received) == "one two three "
        assert [(e["attempt"], e["status"]) for e in door.journal()] == [(0, 200)]

    asyncio.run(main())


# -- the stream helper -------------------------------------------------------------------


@SYNC_ASYNC
def test_stream_helper_accumulates_to_the_non_streamed_response(door: Any, is_async: bool) -> None:
    chain = script({"id": "mixed", "chunk_words": 2, "messages": [
        {"text_message": {"length": 11}},
        {"tool_call": [{"name": "convert", "args": {"amount": 12.75, "unit": "miles per hour"}},
                       {"name": "get_time", "args": {"tz": "America/Argentina/Buenos_Aires"}}]},
        {"text_message": {"text": "Done."}},
    ]})
    kwargs = {"input": [{"role": "user", "content": chain}], "tools": TOOLS}

    async def main() -> None:
        async with openai_client(door, is_async) as client:
            streamed = await responses_turn(client, "helper", **kwargs)
            whole = await responses_turn(client, "json", **kwargs)
        final = streamed.response
        assert streamed.kinds() == ["message", "function_call", "function_call", "message"]
        deltas = [e for e in streamed.events if e.type == "response.output_text.delta"]
        assert len(deltas) == 7  # 11 words two a delta, then "Done."
        assert "".join(e.delta for e in deltas) == final.output_text == whole.response.output_text
        assert deltas[-1].snapshot == "Done."
        arg_done = [e for e in streamed.events if e.type == "response.function_call_arguments.done"]
        assert [json.loads(e.arguments) for e in arg_done] == [
            {"amount": 12.75, "unit": "miles per hour"}, {"tz": "America/Argentina/Buenos_Aires"}]
        assert [e.type for e in streamed.events][:2] == ["response.created", "response.in_progress"]
        assert streamed.events[-1].type == "response.completed"
        # input_tokens is estimated from the request body, which "stream": true lengthens.
        skip = {"usage": {"input_tokens", "total_tokens"}}
        # The helper's ParsedResponse adds "parsed" fields (None for text) and, the tools
        # being strict, parsed_arguments; the rest is the non-streamed response.
        assert [c.parsed_arguments for c in streamed.calls] == [json.loads(c.arguments) for c in whole.calls]
        streamed_dump = final.model_dump(exclude=skip, exclude_none=True)
        for item in streamed_dump["output"]:
            item.pop("parsed_arguments", None)
        assert streamed_dump == whole.response.model_dump(exclude=skip, exclude_none=True)

    asyncio.run(main())


@SYNC_ASYNC
def test_stream_helper_text_deltas_and_output_text(door: Any, is_async: bool) -> None:
    chain = script({"messages": [{"text_message": {"text": "Hello there, agent."}}]})

    async def main() -> None:
        async with openai_client(door, is_async) as client:
            if is_async:
                async with client.responses.stream(model=MODEL, input=chain) as stream:
                    texts = [e.delta async for e in stream if e.type == "response.output_text.delta"]
                    final = await stream.get_final_response()
            else:
                with client.responses.stream(model=MODEL, input=chain) as stream:
                    texts = [e.delta for e in stream if e.type == "response.output_text.delta"]
                    final = stream.get_final_response()
        assert texts == ["Hello ", "there, ", "agent."]
        assert final.output_text == "Hello there, agent."
        assert final.status == "completed" and final.model == MODEL

    asyncio.run(main())
