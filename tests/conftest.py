"""Fixtures shared by the project's own tests: the mock behind each door.

``mock_server_url`` runs ``python -m mockllm serve --port 0`` once per session on
127.0.0.1 and stops it by its PID. ``door`` is parametrised over the two ways in —
the in-process transport and the loopback server — and builds official SDK clients
pointed at the mock either way.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest

from harness.mock_fixtures import start_server
from mockllm.engine import MockLLM
from mockllm.transports import HTTPX2Transport


@pytest.fixture(scope="session")
def mock_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (no /v1) of a mock server subprocess on 127.0.0.1."""
    with start_server(tmp_path_factory.mktemp("mock-server")) as server:
        yield server.base_url


@dataclass
class Door:
    """One way into the mock: builds SDK clients and reads the journal."""

    name: str
    base_url: str
    mock: MockLLM | None = None
    _closers: list[Any] = field(default_factory=list)

    def _http(self, is_async: bool) -> Any:
        if self.mock is None:
            client: Any = httpx2.AsyncClient() if is_async else httpx2.Client()
        else:
            transport = HTTPX2Transport(self.mock)
            client = httpx2.AsyncClient(transport=transport) if is_async else httpx2.Client(transport=transport)
        if not is_async:
            self._closers.append(client)
        return client

    def openai(self, *, is_async: bool = False, **kwargs: Any) -> Any:
        import openai

        cls = openai.AsyncOpenAI if is_async else openai.OpenAI
        kwargs.setdefault("max_retries", 0)
        return cls(api_key="test", base_url=f"{self.base_url}/v1", http_client=self._http(is_async), **kwargs)

    def anthropic(self, *, is_async: bool = False, **kwargs: Any) -> Any:
        import anthropic

        cls = anthropic.AsyncAnthropic if is_async else anthropic.Anthropic
        kwargs.setdefault("max_retries", 0)
        return cls(api_key="test", base_url=self.base_url, http_client=self._http(is_async), **kwargs)

    def journal(self) -> list[dict[str, Any]]:
        """The journal as JSON-like dicts, newest last."""
        if self.mock is not None:
            return [e.model_dump(mode="json") for e in self.mock.journal]
        with httpx2.Client() as client:
            return client.get(f"{self.base_url}/_mockllm/requests").json()

    def reset_journal(self) -> None:
        """Start the journal afresh, so that it holds only this test's requests.

        The server's journal lives as long as the session's server; reading a full one
        costs more than the rest of a test, so each test resets it instead of skipping past.
        """
        if self.mock is not None:
            self.mock.reset()
            return
        with httpx2.Client() as client:
            client.post(f"{self.base_url}/_mockllm/reset").raise_for_status()

    def close(self) -> None:
        for client in self._closers:
            client.close()


@pytest.fixture(params=["in-process", "server"])
def door(request: pytest.FixtureRequest) -> Iterator[Door]:
    """The mock behind each door in turn: in-process transport, then loopback server."""
    if request.param == "in-process":
        d = Door("in-process", "http://mockllm.test", MockLLM())
    else:
        d = Door("server", request.getfixturevalue("mock_server_url"))
    try:
        yield d
    finally:
        d.close()


PYTESTER_INI = """
[pytest]
addopts = -p no:cacheprovider -p no:randomly
filterwarnings =
    error
    # The plugin under test is imported by the outer session already.
    ignore::pytest.PytestAssertRewriteWarning
"""


@pytest.fixture
def strict_pytester(pytester: pytest.Pytester) -> pytest.Pytester:
    """``pytester`` with the project's strictness (warnings are errors) in its ini."""
    pytester.makeini(PYTESTER_INI)
    return pytester
