"""OpenAI Chat Completions (``POST /v1/chat/completions``), streamed and not.

What the official ``openai`` SDK reads from these bytes (its SSE decoder and chat
completion models) is what OpenAI sends, and this codec writes it; the choices that are
ours, not OpenAI's:

- Chat Completions cannot interleave text and tool calls, so all text parts are sent
  first (as one ``content``), then the tool calls in scripted order.
- Reasoning goes out as ``reasoning_content``, as DeepSeek and older vLLM send it; the
  SDK keeps it as an extra attribute.
- The neutral ``refusal`` stop reason maps to ``finish_reason="stop"``: OpenAI ends a
  refusal normally, its text in ``message.refusal`` (streamed as ``refusal`` deltas) and
  ``content`` null, where the SDK's ``parse`` and LangChain look for it.
- ``n`` greater than 1 is accepted and ignored: one choice is always returned.
"""

from __future__ import annotations

from itertools import chain
from json.encoder import encode_basestring as encode_string
from typing import Any

from mockllm._conversation import Conversation, Row, chat_messages, text_of
from mockllm._exceptions import RequestRejected
from mockllm._pairing import PairingProblem, find_pairing_problem
from mockllm._plan import ReplyPlan, TextPart
from mockllm._wire.deltas import expanded, joined
from mockllm._wire.encoding import dumps, sse_event
from mockllm._wire.ids import CHAT_COMPLETION_PREFIX
from mockllm._wire.openai_chat_chunks import (
    ARGUMENT_SLICE,
    DONE,
    SYSTEM_FINGERPRINT,
    chunk_items,
    finish_reason,
    message_content,
    usage_fields,
    with_finish,
)
from mockllm._wire.openai_errors import check_openai_types, openai_error_body, openai_error_fields
from mockllm._wire.parameter_types import Kind, json_type
from mockllm._wire.reading import (
    DeclaredTools,
    ReplyContract,
    ToolChoice,
    openai_format,
    openai_tool_choice,
    reply_contract,
    tools_declared,
)
from mockllm._wire.rendering import EventBatches, StreamRenderer, finished_with_last_delta, first_events, shaped_finish

__all__ = ["ARGUMENT_SLICE", "SYSTEM_FINGERPRINT", "OpenAIChatCodec", "openai_chat"]

_ROLES = ("system", "assistant", "user", "function", "tool", "developer")
# The parameters whose JSON type OpenAI checks (a 400 naming the parameter otherwise).
_PARAMETER_TYPES: dict[str, Kind] = {
    "stream": "boolean",
    "max_tokens": "integer",
    "max_completion_tokens": "integer",
    "n": "integer",
    "seed": "integer",
    "temperature": "decimal",
    "top_p": "decimal",
    "presence_penalty": "decimal",
    "frequency_penalty": "decimal",
    "logprobs": "boolean",
    "parallel_tool_calls": "boolean",
}


_CONTENT_MARK = "\x00mockllm:content\x00"
_CONTENT_MARK_JSON = dumps(_CONTENT_MARK)


