"""The recording proxy: ``python -m mockllm record --upstream URL --out DIR``.

A small asyncio HTTP/1.1 server that forwards every request to its upstream (by
protocol: ``--upstream openai-chat=URL``, else the default ``--upstream URL``; the
request's path and query are appended to it) and gives the client exactly what came
back. It is written on asyncio streams, with no web framework or HTTP client in between
(``mockllm._recording.http1``), so that the proxy adds well under a millisecond to a
request (docs/performance.md): the upstream hop goes over pooled keep-alive connections
(``mockllm._recording.upstream``), and a stream is passed on chunk by chunk as the
upstream sends it, never buffered, while ``Capture`` cuts it into events and times them.
Turning what was captured into a recording (parsing, scrubbing, the secret scan, the
write) happens on the ``Recorder``'s writer thread, after the reply is sent.

When a recording file is on disk: shortly after its reply ended. ``POST
/_mockllm/record/flush`` (answered by the proxy itself) returns once every exchange
replied so far is written (or refused), with ``{"written": [files], "refused":
[reasons]}``; stopping the proxy (SIGINT/SIGTERM) writes what is still queued.

An upstream error is passed on and recorded as it was (its status and body). An
upstream that cannot be reached is a 502 to the client and is not recorded: nothing
came back. A stream the upstream breaks is recorded as ``interrupted`` and broken off
for the client too (the connection closes without the last chunk), as the upstream did.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl

from mockllm._recording.capture import Capture
from mockllm._recording.http1 import (
    HEAD_LIMIT,
    Head,
    ProtocolError,
    body_framing,
    chunk_frame,
    header,
    read_body,
    read_head,
    render_head,
)
from mockllm._recording.recorder import Recorder
from mockllm._recording.upstream import UpstreamPool, UpstreamReply
from mockllm._wire.registry import codec_for_path

__all__ = ["FLUSH_PATH", "RecordingProxy", "Upstreams", "serve_recording"]

_log = logging.getLogger("mockllm.record")

FLUSH_PATH = "/_mockllm/record/flush"

# Hop-by-hop and framing headers: each side of the proxy sets its own.
_NOT_FORWARDED = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "accept-encoding",
        "upgrade",
        "te",
        "expect",
        "proxy-connection",
    }
)
_NOT_RETURNED = frozenset({"content-length", "connection", "keep-alive", "transfer-encoding"})


class Upstreams:
    """Which upstream serves a path: a protocol's own, else the default."""

    def __init__(self, default: str | None, by_protocol: Mapping[str, str] | None = None) -> None:
        self.default = default.rstrip("/") if default else None
        self.by_protocol = {name: url.rstrip("/") for name, url in (by_protocol or {}).items()}
        if self.default is None and not self.by_protocol:
            raise ValueError("give an upstream: --upstream URL, or --upstream PROTOCOL=URL per protocol")

    @classmethod
    def parse(cls, values: list[str]) -> Upstreams:
        """From ``--upstream`` values: ``URL`` (the default) or ``PROTOCOL=URL``."""
        from mockllm._wire.registry import codec_named

        default, by_protocol = None, {}
        for value in values:
            name, sep, url = value.partition("=")
            if sep and not name.startswith(("http://", "https://")):
                by_protocol[codec_named(name).name] = url
            elif default is not None:
                raise ValueError(f"two default upstreams ({default} and {value}); name a protocol: PROTOCOL=URL")
            else:
                default = value
        urls: list[str | None] = [default, *by_protocol.values()]
        for given in urls:
            if given is not None and not given.startswith(("http://", "https://")):
                raise ValueError(f"upstream {given!r} is not an http:// or https:// URL")
        return cls(default, by_protocol)

    def for_path(self, path: str) -> str | None:
        codec = codec_for_path(path)
        if codec is not None and codec.name in self.by_protocol:
            return self.by_protocol[codec.name]
        return self.default


def _json_reply(status: int, reason: str, value: Any, keep_alive: bool) -> bytes:
    body = json.dumps(value).encode()
    headers = [("content-type", "application/json"), ("content-length", str(len(body)))]
    if not keep_alive:
        headers.append(("connection", "close"))
    return render_head(f"HTTP/1.1 {status} {reason}", headers) + body


def _proxy_error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "proxy_error"}}


