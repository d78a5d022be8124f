"""Agent frameworks over Bedrock, unmodified, against the loopback server: LangChain's
``ChatBedrockConverse`` (``langchain-aws``), LiteLLM's ``bedrock/`` models and
pydantic-ai's ``BedrockConverseModel``, each through a tool loop whose turns the mock
counts from the Converse history. Each test skips by name where its package is absent.
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


# LiteLLM's own models warn when pydantic first builds them (its TypedDicts use ReadOnly).
# Its stream reader reads a pydantic attribute pydantic 2.11 deprecated (litellm 1.110).
@pytest.mark.filterwarnings("ignore:Items? .*ReadOnly. qualifier:UserWarning")
@pytest.mark.filterwarnings("ignore:Accessing the 'model_[a-z_]+' attribute on the instance:DeprecationWarning")
@pytest.mark.parametrize("stream", [False, True], ids=["completion", "stream"])
def test_litellm_bedrock_converse_tool_loop(
    server: MockLLMServer, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no cost map from the network
    litellm = pytest.importorskip("litellm", reason="litellm is not installed (the lean CI run installs it)")
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        }
    ]
    options = {
        "model": f"bedrock/converse/{MODEL}",
        "aws_bedrock_runtime_endpoint": server.base_url,
        "aws_region_name": "us-east-1",
        "tools": tools,
        "num_retries": 0,
        **CREDENTIALS,
    }

    # The async call: LiteLLM's sync completion() starts a logging thread holding an event
    # loop it never closes (litellm 1.110), which a later test's garbage collection reports.
    async def ask(messages: list[Any]) -> Any:
        reply = await litellm.acompletion(messages=messages, stream=stream, **options)
        if stream:
            reply = litellm.stream_chunk_builder([chunk async for chunk in reply], messages=messages)
        return reply.choices[0].message

    async def loop() -> None:
        messages: list[Any] = [{"role": "user", "content": LOOP}]
        first = await ask(messages)
        assert first.content == "Let me check."
        call = first.tool_calls[0]
        assert (call.function.name, call.function.arguments.replace(" ", "")) == ("get_weather", '{"city":"Paris"}')
        messages += [first.model_dump(), {"role": "tool", "tool_call_id": call.id, "content": get_weather("Paris")}]
        assert (await ask(messages)).content == "It is sunny in Paris."

    asyncio.run(loop())
    assert turns(server) == [("bedrock-converse", 0, "look-up"), ("bedrock-converse", 1, "answer")]


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
