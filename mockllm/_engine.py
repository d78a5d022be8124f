"""The engine: one request in, one response out — the same for every door.

``MockLLM.handle`` takes the method, path, headers and body bytes of a request and
returns a ``MockResponse``: status, headers and either a complete body or SSE events
with the pacing to deliver them at; a long stream is rendered as it is delivered
(``mockllm._mock_response``). It does no I/O and never sleeps; the server and the in-process
transports deliver what it returns, which is why the same request gives the same bytes
through all of them.

It also keeps the request journal (bounded, newest last; ``mockllm._journal``) that tests
and the server's ``/_mockllm/requests`` route read, and counts apart from it what the
verdict needs (``mockllm._verdict``): ``findings()``, ``verify()``, ``with MockLLM() as mock:``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from mockllm._attempts import AttemptCounter
from mockllm._cutting import cut_problem
from mockllm._delivery import delivery_for
from mockllm._held import HeldConversations, HeldNotFound
from mockllm._journal import Journal, JournalEntry, Outcome, entry_bytes, recorded_reply, recorded_request
from mockllm._latency import LatencyProfiles, StreamLoad, paced_by_profile
from mockllm._limits import ByteBoundedLog, Limits, clip_text, estimated_output_bytes, header_value, surrogate_path
from mockllm._mock_response import MockResponse
from mockllm._parsing import clear_script_cache
from mockllm._plan import Pacing, ReplyPlan
from mockllm._plan_builder import build_reply_plan
from mockllm._recording.source import RecordedAnswers
from mockllm._registered import MatchLike, RegisteredScript, ScriptRegistry
from mockllm._responses_state import ResponseStore
from mockllm._selection import Selection, select_in_conversation
from mockllm._shapes import StreamFaults, StreamShape, as_stream_shape
from mockllm._steps import CHAIN_TABLE_BYTES, CHAIN_TABLE_SIZE, StepTable, UnusedStep
from mockllm._threads import ThreadStore
from mockllm._tool_check import undeclared_tool_calls
from mockllm._usage import prompt_tokens
from mockllm._verdict import (
    Allowances,
    Findings,
    OptOut,
    Problem,
    ProblemKind,
    Tally,
    constructor_opt_out,
    verify_findings,
)
from mockllm._wire.base import RequestRejected, WireCodec, dumps, query_params
from mockllm._wire.endpoints import ENDPOINT_ROUTES, answer_endpoint
from mockllm._wire.registry import CODECS, codec_for_path, codec_named

PlanObserver = Callable[[str, ReplyPlan, bool], None]
"""Told of every planned reply: its protocol, the plan, whether it is a fallback."""
__all__ = ["CHAIN_TABLE_BYTES", "CHAIN_TABLE_SIZE", "JournalEntry", "MockLLM", "MockResponse", "UnusedStep"]

JOURNAL_SIZE = 1000
_JOURNAL_TEXT_MAX = 1000
_JOURNAL_WARNINGS_MAX = 20


_JSON = "application/json"


class MockLLM:
    """The mock LLM behind every door.

    ``seed`` varies the generated words (the same seed gives the same words);
    ``lenient=True`` turns off the tool-call pairing checks that real providers make.
    ``limits`` bounds one reply's size, a scripted delay and the journal's bytes
    (``mockllm._limits``). ``recordings`` answers the requests it knows before any
    scripting (``mockllm._recording``: replay and record).
    ``allow_fallback``, ``allow_unused_steps`` and
    ``allow_undeclared_tools`` are the opt-outs ``verify()`` (and ``intercept()`` and
    the pytest fixtures) apply to this mock; see ``mockllm._verdict``.

    Used as a context manager (``with MockLLM() as mock:``) it verifies when the block
    ends without an exception, as respx's router asserts all routes were called.
    ``stream`` is the stream shape of every streamed reply whose
    instruction has no ``stream`` block of its own (``mockllm._shapes``).
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        lenient: bool = False,
        journal_size: int = JOURNAL_SIZE,
        limits: Limits | None = None,
        recordings: RecordedAnswers | None = None,
        allow_fallback: bool = False,
        allow_unused_steps: bool = False,
        allow_undeclared_tools: bool = False,
        stream: StreamShape | Mapping[str, Any] | str | None = None,
        latency: LatencyProfiles | None = None,
    ) -> None:
        # -- simulation: latency profiles (mockllm._latency), metrics (mockllm._metrics) --
        self.latency = latency
        self.stream_load = StreamLoad()
        self.on_plan: PlanObserver | None = None
        self.recordings = recordings
        self.seed = seed
        self.stream = as_stream_shape(stream)
        self.lenient = lenient
        self.limits = limits if limits is not None else Limits()
        self.allowances = Allowances(
            allow_fallback=bool(allow_fallback),
            allow_unused_steps=bool(allow_unused_steps),
            allow_undeclared_tools=bool(allow_undeclared_tools),
        )
        """The opt-outs ``verify()`` applies unless told otherwise."""
        self._journal: ByteBoundedLog[JournalEntry] = ByteBoundedLog(
            journal_size, self.limits.journal_bytes, entry_bytes
        )
        self._counter = itertools.count()
        self._lock = threading.Lock()
        self._steps = StepTable()
        self._tally = Tally()
        self._attempts = AttemptCounter()
        self._threads = ThreadStore()
        self._responses = ResponseStore()
        # protocol -> the server-held conversations it may name.
        self._held: dict[str, HeldConversations] = {
            "anthropic-messages": self._threads,
            "openai-responses": self._responses,
        }
        self.scripts = ScriptRegistry(self.limits)
        """Chains for conversations without instruction tags (see ``script``)."""

    def script(
        self,
        chain: Any,
        match: MatchLike = None,
        *,
        stream: StreamShape | Mapping[str, Any] | None = None,
        stream_faults: StreamFaults | Mapping[str, Any] | None = None,
    ) -> RegisteredScript:
        """Answer conversations that carry no instruction tags (and fit ``match``) with
        ``chain``, as if it were tagged into their first user message. Its steps count
        for ``unused_steps`` from now on. ``stream`` / ``stream_faults`` go to every
        instruction without its own (``mockllm._shapes``); registering the same chain
        and match again replaces the earlier one (a property test re-scripts per example)."""
        entry = self.scripts.add(chain, match, stream=stream, stream_faults=stream_faults)
        with self._lock:
            self._steps.row(entry.script.fingerprint, entry.step_labels)
        return entry

    # -- journal and verdict -----------------------------------------------------------

    @property
    def journal(self) -> Journal:
        """Received requests with the selection made for each, newest last (a bounded
        ring: ``findings()`` is what never forgets)."""
        with self._lock:
            return Journal(self._journal)

    def reset(self) -> None:
        """Forget the journal, the findings, which scripted steps were used, the registered
        scripts, the parsed scripts, the repeat counts and the conversations held for threads."""
        self._attempts.clear()
        self._threads.clear()
        self._responses.clear()
        with self._lock:
            self._journal.clear()
            self._steps.clear()
            self._tally.clear()
            self.scripts.clear()
            self._counter = itertools.count()
        clear_script_cache()

    def unused_steps(self) -> list[UnusedStep]:
        """Scripted instructions of the chains this mock has seen that no request reached."""
        with self._lock:
            return self._steps.unused()

    def findings(self) -> Findings:
        """Every problem this mock saw that the verdict judges (``mockllm._verdict``):
        fallback replies, unscripted 4xx, unused steps, undeclared tool calls."""
        scripts = [entry.describe() for entry in self.scripts]
        with self._lock:
            unused = [*self._steps.dropped, *self._steps.unused()]
            more = [Problem(kind=ProblemKind.UNUSED_STEP, summary=str(step)) for step in unused]
            findings = self._tally.findings(more, scripts)
            hidden = self._steps.dropped_count - len(self._steps.dropped)
        if hidden:
            findings.counts[ProblemKind.UNUSED_STEP] = findings.counts.get(ProblemKind.UNUSED_STEP, 0) + hidden
        return findings

    def verify(
        self,
        *,
        allow_fallback: bool | None = None,
        allow_unused_steps: bool | None = None,
        allow_undeclared_tools: bool | None = None,
        opt_out: OptOut = constructor_opt_out,
    ) -> None:
        """Raise ``StrictnessError`` listing every request no script answered, every
        scripted step no request reached and every tool call the request did not
        declare, unless allowed (here, or by the constructor's arguments)."""
        __tracebackhide__ = True
        given = {"allow_fallback": allow_fallback, "allow_unused_steps": allow_unused_steps}
        given["allow_undeclared_tools"] = allow_undeclared_tools
        allowances = replace(self.allowances, **{k: v for k, v in given.items() if v is not None})
        verify_findings(self.findings(), allowances, opt_out=opt_out)

    def __enter__(self) -> MockLLM:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.verify()

    def _note_step(self, selection: Selection) -> None:
        if selection.chain_id is None:
            return
        with self._lock:
            self._steps.served(selection.chain_id, selection.step_labels, selection.turn_index)

    def _record(self, outcome: Outcome, body_bytes: int = 0, **fields: Any) -> None:
        # Everything a request sent is clipped (and made encodable) before it is kept:
        # the journal is bounded in bytes, and its route must always render.
        for name, value in fields.items():
            if isinstance(value, str):
                fields[name] = clip_text(value, _JOURNAL_TEXT_MAX)
        if "warnings" in fields:
            fields["warnings"] = [clip_text(w, _JOURNAL_TEXT_MAX) for w in fields["warnings"][:_JOURNAL_WARNINGS_MAX]]
        with self._lock:
            entry = JournalEntry(index=next(self._counter), outcome=outcome, **fields)
            if entry.reply is not None:
                for call in entry.reply.tool_calls:
                    call.request_index = entry.index
            if entry.request is not None and 2 * body_bytes > self.limits.journal_bytes // 4:
                # A body this large would push the rest of the journal out: keep its outline.
                outline: dict[str, Any] = {"model": entry.model, "messages": [], "tools": [], "parameters": {}}
                entry.request = entry.request.model_copy(update=outline)
                entry.warnings.append(f"request body of {body_bytes} bytes not kept (over the journal's budget)")
            else:
                entry._weight = body_bytes
            self._journal.append(entry)
            self._tally.note(entry)

    # -- handling --------------------------------------------------------------------

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes, query: str = "") -> MockResponse:
        """Answer one request. ``headers`` is looked up by lower-case name (httpx's and
        Starlette's header mappings are case-insensitive); ``query`` is the URL's query
        string (some protocols carry settings there: Gemini's ``alt``, Azure's
        ``api-version``); the journal keeps ``path`` only (a query may hold an API key).

        Never raises: input no JSON library can carry back (lone surrogates, nesting
        past the recursion limit) is a 400 naming where it was; a bug of the mock's own
        is a JSON 500 carrying the request id, in the protocol's error shape.
        """
        if len(body) > self.limits.max_body_bytes:
            return self.too_large(method, path, len(body))
        # -- recorded exchanges (mockllm._recording) answer before any scripting --------
        if self.recordings is not None:
            replayed = self.recordings.answer(method, path, headers, body)
            if replayed is not None:
                response, fields = replayed
                self._record(_recorded_outcome(response.status, fields), method=method, path=path, **fields)
                return response
        # ------------------------------------------------------------------------------
        try:
            return self._handle(method, path, headers, body, query)
        except (UnicodeError, RecursionError) as exc:
            return self._unrepresentable(method, path, body, exc)
        except Exception as exc:  # the mock's own bug: still a provider-shaped reply
            codec = codec_for_path(path) or CODECS[0]
            extra = _rejection_headers(codec, body)
            request_id = extra[codec.request_id_header]
            message = (
                f"mockllm failed on this request ({type(exc).__name__}: {clip_text(exc, 300)}); "
                f"this is a bug in mockllm, please report it with request id {request_id}."
            )
            self._record(Outcome.MOCK_FAILURE, method=method, path=path, protocol=codec.name, status=500, error=message)
            return self._error_response(codec, 500, None, message, None, extra)

    def too_large(self, method: str, path: str, size: int, *, at_least: bool = False) -> MockResponse:
        """The 413 for a body of ``size`` bytes (``at_least``: the server stopped reading
        there) past ``limits.max_body_bytes``, in the protocol's error shape."""
        codec = codec_for_path(path) or CODECS[0]
        cap = self.limits.max_body_bytes
        message = (
            f"The request body is {'more than ' if at_least else ''}{size} bytes, over the mock's cap "
            f"of {cap} bytes per request; send less, or raise it with serve --max-body-bytes "
            "(Limits(max_body_bytes=...))."
        )
        self._record(Outcome.REJECTED, method=method, path=path, protocol=codec.name, status=413, error=message)
        # Not derived from the body, which the server may not have read whole.
        return self._error_response(
            codec, 413, None, message, None, _rejection_headers(codec, f"{method} {path} {size}".encode())
        )

    def _unrepresentable(self, method: str, path: str, body: bytes, exc: Exception) -> MockResponse:
        codec = codec_for_path(path) or CODECS[0]
        if isinstance(exc, RecursionError):
            message, param = (
                ("The request body is nested too deeply to process; send JSON nested fewer than 500 levels."),
                None,
            )
        else:
            try:
                parsed = json.loads(body)
            except (ValueError, RecursionError):
                parsed = None
            param = surrogate_path(parsed)
            where = f" in '{param}'" if param else ""
            message = (
                f"The request holds a lone UTF-16 surrogate{where}, which is not valid "
                "Unicode; send well-formed UTF-8 text (pair surrogates in \\u escapes)."
            )
        self._record(Outcome.REJECTED, method=method, path=path, protocol=codec.name, status=400, error=message)
        return self._error_response(
            codec, 400, "invalid_request_error", message, param, _rejection_headers(codec, body)
        )

    def _handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes, query: str) -> MockResponse:
        endpoint = answer_endpoint(method, path, headers, body, lenient=self.lenient)
        if endpoint is not None:
            self._record(
                _served_or_rejected(endpoint.status),
                method=method,
                path=path,
                protocol=None,
                status=endpoint.status,
                error=endpoint.error,
            )
            ids = {endpoint.request_id_header: "req_" + hashlib.blake2b(body, digest_size=12).hexdigest()}
            return MockResponse(endpoint.status, _with_headers(ids, content_type=_JSON), endpoint.body)
        if method == "POST" and path.endswith("/conversations"):
            status, answer = self._responses.create_conversation(body)
            self._record(_served_or_rejected(status), method=method, path=path, protocol=None, status=status)
            ids = _rejection_headers(codec_named("openai-responses"), body)
            return MockResponse(status, _with_headers(ids, content_type=_JSON), answer)
        codec = codec_for_path(path)
        if codec is None:
            return self._not_found(method, path)
        codec = codec.for_request(path, query_params(query))
        if method != "POST":
            message = f"{method} is not allowed on {path}; send a POST request."
            self._record(Outcome.REJECTED, method=method, path=path, protocol=codec.name, status=405, error=message)
            return self._error_response(
                codec, 405, "invalid_request_error", message, None, _rejection_headers(codec, body)
            )
        try:
            parsed = json.loads(body, parse_constant=_reject_constant)
        except ValueError as exc:
            message = f"The request body is not valid JSON: {exc}. Send a JSON object with the request parameters."
            self._record(Outcome.REJECTED, method=method, path=path, protocol=codec.name, status=400, error=message)
            return self._error_response(
                codec, 400, "invalid_request_error", message, None, _rejection_headers(codec, body)
            )
        body_sent = parsed  # what the journal shows: the body as sent, before a held history
        held = self._held.get(codec.name)
        rebuilt_from, hold = None, False
        if held is not None:
            try:
                parsed, rebuilt_from, hold = held.expand(parsed)
            except HeldNotFound as exc:
                self._record(
                    Outcome.REJECTED,
                    method=method,
                    path=path,
                    protocol=codec.name,
                    status=exc.status,
                    error=exc.message,
                    model=_model_of(parsed),
                )
                return MockResponse(
                    exc.status, _with_headers(_rejection_headers(codec, body), content_type=_JSON), exc.body()
                )
        try:
            # One reading of the body serves validation and selection alike.
            conversation = codec.read_request(parsed, lenient=self.lenient)
        except RequestRejected as exc:
            self._record(
                Outcome.REJECTED,
                method=method,
                path=path,
                protocol=codec.name,
                status=exc.status,
                error=exc.message,
                model=_model_of(parsed),
                request=recorded_request(body_sent, body),
                body_bytes=len(body),
            )
            return self._error_response(
                codec, exc.status, exc.type, exc.message, exc.param, _rejection_headers(codec, body)
            )

        selection = select_in_conversation(conversation, codec.name)
        script = None
        if not selection.chain_found and self.scripts:
            found = self.scripts.select(conversation, codec.name, model=_model_of(parsed), headers=headers)
            if found is not None:
                selection, script = found
        self._note_step(selection)
        scripted_error = selection.instruction is not None and selection.instruction.error is not None
        attempt, attempt_rule = self._attempts.attempt(path, headers, body, scripted_error=scripted_error)
        stream = codec.wants_stream(parsed)
        selection = self._within_output_cap(selection, stream, parsed)
        plan = build_reply_plan(
            selection,
            tool_call_prefix=codec.tool_call_prefix,
            seed=self.seed,
            attempt=attempt,
            input_tokens=prompt_tokens(parsed, codec.prompt_fields),
            default_stream=self.stream,
        )
        problem = cut_problem(plan)
        if problem is not None:  # a shape the reply's texts cannot take: the fallback says why
            selection = replace(selection, instruction=None, fallback_reason=problem)
            plan = build_reply_plan(
                selection,
                tool_call_prefix=codec.tool_call_prefix,
                seed=self.seed,
                input_tokens=plan.usage.input_tokens,
            )
        plan, warnings = self._within_delay_cap(plan)
        # -- simulation: a latency profile's pacing, the metrics' count -------------------
        timing = selection.instruction.timing if selection.instruction is not None else None
        cap_s = self.limits.max_delay_ms / 1000
        profile = timing.profile if timing is not None else None
        plan = paced_by_profile(
            plan, profile, self.latency, model=_model_of(parsed), body=body, cap_s=cap_s, load=self.stream_load
        )
        if self.on_plan is not None:
            self.on_plan(codec.name, plan, selection.fallback_reason is not None)
        answered = Outcome.FALLBACK if selection.fallback_reason is not None else Outcome.SCRIPTED
        reply_record = recorded_reply(plan, _JOURNAL_TEXT_MAX)
        mock_headers = dict(plan.headers)
        mock_headers["x-mockllm-protocol"] = codec.name
        request_id = f"req_{plan.response_id}"
        mock_headers[codec.request_id_header] = request_id
        record: dict[str, Any] = dict(
            method=method,
            path=path,
            protocol=codec.name,
            model=_model_of(parsed),
            stream=stream,
            attempt=attempt,
            attempt_rule=attempt_rule,
            chain_id=selection.chain_id,
            chain_length=selection.chain_length,
            turn_index=selection.turn_index,
            instruction_id=selection.instruction_id,
            fallback_reason=selection.fallback_reason,
            warnings=[*selection.warnings, *warnings],
            script_id=script.id if script is not None else None,
            explanation=selection.describe() if selection.fallback_reason is not None else None,
            rebuilt_from=rebuilt_from,
            request=recorded_request(body_sent, body),
            body_bytes=len(body),
            undeclared_tool_calls=undeclared_tool_calls(plan.tool_calls, codec.declared_tools(parsed))
            if plan.tool_calls
            else [],
        )

        error = plan.error
        if error is not None and (error.after_chunks is None or not stream):
            extra = dict(mock_headers)
            if error.retry_after_ms is not None:
                extra["retry-after-ms"] = str(error.retry_after_ms)
                extra["retry-after"] = str(max(1, -(-error.retry_after_ms // 1000)))
            self._record(Outcome.SCRIPTED_ERROR, status=error.status, error=f"scripted error {error.status}", **record)
            return self._error_response(codec, error.status, error.type, error.message, None, extra)

        if held is not None and hold and error is None:
            held.keep(parsed, codec.render_json(plan, parsed))
        if stream:

            def failed(exc: Exception, sent: int) -> bytes:
                message = (
                    f"mockllm failed while streaming this reply ({type(exc).__name__}: "
                    f"{clip_text(exc, 300)}); this is a bug in mockllm, please report it "
                    f"with request id {request_id}."
                )
                return codec.render_stream_error(500, None, message, sent)

            reply = MockResponse.stream(
                200,
                _with_headers(
                    mock_headers, content_type=codec.stream_media_type, extra=[("cache-control", "no-cache")]
                ),
                lambda: codec.render_stream(plan, parsed),
                pacing=plan.pacing,
                on_failure=failed,
            )
            keep_alive = "keep_alive_every" in getattr(codec, "shape_knobs", ())
            reply.delivery = delivery_for(plan, self.limits.max_delay_ms / 1000, keep_alive=keep_alive)
            scripted = f"scripted mid-stream error after {error.after_chunks} events" if error else None
            self._record(
                Outcome.SCRIPTED_ERROR if error else answered, status=200, error=scripted, reply=reply_record, **record
            )
            return reply
        rendered = codec.render_json(plan, parsed)
        self._record(answered, status=200, reply=reply_record, **record)
        return MockResponse(200, _with_headers(mock_headers, content_type=_JSON), rendered)

    def _within_output_cap(self, selection: Selection, stream: bool, body: Any) -> Selection:
        """``selection``, or its fallback when the scripted reply would pass the output cap
        (estimated from the script, before a word is generated)."""
        if selection.instruction is None:
            return selection
        model = body.get("model")
        echo = len(model) if isinstance(model, str) else 0
        size = estimated_output_bytes(selection.instruction, stream=stream, echo_bytes=echo)
        cap = self.limits.max_output_bytes
        if size <= cap:
            return selection
        return replace(
            selection,
            instruction=None,
            fallback_reason=(
                f"instruction {selection.instruction_id!r} scripts about {size} bytes of output, over the "
                f"cap of {cap} bytes per reply (script less, or raise it with serve --max-output-bytes)"
            ),
        )

    def _within_delay_cap(self, plan: ReplyPlan) -> tuple[ReplyPlan, list[str]]:
        """``plan`` with every scripted delay at most ``limits.max_delay_ms``."""
        cap = self.limits.max_delay_ms / 1000
        pacing = plan.pacing
        if pacing is None or (pacing.first_chunk_s <= cap and pacing.chunk_s <= cap):
            return plan, []
        shortened = Pacing(min(pacing.first_chunk_s, cap), min(pacing.chunk_s, cap))
        return replace(plan, pacing=shortened), [
            f"timing shortened to at most {self.limits.max_delay_ms:g} ms per delay "
            "(raise it with serve --max-delay-ms)"
        ]

    def _error_response(
        self,
        codec: WireCodec,
        status: int,
        type: str | None,
        message: str | None,
        param: str | None,
        extra: dict[str, str],
    ) -> MockResponse:
        body = codec.render_error(status, type, message, param)
        headers = {"x-mockllm-protocol": codec.name, **extra, **codec.error_headers(status, type)}
        return MockResponse(status, _with_headers(headers, content_type=_JSON), body)

    def _not_found(self, method: str, path: str) -> MockResponse:
        routes = [route for codec in CODECS for route in codec.routes] + list(ENDPOINT_ROUTES)
        message = f"Unknown route {method} {path}. The mock serves {', '.join(routes)}."
        self._record(Outcome.REJECTED, method=method, path=path, protocol=None, status=404, error=message)
        # OpenAI's shape for an unknown URL: ``code`` is null (its 404 default,
        # ``model_not_found``, would send the reader after the wrong problem).
        body = dumps(
            {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}
        ).encode()
        return MockResponse(404, _with_headers({}, content_type=_JSON), body)


def _rejection_headers(codec: WireCodec, body: bytes) -> dict[str, str]:
    # Real providers put a request id on every reply, rejections included; the SDKs
    # show it as error.request_id. Derived from the body: same request, same id.
    return {codec.request_id_header: "req_" + hashlib.blake2b(body, digest_size=12).hexdigest()}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (JSON numbers are finite)")


def _served_or_rejected(status: int) -> Outcome:
    return Outcome.SERVED if status < 400 else Outcome.REJECTED


def _model_of(body: Any) -> str | None:
    model = body.get("model") if isinstance(body, dict) else None
    return model if isinstance(model, str) else None


def _with_headers(
    values: Mapping[str, str], *, content_type: str, extra: list[tuple[str, str]] | None = None
) -> list[tuple[str, str]]:
    headers = [("content-type", content_type)]
    headers.extend((name, header_value(value)) for name, value in values.items())
    if extra:
        headers.extend(extra)
    return headers


def _recorded_outcome(status: int, fields: dict[str, Any]) -> Outcome:
    """A recording's answer as the verdict reads it: a recorded exchange (or one being
    recorded) is what the test set up, as a script is; a request no recording answers is
    a 4xx nobody scripted (``x-mockllm-replay: miss``), and a proxy that could not reach
    its upstream is the mock's failure."""
    if fields.pop("replay_miss", False):
        return Outcome.REJECTED
    if status >= 500 and fields.get("script_id") is None:
        return Outcome.MOCK_FAILURE
    return Outcome.SCRIPTED_ERROR if status >= 400 else Outcome.SCRIPTED
