"""How a chain ended, through the REST and WebSocket doors (the MCP door:
``test_mcp_tools``): a chain stopped at its step limit reads ``maxSteps``, one that
stalled (the same LLM output twice in a row) reads ``stalled`` — each with its own
ending event and the reason — never "completed" (seed 001 §2.2, §3.3, Group G)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.harness.systems.service.service_support import ADA, STALL, stalling_chain, tool_chain
from tests.harness.systems.service.test_websocket import events, signed_in, until_result

ENDINGS = [  # request, status, ending event, error, step statuses, output
    (
        tool_chain("lookup", maxSteps=1),
        "maxSteps",
        "chainMaxSteps",
        "the chain stopped at 1 steps",
        ["COMPLETED", "PENDING"],
        "facts about lookup: its capital is Paris",
    ),
    (stalling_chain(), "stalled", "chainStalled", STALL, ["COMPLETED", "COMPLETED", "PENDING"], "Same answer."),
]
IDS = ["max-steps", "stalled"]


@pytest.mark.parametrize(("request_body", "status", "ending", "error", "statuses", "output"), ENDINGS, ids=IDS)
def test_rest_answers_how_the_chain_ended_and_status_reads_it(
    client: TestClient,
    request_body: dict[str, Any],
    status: str,
    ending: str,
    error: str,
    statuses: list[str],
    output: str,
) -> None:
    response = client.post("/chat/chain", headers=ADA, json=request_body)
    assert response.status_code == 200  # the chain ran; it stopped as it should
    result = response.json()
    assert (result["status"], result["error"], result["executed"], result["output"]) == (status, error, True, output)
    assert [s["status"] for s in result["steps"]] == statuses
    assert result["chatHistory"]["messages"][-1] == {"role": "assistant", "content": output}
    read = client.get(f"/chat/chain/status/{result['planId']}", headers=ADA).json()
    ran = statuses.count("COMPLETED")
    assert (read["status"], read["error"], read["stepNumber"], read["totalSteps"]) == (
        status,
        error,
        ran,
        len(statuses),
    )


@pytest.mark.parametrize(("request_body", "status", "ending", "error", "statuses", "output"), ENDINGS, ids=IDS)
def test_the_websocket_streams_the_ending_event_then_the_result(
    client: TestClient,
    request_body: dict[str, Any],
    status: str,
    ending: str,
    error: str,
    statuses: list[str],
    output: str,
) -> None:
    with signed_in(client) as socket:
        socket.send_json({"type": "chain", **request_body})
        messages = until_result(socket.receive_json)
        socket.send_json({"type": "status", "planId": messages[0]["planId"]})
        read = socket.receive_json()
    received = events(messages)
    last = received[-1]
    assert (last["eventType"], last["errorMessage"]) == (ending, error)
    assert [e["eventType"] for e in received].count(ending) == 1 and "chainComplete" not in [
        e["eventType"] for e in received
    ]
    result = messages[-1]
    assert (result["type"], result["status"], result["error"]) == ("chainResult", status, error)
    assert [s["status"] for s in result["steps"]] == statuses
    assert (read["type"], read["status"], read["error"]) == ("status", status, error)
