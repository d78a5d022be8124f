"""The clients a mock fixture builds, pointed at the mock: official SDK clients, the
harness's model clients, plain ``httpx`` / ``httpx2`` clients (``MockClients``).

An SDK client is built on the HTTP library its generation uses: ``httpx2`` for
openai>=3 and anthropic>=1, ``httpx`` for openai 2.x and anthropic 0.x. The SDKs and
``httpx2`` are imported when a client is asked for, never before. A fixture's
subclass chooses the transport (``harness.plugin.fixtures``).
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Iterable
from types import ModuleType
from typing import TYPE_CHECKING, Any

import httpx

from harness.plugin.config import Settings
from harness.plugin.strict import verify_test
from harness.systems.llm import ModelClient, http_library, model_client, require_sdk, sdk_for
from mockllm import Findings, Journal, Problem, UnusedStep
from mockllm.testing import import_httpx2

if TYPE_CHECKING:
    from harness.plugin.late_requests import TestScope

__all__ = ["API_KEY", "MockClients", "tls_context"]

API_KEY = "test"
"""The key ``patch_env`` sets: the mock accepts any key."""


class MockClients:
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

    def verify(
        self, settings: Settings | None = None, refused: list[str] | None = None, extra: Iterable[Problem] = ()
    ) -> None:
        """Fail (a ``StrictnessError``) listing every request no script answered, every
        scripted step never reached, every tool call the request did not declare, each
        request to a provider host the fixture ``refused`` and the ``extra`` problems the
        fixture found itself (a replayed test's unserved exchanges), unless ``settings``
        allow it: what the fixtures do at teardown."""
        __tracebackhide__ = True
        verify_test(self.findings().plus(extra), settings or Settings(), refused or ())

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


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context (httpx's default: certifi's bundle, or ``SSL_CERT_FILE``) for every
    client the fixtures make: a client made with the default ``verify=True`` loads the
    whole CA bundle again, 25-40 ms of CPU, and a ``mockllm_server`` test makes several
    (its SDK clients, each call to the journal, scripts or findings)."""
    return httpx.create_ssl_context()
