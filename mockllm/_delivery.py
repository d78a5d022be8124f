"""Delivering a streamed reply's bytes as its shape says: one module for every door.

The server (``mockllm._server``) and the in-process transports (``mockllm._transports``)
both send ``deliver(reply)``: (seconds to wait, bytes) pairs. With no byte knobs and no
faults that is ``reply.paced_chunks()`` untouched, so the default costs nothing more.
Otherwise the events go through named stages:

1. ``_events``: each event with its pacing delay;
2. ``_faulted``: keep-alive comments between events (where the codec honours them), then the faults (the terminal
   event dropped, the last event truncated, a reset in the middle of an event);
3. ``_rewritten``: the bytes cut into HTTP writes (``writes``), and inside every
   multi-byte UTF-8 character (``split_utf8``), wherever SSE lines fall;
4. ``_gzipped``: each write compressed and flushed on its own, so the client can
   decode as it reads.

A paced reply's waits are kept on the stream's own schedule (``on_schedule``): the time
a write takes and a late wake-up do not push back every later event.

A reset ends ``deliver`` by raising ``StreamReset`` after the bytes before it: the
server then drops the connection without ending the body, and a transport raises its
library's ``ReadError``, as a reset socket would.
"""

from __future__ import annotations

import itertools
import re
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from mockllm._cutting import piece_sizes
from mockllm._exceptions import MockLLMError
from mockllm._limits import STREAM_WRITE_BYTES
from mockllm._mock_response import MockResponse
from mockllm._plan import ReplyPlan
from mockllm._shapes import Cuts, StreamFaults, StreamShape

__all__ = ["KEEP_ALIVE", "Delivery", "StreamReset", "deliver", "delivery_for", "on_schedule"]

KEEP_ALIVE = b": keep-alive\n\n"
"""An SSE comment: every SSE decoder skips it (a blank line with no data dispatches nothing)."""

_RESET = bytes(bytearray(b"reset"))  # the stages' marker for "reset here" (a unique object, compared by identity)
_Pieces = Iterator[tuple[float, bytes]]
_LEAD_BYTE = re.compile(rb"[\xc0-\xff]")  # the first byte of a multi-byte UTF-8 character


class StreamReset(MockLLMError):
    """The scripted connection reset (``stream_faults.reset_at_event``) is due now; the
    doors turn it into a dropped connection, it never reaches a caller."""


@dataclass(frozen=True)
class Delivery:
    """What ``deliver`` does beyond ``paced_chunks``: the shape's byte knobs, the faults,
    and the stall before the first byte (already capped by ``Limits.max_delay_ms``)."""

    shape: StreamShape | None
    faults: StreamFaults | None
    stall_s: float = 0.0

    @property
    def gzip(self) -> bool:
        return self.shape is not None and self.shape.gzip


def delivery_for(plan: ReplyPlan, max_delay_s: float, *, keep_alive: bool = True) -> Delivery | None:
    """The delivery a streamed ``plan`` asks for; None for the default one. ``keep_alive``
    False (a stream with no comments: NDJSON, a JSON array, or an SSE reader that takes
    every line for data, as google-genai's) leaves the shape's keep-alive comments out."""
    shape = plan.stream
    if shape is not None and shape.keep_alive_every and not keep_alive:
        shape = shape.model_copy(update={"keep_alive_every": None})
    shape = shape if shape is not None and shape.shapes_bytes else None
    faults = plan.stream_faults if plan.stream_faults is not None and plan.stream_faults.any else None
    if shape is None and faults is None:
        return None
    stall = min((faults.stall_ms or 0) / 1000, max_delay_s) if faults is not None else 0.0
    return Delivery(shape, faults, stall)


def deliver(reply: MockResponse) -> _Pieces:
    """(seconds to wait, bytes to send) pairs for ``reply``; may end by raising
    ``StreamReset`` (see the module docstring). The stall is the door's to wait for,
    before the status line (``Delivery.stall_s``)."""
    delivery = reply.delivery
    pieces = reply.paced_chunks() if delivery is None else _delivered(reply, delivery)
    return on_schedule(pieces) if reply.pacing is not None else pieces


def on_schedule(pieces: _Pieces, clock: Callable[[], float] = time.monotonic) -> _Pieces:
    """``pieces`` with each wait counted from the stream's start rather than from the
    previous write (read ``clock`` as each piece is taken, just before its wait): event
    ``i`` is due at the sum of the waits before it, so a stream of 60 events 500 ms
    apart ends 30 s after it starts, not 30 s plus 60 writes and late wake-ups. A late
    stream catches up by at most half a wait per event: paced events never share a write."""
    due: float | None = None
    for wait, data in pieces:
        if wait:
            now = clock()
            due = (now if due is None else due) + wait
            wait = max(wait / 2, due - now)
        yield wait, data


def _delivered(reply: MockResponse, delivery: Delivery) -> _Pieces:
    shape = delivery.shape
    pieces = _faulted(_events(reply), shape.keep_alive_every if shape else None, delivery.faults)
    pieces = _rewritten(pieces, shape.writes if shape else None, bool(shape and shape.split_utf8), reply.pacing is None)
    return _gzipped(pieces) if delivery.gzip else pieces


