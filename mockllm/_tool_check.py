"""Scripted tool calls checked against the tools the request declared.

A real provider only calls a tool the request declared (OpenAI ``tools[].function``,
Anthropic ``tools[]``, Responses ``tools[]``), with arguments that fit its schema, and only
as the request's tool choice allows (``tool_choice: "none"`` calls nothing, a forced tool is
the one called, ``parallel_tool_calls: false`` one call a turn, ``"required"`` some call in
every reply). A script may say anything; a test whose script calls a tool the app never offered
passes while the app would never see that call in production. The engine records each
such call on the journal entry (``undeclared_tool_calls``) and strictness fails on it.

Arguments are validated with ``jsonschema`` (imported only when a request declares a
tool with a schema and the reply calls it).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from typing import Any

from mockllm._journal import UndeclaredToolCall
from mockllm._limits import clip_text
from mockllm._plan import ReplyPlan, ToolCallPart
from mockllm._usage import canonical_json
from mockllm._wire.base import WireCodec
from mockllm._wire.reading import ANY_TOOL, DeclaredTools, ToolChoice

__all__ = ["schema_problem", "scripted_tool_problems", "undeclared_tool_calls"]


def scripted_tool_problems(plan: ReplyPlan, codec: WireCodec, body: dict[str, Any]) -> list[UndeclaredToolCall]:
    """What of a scripted reply's tool calls the request does not allow, and a reply
    without one where the request requires a call (a scripted error's reply is no
    message, so it needs none)."""
    if plan.tool_calls:
        return undeclared_tool_calls(plan.tool_calls, codec.declared_tools(body), codec.tool_choice(body))
    choice = codec.tool_choice(body) if plan.error is None else ANY_TOOL
    if not choice.required:
        return []
    reason = f"the request's {choice.said} requires a tool call, and the scripted reply makes none"
    return [UndeclaredToolCall(name="", reason=reason, declared=sorted(codec.declared_tools(body)))]


def undeclared_tool_calls(
    calls: Iterable[ToolCallPart], declared: DeclaredTools, choice: ToolChoice = ANY_TOOL
) -> list[UndeclaredToolCall]:
    """The calls of ``calls`` the request's ``declared`` tools and tool ``choice`` do not
    allow."""
    found = []
    names = sorted(declared)
    calls = list(calls)
    if not choice.parallel and len(calls) > 1:
        reason = f"the request allows one tool call a turn ({choice.parallel_said}), and this turn makes {len(calls)}"
        found.append(UndeclaredToolCall(name=calls[1].name, reason=reason, declared=names))
    for call in calls:
        if choice.allowed is not None and call.name in declared and call.name not in choice.allowed:
            allows = ", ".join(map(repr, sorted(choice.allowed))) or "no tool call"
            reason = f"the request's {choice.said} allows {allows}"
            found.append(UndeclaredToolCall(name=call.name, reason=reason, declared=names))
            continue
        if call.name not in declared:
            offered = f"it declared {', '.join(map(repr, names))}" if names else "it declared no tools"
            found.append(
                UndeclaredToolCall(
                    name=call.name,
                    reason=f"the request did not declare a tool named {call.name!r} ({offered})",
                    declared=names,
                )
            )
            continue
        schema = declared[call.name]
        if schema is None:
            continue
        problem = schema_problem(call.arguments, schema)
        if problem is not None:
            found.append(
                UndeclaredToolCall(
                    name=call.name,
                    reason=f"the arguments of {call.name!r} break its declared schema: {problem}",
                    declared=names,
                )
            )
    return found


_VALIDATORS: dict[str, Any] = {}
"""Checked schemas by their JSON text -> a validator, or the text of why the schema is
invalid. Checking a schema against its metaschema costs milliseconds, and an agent loop
sends the same tools with every request."""
_VALIDATORS_MAX = 256
_CACHE_LOCK = threading.Lock()  # the server answers from several threads


def _validator(schema: dict[str, Any]) -> Any:
    """A validator for ``schema`` (cached), or a string saying why the schema is invalid."""
    import jsonschema  # only requests that declare a schema pay for the import

    try:
        key = canonical_json(schema)
    except (TypeError, ValueError):
        key = None
    found = _VALIDATORS.get(key) if key is not None else None
    if found is not None:
        return found
    try:
        validator_class = jsonschema.validators.validator_for(schema)
        validator_class.check_schema(schema)
        found = validator_class(schema)
    except jsonschema.SchemaError as exc:
        found = clip_text(f"the declared schema itself is invalid: {exc.message}", 300)
    if key is not None:
        with _CACHE_LOCK:
            if len(_VALIDATORS) >= _VALIDATORS_MAX:
                _VALIDATORS.pop(next(iter(_VALIDATORS)))
            _VALIDATORS[key] = found
    return found


_VERDICTS: dict[tuple[str, str, str], str | None] = {}
_VERDICTS_MAX = 1024


def schema_problem(
    text: str, schema: dict[str, Any], whole: str = "(the arguments)", not_json: str = "they are not JSON"
) -> str | None:
    """Why JSON ``text`` (a tool call's arguments, a structured reply) does not fit
    ``schema`` (the best error's path, ``whole`` for the value itself, and its message;
    or why the schema is invalid), or ``not_json`` and why; None when it fits. The one
    JSON Schema check, for tool arguments and a scripted reply's structured output
    (``mockllm._reply_check``). The answers are cached: the same request (a retry, a
    replayed test, an agent loop's next turn) asks again."""
    try:
        key = (canonical_json(schema), text, whole)
    except (TypeError, ValueError):
        return _checked(text, schema, whole, not_json)
    if key in _VERDICTS:
        return _VERDICTS[key]
    found = _checked(text, schema, whole, not_json)
    with _CACHE_LOCK:
        if len(_VERDICTS) >= _VERDICTS_MAX:
            _VERDICTS.pop(next(iter(_VERDICTS)))
        _VERDICTS[key] = found
    return found


def _checked(text: str, schema: dict[str, Any], whole: str, not_json: str) -> str | None:
    import jsonschema

    try:
        value = json.loads(text)
    except ValueError as exc:
        return f"{not_json} ({exc})"
    validator = _validator(schema)
    if isinstance(validator, str):
        return validator
    if validator.is_valid(value):
        return None
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "".join(f"[{p!r}]" for p in error.absolute_path) or whole
    return clip_text(f"{where}: {error.message}", 300)
