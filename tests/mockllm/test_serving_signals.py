"""A stop signal ends a serving process quietly whenever it comes (``mockllm._serving``):
it asks the server to exit, and never raises into whatever code the process is running
(``serve --workers`` signals its workers while they may still be making their event
loop: an exception there left a half-made loop and an unawaited coroutine, whose
warnings and tracebacks were printed to the server's stderr)."""

from __future__ import annotations

import signal
import socket
from types import SimpleNamespace

import pytest
import uvicorn

from mockllm import MockLLM
from mockllm._serve import uvicorn_server
from mockllm._serving import bind_socket, ended_by_signals, run_until_signalled

SIGNALS = pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])


@SIGNALS
def test_a_signal_in_the_block_asks_the_server_to_exit_and_the_code_runs_on(sig: int) -> None:
    before = signal.getsignal(sig)
    server = SimpleNamespace(should_exit=False)
    reached = False
    with ended_by_signals(server):
        signal.raise_signal(sig)
        reached = True
    assert reached and server.should_exit
    assert signal.getsignal(sig) is before


class _SignalledAsItStarts(uvicorn.Server):
    """A server whose process gets ``sig`` just before uvicorn puts in its handlers."""

    def __init__(self, config: uvicorn.Config, sig: int) -> None:
        super().__init__(config)
        self.sig, self.ran = sig, False

    def run(self, sockets: list[socket.socket] | None = None) -> None:
        signal.raise_signal(self.sig)
        self.ran = True
        super().run(sockets)


@SIGNALS
def test_a_signal_before_uvicorn_runs_starts_and_stops_it_at_once(sig: int) -> None:
    server = _SignalledAsItStarts(uvicorn_server(MockLLM(), metrics=False).config, sig)
    sock = bind_socket("127.0.0.1", 0)
    run_until_signalled(server, sock)  # returns: no exception, nothing left unawaited
    assert server.ran and server.should_exit and server.started
    assert sock.fileno() == -1  # closed


@SIGNALS
def test_a_signal_from_the_banner_on_ends_the_server_quietly(sig: int) -> None:
    # `harness serve` and `harness review` printed their banner before the handlers were in:
    # a supervisor stopping one as soon as it read the banner got a KeyboardInterrupt
    # traceback and exit status 1 (or a kill by SIGTERM) instead of a clean stop.
    server = uvicorn_server(MockLLM(), metrics=False)
    sock = bind_socket("127.0.0.1", 0)
    announced = []

    def banner() -> None:
        announced.append(sock.getsockname()[1])
        signal.raise_signal(sig)

    run_until_signalled(server, sock, on_ready=banner)  # returns: no exception
    assert announced and server.should_exit
    assert sock.fileno() == -1
