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
