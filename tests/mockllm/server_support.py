"""Helpers shared by the server test modules: request builders, a server process of a
test's own, and the fixtures that start them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from mockllm import InstructionChain

httpx2 = pytest.importorskip("httpx2", reason="httpx2 is not installed (the httpx2 extra)")

START_TIMEOUT_S = 30
STOP_TIMEOUT_S = 10
OPENAI_MODEL = "gpt-mock"
ANTHROPIC_MODEL = "claude-mock-1"

PATHS = {
    "openai-chat": "/v1/chat/completions",
    "anthropic-messages": "/v1/messages",
    "openai-responses": "/v1/responses",
}
PROTOCOLS = list(PATHS)


# -- building requests --------------------------------------------------------------


def script(*instructions: dict[str, Any], prompt: str = "prompt") -> str:
    """A user-message text holding ``instructions`` as a chain."""
    return InstructionChain(instruction_chain=list(instructions)).tagged(prompt)


def uid(label: str) -> str:
    """An instruction id unique to this run, so that chains never collide in a journal."""
    return f"{label}-{uuid.uuid4().hex[:8]}"


def text(length: int = 6, **extra: Any) -> dict[str, Any]:
    return {"id": uid("text"), "messages": [{"text_message": {"length": length}}], **extra}


def user_body(protocol: str, content: str, *, stream: bool = False) -> dict[str, Any]:
    """The smallest valid request of ``protocol`` with one user message."""
    if protocol == "openai-chat":
        body: dict[str, Any] = {"model": OPENAI_MODEL, "messages": [{"role": "user", "content": content}]}
    elif protocol == "anthropic-messages":
        body = {"model": ANTHROPIC_MODEL, "max_tokens": 512, "messages": [{"role": "user", "content": content}]}
    else:
        body = {"model": OPENAI_MODEL, "input": content}
    if stream:
        body["stream"] = True
    return body


def orphan_result_body(protocol: str) -> dict[str, Any]:
    """A conversation whose tool result answers no tool call."""
    if protocol == "openai-chat":
        return {
            "model": OPENAI_MODEL,
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "call_nowhere", "content": "42"},
            ],
        }
    if protocol == "anthropic-messages":
        return {
            "model": ANTHROPIC_MODEL,
            "max_tokens": 64,
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "let me see"},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "42"}]},
            ],
        }
    return {
        "model": OPENAI_MODEL,
        "input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call_output", "call_id": "call_nowhere", "output": "42"},
        ],
    }


def unanswered_call_body(protocol: str) -> dict[str, Any]:
    """A conversation that moves on after an assistant tool call without its result."""
    if protocol == "openai-chat":
        return {
            "model": OPENAI_MODEL,
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "call_open", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
                    ],
                },
                {"role": "user", "content": "and then?"},
            ],
        }
    if protocol == "anthropic-messages":
        return {
            "model": ANTHROPIC_MODEL,
            "max_tokens": 64,
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "toolu_open", "name": "lookup", "input": {}}],
                },
                {"role": "user", "content": "and then?"},
            ],
        }
    return {
        "model": OPENAI_MODEL,
        "input": [
            {"role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "call_open", "name": "lookup", "arguments": "{}"},
            {"role": "user", "content": "and then?"},
        ],
    }


def encode(body: Any) -> bytes:
    return json.dumps(body).encode()


_shared: list[httpx2.Client] = []


@pytest.fixture(scope="module", autouse=True)
def _shared_client() -> Iterator[None]:
    """One loopback client for the module (building an httpx2 client costs ~50 ms)."""
    with httpx2.Client(timeout=30) as client:
        _shared.append(client)
        try:
            yield
        finally:
            _shared.clear()


def http() -> httpx2.Client:
    return _shared[0]


def post(base_url: str, protocol: str, body: Any, **headers: str) -> httpx2.Response:
    content = body if isinstance(body, bytes) else encode(body)
    return http().post(
        f"{base_url}{PATHS[protocol]}", content=content, headers={"content-type": "application/json", **headers}
    )


def journal(base_url: str) -> list[dict[str, Any]]:
    response = http().get(f"{base_url}/_mockllm/requests")
    assert response.status_code == 200
    return response.json()


def entries_for(base_url: str, chain_id: str) -> list[dict[str, Any]]:
    return [e for e in journal(base_url) if e["chain_id"] == chain_id]


def sse_events(body: bytes) -> list[bytes]:
    return [e for e in body.split(b"\n\n") if e.strip()]


def assert_provider_error(protocol: str, response: Any, status: int, error_type: str) -> dict[str, Any]:
    """``response`` carries the provider's own error body with ``status`` and ``error_type``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    if protocol == "anthropic-messages":
        assert body["type"] == "error"
        assert set(body["error"]) == {"type", "message"}
    else:
        assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["type"] == error_type
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


# -- a server process of the test's own ---------------------------------------------


