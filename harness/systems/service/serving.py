"""Running the chain service's servers: a listening socket, and an end on SIGINT/SIGTERM.

The service's entry points (``python -m harness serve``, the MCP server's ``--http``)
bind their socket first, so the address is known (port 0: a free one) before uvicorn
starts, and end quietly on a signal, so the process exits 0.

The mock server (``mockllm``) has the same two helpers for its own server: the systems
know nothing of the mock, so they keep their own copy of these few lines.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

__all__ = ["bind_socket", "ended_by_signals", "run_until_signalled"]


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP (not 0): asyncio sets TCP_NODELAY on accepted connections only
    # when the socket says it is TCP; without it a reply written in pieces waits ~40 ms
    # for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


class _Stopped(Exception):
    """Raised by the SIGTERM handler, so that the block under ``ended_by_signals`` ends."""


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise _Stopped


@contextlib.contextmanager
def ended_by_signals() -> Iterator[None]:
    """SIGINT or SIGTERM ends the block quietly, so that the process can exit 0."""
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_stopped) if in_main else None
    try:
        yield
    except (KeyboardInterrupt, _Stopped):
        pass
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def run_until_signalled(server: Any, sock: socket.socket) -> None:
    """Run uvicorn ``server`` on ``sock`` until SIGINT or SIGTERM, then return normally;
    ``sock`` is closed either way."""
    # uvicorn shuts down gracefully on SIGINT/SIGTERM and then re-raises the signal with
    # the handlers it found installed; ended_by_signals makes those end quietly.
    try:
        with ended_by_signals():
            server.run(sockets=[sock])
    finally:
        sock.close()
