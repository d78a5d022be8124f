"""The engine: one request in, one response out — the same for every door.

``MockLLM.handle`` takes the method, path, headers and body bytes of a request and
returns a ``MockResponse``: status, headers and either a complete body or a list of
SSE events with the pacing to deliver them at. It does no I/O and never sleeps; the
server and the in-process transports deliver what it returns, which is why the same
request gives the same bytes through all of them.

It also keeps the request journal (bounded, newest last) that tests and the server's
``/_mockllm/requests`` route read.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from mockllm.attempts import AttemptCounter, AttemptRule
from mockllm.plan import Pacing
from mockllm.replies import build_reply_plan
from mockllm.selection import Selection, select_in_conversation
from mockllm.threads import ThreadNotFound, ThreadStore, on_thread
from mockllm.usage import prompt_tokens
from mockllm.wire.base import RequestRejected, WireCodec, dumps
from mockllm.wire.endpoints import ENDPOINT_ROUTES, answer_endpoint
from mockllm.wire.registry import CODECS, codec_for_path

__all__ = ["JournalEntry", "MockLLM", "MockResponse", "UnusedStep"]

JOURNAL_SIZE = 1000
_HEADER_VALUE_MAX = 400


class JournalEntry(BaseModel):
    """What the mock received and what it chose, for one request."""

    index: int
    method: str
    path: str
    protocol: str | None
    model: str | None = None
    stream: bool = False
    status: int
    attempt: int = 0
    attempt_rule: AttemptRule | None = None
    """How ``attempt`` was counted: ``header`` (``x-stainless-retry-count``) or ``repeat``
    (the Nth identical request); see ``mockllm.attempts``."""
    chain_id: str | None = None
    chain_length: int = 0
    turn_index: int | None = None
    instruction_id: str | None = None
    fallback_reason: str | None = None
    error: str | None = None
    """Why the request was rejected, or which scripted fault it got."""
    warnings: list[str] = []


@dataclass(frozen=True)
class UnusedStep:
    """A scripted instruction that no request reached."""

    chain_id: str
    index: int
    label: str

    def __str__(self) -> str:
        return f"chain {self.chain_id} step {self.index} ({self.label!r})"


@dataclass
class MockResponse:
    """What to send back. A streamed reply has ``events`` (and ``pacing`` when the
    script asked for it); ``body`` is every byte of the reply either way."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes
    events: list[bytes] = field(default_factory=list)
    pacing: Pacing | None = None

    @property
    def streaming(self) -> bool:
        return bool(self.events)

    def paced_chunks(self) -> Iterator[tuple[float, bytes]]:
        """(seconds to wait, bytes to send) pairs.

        With no pacing the whole body is one chunk with no wait: ready events go
        out in one write and the client still parses the same events.
        """
        if self.pacing is None or not self.events:
            yield 0.0, self.body
            return
        yield self.pacing.first_chunk_s, self.events[0]
        for event in self.events[1:]:
            yield self.pacing.chunk_s, event


def _header_value(value: str) -> str:
    value = value.encode("ascii", "backslashreplace").decode("ascii")
    value = value.replace("\r", " ").replace("\n", " ")
    return value if len(value) <= _HEADER_VALUE_MAX else value[: _HEADER_VALUE_MAX - 3] + "..."


_JSON = "application/json"
_SSE = "text/event-stream; charset=utf-8"


