"""Agent frameworks over Bedrock, unmodified, against the loopback server: LangChain's
``ChatBedrockConverse`` (``langchain-aws``) and pydantic-ai's ``BedrockConverseModel``,
each through a tool loop whose turns the mock counts from the Converse history. Each test
skips by name where its package is absent. LiteLLM's ``bedrock/converse/`` models are
tested with its other providers, through both doors, in ``tests/frameworks/test_litellm.py``
(LiteLLM is installed in the lean CI environment only).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from harness.plugin.fixtures import MockLLMServer
from tests.mockllm.sdk_support import script

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
CREDENTIALS = {"aws_access_key_id": "AKIDMOCKLLM", "aws_secret_access_key": "not-a-secret"}
LOOP = script(
    {
        "id": "look-up",
        "messages": [
            {"text_message": {"text": "Let me check."}},
            {"tool_call": [{"name": "get_weather", "args": {"city": "Paris"}}]},
        ],
    },
    {"id": "answer", "messages": [{"text_message": {"text": "It is sunny in Paris."}}]},
)


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@pytest.fixture
def server(mock_server_url: str) -> Iterator[MockLLMServer]:
    mock = MockLLMServer(mock_server_url, pid=-1)
    mock.reset()
    try:
        yield mock
    finally:
        mock.close()


def turns(server: MockLLMServer) -> list[tuple[str | None, int | None, str | None]]:
    return [(e.protocol, e.turn_index, e.instruction_id) for e in server.journal]


@pytest.mark.parametrize("stream", [False, True], ids=["invoke", "stream"])
def test_langchain_chat_bedrock_converse_tool_loop(server: MockLLMServer, stream: bool) -> None:
    langchain_aws = pytest.importorskip("langchain_aws", reason="langchain-aws is not installed (the dev extra)")
    from langchain_core.messages import HumanMessage, ToolMessage

    model = langchain_aws.ChatBedrockConverse(
        model=MODEL, endpoint_url=server.base_url, region_name="us-east-1", **CREDENTIALS
    ).bind_tools([get_weather])

    def ask(messages: list[Any]) -> Any:
        if not stream:
            return model.invoke(messages)
        reply = None
        for chunk in model.stream(messages):
            reply = chunk if reply is None else reply + chunk
        return reply

    messages: list[Any] = [HumanMessage(LOOP)]
    first = ask(messages)
    assert [(c["name"], c["args"]) for c in first.tool_calls] == [("get_weather", {"city": "Paris"})]
    messages += [first, ToolMessage(get_weather("Paris"), tool_call_id=first.tool_calls[0]["id"])]
    second = ask(messages)
    assert second.text == "It is sunny in Paris." and not second.tool_calls
    assert second.usage_metadata["output_tokens"] > 0
    assert turns(server) == [("bedrock-converse", 0, "look-up"), ("bedrock-converse", 1, "answer")]
    assert server.findings().counts == {}


def test_pydantic_ai_bedrock_converse_model_runs_the_tool_loop(server: MockLLMServer) -> None:
    pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed")
    pytest.importorskip("boto3", reason="boto3 is not installed (the test extra)")
    import boto3
    from pydantic_ai import Agent
    from pydantic_ai.models.bedrock import BedrockConverseModel
    from pydantic_ai.providers.bedrock import BedrockProvider

    client = boto3.client("bedrock-runtime", endpoint_url=server.base_url, region_name="us-east-1", **CREDENTIALS)
    agent = Agent(BedrockConverseModel(MODEL, provider=BedrockProvider(bedrock_client=client)), tools=[get_weather])
    # agent.run rather than run_sync, whose event loop pydantic-ai leaves open.
    result = asyncio.run(agent.run(LOOP))
    assert result.output == "It is sunny in Paris."
    assert turns(server) == [("bedrock-converse", 0, "look-up"), ("bedrock-converse", 1, "answer")]


def test_pydantic_ai_bedrock_converse_model_streams(server: MockLLMServer) -> None:
    pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed")
    pytest.importorskip("boto3", reason="boto3 is not installed (the test extra)")
    import boto3
    from pydantic_ai import Agent
    from pydantic_ai.models.bedrock import BedrockConverseModel
    from pydantic_ai.providers.bedrock import BedrockProvider

    # run_stream ends at the first reply with text, so the call comes alone.
    chain = script(
        {"id": "look-up", "messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Paris"}}]}]},
        {"id": "answer", "messages": [{"text_message": {"text": "It is sunny in Paris."}}]},
    )
    client = boto3.client("bedrock-runtime", endpoint_url=server.base_url, region_name="us-east-1", **CREDENTIALS)
    agent = Agent(BedrockConverseModel(MODEL, provider=BedrockProvider(bedrock_client=client)), tools=[get_weather])

    async def stream() -> list[str]:
        async with agent.run_stream(chain) as run:
            return [text async for text in run.stream_output(debounce_by=None)]

    assert asyncio.run(stream())[-1] == "It is sunny in Paris."
    assert turns(server) == [("bedrock-converse", 0, "look-up"), ("bedrock-converse", 1, "answer")]
