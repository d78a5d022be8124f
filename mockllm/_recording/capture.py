"""One exchange as it happens: the request, then the reply's bytes as they arrive.

``Capture`` is fed what a recorder forwards — the request before it goes upstream, the
response head, each chunk of the body the moment it arrives — and builds the
``Exchange`` a recording keeps: a stream's events cut at their boundaries with the delay
before each, a complete body parsed as JSON when it is JSON. The proxy (async) and the
in-process recorder (sync) share it.
"""

from __future__ import annotations

import base64
import json
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mockllm._recording.format import Exchange, ExchangeRequest, ExchangeResponse, RecordedEvent
from mockllm._recording.scrub import kept_query, kept_request_headers, kept_response_headers
from mockllm._recording.sse import EventSplitter, event_record
from mockllm._wire.registry import codec_for_path

__all__ = ["Capture", "Captured", "body_fields", "exchange_request", "is_event_stream"]


def is_event_stream(headers: Iterable[tuple[str, str]]) -> bool:
    return any(name.lower() == "content-type" and "text/event-stream" in value for name, value in headers)


def _body_fields(body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    try:
        return {"body": json.loads(body)}
    except ValueError:
        return {"body_text": body.decode("utf-8", "replace")}


def body_fields(body: bytes) -> dict[str, Any]:
    """A body as a recording keeps it: JSON, text, or (not UTF-8: Bedrock's binary event
    stream, whose frames carry CRCs) base64, so that replay sends the same bytes."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return {"body_base64": base64.b64encode(body).decode("ascii")}
    return _body_fields(body)


def exchange_request(
    method: str, path: str, query: Iterable[tuple[str, str]], headers: Mapping[str, str], body: bytes
) -> ExchangeRequest:
    """What a recording keeps of a request (credentials dropped, see ``scrub``)."""
    codec = codec_for_path(path)
    return ExchangeRequest(
        method=method.upper(),
        path=path,
        protocol=codec.name if codec is not None else None,
        query=kept_query(query),
        headers=kept_request_headers(headers.items()),
        **body_fields(body),
    )


class Capture:
    """Builds one ``Exchange`` from a forwarded request and its reply as it streams.

    While the reply streams, ``chunk`` only notes each piece and when it came: cutting
    the pieces into events, reading those into records and building the request all
    wait for ``finished``, which the proxy leaves to the recorder's thread. An event's
    delay runs from the end of the event before it (the first: from when the capture
    began, before the request went out) to the arrival of the piece that completed it.

    ``raw_request`` (optional) is the request as it came, (method, target, headers,
    body): what tells the recorder cheaply that a reply repeats the last one recorded
    for that very request (``Captured.raw``)."""

    def __init__(
        self,
        request: ExchangeRequest | Callable[[], ExchangeRequest],
        raw_request: tuple[Any, ...] | None = None,
    ) -> None:
        self._request = request  # or what builds it, in finished()
        self._raw_request = raw_request
        self._began = time.perf_counter()
        self._ended: float | None = None
        self._status = 0
        self._headers: list[tuple[str, str]] = []
        self._streamed = False
        self._pieces: list[tuple[bytes, float]] = []

    def started(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        headers = list(headers)
        self._status = status
        self._headers = headers  # the ones a recording keeps are picked in finished()
        self._streamed = is_event_stream(headers)

    @property
    def streamed(self) -> bool:
        """Whether the reply is an event stream (known once ``started``)."""
        return self._streamed

    @property
    def request(self) -> ExchangeRequest:
        if not isinstance(self._request, ExchangeRequest):
            self._request = self._request()
        return self._request

    def chunk(self, data: bytes) -> None:
        self._pieces.append((data, time.perf_counter()))

    def ended(self, interrupted: str | None = None) -> Captured:
        """Note the end of the reply now; the exchange is built later (``Captured``)."""
        self._ended = time.perf_counter()
        return Captured(self, interrupted)

    def raw(self) -> tuple[Any, ...] | None:
        """(the request as it came, the reply's status, headers and bytes), if known."""
        if self._raw_request is None:
            return None
        body = b"".join(piece for piece, _ in self._pieces)
        return self._raw_request, self._status, tuple(self._headers), body

    def _decoded(self) -> list[tuple[bytes, float]]:
        """The pieces as the client reads them: a gzip or deflate body decompressed (a
        proxy passes the upstream's encoding on; a recording keeps plain bytes)."""
        encoding = next((v.lower() for k, v in self._headers if k.lower() == "content-encoding"), "identity")
        if encoding not in ("gzip", "x-gzip", "deflate"):
            return self._pieces
        decoder = zlib.decompressobj(wbits=47)  # gzip or zlib, told apart by the header
        try:
            return [(decoder.decompress(piece), arrived) for piece, arrived in self._pieces]
        except zlib.error:
            return self._pieces

    def _events(self) -> list[ExchangeEvent]:
        splitter = EventSplitter()
        events: list[ExchangeEvent] = []
        last = self._began
        for piece, arrived in self._decoded():
            for event in splitter.feed(piece):
                events.append((event, (arrived - last) * 1000))
                last = arrived
        end = self._ended if self._ended is not None else time.perf_counter()
        for event in splitter.close():
            events.append((event, (end - last) * 1000))
            last = end
        return events

    def finished(self, interrupted: str | None = None) -> Exchange:
        headers = kept_response_headers(self._headers)
        if not self._streamed:
            body = b"".join(piece for piece, _ in self._decoded())
            response = ExchangeResponse(
                status=self._status, headers=headers, interrupted=interrupted, **body_fields(body)
            )
        else:
            # event_record gives a valid record by construction: no validation per event.
            events = [RecordedEvent.model_construct(**event_record(raw, ms)) for raw, ms in self._events()]
            response = ExchangeResponse(status=self._status, headers=headers, interrupted=interrupted)
            response.events = events
        return Exchange.model_construct(request=self.request, response=response)


ExchangeEvent = tuple[bytes, float]


class Captured:
    """A reply that ended: calling it builds its ``Exchange`` (on the recorder's thread)."""

    __slots__ = ("capture", "interrupted")

    def __init__(self, capture: Capture, interrupted: str | None) -> None:
        self.capture, self.interrupted = capture, interrupted

    def __call__(self) -> Exchange:
        return self.capture.finished(self.interrupted)

    def raw(self) -> tuple[Any, ...] | None:
        return self.capture.raw() if self.interrupted is None else None
