"""The mock over real HTTP: ``python -m mockllm serve``, its journal, its ``x-mockllm-*``
headers, and each provider's 4xx error body for requests a real provider rejects.

Most tests use the session server (``mock_server_url``); those that need a process of
their own (flags, signals) start one and stop it by its PID.
"""

from __future__ import annotations

import itertools
import logging
import signal
import threading
import time
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from mockllm._engine import MockLLM
from mockllm._server import create_app
from mockllm._transports import HTTPX2Transport
from mockllm.testing import uvicorn_server
from tests.mockllm.server_support import (
    ANTHROPIC_MODEL,
    OPENAI_MODEL,
    PROTOCOLS,
    START_TIMEOUT_S,
    ServerProcess,
    SignalledAsAnnounced,
    _shared_client,
    assert_provider_error,
    encode,
    http,
    journal,
    launch,
    listening_addresses,
    orphan_result_body,
    post,
    script,
    sdk_clients,
    serve_signalled_as_announced,
    text,
    uid,
    unanswered_call_body,
    user_body,
)
from tests.mockllm.threaded_app import server_in_thread

__all__ = ["_shared_client"]  # a fixture, requested by name (and pyflakes sees it used)

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

# == 1. the command line ==============================================================


def test_serve_prints_base_urls_binds_loopback_and_answers_health(servers: dict[str, ServerProcess]) -> None:
    server = servers["strict"]
    base = server.base_url
    assert base.startswith("http://127.0.0.1:")
    port = int(base.rsplit(":", 1)[1])
    assert port > 0  # --port 0 picked a real port and printed it
    lines = server.output.splitlines()
    # One process on its own memory says nothing of its state (one on a shared state says
    # which: tests/state/test_state_url_messages.py).
    assert "state:" not in server.output
    assert f"base_url={base}/v1" in lines[1] and "OpenAI" in lines[1]
    assert lines[2].rstrip().endswith(f"base_url={base}") and "Anthropic" in lines[2]
    if Path("/proc/net/tcp").exists():
        assert listening_addresses(port) == {"127.0.0.1"}
    health = http().get(f"{base}/_mockllm/health")
    assert health.status_code == 200
    assert health.json() == {"status": "ok"}
    # The printed URLs are the ones the SDKs take as base_url.
    oai, ant = sdk_clients(base, http(), retries=0)
    chat = oai.chat.completions.create(model=OPENAI_MODEL, messages=[{"role": "user", "content": script(text(4))}])
    message = ant.messages.create(
        model=ANTHROPIC_MODEL, max_tokens=64, messages=[{"role": "user", "content": script(text(4))}]
    )
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


@pytest.fixture(scope="module")
def signalled_as_announced() -> SignalledAsAnnounced:
    """One process serving twice, signalled the moment each server announces itself:
    SIGINT, then SIGTERM."""
    return serve_signalled_as_announced((signal.SIGINT, signal.SIGTERM))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_the_moment_the_server_announces_itself_still_stops_it_cleanly(
    signalled_as_announced: SignalledAsAnnounced, sig: signal.Signals
) -> None:
    # The banner was printed before any handler was installed: a supervisor stopping the
    # server as soon as it read the banner killed it (-15) instead of stopping it (0).
    signalled_as_announced.assert_stopped_cleanly(sig)


def test_server_stops_on_sigterm_with_a_stream_in_flight(tmp_path: Path) -> None:
    server = launch(tmp_path, "--port", "0").wait_ready()
    body = user_body("openai-chat", script(text(20, timing={"chunk_ms": 200})), stream=True)
    try:
        with (
            httpx2.Client() as client,
            client.stream("POST", f"{server.base_url}/v1/chat/completions", content=encode(body)) as response,
        ):
            assert response.status_code == 200
            next(response.iter_raw())
            code = server.stop(signal.SIGTERM)
    except httpx2.TransportError:
        code = server.stop(signal.SIGTERM)
    finally:
        server.kill()
    assert code == 0
    assert "Traceback" not in server.errors


def _seconds_to_stop(mock: MockLLM) -> float:
    """Serve ``mock`` as ``serve`` does, in a thread; how long it takes to stop once asked,
    with a client's idle keep-alive connection open."""
    with httpx2.Client() as client:
        with server_in_thread(uvicorn_server(mock, metrics=False)) as (_, base_url):
            assert client.get(f"{base_url}/_mockllm/health").status_code == 200
            asked = time.monotonic()
        return time.monotonic() - asked  # the block ends once the server has stopped


def test_a_server_asked_to_stop_stops_at_once() -> None:
    # uvicorn looks whether it should exit every 0.1 s and then waits a fixed 0.1 s for
    # the open connections: each stop took 0.1-0.2 s. The best of three (a busy machine
    # may delay one).
    fastest = min(_seconds_to_stop(MockLLM()) for _ in range(3))
    assert fastest < 0.08, f"the fastest of three stops took {fastest:.3f} s"


