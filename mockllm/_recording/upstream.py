"""The recording proxy's hop to its upstream: HTTP/1.1 over pooled keep-alive connections.

``UpstreamPool.send`` writes the request on an idle connection to the upstream's origin
(or a new one: plain TCP, or TLS for ``https://``), reads the reply's head and hands back
an ``UpstreamReply`` whose body is read as it arrives (``mockllm._recording.http1``). A
connection goes back to the pool when its reply was read to the end and neither side
asked to close it. A request whose reused connection turns out closed by the upstream
before any reply byte (an idle connection the upstream timed out) is sent once more on a
new connection, as HTTP clients do.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

from mockllm._recording.http1 import HEAD_LIMIT, ProtocolError, body_framing, header, read_body, read_head, render_head

__all__ = ["UpstreamPool", "UpstreamReply"]

_Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]
_Origin = tuple[str, str, int]


class UpstreamReply:
    """A reply whose head is read; ``body()`` reads the rest, ``close()`` gives the
    connection back (when reusable) or closes it."""

    def __init__(
        self,
        pool: UpstreamPool,
        origin: _Origin,
        connection: _Connection,
        status_line: str,
        headers: list[tuple[str, str]],
    ) -> None:
        self._pool, self._origin, self._connection = pool, origin, connection
        self.status_line = status_line
        self.headers: list[tuple[str, str]] = headers
        version, _, rest = status_line.partition(" ")
        code, _, self.reason = rest.partition(" ")
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise ProtocolError(f"the upstream answered with {status_line[:80]!r}, not an HTTP/1.1 status line")
        self.status = int(code)
        self.framing: int | str = body_framing(headers, response=True)
        self._reusable = version == "HTTP/1.1" and self.framing != "close"
        if (header(headers, "connection") or "").lower() == "close":
            self._reusable = False
        self._done = False

    def without_body(self) -> None:
        """A reply that has none (to HEAD, or a 204/304): nothing to read."""
        self.framing = 0

    async def read(self) -> bytes:
        """The whole body."""
        if self.framing == 0:
            self._done = True
            return b""
        if isinstance(self.framing, int):
            try:
                data = await self._connection[0].readexactly(self.framing)
            except asyncio.IncompleteReadError:
                raise ProtocolError("the upstream closed the connection before the end of the body") from None
            self._done = True
            return data
        return b"".join([piece async for _, piece in self.body()])

    async def body(self) -> AsyncIterator[tuple[bytes, bytes]]:
        """The body as it arrives: (bytes as sent, body bytes in them) (``http1.read_body``)."""
        async for pair in read_body(self._connection[0], self.framing):
            yield pair
        self._done = True

    def close(self) -> None:
        if self._done and self._reusable:
            self._pool._release(self._origin, self._connection)
        else:
            self._connection[1].close()


class UpstreamPool:
    """Keep-alive connections to upstream origins (see the module docstring)."""

    def __init__(self, *, connect_timeout: float = 10.0, read_timeout: float = 600.0, keep: int = 16) -> None:
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.keep = keep
        self._idle: dict[_Origin, list[_Connection]] = {}
        self._tls: ssl.SSLContext | None = None

    async def send(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> UpstreamReply:
        """Send the request, read the reply's head. ``OSError``, ``TimeoutError`` or
        ``ProtocolError`` when the upstream cannot be reached or does not speak HTTP."""
        parts = urlsplit(url)
        scheme = parts.scheme
        port = parts.port or (443 if scheme == "https" else 80)
        origin = (scheme, parts.hostname or "", port)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        sent = [("host", parts.netloc), *headers, ("accept-encoding", "identity")]
        if body or method in ("POST", "PUT", "PATCH"):
            sent.append(("content-length", str(len(body))))
        request = render_head(f"{method} {target} HTTP/1.1", sent) + body
        while True:
            connection, reused = self._idle_connection(origin), True
            if connection is None:
                connection, reused = await self._connect(origin), False
            try:
                connection[1].write(request)
                async with asyncio.timeout(self.read_timeout):
                    head = await read_head(connection[0])
                    while head is not None and head[0][9:10] == "1" and head[0][9:12] != "101":
                        head = await read_head(connection[0])  # 100 Continue and other interim replies
                if head is None:
                    raise ConnectionResetError("the upstream closed the connection without replying")
                reply = UpstreamReply(self, origin, connection, head[0], head[1])
            except TimeoutError:
                connection[1].close()
                raise
            except (OSError, asyncio.IncompleteReadError) as exc:
                connection[1].close()
                if reused:
                    continue  # a stale keep-alive connection: once more on a new one
                raise OSError(str(exc) or type(exc).__name__) from exc
            except BaseException:
                connection[1].close()
                raise
            if method == "HEAD" or reply.status in (204, 304):
                reply.without_body()
            return reply

    def _idle_connection(self, origin: _Origin) -> _Connection | None:
        idle = self._idle.get(origin)
        while idle:
            reader, writer = idle.pop()
            if not writer.is_closing() and not reader.at_eof():
                return reader, writer
            writer.close()
        return None

    async def _connect(self, origin: _Origin) -> _Connection:
        scheme, host, port = origin
        tls = None
        if scheme == "https":
            if self._tls is None:
                self._tls = ssl.create_default_context()
            tls = self._tls
        async with asyncio.timeout(self.connect_timeout):
            return await asyncio.open_connection(host, port, ssl=tls, limit=HEAD_LIMIT)

    def _release(self, origin: _Origin, connection: _Connection) -> None:
        idle = self._idle.setdefault(origin, [])
        if len(idle) < self.keep:
            idle.append(connection)
        else:
            connection[1].close()

    def close(self) -> None:
        for idle in self._idle.values():
            for _, writer in idle:
                writer.close()
        self._idle.clear()
