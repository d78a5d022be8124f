"""The official ``openai`` SDK against the mock's Chat Completions, through both doors.

Every test runs through the in-process transport and the loopback server (the ``door``
fixture), with the sync and the async client. A model call is made in one of three
ways: ``json`` (``create``), ``sse`` (``create(stream=True)``, chunks accumulated here
the way an agent loop would) and ``helper`` (``chat.completions.stream`` and its
``get_final_completion()``). Async code runs under ``asyncio.run``; the sync client is
called from the same coroutines so that one driver serves both.
"""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest

from tests.mockllm.sdk_chat_support import (
    MODEL,
    TOOLS,
    agent_loop,
    chat_turn,
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
            messages = [{"role": "system", "content": "You are terse."},
                        {"role": "user", "content": LOOP_SCRIPT}]
            turns, executed = await agent_loop(client, mode, messages)

        assert [t.finish_reason for t in turns] == ["tool_calls", "tool_calls", "stop"]
        assert turns[0].content == "Let me check the weather."
        assert turns[1].content is None
        assert turns[2].content == "It is sunny in Paris, and it is noon."
        assert turns[2].tool_calls == []
        assert executed == [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "Europe/Paris"})]
        assert turns[0].tool_calls[0].id != turns[1].tool_calls[0].id
        # The history the agent built pairs each call with its result.
        assert [m["role"] for m in messages] == [
            "system", "user", "assistant", "tool", "assistant", "tool", "assistant"]

        entries = door.journal()
        assert [(e["instruction_id"], e["turn_index"], e["status"]) for e in entries] == [
            ("look-up", 0, 200), ("clock", 1, 200), ("answer", 2, 200)]
        assert {e["protocol"] for e in entries} == {"openai-chat"}
        assert {e["stream"] for e in entries} == {mode != "json"}
        assert len({e["chain_id"] for e in entries}) == 1

    asyncio.run(main())


@SYNC_ASYNC
@ALL_MODES
def test_parallel_tool_calls_have_distinct_ids_and_pair_back(door: Any, is_async: bool, mode: str) -> None:
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
            messages: list[dict[str, Any]] = [{"role": "user", "content": chain}]
            first = await chat_turn(client, mode, messages=messages, tools=TOOLS, parallel_tool_calls=True)
            assert first.finish_reason == "tool_calls"
            assert [(c.name, c.args) for c in first.tool_calls] == [
                ("get_weather", {"city": "Oslo"}),
                ("convert", {"amount": 2.5, "unit": "km"}),
                ("get_weather", {"city": "Lima"}),
            ]
            ids = [c.id for c in first.tool_calls]
            assert len(set(ids)) == 3 and ids[1] == "call_fixed_1"
            assert all(i.startswith("call_") for i in ids)

            # Answer in reverse order: results pair by id, not by position.
            messages.append(first.assistant_message())
            results = run_tools(first, [])
            messages.extend(reversed(results))
            second = await chat_turn(client, mode, messages=messages, tools=TOOLS)

        assert second.finish_reason == "stop"
        assert second.content is not None and len(second.content.split()) == 9
        if mode == "helper":
            done = [e for e in first.events if e.type == "tool_calls.function.arguments.done"]
            assert [(e.index, e.name, e.parsed_arguments) for e in done] == [
                (0, "get_weather", {"city": "Oslo"}),
                (1, "convert", {"amount": 2.5, "unit": "km"}),
                (2, "get_weather", {"city": "Lima"}),
            ]
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
        async with openai_client(door, is_async) as client:
            messages: list[dict[str, Any]] = [{"role": "user", "content": chain}]
            first = await chat_turn(client, "json", messages=messages, tools=TOOLS)
            messages.append(first.assistant_message())
            messages.append(run_tools(first, [])[0])  # the second call is left unanswered
            with pytest.raises(openai.BadRequestError) as info:
                await chat_turn(client, "json", messages=messages, tools=TOOLS)
        error = info.value
        assert error.status_code == 400
        assert error.param == "messages.[1].role"
        assert first.tool_calls[1].id in error.message
        assert first.tool_calls[0].id not in error.message

    asyncio.run(main())


# -- reasoning ---------------------------------------------------------------------------


@SYNC_ASYNC
@ALL_MODES
def test_reasoning_content_comes_with_tool_use(door: Any, is_async: bool, mode: str) -> None:
    chain = script(
        {"id": "think-call", "reasoning": {"text": "The user wants weather, so call the tool."},
         "messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Rome"}}]}]},
        {"id": "think-answer", "reasoning": {"length": 7},
         "messages": [{"text_message": {"text": "Rome is sunny."}}]},
    )

    async def main() -> None:
        async with openai_client(door, is_async) as client:
            turns, executed = await agent_loop(client, mode, [{"role": "user", "content": chain}])
        assert executed == [("get_weather", {"city": "Rome"})]
        assert turns[0].reasoning == "The user wants weather, so call the tool."
        assert turns[0].content is None
        assert turns[1].reasoning is not None and len(turns[1].reasoning.split()) == 7
        assert turns[1].content == "Rome is sunny."
        if mode == "sse":
            # One word per delta, each on its own chunk, all before any tool call.
            pieces = [getattr(c.choices[0].delta, "reasoning_content", None)
                      for c in turns[0].chunks if c.choices]
            pieces = [p for p in pieces if p is not None]
            assert pieces == ["The ", "user ", "wants ", "weather, ", "so ", "call ", "the ", "tool."]

    asyncio.run(main())


