"""The chain service's WebSocket door: authentication (first message or header), every
chain event as a chirp in order, the result at the end, errors that keep the
connection, cancel and watch; then, over a real socket on 127.0.0.1, a client that
goes away mid-chain breaks neither its chain nor anyone else's."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from starlette.testclient import TestClient, WebSocketTestSession
from starlette.websockets import WebSocketDisconnect
from websockets.sync.client import ClientConnection, connect

from tests.harness.systems.service.service_support import ADA, ANSWER, capital_chain, tool_chain

if TYPE_CHECKING:
    from service_support import LiveServer, ServiceBench

Message = dict[str, Any]
CAPITAL_EVENTS = [
    ("stepStart", 1),
    ("stepComplete", 1),
    ("stepStart", 2),
    ("stepComplete", 2),
    ("stepStart", 3),
    ("stepComplete", 3),
    ("stepStart", 4),
    ("stepComplete", 4),
    ("stepStart", 5),
    ("stepComplete", 5),
    ("chainComplete", None),
]


def until_result(receive: Callable[[], Message]) -> list[Message]:
    """Messages up to and including the chainResult (or an error)."""
    messages = []
    while True:
        message = receive()
        messages.append(message)
        if message.get("type") in ("chainResult", "error"):
            return messages


def events(messages: list[Message]) -> list[Message]:
    """The chain events in ``messages``, decoded, checking the chirp form."""
    decoded = []
    for message in messages:
        if "chirps" in message:
            kind, event_type, event_json = message["chirps"]
            event = json.loads(event_json)
            assert kind == "chainEvent" and event["eventType"] == event_type, message
            decoded.append(event)
    return decoded


@contextlib.contextmanager
def signed_in(client: TestClient) -> Iterator[WebSocketTestSession]:
    """A socket signed in the browser's way: the token in the first message."""
    with client.websocket_connect("/chat/chain/ws") as socket:
        socket.send_json({"type": "auth", "token": "tok-ada"})
        assert socket.receive_json() == {"type": "authenticated", "user": "ada", "organization": "acme"}
        yield socket


def test_a_chain_streams_every_event_in_order_then_its_result(client: TestClient) -> None:
    with signed_in(client) as socket:
        socket.send_json({"type": "chain", **capital_chain()})
        messages = until_result(socket.receive_json)
    started, result = messages[0], messages[-1]
    assert started["type"] == "chainStarted" and started["planUri"] == f"am7://acme/tool.plan/{started['planId']}"
    received = events(messages)
    assert len(received) == len(messages) - 2  # nothing else in between
    assert [(e["eventType"], e["stepNumber"]) for e in received] == CAPITAL_EVENTS
    stamps = [e["timestamp"] for e in received]
    assert all(a < b for a, b in zip(stamps, stamps[1:], strict=False)), stamps
    assert {e["mcpContextUri"] for e in received} == {started["planUri"]}
    assert [e["stepType"] for e in received[:10:2]] == ["TOOL", "RAG_QUERY", "LLM", "TOOL", "POLICY_GATE"]
    assert received[5]["stepSummary"] == ANSWER and received[5]["stepStatus"] == "COMPLETED"
    assert result["type"] == "chainResult" and result["planId"] == started["planId"]
    assert result["status"] == "completed"
    assert result["chatHistory"]["messages"][-1]["content"].endswith(f"Final answer: {ANSWER}")


def test_a_failed_step_arrives_as_a_step_error_then_a_failed_result(client: TestClient) -> None:
    with signed_in(client) as socket:
        socket.send_json({"type": "chain", **tool_chain("explode")})
        messages = until_result(socket.receive_json)
    error = events(messages)[-1]
    assert (error["eventType"], error["stepStatus"]) == ("stepError", "FAILED")
    assert error["errorMessage"] == "step 1: tool 'explode' failed: RuntimeError: the archive is offline"
    assert (messages[-1]["type"], messages[-1]["status"]) == ("chainResult", "failed")


def test_a_header_authenticates_a_non_browser_client(client: TestClient) -> None:
    with client.websocket_connect("/chat/chain/ws", headers={**ADA}) as socket:
        assert socket.receive_json()["type"] == "authenticated"
        socket.send_json({"type": "chain", **tool_chain("lookup")})
        assert until_result(socket.receive_json)[-1]["status"] == "completed"


@pytest.mark.parametrize(
    "first, phrase",
    [
        ({"type": "auth", "token": "tok-nobody"}, "unknown bearer token"),
        ({"type": "auth"}, "missing bearer token"),
        ({"type": "chain", "planQuery": "hi"}, "not authenticated"),
        ({"type": "status", "planId": "x"}, "not authenticated"),
    ],
)
def test_without_a_valid_token_the_answer_is_401_and_the_socket_closes(
    client: TestClient, first: Message, phrase: str
) -> None:
    with client.websocket_connect("/chat/chain/ws") as socket:
        socket.send_json(first)
        error = socket.receive_json()
        assert (error["type"], error["status"]) == ("error", 401) and phrase in error["detail"]
        with pytest.raises(WebSocketDisconnect) as closed:
            socket.receive_json()
    assert closed.value.code == 1008


def test_a_bad_header_token_is_401_too(client: TestClient) -> None:
    with client.websocket_connect("/chat/chain/ws", headers={"Authorization": "Bearer tok-nobody"}) as socket:
        assert socket.receive_json() == {"type": "error", "status": 401, "detail": "unknown bearer token"}
        with pytest.raises(WebSocketDisconnect):
            socket.receive_json()


