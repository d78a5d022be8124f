"""What a client can make the mock hold is capped (issue 16): the request body, the
registered scripts, the server sessions, the unused-step table and the parse cache;
past a cap the answer is a clear 4xx (or a fallback saying why), and reset makes room.

Engine checks run in process; the body cap's "never buffered past it, the connection
still serves", the session and script caps go over loopback to a server with low caps
(shared with test_reliability.py).
"""

from __future__ import annotations

import http.client
import json
import tracemalloc
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from mockllm import Limits, MockLLM, MockLLMError, ScriptLimitReached, _parsing, _steps
from mockllm._parsing import MAX_VALUES, clear_script_cache, parse_script
from mockllm._steps import CHAIN_TABLE_BYTES
from tests.http_support import follow_up
from tests.mockllm.bulk_scripts import bulk_script
from tests.mockllm.server_support import PATHS, PROTOCOLS, ServerProcess, fresh_peak, script, status_kib, user_body
from tests.mockllm.test_server_faults import threaded_server

KIB = 1024
MIB = 1024 * KIB


def good_body(protocol: str = "openai-chat") -> bytes:
    return json.dumps(user_body(protocol, script({"id": "ok", "messages": [{"text_message": {"length": 2}}]}))).encode()


# -- the body cap, in process ----------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_body_past_the_cap_is_a_413_in_the_protocols_error_shape(protocol: str) -> None:
    mock = MockLLM(limits=Limits(max_body_bytes=4 * KIB))
    body = json.dumps(user_body(protocol, "x" * 5000)).encode()
    reply = mock.handle("POST", PATHS[protocol], {}, body)
    assert reply.status == 413
    error = json.loads(reply.body)
    if protocol == "anthropic-messages":
        assert error["type"] == "error" and error["error"]["type"] == "request_too_large"
    else:
        assert error["error"]["type"] == "invalid_request_error"
    message = error["error"]["message"]
    assert f"{len(body)} bytes" in message and "--max-body-bytes" in message
    assert mock.journal[-1].status == 413
    # At the cap it is served as usual.
    assert mock.handle("POST", PATHS[protocol], {}, good_body(protocol)).status == 200


# -- the script cap --------------------------------------------------------------------


CHAIN = [{"id": "a", "messages": [{"text_message": {"length": 2}}]}]


def test_past_max_scripts_registering_raises_and_reset_or_removal_makes_room() -> None:
    mock = MockLLM(limits=Limits(max_scripts=2))
    first = mock.script(CHAIN, "one")
    mock.script(CHAIN, "two")
    with pytest.raises(ScriptLimitReached, match=r"holds 2 scripts.*--max-scripts") as caught:
        mock.script(CHAIN, "three")
    assert isinstance(caught.value, MockLLMError)
    mock.scripts.remove(first.id)
    mock.script(CHAIN, "three")
    mock.reset()
    assert [mock.script(CHAIN, str(n)).id for n in range(2)]


def test_past_the_script_byte_budget_registering_raises() -> None:
    mock = MockLLM(limits=Limits(scripts_bytes=1500))
    long = [{"id": "x" * 900, "messages": [{"text_message": {"length": 2}}]}]
    mock.script(long, match="a")
    with pytest.raises(ScriptLimitReached, match=r"bytes of scripts"):
        mock.script(long, match="b")  # the same chain and match again would replace the first
    mock.reset()
    mock.script(long, match="b")


def test_a_chain_that_cannot_be_written_as_json_is_refused_as_a_script() -> None:
    with pytest.raises(MockLLMError, match="cannot be written as JSON"):
        MockLLM().script([{"id": "bad \ud800", "messages": [{"text_message": {"length": 2}}]}])


# -- tables bounded in bytes -----------------------------------------------------------


@pytest.mark.parametrize("prompt", ["prompt", "Go", ""])
def test_a_bulk_script_is_the_text_script_writes(prompt: str) -> None:
    # The tests scripting thousands of steps write them with ``bulk_script``: the same text.
    text = {"text_message": {"text": "reply é 1"}}
    for chain in (
        [{"id": "many", "messages": [{"text_message": {"length": 1}}] * 3}],
        [
            {"id": f"{n:04d}-{i:04d}-" + "x" * 190, "messages": [{"text_message": {"length": 1}}]}
            for n, i in [(0, 1), (2, 3)]
        ],
        [{"id": "s1", "messages": [text]}, {"id": "never", "messages": [text]}],
        [{"messages": [text]}],
    ):
        assert bulk_script(*chain, prompt=prompt) == script(*chain, prompt=prompt)


