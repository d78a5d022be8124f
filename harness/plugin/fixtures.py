"""What the plugin's mock fixtures hand to a test: clients pointed at the mock.

``MockLLMFixture`` wraps an in-process ``MockLLM``; ``MockLLMServer`` a loopback server
subprocess (``start_server``). Both build the official SDK clients and the harness's
model clients the same way (``harness.plugin.sdk_clients``), so a test can switch doors
by switching fixtures. The refusal of the providers' own hosts while a test runs is
``harness.plugin.provider_hosts``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from harness.plugin.provider_hosts import refusing_provider_hosts
from harness.plugin.sdk_clients import API_KEY, MockClients, tls_context
from harness.plugin.strict import UnusedStepsError
from mockllm import (
    Findings,
    HTTPX2Transport,
    HTTPXTransport,
    Journal,
    JournalEntry,
    MockLLM,
    StreamShape,
    UnusedStep,
    explain,
)
from mockllm.testing import as_chain, as_match, with_stream

if TYPE_CHECKING:
    from mockllm.testing import Selection

__all__ = [
    "MockLLMFixture",
    "MockLLMServer",
    "UnusedStepsError",
    "refusing_provider_hosts",
    "start_server",
    "tls_context",
]

SERVER_START_TIMEOUT_S = 30


class MockLLMFixture(MockClients):
    """An in-process mock: no sockets, the same bytes as the server."""

    host = "mockllm.test"
    base_url = f"http://{host}"

    def __init__(self, mock: MockLLM) -> None:
        super().__init__()
        self.mock = mock
        self._interception: contextlib.ExitStack | None = None

    def _transport(self, module: Any) -> Any:
        return HTTPXTransport(self.mock) if module is httpx else HTTPX2Transport(self.mock)

    @property
    def journal(self) -> Journal:
        """Requests received, with the selection made for each, newest last."""
        return self.mock.journal

    def unused_steps(self) -> list[UnusedStep]:
        return self.mock.unused_steps()

    def findings(self) -> Findings:
        return self.mock.findings()

    def script(self, chain: Any, match: Any = None, *, stream: Any = None, stream_faults: Any = None) -> str:
        """Answer requests without instruction tags that fit ``match`` with ``chain``
        (see ``mockllm._registered``); returns the script's id, named in the journal.
        ``stream`` / ``stream_faults``: a stream shape and faults for every step without
        its own (``mockllm.StreamShape``; gzip needs the server fixture)."""
        scripted = with_stream(chain, stream, stream_faults)
        gzipped = [i for i, step in enumerate(scripted.instruction_chain) if step.stream and step.stream.gzip]
        if gzipped:
            raise ValueError(
                f"instruction_chain[{gzipped[0]}].stream.gzip: gzip content-encoding is sent by the mock "
                "server only; use the mockllm_server fixture, or drop 'gzip' from the shape."
            )
        return self.mock.script(scripted, match).id

    def script_descriptions(self) -> list[str]:
        return [entry.describe() for entry in self.mock.scripts]

    def patch_env(self, monkeypatch: Any) -> None:
        """As on the server fixture; requests to this mock's URL are served in process
        (by host interception) until the test ends."""
        if self._interception is None:
            from mockllm import intercept

            self._interception = contextlib.ExitStack()
            # The verdict is the fixture's own (at teardown) or the scenario item's: the
            # interception serving its host gives none of its own, so it is said once.
            interception = intercept(
                self.mock,
                hosts=(self.host,),
                allow_fallback=True,
                allow_unused_steps=True,
                allow_undeclared_tools=True,
                allow_impossible_replies=True,
            )
            if self.scope is not None:  # after the test, a request to the host is refused and reported
                self.scope.serve_host(self.host)
            self._interception.enter_context(interception)
        super().patch_env(monkeypatch)

    def close(self) -> None:
        super().close()
        if self._interception is not None:
            self._interception.close()
            self._interception = None

    @staticmethod
    def explain(body: Any, protocol: str = "openai-chat") -> Selection:
        """Why ``body`` gets the reply it does (``mockllm.explain``)."""
        return explain(body, protocol)


class MockLLMServer(MockClients):
    """A mock server subprocess on loopback (``pid`` -1 when it is not ours to know)."""

    def __init__(self, base_url: str, pid: int = -1) -> None:
        super().__init__()
        self.base_url = base_url
        self.pid = pid
        self.deleted: httpx.Response | None = None  # a session's DELETE reply: the server's late requests

    def patch_env(self, monkeypatch: Any) -> None:
        """As on both fixtures, and for boto3 (which only a URL reaches):
        ``AWS_ENDPOINT_URL_BEDROCK_RUNTIME``, plus a region and dummy credentials where the
        environment has none (botocore signs every request; the mock checks nothing)."""
        super().patch_env(monkeypatch)
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", self.base_url)
        if not (os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")):
            monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        if not os.environ.get("AWS_ACCESS_KEY_ID"):
            monkeypatch.setenv("AWS_ACCESS_KEY_ID", "mockllm")
            monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", API_KEY)

    @property
    def journal(self) -> Journal:
        """The server's journal (read over HTTP), newest last."""
        with httpx.Client(verify=tls_context()) as client:
            entries = client.get(f"{self.base_url}/_mockllm/requests").json()
        return Journal(JournalEntry.model_validate(e) for e in entries)

    def findings(self) -> Findings:
        """The server-side mock's findings (``GET /_mockllm/findings``)."""
        with httpx.Client(verify=tls_context()) as client:
            return Findings.model_validate(client.get(f"{self.base_url}/_mockllm/findings").raise_for_status().json())

    def unused_steps(self) -> list[UnusedStep]:
        with httpx.Client(verify=tls_context()) as client:
            return [UnusedStep(**s) for s in client.get(f"{self.base_url}/_mockllm/unused").raise_for_status().json()]

    def script(self, chain: Any, match: Any = None, *, stream: Any = None, stream_faults: Any = None) -> str:
        """Register ``chain`` on the server (``POST /_mockllm/scripts``) for requests
        without instruction tags that fit ``match``; returns the script's id.
        ``stream`` / ``stream_faults`` as on the in-process fixture (gzip included)."""
        matching = as_match(match).model_dump(exclude_none=True)
        chain = with_stream(chain, stream, stream_faults)
        body = {**as_chain(chain).model_dump(mode="json", exclude_none=True), "match": matching}
        with httpx.Client(verify=tls_context()) as client:
            response = client.post(f"{self.base_url}/_mockllm/scripts", json=body)
        if response.status_code != 201:
            raise ValueError(f"the server refused the script: {response.text}")
        return response.json()["id"]

    def scripts(self) -> list[dict[str, Any]]:
        """The registered scripts (``GET /_mockllm/scripts``)."""
        with httpx.Client(verify=tls_context()) as client:
            return client.get(f"{self.base_url}/_mockllm/scripts").raise_for_status().json()

    def script_descriptions(self) -> list[str]:
        return [entry["description"] for entry in self.scripts()]

    def reset(self) -> None:
        with httpx.Client(verify=tls_context()) as client:
            client.post(f"{self.base_url}/_mockllm/reset").raise_for_status()

    @contextlib.contextmanager
    def session(self, *, seed: int = 0, lenient: bool = False, stream: Any = None) -> Iterator[MockLLMServer]:
        """A mock of its own on this server (journal, scripts, settings, default stream
        shape) until the block ends: its clients and base URLs reach only it."""
        settings: dict[str, Any] = {"seed": seed, "lenient": lenient}
        if stream is not None:
            shape = stream if isinstance(stream, StreamShape) else StreamShape.model_validate(stream)
            settings["stream"] = shape.model_dump(mode="json", exclude_defaults=True)
        with httpx.Client(verify=tls_context()) as client:
            created = client.post(f"{self.base_url}/_mockllm/sessions", json=settings).raise_for_status().json()
        session = MockLLMServer(self.base_url + created["path"], self.pid)
        try:
            yield session
        finally:
            session.close()
            with httpx.Client(verify=tls_context()) as client:
                session.deleted = client.delete(session.base_url)


@contextlib.contextmanager
def start_server(workdir: Path, *, seed: int = 0, lenient: bool = False) -> Iterator[MockLLMServer]:
    """Run ``python -m mockllm serve --port 0`` until the block ends, then stop it by PID."""
    log_path = workdir / "server.log"
    command = [sys.executable, "-m", "mockllm", "serve", "--port", "0", "--seed", str(seed)]
    if lenient:
        command.append("--lenient")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )
    server = None
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            first_line = log_path.read_text().partition("\n")[0]
            if first_line.startswith("mockllm serving on "):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the mock server did not start; its output:\n{log_path.read_text()}")
            time.sleep(0.02)
        server = MockLLMServer(first_line.split()[-1], proc.pid)
        yield server
    finally:
        if server is not None:
            server.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
