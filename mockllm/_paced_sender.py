"""Sending a reply in pieces over ASGI, with one timer per tick for every paced stream.

A server holding thousands of paced streams spends most of its time on the delivery of
each event rather than on making it (docs/performance.md, "Load"). Two costs are cut
here, the bytes and their boundaries left as ``mockllm._delivery.deliver`` makes them:

- **One timer per tick** (``Ticker``): a paced event's due time is rounded up to the
  next ``TICK_S`` and the stream waits on a future of that tick; the event loop has one
  timer per tick in use, which wakes every stream due then, instead of one timer (a
  handle and two operations on the loop's heap, and an extra turn of the loop) per
  event per stream. An event goes out at most ``TICK_S`` after its due time; a stream
  keeps its own schedule (``mockllm._delivery.on_schedule``), so that never adds up.
- **The server's own send** (``RAW_SEND``): the body writes after the status line go to
  the ASGI server's ``send`` directly, past the framework's wrappers, which only watch
  for the start of a response (the status line still goes through them), from a task
  of their own: waking a stream resumes its delivery loop alone, not every await of the
  framework down to it.

Outside asyncio (a trio loop) the waits are ``anyio.sleep``, as before.
"""

from __future__ import annotations

import asyncio
import functools
import math
import weakref
from collections.abc import Iterator
from typing import Any

import anyio

from mockllm._delivery import Delivery, StreamReset

__all__ = ["RAW_SEND", "TICK_S", "Ticker", "send_pieces"]

TICK_S = 0.002
"""The timer granularity of paced streams: due times are rounded up to a multiple of it."""

RAW_SEND = "mockllm.raw_send"
"""The scope key under which the app keeps the ASGI server's own ``send``."""

_Send = Any  # an ASGI send callable
_Receive = Any


class Ticker:
    """Wakes every stream due in a tick with one timer of the event loop."""

    __slots__ = ("_loop", "_due", "__weakref__")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._due: dict[int, list[asyncio.Future[None]]] = {}

    def after(self, wait: float) -> asyncio.Future[None]:
        """A future done at the first tick at least ``wait`` seconds from now."""
        loop = self._loop
        tick = math.ceil((loop.time() + wait) / TICK_S)
        future: asyncio.Future[None] = loop.create_future()
        waiting = self._due.get(tick)
        if waiting is None:
            self._due[tick] = [future]
            loop.call_at(tick * TICK_S, self._fire, tick)
        else:
            waiting.append(future)
        return future

    def _fire(self, tick: int) -> None:
        for future in self._due.pop(tick):
            if not future.done():  # a stream whose client went away was cancelled
                future.set_result(None)


_tickers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Ticker] = weakref.WeakKeyDictionary()


def _ticker() -> Ticker | None:
    """The running asyncio loop's ticker; None outside asyncio."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # pragma: no cover - another async library's loop
        return None
    ticker = _tickers.get(loop)
    if ticker is None:
        ticker = _tickers[loop] = Ticker(loop)
    return ticker


async def send_pieces(
    chunks: Iterator[tuple[float, bytes]],
    delivery: Delivery | None,
    status: int,
    headers: list[tuple[bytes, bytes]],
    scope: Any,
    receive: _Receive,
    send: _Send,
    *,
    blocking: bool = False,
) -> None:
    """Send ``status``, ``headers`` and ``chunks`` ((seconds to wait, bytes) pairs from
    ``deliver``); a ``StreamReset`` ends the response without ending the body (the
    server then drops the connection), and a client that goes away ends it quietly.
    ``blocking``: taking a chunk blocks on I/O (``MockResponse.blocking``: a stream being
    forwarded from an upstream), so each is taken in a worker thread, off the loop."""
    if delivery is not None:
        if delivery.stall_s:
            await anyio.sleep(delivery.stall_s)
        if delivery.gzip:
            headers.append((b"content-encoding", b"gzip"))
    write = scope.get(RAW_SEND, send)
    ticker = _ticker()
    failure: Exception | None = None
    try:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        async with anyio.create_task_group() as group:

            async def watch_disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            async def pump() -> None:
                # A task of its own: waking it resumes this coroutine only, not the
                # framework's chain of awaits down to the request's.
                nonlocal failure
                try:
                    if blocking:
                        take = functools.partial(next, chunks, None)
                        while (pair := await anyio.to_thread.run_sync(take)) is not None:
                            if pair[0]:
                                await anyio.sleep(pair[0])
                            await write({"type": "http.response.body", "body": pair[1], "more_body": True})
                    for wait, chunk in chunks:  # all of them, unless taken above
                        if wait:
                            await (ticker.after(wait) if ticker is not None else anyio.sleep(wait))
                        await write({"type": "http.response.body", "body": chunk, "more_body": True})
                    await write({"type": "http.response.body", "body": b"", "more_body": False})
                except StreamReset:
                    pass  # the scripted reset: end without ending the body; uvicorn then drops the connection
                except Exception as exc:  # raised again below, as if sent from the request's task
                    failure = exc
                group.cancel_scope.cancel()

            group.start_soon(watch_disconnect)
            group.start_soon(pump)
        if failure is not None:
            raise failure
    except OSError:
        # The client went away; there is no one left to tell.
        return
    finally:
        # A reply cut short (the client went away, a reset) is told at once, not when the
        # collector gets to it: a forwarded stream is then kept as far as it went.
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
