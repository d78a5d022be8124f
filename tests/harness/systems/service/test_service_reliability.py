"""The chain service under bad input and interruption (issue 16): every bad body is a
400 ``{status, detail}`` that leaves nothing behind, the WebSocket answers bad frames
and stays open, and a chain's status survives its live entry (the executor records the
outcome in the plan)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from harness.systems.service.auth import Principal
from harness.systems.service.core import ChainRequest, ChainService
from harness.systems.service.status import CUT_OFF
from tests.harness.systems.service.service_support import ADA, ServiceBench, tool_chain
from tests.harness.systems.service.test_websocket import signed_in

ACME = Principal("ada", "acme")


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"deeper": value}
    return value


BAD_BODIES = {
    "nested-past-the-recursion-limit": b"[" * 100_000 + b"]" * 100_000,
    "nested-inputs": json.dumps(
        {"planQuery": "q", "steps": [{"stepType": "TOOL", "toolName": "lookup", "inputs": nested(900)}]}
    ).encode(),
    "surrogate-in-name": b'{"planQuery": "q", "name": "bad \\ud800 name"}',
    "raw-surrogate-in-query": b'{"planQuery": "q \xed\xa0\x80"}',
}


@pytest.mark.parametrize("name", list(BAD_BODIES))
def test_a_bad_rest_body_is_a_400_that_leaves_nothing_behind(
    bench: ServiceBench, client: TestClient, name: str
) -> None:
    reply = client.post("/chat/chain", headers={**ADA, "content-type": "application/json"}, content=BAD_BODIES[name])
    assert reply.status_code == 400, reply.text
    body = reply.json()
    assert body["status"] == 400 and body["detail"]
    assert bench.service._live == {}  # nothing registered for a request that was refused


@pytest.mark.parametrize(
    "frame",
    [
        "[" * 100_000 + "]" * 100_000,
        json.dumps({"type": "chain", "planQuery": "q", "name": "bad \ud800 name"}, ensure_ascii=True),
        json.dumps({"type": "chain", **tool_chain("lookup"), "extra": nested(900)}),
    ],
)
def test_the_websocket_answers_a_bad_frame_and_stays_open(bench: ServiceBench, client: TestClient, frame: str) -> None:
    with signed_in(client) as socket:
        socket.send_text(frame)
        error = socket.receive_json()
        assert (error["type"], error["status"]) == ("error", 400), error
        socket.send_json({"type": "status", "planId": "nope"})
        assert socket.receive_json()["status"] == 404  # still serving
    assert bench.service._live == {}


def _run(bench: ServiceBench, chain: dict[str, Any], *, cancel_at_once: bool = False) -> str:
    service = bench.service

    async def scenario() -> str:
        plan_id = service.start(ACME, ChainRequest.parse(chain))
        if cancel_at_once:
            service.cancel(ACME, plan_id)  # before the first step: a cancel between steps
        await service.wait(ACME, plan_id)
        return plan_id

    return asyncio.run(scenario())


def test_a_max_steps_chain_reads_max_steps_after_a_restart(bench: ServiceBench) -> None:
    plan_id = _run(bench, tool_chain("lookup", maxSteps=1))
    assert bench.service.status(ACME, plan_id).status == "maxSteps"
    restarted = ChainService(bench.config).status(ACME, plan_id)
    assert (restarted.status, restarted.error) == ("maxSteps", "the chain stopped at 1 steps")


def test_a_chain_cancelled_between_steps_reads_cancelled_after_a_restart(bench: ServiceBench) -> None:
    plan_id = _run(bench, tool_chain("lookup"), cancel_at_once=True)
    assert bench.service.plan(ACME, plan_id).outcome == "cancelled"
    assert ChainService(bench.config).status(ACME, plan_id).status == "cancelled"


def test_a_completed_and_a_gated_chain_keep_their_outcome(bench: ServiceBench) -> None:
    completed = _run(bench, tool_chain("lookup"))
    gated = _run(bench, tool_chain("leak"))
    restarted = ChainService(bench.config)
    assert restarted.status(ACME, completed).status == "completed"
    assert restarted.status(ACME, gated).status == "gated"
    assert "gated" in (restarted.status(ACME, gated).error or "")


def test_a_chain_cut_off_mid_run_reads_failed_not_pending(bench: ServiceBench) -> None:
    service = bench.service
    bench.lookup.hold()

    async def scenario() -> tuple[str, Any]:
        plan_id = service.start(ACME, ChainRequest.parse(tool_chain("lookup")))
        await asyncio.to_thread(bench.lookup.wait_for_calls, 1)
        # Another process reading the same store sees a run nothing is running.
        seen = ChainService(bench.config).status(ACME, plan_id)
        bench.lookup.release.set()
        await service.wait(ACME, plan_id)
        return plan_id, seen

    plan_id, seen = asyncio.run(scenario())
    assert (seen.status, seen.error) == ("failed", CUT_OFF)
    assert service.status(ACME, plan_id).status == "completed"
