"""Hostile and careless input: every reply is provider-shaped JSON, no input crashes the
mock or breaks the connection, and what one request scripts is bounded (issue 16).

Most checks run on the engine in process (the same bytes every door delivers); the
keep-alive checks go over loopback to a server with low caps, shared with
test_reliability_limits.py.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from mockllm import Limits, MockLLM
from mockllm._engine import CHAIN_TABLE_SIZE
from mockllm._parsing import parse_script
from mockllm._wire.registry import codec_named
from tests.http_support import follow_up
from tests.mockllm.bulk_scripts import bulk_script
from tests.mockllm.server_support import PATHS, PROTOCOLS, ServerProcess, script, user_body


def handle(mock: MockLLM, protocol: str, body: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    reply = mock.handle("POST", PATHS[protocol], {}, raw)
    return reply.status, json.loads(reply.body), dict(reply.headers)


def error_message(protocol: str, body: dict[str, Any]) -> str:
    if protocol == "anthropic-messages":
        assert body["type"] == "error"
    return body["error"]["message"]


def reply_text(protocol: str, body: dict[str, Any]) -> str:
    if protocol == "openai-chat":
        return body["choices"][0]["message"]["content"] or ""
    if protocol == "anthropic-messages":
        return "".join(block.get("text", "") for block in body["content"])
    return "".join(part["text"] for item in body["output"] if item["type"] == "message" for part in item["content"])


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("raw_model", [b'"\\ud800x"', b'"\xed\xa0\x80"'], ids=["escaped", "raw-bytes"])
def test_a_lone_surrogate_in_an_echoed_field_is_a_400_naming_it(protocol: str, raw_model: bytes) -> None:
    body = (
        json.dumps(user_body(protocol, "hi"))
        .encode()
        .replace(b'"gpt-mock"', raw_model)
        .replace(b'"claude-mock-1"', raw_model)
    )
    status, error, headers = handle(MockLLM(), protocol, body)
    assert status == 400
    assert "surrogate in 'model'" in error_message(protocol, error)
    assert headers[codec_named(protocol).request_id_header].startswith("req_")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_body_nested_past_the_recursion_limit_is_a_400(protocol: str) -> None:
    status, error, _ = handle(MockLLM(), protocol, b"[" * 100_000 + b"]" * 100_000)
    assert status == 400
    assert "nested too deeply" in error_message(protocol, error)


def test_a_number_too_long_for_int_in_an_instruction_block_is_a_fallback_saying_so() -> None:
    content = '<|instruction_start|>{"messages":[{"text_message":{"length":' + "9" * 5000 + "}}]}<|instruction_end|>"
    status, body, headers = handle(MockLLM(), "openai-chat", user_body("openai-chat", content))
    assert status == 200
    assert "4300 digits" in headers["x-mockllm-fallback"]
    assert "unusable number" in reply_text("openai-chat", body)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_bug_in_the_mock_is_a_json_500_carrying_the_request_id(
    protocol: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    codec = codec_named(protocol)

    def broken(*args: Any) -> bytes:
        raise KeyError("boom")

    monkeypatch.setattr(type(codec), "render_json", broken)
    mock = MockLLM()
    status, error, headers = handle(
        mock, protocol, user_body(protocol, script({"messages": [{"text_message": {"length": 3}}]}))
    )
    assert status == 500
    request_id = headers[codec.request_id_header]
    assert request_id in error_message(protocol, error) and "bug in mockllm" in error_message(protocol, error)
    assert mock.journal[-1].status == 500


@pytest.mark.parametrize("literal", [b"Infinity", b"-Infinity", b"NaN"])
def test_a_non_finite_literal_in_the_body_is_a_400(literal: bytes) -> None:
    body = b'{"model":"m","temperature":' + literal + b',"messages":[{"role":"user","content":"hi"}]}'
    status, error, _ = handle(MockLLM(), "openai-chat", body)
    assert status == 400
    assert literal.decode().lstrip("-") in error_message("openai-chat", error)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("stream", [False, True])
def test_a_script_past_the_output_cap_gets_a_fallback_that_says_why(protocol: str, stream: bool) -> None:
    # ~3.7 KB of request asking for 90 x 100,000 words: gigabytes if it were built.
    huge = {"id": "huge", "messages": [{"text_message": {"length": 100_000}}] * 90}
    request = user_body(protocol, script(huge), stream=stream)
    assert len(json.dumps(request)) < 4000
    reply = MockLLM().handle("POST", PATHS[protocol], {}, json.dumps(request).encode())
    assert reply.status == 200
    fallback = dict(reply.headers)["x-mockllm-fallback"]
    assert "over the cap of 8388608 bytes" in fallback and "--max-output-bytes" in fallback
    assert len(reply.body) < 100_000


def test_the_output_cap_is_a_mock_llm_argument() -> None:
    request = user_body("openai-chat", script({"id": "mid", "messages": [{"text_message": {"length": 5000}}]}))
    status, _, headers = handle(MockLLM(), "openai-chat", request)
    assert "x-mockllm-fallback" not in headers
    status, _, headers = handle(MockLLM(limits=Limits(max_output_bytes=20_000)), "openai-chat", request)
    assert "over the cap of 20000 bytes" in headers["x-mockllm-fallback"]


@pytest.mark.parametrize("field", ["chunk_ms", "first_chunk_ms"])
def test_a_non_finite_timing_skips_the_instruction_naming_the_field(field: str) -> None:
    content = script({"id": "t", "messages": [{"text_message": {"length": 3}}]}).replace(
        '"id":"t"', f'"id":"t","timing":{{"{field}":1e999}}'
    )
    reply = MockLLM().handle(
        "POST", PATHS["openai-chat"], {}, json.dumps(user_body("openai-chat", content, stream=True)).encode()
    )
    assert reply.status == 200 and reply.pacing is None
    assert f"timing.{field} is not a finite number" in dict(reply.headers)["x-mockllm-fallback"]


def test_a_long_timing_is_shortened_to_the_cap_with_a_warning() -> None:
    content = script(
        {"id": "slow", "timing": {"first_chunk_ms": 1e9, "chunk_ms": 5}, "messages": [{"text_message": {"length": 3}}]}
    )
    mock = MockLLM(limits=Limits(max_delay_ms=250))
    reply = mock.handle(
        "POST", PATHS["openai-chat"], {}, json.dumps(user_body("openai-chat", content, stream=True)).encode()
    )
    assert reply.pacing is not None
    assert (reply.pacing.first_chunk_s, reply.pacing.chunk_s) == (0.25, 0.005)
    assert any("shortened to at most 250 ms" in w for w in mock.journal[-1].warnings)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_tool_arguments_never_go_out_as_infinity(protocol: str) -> None:
    content = script({"id": "call", "messages": [{"tool_call": [{"name": "f", "args": {"x": 1}}]}]}).replace(
        '{"x":1}', '{"x":1e999}'
    )
    reply = MockLLM().handle("POST", PATHS[protocol], {}, json.dumps(user_body(protocol, content)).encode())
    json.loads(reply.body, parse_constant=_refuse)  # strict JSON: no Infinity, no NaN
    assert "messages[0].tool_call[0].args.x is not a finite number" in dict(reply.headers)["x-mockllm-fallback"]


def _refuse(name: str) -> None:
    raise AssertionError(f"{name} in the reply")


def test_the_journal_is_bounded_in_bytes_and_clips_what_requests_sent() -> None:
    mock = MockLLM(limits=Limits(journal_bytes=200_000))
    body = json.dumps({"model": "m" * 50_000, "messages": [{"role": "user", "content": "hi"}]}).encode()
    for _ in range(300):
        mock.handle("POST", PATHS["openai-chat"], {}, body)
    entries = mock.journal
    assert 0 < len(entries) < 300
    assert all(len(entry.model or "") <= 1000 for entry in entries)
    assert sum(len(entry.model_dump_json()) for entry in entries) < 250_000


def test_the_unused_step_table_is_bounded() -> None:
    mock = MockLLM()
    for n in range(CHAIN_TABLE_SIZE + 50):
        content = bulk_script(
            {"id": f"s{n}", "messages": [{"text_message": {"length": 1}}]},
            {"id": "never", "messages": [{"text_message": {"length": 1}}]},
        )
        mock.handle("POST", PATHS["openai-chat"], {}, json.dumps(user_body("openai-chat", content)).encode())
    assert len(mock.unused_steps()) == CHAIN_TABLE_SIZE


def test_reset_clears_the_parse_cache() -> None:
    block = '{"messages":[{"text_message":{"length":2}}], "id": "cached-once"}'
    first = parse_script(block)
    assert parse_script(block) is first
    MockLLM().reset()
    assert parse_script(block) is not first


# -- over loopback: the connection survives every bad request --------------------------


@pytest.fixture
def server(limited_server: ServerProcess) -> ServerProcess:
    """The session's server with low caps (``--max-delay-ms 50`` among them: tests/mockllm/conftest.py)."""
    return limited_server


