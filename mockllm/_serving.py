"""A listening socket on loopback, run until SIGINT or SIGTERM, ending quietly.

Used by the mock's server and the recording proxy (``mockllm.testing`` exports
``bind_socket`` and ``run_until_signalled`` for test tooling).
"""

from __future__ import annotations

import contextlib
import gc
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

__all__ = ["SERVING_GC_THRESHOLDS", "bind_socket", "ended_by_signals", "run_until_signalled", "tune_gc_for_serving"]

SERVING_GC_THRESHOLDS = (100_000, 50, 100)
"""The cyclic collector's thresholds in a server process (Python's are 700, 10, 10)."""


def tune_gc_for_serving() -> None:
    """Make the cyclic garbage collector fit a long-running server process: the objects
    made at startup (modules, the app, registered scripts) are frozen out of every
    collection, and collections run far less often. A reply's objects are freed by their
    reference counts; what the collector finds is the rare cycle, while each full
    collection walks every live object — with 10,000 open streams, pauses of hundreds of
    milliseconds that every paced stream feels (docs/performance.md, "Load"). Called by
    ``python -m mockllm serve`` before it forks its workers, never in a process that only
    imports the library.

    No collection comes first: one walks the ~40,000 objects of a start (20-25 ms, some
    5 % of a ``serve`` start's CPU) to find a handful of unreachable ones, which are frozen
    with the rest instead."""
    gc.freeze()
    gc.set_threshold(*SERVING_GC_THRESHOLDS)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP (not 0): asyncio sets TCP_NODELAY on accepted connections only
    # when the socket says it is TCP; without it a reply written in two pieces (headers,
    # then body) waits ~40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def run_until_signalled(server: Any, sock: socket.socket, on_ready: Callable[[], None] | None = None) -> None:
    """Run uvicorn ``server`` on ``sock`` until SIGINT or SIGTERM, then return normally
    (the process can exit 0); ``sock`` is closed either way. ``on_ready`` (a banner naming
    the URL) is called right before the server runs, once a signal would end it quietly: a
    supervisor that stops it as soon as it has announced itself gets the same clean exit."""
    try:
        with ended_by_signals(server):
            if on_ready is not None:
                on_ready()
            server.run(sockets=[sock])
    finally:
        sock.close()


@contextlib.contextmanager
def ended_by_signals(server: Any) -> Iterator[None]:
    """In the block, SIGINT or SIGTERM asks uvicorn ``server`` to exit (``should_exit``), so
    that ``server.run`` returns and the process can exit 0.

    uvicorn puts in its own handlers once its event loop runs, and when it has shut down
    gracefully it raises the signal again with the handlers it found: these, which end
    nothing more. A signal that came before uvicorn's handlers (while its event loop was
    being made) once raised an exception wherever the process was, leaving a half-made
    event loop and a coroutine never awaited, whose warnings were printed to stderr as
    they were collected; now the server starts and stops at once."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        server.should_exit = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
