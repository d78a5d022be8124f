"""What the plugin's mock fixtures hand to a test: clients pointed at the mock.

``MockLLMFixture`` wraps an in-process ``MockLLM``; ``MockLLMServer`` a loopback server
subprocess (``start_server``). Both build the official SDK clients and the harness's
model clients the same way, so a test can switch doors by switching fixtures.

An SDK client is built on the HTTP library its generation uses: ``httpx2`` for
openai>=3 and anthropic>=1, ``httpx`` for openai 2.x and anthropic 0.x. The SDKs and
``httpx2`` are imported when a client is asked for, never before.
"""

from __future__ import annotations

import contextlib
import functools
import os
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import httpx

from harness.plugin.config import Settings
from harness.plugin.strict import UnusedStepsError, verify_test
from harness.systems.llm import ModelClient, http_library, model_client, require_sdk, sdk_for
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
from mockllm.testing import as_chain, as_match, import_httpx2, with_stream

if TYPE_CHECKING:
    from harness.plugin.late_requests import TestScope
    from mockllm.testing import Selection

__all__ = ["MockLLMFixture", "MockLLMServer", "UnusedStepsError", "refusing_provider_hosts", "start_server"]

API_KEY = "test"
"""The key ``patch_env`` sets: the mock accepts any key."""

SERVER_START_TIMEOUT_S = 30


