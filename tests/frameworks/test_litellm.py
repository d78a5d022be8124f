"""LiteLLM's ``gemini/``, ``ollama/``, ``ollama_chat/``, ``azure/`` and ``bedrock/converse/``
models against the mock, unmodified, through both doors: a completion, a stream, and a
tool loop (not for ``ollama/``, LiteLLM's ``/api/generate`` route, which has no tools).

LiteLLM sends over aiohttp by default, which ``intercept`` does not catch: in process,
``litellm.disable_aiohttp_transport`` puts it on httpx, which it is; over the loopback
server it keeps its default. LiteLLM holds openai below 3, so it is installed in .ci/run's
lean environment; where it is not installed these tests skip, naming it.
"""

from __future__ import annotations

import asyncio
import gc
import json
import warnings
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest

from tests.frameworks.support import (
    ANSWER,
    GREETING,
    OPENAI_TOOLS,
    PLAIN,
    STREAM,
    STREAMED,
    TOOL_LOOP,
    get_weather,
    streamed,
    trail,
)

T = TypeVar("T")

# LiteLLM's own models warn when pydantic first builds them (its TypedDicts use ReadOnly).
pytestmark = pytest.mark.filterwarnings("ignore:Items? .*ReadOnly. qualifier:UserWarning")

MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "gemini": ("gemini", {"model": "gemini/gemini-mock-flash", "api_key": "test-key"}),
    "ollama": ("ollama", {"model": "ollama/llama-mock"}),
    "ollama_chat": ("ollama", {"model": "ollama_chat/llama-mock"}),
    "azure": ("azure-openai", {"model": "azure/my-gpt-deployment", "api_key": "k", "api_version": "2024-10-21"}),
    # Bedrock's Converse API, SigV4-signed with made-up keys (the mock accepts any).
    "bedrock": (
        "bedrock-converse",
        {
            "model": "bedrock/converse/anthropic.claude-3-5-sonnet-20240620-v1:0",
            "aws_region_name": "us-east-1",
            "aws_access_key_id": "AKIDMOCKLLM",
            "aws_secret_access_key": "not-a-secret",
        },
    ),
}
WITH_TOOLS = [name for name in MODELS if name != "ollama"]


@pytest.fixture
def litellm(served: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """LiteLLM, with its cost map read from the package (never the network) and, in
    process, httpx as its transport."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    module = pytest.importorskip("litellm", reason="litellm is not installed (the lean CI run has it)")
    if served.mock is not None:
        monkeypatch.setattr(module, "disable_aiohttp_transport", True)
    yield module
    # Each test runs in an event loop of its own: the next one must not get this one's clients.
    module.in_memory_llm_clients_cache.flush_cache()
    # LiteLLM's Ollama provider (in process, on httpx) leaves a client socket that nothing
    # closes; collected here, its ResourceWarning is LiteLLM's, not a later test's failure.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def _run(litellm: Any, work: Callable[[], Awaitable[T]]) -> T:
    """``work()`` in a fresh event loop, whose HTTP clients LiteLLM closes before the loop ends."""

    async def main() -> T:
        try:
            return await work()
        finally:
            await litellm.close_litellm_async_clients()

    return asyncio.run(main())


def _options(provider: str, door: Any) -> tuple[str, dict[str, Any]]:
    protocol, options = MODELS[provider]
    return protocol, {**options, "api_base": door.base_url}


@pytest.mark.parametrize("provider", list(MODELS))
def test_completion_returns_the_scripted_reply(served: Any, litellm: Any, provider: str) -> None:
    protocol, options = _options(provider, served)
    reply = _run(litellm, lambda: litellm.acompletion(messages=[{"role": "user", "content": PLAIN}], **options))
    assert reply.choices[0].message.content == GREETING
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage.completion_tokens > 0
    assert trail(served) == [(protocol, 0, "greet")]
    assert streamed(served) == [False]


# Its stream reader reads a pydantic attribute pydantic 2.11 deprecated, on the Bedrock
# stream's usage chunk (litellm 1.110).
@pytest.mark.filterwarnings("ignore:Accessing the 'model_[a-z_]+' attribute on the instance:DeprecationWarning")
@pytest.mark.parametrize("provider", list(MODELS))
def test_stream_yields_the_reply_in_pieces(served: Any, litellm: Any, provider: str) -> None:
    protocol, options = _options(provider, served)

    async def pieces() -> list[str]:
        stream = await litellm.acompletion(messages=[{"role": "user", "content": STREAM}], stream=True, **options)
        return [chunk.choices[0].delta.content async for chunk in stream]

    texts = [t for t in _run(litellm, pieces) if t]
    assert "".join(texts) == STREAMED
    assert len(texts) == len(STREAMED.split())  # a word a chunk, as scripted
    assert trail(served) == [(protocol, 0, "count")]
    assert streamed(served) == [True]


@pytest.mark.parametrize("provider", WITH_TOOLS)
def test_tool_loop_runs_the_tool_and_answers(served: Any, litellm: Any, provider: str) -> None:
    protocol, options = _options(provider, served)
    ran: list[tuple[str, dict[str, Any]]] = []

    async def loop() -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": TOOL_LOOP}]
        for _ in range(4):  # bounded: the script asks for one tool round
            reply = await litellm.acompletion(messages=messages, tools=OPENAI_TOOLS, **options)
            message = reply.choices[0].message
            if not message.tool_calls:
                return str(message.content)
            assert reply.choices[0].finish_reason == "tool_calls"
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                args = json.loads(call.function.arguments)
                ran.append((call.function.name, args))
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call.id,
                        "name": call.function.name,
                        "content": get_weather(**args),
                    }
                )
        raise AssertionError(f"the loop did not end: {messages}")

    assert _run(litellm, loop) == ANSWER
    assert ran == [("get_weather", {"city": "Paris"})]
    assert trail(served) == [(protocol, 0, "look-up"), (protocol, 1, "answer")]
