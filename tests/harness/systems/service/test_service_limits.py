"""The chain service under hostile input and its own bugs (issue 16): any REST body is a
200 or a ``{status, detail}`` 4xx (fuzzed with hypothesis), a body past the cap is a
413, non-finite numbers are a 400 naming the field, and a bug of the service's own is a
JSON 500 carrying a request id on a connection that stays usable (a WebSocket is closed
with code 1011)."""

from __future__ import annotations

import http.client
import json
from collections import Counter
from typing import Any, get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from harness.systems.service.app import INTERNAL_ERROR, MAX_BODY_BYTES
from harness.systems.service.status import ChainState
from tests.harness.systems.service.service_support import ADA, LiveServer, ServiceBench
from tests.http_support import follow_up
from tests.mockllm.fuzz_strategies import hostile_dumps, json_values, odd_numbers, odd_text

JSON = {**ADA, "content-type": "application/json"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            b'{"planQuery": "q", "steps": [{"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": NaN}}]}',
            "body.steps[0].inputs.topic",
        ),
        (
            b'{"planQuery": "q", "steps": [{"stepType": "TOOL", "toolName": "lookup", "inputs": {"topic": 1e999}}]}',
            "body.steps[0].inputs.topic",
        ),
        (b'{"planQuery": "q", "maxSteps": -Infinity}', "body.maxSteps"),
    ],
)
def test_a_non_finite_number_is_a_400_naming_the_field(
    bench: ServiceBench, client: TestClient, body: bytes, field: str
) -> None:
    reply = client.post("/chat/chain", headers=JSON, content=body)
    assert reply.status_code == 400
    assert reply.json() == {"status": 400, "detail": reply.json()["detail"]}
    assert field in reply.json()["detail"] and "not a finite number" in reply.json()["detail"]
    assert bench.service._live == {}


def one_connection(live: LiveServer) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", live.port, timeout=30)


def test_a_body_past_the_cap_is_a_413_and_the_connection_still_serves(bench: ServiceBench, live: LiveServer) -> None:
    connection = one_connection(live)
    try:
        big = json.dumps({"planQuery": "q" * (MAX_BODY_BYTES + 1)}).encode()
        connection.request("POST", "/chat/chain", body=big, headers=JSON)
        response = connection.getresponse()
        assert response.status == 413
        body = json.loads(response.read())
        assert body["status"] == 413 and str(MAX_BODY_BYTES) in body["detail"]
        assert follow_up(connection, "GET", "/healthz") == (200, {"status": "ok"})
    finally:
        connection.close()
    assert bench.service._live == {}


def test_a_bug_of_the_service_is_a_json_500_with_a_request_id_and_the_connection_still_serves(
    bench: ServiceBench, live: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> Any:
        raise KeyError("boom")

    monkeypatch.setattr(bench.service, "status", broken)
    connection = one_connection(live)
    try:
        connection.request("GET", "/chat/chain/status/some-plan", headers=ADA)
        response = connection.getresponse()
        body = json.loads(response.read())
        assert response.status == 500 and set(body) == {"status", "detail"} and body["status"] == 500
        request_id = response.getheader("x-request-id")
        assert request_id and request_id in body["detail"]
        assert "Traceback" not in body["detail"]
        assert follow_up(connection, "GET", "/healthz") == (200, {"status": "ok"})
    finally:
        connection.close()


def test_a_bug_of_the_service_closes_a_websocket_with_1011(
    bench: ServiceBench, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any) -> Any:
        raise KeyError("boom")

    monkeypatch.setattr(bench.auth, "authenticate", broken)
    # A copy: the test client adds its handshake headers to the mapping it is given.
    with client.websocket_connect("/chat/chain/ws", headers=dict(ADA)) as socket:
        with pytest.raises(WebSocketDisconnect) as closed:
            socket.receive_json()
    assert closed.value.code == INTERNAL_ERROR
    assert "request id req_" in closed.value.reason


# -- fuzzing the REST body -------------------------------------------------------------

_step = st.fixed_dictionaries(
    {
        "stepType": st.one_of(st.sampled_from(["TOOL", "LLM", "RAG_QUERY", "POLICY_GATE"]), odd_text),
        "toolName": st.one_of(st.sampled_from(["lookup", "compose", "explode", "nope"]), odd_text),
    },
    optional={
        "inputs": st.dictionaries(odd_text, json_values, max_size=3),
        "outputName": odd_text,
        "description": odd_text,
        "policyName": odd_text,
        "ragQuery": odd_text,
    },
)
_chain = st.fixed_dictionaries(
    {"planQuery": st.one_of(odd_text, json_values)},
    optional={
        "name": st.one_of(odd_text, json_values),
        "steps": st.one_of(st.lists(_step, max_size=3), json_values),
        "maxSteps": st.one_of(st.integers(-3, 5), odd_numbers, json_values),
    },
)


@st.composite
def rest_body(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["chain", "json", "bytes", "deep"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "deep":
        depth = draw(st.integers(30, 100_000))
        return b"[" * depth + b"]" * depth
    raw = hostile_dumps(draw(_chain if kind == "chain" else json_values))
    if draw(st.booleans()):  # lone surrogates as raw bytes
        return raw.encode().decode("unicode_escape", "replace").encode("utf-8", "surrogatepass")
    return raw.encode()


def test_any_rest_body_is_a_result_or_a_status_detail_400_that_registers_nothing() -> None:
    bench = ServiceBench()
    seen: Counter[int] = Counter()
    try:
        with TestClient(bench.app, raise_server_exceptions=False) as client:

            @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
            @given(rest_body(), st.sampled_from(["application/json", "text/plain", ""]))
            def run(body: bytes, content_type: str) -> None:
                registered = set(bench.service._live)
                reply = client.post("/chat/chain", headers={**ADA, "content-type": content_type}, content=body)
                seen[reply.status_code] += 1
                assert reply.status_code in (200, 400), reply.text[:500]
                answer = reply.json()
                if reply.status_code == 400:
                    assert set(answer) == {"status", "detail"} and answer["status"] == 400
                    assert set(bench.service._live) == registered  # refused before anything was made
                else:
                    assert answer["status"] in set(get_args(ChainState)) - {"running", "pending"}  # it ended
                    assert answer["planId"] in {live.plan_id for live in bench.service._live.values()}

            run()
    finally:
        bench.release_all()
        bench.config.store.close()
    assert seen[200] and seen[400], seen  # both ends reached: chains ran, bodies were refused
