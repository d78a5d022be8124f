"""How the request stages (``mockllm._pipeline``) journal what they answered: a planned
reply's entry (``journal``, the last stage), and the refusals no script asked for, each
journaled as it is answered (``rejected``: a 4xx in the codec's error shape; ``not_found``:
an unknown route; ``served_or_rejected``: an endpoint's outcome). ``error_response`` is
the error reply in a codec's shape, which the engine's guards send too.
"""

from __future__ import annotations

from mockllm._exchange import Exchange, MockLLM
from mockllm._journal import Outcome
from mockllm._journal_ring import PlannedEntry
from mockllm._mock_response import MockResponse
from mockllm._reply_check import impossible_replies
from mockllm._response_headers import JSON_TYPE, body_request_id, with_headers
from mockllm._tool_check import scripted_tool_problems
from mockllm._wire.base import WireCodec
from mockllm._wire.encoding import dumps
from mockllm._wire.endpoints import ENDPOINT_ROUTES
from mockllm._wire.registry import CODECS

__all__ = ["error_response", "journal", "not_found", "rejected", "served_or_rejected"]


def journal(
    mock: MockLLM, ex: Exchange, outcome: Outcome, *, status: int, error: str | None = None, reply: bool = False
) -> None:
    """Record a planned reply: the selection, the attempt, what was sent and (``reply``)
    what the reply said. The entry is made only if the mock records at once
    (``MockLLM._record_planned``); else when the journal is read."""
    selection, plan = ex.selection, ex.plan
    fallback = selection.fallback_reason
    undeclared = scripted_tool_problems(plan, ex.codec, ex.whole) if fallback is None else []
    impossible = impossible_replies(plan, ex.codec.reply_contract(ex.whole)) if fallback is None else []
    planned = PlannedEntry(
        method=ex.method,
        path=ex.path,
        protocol=ex.codec.name,
        model=ex.model,
        stream=ex.stream,
        status=status,
        error=error,
        attempt=ex.attempt,
        attempt_rule=ex.attempt_rule,
        chain_id=selection.chain_id,
        chain_length=selection.chain_length,
        turn_index=selection.turn_index,
        instruction_id=selection.instruction_id,
        fallback_reason=fallback,
        warnings=[*selection.warnings, *ex.warnings],
        script_id=ex.script.id if ex.script is not None else None,
        explanation=selection.describe() if fallback is not None else None,
        rebuilt_from=ex.rebuilt_from,
        undeclared_tool_calls=undeclared,
        impossible_reply=impossible,
        sent=ex.sent,
        raw=ex.body,
        plan=plan if reply else None,
    )
    mock._record_planned(outcome, len(ex.body), planned, flagged=bool(undeclared or impossible))


def rejected(mock: MockLLM, ex: Exchange, status: int, message: str) -> MockResponse:
    """A 4xx no script asked for, journaled, in the codec's error shape."""
    codec = ex.codec
    mock._record(Outcome.REJECTED, method=ex.method, path=ex.path, protocol=codec.name, status=status, error=message)
    headers = {codec.request_id_header: body_request_id(ex.body)}
    return error_response(codec, status, "invalid_request_error", message, None, headers)


def served_or_rejected(status: int) -> Outcome:
    """How an endpoint's answer is journaled: served, or a 4xx nobody scripted."""
    return Outcome.SERVED if status < 400 else Outcome.REJECTED


def not_found(mock: MockLLM, method: str, path: str) -> MockResponse:
    """The 404 for a route the mock does not serve, naming those it does; journaled."""
    routes = [route for codec in CODECS for route in codec.routes] + list(ENDPOINT_ROUTES)
    message = f"Unknown route {method} {path}. The mock serves {', '.join(routes)}."
    mock._record(Outcome.REJECTED, method=method, path=path, protocol=None, status=404, error=message)
    # OpenAI's shape for an unknown URL: ``code`` is null (its 404 default,
    # ``model_not_found``, would send the reader after the wrong problem).
    body = dumps({"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}})
    return MockResponse(404, with_headers({}, content_type=JSON_TYPE), body.encode())


def error_response(
    codec: WireCodec,
    status: int,
    type: str | None,
    message: str | None,
    param: str | None,
    extra: dict[str, str],
) -> MockResponse:
    """An error reply in ``codec``'s shape: its error body, the protocol's error headers
    and ``extra`` (the request id); what every refusal, scripted error and guard sends."""
    body = codec.render_error(status, type, message, param)
    headers = {"x-mockllm-protocol": codec.name, **extra, **codec.error_headers(status, type)}
    return MockResponse(status, with_headers(headers, content_type=JSON_TYPE), body)
