"""The chain service's REST door: a synchronous run, status, and the structured errors a
client gets (400, 401, 404 — never 403, never another organization's data — 405);
then the same over real HTTP on 127.0.0.1, and ``python -m harness serve``."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from starlette.testclient import TestClient

from harness.cli import main as harness_cli
from tests.harness.systems.service.service_support import ADA, ANSWER, EVE, capital_chain, scripted, stop, tool_chain

if TYPE_CHECKING:
    from service_support import LiveServer, ServiceBench


def assert_error(response: httpx.Response, status: int, *phrases: str) -> str:
    """The response is the structured error ``{status, detail}`` with ``status``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"status", "detail"} and body["status"] == status, body
    for phrase in phrases:
        assert phrase in body["detail"], body
    return str(body["detail"])


def test_a_chain_runs_to_its_result(client: TestClient) -> None:
    response = client.post("/chat/chain", json=capital_chain(), headers=ADA)
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["status"] == "completed" and result["executed"] is True and result["error"] is None
    assert result["planUri"] == f"am7://acme/tool.plan/{result['planId']}"
    assert result["output"].endswith(f"Final answer: {ANSWER}")
    assert [(s["number"], s["type"], s["label"], s["status"]) for s in result["steps"]] == [
        (1, "TOOL", "Tool", "COMPLETED"),
        (2, "RAG_QUERY", "RAG", "COMPLETED"),
        (3, "LLM", "LLM", "COMPLETED"),
        (4, "TOOL", "Tool", "COMPLETED"),
        (5, "POLICY_GATE", "Gate", "COMPLETED"),
    ]
    summaries = [s["summary"] for s in result["steps"]]
    assert summaries[0] == "lookup returned facts about France: its capital is Paris"
    assert summaries[1] == "1 result(s) for 'capital of France'" and summaries[2] == ANSWER
    assert summaries[4].startswith("PERMIT by policy no-secrets")
    messages = result["chatHistory"]["messages"]
    assert [m["role"] for m in messages] == ["user", "system", "system", "assistant"]
    assert messages[0]["content"] == "What is the capital of France?"  # the script is not shown
    assert messages[-1]["content"] == result["output"]

    status = client.get(f"/chat/chain/status/{result['planId']}", headers=ADA)
    assert status.status_code == 200
    assert status.json() == {
        "planId": result["planId"],
        "planUri": result["planUri"],
        "status": "completed",
        "stepNumber": 5,
        "totalSteps": 5,
        "executed": True,
        "error": None,
    }


def test_a_colleague_in_the_organization_reads_the_status(client: TestClient) -> None:
    plan_id = client.post("/chat/chain", json=tool_chain("lookup"), headers=ADA).json()["planId"]
    assert (
        client.get(f"/chat/chain/status/{plan_id}", headers={"Authorization": "Bearer tok-bob"}).json()["status"]
        == "completed"
    )


def test_status_while_running_and_after(bench: ServiceBench, client: TestClient) -> None:
    bench.compose.hold()
    with client.websocket_connect("/chat/chain/ws", headers={**ADA}) as socket:
        assert socket.receive_json()["type"] == "authenticated"
        socket.send_json({"type": "chain", **capital_chain()})
        plan_id = socket.receive_json()["planId"]
        bench.compose.wait_for_calls(1)
        running = client.get(f"/chat/chain/status/{plan_id}", headers=ADA).json()
        assert (running["status"], running["totalSteps"], running["executed"]) == ("running", 5, False)
        assert running["stepNumber"] >= 3  # the exact running step: see the next test
        bench.compose.release.set()
        while socket.receive_json().get("type") != "chainResult":
            pass
    after = client.get(f"/chat/chain/status/{plan_id}", headers=ADA).json()
    assert (after["status"], after["stepNumber"], after["executed"]) == ("completed", 5, True)


def test_status_names_the_running_step(bench: ServiceBench, client: TestClient) -> None:
    bench.compose.hold()
    with client.websocket_connect("/chat/chain/ws", headers={**ADA}) as socket:
        assert socket.receive_json()["type"] == "authenticated"
        socket.send_json({"type": "chain", **capital_chain()})
        plan_id = socket.receive_json()["planId"]
        bench.compose.wait_for_calls(1)
        try:
            assert client.get(f"/chat/chain/status/{plan_id}", headers=ADA).json()["stepNumber"] == 4
        finally:
            bench.compose.release.set()
            while socket.receive_json().get("type") != "chainResult":
                pass


def test_a_failed_step_is_a_result_not_a_server_error(client: TestClient) -> None:
    response = client.post("/chat/chain", json=tool_chain("explode"), headers=ADA)
    assert response.status_code == 200
    result = response.json()
    assert result["status"] == "failed"
    assert result["error"] == "step 1: tool 'explode' failed: RuntimeError: the archive is offline"
    assert [(s["status"], s["summary"]) for s in result["steps"]] == [
        ("FAILED", result["error"]),
        ("PENDING", "no secrets out"),
    ]


