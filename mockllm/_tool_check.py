"""Scripted tool calls checked against the tools the request declared.

A real provider only calls a tool the request declared (OpenAI ``tools[].function``,
Anthropic ``tools[]``, Responses ``tools[]``) and, with a schema, with arguments that fit
it. A script may say anything; a test whose script calls a tool the app never offered
passes while the app would never see that call in production. The engine records each
such call on the journal entry (``undeclared_tool_calls``) and strictness fails on it.

Arguments are validated with ``jsonschema`` (imported only when a request declares a
tool with a schema and the reply calls it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from mockllm._journal import UndeclaredToolCall
from mockllm._limits import clip_text
from mockllm._plan import ToolCallPart
from mockllm._wire.base import DeclaredTools

__all__ = ["undeclared_tool_calls"]


def undeclared_tool_calls(calls: Iterable[ToolCallPart], declared: DeclaredTools) -> list[UndeclaredToolCall]:
    """The calls of ``calls`` the request's ``declared`` tools do not allow."""
    found = []
    names = sorted(declared)
    for call in calls:
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
        problem = _schema_problem(call.arguments, schema)
        if problem is not None:
            found.append(
                UndeclaredToolCall(
                    name=call.name,
                    reason=f"the arguments of {call.name!r} break its declared schema: {problem}",
                    declared=names,
                )
            )
    return found


def _schema_problem(arguments: str, schema: dict[str, Any]) -> str | None:
    """Why ``arguments`` (JSON text) does not fit ``schema``; None when it does."""
    import jsonschema  # only requests that declare a schema pay for the import

    try:
        value = json.loads(arguments)
    except ValueError as exc:
        return f"they are not JSON ({exc})"
    try:
        validator_class = jsonschema.validators.validator_for(schema)
        validator_class.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return clip_text(f"the declared schema itself is invalid: {exc.message}", 300)
    error = jsonschema.exceptions.best_match(validator_class(schema).iter_errors(value))
    if error is None:
        return None
    where = "".join(f"[{p!r}]" for p in error.absolute_path) or "(the arguments)"
    return clip_text(f"{where}: {error.message}", 300)