def _events(reply: MockResponse) -> _Pieces:
    pacing = reply.pacing
    wait = pacing.first_chunk_s if pacing is not None else 0.0
    for batch in reply.event_batches():
        for event in batch:
            yield wait, event
            wait = pacing.chunk_s if pacing is not None else 0.0


def _faulted(events: _Pieces, keep_alive_every: int | None, faults: StreamFaults | None) -> _Pieces:
    """Keep-alive comments, then the faults; one event is held back to know the last."""
    reset_at = faults.reset_at_event if faults is not None else None
    held: tuple[float, bytes] | None = None
    count = 0
    if keep_alive_every:
        yield 0.0, KEEP_ALIVE
    for wait, event in events:
        if held is not None:
            yield held
            if keep_alive_every and count % keep_alive_every == 0:
                yield 0.0, KEEP_ALIVE
        if reset_at is not None and count == reset_at:
            yield wait, event[: len(event) // 2]
            yield 0.0, _RESET
            return
        held = (wait, event)
        count += 1
    if held is None:
        return
    wait, last = held
    if reset_at is not None:  # past the end: the last event
        yield wait, last[: len(last) // 2]
        yield 0.0, _RESET
    elif faults is not None and faults.drop_terminal:
        return
    elif faults is not None and faults.truncate_last:
        yield wait, last[: len(last) // 2]
    else:
        yield held


def _rewritten(pieces: _Pieces, writes: Cuts | None, split_utf8: bool, unpaced: bool) -> _Pieces:
    """The bytes in writes of the sizes ``writes`` gives (unpaced and uncut: about
    ``STREAM_WRITE_BYTES`` each), a wait always starting a write of its own; raises
    ``StreamReset`` where the faults put the reset, after the bytes before it."""
    if writes is None:
        written = _joined(pieces, every_event=not unpaced)
    else:
        written = _cut(pieces, piece_sizes(writes))
    return _utf8_split(written) if split_utf8 else written


def _joined(pieces: _Pieces, *, every_event: bool) -> _Pieces:
    """Writes of about ``STREAM_WRITE_BYTES`` (``every_event``: of one event)."""
    pending: list[bytes] = []
    size, waited = 0, 0.0
    for wait, data in pieces:
        if size and (wait or every_event or data is _RESET):
            yield waited, b"".join(pending)
            pending, size, waited = [], 0, 0.0
        if data is _RESET:
            raise StreamReset
        waited += wait
        if data:
            pending.append(data)
            size += len(data)
            if size >= STREAM_WRITE_BYTES:
                yield waited, b"".join(pending)
                pending, size, waited = [], 0, 0.0
    if size:
        yield waited, b"".join(pending)


def _cut(pieces: _Pieces, sizes: Iterator[int | None]) -> _Pieces:
    """Writes of the sizes ``sizes`` gives, until it gives None (the rest: ``_joined``).
    A one-byte cut makes a write of every byte: the writes are sliced straight from each
    event; only a write spanning events is joined."""
    room = next(sizes)  # bytes left in this write
    assert room is not None
    pending: list[bytes] = []  # its bytes so far, from earlier events
    waited = 0.0
    for wait, data in pieces:
        if pending and (wait or data is _RESET):
            yield waited, b"".join(pending)
            pending, waited = [], 0.0
        if data is _RESET:
            raise StreamReset
        waited += wait
        length = len(data)
        if room > length:  # this write goes on into the next event
            if length:
                pending.append(data)
                room -= length
            continue
        start: int = room
        if pending:
            pending.append(data[:start])
            yield waited, b"".join(pending)
            pending = []
        else:
            yield waited, data[:start]
        waited = 0.0
        room = next(sizes)
        while room is not None and start + room <= length:
            yield 0.0, data[start : start + room]
            start += room
            room = next(sizes)
        rest = data[start:]
        if room is None:  # the last cut point is behind: the rest as if uncut
            yield from _joined(itertools.chain([(0.0, rest)], pieces), every_event=False)
            return
        if rest:
            pending.append(rest)
            room -= len(rest)
    if pending:
        yield waited, b"".join(pending)


def _utf8_split(writes: _Pieces) -> _Pieces:
    for wait, data in writes:
        if data.isascii():
            yield wait, data
        else:
            yield from _split_utf8(wait, data)


def _split_utf8(wait: float, data: bytes) -> _Pieces:
    """``data`` cut after the first byte of every multi-byte UTF-8 character (but the last byte)."""
    start = 0
    for lead in _LEAD_BYTE.finditer(data, 0, len(data) - 1):
        yield wait, data[start : lead.end()]
        wait, start = 0.0, lead.end()
    yield wait, data[start:]


def _gzipped(pieces: _Pieces) -> _Pieces:
    compressor = zlib.compressobj(wbits=31)  # gzip framing
    for wait, data in pieces:  # a reset raised by the pieces ends it with no last flush
        yield wait, compressor.compress(data) + compressor.flush(zlib.Z_SYNC_FLUSH)
    yield 0.0, compressor.flush()
