"""What the engine answers: ``MockResponse``, a status, headers and a body that is
either complete or rendered as it is sent.

Most replies are complete: their bytes are made inside ``MockLLM.handle``. A streamed
reply of more than ``STREAM_HEAD_EVENTS`` events is lazy: ``handle`` renders its first
events (so a failure there is still a JSON 500), and the rest is rendered batch by batch
while the server or a transport sends it, so one request holds a batch of events at a
time instead of the whole reply. Rendering is a pure function of the plan, so the bytes
are the same either way, through every door.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from mockllm._limits import STREAM_HEAD_EVENTS, STREAM_WRITE_BYTES
from mockllm._plan import Pacing

__all__ = ["MockResponse"]

Batches = Iterator[list[bytes]]
Failure = Callable[[Exception, int], bytes]
"""The in-stream error event ending a lazy stream whose rendering raised, given the
exception and how many events were sent before it."""


class MockResponse:
    """What to send back: ``status``, ``headers`` and the body.

    - ``body``: every byte of the reply (a lazy one is rendered whole for it, again if
      delivery already took the stream); ``events``: a streamed reply's SSE events, one
      per item (empty when not streamed).
    - ``length``: the Content-Length to send, when the body goes out in one piece;
      None when it goes out in pieces (``paced_chunks``): a paced or a lazy stream.
    - ``paced_chunks()``: (seconds to wait, bytes to send) pairs, what the server and the
      transports deliver.
    - ``blocking``: whether ``paced_chunks`` blocks on I/O (an upstream being read while
      recording): the server then takes each chunk in a worker thread, off its event loop.
    """

    blocking = False

    __slots__ = (
        "status",
        "headers",
        "pacing",
        "delivery",
        "_body",
        "_events",
        "_events_from",
        "_batches",
        "_render",
        "_on_failure",
    )

    def __init__(
        self,
        status: int,
        headers: list[tuple[str, str]],
        body: bytes = b"",
        *,
        events: list[bytes] | None = None,
        pacing: Pacing | None = None,
    ) -> None:
        self.status = status
        self.headers = headers
        self.pacing = pacing
        self.delivery: Any = None
        """How a streamed reply's bytes go out when not as ``paced_chunks`` says: a
        ``mockllm._delivery.Delivery`` (a stream shape's byte knobs, stream faults)."""
        self._body: bytes | None = body
        self._events: list[bytes] | None = events if events is not None else []
        self._events_from: Callable[[], Batches] | None = None
        self._batches: Batches | None = None
        self._render: Callable[[], Batches] | None = None
        self._on_failure: Failure | None = None

    @classmethod
    def stream(
        cls,
        status: int,
        headers: list[tuple[str, str]],
        render: Callable[[], Batches],
        *,
        pacing: Pacing | None,
        on_failure: Failure,
    ) -> MockResponse:
        """The streamed reply ``render`` makes: complete when it ends within
        ``STREAM_HEAD_EVENTS`` events, else lazy, its first events made here."""
        batches = render()
        head: list[bytes] = []
        for batch in batches:
            head += batch
            if len(head) > STREAM_HEAD_EVENTS:
                reply = cls(status, headers, events=head, pacing=pacing)
                reply._body = None
                reply._batches, reply._render, reply._on_failure = batches, render, on_failure
                return reply
        return cls(status, headers, b"".join(head), events=head, pacing=pacing)

    @classmethod
    def joined_stream(
        cls, status: int, headers: list[tuple[str, str]], body: bytes, render: Callable[[], Batches]
    ) -> MockResponse:
        """A streamed reply made whole at once (``body``: every event joined), to go out
        in one write; its events are rendered again, by ``render``, only if asked for."""
        reply = cls(status, headers, body)
        reply._events, reply._events_from = None, render
        return reply

    def __repr__(self) -> str:
        shape = (
            "lazy stream"
            if self._body is None
            else "a joined stream"
            if self._events is None
            else f"{len(self._events)} events"
            if self._events
            else f"{len(self._body)} bytes"
        )
        return f"MockResponse({self.status}, {shape})"

    @property
    def streaming(self) -> bool:
        return self._events is None or bool(self._events)

    @property
    def length(self) -> int | None:
        if self._body is None or (self.streaming and (self.pacing is not None or self.delivery is not None)):
            return None
        return len(self._body)

    @property
    def body(self) -> bytes:
        if self._body is not None:
            return self._body
        return b"".join([b"".join(batch) for batch in self._all_batches()])

    @property
    def events(self) -> list[bytes]:
        if self._body is None:
            return [event for batch in self._all_batches() for event in batch]
        if self._events is None:
            assert self._events_from is not None
            self._events = [event for batch in self._events_from() for event in batch]
        return self._events

    def paced_chunks(self) -> Iterator[tuple[float, bytes]]:
        """(seconds to wait, bytes to send) pairs.

        Unpaced, a complete reply is one chunk and a lazy one goes in writes of about
        ``STREAM_WRITE_BYTES``, each rendered just before it is sent; the client parses
        the same events either way. Paced, each event is a chunk after its delay.
        """
        if self.pacing is None or not self.streaming:
            if self._body is not None:
                yield 0.0, self._body
                return
            yield from ((0.0, chunk) for chunk in self._writes())
            return
        waits = self.pacing.delays()
        try:
            for batch in self._all_batches():
                for event in batch:
                    yield next(waits), event
        finally:
            waits.close()  # a profile's stream stops counting towards the load now

    def event_batches(self) -> Batches:
        """A streamed reply's events, in batches, rendered as they are taken."""
        return self._all_batches()

    def _writes(self) -> Iterator[bytes]:
        pending: list[bytes] = []
        size = 0
        for batch in self._all_batches():
            piece = b"".join(batch)
            pending.append(piece)
            size += len(piece)
            if size >= STREAM_WRITE_BYTES:
                yield b"".join(pending) if len(pending) > 1 else piece
                pending, size = [], 0
        if pending:
            yield b"".join(pending)

    def _all_batches(self) -> Batches:
        """Every event, in batches: a complete reply's list; a lazy one's head and the rest
        as rendered (the first time; later, rendered again from the start)."""
        if self._render is None:
            yield self.events
            return
        batches, self._batches = self._batches, None
        head: list[bytes] = []
        if batches is None:
            batches = self._render()
        elif self._events is not None:
            head = self._events
        sent = 0
        try:
            if head:
                yield head
                sent = len(head)
            for batch in batches:
                yield batch
                sent += len(batch)
        except Exception as exc:  # the mock's own bug, after the first byte: end the stream saying so
            assert self._on_failure is not None
            yield [self._on_failure(exc, sent)]
