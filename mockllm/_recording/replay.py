"""Replay: recorded exchanges answer requests, with their original event boundaries.

``RecordingLibrary`` indexes recordings by request signature (``mockllm._recording.
matching``). The engine consults it before any scripting (``MockLLM(recordings=...)``):
a request it matches gets the recorded status, headers and body, or the recorded events
byte for byte — all at once by default, or at the recorded pace scaled by ``speed``
(2.0 is twice as fast). The Nth identical request gets the Nth recorded exchange (a
retried 429 then its 200), the last one again past the end (``repeat_last``: a served
directory answers any number of clients; a pytest test's own file, without it, refuses a
request sent more times than recorded). A provider request nothing
matches is a 404 naming the nearest recording and what differs, field by field. Replay
never reaches the network.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from mockllm._delivery import StreamReset
from mockllm._journal import RejectionCause
from mockllm._mock_response import MockResponse
from mockllm._plan import Pacing
from mockllm._recording.format import Exchange, ExchangeResponse, Recording
from mockllm._recording.matching import RequestMatcher, field_diff, signature_path
from mockllm._recording.scrub import kept_request_headers
from mockllm._recording.sse import event_bytes
from mockllm._recording.store import load_directory
from mockllm._wire.registry import codec_for_path

__all__ = ["BrokenReply", "RecordedReply", "RecordingLibrary", "Replayed", "response_of"]

Replayed = tuple[MockResponse, dict[str, Any]]
"""A reply and the journal fields describing it."""

_SSE = "text/event-stream; charset=utf-8"
_JSON = "application/json"


class RecordedReply(MockResponse):
    """A recorded stream sent at its recorded pace: each event after its own delay."""

    __slots__ = ("_delays",)

    def __init__(self, status: int, headers: list[tuple[str, str]], events: list[bytes], delays: list[float]) -> None:
        super().__init__(status, headers, b"".join(events), events=events, pacing=Pacing(0.0, 0.0))
        self._delays = delays

    def paced_chunks(self) -> Iterator[tuple[float, bytes]]:
        return zip(self._delays, self.events, strict=True)


class BrokenReply(MockResponse):
    """A reply the upstream broke off while it was recorded (``interrupted``): its bytes
    as recorded, then the connection dropped before the body's end, as the upstream did
    (the server drops it; an in-process transport raises its library's ``ReadError``)."""

    __slots__ = ("_pieces",)

    def __init__(
        self, status: int, headers: list[tuple[str, str]], pieces: list[tuple[float, bytes]], *, streamed: bool
    ) -> None:
        body = b"".join(piece for _, piece in pieces)
        super().__init__(status, headers, body, events=[piece for _, piece in pieces] if streamed else None)
        self._pieces = pieces

    @property
    def length(self) -> int | None:
        return None  # never a Content-Length: the body does not end

    def paced_chunks(self) -> Iterator[tuple[float, bytes]]:
        yield from self._pieces
        raise StreamReset("the recorded upstream broke this reply off here")


def response_of(
    recorded: ExchangeResponse,
    *,
    speed: float | None = None,
    note: str | None = None,
    rendered: list[bytes] | None = None,
) -> MockResponse:
    """The ``MockResponse`` replaying ``recorded`` (``speed`` None: no waiting);
    ``rendered``: its events' bytes, if already made."""
    headers = [(name, value) for name, value in recorded.headers.items()]
    if note is not None:
        headers.append(("x-mockllm-replay", note))
    if recorded.events is not None:
        if "content-type" not in recorded.headers:
            headers.insert(0, ("content-type", _SSE))
        events = rendered if rendered is not None else [event_bytes(event.as_record()) for event in recorded.events]
        if recorded.interrupted is not None:
            delays = [e.delay_ms / 1000 / speed if speed else 0.0 for e in recorded.events]
            return BrokenReply(recorded.status, headers, list(zip(delays, events, strict=True)), streamed=True)
        if speed:
            return RecordedReply(recorded.status, headers, events, [e.delay_ms / 1000 / speed for e in recorded.events])
        return MockResponse(recorded.status, headers, b"".join(events), events=events)
    if recorded.body_base64 is not None:
        body = base64.b64decode(recorded.body_base64)
    elif recorded.body_text is not None:
        body = recorded.body_text.encode()
    elif recorded.body is not None:
        body = json.dumps(recorded.body, separators=(",", ":"), ensure_ascii=False).encode()
    else:
        body = b""
    if "content-type" not in recorded.headers and recorded.body is not None:
        headers.insert(0, ("content-type", _JSON))
    if recorded.interrupted is not None:
        return BrokenReply(recorded.status, headers, [(0.0, body)], streamed=False)
    return MockResponse(recorded.status, headers, body)


@dataclass(frozen=True)
class _Entry:
    path: Path
    index: int
    exchange: Exchange

    @property
    def label(self) -> str:
        return f"{self.path.name}#{self.index}"


def _parsed(body: bytes) -> tuple[Any, bool]:
    """The body as a signature compares it: JSON, text, or (not UTF-8) its bytes in base64,
    as a recording keeps them (``ExchangeRequest.body_for_match``)."""
    try:
        return json.loads(body), True
    except ValueError:
        try:
            return body.decode("utf-8"), False
        except UnicodeDecodeError:
            return {"body_base64": base64.b64encode(body).decode("ascii")}, False


def _journal(path: str, body: bytes) -> dict[str, Any]:
    """The journal's protocol and model: the model as the codec reads it, from the body
    or, for Bedrock, Gemini and Azure deployments, from the path (decoded: a recording
    keeps the path as it was sent, the server hands the engine ASGI's decoded one)."""
    codec = codec_for_path(path)
    if codec is None:
        return {"protocol": None, "model": None}
    parsed, _ = _parsed(body)
    return {"protocol": codec.name, "model": codec.for_request(unquote(path), {}).request_model(parsed)}


class RecordingLibrary:
    """Recorded exchanges, answerable by request (see the module docstring)."""

    def __init__(
        self,
        recordings: list[tuple[Path, Recording]],
        *,
        matcher: RequestMatcher | None = None,
        speed: float | None = None,
        repeat_last: bool = True,
    ) -> None:
        if speed is not None and not speed > 0:
            raise ValueError(f"speed must be a positive number (2.0 replays twice as fast), got {speed!r}")
        self.matcher = matcher if matcher is not None else RequestMatcher()
        self.speed = speed
        self.repeat_last = repeat_last
        self._entries: list[_Entry] = []
        self._by_key: dict[str, list[_Entry]] = {}
        self._served: dict[str, int] = {}
        self._rendered: dict[int, list[bytes]] = {}
        self._lock = threading.Lock()
        for path, recording in recordings:
            for i, exchange in enumerate(recording.exchanges):
                self.add(_Entry(path, i, exchange))

    @classmethod
    def from_directory(
        cls, folder: Path | str, *, matcher: RequestMatcher | None = None, speed: float | None = None
    ) -> RecordingLibrary:
        """Every recording under ``folder`` (``RecordingError`` for a bad file)."""
        return cls(load_directory(folder), matcher=matcher, speed=speed)

    def add(self, entry: _Entry) -> None:
        self._entries.append(entry)
        self._by_key.setdefault(self.matcher.key_of(entry.exchange.request), []).append(entry)

    def __len__(self) -> int:
        return len(self._entries)

    def find(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> _Entry | None:
        """The exchange answering this request (the Nth for the Nth identical one; past the
        end the last again, or None without ``repeat_last``), or None."""
        key = self._key(method, path, headers, body)
        entries = self._by_key.get(key)
        if not entries:
            return None
        with self._lock:
            served = self._served.get(key, 0)
            self._served[key] = served + 1
        if served >= len(entries) and not self.repeat_last:
            return None
        return entries[min(served, len(entries) - 1)]

    def _key(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> str:
        parsed, _ = _parsed(body)
        return self.matcher.key(method, path, kept_request_headers(headers.items()), parsed)

    def unserved(self) -> list[str]:
        """The recorded exchanges no request got (``file#index``), in file order: a request
        the app no longer sends, as a scripted step never reached."""
        with self._lock:
            served = dict(self._served)
        left: list[_Entry] = []
        for key, entries in self._by_key.items():
            left += entries[served.get(key, 0) :]
        order = {id(entry): i for i, entry in enumerate(self._entries)}
        return [entry.label for entry in sorted(left, key=lambda entry: order[id(entry)])]

    def answer(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes, query: str = ""
    ) -> Replayed | None:
        """The recorded reply to this request; the 404 that explains a miss on a provider
        route; None off the provider routes when nothing was recorded there. The ``query``
        is not matched (Azure's ``api-version`` changes with an SDK upgrade, as the API
        version header does)."""
        entry = self.find(method, path, headers, body)
        if entry is not None:
            return self.replay(entry, path, body)
        if codec_for_path(path) is None:
            return None
        return self.unmatched(method, path, body, headers)

    def unmatched(self, method: str, path: str, body: bytes, headers: Mapping[str, str]) -> Replayed:
        """The 404 for a request no recording matches, naming the nearest one; or, without
        ``repeat_last``, for one sent more times than it was recorded."""
        recorded = self._by_key.get(self._key(method, path, headers, body))
        if recorded:
            message = (
                f"This request ({method} {path}) is recorded {len(recorded)} time(s), last as {recorded[-1].path} "
                f"(exchange {recorded[-1].index}), and the test sent it once more: the app makes this call more "
                "often than when it was recorded. Re-record (record mode new appends the extra call, all records "
                "everything again), or fix the app's extra call."
            )
        else:
            message = self.explain_miss(method, path, _parsed(body)[0])
        return self.miss(method, path, body, message, RejectionCause.REPLAY_MISS)

    def replay(self, entry: _Entry, path: str, body: bytes) -> Replayed:
        """The reply of a found exchange, and its journal fields."""
        recorded = entry.exchange.response
        journal = _journal(path, body)
        journal.update(status=recorded.status, stream=recorded.streamed, script_id=f"recording {entry.label}")
        if recorded.status >= 400:
            journal["error"] = f"scripted: recorded error {recorded.status} ({entry.label})"
        rendered = self._rendered.get(id(entry))
        if rendered is None and recorded.events is not None:
            # Rendered once: a replayed stream costs what sending pre-rendered bytes costs.
            rendered = self._rendered[id(entry)] = [event_bytes(e.as_record()) for e in recorded.events]
        return response_of(recorded, speed=self.speed, note=entry.label, rendered=rendered), journal

    @staticmethod
    def miss(method: str, path: str, body: bytes, message: str, cause: RejectionCause) -> Replayed:
        """The 404 a request no recording answers gets (never retried by the SDKs);
        ``cause`` says why, for the verdict's advice."""
        error = {"error": {"message": message, "type": "not_found_error", "param": None, "code": None}}
        headers = [("content-type", _JSON), ("x-mockllm-replay", "miss"), ("x-should-retry", "false")]
        return MockResponse(404, headers, json.dumps(error).encode()), {
            **_journal(path, body),
            "status": 404,
            "error": message,
            "rejection": cause,
        }

    def explain_miss(self, method: str, path: str, body: Any) -> str:
        """Why no recording answers this request: the nearest one and what differs."""
        codec = codec_for_path(path)
        candidates = [
            e
            for e in self._entries
            if e.exchange.request.method == method.upper()
            and (codec_for_path(e.exchange.request.path) is codec if codec else e.exchange.request.path == path)
        ]
        head = f"No recording matches this request ({method} {path})."
        if not candidates:
            return (
                f"{head} None of the {len(self._entries)} recorded exchanges is a {method} to this endpoint; record it."
            )
        sent = self.matcher.normalised(body)
        scored = []
        for entry in candidates:
            request = entry.exchange.request
            recorded = self.matcher.normalised(request.body_for_match())
            diff = field_diff(sent, recorded)
            if signature_path(request.path) != signature_path(path):
                # The model (Gemini, Bedrock, Azure) or streaming (Gemini, Bedrock) is in the path.
                diff.insert(0, f"the path differs (sent: {unquote(path)}, recorded: {unquote(request.path)})")
            scored.append((len(diff), entry.label, entry, diff))
        count, _, entry, diff = min(scored, key=lambda item: (item[0], item[1]))
        if not diff:
            diff = ["the beta headers differ (anthropic-beta or openai-beta)"]
        listing = "; ".join(diff[:8]) + (f"; and {len(diff) - 8} more" if len(diff) > 8 else "")
        return (
            f"{head} Nearest recording: {entry.path} (exchange {entry.index}): {listing}. "
            "Re-record (record mode new or all), or normalise the volatile field (see docs/recording.md)."
        )
