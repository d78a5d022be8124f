"""Servers the recording tests run, each on a free loopback port: upstreams in a thread of
the test process (the mock, and a plain Starlette app of odd stream shapes), a replaying
server in a thread (for tests of what is replayed over HTTP), and, as processes stopped by
their PID, the recording proxy and a replaying server (``serve --recordings``)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from harness.plugin.recording import serve_in_thread
from mockllm import MockLLM
from mockllm._recording.replay import RecordingLibrary
from tests.mockllm.recording.odd_upstream import app as odd_app
from tests.mockllm.threaded_app import app_in_thread

START_TIMEOUT_S = 30


@contextlib.contextmanager
def running(args: list[str], log: Path, ready_prefix: str) -> Iterator[str]:
    """Run ``python ARGS`` until the block ends; yields the URL its first line announces."""
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, *args], stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            first = log.read_text().partition("\n")[0]
            if first.startswith(ready_prefix):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{args} did not start; its output:\n{log.read_text()}")
            time.sleep(0.005)
        yield first.split()[-1]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def mock_upstream() -> Iterator[str]:
    """The mock (``MockLLM()``, as ``python -m mockllm serve`` makes it) as the upstream to
    record from, at a loopback URL that stops answering when the block ends. What is under
    test is the recording side; an upstream in a thread costs none of the second of CPU
    that starting a server process does."""
    with serve_in_thread(MockLLM()) as server:
        yield server.base_url


@contextlib.contextmanager
def replay_in_thread(recordings: Path) -> Iterator[str]:
    """What ``python -m mockllm serve --recordings RECORDINGS`` serves (its app under its
    uvicorn server), from a thread of the test process: for a test of what a replay sends
    over HTTP, not of the command (``replay_server`` runs that)."""
    with serve_in_thread(MockLLM(recordings=RecordingLibrary.from_directory(recordings))) as server:
        yield server.base_url


@contextlib.contextmanager
def odd_upstream() -> Iterator[str]:
    """The Starlette app of odd stream shapes (``odd_upstream.py``) as the upstream."""
    with app_in_thread(odd_app) as (_, url):
        yield url


def recording_proxy(tmp: Path, upstream: str, out: Path, *extra: str) -> contextlib.AbstractContextManager[str]:
    args = ["-m", "mockllm", "record", "--upstream", upstream, "--out", str(out), "--port", "0", *extra]
    return running(args, tmp / "proxy.log", "mockllm recording on ")


def replay_server(tmp: Path, recordings: Path, *extra: str) -> contextlib.AbstractContextManager[str]:
    args = ["-m", "mockllm", "serve", "--port", "0", "--recordings", str(recordings), *extra]
    return running(args, tmp / "replay.log", "mockllm serving on ")
