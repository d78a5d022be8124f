"""What the codecs share for reading a request: its URL query, the tools it declares and
which of them it lets the model call (``tool_choice`` and its kin), and what it holds
the reply to (``ReplyContract``: the output-token limit, a structured-output format)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

__all__ = [
    "ANY_TOOL",
    "UNBOUNDED",
    "DeclaredTools",
    "OutputFormat",
    "ReplyContract",
    "ToolChoice",
    "gemini_reply_contract",
    "gemini_tool_choice",
    "openai_format",
    "openai_tool_choice",
    "query_params",
    "reply_contract",
    "schema_format",
    "tool_choice",
    "tools_declared",
]


def query_params(query: str) -> dict[str, str]:
    """The parameters of a URL query string (the last value of a repeated name)."""
    return dict(parse_qsl(query, keep_blank_values=True))


DeclaredTools = dict[str, Any]
"""A request's declared tools: name -> the JSON schema of its arguments (None: no schema)."""


def tools_declared(items: Any, schema_field: str, *, nested: str | None = None) -> DeclaredTools:
    """The named tools of a request's ``tools`` list: each item's ``name`` and
    ``schema_field`` (inside ``item[nested]`` when the item has that object)."""
    declared: DeclaredTools = {}
    if not isinstance(items, list):
        return declared
    for item in items:
        if not isinstance(item, dict):
            continue
        if nested is not None and isinstance(item.get(nested), dict):
            item = item[nested]
        name = item.get("name")
        if isinstance(name, str):
            schema = item.get(schema_field)
            declared[name] = schema if isinstance(schema, dict) else None
    return declared


@dataclass(frozen=True)
class ToolChoice:
    """Which declared tools a request lets the model call. ``allowed``: their names (None:
    any declared tool; empty: none, as ``tool_choice: "none"`` says); ``parallel``: whether
    one turn may carry several calls; ``required``: whether every reply calls a tool
    (``"required"``, a forced tool). ``said`` and ``parallel_said`` quote the request's
    fields, for the reason a scripted reply breaks them."""

    allowed: frozenset[str] | None = None
    said: str = ""
    parallel: bool = True
    parallel_said: str = ""
    required: bool = False


ANY_TOOL = ToolChoice()
"""A request that says nothing of tool choice: the model may call any declared tool."""


def tool_choice(
    allowed: frozenset[str] | None,
    field: str,
    value: Any,
    *,
    parallel: bool = True,
    parallel_said: str = "",
    required: bool = False,
) -> ToolChoice:
    """A ``ToolChoice`` quoting ``field=value`` as the request spelled it; ``ANY_TOOL``
    itself for a request that restricts nothing (most do: nothing made per request)."""
    if allowed is None and parallel and not required:
        return ANY_TOOL
    quoted = allowed is not None or required
    said = f"{field}={json.dumps(value, separators=(',', ':'), default=str)[:200]}" if quoted else ""
    return ToolChoice(allowed, said, parallel, parallel_said, required)


def _named(item: Any) -> str | None:
    """The tool an OpenAI choice item names: ``name``, or ``function.name`` / ``custom.name``."""
    if not isinstance(item, dict):
        return None
    for nested in ("function", "custom"):
        if isinstance(item.get(nested), dict):
            item = item[nested]
            break
    name = item.get("name")
    return name if isinstance(name, str) else None


def openai_tool_choice(body: dict[str, Any]) -> ToolChoice:
    """Chat Completions' and Responses' ``tool_choice`` (``"none"``, a function or custom
    tool by name, ``allowed_tools``; Chat's legacy ``function_call``) and
    ``parallel_tool_calls``. A hosted tool's choice (``file_search``…) restricts nothing
    here: the mock does not script hosted tools."""
    field = "tool_choice" if "tool_choice" in body else "function_call"
    value = body.get(field)
    allowed: frozenset[str] | None = None
    required = value == "required"
    if value == "none":
        allowed = frozenset()
    elif isinstance(value, dict) and value.get("type") == "allowed_tools":
        listed = value.get("allowed_tools", value)
        tools = listed.get("tools") if isinstance(listed, dict) else None
        names = [_named(tool) for tool in tools] if isinstance(tools, list) else []
        allowed = frozenset(name for name in names if name is not None)
        required = isinstance(listed, dict) and listed.get("mode") == "required"
    elif isinstance(value, dict) and value.get("type", "function") in ("function", "custom"):
        name = _named(value)
        allowed = frozenset({name}) if name is not None else None
        required = allowed is not None
    parallel = body.get("parallel_tool_calls") is not False
    return tool_choice(
        allowed, field, value, parallel=parallel, parallel_said="parallel_tool_calls=false", required=required
    )


