"""What the chain service's door tests share: tokens for two organizations, tools that
can hold their step until the test lets go, a scripted five-step chain, and the app —
in-process (Starlette's TestClient) or served by uvicorn on 127.0.0.1.

A held tool is how a test sees a chain mid-run without sleeping: it waits on a
``threading.Event`` in a worker thread, the test waits until the tool has been
entered, looks, then releases it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx2
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.testclient import TestClient

from harness.systems.chain import InMemoryVectorStore, McpContextBuilder, Policy, SQLitePlanStore
from harness.systems.chain.mcp_context import CITATION_SCHEMA
from harness.systems.llm import model_client
from harness.systems.service.app import create_app
from harness.systems.service.auth import TokenAuth
from harness.systems.service.core import ChainService, ChainServiceConfig
from mockllm import InstructionChain, MockLLM
from mockllm._server import bind_socket
from mockllm._transports import HTTPX2Transport
from mockllm.testing import PromptServer

TOKENS = {
    "tok-ada": {"user": "ada", "organization": "acme"},
    "tok-bob": {"user": "bob", "organization": "acme"},
    "tok-eve": {"user": "eve", "organization": "globex"},
}
# Pass a copy to TestClient.websocket_connect: it adds its handshake headers to the dict.
ADA = {"Authorization": "Bearer tok-ada"}
EVE = {"Authorization": "Bearer tok-eve"}
DONE = json.dumps({"complete": True, "reason": "enough", "nextSteps": []})
ANSWER = "Paris is the capital of France."
REASONING = "The atlas names Paris, so the answer is Paris."
ATLAS = "am7://acme/data.data/atlas"


class HeldTool:
    """A tool whose calls wait for ``release`` (set unless ``hold()`` was called)."""

    def __init__(self, output: Callable[..., Any]) -> None:
        self.output = output
        self.release = threading.Event()
        self.release.set()
        self.calls = 0
        self._entered = threading.Condition()

    def hold(self) -> HeldTool:
        self.release.clear()
        return self

    async def __call__(self, **arguments: Any) -> Any:
        with self._entered:
            self.calls += 1
            self._entered.notify_all()
        if not self.release.is_set():
            await asyncio.to_thread(self.release.wait, 30)
        return self.output(**arguments)

    def wait_for_calls(self, count: int = 1) -> None:
        """Block the test until the tool has been entered ``count`` times."""
        with self._entered:
            if not self._entered.wait_for(lambda: self.calls >= count, timeout=15):
                raise AssertionError(f"the tool was entered {self.calls} time(s), expected {count}")


def composed_answer(answer: str) -> str:
    """The final step's output: a citation block, a reasoning block, then the answer."""
    blocks = (
        McpContextBuilder()
        .add_resource(
            "am7://vector/citations/atlas-1",
            CITATION_SCHEMA,
            {
                "query": "capital of France",
                "results": [{"uri": ATLAS, "content": "Paris is the capital.", "score": 0.9}],
            },
            ephemeral=True,
        )
        .add_reasoning(REASONING)
        .build()
    )
    return f"{blocks}\nFinal answer: {answer}"


def explode(**arguments: Any) -> str:
    raise RuntimeError("the archive is offline")


def scripted(prompt: str, *answers: str) -> str:
    """A plan query scripting each LLM step's answer and a routing reply adding nothing."""
    return InstructionChain.model_validate(
        {"instruction_chain": [{"messages": [{"text_message": {"text": t}}]} for a in answers for t in (a, DONE)]}
    ).tagged(prompt)


def capital_chain(question: str = "What is the capital of France?", **fields: Any) -> dict[str, Any]:
    """Five steps, one of each kind: Tool, RAG, LLM, Tool (citation and reasoning
    blocks in its output), Gate (permits, passing that output on as the result)."""
    return {
        "planQuery": scripted(question, ANSWER),
        "name": "capital",
        "steps": [
            {
                "stepType": "TOOL",
                "toolName": "lookup",
                "inputs": {"topic": "France"},
                "outputName": "facts",
                "description": "look up facts",
            },
            {
                "stepType": "RAG_QUERY",
                "ragQuery": "capital of France",
                "outputName": "citations",
                "description": "search the atlas",
            },
            {
                "stepType": "LLM",
                "inputs": {"prompt": "Answer the question using {{facts}}."},
                "outputName": "answer",
                "description": "answer the question",
            },
            {
                "stepType": "TOOL",
                "toolName": "compose",
                "inputs": {"answer": "{{answer}}"},
                "outputName": "final",
                "description": "compose the reply",
            },
            {"stepType": "POLICY_GATE", "policyName": "no-secrets", "description": "no secrets out"},
        ],
        **fields,
    }


def tool_chain(tool: str, **fields: Any) -> dict[str, Any]:
    """One TOOL step, then a gate: no model involved."""
    return {
        "planQuery": f"run {tool}",
        "name": tool,
        "steps": [
            {"stepType": "TOOL", "toolName": tool, "inputs": {"topic": tool}, "description": f"run {tool}"},
            {"stepType": "POLICY_GATE", "policyName": "no-secrets", "description": "no secrets out"},
        ],
        **fields,
    }


