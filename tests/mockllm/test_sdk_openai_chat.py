"""What only Chat Completions has, through the official ``openai`` SDK and both doors.

The behaviours every protocol shares (tool loops, reasoning, usage, errors, the stream
helper's final reply) are in ``test_sdk_behaviours.py``; here are the chunk stream's
usage chunk and the chat stream helper's own events.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tests.mockllm.sdk_chat_support import CHAT, TOOLS
from tests.mockllm.sdk_support import SYNC_ASYNC, mixed_script, script


@SYNC_ASYNC
def test_include_usage_adds_a_last_chunk_with_usage_and_no_choices(door: Any, is_async: bool) -> None:
    chain = script({"messages": [{"text_message": {"length": 12}}]})

    async def main() -> None:
        async with CHAT.client(door, is_async) as client:
            history, _ = CHAT.start(chain)
            turn = await CHAT.turn(client, "sse", history, stream_options={"include_usage": True})
            plain = await CHAT.turn(client, "sse", history)
            whole = await CHAT.turn(client, "json", history)
        *body, last = turn.events
        assert last.choices == []
        assert last.usage is not None
        assert last.usage.prompt_tokens > 0 and last.usage.completion_tokens > 0
        assert last.usage.total_tokens == last.usage.prompt_tokens + last.usage.completion_tokens
        assert all(c.usage is None and len(c.choices) == 1 for c in body)
        assert body[-1].choices[0].finish_reason == "stop"
        assert len({c.id for c in turn.events}) == 1 and len({c.created for c in turn.events}) == 1
        # Without stream_options no usage chunk is sent (LangChain relies on that).
        assert all(c.usage is None and c.choices for c in plain.events)
        assert plain.usage is None
        assert plain.text == turn.text == whole.text
        assert whole.raw.usage.completion_tokens == last.usage.completion_tokens

    asyncio.run(main())


@SYNC_ASYNC
def test_stream_helper_content_and_argument_events(door: Any, is_async: bool) -> None:
    chain = mixed_script(text_after_calls=False)
    streamed = CHAT.reply(door, is_async, "helper", chain, tools=TOOLS)
    whole = CHAT.reply(door, is_async, "json", chain, tools=TOOLS)
    by_type: dict[str, list[Any]] = {}
    for event in streamed.events:
        by_type.setdefault(event.type, []).append(event)

    # The role chunk carries content "" as OpenAI sends it; then two words a delta.
    deltas = [e for e in by_type["content.delta"] if e.delta]
    assert len(by_type["content.delta"]) == len(deltas) + 1
    assert deltas[-1].snapshot == whole.text
    assert [e.content for e in by_type["content.done"]] == [whole.text]

    assert len(by_type["tool_calls.function.arguments.delta"]) > 4  # arguments arrive in several slices
    done = by_type["tool_calls.function.arguments.done"]
    assert [(e.index, e.name) for e in done] == [(0, "convert"), (1, "get_time")]
    assert [e.arguments for e in done] == [c.arguments for c in whole.calls]
    # One chunk event per chunk, besides the events derived from the chunks.
    assert len(by_type["chunk"]) == len(streamed.events) - sum(len(v) for k, v in by_type.items() if k != "chunk")
    assert streamed.native_stop == whole.native_stop == "tool_calls"


@SYNC_ASYNC
def test_stream_helper_final_completion_parses_tool_arguments(door: Any, is_async: bool) -> None:
    chain = script({"messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Kyoto"}}]}]})

    async def main() -> None:
        kwargs = {"model": CHAT.model, "messages": [{"role": "user", "content": chain}], "tools": TOOLS}
        async with CHAT.client(door, is_async) as client:
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