BAD_BODIES = {
    "escaped-surrogate": b'{"model":"\\udc00","messages":[{"role":"user","content":"hi"}]}',
    "raw-surrogate": b'{"model":"\xed\xb0\x80","messages":[{"role":"user","content":"hi"}]}',
    "deep-nesting": b"[" * 50_000 + b"]" * 50_000,
    "huge-int": json.dumps(
        user_body("openai-chat", '<|instruction_start|>{"id":' + "7" * 6000 + ',"messages":[]}<|instruction_end|>')
    ).encode(),
    "nul-and-spaces-in-id": json.dumps(
        user_body("openai-chat", script({"id": "  edge\u0000id\r\n ", "messages": [{"text_message": {"length": 2}}]}))
    ).encode(),
    "infinite-timing": json.dumps(
        user_body("openai-chat", script({"id": "inf", "messages": [{"text_message": {"length": 2}}]}), stream=True)
    )
    .encode()
    .replace(b'\\"id\\":\\"inf\\"', b'\\"id\\":\\"inf\\",\\"timing\\":{\\"chunk_ms\\":1e999}'),
    "not-json": b"\xff\xfe{{{",
}


@pytest.mark.parametrize("name", list(BAD_BODIES))
def test_after_any_bad_request_the_keep_alive_connection_still_serves(server: ServerProcess, name: str) -> None:
    address = urlsplit(server.base_url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    try:
        connection.request(
            "POST", PATHS["openai-chat"], body=BAD_BODIES[name], headers={"content-type": "application/json"}
        )
        response = connection.getresponse()
        payload = response.read()
        assert response.status < 500, payload
        if response.getheader("content-type") == "application/json":
            json.loads(payload)
        assert response.getheader("connection") != "close"
        good = json.dumps(
            user_body("openai-chat", script({"id": "ok", "messages": [{"text_message": {"length": 2}}]}))
        ).encode()
        status, again = follow_up(connection, "POST", PATHS["openai-chat"], good, {"content-type": "application/json"})
        assert status == 200 and again["object"] == "chat.completion"
    finally:
        connection.close()
    journal = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    try:
        journal.request("GET", "/_mockllm/requests")
        assert journal.getresponse().status == 200
    finally:
        journal.close()