class _Clients:
    """Builds clients for a base URL; subclasses choose the transport."""

    base_url: str

    def __init__(self) -> None:
        self._to_close: list[Any] = []
        self.scope: TestScope | None = None  # set by the plugin: see harness.plugin.late_requests

    @property
    def openai_base_url(self) -> str:
        """What an OpenAI client's ``base_url`` (or ``OPENAI_BASE_URL``) should be."""
        return f"{self.base_url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """What an Anthropic client's ``base_url`` (or ``ANTHROPIC_BASE_URL``) should be."""
        return self.base_url

    def patch_env(self, monkeypatch: Any) -> None:
        """Point clients built from the environment at this mock, for this test: sets
        ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``."""
        monkeypatch.setenv("OPENAI_BASE_URL", self.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", self.anthropic_base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)

    @property
    def journal(self) -> Journal:
        raise NotImplementedError

    def unused_steps(self) -> list[UnusedStep]:
        raise NotImplementedError

    def script_descriptions(self) -> list[str]:
        raise NotImplementedError

    def findings(self) -> Findings:
        """What the verdict judges: every problem the mock saw (``mockllm._verdict``)."""
        raise NotImplementedError

    def verify(self, settings: Settings | None = None, refused: list[str] | None = None) -> None:
        """Fail (a ``StrictnessError``) listing every request no script answered, every
        scripted step never reached, every tool call the request did not declare and
        each request to a provider host the fixture ``refused``, unless ``settings``
        allow it: what the fixtures do at teardown."""
        __tracebackhide__ = True
        verify_test(self.findings(), settings or Settings(), refused or ())

    def _transport(self, module: Any) -> Any:
        return None

    def _client(self, library: ModuleType, *, is_async: bool) -> Any:
        transport = self._transport(library)
        if is_async:
            # Teardown cannot close an async client: its sockets belong to the test's event
            # loop, often closed by then. Kept alive, a connection to the server fixture
            # outlives the test and fails a warnings-as-errors run with a ResourceWarning
            # naming no cause; so an async client keeps no connection once a reply is read.
            limits = library.Limits(max_keepalive_connections=0)
            guarded = self.scope.guard(library, transport) if self.scope else transport  # None: the server's
            return library.AsyncClient(transport=guarded, base_url=self.base_url, verify=tls_context(), limits=limits)
        if self.scope is None:
            client = library.Client(transport=transport, base_url=self.base_url, verify=tls_context())
            self._to_close.append(client)
            return client
        guarded = self.scope.guard(library, transport or library.HTTPTransport(verify=tls_context()))
        self._to_close.append(guarded)
        return library.Client(transport=guarded, base_url=self.base_url)

    def httpx2_client(self, *, is_async: bool = False) -> Any:
        """An ``httpx2`` client reaching the mock (closed at teardown if sync); needs httpx2."""
        return self._client(import_httpx2("mockllm.httpx2_client()"), is_async=is_async)

    def httpx_client(self, *, is_async: bool = False) -> Any:
        """An ``httpx`` client reaching the mock (closed at teardown if sync)."""
        return self._client(httpx, is_async=is_async)

    def openai(self, *, is_async: bool = False, **kwargs: Any) -> Any:
        """An ``openai.OpenAI`` (or ``AsyncOpenAI``) client on the mock, openai 2.x or 3.x."""
        openai = require_sdk("openai", needed_by="mockllm.openai()")
        cls = openai.AsyncOpenAI if is_async else openai.OpenAI
        return self._sdk_client(cls, openai, self.openai_base_url, is_async, kwargs)

    def anthropic(self, *, is_async: bool = False, **kwargs: Any) -> Any:
        """An ``anthropic.Anthropic`` (or ``AsyncAnthropic``) client on the mock, any generation."""
        anthropic = require_sdk("anthropic", needed_by="mockllm.anthropic()")
        cls = anthropic.AsyncAnthropic if is_async else anthropic.Anthropic
        return self._sdk_client(cls, anthropic, self.anthropic_base_url, is_async, kwargs)

    def _sdk_client(self, cls: Any, sdk: ModuleType, base_url: str, is_async: bool, kwargs: dict[str, Any]) -> Any:
        """``cls`` of the SDK ``sdk`` on the mock: no retries unless asked, sending through
        a client of the SDK's HTTP library that reaches the mock."""
        kwargs.setdefault("max_retries", 0)
        return cls(
            api_key="test",
            base_url=base_url,
            http_client=self._client(http_library(sdk), is_async=is_async),
            **kwargs,
        )

    def model_client(self, protocol: str = "anthropic-messages", **kwargs: Any) -> ModelClient:
        """The harness's streaming ``ModelClient`` for ``protocol`` on the mock."""
        library = http_library(sdk_for(protocol))
        return model_client(
            protocol, base_url=self.base_url, http_client=self._client(library, is_async=True), **kwargs
        )

    def close(self) -> None:
        for client in self._to_close:
            client.close()
        self._to_close.clear()


class MockLLMFixture(_Clients):
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
            interception = intercept(self.mock, hosts=(self.host,), allow_fallback=True, allow_unused_steps=True,
                                     allow_undeclared_tools=True, allow_impossible_replies=True)  # fmt: skip
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


class MockLLMServer(_Clients):
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


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context (httpx's default: certifi's bundle, or ``SSL_CERT_FILE``) for every
    client the fixtures make: a client made with the default ``verify=True`` loads the
    whole CA bundle again, 25-40 ms of CPU, and a ``mockllm_server`` test makes several
    (its SDK clients, each call to the journal, scripts or findings)."""
    return httpx.create_ssl_context()


@contextlib.contextmanager
def refusing_provider_hosts(settings: Settings, fixture: str) -> Iterator[list[str]]:
    """Refuse requests to the providers' default hosts while a test runs (unless
    ``allow_real_providers``): a client the test forgot to point at the mock fails the
    test naming the host, before any connection, instead of spending real money."""
    if settings.allow_real_providers:
        yield []
        return
    from mockllm import refuse_hosts

    def message(shown: str) -> str:
        return (
            f"mockllm refused {shown} before it left the process: this test uses the {fixture} fixture, "
            "but this client is not pointed at the mock and would reach the real provider. Build the "
            f"client from the fixture ({fixture}.openai(), {fixture}.anthropic()) or point it at "
            f"{fixture}.base_url (Gemini, Azure, Ollama: see docs/testing-your-app.md), call "
            f"{fixture}.patch_env(monkeypatch), or serve the host with intercept(mockllm); or allow it "
            "with @pytest.mark.mockllm(allow_real_providers=True)."
        )

    def bedrock_message(shown: str) -> str:
        # boto3 sends through urllib3: only a URL reaches the mock, the server fixture's.
        return (
            f"mockllm refused {shown} before it left the process: this test uses the {fixture} fixture, "
            "but this boto3 client is not pointed at the mock and would reach AWS Bedrock. Use the "
            "mockllm_server fixture and call mockllm_server.patch_env(monkeypatch) before the app builds "
            "its client (it sets AWS_ENDPOINT_URL_BEDROCK_RUNTIME, a region and dummy credentials), or pass "
            "endpoint_url=mockllm_server.base_url to boto3.client('bedrock-runtime'); or allow it with "
            "@pytest.mark.mockllm(allow_real_providers=True)."
        )

    with refuse_hosts(message, bedrock_message=bedrock_message) as refused:
        yield refused


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
