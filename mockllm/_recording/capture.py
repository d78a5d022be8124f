"""One exchange as it happens: the request, then the reply's bytes as they arrive.

``Capture`` is fed what a recorder forwards — the request before it goes upstream, the
response head, each chunk of the body the moment it arrives — and builds the
``Exchange`` a recording keeps: a stream's events cut at their boundaries with the delay
before each, a complete body parsed as JSON when it is JSON. The proxy (async) and the
in-process recorder (sync) share it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mockllm._recording.format import Exchange, ExchangeRequest, ExchangeResponse, RecordedEvent
from mockllm._recording.scrub import kept_query, kept_request_headers, kept_response_headers
from mockllm._recording.sse import EventSplitter, event_record
from mockllm._wire.registry import codec_for_path

__all__ = ["Capture", "exchange_request", "is_event_stream"]


def is_event_stream(headers: Iterable[tuple[str, str]]) -> bool:
    return any(name.lower() == "content-type" and "text/event-stream" in value for name, value in headers)


def _body_fields(body: bytes) -> dict[str, Any]:
    if not body:
        return {}
    try:
        return {"body": json.loads(body)}
    except ValueError:
        return {"body_text": body.decode("utf-8", "replace")}


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
        **_body_fields(body),
    )


class Capture:
    """Builds one ``Exchange`` from a forwarded request and its reply as it streams.

    While the reply streams, ``chunk`` only cuts events and times them; reading them into
    records waits for ``finished``, which the proxy leaves to the recorder's thread."""

    def __init__(self, request: ExchangeRequest) -> None:
        self.request = request
        self._last = time.perf_counter()
        self._status = 0
        self._headers: dict[str, str] = {}
        self._streamed = False
        self._splitter = EventSplitter()
        self._events: list[tuple[bytes, float]] = []  # read into records in finished(), off the hot path
        self._body: list[bytes] = []

    def started(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        headers = list(headers)
        self._status = status
        self._headers = kept_response_headers(headers)
        self._streamed = is_event_stream(headers)

    def chunk(self, data: bytes) -> None:
        if not self._streamed:
            self._body.append(data)
            return
        events = self._splitter.feed(data)
        if events:
            now = time.perf_counter()
            delay = (now - self._last) * 1000
            self._last = now
            for event in events:
                self._events.append((event, delay))
                delay = 0.0

    def ended(self, interrupted: str | None = None) -> Callable[[], Exchange]:
        """Note the end of the reply now (the last event's delay); build the exchange later."""
        if self._streamed:
            delay = (time.perf_counter() - self._last) * 1000
            for event in self._splitter.close():
                self._events.append((event, delay))
                delay = 0.0
        return lambda: self.finished(interrupted)

    def finished(self, interrupted: str | None = None) -> Exchange:
        if not self._streamed:
            response = ExchangeResponse(
                status=self._status,
                headers=self._headers,
                interrupted=interrupted,
                **_body_fields(b"".join(self._body)),
            )
        else:
            delay = (time.perf_counter() - self._last) * 1000
            for event in self._splitter.close():
                self._events.append((event, delay))
                delay = 0.0
            response = ExchangeResponse(
                status=self._status,
                headers=self._headers,
                events=[RecordedEvent.model_validate(event_record(raw, ms)) for raw, ms in self._events],
                interrupted=interrupted,
            )
        return Exchange(request=self.request, response=response)