class MockLLM:
    """The mock LLM behind every door.

    ``seed`` varies the generated words (the same seed gives the same words);
    ``lenient=True`` turns off the tool-call pairing checks that real providers make.
    """

    def __init__(self, *, seed: int = 0, lenient: bool = False, journal_size: int = JOURNAL_SIZE) -> None:
        self.seed = seed
        self.lenient = lenient
        self._journal: deque[JournalEntry] = deque(maxlen=journal_size)
        self._counter = itertools.count()
        self._lock = threading.Lock()
        # chain id -> (step labels, turn indexes served): what unused_steps() reports.
        self._chains: dict[str, tuple[tuple[str, ...], set[int]]] = {}
        self._attempts = AttemptCounter()
        self._threads = ThreadStore()

    # -- journal ---------------------------------------------------------------------

    @property
    def journal(self) -> list[JournalEntry]:
        """Received requests with the selection made for each, newest last."""
        with self._lock:
            return list(self._journal)

    def reset(self) -> None:
        """Forget the journal, which scripted steps were used, the repeat counts and the
        conversations held for threads."""
        self._attempts.clear()
        self._threads.clear()
        with self._lock:
            self._journal.clear()
            self._chains.clear()
            self._counter = itertools.count()

    def unused_steps(self) -> list[UnusedStep]:
        """Scripted instructions of the chains this mock has seen that no request reached."""
        with self._lock:
            chains = [(cid, labels, set(served)) for cid, (labels, served) in self._chains.items()]
        return [UnusedStep(cid, i, label) for cid, labels, served in chains
                for i, label in enumerate(labels) if i not in served]

    def _note_step(self, selection: Selection) -> None:
        if selection.chain_id is None:
            return
        with self._lock:
            labels, served = self._chains.setdefault(selection.chain_id, (selection.step_labels, set()))
            if selection.turn_index is not None and selection.turn_index < len(labels):
                served.add(selection.turn_index)

    def _record(self, **fields: Any) -> None:
        with self._lock:
            self._journal.append(JournalEntry(index=next(self._counter), **fields))

    # -- handling --------------------------------------------------------------------

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> MockResponse:
        """Answer one request. ``headers`` is looked up by lower-case name (httpx's and
        Starlette's header mappings are case-insensitive)."""
        endpoint = answer_endpoint(method, path, headers, body, lenient=self.lenient)
        if endpoint is not None:
            self._record(method=method, path=path, protocol=None, status=endpoint.status, error=endpoint.error)
            ids = {endpoint.request_id_header: "req_" + hashlib.blake2b(body, digest_size=12).hexdigest()}
            return MockResponse(endpoint.status, _with_headers(ids, content_type=_JSON), endpoint.body)
        codec = codec_for_path(path)
        if codec is None:
            return self._not_found(method, path)
        if method != "POST":
            message = f"{method} is not allowed on {path}; send a POST request."
            self._record(method=method, path=path, protocol=codec.name, status=405, error=message)
            return self._error_response(codec, 405, "invalid_request_error", message, None,
                                        _rejection_headers(codec, body))
        try:
            parsed = json.loads(body)
        except ValueError as exc:
            message = (f"The request body is not valid JSON: {exc}. "
                       "Send a JSON object with the request parameters.")
            self._record(method=method, path=path, protocol=codec.name, status=400, error=message)
            return self._error_response(codec, 400, "invalid_request_error", message, None,
                                        _rejection_headers(codec, body))
        threaded = on_thread(parsed)
        if threaded:
            try:
                parsed = self._threads.expand(parsed)
            except ThreadNotFound as exc:
                self._record(method=method, path=path, protocol=codec.name, status=exc.status,
                             error=exc.message, model=_model_of(parsed))
                return MockResponse(exc.status, _with_headers(_rejection_headers(codec, body), content_type=_JSON),
                                    exc.body())
        try:
            # One reading of the body serves validation and selection alike.
            conversation = codec.read_request(parsed, lenient=self.lenient)
        except RequestRejected as exc:
            self._record(method=method, path=path, protocol=codec.name, status=exc.status,
                         error=exc.message, model=_model_of(parsed))
            return self._error_response(codec, exc.status, exc.type, exc.message, exc.param,
                                        _rejection_headers(codec, body))

        selection = select_in_conversation(conversation, codec.name)
        self._note_step(selection)
        scripted_error = selection.instruction is not None and selection.instruction.error is not None
        attempt, attempt_rule = self._attempts.attempt(path, headers, body, scripted_error=scripted_error)
        plan = build_reply_plan(selection, tool_call_prefix=codec.tool_call_prefix, seed=self.seed,
                                attempt=attempt, input_tokens=prompt_tokens(parsed, codec.prompt_fields))
        stream = codec.wants_stream(parsed)
        mock_headers = dict(plan.headers)
        mock_headers["x-mockllm-protocol"] = codec.name
        request_id = f"req_{plan.response_id}"
        mock_headers[codec.request_id_header] = request_id
        record = dict(
            method=method, path=path, protocol=codec.name, model=_model_of(parsed), stream=stream,
            attempt=attempt, attempt_rule=attempt_rule, chain_id=selection.chain_id, chain_length=selection.chain_length,
            turn_index=selection.turn_index, instruction_id=selection.instruction_id,
            fallback_reason=selection.fallback_reason, warnings=list(selection.warnings),
        )

        error = plan.error
        if error is not None and (error.after_chunks is None or not stream):
            extra = dict(mock_headers)
            if error.retry_after_ms is not None:
                extra["retry-after-ms"] = str(error.retry_after_ms)
                extra["retry-after"] = str(max(1, -(-error.retry_after_ms // 1000)))
            self._record(status=error.status, error=f"scripted error {error.status}", **record)
            return self._error_response(codec, error.status, error.type, error.message, None, extra)

        if threaded and error is None:
            self._threads.keep(parsed, codec.render_json(plan, parsed))
        if stream:
            events = codec.render_events(plan, parsed)
            scripted = f"scripted mid-stream error after {error.after_chunks} events" if error else None
            self._record(status=200, error=scripted, **record)
            return MockResponse(
                200,
                _with_headers(mock_headers, content_type=_SSE, extra=[("cache-control", "no-cache")]),
                b"".join(events),
                events=events,
                pacing=plan.pacing,
            )
        self._record(status=200, **record)
        return MockResponse(200, _with_headers(mock_headers, content_type=_JSON), codec.render_json(plan, parsed))

    def _error_response(self, codec: WireCodec, status: int, type: str | None, message: str | None,
                        param: str | None, extra: dict[str, str]) -> MockResponse:
        body = codec.render_error(status, type, message, param)
        headers = {"x-mockllm-protocol": codec.name, **extra}
        return MockResponse(status, _with_headers(headers, content_type=_JSON), body)

    def _not_found(self, method: str, path: str) -> MockResponse:
        routes = [f"POST /v1{codec.route}" for codec in CODECS] + list(ENDPOINT_ROUTES)
        message = f"Unknown route {method} {path}. The mock serves {', '.join(routes)}."
        self._record(method=method, path=path, protocol=None, status=404, error=message)
        # OpenAI's shape for an unknown URL: ``code`` is null (its 404 default,
        # ``model_not_found``, would send the reader after the wrong problem).
        body = dumps({"error": {"message": message, "type": "invalid_request_error",
                                "param": None, "code": None}}).encode()
        return MockResponse(404, _with_headers({}, content_type=_JSON), body)


def _rejection_headers(codec: WireCodec, body: bytes) -> dict[str, str]:
    # Real providers put a request id on every reply, rejections included; the SDKs
    # show it as error.request_id. Derived from the body: same request, same id.
    return {codec.request_id_header: "req_" + hashlib.blake2b(body, digest_size=12).hexdigest()}


def _model_of(body: Any) -> str | None:
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) else None


def _with_headers(values: Mapping[str, str], *, content_type: str,
                  extra: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    headers = [("content-type", content_type)]
    headers.extend((name, _header_value(value)) for name, value in values.items())
    if extra:
        headers.extend(extra)
    return headers
