"""An ASGI app under uvicorn in a thread of the test process, on a free loopback port:
for a test that looks at uvicorn's own state, or needs a server whose process is not
what it tests (a server process costs about a second of CPU to start)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

from mockllm._serving import bind_socket
from mockllm._serving_uvicorn import PromptServer

START_TIMEOUT_S = 30
STOP_TIMEOUT_S = 10


@contextlib.contextmanager
def app_in_thread(app: Any) -> Iterator[tuple[uvicorn.Server, str]]:
    """Serve ``app`` until the block ends; yields the uvicorn server and its base URL."""
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    # stops at once when the block ends, not on uvicorn's 0.1 s ticks
    with server_in_thread(PromptServer(config)) as served:
        yield served


@contextlib.contextmanager
def server_in_thread(server: uvicorn.Server) -> Iterator[tuple[uvicorn.Server, str]]:
    """Run uvicorn ``server`` until the block ends, which returns once it has stopped;
    yields the server and its base URL."""
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "threaded server did not start"
            time.sleep(0.01)
        yield server, f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=STOP_TIMEOUT_S)
        sock.close()
    assert not thread.is_alive()
