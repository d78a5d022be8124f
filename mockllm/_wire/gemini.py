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

import json
import re
from collections.abc import Mapping
from itertools import chain
from typing import Any

from mockllm._conversation import Conversation, listed_conversation
from mockllm._plan import ReplyPlan, TextPart
from mockllm._wire.deltas import DeltaRun, StreamItems, expanded, joined
from mockllm._wire.encoding import SSE_MEDIA_TYPE, dumps
from mockllm._wire.gemini_requests import check_turns, checked_contents, field, json_schema, read_content
from mockllm._wire.reading import DeclaredTools, ReplyContract, ToolChoice, gemini_reply_contract, gemini_tool_choice
from mockllm._wire.rendering import EventBatches, StreamRenderer, finished_with_last_delta, first_events, shaped_finish

__all__ = ["GEMINI_PATH", "GeminiCodec", "field", "gemini", "gemini_error_body"]

GEMINI_PATH = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
_GENERATE = ("generateContent", "streamGenerateContent")

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
    # SSE reader parses every line as JSON (Gemini sends no comments). Gemini's last
    # chunk often carries the last text or call with ``finishReason`` and the usage.
    shape_knobs: tuple[str, ...] = ("finish_with_last_delta",)

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
        return listed_conversation(bool(field(body, "systemInstruction")), body.get("contents"), read_content)

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
                    schema = json_schema(field(function, "parameters"))
                declared[function["name"]] = schema if isinstance(schema, dict) else None
        return declared

    def tool_choice(self, body: dict[str, Any]) -> ToolChoice:
        """``toolConfig.functionCallingConfig``: ``mode: NONE``, or ``allowedFunctionNames``."""
        config = field(body, "toolConfig")
        return gemini_tool_choice(field(config, "functionCallingConfig") if isinstance(config, dict) else None)

    def reply_contract(self, body: dict[str, Any]) -> ReplyContract:
        return gemini_reply_contract(field(body, "generationConfig"), field, json_schema)

    def read_request(self, body: Any, *, lenient: bool) -> Conversation:
        """Reject what Gemini answers with a 400 ``INVALID_ARGUMENT``; else ``read(body)``.

        ``lenient`` skips only the function call / response pairing checks."""
        contents = checked_contents(body)
        conversation = self.read(body)
        if not lenient:
            check_turns(contents)
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
        if shaped_finish(plan):
            frames = finished_with_last_delta(frames, self._with_finish)
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
        opener, closer = self._framing()
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

    def _framing(self) -> tuple[str, str]:
        """What goes before and after each response object of the stream."""
        return ("data: ", "\r\n\r\n") if self.sse else (_ARRAY_SEPARATOR, "")

    def _with_finish(self, delta_chunk: bytes, final_chunk: bytes) -> bytes:
        """The final chunk (``finishReason``, ``usageMetadata``) with ``delta_chunk``'s
        content, as Gemini sends its last text or call (``finish_with_last_delta``)."""
        opener, closer = self._framing()
        last, final = (
            json.loads(chunk[len(opener) : len(chunk) - len(closer)]) for chunk in (delta_chunk, final_chunk)
        )
        final["candidates"][0]["content"] = last["candidates"][0]["content"]
        return (opener + dumps(final) + closer).encode()

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


gemini = GeminiCodec()
