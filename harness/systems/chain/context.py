"""The chain context: step outputs by name, read by later steps as ``{{name}}`` and
saved as MCP context blocks.

``substitute`` fills a step's inputs from the context: a missing name is an error
naming it, a lone ``{{name}}`` keeps the value's own type, and ``{{name.field}}``
reads a field of an object (``{{systemCharacter.name}}``). ``save_context`` writes one ephemeral resource block per name, at
``am7://chain/<plan id>/context/<name>``; ``restore_context`` reads such text back
(and, for plans saved before the block format, plain JSON objects too).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic_core import to_jsonable_python

from harness.systems.chain.errors import PlanExecutionError
from harness.systems.chain.mcp_context import STEP_OUTPUT_SCHEMA, McpContextBuilder, parse_context
from harness.systems.chain.uris import Am7Uri

__all__ = ["VARIABLE", "context_uri", "restore_context", "save_context", "substitute"]

VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")
"""A reference to the chain context: ``{{name}}``."""


def substitute(value: Any, context: Mapping[str, Any], step_number: int) -> Any:
    """``value`` (a string, or lists and dicts of them) with every ``{{name}}`` replaced
    from ``context``; step ``step_number`` fails when a name is missing."""

    def lookup(name: str) -> Any:
        if name in context:
            return context[name]
        # {{record.field}}: a field of an object in the context (a character's name, say).
        head, *path = name.split(".")
        value, found = context.get(head), head in context
        for key in path:
            if not (found and isinstance(value, Mapping) and key in value):
                found = False
                break
            value = value[key]
        if not found:
            known = ", ".join(sorted(context)) or "none yet"
            raise PlanExecutionError(f"step {step_number}: the chain context has no {{{{{name}}}}} (known: {known})")
        return value

    if isinstance(value, str):
        whole = VARIABLE.fullmatch(value.strip())
        if whole:  # a lone reference keeps the value's own type
            return lookup(whole.group(1))
        return VARIABLE.sub(lambda m: str(lookup(m.group(1))), value)
    if isinstance(value, list):
        return [substitute(v, context, step_number) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, context, step_number) for k, v in value.items()}
    return value


def context_uri(plan_id: str, name: str) -> str:
    return str(Am7Uri("chain", plan_id, f"context/{name}"))


def save_context(context: Mapping[str, Any], plan_id: str) -> str:
    """``context`` as MCP context blocks; values become JSON (objects through pydantic)."""
    builder = McpContextBuilder()
    for name, value in context.items():
        builder.add_resource(
            context_uri(plan_id, name),
            STEP_OUTPUT_SCHEMA,
            {"name": name, "value": to_jsonable_python(value, fallback=str)},
            ephemeral=True,
        )
    return builder.build()


def restore_context(text: str | None) -> dict[str, Any]:
    """The context saved by ``save_context`` (empty for ``None`` or ``""``).

    A ``ValueError`` names what is wrong when ``text`` is neither block format nor a
    JSON object.
    """
    if not text or not text.strip():
        return {}
    if text.lstrip().startswith("{"):
        try:
            legacy = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"chainContextJson is neither MCP context blocks nor a JSON object: {exc}") from exc
        if not isinstance(legacy, dict):
            raise ValueError("chainContextJson holds JSON that is not an object")
        return legacy
    parsed = parse_context(text)
    if not parsed.blocks:
        raise ValueError(f"chainContextJson holds no <mcp:context> block: {text[:80]!r}")
    context: dict[str, Any] = {}
    for block in parsed.blocks:
        if block.schema != STEP_OUTPUT_SCHEMA or not isinstance(block.data, dict):
            continue
        name = block.data.get("name") or (block.uri or "").rsplit("/", 1)[-1]
        context[name] = block.data.get("value")
    return context
