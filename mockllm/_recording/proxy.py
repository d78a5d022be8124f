"""The recording proxy: ``python -m mockllm record --upstream URL --out DIR``.

A Starlette app that forwards every request to its upstream (by protocol:
``--upstream openai-chat=URL``, else the default ``--upstream URL``; the request's path
and query are appended to it) and gives the client exactly what came back. A stream is
passed on chunk by chunk as the upstream sends it, never buffered, while ``Capture``
cuts it into events and times them; when the reply ends the ``Recorder`` writes the
exchange. An upstream error is passed on and recorded as it was (its status and body).
An upstream that cannot be reached is a 502 to the client and is not recorded: nothing
came back.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from mockllm._recording.capture import Capture, exchange_request, is_event_stream
from mockllm._recording.recorder import Recorder
from mockllm._wire.registry import codec_for_path

__all__ = ["Upstreams", "create_recording_app"]

_log = logging.getLogger("mockllm.record")

# Hop-by-hop and framing headers: httpx and uvicorn set their own.
_NOT_FORWARDED = frozenset(
    {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "accept-encoding", "upgrade", "te"}
)
_NOT_RETURNED = frozenset({"content-length", "connection", "keep-alive", "transfer-encoding", "content-encoding"})


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


def create_recording_app(
    upstreams: Upstreams, recorder: Recorder, *, client: httpx.AsyncClient | None = None
) -> Starlette:
    """The proxy app: forwards to ``upstreams``, hands each exchange to ``recorder``."""
    http = client if client is not None else httpx.AsyncClient(timeout=httpx.Timeout(600.0, connect=10.0))

    async def forward(request: Request) -> Response:
        path = request.url.path
        upstream = upstreams.for_path(path)
        if upstream is None:
            return JSONResponse(
                {"error": {"message": f"No upstream is set for {path}; add --upstream URL.", "type": "proxy_error"}},
                status_code=502,
            )
        body = await request.body()
        query = request.url.query
        url = upstream + path + (f"?{query}" if query else "")
        headers = [(k, v) for k, v in request.headers.items() if k not in _NOT_FORWARDED]
        capture = Capture(
            exchange_request(request.method, path, request.query_params.multi_items(), request.headers, body)
        )
        try:
            upstream_reply = await http.send(
                http.build_request(request.method, url, headers=headers, content=body), stream=True
            )
        except httpx.HTTPError as exc:
            message = f"The recording proxy could not reach the upstream {upstream}: {type(exc).__name__}: {exc}"
            _log.warning(message)
            return JSONResponse({"error": {"message": message, "type": "proxy_error"}}, status_code=502)
        returned = [(k, v) for k, v in upstream_reply.headers.multi_items() if k.lower() not in _NOT_RETURNED]
        capture.started(upstream_reply.status_code, upstream_reply.headers.multi_items())
        if not is_event_stream(upstream_reply.headers.multi_items()):
            try:
                content = await upstream_reply.aread()
            finally:
                await upstream_reply.aclose()
            capture.chunk(content)
            recorder.add(capture.ended())
            response = Response(content, status_code=upstream_reply.status_code)
            response.raw_headers += [(k.encode("latin-1"), v.encode("latin-1")) for k, v in returned]
            return response

        async def passed_on() -> AsyncIterator[bytes]:
            interrupted: str | None = "the client went away before the stream ended"
            try:
                async for chunk in upstream_reply.aiter_bytes():
                    yield chunk  # passed on first, captured after
                    capture.chunk(chunk)
                interrupted = None
            except httpx.HTTPError as exc:
                interrupted = f"the upstream stream broke: {type(exc).__name__}: {exc}"
            finally:
                await upstream_reply.aclose()
                recorder.add(capture.ended(interrupted))

        response = StreamingResponse(passed_on(), status_code=upstream_reply.status_code)
        response.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in returned]
        return response

    app = Starlette(routes=[Route("/{path:path}", forward, methods=["GET", "POST", "PUT", "PATCH", "DELETE"])])
    app.state.recorder = recorder
    return app


def serve_recording(upstreams: Upstreams, recorder: Recorder, *, host: str, port: int, on_ready: Any = None) -> None:
    """Run the proxy until SIGINT/SIGTERM, then write what is still queued."""
    import uvicorn

    from mockllm._server import bind_socket, run_until_signalled

    sock = bind_socket(host, port)
    bound_port = sock.getsockname()[1]
    config = uvicorn.Config(
        create_recording_app(upstreams, recorder),
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
    )
    if on_ready is not None:
        on_ready(f"http://{host}:{bound_port}")
    try:
        run_until_signalled(uvicorn.Server(config), sock)
    finally:
        recorder.close()
