"""Google Gemini ``generateContent`` and ``streamGenerateContent``, streamed and not.

Served on the Google AI path (``/v1beta/models/{model}:generateContent``) and the
Vertex AI path (``/v1/projects/{p}/locations/{l}/publishers/google/models/{model}:…``);
the model and the streaming choice are in the path, so the engine hands this codec the
path (``for_request``) and it answers with a codec bound to them. ``:streamGenerateContent``
with ``alt=sse`` streams server-sent events (what ``google-genai`` asks for); without it,
the JSON array Gemini streams by default, one response object per element.

The conversation is ``contents``: role ``user`` or ``model``; a model content's
``functionCall`` parts are one turn's tool calls, a user content of ``functionResponse``
parts answers them (a tool message, not a new user message). Our choices:

- A reply's parts keep the scripted order; reasoning goes first as a ``thought`` part,
  only when ``generationConfig.thinkingConfig.includeThoughts`` asks for it.
- Function calls carry an ``id`` (the API's optional ``FunctionCall.id``), so the mock
  places turns by the ids clients send back; each streams whole, in one chunk (a
  stream shape's ``arguments`` cuts have nothing to cut here).
- The last chunk carries ``finishReason`` (``STOP`` for a tool call too, as Gemini
  sends it) and the full ``usageMetadata``.
- The API key (``x-goog-api-key`` or ``key=``) is accepted, never checked.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from itertools import chain
from typing import Any

from mockllm._conversation import Conversation, Row, listed_conversation, user_turn
from mockllm._exceptions import RequestRejected
from mockllm._plan import ReplyPlan, TextPart
from mockllm._wire.deltas import DeltaRun, StreamItems, expanded, joined
from mockllm._wire.encoding import SSE_MEDIA_TYPE, dumps
from mockllm._wire.reading import DeclaredTools, ReplyContract, ToolChoice, gemini_reply_contract, gemini_tool_choice
from mockllm._wire.rendering import EventBatches, StreamRenderer, first_events

__all__ = ["GEMINI_PATH", "GeminiCodec", "gemini", "gemini_error_body"]

GEMINI_PATH = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
_GENERATE = ("generateContent", "streamGenerateContent")
_ROLES = ("user", "model", "function")

_FINISH_REASONS = {
    "end_turn": "STOP",
    "tool_use": "STOP",
    "max_tokens": "MAX_TOKENS",
    "stop_sequence": "STOP",
    "content_filter": "SAFETY",
    "refusal": "SAFETY",
}

# status -> (google.rpc status, message) when a script names only the HTTP status.
_STATUS = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("UNAUTHENTICATED", "Request had invalid authentication credentials."),
    403: ("PERMISSION_DENIED", "The caller does not have permission."),
    404: ("NOT_FOUND", "Requested entity was not found."),
    405: ("INVALID_ARGUMENT", "Method not allowed."),
    409: ("ABORTED", "The operation was aborted."),
    413: ("INVALID_ARGUMENT", "Request payload size exceeds the limit."),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    499: ("CANCELLED", "The operation was cancelled."),
    500: (
        "INTERNAL",
        "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
    ),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    504: ("DEADLINE_EXCEEDED", "Deadline expired before operation could complete."),
}


def _error_object(status: int, type: str | None, message: str | None) -> dict[str, Any]:
    default_status, default_message = _STATUS.get(
        status, ("INTERNAL", _STATUS[500][1]) if status >= 500 else ("FAILED_PRECONDITION", f"HTTP {status}.")
    )
    # A scripted ``type`` names the google.rpc status (``RESOURCE_EXHAUSTED``…).
    return {"error": {"code": status, "message": message or default_message, "status": type or default_status}}


def gemini_error_body(status: int, type: str | None, message: str | None) -> bytes:
    """Gemini's error body: ``{"error": {"code", "message", "status"}}``."""
    return dumps(_error_object(status, type, message)).encode()


def _reject(message: str) -> RequestRejected:
    return RequestRejected(message, status=400, type="INVALID_ARGUMENT")


