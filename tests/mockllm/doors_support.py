"""The ``clients`` fixture: a fresh mock behind each door, in process or a session on
the loopback server, for tests that must behave the same through both."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.plugin.fixtures import MockLLMFixture, MockLLMServer
from mockllm import MockLLM

__all__ = ["door_clients"]


@pytest.fixture(params=["in-process", "server"], name="clients")
def door_clients(request: pytest.FixtureRequest) -> Iterator[MockLLMFixture | MockLLMServer]:
    """A fresh mock behind each door: in process, or a session on the loopback server."""
    if request.param == "in-process":
        fixture = MockLLMFixture(MockLLM())
        yield fixture
        fixture.close()
    else:
        with MockLLMServer(request.getfixturevalue("mock_server_url")).session() as session:
            yield session
