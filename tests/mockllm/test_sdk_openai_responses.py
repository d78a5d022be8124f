"""What only the Responses API has, through the official ``openai`` SDK and both doors.

The behaviours every protocol shares (tool loops, reasoning, usage, errors, the stream
helper's final reply) are in ``test_sdk_behaviours.py``; here are the response's own
fields (instructions, ids, item ids), ``previous_response_id`` without a held response,
and the Responses stream's lifecycle events.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import openai
import pytest

from tests.mockllm.sdk_responses_support import RESPONSES, TOOLS
from tests.mockllm.sdk_support import ALL_MODES, LOOP_SCRIPT, SYNC_ASYNC, mixed_script, script


@SYNC_ASYNC
@ALL_MODES
def test_instructions_come_back_and_each_response_has_its_own_id(door: Any, is_async: bool, mode: str) -> None:
    async def main() -> None:
        async with RESPONSES.client(door, is_async) as client:
            items, options = RESPONSES.start(LOOP_SCRIPT, system="You are terse.")
            turns, _ = await RESPONSES.agent_loop(client, mode, items, **options)
        assert [t.raw.instructions for t in turns] == ["You are terse."] * 3
        assert len({t.raw.id for t in turns}) == 3

    asyncio.run(main())


@SYNC_ASYNC
def test_function_call_items_have_their_own_item_ids(door: Any, is_async: bool) -> None:
    chain = script(
        {
            "messages": [
                {
                    "tool_call": [
                        {"name": "get_weather", "args": {"city": "Oslo"}},
                        {"name": "get_weather", "args": {"city": "Lima"}},
                        {"name": "get_time", "args": {"tz": "UTC"}},
                    ]
                }
            ]
        }
    )

    turn = RESPONSES.reply(door, is_async, "json", chain, tools=TOOLS)
    items = [item for item in turn.raw.output if item.type == "function_call"]
    assert len({item.id for item in items}) == 3
    assert {item.id for item in items}.isdisjoint(item.call_id for item in items)


@SYNC_ASYNC
def test_previous_response_id_is_refused_with_a_reason(door: Any, is_async: bool) -> None:
    async def main() -> None:
        async with RESPONSES.client(door, is_async) as client:
            with pytest.raises(openai.BadRequestError) as info:
                await RESPONSES.turn(
                    client, "json", [{"role": "user", "content": "hello"}], previous_response_id="resp_123"
                )
        assert info.value.param == "previous_response_id"
        assert "not found" in info.value.message

    asyncio.run(main())


@SYNC_ASYNC
def test_stream_helper_events_open_and_close_the_response(door: Any, is_async: bool) -> None:
    streamed = RESPONSES.reply(door, is_async, "helper", mixed_script(text_after_calls=True), tools=TOOLS)
    kinds = [e.type for e in streamed.events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    deltas = [e for e in streamed.events if e.type == "response.output_text.delta"]
    assert deltas[-1].snapshot == "Done."  # the snapshot of its own message item
    # The tools being strict, the helper parses each call's arguments.
    calls = [item for item in streamed.raw.output if item.type == "function_call"]
    assert [c.parsed_arguments for c in calls] == [json.loads(c.arguments) for c in calls]


@SYNC_ASYNC
def test_stream_helper_text_deltas_and_output_text(door: Any, is_async: bool) -> None:
    chain = script({"messages": [{"text_message": {"text": "Hello there, agent."}}]})

    async def main() -> None:
        async with RESPONSES.client(door, is_async) as client:
            if is_async:
                async with client.responses.stream(model=RESPONSES.model, input=chain) as stream:
                    texts = [e.delta async for e in stream if e.type == "response.output_text.delta"]
                    final = await stream.get_final_response()
            else:
                with client.responses.stream(model=RESPONSES.model, input=chain) as stream:
                    texts = [e.delta for e in stream if e.type == "response.output_text.delta"]
                    final = stream.get_final_response()
        assert texts == ["Hello ", "there, ", "agent."]
        assert final.output_text == "Hello there, agent."
        assert final.status == "completed" and final.model == RESPONSES.model

    asyncio.run(main())
