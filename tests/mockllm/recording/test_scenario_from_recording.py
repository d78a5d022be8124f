"""``python -m harness scenario from-recording``: a recorded agent run becomes a scenario
whose script makes the deterministic engine say the same under every protocol."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main as harness_main
from harness.plugin.fixtures import MockLLMFixture
from harness.scenarios.contract import spoken_protocols
from harness.scenarios.model import load_scenario
from harness.scenarios.playback import run_scenario
from harness.scenarios.registry import resolve_runner
from mockllm import MockLLM
from mockllm._recording.capture import Capture, exchange_request
from mockllm._recording.format import Exchange, Recording
from mockllm._recording.store import write_recording

ROOT = Path(__file__).resolve().parents[3]
PROTOCOLS = spoken_protocols(resolve_runner("agent"))


class Tee:
    """Answers from an inner mock and keeps each exchange as the recorder would."""

    def __init__(self) -> None:
        self.inner = MockLLM()
        self.exchanges: list[Exchange] = []

    def answer(self, method: str, path: str, headers: Mapping[str, str], body: bytes, query: str = "") -> Any:
        reply = self.inner.handle(method, path, headers, body, query)
        capture = Capture(exchange_request(method, path, [], headers, body))
        capture.started(reply.status, reply.headers)
        for _, chunk in reply.paced_chunks():
            capture.chunk(chunk)
        self.exchanges.append(capture.finished())
        return reply, {"protocol": None, "status": reply.status, "error": "scripted" if reply.status >= 400 else None}


def said(events: list[Any]) -> list[tuple[str, Any]]:
    """The messages, tool calls and tool results of a run, in order."""
    kept = {"message": "content", "tool_use": "args", "tool_result": "result", "thinking": "content"}
    return [(e.type, e.data.get("toolName"), e.data.get(kept[e.type])) for e in events if e.type in kept]


@pytest.mark.parametrize(
    ("source", "recorded_under"),
    [
        ("tool_use", "openai-chat"),
        ("tool_loop_with_thinking", "anthropic-messages"),
        ("extended_thinking", "openai-chat"),
        ("error_http", "openai-chat"),
        ("error_mid_stream", "anthropic-messages"),
    ],
)
def test_a_recorded_run_replays_under_every_protocol(tmp_path: Path, source: str, recorded_under: str) -> None:
    original = load_scenario(ROOT / "scenarios" / f"{source}.yaml")
    tee = Tee()
    first = asyncio.run(run_scenario(original, recorded_under, MockLLMFixture(MockLLM(recordings=tee))))
    recording = write_recording(Recording(exchanges=tee.exchanges), tmp_path / f"{source}.json")

    out = tmp_path / f"{source}.scenario.yaml"
    assert harness_main(["scenario", "from-recording", str(recording), "--out", str(out)]) == 0
    made = load_scenario(out)
    assert made.expect.success is first.success
    for protocol in PROTOCOLS:
        again = asyncio.run(run_scenario(made, protocol, MockLLMFixture(MockLLM())))
        assert (again.success, again.final_text) == (first.success, first.final_text), protocol
        assert said(again.events) == said(first.events), protocol
        if not first.success:
            assert made.expect.error_contains and made.expect.error_contains in (again.error or "")


def test_a_broken_recording_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "mockllm-recording", "version": 1, "exchanges": [')
    assert harness_main(["scenario", "from-recording", str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"harness: {bad}:1: not valid JSON")