def _json_schema(schema: Any) -> Any:
    """Gemini's OpenAPI-style schema as JSON Schema: ``"type": "OBJECT"`` -> ``"object"``."""
    if isinstance(schema, dict):
        return {k: v.lower() if k == "type" and isinstance(v, str) else _json_schema(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_json_schema(item) for item in schema]
    return schema


def field(obj: dict[str, Any], name: str) -> Any:
    """``obj``'s field ``name`` (camelCase), or its snake_case spelling: Gemini reads
    both, as protobuf JSON does (``google-genai`` sends some objects in snake_case)."""
    value = obj.get(name)
    if value is None:
        value = obj.get(_snake(name))
    return value


@functools.cache
def _snake(name: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), name)


def _parts(content: dict[str, Any]) -> list[dict[str, Any]]:
    parts = content.get("parts")
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _call_ids(position: int, parts: list[dict[str, Any]], key: str) -> tuple[str, ...]:
    """The ids of a content's function calls (or responses): the API's ``id`` when
    given, else the position of the part among its kind (Gemini pairs by order)."""
    ids = []
    for n, part in enumerate(field(p, key) for p in parts if isinstance(field(p, key), dict)):
        call_id = part.get("id")
        ids.append(str(call_id) if call_id else f"{position}#{n}")
    return tuple(ids)


def _read_content(position: int, content: dict[str, Any], out: list[Row]) -> None:
    """A ``model`` content's ``functionCall`` parts are its calls; a user content's
    ``functionResponse`` parts answer the content before (a tool message), its ``text``
    parts are its words."""
    if content.get("role", "user") not in _ROLES:
        return
    parts = _parts(content)
    if not parts:
        return  # no parts: nothing a reader can place (strictly, a 400)
    if content.get("role") == "model":
        out.append(("assistant", "", _call_ids(position, parts, "functionCall"), (), position))
    else:
        user_turn(out, position, _call_ids(position - 1, parts, "functionResponse"), parts)


def _usage(plan: ReplyPlan) -> dict[str, int]:
    return {
        "promptTokenCount": plan.usage.input_tokens,
        "candidatesTokenCount": plan.usage.output_tokens,
        "totalTokenCount": plan.usage.total_tokens,
    }


def _wants_thoughts(body: dict[str, Any]) -> bool:
    config = field(body, "generationConfig")
    thinking = field(config, "thinkingConfig") if isinstance(config, dict) else None
    return isinstance(thinking, dict) and field(thinking, "includeThoughts") is True


def _function_call(part: Any) -> dict[str, Any]:
    args = json.loads(part.arguments) if part.arguments.strip() else {}
    return {"functionCall": {"id": part.id, "name": part.name, "args": args}}


