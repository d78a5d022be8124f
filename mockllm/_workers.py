"""``serve --workers N``: N server processes on one port, one state between them.

The parent reserves the port (a bound socket that never listens), closes its own
connection to the state (a connection must not cross a fork) and forks N workers; each
listens on the port with ``SO_REUSEPORT``, so the kernel spreads new connections evenly
over them, and tells the parent it is listening before the parent says it is serving.
Every worker runs the same app over the shared state (``mockllm._state``: SQLite or
Redis), so a script, a session, a held conversation or an attempt count made through
one worker is seen by all.

The parent only supervises: SIGINT or SIGTERM is passed to every worker, which finishes
its requests and exits; a worker still there after ``STOP_GRACE_S`` is killed. A worker
that dies on its own stops the others (the parent exits 1, saying which). On Linux each
worker also asks the kernel for SIGTERM if the parent dies, so no worker outlives it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

from mockllm._serving import run_until_signalled

if TYPE_CHECKING:
    import uvicorn

    from mockllm._state import State

__all__ = ["STOP_GRACE_S", "serve_workers"]

STOP_GRACE_S = 5.0
READY_TIMEOUT_S = 30.0
_PR_SET_PDEATHSIG = 1


def serve_workers(
    state: State,
    server: Callable[[], uvicorn.Server],
    workers: int,
    address: tuple[str, int],
    on_ready: Callable[[int], None],
) -> int:
    """Run ``server()`` in each of ``workers`` processes on ``address`` (``host, port``)
    until SIGINT/SIGTERM; ``on_ready`` gets the bound port once every worker listens. The
    exit status (0, or 1 when a worker died on its own); ``OSError`` if the port cannot be
    bound. ``state`` is the one the workers share: closed here before they fork."""
    import uvicorn  # noqa: F401  (imported once here, not in every worker)

    reserved = _port_socket(*address)
    bound = (address[0], reserved.getsockname()[1])
    state.close()
    parent = os.getpid()
    pids: list[int] = []
    ready_read, ready_write = os.pipe()
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            os.close(ready_read)
            _run_worker(server, bound, ready_write, parent)
        pids.append(pid)
    os.close(ready_write)
    try:
        _wait_listening(ready_read, workers)
    except OSError:
        _signal_all(set(pids), signal.SIGKILL)
        for pid in pids:
            os.waitpid(pid, 0)
        raise
    finally:
        os.close(ready_read)
        reserved.close()
    return _supervise(pids, lambda: on_ready(bound[1]))


def _port_socket(host: str, port: int, *, listen: bool = False) -> socket.socket:
    """A TCP socket bound to ``host:port`` with ``SO_REUSEPORT`` (listening if ``listen``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say they are TCP
    # (see mockllm._server.bind_socket).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    if listen:
        sock.listen(2048)
    return sock


def _wait_listening(ready: int, workers: int) -> None:
    """Return once every worker said it listens; ``OSError`` saying why one could not."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    said = b""
    while said.count(b"\n") < workers:
        left = deadline - time.monotonic()
        readable, _, _ = select.select([ready], [], [], max(left, 0))
        if not readable:
            raise OSError(f"the workers did not start listening within {READY_TIMEOUT_S:g} s")
        chunk = os.read(ready, 4096)
        if not chunk:
            raise OSError("a worker exited before listening")
        said += chunk
    for line in said.decode(errors="replace").splitlines():
        if line != "listening":
            raise OSError(line)


def _run_worker(server: Callable[[], uvicorn.Server], address: tuple[str, int], ready: int, parent: int) -> None:
    """A worker's whole life; it never returns into the parent's code."""
    code = 0
    try:
        _die_with_parent(parent)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            sock = _port_socket(*address, listen=True)
        except OSError as exc:
            os.write(ready, f"{exc.strerror or exc}\n".encode())
            raise

        def listening() -> None:  # told once a signal would end the worker quietly
            os.write(ready, b"listening\n")
            os.close(ready)

        run_until_signalled(server(), sock, on_ready=listening)
    except BaseException:  # a worker must end here, whatever happened
        traceback.print_exc()
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before the request took hold
        os._exit(1)


def _supervise(pids: list[int], announce: Callable[[], None]) -> int:
    """Wait on the workers until each has exited; a SIGINT or SIGTERM stops them all.
    ``announce`` (the banner) runs once the handlers are in place: a signal sent the moment
    the banner shows stops the workers, not the supervisor with a traceback.

    The supervisor sleeps in ``waitpid`` (a signal's handler runs, then the wait goes
    on), and the grace a stop gives is a timer (SIGALRM): nothing wakes it but a worker's
    exit or a signal."""
    live = set(pids)
    stopping: list[bool] = []

    def past_grace(signum: int, frame: FrameType | None) -> None:
        _signal_all(live, signal.SIGKILL)

    def stop(signum: int, frame: FrameType | None) -> None:
        if not stopping:
            stopping.append(True)
            _signal_all(live, signal.SIGTERM)
            # SIGALRM is taken only from here on: until the stop, the process's own is left alone.
            previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, past_grace)
            signal.setitimer(signal.ITIMER_REAL, STOP_GRACE_S)

    previous: dict[int, Any] = {}
    for asked in (signal.SIGINT, signal.SIGTERM):  # one at a time: a signal may come in between
        previous[asked] = signal.signal(asked, stop)
    status = 0
    try:
        announce()
        while live:
            pid, code = os.waitpid(-1, 0)
            live.discard(pid)
            if not stopping:
                print(
                    f"mockllm: worker {pid} exited on its own ({_exit_reason(code)}); stopping the other workers.",
                    file=sys.stderr,
                    flush=True,
                )
                status = 1
                stop(signal.SIGTERM, None)
    except ChildProcessError:
        pass
    finally:
        if stopping:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return status


def _signal_all(pids: set[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def _exit_reason(code: int) -> str:
    if os.WIFSIGNALED(code):
        return f"signal {os.WTERMSIG(code)}"
    return f"status {os.waitstatus_to_exitcode(code)}"
