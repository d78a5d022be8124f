"""Ollama's native API: ``POST /api/chat`` and ``POST /api/generate``, streamed and not.

Ollama streams unless the body says ``"stream": false``: newline-delimited JSON, one
object per delta, the last one ``"done": true`` with ``done_reason`` and the timing
fields (``total_duration``, ``load_duration``, ``prompt_eval_count``,
``prompt_eval_duration``, ``eval_count``, ``eval_duration``, in nanoseconds). The engine
binds this codec to the route by ``for_request``: ``/api/chat`` reads ``messages`` and
answers ``message``; ``/api/generate`` reads ``system`` and ``prompt`` and answers
``response``. Our choices:

- Turns are the history's ``assistant`` messages; a ``tool`` message is a tool result
  (answering the call its ``tool_call_id`` names, when given), never a user message.
- Tool calls go out as ``message.tool_calls`` with ``function.arguments`` an object,
  ``function.index`` and an ``id``, as recent Ollama releases send them; in a stream,
  each call is one whole object, after the text (a stream shape cuts the text and
  thinking, never a call).
- Reasoning goes out as ``thinking`` only when the body's ``think`` asks for it
  (``true`` or a level); ``done_reason`` is ``length`` for ``max_tokens``, else ``stop``.
- ``created_at`` and the durations are derived from the reply (never the clock); a
  scripted ``timing`` paces the stream but does not change the durations.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from itertools import chain
from typing import Any

from mockllm._conversation import Conversation, Row, chat_messages
from mockllm._exceptions import RequestRejected
from mockllm._plan import ReplyPlan
from mockllm._wire.deltas import DeltaRun, StreamItems, expanded, joined
from mockllm._wire.encoding import dumps
from mockllm._wire.reading import UNBOUNDED, DeclaredTools, ReplyContract, reply_contract, schema_format, tools_declared
from mockllm._wire.rendering import EventBatches, StreamRenderer, finished_with_last_delta, first_events, shaped_finish

__all__ = ["NDJSON_MEDIA_TYPE", "OllamaCodec", "ollama", "ollama_error_body"]

NDJSON_MEDIA_TYPE = "application/x-ndjson"
_CHAT, _GENERATE = "/api/chat", "/api/generate"
_ROLES = ("system", "user", "assistant", "tool")
_THINK_LEVELS = ("high", "medium", "low")

# status -> Ollama's message when a script names only the status.
_MESSAGES = {
    400: "invalid request",
    401: "unauthorized",
    403: "forbidden",
    404: "model not found, try pulling it first",
    429: "too many requests",
    500: "an error was encountered while running the model",
    503: "server busy, please try again. maximum pending requests exceeded",
}
# Go's JSON types, as Ollama's decoder names them in a type error.
_GO_TYPES = {"stream": "bool", "model": "string", "prompt": "string", "system": "string"}


def ollama_error_body(status: int, message: str | None) -> bytes:
    """Ollama's error body: ``{"error": "..."}``."""
    default = _MESSAGES.get(status, "an error was encountered while running the model" if status >= 500 else "")
    return dumps({"error": message or default or f"request failed (HTTP {status})"}).encode()


def _go_type(value: Any) -> str:
    """The JSON value's kind as Go's decoder names it in a type error."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"


def _reject(message: str, status: int = 400) -> RequestRejected:
    return RequestRejected(message, status=status, type=None)


def _wants_thinking(body: dict[str, Any]) -> bool:
    think = body.get("think")
    return think is True or think in _THINK_LEVELS


def _arguments(arguments: str) -> Any:
    return json.loads(arguments) if arguments.strip() else {}


def _created_at(plan: ReplyPlan) -> str:
    return _timestamp(plan.created)


@functools.lru_cache(maxsize=64)
def _timestamp(created: int) -> str:
    # Formatted once a turn: a reply's dates are one second a turn from a fixed epoch.
    return datetime.fromtimestamp(created, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _timings(plan: ReplyPlan) -> dict[str, int]:
    """The final record's timing fields: fixed rates per token, in nanoseconds."""
    load, prompt_eval, evaluation = 1_000_000, plan.usage.input_tokens * 100_000, plan.usage.output_tokens * 10_000_000
    return {
        "total_duration": load + prompt_eval + evaluation,
        "load_duration": load,
        "prompt_eval_count": plan.usage.input_tokens,
        "prompt_eval_duration": prompt_eval,
        "eval_count": plan.usage.output_tokens,
        "eval_duration": evaluation,
    }


def _done_reason(plan: ReplyPlan) -> str:
    return "length" if plan.stop_reason == "max_tokens" else "stop"


