"""The chain service's MCP tools: their schemas, argument checks and results.

Three tools (seed 001, Phases 3.4 and 6.5): ``am7_chain_execute`` runs a chain (and,
unless ``wait`` is false, answers when it ends), ``am7_chain_status`` and
``am7_chain_cancel`` take the ``planUri`` that execute answered with. Their input
schemas are the seed's; ``wait`` is this service's addition.

Results carry the same data twice, as MCP asks: readable text for a model, and
``structuredContent`` for a program. A refused call is a tool error (``isError``)
whose text is the service's ``detail`` and whose structured content is the
``{"status", "detail"}`` body the REST door answers with.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from harness.systems.chain import ChainPlan
from harness.systems.chain.export import step_summaries
from harness.systems.service.core import ChainRequest
from harness.systems.service.errors import BadRequest, ChainServiceError
from harness.systems.service.status import ChainStatus

__all__ = [
    "CANCEL",
    "EXECUTE",
    "STATUS",
    "TOOLS",
    "chain_result",
    "check_arguments",
    "error_result",
    "execute_request",
    "plan_uri_argument",
    "started_result",
    "status_result",
]

EXECUTE = "am7_chain_execute"
STATUS = "am7_chain_status"
CANCEL = "am7_chain_cancel"

_EXECUTE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "The chain query/objective"},
        "chatConfigUri": {"type": "string", "description": "am7:// URI of chat config"},
        "promptConfigUri": {"type": "string", "description": "am7:// URI of prompt config"},
        "maxSteps": {"type": "integer", "default": 20},
        "dataReferences": {
            "type": "array",
            "items": {"type": "string"},
            "description": "am7:// URIs of data sources for RAG steps",
        },
        "wait": {
            "type": "boolean",
            "default": True,
            "description": "true: answer when the chain ends; false: answer at once with the planUri "
            "(read it, subscribe to it, or call am7_chain_status)",
        },
    },
    "required": ["query", "chatConfigUri"],
}

TOOLS: dict[str, types.Tool] = {
    tool.name: tool
    for tool in (
        types.Tool(
            name=EXECUTE,
            description="Execute a dynamic LLM call chain with tool, RAG, LLM, and policy gate steps",
            input_schema=_EXECUTE_SCHEMA,
        ),
        types.Tool(
            name=STATUS,
            description="Get the current status of a running or completed chain",
            input_schema={
                "type": "object",
                "properties": {"planUri": {"type": "string", "description": "am7:// URI of the chain plan"}},
                "required": ["planUri"],
            },
        ),
        types.Tool(
            name=CANCEL,
            description="Cancel a running chain execution",
            input_schema={"type": "object", "properties": {"planUri": {"type": "string"}}, "required": ["planUri"]},
        ),
    )
}
"""The tools by name, as ``tools/list`` shows them."""


def check_arguments(name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """``arguments`` checked against tool ``name``'s schema; a ``BadRequest`` says what is wrong."""
    schema = TOOLS[name].input_schema
    data = dict(arguments or {})
    unknown = sorted(set(data) - set(schema["properties"]))
    if unknown:
        raise BadRequest(
            f"{name}: unknown argument(s) {', '.join(map(repr, unknown))}; it takes {', '.join(schema['properties'])}"
        )
    error = best_match(Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        raise BadRequest(f"{name}: {where + ': ' if where else ''}{error.message}")
    return data


def execute_request(arguments: Mapping[str, Any] | None) -> tuple[ChainRequest, bool]:
    """The chain request ``am7_chain_execute`` asks for, and whether to wait for its end."""
    data = check_arguments(EXECUTE, arguments)
    if not data["query"].strip():
        raise BadRequest(f"{EXECUTE}: query must not be empty")
    wait = data.pop("wait", True)
    data["planQuery"] = data.pop("query")
    return ChainRequest.parse(data), wait


def plan_uri_argument(name: str, arguments: Mapping[str, Any] | None) -> str:
    """The ``planUri`` argument of tool ``name`` (whose it is, the service checks)."""
    return str(check_arguments(name, arguments)["planUri"])


_MCP_NAMES = {"number": "stepNumber", "type": "stepType"}


def _step_summaries(plan: ChainPlan) -> list[dict[str, Any]]:
    """The doors' step summaries under this door's names (``stepNumber``, ``stepType``),
    without the tool's name."""
    return [
        {_MCP_NAMES.get(key, key): value for key, value in step.items() if key != "toolName"}
        for step in step_summaries(plan)
    ]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _plan_link(status: ChainStatus) -> types.ResourceLink:
    return types.ResourceLink(uri=status.plan_uri, name=f"chain plan {status.plan_id}", mime_type="application/json")


def chain_result(plan: ChainPlan, status: ChainStatus) -> types.CallToolResult:
    """What ``am7_chain_execute`` answers when the chain has ended: output, step summaries, planUri.

    A failed chain is a tool error; a cancelled, gated, step-limited or stalled one is
    not (it ran, and stopped as it should: ``status`` says how).
    """
    steps = _step_summaries(plan)
    lines = [f"Chain {status.status}: {status.plan_uri}"]
    if status.error:
        lines.append(f"Error: {status.error}")
    lines.append("Steps:")
    lines += [
        f"{s['stepNumber']}. [{s['label']}] {s['status']}{' (dynamic)' if s['dynamic'] else ''}: {s['summary']}"
        for s in steps
    ]
    if plan.output is not None:
        lines += ["Output:", _text(plan.output)]
    structured = {
        **status.as_json(),
        "output": plan.output,
        "totalExecutedSteps": plan.total_executed_steps,
        "steps": steps,
    }
    return types.CallToolResult(
        content=[types.TextContent(text="\n".join(lines)), _plan_link(status)],
        structured_content=structured,
        is_error=status.status == "failed",
    )


def started_result(status: ChainStatus) -> types.CallToolResult:
    """What ``am7_chain_execute`` answers at once when ``wait`` is false."""
    text = f"Chain started: {status.plan_uri}. Read or subscribe to that resource, or call {STATUS} with it as planUri."
    return types.CallToolResult(
        content=[types.TextContent(text=text), _plan_link(status)], structured_content=status.as_json()
    )


def status_result(status: ChainStatus) -> types.CallToolResult:
    """What ``am7_chain_status`` and ``am7_chain_cancel`` answer."""
    text = f"Chain {status.status}: step {status.step_number} of {status.total_steps}: {status.plan_uri}"
    if status.error:
        text += f"\nError: {status.error}"
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=status.as_json())


def error_result(error: ChainServiceError) -> types.CallToolResult:
    """A refused call, as a tool error: the detail as text, ``{status, detail}`` as structured content."""
    return types.CallToolResult(
        content=[types.TextContent(text=f"{error.detail} (status {error.status})")],
        structured_content=error.body(),
        is_error=True,
    )
