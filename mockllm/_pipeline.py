"""One request through the engine, as named stages.

``answer`` is the path every request takes that no recording answered (``MockLLM.handle``
guards it and checks the body's size first)::

    route → read → expand held conversation → read the conversation → select → plan
          → cap → render → journal

- ``route``: the endpoints beside the model calls (models, token counting, embeddings;
  ``mockllm._wire.endpoints``), the routes of a protocol's held state (its codec's
  ``answer_held_route``), else the codec serving the path; a 404 naming the routes, a
  405 for a method other than POST.
- ``read``: the body as JSON (a 400 for what is not).
- ``expand_held``: a request naming a conversation the provider holds on its server is
  rebuilt into the whole of it, by the store its codec made (``WireCodec.held_conversations``;
  a 4xx in the provider's shape for an id the mock does not hold).
- ``read_conversation``: the codec's reading, after the checks the real provider makes.
- ``select``: the instruction that answers (tags, else a registered script).
- ``plan``: the reply plan (``mockllm._plan_builder``), with the request's attempt
  number; the fallback's for a reply past the output cap (estimated before a word is
  generated) or a stream shape its texts cannot take.
- ``cap``: scripted delays within ``limits.max_delay_ms``, then a latency profile's pacing.
- ``render``: the scripted error, the stream or the JSON body, in the codec's bytes;
  the reply is then held for the next request if the conversation is held.
- ``journal``: one entry a request (``MockLLM._record``), rejections included
  (``mockllm._stage_journal``).

Every stage reads and writes one ``Exchange`` (``mockllm._exchange``); a stage that answers early (a
rejection) returns the ``MockResponse`` and the rest do not run. No stage names a
protocol: what differs between providers is asked of the codec.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from mockllm._cutting import cut_problem
from mockllm._delivery import Delivery, delivery_for
from mockllm._exceptions import RequestRejected
from mockllm._exchange import Exchange, MockLLM
from mockllm._held import HeldNotFound, held_reply_id
from mockllm._journal import Outcome
from mockllm._journal_ring import recorded_request
from mockllm._latency import paced_by_profile, whole_reply_wait
from mockllm._limits import clip_text, estimated_output_bytes
from mockllm._mock_response import MockResponse
from mockllm._plan import Pacing
from mockllm._plan_builder import build_reply_plan
from mockllm._response_headers import JSON_TYPE, body_request_id, with_headers
from mockllm._selection import Selection, select_in_conversation
from mockllm._stage_journal import error_response, journal, not_found, rejected, served_or_rejected
from mockllm._usage import prompt_json, tokens_in
from mockllm._wire.endpoints import answer_endpoint
from mockllm._wire.reading import query_params
from mockllm._wire.registry import codec_for_path
from mockllm._wire.rendering import EventBatches

__all__ = ["answer", "cap", "expand_held", "journal", "plan", "read", "read_conversation", "render", "route", "select"]


def answer(mock: MockLLM, ex: Exchange) -> MockResponse:
    """The reply to ``ex``, through every stage (the module docstring)."""
    for early_stage in (route, read, expand_held, read_conversation):
        early = early_stage(mock, ex)
        if early is not None:
            return early
    select(mock, ex)
    plan(mock, ex)
    cap(mock, ex)
    return render(mock, ex)


# -- route ------------------------------------------------------------------------------


def route(mock: MockLLM, ex: Exchange) -> MockResponse | None:
    """Answer the routes that are not model calls; else set ``ex.codec``."""
    method, path = ex.method, ex.path
    endpoint = answer_endpoint(method, path, ex.headers, ex.body, lenient=mock.lenient)
    if endpoint is not None:
        mock._record(
            served_or_rejected(endpoint.status),
            method=method,
            path=path,
            protocol=None,
            status=endpoint.status,
            error=endpoint.error,
        )
        ids = {endpoint.request_id_header: body_request_id(ex.body)}
        return MockResponse(endpoint.status, with_headers(ids, content_type=JSON_TYPE), endpoint.body)
    for holder, store in mock._held_stores:
        held_route = holder.answer_held_route(method, path, ex.body, store)
        if held_route is not None:
            status, body = held_route
            mock._record(served_or_rejected(status), method=method, path=path, protocol=None, status=status)
            ids = {holder.request_id_header: body_request_id(ex.body)}
            return MockResponse(status, with_headers(ids, content_type=JSON_TYPE), body)
    codec = codec_for_path(path)
    if codec is None:
        return not_found(mock, method, path)
    ex.codec = codec = codec.for_request(path, query_params(ex.query) if ex.query else {})
    if method != "POST":
        return rejected(mock, ex, 405, f"{method} is not allowed on {path}; send a POST request.")
    return None


# -- read -------------------------------------------------------------------------------


def read(mock: MockLLM, ex: Exchange) -> MockResponse | None:
    """Parse the body as JSON into ``ex.sent`` (and ``ex.whole``)."""
    try:
        ex.sent = ex.whole = _parsed(ex.body)
    except ValueError as exc:
        message = f"The request body is not valid JSON: {exc}. Send a JSON object with the request parameters."
        return rejected(mock, ex, 400, message)
    ex.model = ex.codec.request_model(ex.sent)
    return None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (JSON numbers are finite)")


_BODY_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _parsed(body: bytes) -> Any:
    """``json.loads(body, parse_constant=_reject_constant)``, with one decoder made once
    (``json.loads`` makes a decoder per call when given an option)."""
    # A body opening an object in its first byte, its second no NUL, is UTF-8 by
    # ``json.detect_encoding``'s rules (no BOM starts with "{"): that check, in two slices.
    encoding = "utf-8" if body[:1] == b"{" and body[1:2] != b"\0" else json.detect_encoding(body)
    return _BODY_DECODER.decode(body.decode(encoding, "surrogatepass"))


# -- expand held conversation -----------------------------------------------------------


def expand_held(mock: MockLLM, ex: Exchange) -> MockResponse | None:
    """Rebuild a request that names a held conversation into the whole of it."""
    store = mock._held.get(ex.codec.name)
    if store is None:
        return None
    try:
        ex.whole, ex.rebuilt_from, hold = store.expand(ex.sent)
    except HeldNotFound as exc:
        mock._record(
            Outcome.REJECTED,
            method=ex.method,
            path=ex.path,
            protocol=ex.codec.name,
            status=exc.status,
            error=exc.message,
            model=ex.model,
        )
        headers = with_headers({ex.codec.request_id_header: body_request_id(ex.body)}, content_type=JSON_TYPE)
        return MockResponse(exc.status, headers, exc.body())
    ex.model = ex.codec.request_model(ex.whole)
    ex.store = store if hold else None
    return None


# -- read the conversation --------------------------------------------------------------


def read_conversation(mock: MockLLM, ex: Exchange) -> MockResponse | None:
    """The codec's neutral reading of the whole body, after the provider's checks."""
    codec = ex.codec
    try:
        # One reading of the body serves validation and selection alike.
        ex.conversation = codec.read_request(ex.whole, lenient=mock.lenient)
    except RequestRejected as exc:
        mock._record(
            Outcome.REJECTED,
            method=ex.method,
            path=ex.path,
            protocol=codec.name,
            request=recorded_request(ex.sent, ex.body),
            status=exc.status,
            error=exc.message,
            model=ex.model,
            body_bytes=len(ex.body),
        )
        headers = {codec.request_id_header: body_request_id(ex.body)}
        return error_response(codec, exc.status, exc.type, exc.message, exc.param, headers)
    return None


# -- select -----------------------------------------------------------------------------


def select(mock: MockLLM, ex: Exchange) -> None:
    """The instruction that answers: the conversation's tags, else a registered script."""
    assert ex.conversation is not None
    selection = select_in_conversation(ex.conversation, ex.codec.name)
    if not selection.chain_found and mock.scripts:
        found = mock.scripts.select(ex.conversation, ex.codec.name, model=ex.model, headers=ex.headers)
        if found is not None:
            selection, ex.script = found
    mock._note_step(selection, ex.script.id if ex.script is not None else None)
    ex.selection = selection


