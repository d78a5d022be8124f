"""pydantic-ai's Google model (``GoogleModel`` on a ``GoogleProvider``) against the mock,
unmodified, through both doors: an agent's run, its streamed run, and a run whose tool
loop pydantic-ai drives itself.

pydantic-ai's Google provider sends through an ``httpx2`` client of its own, which
``intercept`` catches in process. ``pydantic-ai-slim[google]`` is in the ``dev`` extra
(.ci/run's full environment); where it is not installed these tests skip, naming it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.frameworks import support
from tests.frameworks.support import ANSWER, GREETING, PLAIN, STREAM, STREAMED, TOOL_LOOP, get_weather, trail

support.skip_module_unless_installed(
    "pydantic_ai", "google.genai", reason="pydantic-ai-slim[google] is not installed (the dev extra)"
)


@pytest.fixture
def agent(served: Any) -> Iterator[Any]:
    """A pydantic-ai agent on Gemini, pointed at ``served``, with the ``get_weather`` tool."""
    import pydantic_ai
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    provider = GoogleProvider(api_key="test-key", base_url=served.base_url)
    model = GoogleModel("gemini-mock-flash", provider=provider)
    yield pydantic_ai.Agent(model, tools=[get_weather])


async def _run(agent: Any, prompt: str) -> Any:
    """``agent.run(prompt)`` inside ``async with agent``, which closes the provider's HTTP
    client in the loop that used it."""
    async with agent:
        return await agent.run(prompt)


def test_run_returns_the_scripted_output(served: Any, agent: Any) -> None:
    result = asyncio.run(_run(agent, PLAIN))
    assert result.output == GREETING
    assert result.usage.output_tokens > 0
    assert trail(served) == [("gemini", 0, "greet")]


def test_run_stream_yields_the_text_in_pieces(served: Any, agent: Any) -> None:
    async def pieces() -> list[str]:
        async with agent, agent.run_stream(STREAM) as run:
            return [delta async for delta in run.stream_text(delta=True, debounce_by=None)]

    deltas = asyncio.run(pieces())
    assert "".join(deltas) == STREAMED
    assert len(deltas) == len(STREAMED.split())  # a word a chunk, as scripted
    assert [(e["instruction_id"], e["stream"]) for e in served.journal()] == [("count", True)]


def test_the_agent_runs_the_scripted_tool_call_and_answers(served: Any, agent: Any) -> None:
    result = asyncio.run(_run(agent, TOOL_LOOP))
    assert result.output == ANSWER
    calls = [
        (p.tool_name, p.args_as_dict()) for m in result.all_messages() for p in m.parts if p.part_kind == "tool-call"
    ]
    returns = [p.content for m in result.all_messages() for p in m.parts if p.part_kind == "tool-return"]
    assert calls == [("get_weather", {"city": "Paris"})]
    assert returns == [get_weather("Paris")]
    assert trail(served) == [("gemini", 0, "look-up"), ("gemini", 1, "answer")]
