"""Just enough HTTP/1.1 for the recording proxy: message heads, body framing, chunks.

The proxy relays bytes between its client and the upstream over asyncio streams, with
no HTTP library in between (``mockllm._recording.upstream``, ``mockllm._recording.proxy``):
a library would parse every header into its own objects, re-frame every chunk and read
the body through layers of iterators, which is most of what a proxy adds to a request.
Here a head is split once into ``(name, value)`` pairs (names lower-cased), and a body is
read as its framing says — ``Content-Length``, ``Transfer-Encoding: chunked`` or until the
connection closes — a chunk at a time, as it arrives. Anything that is not HTTP/1.1 is a
``ProtocolError`` naming what was wrong.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable

from mockllm._exceptions import MockLLMError

__all__ = [
    "HEAD_LIMIT",
    "ChunkedDecoder",
    "Head",
    "ProtocolError",
    "body_framing",
    "chunk_frame",
    "header",
    "read_body",
    "read_head",
    "render_head",
]

HEAD_LIMIT = 64 * 1024
"""The largest message head either side may send (the StreamReader's limit)."""

_READ_SIZE = 64 * 1024
Head = tuple[str, list[tuple[str, str]]]


class ProtocolError(MockLLMError, ValueError):
    """Bytes that are not an HTTP/1.1 message; the message says what was wrong."""


async def read_head(reader: asyncio.StreamReader) -> Head | None:
    """The start line and headers of the next message; None if the peer closed the
    connection cleanly before sending one."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise ProtocolError("the connection closed in the middle of a message head") from None
    except asyncio.LimitOverrunError:
        raise ProtocolError(f"a message head longer than {HEAD_LIMIT} bytes") from None
    lines = raw[:-4].decode("latin-1").split("\r\n")
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise ProtocolError(f"a malformed header line: {line[:80]!r}")
        headers.append((name.lower(), value.strip()))
    return lines[0], headers


def header(headers: Iterable[tuple[str, str]], name: str) -> str | None:
    """The last value of header ``name`` (lower-case), or None."""
    found = None
    for key, value in headers:
        if key == name:
            found = value
    return found


def body_framing(headers: list[tuple[str, str]], *, response: bool) -> int | str:
    """How the body is delimited: its length, ``"chunked"``, or (a response only)
    ``"close"`` — until the connection closes."""
    encoding = header(headers, "transfer-encoding")
    if encoding is not None:
        if encoding.lower().rpartition(",")[2].strip() != "chunked":
            raise ProtocolError(f"Transfer-Encoding {encoding!r} is not chunked")
        return "chunked"
    length = header(headers, "content-length")
    if length is not None:
        if not length.isdigit():
            raise ProtocolError(f"Content-Length {length!r} is not a number")
        return int(length)
    return "close" if response else 0


async def read_body(reader: asyncio.StreamReader, framing: int | str) -> AsyncIterator[tuple[bytes, bytes]]:
    """The body as it arrives, a read at a time: (the bytes as sent, framing included;
    the body's bytes in them). A relay passes the first on untouched, so that what the
    peer sent together goes on together (the last event and the end of the body)."""
    if isinstance(framing, int):
        left = framing
        while left:
            data = await reader.read(min(left, _READ_SIZE))
            if not data:
                raise ProtocolError(f"the connection closed {left} bytes before the end of the body")
            left -= len(data)
            yield data, data
    elif framing == "chunked":
        decoder = ChunkedDecoder()
        while not decoder.done:
            data = await reader.read(_READ_SIZE)
            if not data:
                raise ProtocolError("the connection closed in the middle of a chunked body")
            yield data, decoder.feed(data)
        if decoder.extra:
            raise ProtocolError("bytes after the end of a chunked body")
    else:
        while data := await reader.read(_READ_SIZE):
            yield data, data


class ChunkedDecoder:
    """Takes a chunked body apart as its bytes arrive, however they are cut."""

    def __init__(self) -> None:
        self._buffer = b""
        self._state = "size"  # size, data, crlf, trailers, done
        self._left = 0  # bytes of the current chunk still to come

    @property
    def done(self) -> bool:
        return self._state == "done"

    @property
    def extra(self) -> bytes:
        """What came after the end of the body (nothing, from a well-behaved peer)."""
        return self._buffer if self.done else b""

    def feed(self, data: bytes) -> bytes:
        """The body's bytes in ``data`` (framing and trailers left out)."""
        buffer = self._buffer + data if self._buffer else data
        out = []
        at = 0
        while self._state != "done":
            if self._state == "data":
                taken = min(self._left, len(buffer) - at)
                if taken:
                    out.append(buffer[at : at + taken])
                at += taken
                self._left -= taken
                if self._left:
                    break
                self._state = "crlf"
            elif self._state == "crlf":
                if len(buffer) - at < 2:
                    break
                if buffer[at : at + 2] != b"\r\n":
                    raise ProtocolError("a chunk longer than its size line says")
                at += 2
                self._state = "size"
            else:
                end = buffer.find(b"\r\n", at)
                if end < 0:
                    if len(buffer) - at > 4096:
                        raise ProtocolError("a chunk size or trailer line longer than 4096 bytes")
                    break
                line, at = buffer[at:end], end + 2
                if self._state == "trailers":
                    if not line:
                        self._state = "done"
                    continue
                try:
                    size = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise ProtocolError(f"a malformed chunk size line: {line[:40]!r}") from None
                self._state, self._left = ("data", size) if size else ("trailers", 0)
        self._buffer = buffer[at:]
        return b"".join(out)


def chunk_frame(data: bytes) -> bytes:
    """``data`` as one chunk of a chunked body."""
    return b"%x\r\n%b\r\n" % (len(data), data)


def render_head(start_line: str, headers: Iterable[tuple[str, str]]) -> bytes:
    lines = [start_line, *(f"{name}: {value}" for name, value in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
