"""What only Anthropic Messages has, through the official ``anthropic`` SDK and both doors.

The behaviours every protocol shares (tool loops, reasoning, usage, errors, the stream
helper's final reply) are in ``test_sdk_behaviours.py``; here are thinking blocks and
their signatures, the budget check, the helper's own events and the raw event lifecycle.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import pytest

from tests.mockllm.sdk_anthropic_support import MAX_TOKENS, MESSAGES, MODEL, THINKING, TOOLS, MessagesTurn, field_of
from tests.mockllm.sdk_support import ALL_MODES, REASONING_SCRIPT, SYNC_ASYNC, mixed_script, script


def _reply(door: Any, is_async: bool, mode: str, chain: str, **kwargs: Any) -> MessagesTurn:
    turn = MESSAGES.reply(door, is_async, mode, chain, **kwargs)
    assert isinstance(turn, MessagesTurn)
    return turn


@SYNC_ASYNC
@ALL_MODES
def test_thinking_blocks_go_back_with_their_signatures(door: Any, is_async: bool, mode: str) -> None:
    async def main() -> None:
        door.reset_journal()
        async with MESSAGES.client(door, is_async) as client:
            messages, _ = MESSAGES.start(REASONING_SCRIPT)
            turns, _ = await MESSAGES.agent_loop(client, mode, messages, thinking=THINKING)
        assert [t.kinds() for t in turns if isinstance(t, MessagesTurn)] == [
            ["thinking", "tool_use"],
            ["thinking", "text"],
        ]
        signatures = [field_of(t.of_kind("thinking")[0], "signature") for t in turns if isinstance(t, MessagesTurn)]
        assert all(signatures) and signatures[0] != signatures[1]
        # The thinking block went back, signature and all, and the request was accepted.
        assert field_of(messages[1]["content"][0], "signature") == signatures[0]
        assert [e["status"] for e in door.journal()] == [200, 200]

    asyncio.run(main())


@SYNC_ASYNC
def test_stream_helper_emits_thinking_and_signature_events(door: Any, is_async: bool) -> None:
    chain = script(
        {
            "reasoning": {"text": "First think, then act."},
            "messages": [{"tool_call": [{"name": "get_time", "args": {"tz": "Asia/Tokyo"}}]}],
        }
    )
    turn = _reply(door, is_async, "helper", chain, tools=TOOLS, thinking=THINKING)
    thinking = [e for e in turn.events if e.type == "thinking"]
    assert [e.thinking for e in thinking] == ["First ", "think, ", "then ", "act."]
    assert thinking[-1].snapshot == "First think, then act."
    signature = [e.signature for e in turn.events if e.type == "signature"]
    assert signature == [turn.of_kind("thinking")[0].signature]


@pytest.mark.parametrize("budget", [512, 2048])
def test_a_thinking_budget_the_api_refuses_is_a_bad_request(door: Any, budget: int) -> None:
    chain = script({"messages": [{"text_message": {"length": 3}}]})
    with door.anthropic() as client, pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(
            model=MODEL,
            max_tokens=MAX_TOKENS,
            messages=[{"role": "user", "content": chain}],
            thinking={"type": "enabled", "budget_tokens": budget},
        )
    assert "budget_tokens" in info.value.body["error"]["message"]


@SYNC_ASYNC
def test_stream_helper_text_stream_yields_each_text_delta(door: Any, is_async: bool) -> None:
    chain = mixed_script(text_after_calls=True)
    kwargs = {
        "model": MODEL,
        "max_tokens": MAX_TOKENS,
        "tools": TOOLS,
        "messages": [{"role": "user", "content": chain}],
    }

    async def main() -> None:
        texts: list[str]
        async with MESSAGES.client(door, is_async) as client:
            if is_async:
                async with client.messages.stream(**kwargs) as stream:
                    texts = [text async for text in stream.text_stream]
                    final = await stream.get_final_message()
            else:
                with client.messages.stream(**kwargs) as stream:
                    texts = list(stream.text_stream)
                    final = stream.get_final_message()
        assert [b.type for b in final.content] == ["text", "tool_use", "tool_use", "text"]
        assert len(texts) == 7  # 11 words two a delta, then "Done."
        assert "".join(texts) == final.content[0].text + "Done."

    asyncio.run(main())


@SYNC_ASYNC
def test_stream_helper_input_json_snapshots_grow_to_the_full_input(door: Any, is_async: bool) -> None:
    args = {"amount": 1234.5, "unit": 'degrees "Kelvin" \u00b0K'}
    chain = script({"messages": [{"tool_call": [{"name": "convert", "args": args}]}]})
    turn = _reply(door, is_async, "helper", chain, tools=TOOLS)
    pieces = [e for e in turn.events if e.type == "input_json"]
    assert len(pieces) > 3  # split mid-token into several deltas
    assert json.loads("".join(e.partial_json for e in pieces)) == args
    assert pieces[-1].snapshot == args
    stops = [e for e in turn.events if e.type == "content_block_stop"]
    assert stops[-1].content_block.input == args


@SYNC_ASYNC
def test_raw_stream_events_follow_the_message_lifecycle(door: Any, is_async: bool) -> None:
    chain = script(
        {
            "reasoning": {"length": 2},
            "messages": [
                {"text_message": {"length": 2}},
                {"tool_call": [{"name": "get_weather", "args": {"city": "Bern"}}]},
            ],
        }
    )
    turn = _reply(door, is_async, "sse", chain, tools=TOOLS, thinking=THINKING)
    kinds = [(e.type, getattr(getattr(e, "delta", None), "type", None)) for e in turn.events]
    assert kinds == [
        ("message_start", None),
        ("content_block_start", None),
        ("content_block_delta", "thinking_delta"),
        ("content_block_delta", "thinking_delta"),
        ("content_block_delta", "signature_delta"),
        ("content_block_stop", None),
        ("content_block_start", None),
        ("content_block_delta", "text_delta"),
        ("content_block_delta", "text_delta"),
        ("content_block_stop", None),
        ("content_block_start", None),
        ("content_block_delta", "input_json_delta"),
        ("content_block_delta", "input_json_delta"),
        ("content_block_stop", None),
        ("message_delta", None),
        ("message_stop", None),
    ]
    indexes = [e.index for e in turn.events if e.type == "content_block_start"]
    assert indexes == [0, 1, 2]
    start = turn.events[0].message
    assert start.role == "assistant" and start.content == [] and start.stop_reason is None
    assert turn.kinds() == ["thinking", "text", "tool_use"]
    assert turn.stop == "tool_use"