# -- plan -------------------------------------------------------------------------------


def plan(mock: MockLLM, ex: Exchange) -> None:
    """The reply plan, for this attempt of the request (``mockllm._attempts``); the
    fallback's when the scripted reply would pass the output cap (estimated before a
    word is generated) or take a stream shape its texts cannot."""
    selection, codec = ex.selection, ex.codec
    scripted_error = selection.instruction is not None and selection.instruction.error is not None
    ex.attempt, ex.attempt_rule = mock._attempts.attempt(ex.path, ex.headers, ex.body, scripted_error=scripted_error)
    ex.stream = codec.wants_stream(ex.whole)
    ex.selection = selection = _within_output_cap(mock, selection, ex.stream, ex.whole)
    prompt = prompt_json(ex.whole, codec.prompt_fields)  # serialised once: the token count, a held reply's id
    built = build_reply_plan(
        selection,
        tool_call_prefix=codec.tool_call_prefix,
        seed=mock.seed,
        attempt=ex.attempt,
        input_tokens=tokens_in(prompt),
        default_stream=mock.stream,
    )
    problem = cut_problem(built)
    if problem is not None:  # a shape the reply's texts cannot take: the fallback says why
        ex.selection = replace(selection, instruction=None, fallback_reason=problem)
        built = build_reply_plan(
            ex.selection, tool_call_prefix=codec.tool_call_prefix, seed=mock.seed, input_tokens=built.usage.input_tokens
        )
    if ex.store is not None:  # a later request continues from this id: it names the conversation
        built = replace(built, response_id=held_reply_id(built.response_id, prompt))
    ex.plan = built


