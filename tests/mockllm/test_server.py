"""The mock over real HTTP: ``python -m mockllm serve``, its routes, faults and pacing.

Asserts what a user of the server notices: the printed base URLs, the journal, the
``x-mockllm-*`` headers, each provider's 4xx error body (never a 500), scripted faults
raised by the official SDKs as their own classes, streaming pace, a client that goes
away mid-stream, and the same bytes through the server and the in-process transports.

Most tests use the session server (``mock_server_url``); the tests that need a process
of their own (flags, signals, disconnects) start one and stop it by its PID.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest
import uvicorn

from mockllm import InstructionChain
from mockllm.engine import MockLLM
from mockllm.server import bind_socket, create_app
from mockllm.transports import HTTPX2Transport, HTTPXTransport

START_TIMEOUT_S = 30
STOP_TIMEOUT_S = 10
OPENAI_MODEL = "gpt-mock"
ANTHROPIC_MODEL = "claude-mock-1"

PATHS = {
    "openai-chat": "/v1/chat/completions",
    "anthropic-messages": "/v1/messages",
    "openai-responses": "/v1/responses",
}
PROTOCOLS = list(PATHS)


# -- building requests --------------------------------------------------------------


def script(*instructions: dict[str, Any], prompt: str = "prompt") -> str:
    """A user-message text holding ``instructions`` as a chain."""
    return InstructionChain(instruction_chain=list(instructions)).tagged(prompt)


def uid(label: str) -> str:
    """An instruction id unique to this run, so that chains never collide in a journal."""
    return f"{label}-{uuid.uuid4().hex[:8]}"


def text(length: int = 6, **extra: Any) -> dict[str, Any]:
    return {"id": uid("text"), "messages": [{"text_message": {"length": length}}], **extra}


def user_body(protocol: str, content: str, *, stream: bool = False) -> dict[str, Any]:
    """The smallest valid request of ``protocol`` with one user message."""
    if protocol == "openai-chat":
        body: dict[str, Any] = {"model": OPENAI_MODEL, "messages": [{"role": "user", "content": content}]}
    elif protocol == "anthropic-messages":
        body = {"model": ANTHROPIC_MODEL, "max_tokens": 512,
                "messages": [{"role": "user", "content": content}]}
    else:
        body = {"model": OPENAI_MODEL, "input": content}
    if stream:
        body["stream"] = True
    return body


def orphan_result_body(protocol: str) -> dict[str, Any]:
    """A conversation whose tool result answers no tool call."""
    if protocol == "openai-chat":
        return {"model": OPENAI_MODEL, "messages": [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "call_nowhere", "content": "42"},
        ]}
    if protocol == "anthropic-messages":
        return {"model": ANTHROPIC_MODEL, "max_tokens": 64, "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "let me see"},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "42"}]},
        ]}
    return {"model": OPENAI_MODEL, "input": [
        {"role": "user", "content": "hi"},
        {"type": "function_call_output", "call_id": "call_nowhere", "output": "42"},
    ]}


def unanswered_call_body(protocol: str) -> dict[str, Any]:
    """A conversation that moves on after an assistant tool call without its result."""
    if protocol == "openai-chat":
        return {"model": OPENAI_MODEL, "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_open", "type": "function",
                 "function": {"name": "lookup", "arguments": "{}"}}]},
            {"role": "user", "content": "and then?"},
        ]}
    if protocol == "anthropic-messages":
        return {"model": ANTHROPIC_MODEL, "max_tokens": 64, "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_open", "name": "lookup", "input": {}}]},
            {"role": "user", "content": "and then?"},
        ]}
    return {"model": OPENAI_MODEL, "input": [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "call_open", "name": "lookup", "arguments": "{}"},
        {"role": "user", "content": "and then?"},
    ]}


def encode(body: Any) -> bytes:
    return json.dumps(body).encode()


_shared: list[httpx2.Client] = []


@pytest.fixture(scope="module", autouse=True)
def _shared_client() -> Iterator[None]:
    """One loopback client for the module (building an httpx2 client costs ~50 ms)."""
    with httpx2.Client(timeout=30) as client:
        _shared.append(client)
        try:
            yield
        finally:
            _shared.clear()


def http() -> httpx2.Client:
    return _shared[0]


def post(base_url: str, protocol: str, body: Any, **headers: str) -> httpx2.Response:
    content = body if isinstance(body, bytes) else encode(body)
    return http().post(f"{base_url}{PATHS[protocol]}", content=content,
                       headers={"content-type": "application/json", **headers})


def journal(base_url: str) -> list[dict[str, Any]]:
    response = http().get(f"{base_url}/_mockllm/requests")
    assert response.status_code == 200
    return response.json()


def entries_for(base_url: str, chain_id: str) -> list[dict[str, Any]]:
    return [e for e in journal(base_url) if e["chain_id"] == chain_id]


def sse_events(body: bytes) -> list[bytes]:
    return [e for e in body.split(b"\n\n") if e.strip()]


def assert_provider_error(protocol: str, response: Any, status: int, error_type: str) -> dict[str, Any]:
    """``response`` carries the provider's own error body with ``status`` and ``error_type``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    if protocol == "anthropic-messages":
        assert body["type"] == "error"
        assert set(body["error"]) == {"type", "message"}
    else:
        assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["type"] == error_type
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


# -- a server process of the test's own ---------------------------------------------


