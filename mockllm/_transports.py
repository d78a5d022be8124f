"""In-process transports for ``httpx`` and ``httpx2`` clients, sync and async.

A transport hands each request to the engine and returns its reply with no socket.
Streamed replies are delivered chunk by chunk: when the script asks for pacing the
transport waits between events (``time.sleep`` / ``anyio.sleep``); otherwise the ready
events go out as one chunk, which the client parses as the same events, and a long
stream in chunks rendered as the client reads them (``mockllm._mock_response``).

The stock ``ASGITransport`` of either library buffers the whole body and is async only,
so it is not used here. openai>=3 and anthropic>=1 build on ``httpx2``; openai 2.x,
anthropic 0.x, LiteLLM and LangChain's older paths on ``httpx``; both are served the same bytes::

    mock = MockLLM()
    client = openai.OpenAI(api_key="test", base_url="http://mockllm/v1",
                           http_client=httpx2.Client(transport=HTTPX2Transport(mock)))

``httpx`` comes with the core install; ``httpx2`` is optional (the ``httpx2`` extra, or
any SDK built on it) and imported only when an ``HTTPX2Transport`` is made.
"""

from __future__ import annotations

import functools
import operator
import time
from collections.abc import AsyncIterator, Iterator
from types import ModuleType, TracebackType
from typing import Any

import anyio
import httpx

from mockllm._delivery import StreamReset, deliver
from mockllm._engine import MockLLM, MockResponse
from mockllm._exceptions import InvalidScript
from mockllm._optional import require

__all__ = ["HTTPX2Transport", "HTTPXTransport", "import_httpx2", "response_for", "transport_for"]


def _sync_chunks(reply: MockResponse, module: ModuleType) -> Iterator[bytes]:
    try:
        if reply.pacing is None:  # no waits: a one-byte shape's pieces go through untouched
            yield from map(operator.itemgetter(1), deliver(reply))
            return
        for wait, chunk in deliver(reply):
            if wait:
                time.sleep(wait)
            yield chunk
    except StreamReset as reset:
        raise module.ReadError(_reset_message(reset)) from None


async def _async_chunks(reply: MockResponse, module: ModuleType) -> AsyncIterator[bytes]:
    try:
        for wait, chunk in deliver(reply):
            if wait:
                await anyio.sleep(wait)
            yield chunk
    except StreamReset as reset:
        raise module.ReadError(_reset_message(reset)) from None


def _reset_message(reset: StreamReset) -> str:
    """What a client reading a dropped stream is told: why the mock dropped it (a
    recording's broken-off reply says so; a bare reset is the script's fault)."""
    why = str(reset) or "stream_faults.reset_at_event"
    return f"[Errno 104] Connection reset by peer (mockllm: {why})"


def _checked_delivery(reply: MockResponse) -> float:
    """The stall to wait before answering; gzip cannot be served in process."""
    delivery = reply.delivery
    if delivery is None:
        return 0.0
    if delivery.gzip:
        raise InvalidScript(
            "stream.gzip: gzip content-encoding is served by the mock server only (python -m mockllm "
            "serve, the mockllm_server fixture); an in-process transport cannot send it. Drop "
            "'gzip' from the stream shape, or use the server."
        )
    stall: float = delivery.stall_s
    return stall


def _query(request: Any) -> str:
    """The request URL's query string (httpx and httpx2 hold it as bytes)."""
    query = request.url.query
    return query.decode("ascii", "replace") if isinstance(query, bytes) else str(query)


def import_httpx2(feature: str = "HTTPX2Transport") -> ModuleType:
    """``httpx2``, or the error that says to install the ``httpx2`` extra."""
    return require("httpx2", extra="httpx2", feature=feature)


@functools.cache
def _stream_classes(module: ModuleType) -> tuple[type, type]:
    class SyncStream(module.SyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, reply: MockResponse) -> None:
            self._reply = reply

        def __iter__(self) -> Iterator[bytes]:
            return _sync_chunks(self._reply, module)

    class AsyncStream(module.AsyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, reply: MockResponse) -> None:
            self._reply = reply

        def __aiter__(self) -> AsyncIterator[bytes]:
            return _async_chunks(self._reply, module)

    return SyncStream, AsyncStream


def response_for(module: ModuleType, reply: MockResponse, request: Any, *, is_async: bool) -> Any:
    """Build a ``module.Response`` (httpx or httpx2) carrying ``reply``."""
    if reply.length is not None:
        # A ByteStream, not content=: the response stays unread, so iter_raw() works.
        return module.Response(
            reply.status, headers=reply.headers, stream=module.ByteStream(reply.body), request=request
        )
    sync_stream, async_stream = _stream_classes(module)
    stream = async_stream(reply) if is_async else sync_stream(reply)
    return module.Response(reply.status, headers=reply.headers, stream=stream, request=request)


class _EngineTransport:
    _module: ModuleType

    def __init__(self, mock: MockLLM | None = None) -> None:
        self.mock = mock if mock is not None else MockLLM()

    # The transport protocol's lifecycle (httpx's BaseTransport / AsyncBaseTransport),
    # written here so that HTTPX2Transport needs no httpx2 class until it is used.
    def __enter__(self) -> Any:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.aclose()

    def close(self) -> None:
        """Nothing to release: no connection is ever opened."""

    async def aclose(self) -> None:
        """Nothing to release: no connection is ever opened."""

    def handle_request(self, request: Any) -> Any:
        body = request.read()
        reply = self.mock.handle(request.method, request.url.path, request.headers, body, _query(request))
        stall = _checked_delivery(reply)
        if stall:
            time.sleep(stall)
        return response_for(self._module, reply, request, is_async=False)

    async def handle_async_request(self, request: Any) -> Any:
        body = await request.aread()
        reply = self.mock.handle(request.method, request.url.path, request.headers, body, _query(request))
        stall = _checked_delivery(reply)
        if stall:
            await anyio.sleep(stall)
        return response_for(self._module, reply, request, is_async=True)


class HTTPXTransport(_EngineTransport, httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Serve an ``httpx.Client`` / ``httpx.AsyncClient`` from the mock, in process."""

    _module = httpx


class HTTPX2Transport(_EngineTransport):
    """Serve an ``httpx2.Client`` / ``httpx2.AsyncClient`` from the mock, in process.

    Needs ``httpx2`` (``pip install "mockllm-harness[httpx2]"``); without it, making one
    raises an ``ImportError`` that says so."""

    def __init__(self, mock: MockLLM | None = None) -> None:
        self._module = import_httpx2()
        super().__init__(mock)


def transport_for(mock: MockLLM, library: ModuleType) -> HTTPXTransport | HTTPX2Transport:
    """The in-process transport serving ``mock`` to clients of ``library`` (the module
    ``httpx`` or ``httpx2``), for code that takes clients of either, as the SDKs do."""
    if library is httpx:
        return HTTPXTransport(mock)
    if library.__name__ == "httpx2":
        return HTTPX2Transport(mock)
    raise TypeError(f"library must be the httpx or httpx2 module, got {library!r}")
