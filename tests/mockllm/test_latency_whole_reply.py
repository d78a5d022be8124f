"""A complete (non-streamed) reply under a latency profile waits once, before it is sent,
as long as its stream would have taken: TTFT (prefill included) + ITL x output tokens.

Checked on the wait the mock computes (no sleeping) and, with generous upper bounds (the
machine is shared), on the wall clock in process and over HTTP."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from mockllm import HTTPXTransport, InstructionChain, Limits, MockLLM
from mockllm._latency import LatencyProfile, LatencyProfiles
from mockllm._server import create_app
from tests.mockllm.server_support import script, text, user_body
from tests.mockllm.threaded_app import app_in_thread

TTFT_MS, ITL_MS, PREFILL_MS = 100.0, 5.0, 0.5


def _mock(**extra: Any) -> MockLLM:
    profile = {"ttft_ms": TTFT_MS, "itl_ms": ITL_MS, "prefill_ms_per_token": PREFILL_MS, **extra}
    return MockLLM(latency=LatencyProfiles(default=LatencyProfile.model_validate(profile)))


def _body(length: int, *, stream: bool = False) -> dict[str, Any]:
    prompt = InstructionChain(instruction_chain=[{"messages": [{"text_message": {"length": length}}]}]).tagged("go")
    return {"model": "gpt-mock", "stream": stream, "messages": [{"role": "user", "content": prompt}]}


def _expected_s(usage: dict[str, int]) -> float:
    return (TTFT_MS + PREFILL_MS * usage["prompt_tokens"] + ITL_MS * usage["completion_tokens"]) / 1000


def test_the_wait_is_the_ttft_prefill_and_one_itl_per_output_token() -> None:
    mock = _mock()
    for length in (3, 40):
        reply = mock.handle("POST", "/v1/chat/completions", {}, json.dumps(_body(length)).encode())
        usage = json.loads(reply.body)["usage"]
        assert usage["completion_tokens"] >= length
        assert reply.delivery is not None
        assert reply.delivery.stall_s == pytest.approx(_expected_s(usage))
        assert reply.length == len(reply.body)  # still one write with a Content-Length


def test_the_wait_is_held_to_the_delay_cap_and_absent_without_a_profile() -> None:
    capped = MockLLM(
        latency=LatencyProfiles(default=LatencyProfile(ttft_ms=800, itl_ms=100)), limits=Limits(max_delay_ms=1000)
    )
    reply = capped.handle("POST", "/v1/chat/completions", {}, json.dumps(_body(40)).encode())
    assert reply.delivery is not None and reply.delivery.stall_s == pytest.approx(1.0)
    # A script's fixed timing paces streams only; no profile, no wait.
    fixed = {"messages": [{"text_message": {"length": 3}}], "timing": {"first_chunk_ms": 500, "chunk_ms": 50}}
    body = {"model": "m", "messages": [{"role": "user", "content": script(fixed)}]}
    reply = MockLLM().handle("POST", "/v1/chat/completions", {}, json.dumps(body).encode())
    assert reply.delivery is None


def test_a_script_profile_delays_its_complete_reply_too() -> None:
    paced = {"messages": [{"text_message": {"length": 4}}], "timing": {"profile": {"ttft_ms": 300, "itl_ms": 20}}}
    body = {"model": "m", "messages": [{"role": "user", "content": script(paced)}]}
    reply = MockLLM().handle("POST", "/v1/chat/completions", {}, json.dumps(body).encode())
    tokens = json.loads(reply.body)["usage"]["completion_tokens"]
    assert reply.delivery is not None and reply.delivery.stall_s == pytest.approx(0.3 + 0.02 * tokens)


def test_an_in_process_client_gets_the_reply_after_the_wait() -> None:
    with httpx.Client(transport=HTTPXTransport(_mock()), base_url="http://mock") as client:
        started = time.monotonic()
        response = client.post("/v1/chat/completions", json=_body(10))
        elapsed = time.monotonic() - started
    assert response.status_code == 200
    expected = _expected_s(response.json()["usage"])
    assert expected <= elapsed < expected + 5


def test_the_server_sends_a_complete_reply_after_the_wait() -> None:
    # The server's app in a thread: ``serve --latency-profile`` itself is test_latency_server.py's.
    httpx2 = pytest.importorskip("httpx2")
    with app_in_thread(create_app(_mock())) as (_, base_url), httpx2.Client(timeout=30) as client:
        body = user_body("openai-chat", script(text(12)))
        started = time.monotonic()
        response = client.post(f"{base_url}/v1/chat/completions", json=body)
        elapsed = time.monotonic() - started
    assert response.status_code == 200
    assert response.headers["content-length"] == str(len(response.content))
    expected = _expected_s(response.json()["usage"])
    assert expected <= elapsed < expected + 5