def test_the_unused_step_table_is_bounded_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    # A sixteenth of the real cap (4 MiB), read by the step table at each new chain: the same
    # eviction (a table of three to four chains), met after 12 chains of 250 steps instead of
    # 48 of 1,000 (a sixteenth of the steps to parse).
    monkeypatch.setattr(_steps, "CHAIN_TABLE_BYTES", CHAIN_TABLE_BYTES // 16)
    table_bytes = _steps.CHAIN_TABLE_BYTES
    mock = MockLLM()
    steps = 250  # each labelled with 200 characters: ~65 KB a chain in the table
    chains = table_bytes // (steps * 260) * 3
    assert chains < _steps.CHAIN_TABLE_SIZE  # the byte cap evicts, not the count cap
    for n in range(chains):
        chain = [
            {"id": f"{n:04d}-{i:04d}-" + "x" * 190, "messages": [{"text_message": {"length": 1}}]} for i in range(steps)
        ]
        reply = mock.handle(
            "POST", PATHS["openai-chat"], {}, json.dumps(user_body("openai-chat", bulk_script(*chain))).encode()
        )
        assert reply.status == 200
    unused = mock.unused_steps()
    assert sum(len(step.label) + 64 for step in unused) <= table_bytes
    assert len(unused) < chains * steps / 2
    assert unused[-1].label.startswith(f"{chains - 1:04d}-{steps - 1:04d}")  # the newest chain is kept
    mock.reset()
    assert mock.unused_steps() == []


def test_an_instruction_block_past_max_values_is_a_fallback_saying_so() -> None:
    chain = [{"id": "many", "messages": [{"text_message": {"length": 1}}] * (MAX_VALUES // 3)}]
    content = bulk_script(*chain)  # 16,666 messages
    reply = MockLLM().handle("POST", PATHS["openai-chat"], {}, json.dumps(user_body("openai-chat", content)).encode())
    assert reply.status == 200
    assert f"more than the {MAX_VALUES}" in dict(reply.headers)["x-mockllm-fallback"]


def test_the_parse_cache_is_bounded_in_the_bytes_its_parsed_blocks_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    # A sixty-fourth of the cap (32 MiB) and blocks of 25 steps (each still light enough to be
    # kept: under a quarter of the cap): the same eviction, for a sixteenth of the parsing.
    monkeypatch.setattr(_parsing, "CACHE_BYTES", MIB // 2)
    # The instruction models build their validators on first use (~2 MiB): built before
    # measuring, so that only what the cache holds is counted, whichever test ran first.
    parse_script(json.dumps({"instruction_chain": [{"id": "warm", "messages": [{"text_message": {"length": 1}}]}]}))
    clear_script_cache()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for n in range(40):  # ~47 KB each parsed and kept: 1.9 MB if the cache kept them all
            steps = [{"id": f"{n}-{i}", "messages": [{"text_message": {"length": 1}}]} for i in range(25)]
            assert not hasattr(parse_script(json.dumps({"instruction_chain": steps})), "reason")
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        clear_script_cache()
    assert held < _parsing.CACHE_BYTES * 3 // 2, f"the parse cache holds {held / MIB:.2f} MiB"


# -- over loopback ---------------------------------------------------------------------


@pytest.fixture
def server(limited_server: ServerProcess) -> ServerProcess:
    """The session's server with low caps: ``--max-body-bytes 1 MiB --max-sessions 3
    --max-scripts 1`` (tests/mockllm/conftest.py)."""
    return limited_server


def chunks(total: int) -> Iterator[bytes]:
    piece = b'{"model": "m", "messages": [' + b" " * (64 * KIB - 28)
    for _ in range(total // len(piece)):
        yield piece


@pytest.mark.parametrize("how", ["content-length", "chunked"])
@pytest.mark.parametrize("path", [PATHS["anthropic-messages"], "/_mockllm/scripts"])
def test_a_body_past_the_cap_is_refused_unbuffered_and_the_connection_still_serves(
    server: ServerProcess, how: str, path: str
) -> None:
    address = urlsplit(server.base_url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    try:
        before = fresh_peak(server.proc.pid)
        if how == "chunked":  # no Content-Length: counted as it arrives
            connection.request(
                "POST",
                path,
                body=chunks(48 * MIB),
                encode_chunked=True,
                headers={"content-type": "application/json", "transfer-encoding": "chunked"},
            )
        else:
            connection.request("POST", path, body=b" " * (48 * MIB), headers={"content-type": "application/json"})
        response = connection.getresponse()
        error = json.loads(response.read())
        assert response.status == 413
        assert "--max-body-bytes" in error["error"]["message"]
        if path.endswith("/messages"):
            assert error["error"]["type"] == "request_too_large"
        assert (status_kib(server.proc.pid, "VmHWM") - before) * KIB < 16 * MIB  # never held whole
        status, again = follow_up(
            connection,
            "POST",
            PATHS["anthropic-messages"],
            good_body("anthropic-messages"),
            {"content-type": "application/json"},
        )
        assert status == 200 and again["type"] == "message"
    finally:
        connection.close()


def post(server: ServerProcess, path: str, body: bytes = b"{}", method: str = "POST") -> tuple[int, dict]:
    address = urlsplit(server.base_url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    try:
        connection.request(method, path, body=body, headers={"content-type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_past_max_sessions_a_new_session_is_a_409_until_one_is_deleted(server: ServerProcess) -> None:
    opened = [post(server, "/_mockllm/sessions") for _ in range(3)]
    assert [status for status, _ in opened] == [201, 201, 201]
    status, refused = post(server, "/_mockllm/sessions")
    assert status == 409 and "--max-sessions" in refused["error"]["message"]
    assert post(server, opened[0][1]["path"], method="DELETE")[0] == 200
    status, again = post(server, "/_mockllm/sessions")
    assert status == 201
    for _, session in [*opened[1:], (status, again)]:
        post(server, session["path"], method="DELETE")


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (
            b'{"instruction_chain": [{"id": "\\ud800", "messages": [{"text_message": {"length": 2}}]}]}',
            "instruction_chain[0].id: holds a lone UTF-16 surrogate",
        ),
        (
            b'{"instruction_chain": [{"id": "a", "messages": [{"tool_call": [{"name": "f", "args": {"x": 1e999}}]}]}]}',
            "instruction_chain[0].messages[0].tool_call[0].args.x: not a finite number",
        ),
        (
            b'{"instruction_chain": [{"id": "a", "messages": [{"tool_call": [{"name": "f", "args": {"x": '
            + b"[" * 300
            + b"]" * 300
            + b"}}]}]}]}",
            "nested more than 100 levels",
        ),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
)
def test_a_script_the_mock_could_not_keep_is_a_400_naming_the_field(
    server: ServerProcess, body: bytes, problem: str
) -> None:
    status, error = post(server, "/_mockllm/scripts", body)
    assert status == 400 and problem in error["error"]["message"], error


def test_past_max_scripts_the_server_answers_409_and_reset_makes_room(server: ServerProcess) -> None:
    chain = json.dumps({"instruction_chain": CHAIN}).encode()
    other = json.dumps({"instruction_chain": CHAIN, "match": {"text": "other"}}).encode()
    try:
        assert post(server, "/_mockllm/scripts", chain)[0] == 201
        assert post(server, "/_mockllm/scripts", chain)[0] == 201  # the same again replaces it
        status, refused = post(server, "/_mockllm/scripts", other)
        assert status == 409 and "--max-scripts" in refused["error"]["message"]
        assert post(server, "/_mockllm/reset")[0] == 200
        assert post(server, "/_mockllm/scripts", chain)[0] == 201
    finally:
        post(server, "/_mockllm/reset")  # the server is shared: leave it without scripts


def test_a_bug_in_a_server_route_is_a_json_500_with_a_request_id_and_the_connection_still_serves() -> None:
    mock = MockLLM()

    def broken() -> list[object]:
        raise KeyError("boom")

    mock.unused_steps = broken  # type: ignore[method-assign]
    with threaded_server(mock) as (_, base):
        address = urlsplit(base)
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
        try:
            connection.request("GET", "/_mockllm/unused")
            response = connection.getresponse()
            error = json.loads(response.read())
            assert response.status == 500
            request_id = response.getheader("x-request-id")
            assert request_id and request_id in error["error"]["message"]
            assert "bug in mockllm" in error["error"]["message"]
            assert follow_up(connection, "GET", "/_mockllm/health") == (200, {"status": "ok"})
        finally:
            connection.close()