@dataclass
class ServerProcess:
    proc: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path
    base_url: str = ""

    @property
    def output(self) -> str:
        return self.stdout.read_text()

    @property
    def errors(self) -> str:
        return self.stderr.read_text()

    def wait_ready(self) -> ServerProcess:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            output = self.output
            first_line = output.partition("\n")[0]
            # Ready once the URL line and both base_url lines are out.
            if first_line.startswith("mockllm serving on ") and output.count("base_url=") >= 2:
                self.base_url = first_line.split()[-1]
                return self
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"server did not start:\n{self.output}\n{self.errors}")
            time.sleep(0.02)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Send ``sig`` to the server's PID; its exit code (bounded wait)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"server did not stop on {sig!r} within {STOP_TIMEOUT_S}s") from None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def launch(tmp: Path, *args: str) -> ServerProcess:
    """Start ``python -m mockllm serve ARGS`` with its output in files under ``tmp``."""
    tmp.mkdir(parents=True, exist_ok=True)
    name = uuid.uuid4().hex[:8]
    out, err = tmp / f"{name}.out", tmp / f"{name}.err"
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "mockllm", "serve", *args],
                                stdout=stdout, stderr=stderr,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    return ServerProcess(proc, out, err)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ServerProcess]]:
    """Two servers of this module's own, started together: both ``--seed 7``, one
    ``--lenient``. ``strict`` also hosts the journal-reset and disconnect tests."""
    tmp = tmp_path_factory.mktemp("servers")
    started = {"lenient": launch(tmp, "--port", "0", "--seed", "7", "--lenient"),
               "strict": launch(tmp, "--port", "0", "--seed", "7")}
    try:
        for server in started.values():
            server.wait_ready()
        yield started
    finally:
        for server in started.values():  # signal both, then wait for both
            if server.proc.poll() is None:
                server.proc.send_signal(signal.SIGTERM)
        for server in started.values():
            server.stop(signal.SIGTERM)