def _within_output_cap(mock: MockLLM, selection: Selection, stream: bool, body: Any) -> Selection:
    """``selection``, or its fallback when the scripted reply would pass the output cap
    (estimated from the script, before a word is generated)."""
    if selection.instruction is None:
        return selection
    model = body.get("model")
    echo = len(model) if isinstance(model, str) else 0
    size = estimated_output_bytes(selection.instruction, stream=stream, echo_bytes=echo)
    cap = mock.limits.max_output_bytes
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


# -- cap --------------------------------------------------------------------------------


def cap(mock: MockLLM, ex: Exchange) -> None:
    """Every scripted delay within ``limits.max_delay_ms``; then a latency profile's
    pacing (``mockllm._latency``), and the plan told to ``mock.on_plan`` (metrics)."""
    cap_s = mock.limits.max_delay_ms / 1000
    pacing = ex.plan.pacing
    if pacing is not None and (pacing.first_chunk_s > cap_s or pacing.chunk_s > cap_s):
        ex.plan = replace(ex.plan, pacing=Pacing(min(pacing.first_chunk_s, cap_s), min(pacing.chunk_s, cap_s)))
        ex.warnings.append(
            f"timing shortened to at most {mock.limits.max_delay_ms:g} ms per delay (raise it with serve --max-delay-ms)"
        )
    instruction = ex.selection.instruction
    timing = instruction.timing if instruction is not None else None
    profile = timing.profile if timing is not None else None
    ex.plan = paced_by_profile(
        ex.plan, profile, mock.latency, model=ex.model, body=ex.body, cap_s=cap_s, load=mock.stream_load
    )
    if mock.on_plan is not None:
        mock.on_plan(ex.codec.name, ex.plan, ex.selection.fallback_reason is not None)


# -- render -----------------------------------------------------------------------------


def render(mock: MockLLM, ex: Exchange) -> MockResponse:
    """The reply in the codec's bytes: the scripted HTTP error, the stream or the JSON
    body; held for the next request where the conversation is held; journaled."""
    codec, plan, stream = ex.codec, ex.plan, ex.stream
    mock_headers = dict(plan.headers)
    mock_headers["x-mockllm-protocol"] = codec.name
    request_id = f"req_{plan.response_id}"
    mock_headers[codec.request_id_header] = request_id
    answered = Outcome.FALLBACK if ex.selection.fallback_reason is not None else Outcome.SCRIPTED

    error = plan.error
    if error is not None and (error.after_chunks is None or not stream):
        extra = dict(mock_headers)
        if error.retry_after_ms is not None:
            extra["retry-after-ms"] = str(error.retry_after_ms)
            extra["retry-after"] = str(max(1, -(-error.retry_after_ms // 1000)))
        journal(mock, ex, Outcome.SCRIPTED_ERROR, status=error.status, error=f"scripted error {error.status}")
        return error_response(codec, error.status, error.type, error.message, None, extra)

    whole: dict[str, Any] = ex.whole
    rendered = None
    if ex.store is not None and error is None:
        rendered = codec.render_json(plan, whole)
        ex.store.keep(whole, rendered)
    if stream:

        def failed(exc: Exception, sent: int) -> bytes:
            message = (
                f"mockllm failed while streaming this reply ({type(exc).__name__}: "
                f"{clip_text(exc, 300)}); this is a bug in mockllm, please report it "
                f"with request id {request_id}."
            )
            return codec.render_stream_error(500, None, message, sent)

        headers = with_headers(
            mock_headers, content_type=codec.stream_media_type, extra=[("cache-control", "no-cache")]
        )

        def events() -> EventBatches:
            return codec.render_stream(plan, whole)

        keep_alive = "keep_alive_every" in getattr(codec, "shape_knobs", ())
        delivery = delivery_for(plan, mock.limits.max_delay_ms / 1000, keep_alive=keep_alive)
        joined = None
        if plan.stream is None and plan.pacing is None and delivery is None and error is None:
            joined = codec.render_joined(plan, whole)  # one write: made at once, not event by event
        if joined is not None:
            reply = MockResponse.joined_stream(200, headers, joined, events)
        else:
            reply = MockResponse.stream(200, headers, events, pacing=plan.pacing, on_failure=failed)
        reply.delivery = delivery
        scripted = f"scripted mid-stream error after {error.after_chunks} events" if error else None
        outcome = Outcome.SCRIPTED_ERROR if error else answered
        journal(mock, ex, outcome, status=200, error=scripted, reply=True)
        return reply
    if rendered is None:
        rendered = codec.render_json(plan, whole)
    journal(mock, ex, answered, status=200, reply=True)
    reply = MockResponse(200, with_headers(mock_headers, content_type=JSON_TYPE), rendered)
    wait = whole_reply_wait(plan)  # a profile's generation time, waited before the one write
    if wait:
        reply.delivery = Delivery(None, None, stall_s=wait)
    return reply