def gemini_tool_choice(calling: Any) -> ToolChoice:
    """Gemini's ``functionCallingConfig`` (either spelling): ``mode: NONE`` allows no call,
    ``allowedFunctionNames`` those functions only."""
    if not isinstance(calling, dict):
        return ANY_TOOL
    mode = calling.get("mode")
    mode = mode.upper() if isinstance(mode, str) else None
    names = calling.get("allowedFunctionNames", calling.get("allowed_function_names"))
    allowed = frozenset(name for name in names if isinstance(name, str)) if isinstance(names, list) else None
    if mode == "NONE":
        allowed = frozenset()
    return tool_choice(allowed, "toolConfig.functionCallingConfig", calling, required=mode == "ANY")


class OutputFormat:
    """A structured-output contract the provider guarantees: the reply's text is JSON
    (``json_object``: a JSON object) that fits ``schema`` (None: any JSON); ``said``
    quotes the request's field."""

    # A plain class: a NamedTuple or a dataclass costs millions of instructions to create
    # when the module loads, in every process that serves; made only for a request that
    # asks for structured output.
    __slots__ = ("json_object", "said", "schema")

    def __init__(self, schema: dict[str, Any] | None, said: str, json_object: bool = False) -> None:
        self.schema, self.said, self.json_object = schema, said, json_object


ReplyContract = tuple[int | None, str, OutputFormat | None]
"""What a request holds the reply to: at most this many output tokens (None: no limit),
the field that says so (``max_tokens``), and the ``OutputFormat`` its text keeps (None:
free text). A tuple: made for most requests (Anthropic's all name a limit)."""

UNBOUNDED: ReplyContract = (None, "", None)
"""A request that sets no output limit and no structured output."""


def reply_contract(limit: Any, limit_said: str, output_format: OutputFormat | None = None) -> ReplyContract:
    """The contract of a request whose limit field ``limit_said`` holds ``limit`` (a
    positive whole number; else no limit: a negative one is Ollama's "unlimited", and
    what else a provider refuses, its checks refuse); ``UNBOUNDED`` itself for one that
    sets nothing."""
    if type(limit) is int and limit > 0:
        return (limit, limit_said, output_format)
    return UNBOUNDED if output_format is None else (None, limit_said, output_format)


def openai_format(value: Any, field: str, nested: str | None = "json_schema") -> OutputFormat | None:
    """OpenAI's structured output at ``field``: ``{"type": "json_schema", "json_schema":
    {"strict": true, "schema": ...}}`` (Responses: ``nested=None``, the schema beside the
    type); ``{"type": "json_object"}``. A json_schema that is not strict is no guarantee
    of OpenAI's (its text may break the schema), so it holds nothing here."""
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind == "json_object":
        return OutputFormat(None, f'{field}={{"type":"json_object"}}', json_object=True)
    spec = value.get(nested) if nested is not None else value
    if kind != "json_schema" or not isinstance(spec, dict) or spec.get("strict") is not True:
        return None
    schema = spec.get("schema")
    return OutputFormat(schema, f"{field}'s strict json_schema") if isinstance(schema, dict) else None


def schema_format(value: Any, said: str, *, bare: bool = False) -> OutputFormat | None:
    """A format given as a JSON schema at ``said``: ``{"type": "json_schema", "schema":
    ...}`` (Anthropic's), or (``bare``: Ollama's ``format``) the schema itself or
    ``"json"`` (any JSON); None for anything else."""
    if bare and value == "json":
        return OutputFormat(None, f'{said}="json"')
    if isinstance(value, dict) and value.get("type") == "json_schema" and isinstance(value.get("schema"), dict):
        return OutputFormat(value["schema"], f"{said}'s json_schema")
    if bare and isinstance(value, dict) and value:
        return OutputFormat(value, f"{said}'s schema")
    return None


def gemini_reply_contract(config: Any, field: Any, as_json_schema: Any) -> ReplyContract:
    """Gemini's ``generationConfig`` (either spelling, read by ``field``): its
    ``maxOutputTokens``, and with ``responseMimeType: application/json`` its
    ``responseJsonSchema`` or ``responseSchema`` (OpenAPI, read by ``as_json_schema``)."""
    if not isinstance(config, dict):
        return UNBOUNDED
    found = None
    if field(config, "responseMimeType") == "application/json":
        schema = field(config, "responseJsonSchema")
        said = "generationConfig.responseJsonSchema"
        if schema is None and field(config, "responseSchema") is not None:
            schema, said = as_json_schema(field(config, "responseSchema")), "generationConfig.responseSchema"
        if not isinstance(schema, dict):
            schema, said = None, "generationConfig.responseMimeType=application/json"
        found = OutputFormat(schema, said)
    return reply_contract(field(config, "maxOutputTokens"), "generationConfig.maxOutputTokens", found)