class GeminiCodec(StreamRenderer):
    """The Gemini ``generateContent`` protocol, as ``google-genai`` reads it; bound to a
    request's model and streaming choice by ``for_request``."""

    name = "gemini"
    aliases: tuple[str, ...] = ("google", "google-genai", "generate-content")
    route = ":generateContent"
    routes: tuple[str, ...] = (
        "POST /v1beta/models/{model}:generateContent",
        "POST /v1beta/models/{model}:streamGenerateContent",
        "POST /v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent",
    )
    request_id_header = "x-request-id"
    tool_call_prefix = "fc"
    prompt_fields: tuple[str, ...] = ("systemInstruction", "contents", "tools")
    # Text and thoughts are cut as the shape says (``text``, ``empty_first_delta``); a
    # function call always goes whole (``args`` is an object), so ``arguments`` has
    # nothing to cut; no keep-alive comments: the JSON array has none, and google-genai's
    # SSE reader parses every line as JSON (Gemini sends no comments).
    shape_knobs: tuple[str, ...] = ()

    def __init__(self, model: str | None = None, stream: bool = False, sse: bool = True) -> None:
        self.model = model
        self.stream = stream
        self.sse = sse

    def matches(self, path: str) -> bool:
        found = GEMINI_PATH.search(path)
        return found is not None and found.group("method") in _GENERATE

    def for_request(self, path: str, query: Mapping[str, str]) -> GeminiCodec:
        found = GEMINI_PATH.search(path.rstrip("/"))
        if found is None:
            return self
        stream = found.group("method") == "streamGenerateContent"
        return GeminiCodec(found.group("model"), stream, query.get("alt") == "sse")

    @property
    def stream_media_type(self) -> str:
        return SSE_MEDIA_TYPE if self.sse else "application/json; charset=UTF-8"

    def request_model(self, body: Any) -> str | None:
        """The path's model name, after ``models/`` (``gemini-2.0-flash``): what
        ``generate_content(model=...)`` was given, less the ``models/`` the SDK adds."""
        return self.model

    def read(self, body: Any) -> Conversation:
        """The neutral conversation: ``systemInstruction``, then ``contents``."""
        if not isinstance(body, dict):
            return Conversation(())
        return listed_conversation(bool(field(body, "systemInstruction")), body.get("contents"), _read_content)

    def declared_tools(self, body: dict[str, Any]) -> DeclaredTools:
        """``tools[].functionDeclarations[]`` by ``name``, with ``parametersJsonSchema`` (a
        JSON schema) or ``parameters`` (Gemini's OpenAPI subset, whose upper-case type
        names are read as JSON Schema's)."""
        declared: DeclaredTools = {}
        tools = field(body, "tools")
        for tool in tools if isinstance(tools, list) else []:
            functions = field(tool, "functionDeclarations") if isinstance(tool, dict) else None
            for function in functions if isinstance(functions, list) else []:
                if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                    continue
                schema = field(function, "parametersJsonSchema")
                if schema is None:
                    schema = _json_schema(field(function, "parameters"))
                declared[function["name"]] = schema if isinstance(schema, dict) else None
        return declared

    def tool_choice(self, body: dict[str, Any]) -> ToolChoice:
        """``toolConfig.functionCallingConfig``: ``mode: NONE``, or ``allowedFunctionNames``."""
        config = field(body, "toolConfig")
        return gemini_tool_choice(field(config, "functionCallingConfig") if isinstance(config, dict) else None)

    def reply_contract(self, body: dict[str, Any]) -> ReplyContract:
        return gemini_reply_contract(field(body, "generationConfig"), field, _json_schema)

    def read_request(self, body: Any, *, lenient: bool) -> Conversation:
        """Reject what Gemini answers with a 400 ``INVALID_ARGUMENT``; else ``read(body)``.

        ``lenient`` skips only the function call / response pairing checks."""
        if not isinstance(body, dict):
            raise _reject("Invalid JSON payload received. Expected an object (GenerateContentRequest).")
        contents = body.get("contents")
        if not contents:
            raise _reject("* GenerateContentRequest.contents: contents is not specified\n")
        if not isinstance(contents, list):
            raise _reject(
                f'Invalid JSON payload received. Unknown name "contents": Proto field is not repeating, '
                f"cannot start list. Got {dumps(contents)[:60]}."
            )
        for index, content in enumerate(contents):
            where = f"GenerateContentRequest.contents[{index}]"
            if not isinstance(content, dict):
                raise _reject(f"Invalid JSON payload received. {where}: expected an object (Content).")
            if content.get("role", "user") not in _ROLES:
                raise _reject("Please use a valid role: user, model.")
            if not _parts(content):
                raise _reject(f"* {where}.parts: contents.parts must not be empty.\n")
        conversation = self.read(body)
        if not lenient:
            _check_turns(contents)
        return conversation

    def wants_stream(self, body: dict[str, Any]) -> bool:
        """Whether the path was ``:streamGenerateContent``."""
        return self.stream

    def _parts_of(self, plan: ReplyPlan, body: dict[str, Any]) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        if plan.reasoning and _wants_thoughts(body):
            parts.append({"text": plan.reasoning, "thought": True})
        for part in plan.parts:
            parts.append({"text": part.text} if isinstance(part, TextPart) else _function_call(part))
        return parts

    def _response(self, plan: ReplyPlan, parts: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "candidates": [
                {
                    "content": {"parts": parts, "role": "model"},
                    "finishReason": _FINISH_REASONS.get(plan.stop_reason, "STOP"),
                    "index": 0,
                }
            ],
            "usageMetadata": _usage(plan),
            "modelVersion": self.model,
            "responseId": plan.response_id,
        }

    def render_json(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes:
        """The ``GenerateContentResponse``."""
        return dumps(self._response(plan, self._parts_of(plan, body))).encode()

    def render_stream(self, plan: ReplyPlan, body: dict[str, Any]) -> EventBatches:
        """One ``GenerateContentResponse`` per text delta or function call, then the
        finishing one; cut after ``plan.error.after_chunks`` by an error object."""
        frames = expanded(self._chunks(plan, body), plan)
        if not self.sse:
            frames = _open_array(frames)
        error = plan.error
        if error is not None and error.after_chunks is not None:
            failure = self.render_stream_error(error.status, error.type, error.message, error.after_chunks)
            return chain(first_events(frames, error.after_chunks), [[failure]])
        return chain(frames, [[b"\n]"]] if not self.sse else [])

    def render_joined(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes | None:
        """``render_stream``'s bytes made at once (``mockllm._wire.deltas.joined``)."""
        if self.sse:
            return joined(self._chunks(plan, body), plan)
        whole = joined(chain(self._chunks(plan, body), [[b"\n]"]]), plan)
        return None if whole is None else b"[" + whole[_SEPARATOR_BYTES:]  # as ``_open_array`` opens it

    def _chunks(self, plan: ReplyPlan, body: dict[str, Any]) -> StreamItems:
        # Each event is framed as it is made (SSE ``data:`` line, or a JSON array's
        # separator): the text around a delta is built once per reply, as in openai_chat.
        opener, closer = ("data: ", "\r\n\r\n") if self.sse else (_ARRAY_SEPARATOR, "")
        before = opener + '{"candidates":[{"content":{"parts":'
        after = (
            f',"role":"model"}},"index":0}}],"modelVersion":{dumps(self.model)},'
            f'"responseId":{dumps(plan.response_id)}}}' + closer
        )
        thought = bool(plan.reasoning) and _wants_thoughts(body)
        texts: list[tuple[str, str]] = [(plan.reasoning or "", ',"thought":true')] if thought else []
        for part in plan.parts:
            if isinstance(part, TextPart):
                texts.append((part.text, ""))
                continue
            yield from _text_chunks(texts, before, after)
            texts = []
            yield [(before + "[" + dumps(_function_call(part)) + "]" + after).encode()]
        yield from _text_chunks(texts, before, after)
        final = self._response(plan, [])
        final["candidates"][0]["content"] = {"role": "model"}
        yield [(opener + dumps(final) + closer).encode()]

    def render_stream_error(self, status: int, type: str | None, message: str | None, sequence: int) -> bytes:
        """The error object as the stream's next element, what ``google-genai`` raises
        ``APIError`` for (``ServerError`` / ``ClientError`` by its ``code``)."""
        data = dumps(_error_object(status, type, message)).encode()
        if self.sse:
            return b"data: " + data + b"\r\n\r\n"
        return (b"[" if sequence == 0 else b"\n,\r\n") + data + b"\n]"

    def render_error(self, status: int, type: str | None, message: str | None, param: str | None = None) -> bytes:
        """``{"error": {"code", "message", "status"}}``; Gemini has no ``param``."""
        return gemini_error_body(status, type, message)


_ARRAY_SEPARATOR = "\n,\r\n"
_SEPARATOR_BYTES = len(_ARRAY_SEPARATOR)


def _open_array(chunks: EventBatches) -> EventBatches:
    """The array stream: its first element opens the array instead of following a comma."""
    first = True
    for batch in chunks:
        if first and batch:
            batch = [b"[" + batch[0][_SEPARATOR_BYTES:], *batch[1:]]
            first = False
        yield batch


def _text_chunks(texts: list[tuple[str, str]], before: str, after: str) -> StreamItems:
    return [DeltaRun(before + '[{"text":', flag + "}]" + after, text) for text, flag in texts]


def _check_turns(contents: list[dict[str, Any]]) -> None:
    """Gemini's ordering rules for function calling: a function response turn follows a
    function call turn right away, with as many responses as there were calls."""
    previous_calls = 0
    for content in contents:
        parts = _parts(content)
        calls = sum(1 for p in parts if isinstance(field(p, "functionCall"), dict))
        responses = sum(1 for p in parts if isinstance(field(p, "functionResponse"), dict))
        if responses:
            if not previous_calls:
                raise _reject("Please ensure that function response turn comes immediately after a function call turn.")
            if responses != previous_calls:
                raise _reject(
                    "Please ensure that the number of function response parts is equal to the number of "
                    "function call parts of the function call turn."
                )
        elif previous_calls:
            raise _reject(
                "Please ensure that function call turn comes immediately after a user turn or after a function "
                "response turn."
            )
        previous_calls = calls if content.get("role") == "model" else 0


gemini = GeminiCodec()