def test_a_gated_chain_does_not_answer_with_what_the_gate_stopped(client: TestClient) -> None:
    result = client.post("/chat/chain", json=tool_chain("leak"), headers=ADA).json()
    assert result["status"] == "gated" and "gated by policy 'no-secrets'" in result["error"]
    assert [s["status"] for s in result["steps"]] == ["COMPLETED", "GATED"]
    # Not the answer: the steps that ran still say what they did.
    assert result["output"] is None
    messages = result["chatHistory"]["messages"]
    assert [m["role"] for m in messages] == ["user", "system", "assistant"]
    assert messages[-1]["content"] == "The chain was halted at step 2: policy 'no-secrets' denied it."
    assert "leak" not in messages[-1]["content"]


@pytest.mark.parametrize(
    "headers, phrase",
    [
        ({}, "missing bearer token"),
        ({"Authorization": "Bearer tok-nobody"}, "unknown bearer token"),
        ({"Authorization": "Basic dG9rLWFkYQ=="}, "must be 'Bearer <token>'"),
    ],
)
def test_no_or_a_bad_token_is_401(client: TestClient, headers: dict[str, str], phrase: str) -> None:
    assert_error(client.post("/chat/chain", json=capital_chain(), headers=headers), 401, phrase)
    assert_error(client.get("/chat/chain/status/anything", headers=headers), 401, phrase)


def test_another_organizations_plan_is_404_and_tells_nothing(client: TestClient) -> None:
    plan_id = client.post("/chat/chain", json=capital_chain(), headers=ADA).json()["planId"]
    foreign = client.get(f"/chat/chain/status/{plan_id}", headers=EVE)
    detail = assert_error(foreign, 404)
    unknown = client.get("/chat/chain/status/no-such-plan", headers=EVE)
    # Indistinguishable from a plan that does not exist, and none of the plan's data.
    assert detail.replace(plan_id, "no-such-plan") == unknown.json()["detail"]
    told = foreign.text.replace(plan_id, "")  # a random hex id may spell "ada" or "acme"
    for secret in ("acme", "capital", "Paris", "completed", "ada"):
        assert secret not in told


@pytest.mark.parametrize(
    "body, phrases",
    [
        (b"{not json", ["not valid JSON"]),
        (b"[1, 2]", ["invalid chain request", "body"]),
        (json.dumps({"steps": []}).encode(), ["planQuery", "Field required"]),
        (json.dumps({"planQuery": "q", "maxSteps": 0}).encode(), ["maxSteps", "greater than or equal to 1"]),
        (json.dumps({"planQuery": "q", "colour": "red"}).encode(), ["colour", "Extra inputs"]),
        (json.dumps({"planQuery": "q", "steps": [{"stepType": "DANCE"}]}).encode(), ["steps[0].stepType"]),
    ],
)
def test_a_malformed_or_invalid_request_is_400_naming_the_problem(
    client: TestClient, body: bytes, phrases: list[str]
) -> None:
    response = client.post("/chat/chain", content=body, headers=ADA | {"Content-Type": "application/json"})
    assert_error(response, 400, *phrases)


def test_unknown_routes_and_methods_answer_in_json(client: TestClient) -> None:
    assert_error(client.get("/chat/chains", headers=ADA), 404, "/chat/chains")
    wrong = client.get("/chat/chain", headers=ADA)
    assert_error(wrong, 405, "GET is not allowed", "POST")
    assert wrong.headers["allow"] == "POST"
    assert_error(client.get("/chain/assets/nothing.js"), 404)


