"""Fixtures that more than one of the mock's test modules share."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.mockllm.server_support import ServerProcess


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, ServerProcess]]:
    """Two servers for the session (test_server_http.py and test_server_faults.py share
    them: a start costs about a second of CPU), started together: both ``--seed 7``, one
    ``--lenient``. ``strict`` also hosts the journal-reset and disconnect tests."""
    from tests.mockllm.server_support import launch  # skips where httpx2 is not installed

    tmp = tmp_path_factory.mktemp("servers")
    started = {
        "lenient": launch(tmp, "--port", "0", "--seed", "7", "--lenient"),
        "strict": launch(tmp, "--port", "0", "--seed", "7"),
    }
    try:
        for server in started.values():
            server.wait_ready()
        yield started
    finally:
        for server in started.values():  # signal both, then wait for both
            if server.proc.poll() is None:
                server.proc.send_signal(signal.SIGTERM)
        for server in started.values():
            server.stop(signal.SIGTERM)


@pytest.fixture(scope="session")
def limited_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server with its caps set low, for the session (test_reliability.py and
    test_reliability_limits.py share it: a start costs about half a second of CPU):
    ``--max-body-bytes 1 MiB --max-sessions 3 --max-scripts 1 --max-delay-ms 50``. A
    test that registers a script or opens a session removes it before it ends."""
    from tests.mockllm.server_support import launch  # skips where httpx2 is not installed

    started = launch(
        tmp_path_factory.mktemp("limited"),
        "--port",
        "0",
        "--max-body-bytes",
        str(1024 * 1024),
        "--max-sessions",
        "3",
        "--max-scripts",
        "1",
        "--max-delay-ms",
        "50",
    )
    try:
        yield started.wait_ready()
    finally:
        started.stop()
