"""openai-agents (Responses model) continuing a conversation with ``previous_response_id``
against the mock, in process. Skipped where openai-agents is not installed (it is not a
dev dependency yet)."""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any

import openai
import pytest

from mockllm import MockLLM
from mockllm._transports import HTTPX2Transport
from tests.mockllm.server_support import script, uid

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

# Found, not imported, at collection (every xdist worker collects; importing openai-agents
# costs about a second of CPU): the test imports it.
if importlib.util.find_spec("agents") is None:
    pytest.skip("could not import 'agents': openai-agents is not installed", allow_module_level=True)


def test_an_agent_continues_on_previous_response_id() -> None:
    import agents

    agents.set_tracing_disabled(True)
    mock = MockLLM()

    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    prompt = script(
        {"id": uid("ag1"), "messages": [{"tool_call": [{"name": "get_weather", "args": {"city": "Oslo"}}]}]},
        {"id": uid("ag2"), "messages": [{"text_message": {"text": "Sunny."}}]},
        {"id": uid("ag3"), "messages": [{"text_message": {"text": "Still sunny."}}]},
        prompt="Weather in Oslo?",
    )

    async def main() -> tuple[Any, Any]:
        async with httpx2.AsyncClient(transport=HTTPX2Transport(mock)) as http:
            client = openai.AsyncOpenAI(api_key="test", base_url="http://mock/v1", http_client=http)
            model = agents.OpenAIResponsesModel(model="gpt-mock", openai_client=client)
            agent = agents.Agent(name="weather", tools=[get_weather], model=model)
            first = await agents.Runner.run(agent, prompt)
            second = await agents.Runner.run(agent, "And tomorrow?", previous_response_id=first.last_response_id)
            return first, second

    first, second = asyncio.run(main())
    assert (first.final_output, second.final_output) == ("Sunny.", "Still sunny.")
    # The tool loop inside one run sends the whole input; the next run names the last response.
    assert [(e.turn_index, e.status, e.rebuilt_from) for e in mock.journal] == [
        (0, 200, None),
        (1, 200, None),
        (2, 200, first.last_response_id),
    ]