def test_health_and_the_page_with_its_assets(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    page = client.get("/chain")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for asset in ("/chain/assets/chain-page.js", "/chain/assets/chain.css"):
        assert asset in page.text
        assert client.get(asset).status_code == 200
    script = client.get("/chain/assets/mcp-context.js")
    assert "javascript" in script.headers["content-type"] and "export function filterContext" in script.text


# -- over real HTTP ---------------------------------------------------------------------


def test_over_real_http_on_loopback(live: LiveServer) -> None:
    with httpx.Client(base_url=live.base_url, timeout=30) as http:
        result = http.post("/chat/chain", json=capital_chain(), headers=ADA).json()
        assert result["status"] == "completed"
        assert http.get(f"/chat/chain/status/{result['planId']}", headers=ADA).json()["status"] == "completed"
        assert_error(http.get(f"/chat/chain/status/{result['planId']}", headers=EVE), 404)
        assert_error(http.post("/chat/chain", json=capital_chain()), 401)
        assert_error(http.post("/chat/chain", content=b"{", headers=ADA), 400, "not valid JSON")


# -- python -m harness serve ------------------------------------------------------------

TOKENS_JSON = json.dumps({"tok-ada": {"user": "ada", "organization": "acme"}})


def serve(tmp_path: Path, *args: str, tokens: str | None = TOKENS_JSON) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_CHAIN_TOKENS"}
    if tokens is not None:
        env["HARNESS_CHAIN_TOKENS"] = tokens
    return subprocess.Popen(
        [sys.executable, "-m", "harness", "serve", "--port", "0", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def base_url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline()  # blocks until the server has bound its socket
    assert line.startswith("harness chain service on http://127.0.0.1:"), line + process.stderr.read()
    return line.split(" on ")[1].strip()


@pytest.mark.parametrize("tokens", [None, "{}"])
def test_serve_refuses_to_start_without_tokens(tmp_path: Path, tokens: str | None) -> None:
    process = serve(tmp_path, tokens=tokens)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 2
    assert "no tokens are configured" in err and "HARNESS_CHAIN_TOKENS" in err


def test_serve_runs_chains_and_exits_0_on_sigint(tmp_path: Path) -> None:
    """Its model the in-process mock; Ctrl-C ends it with status 0. (SIGTERM ends the next
    test's server, which runs a chain as well: a server started per signal, no more.)"""
    # Its model speaks OpenAI's protocol (the next test keeps the default, Anthropic's): the
    # protocol is no concern here, and a fresh process imports OpenAI's SDK in a third of
    # the CPU Anthropic's takes.
    config = tmp_path / "service.yaml"
    config.write_text("llm: {protocol: openai-chat}\n", encoding="utf-8")
    process = serve(tmp_path, "--config", str(config))
    try:
        url = base_url(process)
        with httpx.Client(base_url=url, timeout=30) as http:
            assert http.get("/healthz").json() == {"status": "ok"}
            result = http.post(
                "/chat/chain",
                headers=ADA,
                json={
                    "planQuery": scripted("Say hi", "Hello from the chain."),
                    "steps": [{"stepType": "LLM", "inputs": {"prompt": "Say hi."}}],
                },
            ).json()
            assert (result["status"], result["output"]) == ("completed", "Hello from the chain.")
    finally:
        returncode, err = stop(process, signal.SIGINT)
    assert returncode == 0, err


class _SignalAtTheBanner(io.StringIO):
    """Standard output that raises ``sig`` in the process as the banner is written: a
    supervisor stopping the server the moment it reads the banner."""

    def __init__(self, sig: int) -> None:
        super().__init__()
        self.sig = sig

    def write(self, text: str) -> int:
        written = super().write(text)
        if text.startswith("harness chain service on "):
            signal.raise_signal(self.sig)
        return written


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_the_moment_serve_announces_itself_stops_it_cleanly(sig: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # The banner was printed before the handlers were in: a Ctrl-C right then was a
    # KeyboardInterrupt traceback and status 1. Served in this process (no start to pay).
    def too_soon(signum: int, frame: object) -> None:
        raise AssertionError("the banner came before serve's signal handlers")

    monkeypatch.setenv("HARNESS_CHAIN_TOKENS", TOKENS_JSON)
    out = _SignalAtTheBanner(sig)
    monkeypatch.setattr(sys, "stdout", out)
    previous = signal.signal(sig, too_soon)  # not this test process's own handling
    try:
        assert harness_cli(["serve", "--port", "0"]) == 0
    finally:
        signal.signal(sig, previous)
    assert out.getvalue().startswith("harness chain service on http://127.0.0.1:")
    assert out.getvalue().endswith("harness chain service stopped\n")


def test_serve_with_mock_serves_the_model_in_the_same_process(tmp_path: Path) -> None:
    """The mock is mounted under /llm, behind the service's tokens; SIGTERM ends the server
    with status 0."""
    process = serve(tmp_path, "--with-mock")
    try:
        url = base_url(process)
        with httpx.Client(base_url=url, timeout=30) as http:
            result = http.post(
                "/chat/chain",
                headers=ADA,
                json={
                    "planQuery": scripted("Say hi", "Hello through /llm."),
                    "steps": [{"stepType": "LLM", "inputs": {"prompt": "Say hi."}}],
                },
            ).json()
            assert result["output"] == "Hello through /llm."
            journal: list[dict[str, Any]] = http.get("/llm/_mockllm/requests", headers=ADA).json()
            assert [entry["protocol"] for entry in journal] == ["anthropic-messages"] * 2  # answer, routing
            # The mock is behind the same tokens: no token, no journal, no reset, no model.
            for method, path in [
                ("GET", "/llm/_mockllm/requests"),
                ("POST", "/llm/_mockllm/reset"),
                ("POST", "/llm/v1/messages"),
            ]:
                for headers in [{}, {"authorization": "Bearer nope"}, {"x-api-key": "nope"}]:
                    refused = http.request(method, path, headers=headers)
                    assert refused.status_code == 401, (method, path, headers)
                    assert refused.json()["status"] == 401
            assert len(http.get("/llm/_mockllm/requests", headers=ADA).json()) == 2
    finally:
        returncode, err = stop(process, signal.SIGTERM)
    assert returncode == 0, err


def test_the_app_serves_mcp_at_slash_mcp_with_the_same_tokens(bench: ServiceBench) -> None:
    """One process, every door: the MCP server is routed at /mcp and needs a bearer token."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with TestClient(bench.app) as client:  # runs the lifespan
        assert client.post("/mcp", json=initialize, headers=headers).status_code == 401
        reply = client.post("/mcp", json=initialize, headers={**headers, **ADA})
        assert reply.status_code == 200, reply.text
        assert '"serverInfo"' in reply.text and '"tools"' in reply.text  # an MCP server offering tools