STALL = "steps 1 and 2 gave the same LLM output twice in a row"


def stalling_chain(**fields: Any) -> dict[str, Any]:
    """Two LLM steps that give the same answer (a stall, seed Group G), then a step the
    stall keeps from running."""
    return {
        "planQuery": scripted("Say it twice", "Same answer.", "Same answer."),
        "name": "stall",
        "steps": [
            {"stepType": "LLM", "inputs": {"prompt": "Say it."}, "description": "say it"},
            {"stepType": "LLM", "inputs": {"prompt": "Say it again."}, "description": "say it again"},
            {"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": "France"}, "description": "look up facts"},
        ],
        **fields,
    }


def replies(question: str, *texts: str) -> str:
    """``question`` scripting the model's replies, in order, as they are asked for."""
    return InstructionChain.model_validate(
        {"instruction_chain": [{"messages": [{"text_message": {"text": t}}]} for t in texts]}
    ).tagged(question)


def planned_chain(question: str, steps: list[dict[str, Any]], *answers: str, **fields: Any) -> dict[str, Any]:
    """A query-only request: the model plans ``steps`` (its first reply), then each LLM
    step answers from ``answers`` and routes to the end."""
    plan = json.dumps({"steps": steps})
    return {"planQuery": replies(question, plan, *(x for a in answers for x in (a, DONE))), **fields}


class ServiceBench:
    """A chain service with the tools above, its app, and the tools' handles."""

    def __init__(self) -> None:
        self.lookup = HeldTool(lambda topic: f"facts about {topic}: its capital is Paris")
        self.compose = HeldTool(composed_answer)
        self.leak = HeldTool(lambda topic: f"the secret launch code for {topic}")
        store = InMemoryVectorStore()
        store.add_document(ATLAS, "Paris is the capital of France. Lyon is its third largest city.")
        policy = Policy.model_validate(
            {
                "name": "no-secrets",
                "rules": [
                    {
                        "condition": "NONE",
                        "patterns": [
                            {"type": "expression", "check": "contains", "value": "secret", "ignoreCase": True}
                        ],
                    }
                ],
            }
        )
        self.prompts: list[str] = []  # the newest user message of each model request

        async def record(request: httpx2.Request) -> None:
            content = json.loads(request.content)["messages"][-1]["content"]
            self.prompts.append(content if isinstance(content, str) else "".join(b.get("text", "") for b in content))

        self.config = ChainServiceConfig(
            client=lambda: model_client(
                "anthropic-messages",
                http_client=httpx2.AsyncClient(
                    transport=HTTPX2Transport(MockLLM()),
                    base_url="http://mockllm.invalid",
                    event_hooks={"request": [record]},
                ),
            ),
            tools={"lookup": self.lookup, "compose": self.compose, "leak": self.leak, "explode": explode},
            policies=[policy],
            vector_stores={"acme": store},
            store=SQLitePlanStore(),
        )
        self.service = ChainService(self.config)
        self.auth = TokenAuth.from_json(TOKENS)
        self.app: Starlette = create_app(self.service, self.auth)

    def release_all(self) -> None:
        for tool in (self.lookup, self.compose, self.leak):
            tool.release.set()


@pytest.fixture
def bench() -> Iterator[ServiceBench]:
    bench = ServiceBench()
    try:
        yield bench
    finally:
        bench.release_all()  # a held tool's worker thread must not outlive the test
        bench.config.store.close()


@pytest.fixture
def client(bench: ServiceBench) -> Iterator[TestClient]:
    """``bench``'s app in-process, one event loop for the whole test."""
    with TestClient(bench.app) as client:
        try:
            yield client
        finally:
            bench.release_all()  # before the loop closes: it waits for the tools' threads


class LiveServer:
    """An app served by uvicorn in a thread on 127.0.0.1; the socket is bound and
    listening before the thread starts, so clients may connect at once."""

    def __init__(self, app: Starlette) -> None:
        self.socket = bind_socket("127.0.0.1", 0)
        self.port = self.socket.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}/chat/chain/ws"
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=5,
            ws="websockets-sansio",
        )
        self.server = PromptServer(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, name=f"uvicorn-{self.port}", daemon=True
        )

    def __enter__(self) -> LiveServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True  # wakes the server's loop from this thread
        self.thread.join(timeout=15)
        self.socket.close()
        assert not self.thread.is_alive(), "the uvicorn thread did not stop"


@pytest.fixture
def live(bench: ServiceBench) -> Iterator[LiveServer]:
    """``bench``'s app on a free port of 127.0.0.1."""
    with LiveServer(bench.app) as server:
        try:
            yield server
        finally:
            bench.release_all()


def stop(process: subprocess.Popen[str], signum: int) -> tuple[int, str]:
    """Send ``signum`` to a server process and wait for its end: its exit status and stderr."""
    try:
        process.send_signal(signum)
        _, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, err