# -- usage -------------------------------------------------------------------------------


@SYNC_ASYNC
def test_include_usage_adds_a_last_chunk_with_usage_and_no_choices(door: Any, is_async: bool) -> None:
    chain = script({"messages": [{"text_message": {"length": 12}}]})

    async def main() -> None:
        async with openai_client(door, is_async) as client:
            turn = await chat_turn(client, "sse", messages=[{"role": "user", "content": chain}],
                                   stream_options={"include_usage": True})
            plain = await chat_turn(client, "sse", messages=[{"role": "user", "content": chain}])
            whole = await chat_turn(client, "json", messages=[{"role": "user", "content": chain}])
        *body, last = turn.chunks
        assert last.choices == []
        assert last.usage is not None
        assert last.usage.prompt_tokens > 0 and last.usage.completion_tokens > 0
        assert last.usage.total_tokens == last.usage.prompt_tokens + last.usage.completion_tokens
        assert all(c.usage is None and len(c.choices) == 1 for c in body)
        assert body[-1].choices[0].finish_reason == "stop"
        assert len({c.id for c in turn.chunks}) == 1 and len({c.created for c in turn.chunks}) == 1
        # Without stream_options no usage chunk is sent (LangChain relies on that).
        assert all(c.usage is None and c.choices for c in plain.chunks)
        assert plain.content == turn.content == whole.content
        assert whole.usage.completion_tokens == last.usage.completion_tokens

    asyncio.run(main())


@SYNC_ASYNC
def test_stream_helper_reports_usage(door: Any, is_async: bool) -> None:
    chain = script({"messages": [{"text_message": {"length": 5}}]})

    async def main() -> None:
        async with openai_client(door, is_async) as client:
            turn = await chat_turn(client, "helper", messages=[{"role": "user", "content": chain}],
                                   stream_options={"include_usage": True})
        assert turn.usage is not None and turn.usage.prompt_tokens > 0 and turn.usage.completion_tokens > 0

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
            turn = await chat_turn(client, mode, messages=[{"role": "user", "content": chain}])
        assert turn.content == "Worked on the second try."
        entries = door.journal()
        assert [(e["attempt"], e["status"], e["instruction_id"]) for e in entries] == [
            (0, 429, "flaky"), (1, 200, "flaky")]

    asyncio.run(main())


# Each status is raised once streamed and once not, once sync and once async.
ERROR_CASES = [
    (400, openai.BadRequestError, "json", False), (400, openai.BadRequestError, "sse", True),
    (429, openai.RateLimitError, "json", True), (429, openai.RateLimitError, "helper", False),
    (500, openai.InternalServerError, "json", False), (500, openai.InternalServerError, "helper", True),
    (503, openai.InternalServerError, "json", True), (503, openai.InternalServerError, "sse", False),
]


@pytest.mark.parametrize(("status", "error_class", "mode", "is_async"), ERROR_CASES,
                         ids=[f"{c[0]}-{c[2]}-{'async' if c[3] else 'sync'}" for c in ERROR_CASES])
def test_scripted_http_errors_raise_the_sdk_classes(door: Any, status: int, error_class: type[Exception],
                                                     mode: str, is_async: bool) -> None:
    chain = script({"error": {"status": status, "message": f"scripted {status}"}})

    async def main() -> None:
        door.reset_journal()
        async with openai_client(door, is_async) as client:
            with pytest.raises(error_class) as info:
                await chat_turn(client, mode, messages=[{"role": "user", "content": chain}])
        error = info.value
        assert isinstance(error, openai.APIStatusError)
        assert error.status_code == status
        assert f"scripted {status}" in error.message
        assert isinstance(error.body, dict) and error.body["message"] == f"scripted {status}"
        # OpenAI's usual type for the status, since the script gave none.
        assert error.type == {400: "invalid_request_error", 429: "requests"}.get(status, "server_error")
        assert error.request_id is not None and error.request_id.startswith("req_")
        assert [e["status"] for e in door.journal()] == [status]

    asyncio.run(main())


@SYNC_ASYNC
def test_an_error_on_every_attempt_exhausts_the_retries(door: Any, is_async: bool) -> None:
    chain = script({"id": "down", "error": {"status": 500, "retry_after_ms": 1}})

    async def main() -> None:
        door.reset_journal()
        async with openai_client(door, is_async, max_retries=2) as client:
            with pytest.raises(openai.InternalServerError):
                await chat_turn(client, "json", messages=[{"role": "user", "content": chain}])
        assert [(e["attempt"], e["status"]) for e in door.journal()] == [(0, 500), (1, 500), (2, 500)]

    asyncio.run(main())


