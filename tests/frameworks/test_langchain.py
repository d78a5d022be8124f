"""LangChain's chat models of the new providers against the mock, unmodified, through
both doors: ``ChatGoogleGenerativeAI`` (``langchain-google-genai``, Gemini),
``ChatOllama`` (``langchain-ollama``), ``AzureChatOpenAI`` (``langchain-openai``) and
``ChatAnthropic`` (``langchain-anthropic``; its ``with_structured_output`` too).

Each answers a plain ``invoke``, streams with ``astream``, and runs a tool loop of
``bind_tools``: what a LangChain user sees (the message's text, its ``tool_calls``,
``usage_metadata``) is what the script says. The integrations are in the ``dev`` extra
(.ci/run's full environment); where one is not installed its tests skip, naming it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from harness.systems.llm import http_library
from mockllm import HTTPX2Transport
from tests.frameworks.support import (
    ANSWER,
    GREETING,
    PLAIN,
    STREAM,
    STREAMED,
    TOOL_LOOP,
    get_weather,
    script,
    skip_module_unless_installed,
    streamed,
    trail,
)

skip_module_unless_installed("langchain_core", reason="langchain-core is not installed (the dev extra)")

DEPLOYMENT = "my-gpt-deployment"


def _gemini(door: Any) -> Any:
    module = pytest.importorskip("langchain_google_genai", reason="langchain-google-genai is not installed (dev)")
    # google-genai's async client goes over aiohttp where aiohttp is installed, which
    # intercept does not catch: in process, the mock's transport keeps it on httpx2.
    options = {"client_args": {"transport": HTTPX2Transport(door.mock)}} if door.mock is not None else {}
    return module.ChatGoogleGenerativeAI(
        model="gemini-mock-flash", google_api_key="test-key", base_url=door.base_url, **options
    )


def _ollama(door: Any) -> Any:
    module = pytest.importorskip("langchain_ollama", reason="langchain-ollama is not installed (the dev extra)")
    return module.ChatOllama(model="llama-mock", base_url=door.base_url)


def _azure(door: Any) -> Any:
    module = pytest.importorskip("langchain_openai", reason="langchain-openai is not installed (the dev extra)")
    import openai

    # Only the deployment is named, as Azure users do: the body's model is null. The HTTP
    # clients are the test's own, so that closing them leaves LangChain's shared defaults be.
    library = http_library(openai)
    return module.AzureChatOpenAI(
        azure_endpoint=door.base_url,
        azure_deployment=DEPLOYMENT,
        api_version="2024-10-21",
        api_key="k",
        max_retries=0,
        http_client=library.Client(),
        http_async_client=library.AsyncClient(),
    )


def _anthropic(door: Any) -> Any:
    module = pytest.importorskip("langchain_anthropic", reason="langchain-anthropic is not installed (the dev extra)")
    return module.ChatAnthropic(model="claude-mock", api_key="k", base_url=door.base_url, max_retries=0)


def _close(provider: str, llm: Any) -> None:
    """Close the sync HTTP client ``llm`` holds (a pooled connection left open warns when collected)."""
    if provider == "gemini":
        llm.client.close()
    elif provider == "ollama":
        llm._client.close()  # ChatOllama has no close of its own
    elif provider == "anthropic":
        llm._client.close()
        _forget_shared_clients()
    else:
        llm.root_client.close()


async def _aclose(provider: str, llm: Any) -> None:
    """Close the async HTTP client ``llm`` holds, in the loop that used it."""
    if provider == "gemini":
        await llm.aclose()
    elif provider in ("ollama", "anthropic"):
        await llm._async_client.close()
        if provider == "anthropic":
            _forget_shared_clients()
    else:
        await llm.root_async_client.close()


def _forget_shared_clients() -> None:
    """``ChatAnthropic`` shares one HTTP client per base URL (an ``lru_cache``): once the
    test closed it, the next model must build its own, not reuse the closed one."""
    from langchain_anthropic import _client_utils

    _client_utils._get_default_httpx_client.cache_clear()
    _client_utils._get_default_async_httpx_client.cache_clear()


MODELS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "gemini": ("gemini", _gemini),
    "ollama": ("ollama", _ollama),
    "azure": ("azure-openai", _azure),
    "anthropic": ("anthropic-messages", _anthropic),
}


@pytest.fixture(params=list(MODELS))
def provider(request: pytest.FixtureRequest) -> str:
    """Each provider's LangChain chat model in turn."""
    return str(request.param)