def listening_addresses(port: int) -> set[str]:
    """Local IPv4 addresses listening on ``port``, read from /proc/net/tcp (Linux)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, _, hex_port = local.partition(":")
        if state == "0A" and int(hex_port, 16) == port:
            found.add(".".join(str(b) for b in reversed(bytes.fromhex(address))))
    return found


# == 1. the command line ==============================================================


def test_serve_prints_base_urls_binds_loopback_and_answers_health(servers: dict[str, ServerProcess]) -> None:
    server = servers["strict"]
    base = server.base_url
    assert base.startswith("http://127.0.0.1:")
    port = int(base.rsplit(":", 1)[1])
    assert port > 0  # --port 0 picked a real port and printed it
    lines = server.output.splitlines()
    assert f"base_url={base}/v1" in lines[1] and "OpenAI" in lines[1]
    assert lines[2].rstrip().endswith(f"base_url={base}") and "Anthropic" in lines[2]
    if Path("/proc/net/tcp").exists():
        assert listening_addresses(port) == {"127.0.0.1"}
    health = http().get(f"{base}/_mockllm/health")
    assert health.status_code == 200
    assert health.json() == {"status": "ok"}
    # The printed URLs are the ones the SDKs take as base_url.
    oai, ant = _clients(base, http(), retries=0)
    chat = oai.chat.completions.create(model=OPENAI_MODEL,
                                       messages=[{"role": "user", "content": script(text(4))}])
    message = ant.messages.create(model=ANTHROPIC_MODEL, max_tokens=64,
                                  messages=[{"role": "user", "content": script(text(4))}])
    assert len(chat.choices[0].message.content.split()) == 4
    assert len(message.content[0].text.split()) == 4


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_server_stops_cleanly_on_signal(tmp_path: Path, sig: int) -> None:
    server = launch(tmp_path, "--port", "0").wait_ready()
    try:
        assert post(server.base_url, "openai-chat", user_body("openai-chat", script(text(3)))).status_code == 200
        code = server.stop(sig)
    finally:
        server.kill()
    assert code == 0
    assert "Traceback" not in server.errors and "Traceback" not in server.output
    assert "KeyboardInterrupt" not in server.errors
    assert server.output.rstrip().endswith("mockllm stopped")


def test_server_stops_on_sigterm_with_a_stream_in_flight(tmp_path: Path) -> None:
    server = launch(tmp_path, "--port", "0").wait_ready()
    body = user_body("openai-chat", script(text(20, timing={"chunk_ms": 200})), stream=True)
    try:
        with httpx2.Client() as client, client.stream(
                "POST", f"{server.base_url}/v1/chat/completions", content=encode(body)) as response:
            assert response.status_code == 200
            next(response.iter_raw())
            code = server.stop(signal.SIGTERM)
    except httpx2.TransportError:
        code = server.stop(signal.SIGTERM)
    finally:
        server.kill()
    assert code == 0
    assert "Traceback" not in server.errors


def test_port_in_use_exits_2_with_a_clear_message(tmp_path: Path, mock_server_url: str) -> None:
    port = mock_server_url.rsplit(":", 1)[1]
    server = launch(tmp_path, "--port", port)
    try:
        code = server.proc.wait(timeout=START_TIMEOUT_S)
    finally:
        server.kill()
    assert code == 2
    assert "Traceback" not in server.errors
    message = server.errors.strip()
    assert f"127.0.0.1:{port}" in message
    assert "in use" in message.lower()
    assert "--port" in message
    # The server that holds the port is unharmed.
    assert http().get(f"{mock_server_url}/_mockllm/health").status_code == 200


def _words(base_url: str, content: str) -> str:
    response = post(base_url, "openai-chat", user_body("openai-chat", content))
    assert response.status_code == 200
    return response.json()["choices"][0]["message"]["content"]


def test_seed_changes_generated_words(servers: dict[str, ServerProcess], mock_server_url: str) -> None:
    content = script({"id": "seeded", "messages": [{"text_message": {"length": 24}}]})
    seven_a = _words(servers["lenient"].base_url, content)
    seven_b = _words(servers["strict"].base_url, content)
    zero = _words(mock_server_url, content)
    assert len(seven_a.split()) == 24
    assert seven_a == seven_b  # same seed, same words (in two processes)
    assert zero != seven_a  # --seed changes them
    # The server's --seed is the engine's seed: an in-process MockLLM(seed=7) agrees.
    with httpx2.Client(transport=HTTPX2Transport(MockLLM(seed=7))) as client:
        local = client.post("http://mockllm.test/v1/chat/completions",
                            content=encode(user_body("openai-chat", content)))
    assert local.json()["choices"][0]["message"]["content"] == seven_a


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_lenient_accepts_an_orphan_tool_result_the_default_rejects(
        servers: dict[str, ServerProcess], protocol: str) -> None:
    body = orphan_result_body(protocol)
    strict = post(servers["strict"].base_url, protocol, body)
    assert_provider_error(protocol, strict, 400, "invalid_request_error")
    lenient = post(servers["lenient"].base_url, protocol, body)
    assert lenient.status_code == 200, lenient.text
    assert lenient.headers["x-mockllm-protocol"] == protocol
    unanswered = post(servers["lenient"].base_url, protocol, unanswered_call_body(protocol))
    assert unanswered.status_code == 200, unanswered.text


# == 2. the journal =================================================================


def test_journal_lists_requests_newest_last_with_the_selection(mock_server_url: str) -> None:
    first, second = text(3), text(3)
    content = script(first, second)
    # Turn 0 (chat), turn 1 (messages), past the end (responses), no chain (chat).
    chat = post(mock_server_url, "openai-chat", user_body("openai-chat", content))
    messages_body = user_body("anthropic-messages", content)
    messages_body["messages"] += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "go on"}]
    messages = post(mock_server_url, "anthropic-messages", messages_body)
    responses_body = {"model": OPENAI_MODEL, "input": [
        {"role": "user", "content": content},
        {"role": "assistant", "content": "one"}, {"role": "user", "content": "go on"},
        {"role": "assistant", "content": "two"}, {"role": "user", "content": "and on"},
    ]}
    past_end = post(mock_server_url, "openai-responses", responses_body)
    no_chain = post(mock_server_url, "openai-chat", user_body("openai-chat", f"no script {uid('x')}"))
    for response in (chat, messages, past_end, no_chain):
        assert response.status_code == 200, response.text

    tail = journal(mock_server_url)[-4:]
    assert [e["protocol"] for e in tail] == ["openai-chat", "anthropic-messages", "openai-responses",
                                             "openai-chat"]
    assert [e["index"] for e in tail] == sorted(e["index"] for e in tail)  # newest last
    chain_id = chat.headers["x-mockllm-chain"]
    assert [e["chain_id"] for e in tail[:3]] == [chain_id] * 3
    assert [e["turn_index"] for e in tail[:3]] == [0, 1, 2]
    assert [e["instruction_id"] for e in tail[:3]] == [first["id"], second["id"], None]
    assert [e["fallback_reason"] for e in tail[:2]] == [None, None]
    assert "past the end" in tail[2]["fallback_reason"]
    assert tail[3]["chain_id"] is None and tail[3]["fallback_reason"]
    assert [e["model"] for e in tail] == [OPENAI_MODEL, ANTHROPIC_MODEL, OPENAI_MODEL, OPENAI_MODEL]
    assert all(e["status"] == 200 and e["method"] == "POST" for e in tail)


def test_journal_records_rejected_requests_too(mock_server_url: str) -> None:
    post(mock_server_url, "anthropic-messages", b"{not json")
    last = journal(mock_server_url)[-1]
    assert last["status"] == 400 and last["protocol"] == "anthropic-messages"
    assert "not valid JSON" in last["error"]


def test_reset_empties_the_journal(servers: dict[str, ServerProcess]) -> None:
    base = servers["strict"].base_url
    post(base, "openai-chat", user_body("openai-chat", script(text(2))))
    assert journal(base)
    reset = http().post(f"{base}/_mockllm/reset")
    assert reset.status_code == 200
    assert journal(base) == []
    post(base, "openai-responses", user_body("openai-responses", script(text(2))))
    (entry,) = journal(base)
    assert entry["protocol"] == "openai-responses" and entry["index"] == 0


def test_journal_is_bounded_keeping_the_newest() -> None:
    mock = MockLLM(journal_size=3)
    ids = [uid(f"n{i}") for i in range(5)]
    with httpx2.Client(transport=HTTPX2Transport(mock)) as client:
        for instruction_id in ids:
            body = user_body("openai-chat", script({"id": instruction_id,
                                                    "messages": [{"text_message": {"length": 1}}]}))
            assert client.post("http://mockllm.test/v1/chat/completions", content=encode(body)).status_code == 200
    entries = mock.journal
    assert [e.instruction_id for e in entries] == ids[-3:]
    assert [e.index for e in entries] == [2, 3, 4]
    # The server serves this same bounded journal.
    app = create_app(mock)
    assert app.state.mock is mock


# == 3. the x-mockllm-* headers ========================================================


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_reply_tells_chain_turn_and_instruction(mock_server_url: str, protocol: str,
                                                      stream: bool) -> None:
    step = text(3)
    response = post(mock_server_url, protocol, user_body(protocol, script(step), stream=stream))
    assert response.status_code == 200
    headers = response.headers
    entry = journal(mock_server_url)[-1]
    assert headers["x-mockllm-chain"] == entry["chain_id"] and len(headers["x-mockllm-chain"]) >= 4
    assert headers["x-mockllm-turn"] == "0"
    assert headers["x-mockllm-instruction"] == step["id"]
    assert "x-mockllm-fallback" not in headers
    assert headers["x-mockllm-protocol"] == protocol
    expected_type = "text/event-stream" if stream else "application/json"
    assert headers["content-type"].startswith(expected_type)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_fallback_reply_tells_its_reason_in_a_header(mock_server_url: str, protocol: str) -> None:
    content = script(text(2))
    if protocol == "openai-responses":
        body: dict[str, Any] = {"model": OPENAI_MODEL, "input": [
            {"role": "user", "content": content}, {"role": "assistant", "content": "done"},
            {"role": "user", "content": "more"}]}
    else:
        body = user_body(protocol, content)
        body["messages"] += [{"role": "assistant", "content": "done"}, {"role": "user", "content": "more"}]
    response = post(mock_server_url, protocol, body)
    assert response.status_code == 200
    headers = response.headers
    assert headers["x-mockllm-turn"] == "1"
    assert "past the end of the chain" in headers["x-mockllm-fallback"]
    assert "x-mockllm-instruction" not in headers
    assert headers["x-mockllm-protocol"] == protocol
    assert headers["x-mockllm-fallback"] in response.text  # the reply says why, too

    unscripted = post(mock_server_url, protocol, user_body(protocol, "just chatting"))
    assert unscripted.headers["x-mockllm-chain"] == "none"
    assert unscripted.headers["x-mockllm-fallback"]
    assert unscripted.headers["x-mockllm-protocol"] == protocol


def test_scripted_error_replies_carry_the_headers_too(mock_server_url: str) -> None:
    step = {"id": uid("e"), "error": {"status": 429}}
    response = post(mock_server_url, "openai-chat", user_body("openai-chat", script(step)))
    assert response.status_code == 429
    assert response.headers["x-mockllm-instruction"] == step["id"]
    assert response.headers["x-mockllm-turn"] == "0"
    assert response.headers["x-mockllm-protocol"] == "openai-chat"


# == 4. requests a real provider would reject ===========================================


def _without(body: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != key}


REJECTIONS: list[tuple[str, str, Any, str]] = []
for _protocol in PROTOCOLS:
    _valid = user_body(_protocol, "hi")
    _list_key = "input" if _protocol == "openai-responses" else "messages"
    REJECTIONS += [
        (_protocol, "invalid-json", b'{"model": "gpt-mock", "messages": [', "not valid JSON"),
        (_protocol, "json-array", b"[]", ""),
        (_protocol, "missing-model", encode(_without(_valid, "model")), "model"),
        (_protocol, f"missing-{_list_key}", encode(_without(_valid, _list_key)), _list_key),
        (_protocol, "orphan-tool-result", encode(orphan_result_body(_protocol)), ""),
        (_protocol, "unanswered-tool-call", encode(unanswered_call_body(_protocol)), ""),
    ]
REJECTIONS.append(("anthropic-messages", "missing-max_tokens",
                   encode(_without(user_body("anthropic-messages", "hi"), "max_tokens")), "max_tokens"))


@pytest.mark.parametrize(("protocol", "case", "body", "mentions"), REJECTIONS,
                         ids=[f"{p}-{c}" for p, c, _, _ in REJECTIONS])
def test_rejected_requests_get_the_providers_400(mock_server_url: str, protocol: str, case: str,
                                                 body: bytes, mentions: str) -> None:
    response = post(mock_server_url, protocol, body)
    error = assert_provider_error(protocol, response, 400, "invalid_request_error")
    assert mentions in error["message"]
    if protocol != "anthropic-messages" and case.startswith("missing-") and mentions != "model":
        # (OpenAI itself leaves ``param`` null for a missing model.)
        assert error["param"] == mentions
    if case == "orphan-tool-result":
        assert "nowhere" in error["message"] or "preceeding" in error["message"]
    if case == "unanswered-tool-call" and protocol != "anthropic-messages":
        assert "open" in error["message"]


ODD_BODIES = [b"", b"null", b'"text"', b"3", b"\xff\xfe\x00", b'{"model": 5}',
              b'{"model": "m", "messages": "x", "input": 5, "max_tokens": "x"}',
              b'{"model": "m", "messages": [1, null], "input": [1, null], "max_tokens": 5}',
              b'{"model": "m", "messages": [{"role": "user", "content": [null, 5]}], '
              b'"input": [{"type": "function_call"}], "max_tokens": 5, "stream": "yes"}',
              b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": '
              b'"<|instruction_start|>{bad json<|instruction_end|>"}], '
              b'"input": "<|instruction_start|>[1]<|instruction_end|>"}']


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_odd_bodies_never_get_a_500(mock_server_url: str, protocol: str) -> None:
    for body in ODD_BODIES:
        response = post(mock_server_url, protocol, body)
        assert response.status_code in (200, 400), (body, response.status_code, response.text)
        if response.status_code == 400:
            assert_provider_error(protocol, response, 400, "invalid_request_error")


def test_unknown_route_is_a_json_404(mock_server_url: str) -> None:
    client = http()
    for method, path in (("GET", "/v1/models/nope"), ("POST", "/v1/completions"), ("GET", "/")):
        response = client.request(method, f"{mock_server_url}{path}")
        assert response.status_code == 404
        assert response.headers["content-type"].startswith("application/json")
        error = response.json()["error"]
        assert path in error["message"] and "/v1/chat/completions" in error["message"]
        assert error["type"] == "invalid_request_error" and error["code"] is None
    wrong_method = client.get(f"{mock_server_url}/v1/chat/completions")
    assert wrong_method.status_code == 405
    assert wrong_method.json()["error"]["type"] == "invalid_request_error"


def test_sdks_raise_their_own_bad_request_errors(mock_server_url: str) -> None:
    oai, ant = _clients(mock_server_url, http(), retries=0)
    with pytest.raises(openai.BadRequestError) as chat_error:
        oai.chat.completions.create(**orphan_result_body("openai-chat"))
    with pytest.raises(openai.BadRequestError) as responses_error:
        oai.responses.create(**unanswered_call_body("openai-responses"))
    with pytest.raises(anthropic.BadRequestError) as messages_error:
        ant.messages.create(**orphan_result_body("anthropic-messages"))
    with pytest.raises(anthropic.BadRequestError) as stream_error:
        ant.messages.create(**unanswered_call_body("anthropic-messages"), stream=True)
    assert chat_error.value.status_code == 400
    assert chat_error.value.type == "invalid_request_error"
    assert chat_error.value.param and chat_error.value.param.startswith("messages")
    assert responses_error.value.code is None and "call_open" in responses_error.value.message
    assert messages_error.value.body["error"]["type"] == "invalid_request_error"
    assert "toolu_nowhere" in messages_error.value.body["error"]["message"]
    assert "toolu_open" in stream_error.value.body["error"]["message"]


# == 5. scripted faults ================================================================


def test_429_sends_retry_after_ms(mock_server_url: str) -> None:
    step = {"id": uid("limit"), "error": {"status": 429, "retry_after_ms": 1}}
    for protocol in PROTOCOLS:
        response = post(mock_server_url, protocol, user_body(protocol, script(step)))
        expected = "rate_limit_error" if protocol == "anthropic-messages" else None
        error = response.json()["error"]
        assert response.status_code == 429
        assert response.headers["retry-after-ms"] == "1"
        assert response.headers["retry-after"] == "1"
        if expected:
            assert error["type"] == expected
        assert error["message"]


def _clients(base: str, http: httpx2.Client, retries: int) -> tuple[openai.OpenAI, anthropic.Anthropic]:
    return (openai.OpenAI(api_key="test", base_url=f"{base}/v1", http_client=http, max_retries=retries),
            anthropic.Anthropic(api_key="test", base_url=base, http_client=http, max_retries=retries))


def _sdk_call(protocol: str, oai: openai.OpenAI, ant: anthropic.Anthropic, content: str) -> str:
    if protocol == "openai-chat":
        return oai.chat.completions.create(model=OPENAI_MODEL,
                                           messages=[{"role": "user", "content": content}]
                                           ).choices[0].message.content
    if protocol == "anthropic-messages":
        return ant.messages.create(model=ANTHROPIC_MODEL, max_tokens=64,
                                   messages=[{"role": "user", "content": content}]).content[0].text
    return oai.responses.create(model=OPENAI_MODEL, input=content).output_text


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_fail_once_then_succeed_with_sdk_retries(mock_server_url: str, protocol: str) -> None:
    step = {"id": uid("once"), "error": {"status": 429, "retry_after_ms": 1, "times": 1},
            "messages": [{"text_message": {"length": 5}}]}
    oai, ant = _clients(mock_server_url, http(), retries=2)
    reply = _sdk_call(protocol, oai, ant, script(step))
    assert len(reply.split()) == 5
    attempts = [e for e in journal(mock_server_url) if e["instruction_id"] == step["id"]]
    assert [(e["attempt"], e["status"]) for e in attempts] == [(0, 429), (1, 200)]


def test_without_times_every_attempt_fails(mock_server_url: str) -> None:
    step = {"id": uid("always"), "error": {"status": 429, "retry_after_ms": 1}}
    oai, ant = _clients(mock_server_url, http(), retries=2)
    with pytest.raises(openai.RateLimitError) as raised:
        _sdk_call("openai-chat", oai, ant, script(step))
    with pytest.raises(anthropic.RateLimitError):
        _sdk_call("anthropic-messages", oai, ant, script(step))
    assert raised.value.response.headers["retry-after-ms"] == "1"
    attempts = [e for e in journal(mock_server_url) if e["instruction_id"] == step["id"]]
    assert [(e["protocol"], e["attempt"], e["status"]) for e in attempts] == (
        [("openai-chat", n, 429) for n in range(3)] + [("anthropic-messages", n, 429) for n in range(3)])


@pytest.mark.parametrize("status", [500, 503])
def test_server_errors_raise_internal_server_error(mock_server_url: str, status: int) -> None:
    step = {"id": uid("boom"), "error": {"status": status}}
    oai, ant = _clients(mock_server_url, http(), retries=0)
    with pytest.raises(openai.InternalServerError) as chat:
        _sdk_call("openai-chat", oai, ant, script(step))
    with pytest.raises(openai.InternalServerError) as responses:
        _sdk_call("openai-responses", oai, ant, script(step))
    with pytest.raises(anthropic.InternalServerError) as messages:
        _sdk_call("anthropic-messages", oai, ant, script(step))
    assert chat.value.status_code == responses.value.status_code == messages.value.status_code == status
    assert chat.value.type == "server_error"
    assert messages.value.body["type"] == "error"


def test_anthropic_529_raises_overloaded_error(mock_server_url: str) -> None:
    step = {"id": uid("busy"), "error": {"status": 529}}
    _, ant = _clients(mock_server_url, http(), retries=0)
    with pytest.raises(anthropic.OverloadedError) as raised:
        _sdk_call("anthropic-messages", None, ant, script(step))  # type: ignore[arg-type]
    assert isinstance(raised.value, anthropic.InternalServerError)
    assert raised.value.status_code == 529
    assert raised.value.body["error"]["type"] == "overloaded_error"


def test_scripted_type_and_message_are_used_verbatim(mock_server_url: str) -> None:
    step = {"id": uid("custom"), "error": {"status": 400, "type": "invalid_request_error",
                                            "message": "prompt is too long: 300000 tokens > 200000 maximum"}}
    response = post(mock_server_url, "anthropic-messages", user_body("anthropic-messages", script(step)))
    assert response.status_code == 400
    assert response.json() == {"type": "error", "error": {
        "type": "invalid_request_error", "message": "prompt is too long: 300000 tokens > 200000 maximum"}}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_mid_stream_error_after_k_events_raw(mock_server_url: str, protocol: str) -> None:
    k = 3
    step = text(10, error={"status": 500, "after_chunks": k})
    response = post(mock_server_url, protocol, user_body(protocol, script(step), stream=True))
    assert response.status_code == 200  # the stream starts fine...
    events = sse_events(response.content)
    assert len(events) == k + 1  # ...and fails after K events
    last = events[-1].decode()
    if protocol == "anthropic-messages":
        assert last.startswith("event: error\n")
        assert json.loads(last.split("data: ", 1)[1])["error"]["type"] == "api_error"
    elif protocol == "openai-responses":
        assert json.loads(last.split("data: ", 1)[1])["type"] == "error"
    else:
        assert json.loads(last.split("data: ", 1)[1])["error"]["type"] == "server_error"
    assert b"[DONE]" not in response.content
    assert journal(mock_server_url)[-1]["error"] == f"scripted mid-stream error after {k} events"


def test_mid_stream_errors_raise_in_each_sdk(mock_server_url: str) -> None:
    k = 3
    content = script(text(10, error={"status": 500, "after_chunks": k}))
    oai, ant = _clients(mock_server_url, http(), retries=0)
    chunks: list[Any] = []
    with pytest.raises(openai.APIError) as chat:
        with oai.chat.completions.create(model=OPENAI_MODEL, stream=True,
                                         messages=[{"role": "user", "content": content}]) as stream:
            for chunk in stream:
                chunks.append(chunk)
    assert len(chunks) == k
    assert not isinstance(chat.value, openai.APIStatusError) or chat.value.status_code == 200

    events: list[Any] = []
    with pytest.raises(openai.APIError):
        with oai.responses.create(model=OPENAI_MODEL, input=content, stream=True) as stream:
            for event in stream:
                events.append(event.type)
    assert events == ["response.created", "response.in_progress", "response.output_item.added"]

    kinds: list[str] = []
    with pytest.raises(anthropic.APIStatusError) as messages:
        with ant.messages.create(model=ANTHROPIC_MODEL, max_tokens=64, stream=True,
                                 messages=[{"role": "user", "content": content}]) as stream:
            for event in stream:
                kinds.append(event.type)
    assert kinds and kinds[0] == "message_start" and len(kinds) <= k
    assert messages.value.body["error"]["type"] == "api_error"


# == 6. pacing ==========================================================================


@dataclass
class Read:
    status: int
    headers: Any
    first_byte_s: float
    total_s: float
    reads: int
    body: bytes


def read_stream(client: Any, url: str, body: dict[str, Any]) -> Read:
    """POST ``body`` and read the streamed reply raw, timing its first byte."""
    chunks: list[bytes] = []
    started = time.monotonic()
    first = 0.0
    with client.stream("POST", url, content=encode(body),
                       headers={"content-type": "application/json"}) as response:
        for chunk in response.iter_raw():
            if not chunks:
                first = time.monotonic() - started
            chunks.append(chunk)
        return Read(response.status_code, response.headers, first, time.monotonic() - started,
                    len(chunks), b"".join(chunks))


@pytest.mark.parametrize("door_name", ["server", "in-process"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_first_chunk_waits_first_chunk_ms(mock_server_url: str, protocol: str, door_name: str) -> None:
    step = text(3, timing={"first_chunk_ms": 150, "chunk_ms": 0})
    body = user_body(protocol, script(step), stream=True)
    if door_name == "server":
        got = read_stream(http(), f"{mock_server_url}{PATHS[protocol]}", body)
    else:
        with httpx2.Client(transport=HTTPX2Transport(MockLLM())) as client:
            got = read_stream(client, f"http://mockllm.test{PATHS[protocol]}", body)
    assert got.status == 200
    assert got.first_byte_s >= 0.145, got.first_byte_s  # a lower bound only
    assert len(sse_events(got.body)) > 3


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_chunk_ms_sends_each_event_as_its_own_read(mock_server_url: str, protocol: str) -> None:
    step = text(3, timing={"chunk_ms": 50})
    got = read_stream(http(), f"{mock_server_url}{PATHS[protocol]}",
                      user_body(protocol, script(step), stream=True))
    events = sse_events(got.body)
    assert got.status == 200
    assert "content-length" not in got.headers  # sent as it goes
    assert got.reads > 1
    assert got.reads >= len(events), (got.reads, len(events))
    assert got.total_s >= 0.05 * (len(events) - 1) * 0.9


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_without_timing_the_stream_arrives_in_one_piece(mock_server_url: str, protocol: str) -> None:
    got = read_stream(http(), f"{mock_server_url}{PATHS[protocol]}",
                      user_body(protocol, script(text(12)), stream=True))
    events = sse_events(got.body)
    assert got.status == 200
    assert len(events) > 12
    # One write with a known length: the SSE events are ready and go out together.
    assert got.headers["content-length"] == str(len(got.body))
    assert got.reads < len(events), got.reads  # typically 1 on loopback


def test_pacing_and_a_mid_stream_error_together(mock_server_url: str) -> None:
    step = text(6, timing={"chunk_ms": 10}, error={"status": 500, "after_chunks": 2})
    got = read_stream(http(), f"{mock_server_url}/v1/chat/completions",
                      user_body("openai-chat", script(step), stream=True))
    events = sse_events(got.body)
    assert len(events) == 3 and b'"error"' in events[-1]


# == 7. a client that goes away mid-stream ==============================================


def _abort_after(base: str, events: int, chunk_ms: int = 200, words: int = 20,
                 client: httpx2.Client | None = None) -> None:
    """Read ``events`` events of a slowly paced stream, then hang up."""
    body = user_body("openai-chat", script(text(words, timing={"chunk_ms": chunk_ms})), stream=True)
    seen = b""
    with contextlib.ExitStack() as stack:
        if client is None:
            client = stack.enter_context(httpx2.Client())
        response = stack.enter_context(client.stream("POST", f"{base}/v1/chat/completions",
                                                     content=encode(body)))
        assert response.status_code == 200
        for chunk in response.iter_raw():
            seen += chunk
            if seen.count(b"\n\n") >= events:
                break
    # closing the unfinished response drops its connection mid-stream


def test_client_disconnect_mid_stream_leaves_the_server_serving(servers: dict[str, ServerProcess]) -> None:
    server = servers["strict"]
    base = server.base_url
    before = len(journal(base))
    _abort_after(base, events=2)
    assert http().get(f"{base}/_mockllm/health").status_code == 200
    followup = post(base, "anthropic-messages", user_body("anthropic-messages", script(text(4))))
    assert followup.status_code == 200
    assert len(followup.json()["content"][0]["text"].split()) == 4
    time.sleep(0.5)
    assert server.proc.poll() is None
    entries = journal(base)
    assert len(entries) == before + 2
    aborted, after = entries[-2:]
    assert aborted["stream"] is True and aborted["status"] == 200 and aborted["protocol"] == "openai-chat"
    assert after["protocol"] == "anthropic-messages"
    assert "Traceback" not in server.errors


def test_a_burst_of_aborted_streams_does_not_hurt_later_requests(servers: dict[str, ServerProcess]) -> None:
    server = servers["strict"]
    base = server.base_url
    with httpx2.Client(limits=httpx2.Limits(max_connections=40)) as client:
        threads = [threading.Thread(target=_abort_after, args=(base, 1), kwargs={"client": client})
                   for _ in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
    started = time.monotonic()
    for protocol in PROTOCOLS:
        for stream in (False, True):
            response = post(base, protocol, user_body(protocol, script(text(5)), stream=stream))
            assert response.status_code == 200
    assert time.monotonic() - started < 5  # generous: these take milliseconds
    assert server.proc.poll() is None
    assert "Traceback" not in server.errors


@contextlib.contextmanager
def threaded_server(mock: MockLLM) -> Iterator[tuple[uvicorn.Server, str]]:
    """The server's app under uvicorn in a thread of this process, so that a test can
    look at uvicorn's own state (request tasks, connections)."""
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(mock), log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "threaded server did not start"
            time.sleep(0.01)
        yield server, f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=STOP_TIMEOUT_S)
        sock.close()
    assert not thread.is_alive()


