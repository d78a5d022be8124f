"""uvicorn's server, ending as soon as it is asked to.

uvicorn looks for ``should_exit`` every 0.1 s, then waits a fixed 0.1 s for the open
connections and polls them and the running requests every 0.1 s: each stop of a server
with nothing open took 0.1–0.2 s (a supervisor's SIGTERM, Ctrl+C, a test tooling's server
in a thread). This one wakes when ``should_exit`` is set, from a signal handler or any
thread (otherwise once a second, for the Date header), and waits for what is open rather
than for a fixed time; the graceful timeout (``timeout_graceful_shutdown``) and what
happens past it are uvicorn's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable

import uvicorn

__all__ = ["PromptServer", "without_websocket_advice"]

_POLL_S = 0.005
"""How often a stopping server looks whether its connections and requests have ended."""
_TICKS_A_SECOND = 10
"""uvicorn's pace: ``on_tick`` updates the Date header when its counter is a multiple of it."""

_logger = logging.getLogger("uvicorn.error")

_WEBSOCKET_ADVICE = ("Unsupported upgrade request", "No supported WebSocket library detected")


class _WithoutWebSocketAdvice(logging.Filter):
    """uvicorn without a WebSocket protocol (``ws="none"``: the mock has no WebSocket route)
    answers an upgrade request as plain HTTP (the mock's JSON 404, naming its routes) and
    warns that no WebSocket library is installed, advising to install one: which would
    change nothing here, so the advice is not printed."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith(_WEBSOCKET_ADVICE))


def without_websocket_advice() -> None:
    """uvicorn's log, for a server with ``ws="none"``, without the advice above (once a process)."""
    if not any(isinstance(f, _WithoutWebSocketAdvice) for f in _logger.filters):
        _logger.addFilter(_WithoutWebSocketAdvice())


class PromptServer(uvicorn.Server):
    """``uvicorn.Server`` whose ``should_exit = True`` ends ``run`` at once, and whose
    shutdown takes as long as its open connections and requests do."""

    _should_exit = False
    _wake: Callable[[], None] | None = None

    @property  # an attribute in uvicorn, set by its signal handlers too
    def should_exit(self) -> bool:
        return self._should_exit

    @should_exit.setter
    def should_exit(self, value: bool) -> None:
        self._should_exit = value
        wake = self._wake
        if value and wake is not None:
            wake()

    async def main_loop(self) -> None:
        loop, woken = asyncio.get_running_loop(), asyncio.Event()

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the server has ended
                loop.call_soon_threadsafe(woken.set)

        self._wake = wake
        # uvicorn ticks every 0.1 s: the Date header once a second (every tenth tick), and
        # should_exit and the request limit at each. should_exit wakes this loop, so without
        # a request limit one tick a second does: an idle server wakes once a second, not ten
        # times (in a test process, each wake of a server's thread takes the GIL).
        step = 1 if self.config.limit_max_requests is not None else _TICKS_A_SECOND
        try:
            counter = 0
            while not await self.on_tick(counter):
                counter = (counter + step) % 864000
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), step / _TICKS_A_SECOND)
        finally:
            self._wake = None

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()  # an idle keep-alive connection closes; a busy one after its reply
        try:
            await asyncio.wait_for(self._drained(), timeout=self.config.timeout_graceful_shutdown)
        except TimeoutError:
            _logger.error("Cancel %s running task(s), timeout graceful shutdown exceeded", len(self.server_state.tasks))
            for task in self.server_state.tasks:
                task.cancel(msg="Task cancelled, timeout graceful shutdown exceeded")
        if not self.force_exit:
            await self.lifespan.shutdown()

    async def _drained(self) -> None:
        """Once every connection has closed and every request has ended."""
        state = self.server_state
        while (state.connections or state.tasks) and not self.force_exit:
            await asyncio.sleep(_POLL_S)
        for server in self.servers:
            await server.wait_closed()