@pytest.fixture
def chat(served: Any, provider: str) -> Iterator[tuple[str, Any]]:
    """(the mock's protocol name, the provider's chat model on ``served``), closed after the test."""
    protocol, build = MODELS[provider]
    llm = build(served)
    try:
        yield protocol, llm
    finally:
        _close(provider, llm)


def test_invoke_returns_the_scripted_reply(served: Any, chat: tuple[str, Any]) -> None:
    from langchain_core.messages import AIMessage

    protocol, llm = chat
    reply = llm.invoke(PLAIN)
    assert isinstance(reply, AIMessage)
    assert reply.text == GREETING
    assert reply.tool_calls == []
    assert reply.usage_metadata is not None and reply.usage_metadata["output_tokens"] > 0
    assert trail(served) == [(protocol, 0, "greet")]


# google-genai's aiohttp session (where aiohttp is installed) subclasses aiohttp's ClientSession.
@pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession from ClientSession:DeprecationWarning")
def test_astream_yields_the_reply_in_pieces(served: Any, provider: str, chat: tuple[str, Any]) -> None:
    protocol, llm = chat

    async def pieces() -> list[str]:
        try:
            return [chunk.text async for chunk in llm.astream(STREAM)]
        finally:
            await _aclose(provider, llm)

    texts = asyncio.run(pieces())
    assert "".join(texts) == STREAMED
    assert len([t for t in texts if t]) == len(STREAMED.split())  # a word a chunk, as scripted
    assert trail(served) == [(protocol, 0, "count")]
    assert streamed(served) == [True]


def test_bind_tools_loop_runs_the_tool_and_answers(served: Any, chat: tuple[str, Any]) -> None:
    from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool

    @tool("get_weather")
    def weather_tool(city: str) -> str:
        """The weather in a city."""
        return get_weather(city)

    protocol, llm = chat
    model = llm.bind_tools([weather_tool])
    history: list[BaseMessage] = [HumanMessage(TOOL_LOOP)]
    ran: list[dict[str, Any]] = []
    for _ in range(4):  # bounded: the script asks for one tool round
        reply = model.invoke(history)
        history.append(reply)
        if not reply.tool_calls:
            break
        for call in reply.tool_calls:
            ran.append({"name": call["name"], "args": call["args"]})
            history.append(ToolMessage(weather_tool.invoke(call["args"]), tool_call_id=call["id"]))
    assert ran == [{"name": "get_weather", "args": {"city": "Paris"}}]
    assert history[-1].text == ANSWER
    assert trail(served) == [(protocol, 0, "look-up"), (protocol, 1, "answer")]


@pytest.mark.parametrize("provider", ["azure"])
def test_azure_reply_names_the_deployment_as_its_model(chat: tuple[str, Any]) -> None:
    _, llm = chat
    reply = llm.invoke(PLAIN)
    assert reply.response_metadata["model_name"] == DEPLOYMENT


@pytest.mark.parametrize("provider", ["anthropic"])
def test_anthropic_structured_output_is_the_forced_tools_arguments(served: Any, chat: tuple[str, Any]) -> None:
    """``with_structured_output`` forces a tool named after the schema (function calling,
    LangChain's default for Anthropic): the scripted call of that tool is the object."""
    from pydantic import BaseModel

    class Weather(BaseModel):
        city: str
        sky: str

    _, llm = chat
    prompt = script(
        {"id": "forecast", "messages": [{"tool_call": [{"name": "Weather", "args": {"city": "Oslo", "sky": "grey"}}]}]}
    )
    assert llm.with_structured_output(Weather).invoke(prompt) == Weather(city="Oslo", sky="grey")
    assert trail(served) == [("anthropic-messages", 0, "forecast")]
