"""In-process transports for ``httpx`` and ``httpx2`` clients, sync and async.

A transport hands each request to the engine and returns its reply with no socket.
Streamed replies are delivered chunk by chunk: when the script asks for pacing the
transport waits between events (``time.sleep`` / ``anyio.sleep``); otherwise the ready
events go out as one chunk, which the client parses as the same events, and a long
stream in chunks rendered as the client reads them (``mockllm._response``).

The stock ``ASGITransport`` of either library buffers the whole body and is async only,
so it is not used here. openai>=3 and anthropic>=1 build on ``httpx2``; openai 2.x and
LangChain's older paths on ``httpx``; both are served the same bytes::

    mock = MockLLM()
    client = openai.OpenAI(api_key="test", base_url="http://mockllm/v1",
                           http_client=httpx2.Client(transport=HTTPX2Transport(mock)))
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import Any

import anyio
import httpx
import httpx2

from mockllm._engine import MockLLM, MockResponse

__all__ = ["HTTPX2Transport", "HTTPXTransport", "response_for"]


def _sync_chunks(reply: MockResponse) -> Iterator[bytes]:
    for wait, chunk in reply.paced_chunks():
        if wait:
            time.sleep(wait)
        yield chunk


async def _async_chunks(reply: MockResponse) -> AsyncIterator[bytes]:
    for wait, chunk in reply.paced_chunks():
        if wait:
            await anyio.sleep(wait)
        yield chunk


def _stream_classes(module: ModuleType) -> tuple[type, type]:
    class SyncStream(module.SyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, reply: MockResponse) -> None:
            self._reply = reply

        def __iter__(self) -> Iterator[bytes]:
            return _sync_chunks(self._reply)

    class AsyncStream(module.AsyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, reply: MockResponse) -> None:
            self._reply = reply

        def __aiter__(self) -> AsyncIterator[bytes]:
            return _async_chunks(self._reply)

    return SyncStream, AsyncStream


_STREAMS = {httpx: _stream_classes(httpx), httpx2: _stream_classes(httpx2)}


def response_for(module: ModuleType, reply: MockResponse, request: Any, *, is_async: bool) -> Any:
    """Build a ``module.Response`` (httpx or httpx2) carrying ``reply``."""
    if reply.length is not None:
        # A ByteStream, not content=: the response stays unread, so iter_raw() works.
        return module.Response(reply.status, headers=reply.headers, stream=module.ByteStream(reply.body),
                               request=request)
    sync_stream, async_stream = _STREAMS[module]
    stream = async_stream(reply) if is_async else sync_stream(reply)
    return module.Response(reply.status, headers=reply.headers, stream=stream, request=request)


class _EngineTransport:
    _module: ModuleType

    def __init__(self, mock: MockLLM | None = None) -> None:
        self.mock = mock if mock is not None else MockLLM()

    def handle_request(self, request: Any) -> Any:
        body = request.read()
        reply = self.mock.handle(request.method, request.url.path, request.headers, body)
        return response_for(self._module, reply, request, is_async=False)

    async def handle_async_request(self, request: Any) -> Any:
        body = await request.aread()
        reply = self.mock.handle(request.method, request.url.path, request.headers, body)
        return response_for(self._module, reply, request, is_async=True)


class HTTPXTransport(_EngineTransport, httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Serve an ``httpx.Client`` / ``httpx.AsyncClient`` from the mock, in process."""

    _module = httpx


class HTTPX2Transport(_EngineTransport, httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """Serve an ``httpx2.Client`` / ``httpx2.AsyncClient`` from the mock, in process."""

    _module = httpx2