def test_aborted_streams_leave_no_request_tasks_behind() -> None:
    """After clients leave mid-stream, the server's request tasks end promptly instead
    of pacing on for the seconds left in their scripts."""
    mock = MockLLM()
    with threaded_server(mock) as (server, base):
        with httpx2.Client() as client:
            for _ in range(5):
                _abort_after(base, 1, chunk_ms=300, words=30, client=client)  # 9 s each if left running
        deadline = time.monotonic() + 3
        while server.server_state.tasks and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not server.server_state.tasks, f"{len(server.server_state.tasks)} request task(s) still running"
        assert len(mock.journal) == 5


def test_connections_are_not_held_back_by_nagle() -> None:
    """Replies go out in two writes (headers, body); with Nagle on, the second waits for
    the client's delayed ACK (~40 ms a request on Linux). The listening socket must be
    marked TCP so that asyncio sets TCP_NODELAY on every accepted connection."""
    listener = bind_socket("127.0.0.1", 0)
    with listener:
        assert listener.proto == socket.IPPROTO_TCP
    with threaded_server(MockLLM()) as (server, base), httpx2.Client() as client:
        assert client.get(f"{base}/_mockllm/health").status_code == 200
        connections = list(server.server_state.connections)
        assert connections
        for connection in connections:
            sock = connection.transport.get_extra_info("socket")
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


