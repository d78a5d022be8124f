"""An async client from the ``mockllm_server`` fixture leaves no socket open after the test.

Teardown cannot close an async client (its event loop is often gone), so a kept-alive
connection outlived the test and a correct test's run, warnings being errors, ended with
exit status 1 and a ``ResourceWarning: unclosed <socket...>`` that named no cause.
"""

from __future__ import annotations

import pytest

ASYNC_TEST = """
import asyncio

from mockllm import InstructionChain

PROMPT = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"text": "Hi."}}]}]).tagged("hi")


def test_an_async_openai_client(mockllm_server):
    client = mockllm_server.openai(is_async=True)

    async def ask():
        reply = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": PROMPT}])
        return reply.choices[0].message.content

    assert asyncio.run(ask()) == "Hi."


def test_an_async_anthropic_stream(mockllm_server):
    client = mockllm_server.anthropic(is_async=True)

    async def ask():
        async with client.messages.stream(
            model="c", max_tokens=64, messages=[{"role": "user", "content": PROMPT}]
        ) as stream:
            return "".join([text async for text in stream.text_stream])

    assert asyncio.run(ask()) == "Hi."
"""


def test_async_clients_of_the_server_fixture_leave_no_socket_behind(
    strict_pytester: pytest.Pytester, shared_server_conftest: str
) -> None:
    strict_pytester.makeconftest(shared_server_conftest)
    strict_pytester.makepyfile(test_async=ASYNC_TEST)
    result = strict_pytester.runpytest()
    assert "ResourceWarning" not in result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=2)
    assert result.ret == 0