@dataclass
class ServerProcess:
    proc: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path
    base_url: str = ""

    @property
    def output(self) -> str:
        return self.stdout.read_text()

    @property
    def errors(self) -> str:
        return self.stderr.read_text()

    def wait_ready(self) -> ServerProcess:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            output = self.output
            first_line = output.partition("\n")[0]
            # Ready once the URL line and both base_url lines are out.
            if first_line.startswith("mockllm serving on ") and output.count("base_url=") >= 2:
                self.base_url = first_line.split()[-1]
                return self
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"server did not start:\n{self.output}\n{self.errors}")
            time.sleep(0.005)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Send ``sig`` to the server's PID; its exit code (bounded wait)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"server did not stop on {sig!r} within {STOP_TIMEOUT_S}s") from None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def launch(tmp: Path, *args: str) -> ServerProcess:
    """Start ``python -m mockllm serve ARGS`` with its output in files under ``tmp``."""
    tmp.mkdir(parents=True, exist_ok=True)
    name = uuid.uuid4().hex[:8]
    out, err = tmp / f"{name}.out", tmp / f"{name}.err"
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mockllm", "serve", *args],
            stdout=stdout,
            stderr=stderr,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    return ServerProcess(proc, out, err)


_SIGNALLED_AS_ANNOUNCED = """
import os, signal
# A shell's background job starts with SIGINT ignored, and its children inherit that.
signal.signal(signal.SIGINT, signal.default_int_handler)
from mockllm import MockLLM, serve
from mockllm._state import open_state
for sig in ({signals}):
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    status = serve(MockLLM(state=open_state({state!r})), port=0, workers={workers!r},
                   on_ready=lambda url: os.kill(os.getpid(), sig))
    print(sig.name, "returned", status, flush=True)
"""


@dataclass
class SignalledAsAnnounced:
    """The output of one process calling ``serve`` once per signal of ``signals``, each
    call sent its signal the moment it announced itself (``serve_signalled_as_announced``)."""

    signals: tuple[signal.Signals, ...]
    done: subprocess.CompletedProcess[str]

    def assert_stopped_cleanly(self, sig: signal.Signals) -> None:
        """``serve`` returned 0 after ``sig``, as after every other, and nothing was printed
        of a traceback."""
        done, lines = self.done, self.done.stdout.splitlines()
        assert f"{sig.name} returned 0" in lines, (done.returncode, done.stderr)
        assert (done.returncode, lines) == (0, [f"{s.name} returned 0" for s in self.signals]), done.stderr
        assert "Traceback" not in done.stderr


def serve_signalled_as_announced(
    signals: tuple[signal.Signals, ...], *, state: str = "memory", workers: int | None = None
) -> SignalledAsAnnounced:
    """One process calling ``serve`` once per signal of ``signals``, each call sent its
    signal the moment it announces itself (``on_ready``); it prints ``NAME returned STATUS``
    after each. ``serve`` puts back the handlers it found, so each call starts from what a
    fresh process has (checked), and the process is started once (about half a second
    of CPU)."""
    names = ", ".join(f"signal.{sig.name}" for sig in signals)
    program = _SIGNALLED_AS_ANNOUNCED.format(signals=names + ",", state=state, workers=workers)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    return SignalledAsAnnounced(signals, done)


def status_kib(pid: int, field: str) -> int:
    """A field of ``/proc/<pid>/status``, in KiB: ``VmRSS`` (resident now), ``VmHWM`` (its peak)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def fresh_peak(pid: int) -> int:
    """Reset process ``pid``'s peak resident set (VmHWM) to its current one
    (``/proc/<pid>/clear_refs``), so that the peak read next is what came after, on a
    server other tests use too; the current one, in KiB."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    return status_kib(pid, "VmRSS")


def listening_addresses(port: int) -> set[str]:
    """Local IPv4 addresses listening on ``port``, read from /proc/net/tcp (Linux)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, _, hex_port = local.partition(":")
        if state == "0A" and int(hex_port, 16) == port:
            found.add(".".join(str(b) for b in reversed(bytes.fromhex(address))))
    return found


def sdk_clients(base: str, http: httpx2.Client, retries: int) -> tuple[openai.OpenAI, anthropic.Anthropic]:
    return (
        openai.OpenAI(api_key="test", base_url=f"{base}/v1", http_client=http, max_retries=retries),
        anthropic.Anthropic(api_key="test", base_url=base, http_client=http, max_retries=retries),
    )


def two_city_weather_chain(tag: str) -> str:
    """A tagged prompt scripting two get_weather calls (Oslo, then Lima) and an answer:
    the held-state tests' three-turn tool loop."""
    call = lambda city: {"tool_call": [{"name": "get_weather", "args": {"city": city}}]}  # noqa: E731
    return script(
        {"id": uid(f"{tag}-ask1"), "messages": [call("Oslo")]},
        {"id": uid(f"{tag}-ask2"), "messages": [call("Lima")]},
        {"id": uid(f"{tag}-done"), "messages": [{"text_message": {"text": "Both are sunny."}}]},
        prompt="Weather in Oslo and Lima?",
    )
