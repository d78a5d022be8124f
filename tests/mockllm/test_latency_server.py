"""A latency profile given to ``serve`` paces real streams over HTTP (a few streams,
generous bounds: the machine is shared)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.mockllm.server_support import launch, script, sse_events, text, user_body

httpx2 = pytest.importorskip("httpx2")

TTFT_S, ITL_S = 0.15, 0.015


def _paced_stream(client: httpx2.Client, base_url: str) -> tuple[int, float, float, int]:
    """One stream's status, seconds to its first byte, seconds in all, and events."""
    body = user_body("openai-chat", script(text(6)), stream=True)
    started = time.monotonic()
    first = None
    chunks = []
    with client.stream("POST", f"{base_url}/v1/chat/completions", json=body) as response:
        for chunk in response.iter_raw():
            first = first if first is not None else time.monotonic() - started
            chunks.append(chunk)
    assert first is not None
    return response.status_code, first, time.monotonic() - started, len(sse_events(b"".join(chunks)))


def test_serve_paces_streams_by_its_latency_profile(tmp_path: Path) -> None:
    profile = tmp_path / "profile.yaml"
    profile.write_text(f"ttft_ms: {TTFT_S * 1000}\nitl_ms: {{distribution: constant, mean: {ITL_S * 1000}}}\n")
    server = launch(tmp_path, "--port", "0", "--latency-profile", str(profile)).wait_ready()
    try:
        # Three streams at once (the profile has no load factor: each keeps its own pace).
        with httpx2.Client(timeout=30) as client, ThreadPoolExecutor(3) as pool:
            streams = list(pool.map(lambda _: _paced_stream(client, server.base_url), range(3)))
        for n, (status, first, total, events) in enumerate(streams):
            assert status == 200
            assert first >= TTFT_S * 0.95, (n, first)
            # Every later event waited its ITL: a lower bound, and a loose upper one.
            assert total >= TTFT_S + (events - 1) * ITL_S * 0.9, (n, total, events)
            assert total < 10 * (TTFT_S + events * ITL_S), (n, total, events)
    finally:
        assert server.stop() == 0