def test_an_idle_server_wakes_once_a_second_to_date_its_replies() -> None:
    # uvicorn woke every 0.1 s (its Date header once a second, should_exit at each); the
    # server wakes itself when asked to exit, so it ticks once a second, each tick dating
    # the replies. An idle server's thread took the test process's GIL ten times a second.
    server = uvicorn_server(MockLLM(), metrics=False)
    ticks: list[tuple[int, float]] = []
    on_tick = server.on_tick

    async def counted(counter: int) -> bool:
        ticks.append((counter, time.monotonic()))
        return await on_tick(counter)

    server.on_tick = counted  # type: ignore[method-assign]
    with httpx2.Client() as client, server_in_thread(server) as (_, base_url):
        reply = client.get(f"{base_url}/_mockllm/health")
        idle = threading.Event()
        idle.wait(0.35)  # uvicorn's own pace ticks three more times in this
        seen = list(ticks)
    gaps = [round(later - earlier, 3) for (_, earlier), (_, later) in itertools.pairwise(seen)]
    assert all(gap >= 0.9 for gap in gaps), gaps  # a late tick is possible, an early one is not
    assert all(counter % 10 == 0 for counter, _ in ticks), ticks  # each one updates the Date header
    assert reply.headers["date"].endswith(" GMT")


def test_a_websocket_upgrade_is_answered_with_the_routes_and_no_advice_to_install_a_library() -> None:
    """The mock has no WebSocket route (its uvicorn loads no WebSocket protocol): an
    upgrade request is an unknown route, answered as any is, and uvicorn's warning that
    no WebSocket library is installed, which would change nothing, is not printed."""
    server = uvicorn_server(MockLLM(), metrics=False)  # configures uvicorn's logging
    logged: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = logged.append  # type: ignore[method-assign]
    uvicorn_log = logging.getLogger("uvicorn.error")
    uvicorn_log.addHandler(handler)
    upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13"}
    try:
        with server_in_thread(server) as (_, base_url):
            response = httpx2.get(
                f"{base_url}/v1/realtime", headers={**upgrade, "Sec-WebSocket-Key": "a2V5a2V5a2V5a2V5a2V5a2V5"}
            )
    finally:
        uvicorn_log.removeHandler(handler)
    assert response.status_code == 404
    assert "Unknown route GET /v1/realtime" in response.json()["error"]["message"]
    assert [r.getMessage() for r in logged if r.levelno >= logging.WARNING] == []


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
        local = client.post(
            "http://mockllm.test/v1/chat/completions", content=encode(user_body("openai-chat", content))
        )
    assert local.json()["choices"][0]["message"]["content"] == seven_a


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_lenient_accepts_an_orphan_tool_result_the_default_rejects(
    servers: dict[str, ServerProcess], protocol: str
) -> None:
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
    responses_body = {
        "model": OPENAI_MODEL,
        "input": [
            {"role": "user", "content": content},
            {"role": "assistant", "content": "one"},
            {"role": "user", "content": "go on"},
            {"role": "assistant", "content": "two"},
            {"role": "user", "content": "and on"},
        ],
    }
    past_end = post(mock_server_url, "openai-responses", responses_body)
    no_chain = post(mock_server_url, "openai-chat", user_body("openai-chat", f"no script {uid('x')}"))
    for response in (chat, messages, past_end, no_chain):
        assert response.status_code == 200, response.text

    tail = journal(mock_server_url)[-4:]
    assert [e["protocol"] for e in tail] == ["openai-chat", "anthropic-messages", "openai-responses", "openai-chat"]
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
            body = user_body(
                "openai-chat", script({"id": instruction_id, "messages": [{"text_message": {"length": 1}}]})
            )
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
def test_every_reply_tells_chain_turn_and_instruction(mock_server_url: str, protocol: str, stream: bool) -> None:
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
        body: dict[str, Any] = {
            "model": OPENAI_MODEL,
            "input": [
                {"role": "user", "content": content},
                {"role": "assistant", "content": "done"},
                {"role": "user", "content": "more"},
            ],
        }
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
REJECTIONS.append(
    (
        "anthropic-messages",
        "missing-max_tokens",
        encode(_without(user_body("anthropic-messages", "hi"), "max_tokens")),
        "max_tokens",
    )
)


@pytest.mark.parametrize(
    ("protocol", "case", "body", "mentions"), REJECTIONS, ids=[f"{p}-{c}" for p, c, _, _ in REJECTIONS]
)
def test_rejected_requests_get_the_providers_400(
    mock_server_url: str, protocol: str, case: str, body: bytes, mentions: str
) -> None:
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


ODD_BODIES = [
    b"",
    b"null",
    b'"text"',
    b"3",
    b"\xff\xfe\x00",
    b'{"model": 5}',
    b'{"model": "m", "messages": "x", "input": 5, "max_tokens": "x"}',
    b'{"model": "m", "messages": [1, null], "input": [1, null], "max_tokens": 5}',
    b'{"model": "m", "messages": [{"role": "user", "content": [null, 5]}], '
    b'"input": [{"type": "function_call"}], "max_tokens": 5, "stream": "yes"}',
    b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": '
    b'"<|instruction_start|>{bad json<|instruction_end|>"}], '
    b'"input": "<|instruction_start|>[1]<|instruction_end|>"}',
]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_odd_bodies_never_get_a_500(mock_server_url: str, protocol: str) -> None:
    for body in ODD_BODIES:
        response = post(mock_server_url, protocol, body)
        assert response.status_code in (200, 400), (body, response.status_code, response.text)
        if response.status_code == 400:
            assert_provider_error(protocol, response, 400, "invalid_request_error")


def test_unknown_route_is_a_json_404(mock_server_url: str) -> None:
    client = http()
    for method, path in (("GET", "/v1/files/nope"), ("POST", "/v1/completions"), ("GET", "/")):
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
    oai, ant = sdk_clients(mock_server_url, http(), retries=0)
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
