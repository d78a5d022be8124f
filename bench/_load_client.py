"""The client of ``bench/bench_load.py``: many paced SSE streams held by one asyncio loop
on raw sockets, each event's arrival time compared with its schedule.

An ``asyncio.Protocol`` per stream, no HTTP library: the request is written as bytes
and the response is only scanned for SSE event ends (``\\n\\n``; HTTP chunk framing uses
``\\r\\n`` and never makes one), so the client costs a few microseconds per event and
is not what limits the run. Event ``i`` (from 0) of a stream is due ``first_s + i *
interval_s`` after its request was written; its lateness is its arrival minus that.
"""

from __future__ import annotations

import asyncio
import os
import resource
import time
from array import array
from dataclasses import dataclass, field

from mockllm._serving import tune_gc_for_serving

__all__ = ["ClientResult", "StreamPlan", "run_client"]


@dataclass(frozen=True)
class StreamPlan:
    """What one client process does: ``starts`` (monotonic times) of its streams."""

    host: str
    port: int
    request: bytes
    events: int
    first_s: float
    interval_s: float
    starts: list[float]
    timeout_s: float


@dataclass
class ClientResult:
    """What one client process saw."""

    lateness_s: bytes = b""  # array('d') of every event's lateness, as bytes (cheap to pickle)
    completed: int = 0
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    cpu_s: float = 0.0
    peak_open: int = 0


class _Stream(asyncio.Protocol):
    __slots__ = ("plan", "run", "transport", "sent", "seen", "pending", "status_ok", "done")

    def __init__(self, plan: StreamPlan, run: _Run) -> None:
        self.plan = plan
        self.run = run
        self.transport: asyncio.Transport | None = None
        self.sent = 0.0
        self.seen = 0
        self.pending = b""
        self.status_ok: bool | None = None
        self.done = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.sent = time.monotonic()
        transport.write(self.plan.request)

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        if self.status_ok is None:
            self.status_ok = data.startswith(b"HTTP/1.1 200")
            if not self.status_ok:
                status_line = data.partition(b"\r\n")[0][:80]
                self._finish(f"status line {status_line!r}")
                return
            data = data.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in data else b""
        text = self.pending + data
        ends = text.count(b"\n\n")
        if ends:
            self.pending = text[text.rfind(b"\n\n") + 2 :][-1:]
            plan, lateness = self.plan, self.run.lateness
            for index in range(self.seen, self.seen + ends):
                lateness.append(now - (self.sent + plan.first_s + index * plan.interval_s))
            self.seen += ends
            if self.seen >= plan.events:
                self._finish(None)
        else:
            self.pending = text[-1:]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self._finish(f"connection lost after {self.seen} of {self.plan.events} events ({exc!r})")

    def _finish(self, error: str | None) -> None:
        if not self.done.done():
            self.done.set_result(error)
        if self.transport is not None:
            self.transport.close()


@dataclass
class _Run:
    lateness: array[float] = field(default_factory=lambda: array("d"))
    open: int = 0
    peak_open: int = 0


async def _one(plan: StreamPlan, run: _Run, start: float, result: ClientResult) -> None:
    await asyncio.sleep(max(0.0, start - time.monotonic()))
    loop = asyncio.get_running_loop()
    error: str | None
    try:
        _, stream = await asyncio.wait_for(
            loop.create_connection(lambda: _Stream(plan, run), plan.host, plan.port), timeout=plan.timeout_s
        )
        run.open += 1
        run.peak_open = max(run.peak_open, run.open)
        try:
            error = await asyncio.wait_for(asyncio.shield(stream.done), timeout=plan.timeout_s)
        except TimeoutError:
            error = f"timed out after {stream.seen} of {plan.events} events"
            stream._finish(error)
        finally:
            run.open -= 1
    except (OSError, TimeoutError) as exc:
        error = f"connect failed: {exc!r}"
    if error is None:
        result.completed += 1
    else:
        result.errors += 1
        if len(result.error_samples) < 5:
            result.error_samples.append(error)


async def _all(plan: StreamPlan) -> ClientResult:
    result = ClientResult()
    run = _Run()
    await asyncio.gather(*(_one(plan, run, start, result) for start in plan.starts))
    result.lateness_s = run.lateness.tobytes()
    result.peak_open = run.peak_open
    return result


def raise_fd_limit(needed: int) -> int:
    """Raise this process's soft open-files limit to its hard limit (a child inherits it);
    a ``RuntimeError`` when even the hard limit is below ``needed``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise RuntimeError(f"the open-files hard limit is {hard}, below the {needed} this run needs (ulimit -Hn)")
    if soft != resource.RLIM_INFINITY and soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def run_client(plan: StreamPlan) -> ClientResult:
    """Hold ``plan``'s streams (in a process of its own) and report what arrived when."""
    raise_fd_limit(len(plan.starts) + 64)
    # The client is the measuring instrument: a full collection over its 10,000 streams'
    # objects would pause it and count as the server's lateness. It runs with the
    # collector settings the server runs with.
    tune_gc_for_serving()
    before = os.times()
    result = asyncio.run(_all(plan))
    after = os.times()
    result.cpu_s = (after.user - before.user) + (after.system - before.system)
    return result