class OllamaCodec(StreamRenderer):
    """Ollama's ``/api/chat`` (``chat=True``) or ``/api/generate``, bound by ``for_request``."""

    name = "ollama"
    aliases: tuple[str, ...] = ("ollama-chat",)
    route = _CHAT
    routes: tuple[str, ...] = (f"POST {_CHAT}", f"POST {_GENERATE}")
    request_id_header = "x-request-id"
    tool_call_prefix = "call"
    stream_media_type = NDJSON_MEDIA_TYPE
    # Text and thinking are cut as the shape says (``text``, ``empty_first_delta``); a
    # tool call is one whole object (``arguments`` has nothing to cut) and NDJSON has no
    # comments (no ``keep_alive_every``); the ``done`` line may carry the last delta.
    shape_knobs: tuple[str, ...] = ("finish_with_last_delta",)

    def __init__(self, chat: bool = True) -> None:
        self.chat = chat
        self.prompt_fields: tuple[str, ...] = ("messages", "tools") if chat else ("system", "prompt")

    def matches(self, path: str) -> bool:
        return path.endswith(_CHAT) or path.endswith(_GENERATE)

    def for_request(self, path: str, query: Mapping[str, str]) -> OllamaCodec:
        return _generate_codec if path.rstrip("/").endswith(_GENERATE) else self

    # -- reading ----------------------------------------------------------------------

    def read(self, body: Any) -> Conversation:
        """The neutral conversation: ``messages`` (chat) or ``system`` and ``prompt``."""
        if not isinstance(body, dict):
            return Conversation(())
        if not self.chat:
            rows: list[Row] = [("system", "", (), (), None)] if body.get("system") else []
            prompt = body.get("prompt")
            rows.append(("user", prompt if isinstance(prompt, str) else "", (), (), 0))
            return Conversation(tuple(rows))
        out: list[Row] = []
        for position, m, role in chat_messages(body.get("messages")):
            if role == "assistant":
                out.append(("assistant", "", _call_ids(position, m.get("tool_calls")), (), position))
            elif role == "tool":
                call_id = m.get("tool_call_id")
                out.append(("tool", "", (), (str(call_id),) if call_id else (), position))
            elif role == "user":
                content = m.get("content")
                out.append(("user", content if isinstance(content, str) else "", (), (), position))
            elif role == "system":
                out.append(("system", "", (), (), position))
        return Conversation(tuple(out))

    def declared_tools(self, body: dict[str, Any]) -> DeclaredTools:
        """``tools[].function`` by ``name``, with its ``parameters`` (as OpenAI's)."""
        return tools_declared(body.get("tools"), "parameters", nested="function")

    def reply_contract(self, body: dict[str, Any]) -> ReplyContract:
        """``options.num_predict`` (negative: unlimited), and ``format``: a JSON schema or ``"json"``."""
        options, found = body.get("options"), body.get("format")
        if not isinstance(options, dict) and found is None:
            return UNBOUNDED
        limit = options.get("num_predict") if isinstance(options, dict) else None
        return reply_contract(limit, "options.num_predict", schema_format(found, "format", bare=True))

    def read_request(self, body: Any, *, lenient: bool) -> Conversation:
        """Reject what Ollama answers with a 400 ``{"error"}``; else ``read(body)``.

        Ollama checks no tool-call pairing, so ``lenient`` changes nothing here."""
        if not isinstance(body, dict):
            raise _reject(f"json: cannot unmarshal {_go_type(body)} into Go value of type api.ChatRequest")
        request = "ChatRequest" if self.chat else "GenerateRequest"
        for name in ("model", "stream", "system", "prompt") if not self.chat else ("model", "stream"):
            value = body.get(name)
            expected = _GO_TYPES[name]
            if value is not None and _go_type(value) != expected:
                raise _reject(
                    f"json: cannot unmarshal {_go_type(value)} into Go struct field {request}.{name} of type {expected}"
                )
        if not body.get("model"):
            raise _reject("model is required")
        think = body.get("think")
        if think is not None and not isinstance(think, bool) and think not in _THINK_LEVELS:
            raise _reject(f"invalid think value: {dumps(think)} (must be true, false, 'high', 'medium' or 'low')")
        if self.chat:
            _check_messages(body.get("messages"))
        return self.read(body)

    def wants_stream(self, body: dict[str, Any]) -> bool:
        """Ollama streams unless ``"stream": false``."""
        return body.get("stream") is not False

    # -- rendering --------------------------------------------------------------------

    def _head(self, plan: ReplyPlan, body: dict[str, Any]) -> dict[str, Any]:
        return {"model": body.get("model"), "created_at": _created_at(plan)}

    def _final(self, plan: ReplyPlan, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        return {**self._head(plan, body), **reply, "done_reason": _done_reason(plan), "done": True, **_timings(plan)}

    def _tool_calls(self, plan: ReplyPlan) -> list[dict[str, Any]]:
        return [
            {"id": c.id, "function": {"index": i, "name": c.name, "arguments": _arguments(c.arguments)}}
            for i, c in enumerate(plan.tool_calls)
        ]

    def render_json(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes:
        """The one ``done`` object: ``message`` (chat) or ``response`` (generate)."""
        thinking = plan.reasoning if plan.reasoning and _wants_thinking(body) else None
        if not self.chat:
            reply: dict[str, Any] = {"response": plan.text}
            if thinking:
                reply["thinking"] = thinking
            return dumps(self._final(plan, body, reply)).encode()
        message: dict[str, Any] = {"role": "assistant", "content": plan.text}
        if thinking:
            message["thinking"] = thinking
        if plan.tool_calls:
            message["tool_calls"] = self._tool_calls(plan)
        return dumps(self._final(plan, body, {"message": message})).encode()

    def render_stream(self, plan: ReplyPlan, body: dict[str, Any]) -> EventBatches:
        """One line per delta (thinking, then text, then each tool call), then the
        ``done`` line; cut after ``plan.error.after_chunks`` lines by an error line."""
        lines = expanded(self._lines(plan, body), plan)
        if shaped_finish(plan):
            lines = finished_with_last_delta(lines, _with_finish)
        error = plan.error
        if error is not None and error.after_chunks is not None:
            failure = self.render_stream_error(error.status, error.type, error.message, error.after_chunks)
            return chain(first_events(lines, error.after_chunks), [[failure]])
        return lines

    def render_joined(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes | None:
        """``render_stream``'s bytes made at once (``mockllm._wire.deltas.joined``)."""
        return joined(self._lines(plan, body), plan)

    def _lines(self, plan: ReplyPlan, body: dict[str, Any]) -> StreamItems:
        # The text around a delta is made once per reply; only the delta is encoded per line.
        head = dumps(self._head(plan, body))[:-1]
        if self.chat:
            before, after = head + ',"message":{"role":"assistant",', '},"done":false}\n'
            keys = ('"content":"","thinking":', '"content":')
        else:
            before, after = head + ",", ',"done":false}\n'
            keys = ('"response":"","thinking":', '"response":')
        thinking = plan.reasoning if plan.reasoning and _wants_thinking(body) else ""
        for key, text in zip(keys, (thinking, plan.text), strict=True):
            yield DeltaRun(before + key, after, text)
        if self.chat and plan.tool_calls:
            calls = [before + '"content":"","tool_calls":' + dumps([call]) + after for call in self._tool_calls(plan)]
            yield [line.encode() for line in calls]
        empty: dict[str, Any] = {"message": {"role": "assistant", "content": ""}} if self.chat else {"response": ""}
        yield [(dumps(self._final(plan, body, empty)) + "\n").encode()]

    def render_stream_error(self, status: int, type: str | None, message: str | None, sequence: int) -> bytes:
        """``{"error": "..."}`` as the stream's next line, what the ``ollama`` client
        raises ``ResponseError`` for."""
        return ollama_error_body(status, message) + b"\n"

    def render_error(self, status: int, type: str | None, message: str | None, param: str | None = None) -> bytes:
        """``{"error": "..."}``; Ollama has no error type or ``param``."""
        return ollama_error_body(status, message)


def _with_finish(delta_line: bytes, done_line: bytes) -> bytes:
    """The ``done`` line carrying ``delta_line``'s content, thinking or calls, as Ollama
    may send its last piece (``finish_with_last_delta``)."""
    last, done = json.loads(delta_line), json.loads(done_line)
    return (dumps({**done, **{key: value for key, value in last.items() if key != "done"}}) + "\n").encode()


def _call_ids(position: int, calls: Any) -> tuple[str, ...]:
    """The ids of an assistant message's tool calls: the call's ``id`` when given, else
    its place (Ollama's history may carry no ids)."""
    if not isinstance(calls, list):
        return ()
    return tuple(str(c["id"]) if c.get("id") else f"{position}#{n}" for n, c in enumerate(calls) if isinstance(c, dict))


def _check_messages(messages: Any) -> None:
    if messages is None:
        return  # Ollama loads the model and answers an empty reply; the mock answers
    if not isinstance(messages, list):
        raise _reject(
            f"json: cannot unmarshal {_go_type(messages)} into Go struct field ChatRequest.messages "
            "of type []api.Message"
        )
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise _reject(
                f"json: cannot unmarshal {_go_type(message)} into Go struct field ChatRequest.messages "
                f"of type api.Message (messages[{index}])"
            )
        role = message.get("role")
        if role not in _ROLES:
            raise _reject(
                f"invalid role {dumps(role)} in messages[{index}]; use one of {', '.join(_ROLES)}",
            )
        calls = message.get("tool_calls")
        if calls is not None and not isinstance(calls, list):
            raise _reject(
                f"json: cannot unmarshal {_go_type(calls)} into Go struct field Message.messages.tool_calls "
                f"of type []api.ToolCall (messages[{index}])"
            )


ollama = OllamaCodec()
_generate_codec = OllamaCodec(chat=False)
