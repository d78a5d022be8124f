"""The engine's stages (``mockllm._pipeline``): nothing outside the codecs names a
protocol, a journal read late is the journal read at once, and the server's shortcut for
model calls answers as its router does."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from mockllm import MockLLM
from mockllm._wire.registry import CODECS
from tests.mockllm.server_support import PATHS, script, user_body

MOCKLLM = Path(__file__).resolve().parents[2] / "mockllm"

# The engine and the server: they ask the codec for whatever differs between providers.
NEUTRAL_MODULES = [
    "_engine.py",
    "_pipeline.py",
    "_exchange.py",
    "_response_headers.py",
    "_held.py",
    "_server.py",
    "_server_io.py",
    "_server_routes.py",
    "_serving.py",
]


@pytest.mark.parametrize("module", NEUTRAL_MODULES)
def test_the_engine_and_the_server_name_no_protocol(module: str) -> None:
    names = {codec.name for codec in CODECS}
    routes = {codec.route for codec in CODECS} | {"/conversations"}
    tree = ast.parse((MOCKLLM / module).read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    named = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and (node.value in names or any(route in node.value for route in routes))
    ]
    assert named == [], f"{module} names a protocol: {named}"


def _tool_step(name: str) -> dict[str, Any]:
    return {"id": f"call-{name}", "messages": [{"tool_call": [{"name": name, "args": {"city": "Oslo"}}]}]}


def _requests() -> list[tuple[str, bytes]]:
    """Scripted replies (text, declared and undeclared tool calls), a fallback, a rejection
    and a thread continued from a held message: every way an entry is made."""
    chain = script(_tool_step("get_weather"), {"id": "answer", "messages": [{"text_message": {"length": 3}}]})
    declared = user_body("openai-chat", chain)
    declared["tools"] = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    undeclared = user_body("openai-chat", script(_tool_step("not_declared")))
    thread = user_body("anthropic-messages", script({"id": "t", "messages": [{"text_message": {"length": 2}}]}))
    thread["thread"] = {"type": "create"}
    bodies = [
        (PATHS["openai-chat"], declared),
        (PATHS["openai-chat"], user_body("openai-chat", chain, stream=True)),
        (PATHS["openai-chat"], undeclared),
        (PATHS["openai-chat"], user_body("openai-chat", "no script here")),
        (PATHS["openai-responses"], {"model": "m"}),
        (PATHS["anthropic-messages"], thread),
    ]
    return [(path, json.dumps(body).encode()) for path, body in bodies]


def test_a_journal_read_late_is_the_journal_read_after_every_request() -> None:
    eager, late = MockLLM(), MockLLM()
    read_each_time, last = [], b""
    for path, body in _requests():
        eager.handle("POST", path, {}, body)
        last = late.handle("POST", path, {}, body).body
        read_each_time = eager.journal
    held = json.loads(last)
    follow_up = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "and then?"}]}
    follow_up["thread"] = {"type": "continue", "previous_message_id": held["id"]}
    late.handle("POST", PATHS["anthropic-messages"], {}, json.dumps(follow_up).encode())

    entries = late.journal
    assert [entry.model_dump() for entry in entries[: len(read_each_time)]] == [
        entry.model_dump() for entry in read_each_time
    ]
    assert [entry.outcome.value for entry in entries] == [
        "scripted",
        "scripted",
        "scripted",
        "fallback",
        "rejected",
        "scripted",
        "fallback",
    ]
    call = entries[0].reply.tool_calls[0]  # type: ignore[union-attr]
    assert (call.name, call.arguments, call.request_index) == ("get_weather", {"city": "Oslo"}, 0)
    assert entries[-1].rebuilt_from == held["id"]
    assert entries[-1].request.messages[-1]["content"] == "and then?"  # type: ignore[union-attr]
    assert late.journal[0] is entries[0]  # built once, then kept


def test_the_server_answers_a_model_call_at_its_root_as_under_a_session() -> None:
    pytest.importorskip("httpx2", reason="httpx2 is not installed (starlette's TestClient needs it)")
    from starlette.testclient import TestClient

    from mockllm._server import create_app

    app = create_app(MockLLM(), metrics=False)
    with TestClient(app) as client:
        session = client.post("/_mockllm/sessions", json={}).json()["path"]
        for path, body in _requests()[:5]:
            at_root = client.post(path, content=body)
            in_session = client.post(session + path, content=body)
            assert (at_root.status_code, at_root.content) == (in_session.status_code, in_session.content)
        gemini = "/v1beta/models/gemini-mock:streamGenerateContent?alt=sse"
        body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
        at_root, in_session = client.post(gemini, json=body), client.post(session + gemini, json=body)
        assert at_root.headers["content-type"].startswith("text/event-stream")
        assert at_root.content == in_session.content
        assert client.request("OPTIONS", PATHS["openai-chat"]).status_code == 405
        assert len(client.get("/_mockllm/requests").json()) == 6  # the 405 is the router's


@pytest.mark.parametrize("model", ["m", "é" * 1500, "x" * 5000, "model \\ud800 name"])
def test_an_entry_made_late_weighs_what_it_will_weigh_when_made(model: str) -> None:
    from mockllm._journal_ring import PendingEntry, entry_bytes

    mock = MockLLM()
    for path, body in _requests():
        sent = json.loads(body)
        sent["model"] = model
        mock.handle("POST", path, {}, json.dumps(sent).encode())
    pending = [item for item in mock._journal.items() if isinstance(item, PendingEntry)]
    assert len(pending) == 2  # the scripted replies the verdict does not count
    assert [item.weight for item in pending] == [entry_bytes(item.built()) for item in pending]