@SYNC_ASYNC
@pytest.mark.parametrize("mode", ["sse", "helper"])
def test_a_mid_stream_error_raises_api_error_and_is_not_retried(door: Any, is_async: bool, mode: str) -> None:
    chain = script({"error": {"status": 500, "after_chunks": 4, "message": "stream broke"},
                    "messages": [{"text_message": {"text": "one two three four five six"}}]})

    async def main() -> None:
        door.reset_journal()
        received: list[str] = []
        async with openai_client(door, is_async, max_retries=2) as client:
            kwargs = {"model": MODEL, "messages": [{"role": "user", "content": chain}]}
            with pytest.raises(openai.APIError) as info:
                if is_async and mode == "sse":
                    async with await client.chat.completions.create(stream=True, **kwargs) as stream:
                        async for chunk in stream:
                            received.append(chunk.choices[0].delta.content or "")
                elif mode == "sse":
                    with client.chat.completions.create(stream=True, **kwargs) as stream:
                        for chunk in stream:
                            received.append(chunk.choices[0].delta.content or "")
                elif is_async:
                    async with client.chat.completions.stream(**kwargs) as helper:
                        async for event in helper:
                            if event.type == "content.delta":
                                received.append(event.delta)
                else:
                    with client.chat.completions.stream(**kwargs) as helper:
                        for event in helper:
                            if event.type == "content.delta":
                                received.append(event.delta)
        assert not isinstance(info.value, openai.APIStatusError)
        assert "stream broke" in info.value.message
        # The role chunk then three words arrived before the failure.
        assert "".join(received) == "one two three "
        assert [(e["attempt"], e["status"]) for e in door.journal()] == [(0, 200)]

    asyncio.run(main())


# -- the stream helper -------------------------------------------------------------------


@SYNC_ASYNC
def test_stream_helper_events_accumulate_to_the_non_streamed_completion(door: Any, is_async: bool) -> None:
    chain = script({"id": "mixed", "chunk_words": 2, "messages": [
        {"text_message": {"length": 11}},
        {"tool_call": [{"name": "convert", "args": {"amount": 12.75, "unit": "miles per hour"}},
                       {"name": "get_time", "args": {"tz": "America/Argentina/Buenos_Aires"}}]},
    ]})
    messages = [{"role": "user", "content": chain}]

    async def main() -> None:
        async with openai_client(door, is_async) as client:
            streamed = await chat_turn(client, "helper", messages=messages, tools=TOOLS)
            whole = await chat_turn(client, "json", messages=messages, tools=TOOLS)
        by_type: dict[str, list[Any]] = {}
        for event in streamed.events:
            by_type.setdefault(event.type, []).append(event)

        # The role chunk carries content "" as OpenAI sends it; then two words a delta.
        deltas = [e for e in by_type["content.delta"] if e.delta]
        assert len(deltas) == 6
        assert "".join(e.delta for e in deltas) == whole.content
        assert deltas[-1].snapshot == whole.content
        assert [e.content for e in by_type["content.done"]] == [whole.content]

        arg_deltas = by_type["tool_calls.function.arguments.delta"]
        assert len(arg_deltas) > 4  # arguments arrive in several slices
        done = by_type["tool_calls.function.arguments.done"]
        assert [(e.index, e.name, e.parsed_arguments) for e in done] == [
            (0, "convert", {"amount": 12.75, "unit": "miles per hour"}),
            (1, "get_time", {"tz": "America/Argentina/Buenos_Aires"}),
        ]
        assert [e.arguments for e in done] == [c.arguments for c in whole.tool_calls]
        assert len(by_type["chunk"]) == len(streamed.events) - sum(
            len(v) for k, v in by_type.items() if k != "chunk")

        assert streamed.content == whole.content
        assert streamed.tool_calls == whole.tool_calls
        assert streamed.finish_reason == whole.finish_reason == "tool_calls"

    asyncio.run(main())


@SYNC_ASYNC
def test_stream_helper_final_completion_parses_tool_arguments(door: Any, is_async: bool) -> None:
    chain = script({"messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Kyoto"}}]}]})

    async def main() -> None:
        kwargs = {"model": MODEL, "messages": [{"role": "user", "content": chain}], "tools": TOOLS}
        async with openai_client(door, is_async) as client:
            if is_async:
                async with client.chat.completions.stream(**kwargs) as stream:
                    final = await stream.get_final_completion()
            else:
                with client.chat.completions.stream(**kwargs) as stream:
                    final = stream.get_final_completion()
        message = final.choices[0].message
        assert final.object == "chat.completion"
        assert message.role == "assistant"
        assert message.tool_calls[0].function.parsed_arguments == {"city": "Kyoto"}
        assert final.choices[0].finish_reason == "tool_calls"

    asyncio.run(main())
