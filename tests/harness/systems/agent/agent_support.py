"""The agent runner's tests share: a runner on a fresh in-process mock per protocol, the
scripts it is given, and the event sequences folded as the seed's tables show them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.events import Event
from harness.systems.agent import AgentOptions, AgentResult, AgentRunner, ToolRegistry
from harness.systems.llm import model_client
from mockllm import InstructionChain, MockLLM
from tests.http_support import sdk_http_client

PROTOCOLS = pytest.mark.parametrize("protocol", ["anthropic-messages", "openai-chat"])


def script(prompt: str, *steps: dict[str, Any]) -> str:
    return InstructionChain.model_validate({"instruction_chain": list(steps)}).tagged(prompt)


def text(value: str) -> dict[str, Any]:
    return {"text_message": {"text": value}}


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool_call": [{"name": tool, "args": args}]}


# Flow 4's script: the model asks to run a write tool, then says it is done.
APPROVAL_SCRIPT = script(
    "Create a customer named Test Corp",
    {"messages": [text("I will create a customer."), call("create_customer", name="Test Corp")]},
    {"messages": [text("Done.")]},
)


def bc_tools() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.register(description="List all Business Central entities.")
    def list_all_entities() -> list[str]:
        return ["Customer", "Vendor", "Item"]

    @tools.register(description="Create a customer.")
    def create_customer(name: str) -> dict[str, Any]:
        return {"created": name}

    return tools


class Harness:
    """A runner on a fresh in-process mock, for one protocol."""

    def __init__(self, protocol: str, **runner_kwargs: Any) -> None:
        self.mock = MockLLM()
        self.requests: list[dict[str, Any]] = []  # every request body the model received

        async def record(request: Any) -> None:
            self.requests.append(json.loads(request.content))

        self.http = sdk_http_client(protocol, self.mock, event_hooks={"request": [record]})
        runner_kwargs.setdefault("tools", bc_tools())
        self.runner = AgentRunner(model_client(protocol, http_client=self.http), **runner_kwargs)

    def run(self, prompt: str, session: str = "s1", user: str = "user-1", **options: Any) -> AgentResult:
        seen: list[Event] = []
        result = self.runner.run_sync(prompt, session, seen.append, user, AgentOptions(**options))
        assert seen == result.events  # the listener saw every event, in order
        return result


def types(result: AgentResult) -> list[str]:
    """Event types with runs of chunks folded, as the seed's tables show them."""
    out: list[str] = []
    for event in result.events:
        if event.type.endswith("_chunk") and out and out[-1] == event.type + "*":
            continue
        out.append(event.type + "*" if event.type.endswith("_chunk") else event.type)
    return out


def persisted(result: AgentResult) -> list[tuple[int | None, str]]:
    return [(e.sequence_number, e.type) for e in result.events if e.persistence.value == "persisted"]
