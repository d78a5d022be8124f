"""Stream faults, and shapes no protocol can express: what a client sees.

Faults break the protocol on purpose (``stream_faults``, never mixed with the legal
``stream`` shapes); a shape that cannot be served is an error naming its field.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra; the lean CI run has none)")

from harness.plugin.fixtures import MockLLMFixture, MockLLMServer  # noqa: E402
from mockllm import InstructionChain, Limits, MockLLM, StreamShape  # noqa: E402
from mockllm._delivery import KEEP_ALIVE  # noqa: E402

SCRIPT = [{"messages": [{"text_message": {"text": "One two three four five."}}]}]
BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "Go"}]}


def _raw(client: Any, path: str = "/v1/chat/completions", body: dict[str, Any] = BODY) -> list[bytes]:
    with client.stream("POST", path, json=body) as response:
        return list(response.iter_raw())


def _in_process(mock: MockLLM) -> httpx2.Client:
    from mockllm import HTTPX2Transport

    return httpx2.Client(transport=HTTPX2Transport(mock), base_url="http://mock")


def _scripted(**faults: Any) -> MockLLM:
    mock = MockLLM(limits=Limits(max_delay_ms=20))
    mock.script(SCRIPT, stream_faults=faults)
    return mock


def test_a_dropped_terminal_event_ends_the_stream_cleanly_without_it() -> None:
    body = b"".join(_raw(_in_process(_scripted(drop_terminal=True))))
    assert body.endswith(b'"finish_reason":"stop"}]}\n\n') and b"[DONE]" not in body


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages", "/v1/responses"])
def test_a_truncated_last_event_is_cut_inside_the_terminal_event(path: str) -> None:
    body = {**BODY, "max_tokens": 10, "input": "Go"}
    plain = MockLLM()
    plain.script(SCRIPT)
    whole = b"".join(_raw(_in_process(plain), path, body))
    cut = b"".join(_raw(_in_process(_scripted(truncate_last=True)), path, body))
    assert whole.startswith(cut) and len(cut) < len(whole)
    assert whole[len(cut) :].count(b"\n\n") == 1  # what is missing is the end of the last event only


def test_a_reset_mid_event_is_a_read_error_in_process_after_half_the_event() -> None:
    client = _in_process(_scripted(reset_at_event=2))
    received: list[bytes] = []
    with pytest.raises(httpx2.ReadError, match="reset_at_event"):
        with client.stream("POST", "/v1/chat/completions", json=BODY) as response:
            for chunk in response.iter_raw():
                received.append(chunk)
    body = b"".join(received)
    assert body.count(b"\n\n") == 2 and not body.endswith(b"\n\n")


def test_a_stall_is_capped_like_every_scripted_delay() -> None:
    # A minute asked for, 20 ms allowed: the request still completes.
    assert b"[DONE]" in b"".join(_raw(_in_process(_scripted(stall_ms=60_000))))


def test_faults_over_the_server(mockllm_server: MockLLMServer) -> None:
    client = mockllm_server.httpx2_client()
    mockllm_server.script(SCRIPT, stream_faults={"reset_at_event": 1})
    # httpx2 raises its RemoteProtocolError, or (when the reset lands as it closes the
    # stream) httpcore2's unmapped one: either way, the incomplete chunked body.
    with pytest.raises(Exception, match="incomplete chunked read") as reset:  # noqa: B017
        _raw(client)
    assert type(reset.value).__name__ == "RemoteProtocolError"
    mockllm_server.script(SCRIPT, stream_faults={"stall_ms": 3000})  # replaces the reset
    with httpx2.Client(base_url=mockllm_server.base_url, timeout=0.3) as impatient:
        with pytest.raises(httpx2.ReadTimeout):
            _raw(impatient)
    mockllm_server.script(SCRIPT, stream_faults={"drop_terminal": True})
    assert b"[DONE]" not in b"".join(_raw(client))


def test_keep_alives_and_gzip_over_the_server(mockllm_server: MockLLMServer) -> None:
    mockllm_server.script(SCRIPT, stream={"gzip": True, "keep_alive_every": 2})
    with httpx.Client(base_url=mockllm_server.base_url) as client:
        with client.stream("POST", "/v1/chat/completions", json=BODY) as response:
            assert response.headers["content-encoding"] == "gzip"
            body = response.read()
    assert body.startswith(KEEP_ALIVE) and body.count(KEEP_ALIVE) >= 3 and body.endswith(b"data: [DONE]\n\n")


def test_gzip_in_process_is_an_error_naming_the_field() -> None:
    fixture = MockLLMFixture(MockLLM())
    with pytest.raises(ValueError, match=r"instruction_chain\[0\]\.stream\.gzip: .*mockllm_server"):
        fixture.script(SCRIPT, stream={"gzip": True})
    mock = MockLLM(stream={"gzip": True})  # a default the transports cannot send
    with pytest.raises(TypeError, match=r"stream\.gzip: gzip content-encoding is served by the mock server only"):
        _raw(_in_process(mock))


def test_a_cut_point_past_the_text_is_a_fallback_naming_the_field() -> None:
    mock = MockLLM()
    mock.script(SCRIPT, stream={"text": {"at": [3, 400]}})
    with _in_process(mock) as client:
        reply = client.post("/v1/chat/completions", json={**BODY, "stream": False})
    reason = "stream.text.at: cut point 400 is past the end of the text (24 characters)"
    assert reply.headers["x-mockllm-fallback"].startswith(reason)
    assert reply.json()["choices"][0]["message"]["content"].startswith(f"mockllm fallback reply: {reason}")
    assert mock.journal[-1].fallback_reason.startswith(reason)


def test_a_tagged_script_with_an_unknown_stream_key_is_warned_about() -> None:
    block = '{"instruction_chain": [{"messages": [{"text_message": {"length": 3}}], "stream": {"txet": {"size": 1}}}]}'
    mock = MockLLM()
    _raw(
        _in_process(mock),
        body={**BODY, "messages": [{"role": "user", "content": f"<|instruction_start|>{block}<|instruction_end|>"}]},
    )
    assert any("stream.txet" in w and "did you mean 'text'" in w for w in mock.journal[-1].warnings)


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ({"text": {"size": 1, "seed": 2}}, "give exactly one of 'size', 'at' or 'seed'"),
        ({"text": {"at": [5, 3]}}, "strictly increasing"),
        ({"writes": {"size": 0}}, "writes.size"),
        ({"ping_evry": 2}, "unknown key 'ping_evry'"),
    ],
)
def test_a_bad_shape_is_refused_naming_the_field(shape: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MockLLM(stream=shape)
    with pytest.raises(ValueError, match=message.split(" '")[0]):
        InstructionChain(instruction_chain=[{**SCRIPT[0], "stream": shape}])


@pytest.mark.mockllm(stream={"text": {"size": 1}})
def test_the_marker_sets_the_default_shape_in_process(mockllm: MockLLMFixture) -> None:
    mockllm.script(SCRIPT)
    body = b"".join(_raw(mockllm.httpx2_client()))
    assert body.count(b'"content":"') == len("One two three four five.") + 1  # + the role chunk's ""


@pytest.mark.mockllm(stream={"text": {"size": 1}})
def test_the_marker_sets_the_default_shape_over_the_server(mockllm_server: MockLLMServer) -> None:
    mockllm_server.script(SCRIPT)
    body = b"".join(_raw(mockllm_server.httpx2_client()))
    assert body.count(b'"content":"') == len("One two three four five.") + 1


def test_a_shape_prints_as_the_python_and_the_script_that_make_it() -> None:
    shape = StreamShape(text={"size": 1}, id_with_arguments=True)
    assert repr(shape) == "StreamShape(text={'size': 1}, id_with_arguments=True)"
    assert shape.snippet() == '"stream": {"id_with_arguments": true, "text": {"size": 1}}'
    assert eval(repr(shape), {"StreamShape": StreamShape}) == shape
