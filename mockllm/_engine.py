"""The engine: one request in, one response out — the same for every door.

``MockLLM.handle`` takes the method, path, headers and body bytes of a request and
returns a ``MockResponse``: status, headers and either a complete body or SSE events
with the pacing to deliver them at; a long stream is rendered as it is delivered
(``mockllm._mock_response``). It does no I/O and never sleeps; the server and the in-process
transports deliver what it returns, which is why the same request gives the same bytes
through all of them.

``handle`` guards the request (the body's size, a recording that answers it, the mock's
own failure); the stages in between (route → read → expand held conversation → select
→ plan → cap → render → journal) are ``mockllm._pipeline``.

It also keeps the request journal (bounded, newest last; ``mockllm._journal``) that tests
and the server's ``/_mockllm/requests`` route read, and counts apart from it what the
verdict needs (``mockllm._verdict``): ``findings()``, ``verify()``, ``with MockLLM() as mock:``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from mockllm._attempts import AttemptCounter
from mockllm._exchange import Exchange
from mockllm._held import HeldConversations
from mockllm._journal import JOURNAL_CODEC, Journal, JournalEntry, Outcome
from mockllm._journal_ring import JOURNAL_TEXT_MAX, PendingEntry, PlannedEntry, entry_weight, journal_entry, kept_fields
from mockllm._latency import LatencyProfiles, StreamLoad
from mockllm._limits import Limits, clip_text, surrogate_path
from mockllm._mock_response import MockResponse
from mockllm._parsing import clear_script_cache
from mockllm._pipeline import answer
from mockllm._plan import ReplyPlan
from mockllm._recording.source import RecordedAnswers
from mockllm._registered import MatchLike, RegisteredScript, ScriptRegistry
from mockllm._response_headers import body_request_id
from mockllm._selection import Selection
from mockllm._shapes import StreamFaults, StreamShape, as_stream_shape
from mockllm._stage_journal import error_response
from mockllm._state import MemoryState, State, StateUnavailable
from mockllm._steps import CHAIN_TABLE_BYTES, CHAIN_TABLE_SIZE, StepTable, UnusedStep, step_key
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
from mockllm._wire.base import WireCodec
from mockllm._wire.registry import CODECS, codec_for_path

PlanObserver = Callable[[str, ReplyPlan, bool], None]
"""Told of every planned reply: its protocol, the plan, whether it is a fallback."""
__all__ = ["CHAIN_TABLE_BYTES", "CHAIN_TABLE_SIZE", "JournalEntry", "MockLLM", "MockResponse", "UnusedStep"]

JOURNAL_SIZE = 1000


class MockLLM:
    """The mock LLM behind every door.

    ``seed`` varies the generated words (the same seed gives the same words);
    ``lenient=True`` turns off the tool-call pairing checks that real providers make.
    ``limits`` bounds one reply's size, a scripted delay and the journal's bytes
    (``mockllm._limits``). ``recordings`` answers the requests it knows before any
    scripting (``mockllm._recording``: replay and record).
    ``allow_fallback``, ``allow_unused_steps``, ``allow_undeclared_tools`` and
    ``allow_impossible_replies`` are the opt-outs ``verify()`` (and ``intercept()`` and
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
        allow_impossible_replies: bool = False,
        stream: StreamShape | Mapping[str, Any] | str | None = None,
        latency: LatencyProfiles | None = None,
        state: State | None = None,
    ) -> None:
        # -- state (mockllm._state): this process's memory, or shared by serve --workers --
        self.state: State = state if state is not None else MemoryState()
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
            allow_impossible_replies=bool(allow_impossible_replies),
        )
        """The opt-outs ``verify()`` applies unless told otherwise."""
        self._journal = self.state.log(
            "journal", count=journal_size, budget=self.limits.journal_bytes, size=entry_weight, codec=JOURNAL_CODEC
        )
        self._lock = threading.Lock()
        self._steps = StepTable(self.state)
        self._tally = Tally(self.state)
        self._attempts = AttemptCounter(state=self.state)
        # The conversations providers hold on their servers (threads, Responses state):
        # one store per protocol that has them, made by its codec (``mockllm._held``).
        self._held_stores: list[tuple[WireCodec, HeldConversations]] = [
            (codec, store) for codec in CODECS if (store := codec.held_conversations(self.state)) is not None
        ]
        self._held: dict[str, HeldConversations] = {codec.name: store for codec, store in self._held_stores}
        self.scripts = ScriptRegistry(self.limits, state=self.state)
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
            self._steps.row(step_key(entry.script.fingerprint, entry.id), entry.step_labels)
        return entry

    # -- journal and verdict -----------------------------------------------------------

    @property
    def journal(self) -> Journal:
        """Received requests with the selection made for each, newest last (a bounded
        ring: ``findings()`` is what never forgets)."""
        with self._lock:
            return Journal(item.built() if isinstance(item, PendingEntry) else item for item in self._journal.items())

    def reset(self) -> None:
        """Forget the journal, the findings, which scripted steps were used, the registered
        scripts, the parsed scripts, the repeat counts and the conversations held for threads."""
        self._attempts.clear()
        for _, store in self._held_stores:
            store.clear()
        with self._lock:
            self._journal.clear()
            self._steps.clear()
            self._tally.clear()
            self.scripts.clear()
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
        allow_impossible_replies: bool | None = None,
        opt_out: OptOut = constructor_opt_out,
    ) -> None:
        """Raise ``StrictnessError`` listing every request no script answered, every
        scripted step no request reached, every tool call the request did not declare
        and every reply no provider could give, unless allowed (here, or by the
        constructor's arguments)."""
        __tracebackhide__ = True
        allowances = self.allowances.overridden(
            allow_fallback=allow_fallback,
            allow_unused_steps=allow_unused_steps,
            allow_undeclared_tools=allow_undeclared_tools,
            allow_impossible_replies=allow_impossible_replies,
        )
        verify_findings(self.findings(), allowances, opt_out=opt_out)

    def __enter__(self) -> MockLLM:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.verify()

    def _note_step(self, selection: Selection, script_id: str | None = None) -> None:
        if selection.chain_id is None:
            return
        with self._lock:
            self._steps.served(step_key(selection.chain_id, script_id), selection.step_labels, selection.turn_index)

    def _record(self, outcome: Outcome, body_bytes: int = 0, **fields: Any) -> None:
        """Journal one request, built at once."""
        kept_fields(fields, JOURNAL_TEXT_MAX)
        outline = 2 * body_bytes > self.limits.journal_bytes // 4
        with self._lock:
            self._tally.note(
                self._journal.append(lambda index: journal_entry(index, outcome, fields, body_bytes, outline))
            )

    def _record_planned(self, outcome: Outcome, body_bytes: int, planned: PlannedEntry, *, flagged: bool) -> None:
        """Journal a planned reply, whose entry is dear to make: one the verdict does not
        count (scripted, not ``flagged`` for an undeclared tool call) is made only when
        read (``PendingEntry``), weighed meanwhile from its texts as it will be."""
        outline = 2 * body_bytes > self.limits.journal_bytes // 4
        # A shared state (serve --workers) writes the entry at once, so it is built at once.
        if self.state.shared or outline or flagged or not outcome.scripted:
            self._record(outcome, body_bytes, **planned.fields(JOURNAL_TEXT_MAX))
            return
        weight = planned.weight(JOURNAL_TEXT_MAX, body_bytes)
        with self._lock:
            self._journal.append(lambda index: PendingEntry(index, outcome, planned, body_bytes, weight))

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
            replayed = self.recordings.answer(method, path, headers, body, query)
            if replayed is not None:
                response, fields = replayed
                self._record(_recorded_outcome(response.status, fields), method=method, path=path, **fields)
                return response
        # ------------------------------------------------------------------------------
        try:
            return answer(self, Exchange(method, path, headers, body, query))
        except (UnicodeError, RecursionError) as exc:
            return self._unrepresentable(method, path, body, exc)
        except StateUnavailable as exc:  # a shared state that stopped answering: 503, never a guess
            codec = codec_for_path(path) or CODECS[0]
            return error_response(codec, 503, None, str(exc), None, {codec.request_id_header: body_request_id(body)})
        except Exception as exc:  # the mock's own bug: still a provider-shaped reply
            codec = codec_for_path(path) or CODECS[0]
            extra = {codec.request_id_header: body_request_id(body)}
            request_id = extra[codec.request_id_header]
            message = (
                f"mockllm failed on this request ({type(exc).__name__}: {clip_text(exc, 300)}); "
                f"this is a bug in mockllm, please report it with request id {request_id}."
            )
            self._record(Outcome.MOCK_FAILURE, method=method, path=path, protocol=codec.name, status=500, error=message)
            return error_response(codec, 500, None, message, None, extra)

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
        ids = {codec.request_id_header: body_request_id(f"{method} {path} {size}".encode())}
        return error_response(codec, 413, None, message, None, ids)

    def _unrepresentable(self, method: str, path: str, body: bytes, exc: Exception) -> MockResponse:
        codec = codec_for_path(path) or CODECS[0]
        param = None
        if isinstance(exc, RecursionError):
            message = "The request body is nested too deeply to process; send JSON nested fewer than 500 levels."
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
        return error_response(
            codec, 400, "invalid_request_error", message, param, {codec.request_id_header: body_request_id(body)}
        )


def _recorded_outcome(status: int, fields: dict[str, Any]) -> Outcome:
    """A recording's answer as the verdict reads it: a recorded exchange (or one being
    recorded) is what the test set up, as a script is; a request no recording answers is
    a 4xx nobody scripted (``x-mockllm-replay: miss``), and a proxy that could not reach
    its upstream is the mock's failure."""
    if fields.get("rejection") is not None:
        return Outcome.REJECTED
    if status >= 500 and fields.get("script_id") is None:
        return Outcome.MOCK_FAILURE
    return Outcome.SCRIPTED_ERROR if status >= 400 else Outcome.SCRIPTED
