"""``GET /metrics``: vLLM's metric names and the mock's own, counted per protocol; a
404 when turned off and a 501 naming the extra without ``prometheus-client``."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest

# starlette's TestClient drives httpx2 (with httpx it warns, an error here); the lean CI run has none.
pytest.importorskip("httpx2", reason="httpx2 is not installed (starlette's TestClient needs it)")

from starlette.testclient import TestClient  # noqa: E402

from mockllm import InstructionChain, MockLLM
from mockllm._server import create_app

pytest.importorskip("prometheus_client")


def _chat(client: TestClient, instruction: dict[str, Any] | None, *, stream: bool = False) -> Any:
    prompt = "hello there"
    if instruction is not None:
        prompt = InstructionChain(instruction_chain=[instruction]).tagged(prompt)
    body = {"model": "gpt-mock", "stream": stream, "messages": [{"role": "user", "content": prompt}]}
    return client.post("/v1/chat/completions", content=json.dumps(body))


def _value(text: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    pattern = re.escape(name) + (r"\{" + re.escape(wanted) + r"\}" if wanted else "") + r" (\S+)"
    match = re.search("^" + pattern + "$", text, re.MULTILINE)
    assert match is not None, f"{name}{{{wanted}}} not in:\n{text}"
    return float(match.group(1))


def test_metrics_count_requests_tokens_fallbacks_and_scripted_errors() -> None:
    client = TestClient(create_app(MockLLM()))
    text = {"messages": [{"text_message": {"length": 200}}]}
    assert _chat(client, text).status_code == 200
    streamed = _chat(client, {**text, "timing": {"chunk_ms": 1}, "chunk_words": 50}, stream=True)
    assert streamed.status_code == 200
    assert _chat(client, None).status_code == 200  # the fallback
    assert _chat(client, {"error": {"status": 429}}).status_code == 429
    anthropic = {"model": "claude-mock", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
    assert client.post("/v1/messages", content=json.dumps(anthropic)).status_code == 200

    scraped = client.get("/metrics")
    assert scraped.status_code == 200
    assert scraped.headers["content-type"].startswith("text/plain")
    metrics = scraped.text
    chat = {"protocol": "openai-chat"}
    assert _value(metrics, "vllm:time_to_first_token_seconds_count", **chat) == 4
    assert _value(metrics, "vllm:e2e_request_latency_seconds_count", **chat) == 4
    assert _value(metrics, "vllm:inter_token_latency_seconds_count", **chat) >= 4  # the paced stream's events
    assert _value(metrics, "vllm:generation_tokens_total", **chat) >= 2 * 200
    assert _value(metrics, "vllm:prompt_tokens_total", **chat) >= 4
    assert _value(metrics, "mockllm_fallbacks_total", **chat) == 1
    assert _value(metrics, "mockllm_scripted_errors_total", **chat) == 1
    assert _value(metrics, "mockllm_requests_total", protocol="openai-chat", status="429") == 1
    assert _value(metrics, "mockllm_requests_total", protocol="openai-chat", status="200") == 3
    assert _value(metrics, "mockllm_fallbacks_total", protocol="anthropic-messages") == 1
    assert _value(metrics, "vllm:num_requests_running") == 0
    assert _value(metrics, "vllm:num_requests_waiting") == 0


def test_a_session_is_counted_with_the_server() -> None:
    client = TestClient(create_app(MockLLM()))
    path = client.post("/_mockllm/sessions", json={}).json()["path"]
    body = {"model": "gpt-mock", "messages": [{"role": "user", "content": "hi"}]}
    assert client.post(f"{path}/v1/chat/completions", content=json.dumps(body)).status_code == 200
    assert _value(client.get("/metrics").text, "mockllm_fallbacks_total", protocol="openai-chat") == 1


def test_metrics_turned_off_are_a_404_that_says_so() -> None:
    client = TestClient(create_app(MockLLM(), metrics=False))
    answer = client.get("/metrics")
    assert answer.status_code == 404
    assert "--no-metrics" in answer.json()["error"]["message"]


def test_without_prometheus_client_metrics_are_a_501_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "prometheus_client", None)
    client = TestClient(create_app(MockLLM()))
    answer = client.get("/metrics")
    assert answer.status_code == 501
    assert 'pip install "mockllm-harness[metrics]"' in answer.json()["error"]["message"]
    assert _chat(client, None).status_code == 200  # the mock serves on
