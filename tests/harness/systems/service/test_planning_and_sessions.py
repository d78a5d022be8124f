"""What the service's plans record of how they were made (seed 001 §1.4, §2.3, §3.2):
a query-only request is planned by the model — its first call, told of the data
references — and not by a fixed template; a bad plan from the model fails the chain
with the reason; the WebSocket door records its session (``streamSessionId``) on the
plans it starts; every plan is in chain mode. (The MCP door's ``mcpSessionId``:
``test_mcp_tools``.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.testclient import TestClient

from tests.harness.systems.service.service_support import ADA, ANSWER, ATLAS, planned_chain, tool_chain
from tests.harness.systems.service.test_websocket import events, signed_in, until_result

if TYPE_CHECKING:
    from service_support import ServiceBench


def test_a_query_only_request_is_planned_by_the_model(client: TestClient, bench: ServiceBench) -> None:
    search = {
        "stepType": "RAG_QUERY",
        "ragQuery": "capital of France",
        "vectorReferenceUri": ATLAS,
        "outputName": "citations",
        "description": "search the atlas",
    }
    answer = {"stepType": "LLM", "inputs": {"prompt": "Answer from {{citations}}."}, "description": "answer"}
    result = client.post(
        "/chat/chain",
        headers=ADA,
        json=planned_chain("What is the capital of France?", [search, answer], ANSWER, dataReferences=[ATLAS]),
    ).json()
    assert (result["status"], result["output"], result["error"]) == ("completed", ANSWER, None)
    assert [(s["type"], s["status"], s["summary"]) for s in result["steps"]] == [
        ("RAG_QUERY", "COMPLETED", "1 result(s) for 'capital of France'"),
        ("LLM", "COMPLETED", ANSWER),
    ]
    planning, answering = bench.prompts[0], bench.prompts[1]
    assert planning.startswith("What is the capital of France?") and "Plan the steps that answer the query" in planning
    assert f"data sources named for this query: {ATLAS}" in planning
    assert "Paris is the capital of France" in answering  # the planned search's result reached the model
    plan = bench.config.store.load(result["planId"], "acme")
    assert plan is not None
    assert (plan.chain_mode, plan.data_references, plan.stream_session_id, plan.mcp_session_id) == (
        True,
        [ATLAS],
        None,
        None,
    )


def test_an_unusable_plan_from_the_model_fails_the_chain_and_says_why(client: TestClient) -> None:
    query = planned_chain("What is the capital of France?", [], ANSWER)  # {"steps": []}
    result = client.post("/chat/chain", headers=ADA, json=query).json()
    why = "planning failed: the planning reply needs a non-empty 'steps' list"
    assert (result["status"], result["error"], result["steps"], result["output"]) == ("failed", why, [], None)
    with signed_in(client) as socket:
        socket.send_json({"type": "chain", **query})
        messages = until_result(socket.receive_json)
    assert [(e["eventType"], e["stepNumber"], e["errorMessage"]) for e in events(messages)] == [
        ("stepError", None, why)
    ]
    assert (messages[-1]["status"], messages[-1]["error"]) == ("failed", why)


def test_the_websocket_door_records_its_session_on_the_plans_it_starts(client: TestClient, bench: ServiceBench) -> None:
    started = []
    with signed_in(client) as socket:
        for _ in range(2):
            socket.send_json({"type": "chain", **tool_chain("lookup")})
            started.append(until_result(socket.receive_json)[0])
    with signed_in(client) as other:
        other.send_json({"type": "chain", **tool_chain("lookup")})
        started.append(until_result(other.receive_json)[0])
    sessions = [message["streamSessionId"] for message in started]
    assert sessions[0] and sessions[0] == sessions[1] != sessions[2] and sessions[2]
    plans = [bench.config.store.load(message["planId"], "acme") for message in started]
    assert [(p.stream_session_id, p.mcp_session_id, p.chain_mode) for p in plans if p is not None] == [
        (session, None, True) for session in sessions
    ]
    by_rest = client.post("/chat/chain", headers=ADA, json=tool_chain("lookup")).json()
    rest_plan = bench.config.store.load(by_rest["planId"], "acme")
    assert rest_plan is not None and (rest_plan.stream_session_id, rest_plan.chain_mode) == (None, True)
