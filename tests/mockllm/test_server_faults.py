"""The mock over real HTTP, under stress: scripted faults raised by the official SDKs as
their own classes, streaming pace, and clients that go away mid-stream (the same bytes
through every door: ``test_doors_same_bytes.py``).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import anthropic
import openai
import pytest
import uvicorn

from mockllm._engine import MockLLM
from mockllm._server import bind_socket, create_app
from mockllm._transports import HTTPX2Transport
from tests.mockllm.server_support import (
    ANTHROPIC_MODEL,
    OPENAI_MODEL,
    PATHS,
    PROTOCOLS,
    ServerProcess,
    _shared_client,
    encode,
    http,
    journal,
    post,
    script,
    sdk_clients,
    sse_events,
    text,
    uid,
    user_body,
)
from tests.mockllm.threaded_app import app_in_thread

__all__ = ["_shared_client"]  # a fixture, requested by name (and pyflakes sees it used)

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

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


def _sdk_call(protocol: str, oai: openai.OpenAI, ant: anthropic.Anthropic, content: str) -> str:
    if protocol == "openai-chat":
        return (
            oai.chat.completions.create(model=OPENAI_MODEL, messages=[{"role": "user", "content": content}])
            .choices[0]
            .message.content
        )
    if protocol == "anthropic-messages":
        return (
            ant.messages.create(model=ANTHROPIC_MODEL, max_tokens=64, messages=[{"role": "user", "content": content}])
            .content[0]
            .text
        )
    return oai.responses.create(model=OPENAI_MODEL, input=content).output_text


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_fail_once_then_succeed_with_sdk_retries(mock_server_url: str, protocol: str) -> None:
    step = {
        "id": uid("once"),
        "error": {"status": 429, "retry_after_ms": 1, "times": 1},
        "messages": [{"text_message": {"length": 5}}],
    }
    oai, ant = sdk_clients(mock_server_url, http(), retries=2)
    reply = _sdk_call(protocol, oai, ant, script(step))
    assert len(reply.split()) == 5
    attempts = [e for e in journal(mock_server_url) if e["instruction_id"] == step["id"]]
    assert [(e["attempt"], e["status"]) for e in attempts] == [(0, 429), (1, 200)]


def test_without_times_every_attempt_fails(mock_server_url: str) -> None:
    step = {"id": uid("always"), "error": {"status": 429, "retry_after_ms": 1}}
    oai, ant = sdk_clients(mock_server_url, http(), retries=2)
    with pytest.raises(openai.RateLimitError) as raised:
        _sdk_call("openai-chat", oai, ant, script(step))
    with pytest.raises(anthropic.RateLimitError):
        _sdk_call("anthropic-messages", oai, ant, script(step))
    assert raised.value.response.headers["retry-after-ms"] == "1"
    attempts = [e for e in journal(mock_server_url) if e["instruction_id"] == step["id"]]
    assert [(e["protocol"], e["attempt"], e["status"]) for e in attempts] == (
        [("openai-chat", n, 429) for n in range(3)] + [("anthropic-messages", n, 429) for n in range(3)]
    )


@pytest.mark.parametrize("status", [500, 503])
def test_server_errors_raise_internal_server_error(mock_server_url: str, status: int) -> None:
    step = {"id": uid("boom"), "error": {"status": status}}
    oai, ant = sdk_clients(mock_server_url, http(), retries=0)
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
    _, ant = sdk_clients(mock_server_url, http(), retries=0)
    with pytest.raises(anthropic.OverloadedError) as raised:
        _sdk_call("anthropic-messages", None, ant, script(step))  # type: ignore[arg-type]
    assert isinstance(raised.value, anthropic.InternalServerError)
    assert raised.value.status_code == 529
    assert raised.value.body["error"]["type"] == "overloaded_error"


def test_scripted_type_and_message_are_used_verbatim(mock_server_url: str) -> None:
    step = {
        "id": uid("custom"),
        "error": {
            "status": 400,
            "type": "invalid_request_error",
            "message": "prompt is too long: 300000 tokens > 200000 maximum",
        },
    }
    response = post(mock_server_url, "anthropic-messages", user_body("anthropic-messages", script(step)))
    assert response.status_code == 400
    assert response.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "prompt is too long: 300000 tokens > 200000 maximum"},
    }


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
    oai, ant = sdk_clients(mock_server_url, http(), retries=0)
    chunks: list[Any] = []
    with pytest.raises(openai.APIError) as chat:
        with oai.chat.completions.create(
            model=OPENAI_MODEL, stream=True, messages=[{"role": "user", "content": content}]
        ) as stream:
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
        with ant.messages.create(
            model=ANTHROPIC_MODEL, max_tokens=64, stream=True, messages=[{"role": "user", "content": content}]
        ) as stream:
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
    with client.stream("POST", url, content=encode(body), headers={"content-type": "application/json"}) as response:
        for chunk in response.iter_raw():
            if not chunks:
                first = time.monotonic() - started
            chunks.append(chunk)
        return Read(
            response.status_code, response.headers, first, time.monotonic() - started, len(chunks), b"".join(chunks)
        )


@pytest.mark.parametrize("door_name", ["server", "in-process"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_first_chunk_waits_first_chunk_ms(mock_server_url: str, protocol: str, door_name: str) -> None:
    step = text(3, timing={"first_chunk_ms": 80, "chunk_ms": 0})
    body = user_body(protocol, script(step), stream=True)
    if door_name == "server":
        got = read_stream(http(), f"{mock_server_url}{PATHS[protocol]}", body)
    else:
        with httpx2.Client(transport=HTTPX2Transport(MockLLM())) as client:
            got = read_stream(client, f"http://mockllm.test{PATHS[protocol]}", body)
    assert got.status == 200
    assert got.first_byte_s >= 0.075, got.first_byte_s  # a lower bound only
    assert len(sse_events(got.body)) > 3


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_chunk_ms_sends_each_event_as_its_own_read(mock_server_url: str, protocol: str) -> None:
    step = text(3, timing={"chunk_ms": 50})
    got = read_stream(http(), f"{mock_server_url}{PATHS[protocol]}", user_body(protocol, script(step), stream=True))
    events = sse_events(got.body)
    assert got.status == 200
    assert "content-length" not in got.headers  # sent as it goes
    assert got.reads > 1
    assert got.reads >= len(events), (got.reads, len(events))
    assert got.total_s >= 0.05 * (len(events) - 1) * 0.9


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_without_timing_the_stream_arrives_in_one_piece(mock_server_url: str, protocol: str) -> None:
    got = read_stream(http(), f"{mock_server_url}{PATHS[protocol]}", user_body(protocol, script(text(12)), stream=True))
    events = sse_events(got.body)
    assert got.status == 200
    assert len(events) > 12
    # One write with a known length: the SSE events are ready and go out together.
    assert got.headers["content-length"] == str(len(got.body))
    assert got.reads < len(events), got.reads  # typically 1 on loopback


def test_pacing_and_a_mid_stream_error_together(mock_server_url: str) -> None:
    step = text(6, timing={"chunk_ms": 10}, error={"status": 500, "after_chunks": 2})
    got = read_stream(
        http(), f"{mock_server_url}/v1/chat/completions", user_body("openai-chat", script(step), stream=True)
    )
    events = sse_events(got.body)
    assert len(events) == 3 and b'"error"' in events[-1]


# == 7. a client that goes away mid-stream ==============================================


def _abort_after(
    base: str, events: int, chunk_ms: int = 200, words: int = 20, client: httpx2.Client | None = None
) -> None:
    """Read ``events`` events of a slowly paced stream, then hang up."""
    body = user_body("openai-chat", script(text(words, timing={"chunk_ms": chunk_ms})), stream=True)
    seen = b""
    with contextlib.ExitStack() as stack:
        if client is None:
            client = stack.enter_context(httpx2.Client())
        response = stack.enter_context(client.stream("POST", f"{base}/v1/chat/completions", content=encode(body)))
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
    _abort_after(base, events=2, chunk_ms=50, words=80)  # 4 s of stream: ended mid-way
    assert http().get(f"{base}/_mockllm/health").status_code == 200
    followup = post(base, "anthropic-messages", user_body("anthropic-messages", script(text(4))))
    assert followup.status_code == 200
    assert len(followup.json()["content"][0]["text"].split()) == 4
    time.sleep(0.15)  # three of the stream's 50 ms beats: the server has met the closed connection
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
        threads = [threading.Thread(target=_abort_after, args=(base, 1), kwargs={"client": client}) for _ in range(20)]
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


def threaded_server(mock: MockLLM) -> contextlib.AbstractContextManager[tuple[uvicorn.Server, str]]:
    """The server's app under uvicorn in a thread of this process, so that a test can
    look at uvicorn's own state (request tasks, connections)."""
    return app_in_thread(create_app(mock))


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
