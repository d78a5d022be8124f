"""The framework tests' way in: the ``door`` of ``tests/conftest.py``, with its in-process
mock serving the door's host by ``mockllm.intercept``.

A framework builds its own client from a base URL; it takes no transport of ours. In
process, the framework is pointed at ``http://mockllm.test`` and ``intercept`` serves that
host from the door's mock (no socket), and applies the mock's verdict when the test ends:
a request no script answered, or a scripted step never reached, fails the test. Over the
server, the framework is pointed at the loopback server.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from harness.plugin.fixtures import MockLLMFixture
from mockllm import intercept


@pytest.fixture
def served(door: Any) -> Iterator[Any]:
    """``door``, its host served by its mock while the test runs (in process), its journal empty."""
    door.reset_journal()
    if door.mock is None:
        yield door
        return
    with intercept(door.mock, hosts=(MockLLMFixture.host,)):
        yield door