@pytest.mark.parametrize(
    "sent, status, phrase",
    [
        ("{oops", 400, "a message is not valid JSON"),
        ('["chain"]', 400, "unknown message type 'list'"),
        ('{"type": "dance"}', 400, "unknown message type 'dance'"),
        ('{"type": "chain", "maxSteps": 3}', 400, "planQuery: Field required"),
        ('{"type": "chain", "planQuery": "q", "steps": [{"stepType": "DANCE"}]}', 400, "steps[0].stepType"),
        ('{"type": "cancel"}', 400, "planId"),
        ('{"type": "status", "planId": "no-such-plan"}', 404, "not found: am7://acme/tool.plan/no-such-plan"),
        ('{"type": "watch", "planId": "no-such-plan"}', 404, "not found: am7://acme/tool.plan/no-such-plan"),
    ],
)
def test_a_bad_message_is_answered_and_the_connection_stays_open(
    client: TestClient, sent: str, status: int, phrase: str
) -> None:
    with signed_in(client) as socket:
        socket.send_text(sent)
        error = socket.receive_json()
        assert (error["type"], error["status"]) == ("error", status) and phrase in error["detail"], error
        socket.send_json({"type": "chain", **tool_chain("lookup")})
        assert until_result(socket.receive_json)[-1]["status"] == "completed"


def test_another_organizations_plan_is_404_over_the_socket(client: TestClient) -> None:
    plan_id = client.post("/chat/chain", json=tool_chain("lookup"), headers=ADA).json()["planId"]
    with client.websocket_connect("/chat/chain/ws", headers={"Authorization": "Bearer tok-eve"}) as socket:
        assert socket.receive_json()["organization"] == "globex"
        for kind in ("status", "cancel", "watch"):
            socket.send_json({"type": kind, "planId": plan_id})
            assert socket.receive_json() == {
                "type": "error",
                "status": 404,
                "planId": plan_id,
                "detail": f"not found: am7://globex/tool.plan/{plan_id}",
            }


def test_cancel_stops_the_running_step(bench: ServiceBench, client: TestClient) -> None:
    bench.lookup.hold()
    with signed_in(client) as socket:
        socket.send_json({"type": "chain", **capital_chain()})
        plan_id = socket.receive_json()["planId"]
        bench.lookup.wait_for_calls(1)
        socket.send_json({"type": "cancel", "planId": plan_id})
        messages = until_result(socket.receive_json)
    replies = [m for m in messages if m.get("type") == "status"]
    assert len(replies) == 1 and replies[0]["planId"] == plan_id
    assert [(e["eventType"], e["stepNumber"]) for e in events(messages)] == [("stepStart", 1), ("chainCancelled", None)]
    result = messages[-1]
    assert result["status"] == "cancelled"
    assert [s["status"] for s in result["steps"]] == ["SKIPPED"] + ["PENDING"] * 4
    assert client.get(f"/chat/chain/status/{plan_id}", headers=ADA).json()["status"] == "cancelled"


def test_watch_follows_a_chain_started_elsewhere(bench: ServiceBench, client: TestClient) -> None:
    bench.compose.hold()
    with signed_in(client) as runner, signed_in(client) as watcher:
        runner.send_json({"type": "chain", **capital_chain()})
        plan_id = runner.receive_json()["planId"]
        bench.compose.wait_for_calls(1)
        watcher.send_json({"type": "watch", "planId": plan_id})
        watcher.send_json({"type": "status", "planId": plan_id})
        assert watcher.receive_json()["status"] == "running"  # subscribed by now: nothing after step 4 is missed
        bench.compose.release.set()
        watched = until_result(watcher.receive_json)
        assert until_result(runner.receive_json)[-1]["status"] == "completed"
    assert [(e["eventType"], e["stepNumber"]) for e in events(watched)] == CAPITAL_EVENTS[7:]
    assert (watched[-1]["type"], watched[-1]["status"]) == ("chainResult", "completed")


# -- over a real socket ----------------------------------------------------------------


@contextlib.contextmanager
def real_client(live: LiveServer) -> Iterator[ClientConnection]:
    """A ``websockets`` client on the live server, signed in by header."""
    with connect(live.ws_url, additional_headers=ADA, open_timeout=10) as socket:
        assert json.loads(socket.recv(timeout=10))["type"] == "authenticated"
        yield socket


def test_a_client_that_goes_away_breaks_neither_its_chain_nor_others(bench: ServiceBench, live: LiveServer) -> None:
    bench.lookup.hold()
    with real_client(live) as staying:
        with real_client(live) as leaving:
            leaving.send(json.dumps({"type": "chain", **capital_chain()}))
            left_plan = json.loads(leaving.recv(timeout=10))["planId"]
            staying.send(json.dumps({"type": "chain", **capital_chain("Capital of France, please?")}))
            kept_plan = json.loads(staying.recv(timeout=10))["planId"]
            bench.lookup.wait_for_calls(2)  # both chains are in step 1
        bench.lookup.release.set()  # the leaving client has closed its socket
        messages = until_result(lambda: json.loads(staying.recv(timeout=30)))
        assert [(e["eventType"], e["stepNumber"]) for e in events(messages)] == CAPITAL_EVENTS
        assert messages[-1]["status"] == "completed" and messages[-1]["planId"] == kept_plan
        # The chain whose client left ran on to its end: watching it now gives its result.
        staying.send(json.dumps({"type": "watch", "planId": left_plan}))
        left = until_result(lambda: json.loads(staying.recv(timeout=30)))[-1]
    assert (left["type"], left["planId"], left["status"]) == ("chainResult", left_plan, "completed")
    assert left["output"].endswith(f"Final answer: {ANSWER}")
    with httpx.Client(base_url=live.base_url, timeout=10) as http:
        assert http.get(f"/chat/chain/status/{left_plan}", headers=ADA).json()["status"] == "completed"
