"""Record and replay in process, one recording file per test: the record modes.

``RecordingSession`` is what a pytest test's mock asks before scripting (the plugin
makes one per test marked ``@pytest.mark.mockllm(record=True)``). Its ``mode`` is
pytest-recording's:

- ``none`` — replay only: a request no recording matches fails (a 404 with the diff);
- ``once`` — record every request if the file does not exist yet, else as ``none``;
- ``new`` — replay what is recorded, forward and record what is not (appended);
- ``all`` — forward and record everything, replacing the file.

A forwarded request goes to its upstream with the test client's headers (credentials
included, never written); ``MOCKLLM_RECORD_OPENAI_API_KEY`` /
``MOCKLLM_RECORD_ANTHROPIC_API_KEY`` replace the test client's key for real providers.
The reply streams back to the client as the upstream sends it. ``save`` writes the file
(scrubbed, secret-scanned) when something new was recorded.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import httpx

from mockllm._journal import RejectionCause
from mockllm._mock_response import MockResponse
from mockllm._recording.capture import Capture, exchange_request, is_event_stream
from mockllm._recording.format import Exchange, Recording, RecordingError
from mockllm._recording.matching import RequestMatcher
from mockllm._recording.proxy import Upstreams
from mockllm._recording.replay import RecordingLibrary, Replayed
from mockllm._recording.scrub import Scrubber, scrub_exchange
from mockllm._recording.store import load_directory, write_recording
from mockllm._wire.registry import codec_for_path

__all__ = ["RECORD_MODES", "RecordingSession"]

RECORD_MODES = ("none", "once", "new", "all")
SETTLE_TIMEOUT_S = 30.0  # how long ``save`` waits for forwarded streams still being read
_NOT_FORWARDED = frozenset({"host", "content-length", "connection", "accept-encoding", "transfer-encoding"})
_NOT_RETURNED = frozenset({"content-length", "connection", "transfer-encoding", "content-encoding", "keep-alive"})
_KEY_FROM_ENV = {
    "openai-chat": ("MOCKLLM_RECORD_OPENAI_API_KEY", "authorization", "Bearer {}"),
    "openai-responses": ("MOCKLLM_RECORD_OPENAI_API_KEY", "authorization", "Bearer {}"),
    "anthropic-messages": ("MOCKLLM_RECORD_ANTHROPIC_API_KEY", "x-api-key", "{}"),
}


class _ForwardedStream(MockResponse):
    """An upstream stream passed on chunk by chunk while it is captured."""

    __slots__ = ("_source", "_capture", "_done")
    blocking = True  # each chunk waits on the upstream

    def __init__(self, status: int, headers: list[tuple[str, str]], source: Any, capture: Capture, done: Any) -> None:
        super().__init__(status, headers, b"")
        self._source, self._capture, self._done = source, capture, done

    @property
    def length(self) -> int | None:
        return None

    @property
    def streaming(self) -> bool:
        return True

    def paced_chunks(self) -> Iterator[tuple[float, bytes]]:
        interrupted: str | None = "the client stopped reading before the stream ended"
        try:
            for chunk in self._source.iter_bytes():
                self._capture.chunk(chunk)
                yield 0.0, chunk
            interrupted = None
        except httpx.HTTPError as exc:
            interrupted = f"the upstream stream broke: {type(exc).__name__}: {exc}"
        finally:
            self._source.close()
            self._done(self._capture.finished(interrupted))


class RecordingSession:
    """One test's recordings (see the module docstring)."""

    def __init__(
        self,
        path: Path | str,
        mode: str = "none",
        *,
        upstreams: Upstreams | None = None,
        matcher: RequestMatcher | None = None,
        scrubbers: Sequence[Scrubber] = (),
    ) -> None:
        if mode not in RECORD_MODES:
            raise ValueError(f"record mode must be one of {', '.join(RECORD_MODES)}; got {mode!r}")
        self.path = Path(path)
        self.mode = mode
        self.upstreams = upstreams
        self.scrubbers = list(scrubbers)
        self.existed = self.path.exists()
        existing = load_directory(self.path) if self.existed and mode != "all" else []
        # A test's own file: a request sent more often than recorded is a miss, not the
        # last reply again (the app's extra call is a change the test must see).
        self.library = RecordingLibrary(existing, matcher=matcher, repeat_last=False)
        self.recorded: list[Exchange] = []
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)
        self._open_streams = 0
        self._client: httpx.Client | None = None

    @property
    def records(self) -> bool:
        return self.mode in ("new", "all") or (self.mode == "once" and not self.existed)

    def answer(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes, query: str = ""
    ) -> Replayed | None:
        """A replayed reply, or the upstream's (forwarded with the URL's ``query``: Gemini's
        ``alt=sse``, Azure's ``api-version``), or the 404 of a miss."""
        if self.mode == "all" or (self.mode == "once" and not self.existed):
            return self._forward(method, path, headers, body, query)
        entry = self.library.find(method, path, headers, body)
        if entry is not None:
            return self.library.replay(entry, path, body)
        if self.mode == "new":
            return self._forward(method, path, headers, body, query)
        if codec_for_path(path) is None:
            return None
        if not self.existed:
            return self.library.miss(
                method,
                path,
                body,
                f"No recording file {self.path} exists for this test; record it: run pytest with "
                "--mockllm-record-mode once (and --mockllm-upstream URL).",
                RejectionCause.RECORDING_MISSING,
            )
        return self.library.unmatched(method, path, body, headers)

    def _forward(self, method: str, path: str, headers: Mapping[str, str], body: bytes, query: str) -> Replayed:
        codec = codec_for_path(path)
        journal: dict[str, Any] = {"protocol": codec.name if codec else None}
        upstream = self.upstreams.for_path(path) if self.upstreams is not None else None
        if upstream is None:
            message = (
                f"Recording {method} {path} needs an upstream: run pytest with --mockllm-upstream URL "
                "(or PROTOCOL=URL), or set the ini option mockllm_upstream."
            )
            return self.library.miss(method, path, body, message, RejectionCause.NO_UPSTREAM)
        sent = {k: v for k, v in headers.items() if k.lower() not in _NOT_FORWARDED}
        if codec is not None and codec.name in _KEY_FROM_ENV:
            variable, header, form = _KEY_FROM_ENV[codec.name]
            if os.environ.get(variable):
                sent = {k: v for k, v in sent.items() if k.lower() not in ("authorization", "x-api-key", "api-key")}
                sent[header] = form.format(os.environ[variable])
        capture = Capture(exchange_request(method, path, parse_qsl(query, keep_blank_values=True), headers, body))
        with self._lock:  # the server forwards from worker threads, one request each
            if self._client is None:
                self._client = httpx.Client(timeout=httpx.Timeout(600.0, connect=10.0))
            client = self._client
        try:
            target = upstream + path + (f"?{query}" if query else "")
            reply = client.send(client.build_request(method, target, headers=sent, content=body), stream=True)
        except httpx.HTTPError as exc:
            message = f"The upstream {upstream} could not be reached: {type(exc).__name__}: {exc}"
            error = json.dumps({"error": {"message": message, "type": "api_error"}}).encode()
            reply_502 = MockResponse(502, [("content-type", "application/json")], error)
            return reply_502, {**journal, "status": 502, "error": message}
        returned = [(k, v) for k, v in reply.headers.multi_items() if k.lower() not in _NOT_RETURNED]
        capture.started(reply.status_code, reply.headers.multi_items())
        journal.update(status=reply.status_code, script_id=f"recorded from {upstream}")
        if reply.status_code >= 400:
            journal["error"] = f"scripted: recorded upstream error {reply.status_code}"
        if is_event_stream(reply.headers.multi_items()):
            journal["stream"] = True
            with self._lock:
                self._open_streams += 1
            return _ForwardedStream(reply.status_code, returned, reply, capture, self._keep_stream), journal
        try:
            content = reply.read()
        finally:
            reply.close()
        capture.chunk(content)
        self._keep(capture.finished())
        return MockResponse(reply.status_code, returned, content), journal

    def _keep(self, exchange: Exchange) -> None:
        with self._lock:
            self.recorded.append(exchange)

    def _keep_stream(self, exchange: Exchange) -> None:
        with self._settled:
            self.recorded.append(exchange)
            self._open_streams -= 1
            self._settled.notify_all()

    def _wait_for_streams(self, timeout: float) -> bool:
        """Wait until every forwarded stream has been read to its end (or broken off)."""
        with self._settled:
            return self._settled.wait_for(lambda: self._open_streams == 0, timeout)

    def unserved(self) -> list[str]:
        """The exchanges of the test's file that no request got (``RecordingLibrary.unserved``)."""
        return self.library.unserved()

    def save(self) -> Path | None:
        """Write the file if this session recorded something; returns its path.

        A forwarded stream is kept when the server has read it to its end, which can be
        after its client stopped reading (the SDKs stop at the last event, before the
        upstream's body ends): ``save`` waits for those first (``SETTLE_TIMEOUT_S``), and
        raises ``RecordingError`` if some are still open then, rather than drop them unsaid."""
        if not self._wait_for_streams(SETTLE_TIMEOUT_S):
            raise RecordingError(
                self.path,
                None,
                f"not written: {self._open_streams} forwarded stream(s) were still being read from the upstream "
                f"{SETTLE_TIMEOUT_S:g} s after the test ended. Check that the upstream ends its streams.",
            )
        if self._client is not None:
            self._client.close()
            self._client = None
        with self._lock:
            recorded = [scrub_exchange(exchange, self.scrubbers) for exchange in self.recorded]
        if not recorded:
            return None
        earlier = []
        if self.mode == "new" and self.existed:
            earlier = [exchange for _, recording in load_directory(self.path) for exchange in recording.exchanges]
        return write_recording(Recording(exchanges=[*earlier, *recorded]), self.path)