# == 8. one engine, many doors ==========================================================


def _door_requests() -> list[tuple[str, str, bytes]]:
    tools_chain = script(
        {"id": "call", "messages": [{"tool_call": [{"name": "lookup", "args": {"q": "paris"}},
                                                   {"name": "lookup", "args": {"q": "rome"}}]}]},
        {"id": "answer", "reasoning": {"length": 5}, "messages": [{"text_message": {"length": 8}}]},
    )
    thinking = script({"id": "think", "reasoning": {"length": 6},
                       "messages": [{"text_message": {"length": 7}},
                                    {"tool_call": [{"name": "lookup", "args": {"q": "x y"}}]}]})
    plain = script(text(9), prompt="doors")
    paced = script(text(4, timing={"first_chunk_ms": 1, "chunk_ms": 1}))
    chat_turn_1 = {"model": OPENAI_MODEL, "messages": [
        {"role": "user", "content": tools_chain},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "lookup", "arguments": "{}"}},
            {"id": "call_b", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_b", "content": "rainy"},
    ]}
    requests: list[tuple[str, str, Any]] = []
    for protocol in PROTOCOLS:
        for stream in (False, True):
            requests.append((f"{protocol}-text-{stream}", protocol, user_body(protocol, plain, stream=stream)))
            requests.append((f"{protocol}-tools-{stream}", protocol, user_body(protocol, tools_chain, stream=stream)))
            requests.append((f"{protocol}-thinking-{stream}", protocol, user_body(protocol, thinking, stream=stream)))
        requests.append((f"{protocol}-fallback", protocol, user_body(protocol, "no script here", stream=True)))
        requests.append((f"{protocol}-paced", protocol, user_body(protocol, paced, stream=True)))
        requests.append((f"{protocol}-orphan", protocol, orphan_result_body(protocol)))
        requests.append((f"{protocol}-429", protocol,
                         user_body(protocol, script({"id": "limit", "error": {"status": 429, "retry_after_ms": 5}}))))
    include_usage = {**user_body("openai-chat", plain, stream=True), "stream_options": {"include_usage": True}}
    requests.append(("openai-chat-usage", "openai-chat", include_usage))
    requests.append(("openai-chat-tool-turn-1", "openai-chat", chat_turn_1))
    for stream in (False, True):
        requests.append((f"openai-chat-tool-turn-1-{stream}", "openai-chat", {**chat_turn_1, "stream": stream}))
    requests.append(("bad-json", "openai-responses", b"{"))
    return [(name, protocol, body if isinstance(body, bytes) else encode(body))
            for name, protocol, body in requests]