class RecordingProxy:
    """Serves one client connection at a time per ``handle`` call (see the module docstring)."""

    def __init__(self, upstreams: Upstreams, recorder: Recorder, *, pool: UpstreamPool | None = None) -> None:
        self.upstreams = upstreams
        self.recorder = recorder
        self.pool = pool if pool is not None else UpstreamPool()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve requests on one client connection until either side closes it."""
        try:
            while True:
                try:
                    head = await read_head(reader)
                    if head is None:
                        return
                    keep_alive = await self._exchange(head, reader, writer)
                except ProtocolError as exc:
                    writer.write(_json_reply(400, "Bad Request", _proxy_error(f"Bad request: {exc}."), False))
                    return
                if not keep_alive:
                    return
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            return  # the client went away
        finally:
            writer.close()

    async def _exchange(self, head: Head, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; whether the client connection stays open."""
        start_line, headers = head
        method, _, rest = start_line.partition(" ")
        target, _, version = rest.rpartition(" ")
        if not version.startswith("HTTP/1.") or not target.startswith("/"):
            raise ProtocolError(f"the request line {start_line[:80]!r} is not an HTTP/1.1 request for a path")
        keep_alive = version == "HTTP/1.1" and (header(headers, "connection") or "").lower() != "close"
        if (header(headers, "expect") or "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        framing = body_framing(headers, response=False)
        if isinstance(framing, int):
            body = await reader.readexactly(framing) if framing else b""
        else:
            body = b"".join([piece async for _, piece in read_body(reader, framing)])
        path, _, query = target.partition("?")
        if path == FLUSH_PATH and method == "POST":
            await asyncio.get_running_loop().run_in_executor(None, self.recorder.flush)
            written = sorted({str(p) for p in self.recorder.written})
            done = {"written": written, "refused": [str(e) for e in self.recorder.refused]}
            writer.write(_json_reply(200, "OK", done, keep_alive))
            return keep_alive
        upstream = self.upstreams.for_path(path)
        if upstream is None:
            message = f"No upstream is set for {path}; add --upstream URL."
            writer.write(_json_reply(502, "Bad Gateway", _proxy_error(message), keep_alive))
            return keep_alive
        forwarded = [(k, v) for k, v in headers if k not in _NOT_FORWARDED]
        capture = Capture(_request_of(method, path, query, headers, body), (method, target, tuple(headers), body))
        try:
            reply = await self.pool.send(method, upstream + target, forwarded, body)
        except (OSError, TimeoutError, ProtocolError) as exc:
            message = f"The recording proxy could not reach the upstream {upstream}: {type(exc).__name__}: {exc}"
            _log.warning(message)
            writer.write(_json_reply(502, "Bad Gateway", _proxy_error(message), keep_alive))
            return keep_alive
        try:
            return await self._relay(reply, capture, writer, keep_alive, version)
        finally:
            reply.close()

    async def _relay(
        self, reply: UpstreamReply, capture: Capture, writer: asyncio.StreamWriter, keep_alive: bool, version: str
    ) -> bool:
        returned = [(k, v) for k, v in reply.headers if k not in _NOT_RETURNED]
        capture.started(reply.status, reply.headers)
        status_line = f"HTTP/1.1 {reply.status} {reply.reason}"
        if isinstance(reply.framing, int) and not capture.streamed:
            try:
                content = await reply.read()
            except (ProtocolError, OSError) as exc:
                message = f"The upstream broke off its reply: {type(exc).__name__}: {exc}"
                writer.write(_json_reply(502, "Bad Gateway", _proxy_error(message), keep_alive))
                return keep_alive
            capture.chunk(content)
            self.recorder.add(capture.ended())
            returned.append(("content-length", str(len(content))))
            if not keep_alive:
                returned.append(("connection", "close"))
            writer.write(render_head(status_line, returned) + content)
            return keep_alive
        # The body as the upstream framed it, passed on untouched: what arrived together goes
        # on together (the last event and the end of the body), and nothing is re-framed.
        # Only a body delimited by the connection's end (or a chunked one for an HTTP/1.0
        # client) is framed anew.
        passed_through = isinstance(reply.framing, int) or (reply.framing == "chunked" and version == "HTTP/1.1")
        chunked = not passed_through and version == "HTTP/1.1"
        if isinstance(reply.framing, int):
            returned.append(("content-length", str(reply.framing)))
        elif passed_through or chunked:
            returned.append(("transfer-encoding", "chunked"))
        if not passed_through and not chunked:
            returned.append(("connection", "close"))
        writer.write(render_head(status_line, returned))
        pieces = reply.body()
        while True:
            try:
                sent, piece = await anext(pieces)
            except StopAsyncIteration:
                break
            except (ProtocolError, OSError) as exc:
                self.recorder.add(capture.ended(f"the upstream stream broke: {type(exc).__name__}: {exc}"))
                return False  # broken off for the client too: the connection closes before the body's end
            if passed_through:
                writer.write(sent)
            elif piece:
                writer.write(chunk_frame(piece) if chunked else piece)
            if piece:
                capture.chunk(piece)  # passed on first, captured after
            try:
                await writer.drain()
            except ConnectionError:
                self.recorder.add(capture.ended("the client went away before the stream ended"))
                raise
        if chunked:
            writer.write(b"0\r\n\r\n")
        self.recorder.add(capture.ended())
        return keep_alive and (passed_through or chunked)


def _request_of(method: str, path: str, query: str, headers: list[tuple[str, str]], body: bytes) -> Callable[[], Any]:
    """What builds the recorded request, later, on the recorder's thread."""
    from mockllm._recording.capture import exchange_request

    return lambda: exchange_request(method, path, parse_qsl(query, keep_blank_values=True), dict(headers), body)


def serve_recording(
    upstreams: Upstreams, recorder: Recorder, *, host: str, port: int, on_ready: Callable[[str], None] | None = None
) -> None:
    """Run the proxy until SIGINT/SIGTERM, then write what is still queued."""
    from mockllm._serving import bind_socket  # not _server: the proxy needs no Starlette

    sock = bind_socket(host, port)
    proxy = RecordingProxy(upstreams, recorder)

    async def main() -> None:
        stopped = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stopped.set)
        server = await asyncio.start_server(proxy.handle, sock=sock, limit=HEAD_LIMIT)
        if on_ready is not None:
            shown = f"[{host}]" if ":" in host else host
            on_ready(f"http://{shown}:{sock.getsockname()[1]}")
        try:
            await stopped.wait()
        finally:
            server.close()
            proxy.pool.close()

    try:
        asyncio.run(main())
    finally:
        sock.close()
        recorder.close()
