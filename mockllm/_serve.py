"""``serve``: the mock's app (``mockllm._server``) run by uvicorn until SIGINT or SIGTERM,
in this process or in ``workers`` processes on one port (``mockllm._workers``).

``python -m mockllm serve`` runs it; ``uvicorn_server`` is the server it runs, for test
tooling that runs one itself (``mockllm.testing``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mockllm._engine import MockLLM
from mockllm._server import create_app
from mockllm._serving import bind_socket, run_until_signalled

if TYPE_CHECKING:
    import uvicorn

__all__ = ["base_url", "serve", "uvicorn_server"]


def serve(
    mock: MockLLM,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    workers: int | None = None,
    on_ready: Callable[[str], None] | None = None,
    metrics: bool = True,
) -> int:
    """Run the server until SIGINT/SIGTERM; the exit status (0, or 1 when a worker died on
    its own). ``on_ready`` gets the base URL once bound; ``OSError`` if the port cannot be.

    ``workers``: that many processes on the port, sharing ``mock``'s state (SQLite or
    Redis, ``mockllm._state``), supervised by this one (``mockllm._workers``).

    A signal from the moment ``on_ready`` is called ends it quietly too: a supervisor that
    stops the server as soon as it has announced itself gets the same clean exit as one
    that waits."""

    def announce(bound_port: int) -> None:
        if on_ready is not None:
            on_ready(base_url(host, bound_port))

    if workers is not None:
        from mockllm._workers import serve_workers  # forks: only when asked for

        return serve_workers(mock.state, lambda: uvicorn_server(mock, metrics=metrics), workers, (host, port), announce)
    sock = bind_socket(host, port)  # first: a port in use is told before uvicorn loads
    try:
        server = uvicorn_server(mock, metrics=metrics)
    except BaseException:
        sock.close()
        raise
    # From the banner on, a signal ends it quietly.
    run_until_signalled(server, sock, on_ready=lambda: announce(sock.getsockname()[1]))
    return 0


def uvicorn_server(mock: MockLLM, *, metrics: bool) -> uvicorn.Server:
    """The uvicorn server of ``mock``'s app, as ``serve`` and each ``--workers`` worker run it."""
    import uvicorn

    from mockllm._serving_uvicorn import PromptServer, without_websocket_advice

    config = uvicorn.Config(
        create_app(mock, metrics=metrics),
        log_level="warning",
        access_log=False,
        lifespan="off",
        # The mock answers no WebSocket route: without this, uvicorn imports the
        # websockets package at start-up (~4% of a start's instructions).
        ws="none",
        timeout_graceful_shutdown=2,
    )
    without_websocket_advice()  # once the config has set up uvicorn's logging
    return PromptServer(config)


def base_url(host: str, port: int) -> str:
    """``http://host:port``, an IPv6 host in brackets."""
    shown_host = f"[{host}]" if ":" in host else host
    return f"http://{shown_host}:{port}"
