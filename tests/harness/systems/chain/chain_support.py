"""What the chain executor's tests share: tools in the seeds' spirit, script builders,
and a ``Bench`` that runs plans against the mock over a wire protocol and keeps every
request body and event."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from harness.systems.chain import (
    ChainEvent,
    ChainExecutor,
    ChainPlan,
    InMemoryVectorStore,
    PlanStep,
    Policy,
    PromptConfig,
    SQLitePlanStore,
)
from harness.systems.llm import model_client
from mockllm import InstructionChain, MockLLM
from tests.http_support import sdk_http_client

MODELS = ["olio.charPerson", "data.data"]


def describe_all_models() -> str:
    return ", ".join(MODELS)


def new_query_field(field: str, comparator: str, value: str) -> dict[str, str]:
    return {"field": field, "comparator": comparator, "value": value}


async def find_persons(query: dict[str, str]) -> list[str]:
    return [f"person where {query['field']} {query['comparator']} {query['value']}"]


TOOLS = {"describeAllModels": describe_all_models, "newQueryField": new_query_field, "findPersons": find_persons}
PROMPTS = {
    "brief": PromptConfig("You are a helpful assistant. Answer briefly."),
    "casual": PromptConfig("Talk like a friend."),
    "formal": PromptConfig("Rewrite text to be formal."),
}
DOCUMENTS = {
    "am7://default/data.data/census": "Population demographics of the valley: 4,200 people live there. "
    "Most residents are farmers. The population grew by two percent.",
    "am7://default/data.data/recipes": "Bread needs flour, water, salt and yeast. Knead the dough well.",
    "am7://default/data.data/people": "Ada is 34 and a mathematician. Bob is 29 and a carpenter. "
    "Cy is 41 and a baker who bakes bread.",
}
DONE = json.dumps({"complete": True, "reason": "enough", "nextSteps": []})


def query(prompt: str, *texts: str) -> str:
    """A plan query scripting these model replies in order."""
    return InstructionChain.model_validate(
        {"instruction_chain": [{"messages": [{"text_message": {"text": t}}]} for t in texts]}
    ).tagged(prompt)


def answers(prompt: str, *texts: str) -> str:
    """Each LLM step's answer followed by a routing decision that adds nothing."""
    return query(prompt, *(x for t in texts for x in (t, DONE)))


def route(*next_steps: dict[str, Any], reason: str = "more to do") -> str:
    return json.dumps({"complete": False, "reason": reason, "nextSteps": list(next_steps)})


def step(n: int, **fields: Any) -> PlanStep:
    return PlanStep.model_validate({"stepNumber": n, **fields})


def llm(n: int, prompt: str = "go", **fields: Any) -> PlanStep:
    return step(n, stepType="LLM", inputs={"prompt": prompt}, **fields)


def vector_store() -> InMemoryVectorStore:
    store = InMemoryVectorStore(chunk_words=12)
    for uri, text in DOCUMENTS.items():
        store.add_document(uri, text)
    return store


class Bench:
    """A ChainExecutor on the mock: in-process transport, or the loopback server at
    ``base_url``; either way the official SDK speaks ``protocol`` over HTTP."""

    def __init__(
        self,
        protocol: str = "anthropic-messages",
        base_url: str | None = None,
        policies: list[Policy] | None = None,
        store: SQLitePlanStore | None = None,
        **executor_options: Any,
    ) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.on_request: Callable[[], None] = lambda: None
        """Called as each request to the model is sent (after it is recorded)."""

        async def record(request: Any) -> None:
            self.bodies.append(json.loads(request.content))
            self.on_request()

        mock = MockLLM()

        def connect() -> Any:
            if base_url is None:
                http = sdk_http_client(protocol, mock, event_hooks={"request": [record]})
            else:
                http = sdk_http_client(protocol, event_hooks={"request": [record]})
            return model_client(protocol, base_url=base_url, http_client=http)

        self._connect = connect
        self.events: list[ChainEvent] = []
        self.store = store
        executor_options.setdefault("vector_store", vector_store())
        self.executor = ChainExecutor(
            connect(), tools=TOOLS, prompt_configs=PROMPTS, policies=policies, store=store, **executor_options
        )
        self.executor.add_listener(self.events.append)

    def run(self, plan: ChainPlan) -> ChainPlan:
        """Run ``plan`` on a client of its own, closed afterwards (sockets to the server too)."""

        async def run() -> ChainPlan:
            self.executor.client = client = self._connect()
            try:
                return await self.executor.execute_chain(plan)
            finally:
                await client.aclose()

        return asyncio.run(run())

    def kinds(self) -> list[str]:
        return [e.event_type for e in self.events]

    def prompts(self) -> list[str]:
        """The newest user message of each model request, in order."""
        out = []
        for body in self.bodies:
            content = body["messages"][-1]["content"]
            out.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))
        return out