def _visible(headers: Any) -> dict[str, str]:
    return {k: v for k, v in headers.items()
            if k.startswith("x-mockllm-") or k in ("content-type", "retry-after-ms", "x-request-id", "request-id")}


async def _async_door(requests: list[tuple[str, str, bytes]]) -> list[tuple[int, dict[str, str], bytes]]:
    out = []
    async with httpx2.AsyncClient(transport=HTTPX2Transport(MockLLM())) as client:
        for _, protocol, body in requests:
            async with client.stream("POST", f"http://mockllm.test{PATHS[protocol]}", content=body) as response:
                content = b"".join([chunk async for chunk in response.aiter_bytes()])
                out.append((response.status_code, _visible(response.headers), content))
    return out


def test_the_same_bytes_through_every_door(mock_server_url: str) -> None:
    requests = _door_requests()
    assert len({name for name, _, _ in requests}) == len(requests)
    doors: dict[str, list[tuple[int, dict[str, str], bytes]]] = {}

    clients: dict[str, Any] = {
        "server": (httpx2.Client(timeout=30), mock_server_url),
        "httpx2": (httpx2.Client(transport=HTTPX2Transport(MockLLM())), "http://mockllm.test"),
        "httpx": (httpx.Client(transport=HTTPXTransport(MockLLM())), "http://mockllm.test"),
    }
    try:
        for door, (client, base) in clients.items():
            results = doors.setdefault(door, [])
            for _, protocol, body in requests:
                with client.stream("POST", f"{base}{PATHS[protocol]}", content=body,
                                   headers={"content-type": "application/json"}) as response:
                    content = b"".join(response.iter_bytes())
                    results.append((response.status_code, _visible(response.headers), content))
    finally:
        for client, _ in clients.values():
            client.close()
    doors["httpx2-async"] = asyncio.run(_async_door(requests))

    reference = doors.pop("server")
    statuses = {name: status for (name, _, _), (status, _, _) in zip(requests, reference)}
    assert statuses["openai-chat-text-True"] == 200 and statuses["anthropic-messages-orphan"] == 400
    assert statuses["openai-responses-429"] == 429 and statuses["bad-json"] == 400
    assert all(status < 500 for status in statuses.values())
    for door, results in doors.items():
        for (name, _, _), expected, got in zip(requests, reference, results):
            assert got[0] == expected[0], (door, name)
            assert got[2] == expected[2], (door, name)
            assert got[1] == expected[1], (door, name)