class OpenAIChatCodec(StreamRenderer):
    """The Chat Completions wire codec (see the module docstring for its choices)."""

    name = "openai-chat"
    aliases: tuple[str, ...] = ("openai", "chat", "chat-completions")
    route = "/chat/completions"
    request_id_header = "x-request-id"
    tool_call_prefix = "call"
    prompt_fields: tuple[str, ...] = ("messages", "tools")
    shape_knobs: tuple[str, ...] = (
        "arguments",
        "id_with_arguments",
        "usage_chunk",
        "keep_alive_every",
        "finish_with_last_delta",
    )
    """The protocol-specific stream-shape knobs this codec honours (``mockllm._shapes``)."""

    def read(self, body: Any) -> Conversation:
        """The neutral conversation of the request's ``messages``."""
        items = body.get("messages") if isinstance(body, dict) else None
        out: list[Row] = []
        for position, m, role in chat_messages(items):
            if role == "assistant":
                calls = m.get("tool_calls")
                ids = (
                    tuple([str(c["id"]) for c in calls if isinstance(c, dict) and "id" in c])
                    if isinstance(calls, list)
                    else ()
                )
                out.append(("assistant", "", ids, (), position))
            elif role == "tool" or role == "function":
                call_id = m.get("tool_call_id")
                out.append(("tool", "", (), () if call_id is None else (str(call_id),), position))
            elif role == "user":
                content = m.get("content")
                text = content if isinstance(content, str) else text_of(content, ("text",))
                out.append(("user", text, (), (), position))
            elif role == "system" or role == "developer":
                out.append(("system", "", (), (), position))
        return Conversation(tuple(out))

    def read_request(self, body: Any, *, lenient: bool) -> Conversation:
        """Reject what OpenAI rejects, with its messages and ``param``; else ``read(body)``.

        ``lenient`` skips only the tool-call pairing check.
        """
        if not isinstance(body, dict):
            raise RequestRejected(
                "We could not parse the JSON body of your request. The OpenAI API expects "
                f"a JSON object, but got {json_type(body)} instead."
            )
        model = body.get("model")
        if model is None:
            raise RequestRejected("you must provide a model parameter")
        if not isinstance(model, str):
            raise RequestRejected(
                f"Invalid type for 'model': expected a string, but got {json_type(model)} instead.",
                param="model",
            )
        messages = body.get("messages")
        if messages is None:
            raise RequestRejected("Missing required parameter: 'messages'.", param="messages")
        if not isinstance(messages, list):
            raise RequestRejected(
                f"Invalid type for 'messages': expected an array of objects, but got {json_type(messages)} instead.",
                param="messages",
            )
        if not messages:
            raise RequestRejected(
                "Invalid 'messages': empty array. Expected an array with minimum length 1, "
                "but got an empty array instead.",
                param="messages",
            )
        for i, message in enumerate(messages):
            self._validate_message(i, message)
        check_openai_types(body, _PARAMETER_TYPES)
        if body.get("stream_options") is not None and body.get("stream") is not True:
            raise RequestRejected(
                "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                param="stream_options",
            )
        conversation = self.read(body)
        if not lenient:
            problem = find_pairing_problem(conversation)
            if problem is not None:
                raise self._pairing_rejection(problem, conversation)
        return conversation

    @staticmethod
    def _validate_message(i: int, message: Any) -> None:
        if not isinstance(message, dict):
            raise RequestRejected(
                f"Invalid type for 'messages[{i}]': expected an object, but got {json_type(message)} instead.",
                param=f"messages[{i}]",
            )
        role = message.get("role")
        if role is None:
            raise RequestRejected(f"Missing required parameter: 'messages[{i}].role'.", param=f"messages[{i}].role")
        if role not in _ROLES:
            supported = ", ".join(f"'{r}'" for r in _ROLES[:-1]) + f", and '{_ROLES[-1]}'"
            raise RequestRejected(
                f"Invalid value: {dumps(role)}. Supported values are: {supported}.",
                param=f"messages[{i}].role",
            )

    @staticmethod
    def _pairing_rejection(problem: PairingProblem, conversation: Conversation) -> RequestRejected:
        param = f"messages.[{conversation.messages[problem.message_index].position}].role"
        if problem.kind == "orphan_result":
            return RequestRejected(
                "Invalid parameter: messages with role 'tool' must be a response to a "
                "preceeding message with 'tool_calls'.",
                param=param,
            )
        # OpenAI lists every call of that assistant message left without a response.
        answered: set[str] = set()
        for later in conversation.messages[problem.message_index + 1 :]:
            if later.role != "tool":
                break
            answered.update(later.tool_results)
        calls = conversation.messages[problem.message_index].tool_calls
        missing = [c for c in calls if c not in answered] or [problem.call_id]
        return RequestRejected(
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            f"response messages: {', '.join(missing)}",
            param=param,
        )

    def wants_stream(self, body: dict[str, Any]) -> bool:
        """Whether the client asked for server-sent events (``"stream": true``)."""
        return body.get("stream") is True

    def declared_tools(self, body: dict[str, Any]) -> DeclaredTools:
        """``tools[].function`` (``parameters``), custom tools, and the legacy ``functions``."""
        declared = tools_declared(body.get("functions"), "parameters")
        declared.update(tools_declared(body.get("tools"), "parameters", nested="function"))
        declared.update(tools_declared(body.get("tools"), "parameters", nested="custom"))
        return declared

    def tool_choice(self, body: dict[str, Any]) -> ToolChoice:
        """``tool_choice`` (or the legacy ``function_call``) and ``parallel_tool_calls``."""
        return openai_tool_choice(body)

    def reply_contract(self, body: dict[str, Any]) -> ReplyContract:
        """``max_completion_tokens`` (else ``max_tokens``), and ``response_format``'s
        strict json_schema or json_object."""
        # null is unset (as OpenAI reads it): max_tokens then holds.
        field = "max_completion_tokens" if body.get("max_completion_tokens") is not None else "max_tokens"
        found = body.get("response_format")
        said = openai_format(found, "response_format") if found is not None else None
        return reply_contract(body.get(field), field, said)

    def render_json(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes:
        """The ``chat.completion`` object."""
        texts = [part.text for part in plan.parts if isinstance(part, TextPart)]
        # Several text parts make one ``content``: spliced in as bytes below rather than
        # joined first, which would hold the whole reply's text twice.
        refused = plan.stop_reason == "refusal"
        spliced = len(texts) > 1 and any(texts) and not refused
        content = _CONTENT_MARK if spliced else message_content(plan)
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
        if refused and content:
            message["content"], message["refusal"] = None, content
        if plan.tool_calls:
            message["tool_calls"] = [
                {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                for call in plan.tool_calls
            ]
        if plan.reasoning:
            message["reasoning_content"] = plan.reasoning
        completion = {
            "id": CHAT_COMPLETION_PREFIX + plan.response_id,
            "object": "chat.completion",
            "created": plan.created,
            "model": body.get("model"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish_reason(plan.stop_reason),
                    "logprobs": None,
                }
            ],
            "usage": usage_fields(plan.usage),
            "system_fingerprint": SYSTEM_FINGERPRINT,
        }
        rendered = dumps(completion)
        if spliced:
            if rendered.count(_CONTENT_MARK_JSON) == 1:
                head, tail = rendered.split(_CONTENT_MARK_JSON)
                return b"".join(
                    [head.encode(), b'"', *[encode_string(t)[1:-1].encode() for t in texts], b'"', tail.encode()]
                )
            message["content"] = message_content(plan)  # the mark was echoed (in the model name)
            rendered = dumps(completion)
        return rendered.encode()

    def render_stream(self, plan: ReplyPlan, body: dict[str, Any]) -> EventBatches:
        """``chat.completion.chunk`` events then ``data: [DONE]``.

        With ``plan.error.after_chunks`` = K: the first K events, then an error event
        and nothing more (the SDK raises ``openai.APIError``).
        """
        batches = expanded(chunk_items(plan, body), plan)
        if shaped_finish(plan):
            batches = finished_with_last_delta(batches, with_finish)
        error = plan.error
        if error is not None and error.after_chunks is not None:
            failure = self.render_stream_error(error.status, error.type, error.message, error.after_chunks)
            return chain(first_events(batches, error.after_chunks), [[failure]])
        return chain(batches, [[DONE]])

    def render_joined(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes | None:
        """``render_stream``'s bytes made at once (``mockllm._wire.deltas.joined``), for a
        plan of the default shape and no error; None for a long stream."""
        return joined(chain(chunk_items(plan, body), [[DONE]]), plan)

    def render_stream_error(self, status: int, type: str | None, message: str | None, sequence: int) -> bytes:
        """``data: {"error": {...}}``, what the SDK raises ``openai.APIError`` for."""
        kind, _, text = openai_error_fields(status, type, message)
        return sse_event({"error": {"message": text, "type": kind, "param": None, "code": None}})

    def render_error(self, status: int, type: str | None, message: str | None, param: str | None = None) -> bytes:
        """OpenAI's error body; a given ``type`` or ``message`` is used verbatim."""
        return openai_error_body(status, type, message, param)


openai_chat = OpenAIChatCodec()
