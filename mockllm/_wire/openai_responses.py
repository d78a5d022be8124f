"""The OpenAI Responses API (``POST /v1/responses``), as the ``openai`` SDK reads it.

A reply is a list of output items — an optional ``reasoning`` item, then one
``message`` item per text part and one ``function_call`` item per tool call, in the
plan's order. The non-streaming body is the final response object; the stream is
``response.created``, ``response.in_progress``, each item's added/delta/done events and
a terminal ``response.completed`` (or ``response.incomplete``) carrying that same
object. Every event has the ``event:`` line the real API sends and a ``sequence_number``
counting from 0. The events are derived from the final items, so the two renderings
cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from typing import TYPE_CHECKING, Any

from mockllm._conversation import Conversation
from mockllm._cutting import argument_batches, text_batches
from mockllm._held import HeldConversations
from mockllm._plan import ReplyPlan, TextPart, count_words
from mockllm._wire.encoding import dumps, sse_event
from mockllm._wire.ids import RESPONSE_PREFIX, output_item_id
from mockllm._wire.openai_errors import openai_error_body, openai_error_fields
from mockllm._wire.openai_responses_requests import checked_input, read_input
from mockllm._wire.openai_responses_state import ResponseStore
from mockllm._wire.reading import openai_format, openai_tool_choice, reply_contract, tools_declared
from mockllm._wire.rendering import EventBatches, StreamRenderer, first_events

if TYPE_CHECKING:
    from mockllm._state import State
    from mockllm._wire.reading import DeclaredTools, ReplyContract, ToolChoice

__all__ = ["OpenAIResponsesCodec", "openai_responses"]

# Neutral stop reasons that end a response as "incomplete", with the API's reason.
_INCOMPLETE_REASONS = {"max_tokens": "max_output_tokens", "content_filter": "content_filter"}

# Tool-call arguments stream in pieces of this many characters: small enough that a
# cut lands inside a key or a string, as the real API's token-sized pieces do.
_ARGUMENT_PIECE_CHARS = 7


def _reasoning_tokens(plan: ReplyPlan) -> int:
    # The plan carries no reasoning count; a word per token is close enough and never
    # exceeds the output tokens the plan bills.
    if not plan.reasoning:
        return 0
    return min(count_words(plan.reasoning), plan.usage.output_tokens)


class OpenAIResponsesCodec(StreamRenderer):
    """Renders reply plans as OpenAI Responses API bodies and server-sent events.

    Ids are derived from ``plan.response_id`` and each item's output index
    (``resp_<id>``, ``rs_<id>_<i>``, ``msg_<id>_<i>``, ``fc_<id>_<i>``), so the same
    plan always gives the same bytes. The codec reads the whole conversation in
    ``input``: the engine has already rebuilt a ``previous_response_id`` or
    ``conversation`` request into it, with the store this codec makes
    (``held_conversations``: ``mockllm._wire.openai_responses_state``).
    """

    name = "openai-responses"
    aliases: tuple[str, ...] = ("responses",)
    route = "/responses"
    request_id_header = "x-request-id"
    tool_call_prefix = "call"
    prompt_fields: tuple[str, ...] = ("instructions", "input", "tools")
    shape_knobs: tuple[str, ...] = ("arguments", "keep_alive_every")
    """The protocol-specific stream-shape knobs this codec honours (``mockllm._shapes``)."""

    def held_conversations(self, state: State) -> ResponseStore:
        """``previous_response_id`` and ``conversation`` state: ``mockllm._wire.openai_responses_state``."""
        return ResponseStore(state=state)

    def answer_held_route(
        self, method: str, path: str, body: bytes, store: HeldConversations
    ) -> tuple[int, bytes] | None:
        """``POST …/conversations``: a new conversation, in OpenAI's shape."""
        if method != "POST" or not path.endswith("/conversations") or not isinstance(store, ResponseStore):
            return None
        return store.create_conversation(body)

    # -- requests -----------------------------------------------------------------

    def read(self, body: Any) -> Conversation:
        """The neutral conversation of ``instructions`` and ``input``
        (``mockllm._wire.openai_responses_requests``)."""
        return read_input(body)

    def read_request(self, body: Any, *, lenient: bool) -> Conversation:
        """Reject what the real API rejects with a 400 (pairing only when not lenient);
        else ``read(body)``."""
        return checked_input(body, lenient=lenient)

    def wants_stream(self, body: dict[str, Any]) -> bool:
        return body.get("stream") is True

    def declared_tools(self, body: dict[str, Any]) -> DeclaredTools:
        """Function and custom tools of ``tools[]`` by ``name``, with ``parameters``."""
        return tools_declared(body.get("tools"), "parameters")

    def tool_choice(self, body: dict[str, Any]) -> ToolChoice:
        """``tool_choice`` and ``parallel_tool_calls``, spelled as Chat Completions does."""
        return openai_tool_choice(body)

    def reply_contract(self, body: dict[str, Any]) -> ReplyContract:
        """``max_output_tokens``, and ``text.format``'s strict json_schema or json_object."""
        text = body.get("text")
        found = openai_format(text.get("format"), "text.format", None) if isinstance(text, dict) else None
        return reply_contract(body.get("max_output_tokens"), "max_output_tokens", found)

    # -- replies ------------------------------------------------------------------

    def render_json(self, plan: ReplyPlan, body: dict[str, Any]) -> bytes:
        """The final response object, the one ``response.completed`` carries."""
        return dumps(self._final_response(plan, body, _output_items(plan))).encode()

    def render_stream(self, plan: ReplyPlan, body: dict[str, Any]) -> EventBatches:
        """The full event stream, or its first K events then an ``error`` event."""
        items = _output_items(plan)

        def opening() -> Iterator[list[dict[str, Any]]]:
            started = self._response(plan, body, status="in_progress", output=[])
            yield [
                {"type": "response.created", "response": started},
                {"type": "response.in_progress", "response": started},
            ]
            for index, item in enumerate(items):
                yield from _item_events(item, index, plan)

        def terminal() -> Iterator[list[dict[str, Any]]]:
            final = self._final_response(plan, body, items)
            kind = "response.completed" if final["status"] == "completed" else "response.incomplete"
            yield [{"type": kind, "response": final}]

        error = plan.error
        cut = error.after_chunks if error is not None else None
        # The error takes the terminal event's place at the latest: a stream that
        # already said "completed" cannot fail.
        batches = chain(opening(), terminal()) if cut is None else first_events(opening(), cut)
        sequence = 0
        for batch in batches:
            yield [
                sse_event({"type": event["type"], "sequence_number": seq, **event}, event=event["type"])
                for seq, event in enumerate(batch, sequence)
            ]
            sequence += len(batch)
        if error is not None and cut is not None:
            yield [self.render_stream_error(error.status, error.type, error.message, sequence)]

    def render_stream_error(self, status: int, type: str | None, message: str | None, sequence: int) -> bytes:
        """The ``error`` event (see ``_error_event``) numbered ``sequence``."""
        return sse_event(
            {"type": "error", "sequence_number": sequence, **_error_event(status, type, message)}, event="error"
        )

    def render_error(self, status: int, type: str | None, message: str | None, param: str | None = None) -> bytes:
        """``{"error": {message, type, param, code}}`` with OpenAI's usual defaults."""
        return openai_error_body(status, type, message, param)

    # -- the response object --------------------------------------------------------

    def _final_response(self, plan: ReplyPlan, body: dict[str, Any], items: list[dict[str, Any]]) -> dict[str, Any]:
        reason = _INCOMPLETE_REASONS.get(plan.stop_reason)
        usage = {
            "input_tokens": plan.usage.input_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": plan.usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": _reasoning_tokens(plan)},
            "total_tokens": plan.usage.total_tokens,
        }
        return self._response(
            plan,
            body,
            status="completed" if reason is None else "incomplete",
            output=items,
            incomplete_details=None if reason is None else {"reason": reason},
            usage=usage,
        )

    def _response(
        self,
        plan: ReplyPlan,
        body: dict[str, Any],
        *,
        status: str,
        output: list[dict[str, Any]],
        incomplete_details: dict[str, str] | None = None,
        usage: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        # Request settings are echoed back as the real API does; the SDK's ``Response``
        # model requires tool_choice, tools and parallel_tool_calls.
        instructions = body.get("instructions")
        tools = body.get("tools")
        return {
            "id": RESPONSE_PREFIX + plan.response_id,
            "object": "response",
            "created_at": plan.created,
            "status": status,
            "background": False,
            "completed_at": plan.created if status == "completed" else None,
            "error": None,
            "incomplete_details": incomplete_details,
            "instructions": instructions if isinstance(instructions, (str, list)) else None,
            "max_output_tokens": body.get("max_output_tokens"),
            "max_tool_calls": body.get("max_tool_calls"),
            "model": str(body.get("model", "")),
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": _str_or_none(body.get("previous_response_id")),
            "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
            "service_tier": "default",
            "store": body.get("store", True),
            "temperature": body.get("temperature", 1.0),
            "text": body.get("text") or {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": tools if isinstance(tools, list) else [],
            "top_p": body.get("top_p", 1.0),
            "truncation": body.get("truncation", "disabled"),
            "usage": usage,
            "user": body.get("user"),
            "metadata": body.get("metadata") or {},
            **_conversation_echo(body.get("conversation")),
        }


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _conversation_echo(value: Any) -> dict[str, Any]:
    """The response's ``conversation`` field: present when the request named one."""
    conversation_id = value.get("id") if isinstance(value, dict) else value
    return {"conversation": {"id": conversation_id}} if isinstance(conversation_id, str) else {}


def _output_items(plan: ReplyPlan) -> list[dict[str, Any]]:
    """The response's ``output``, every item in its final state."""
    rid = plan.response_id
    items: list[dict[str, Any]] = []
    if plan.reasoning:
        items.append(
            {
                "id": output_item_id("reasoning", rid, 0),
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": plan.reasoning}],
            }
        )
    for part in plan.parts:
        index = len(items)
        if isinstance(part, TextPart):
            content: dict[str, Any]
            if plan.stop_reason == "refusal":
                content = {"type": "refusal", "refusal": part.text}
            else:
                content = {"type": "output_text", "annotations": [], "logprobs": [], "text": part.text}
            items.append(
                {
                    "id": output_item_id("message", rid, index),
                    "type": "message",
                    "status": "completed",
                    "content": [content],
                    "role": "assistant",
                }
            )
        else:
            items.append(
                {
                    "id": output_item_id("function_call", rid, index),
                    "type": "function_call",
                    "status": "completed",
                    "arguments": part.arguments,
                    "call_id": part.id,
                    "name": part.name,
                }
            )
    if plan.stop_reason in _INCOMPLETE_REASONS and items and items[-1]["type"] == "message":
        items[-1]["status"] = "incomplete"
    return items


def _item_events(item: dict[str, Any], index: int, plan: ReplyPlan) -> Iterator[list[dict[str, Any]]]:
    """The added / delta / done events that build ``item`` at ``output_index`` index, in
    batches (the deltas made as they are consumed)."""
    where = {"item_id": item["id"], "output_index": index}
    kind = item["type"]
    if kind == "reasoning":
        yield [{"type": "response.output_item.added", "output_index": index, "item": {**item, "summary": []}}]
        for s, summary in enumerate(item["summary"]):
            at = {**where, "summary_index": s}
            yield [
                {"type": "response.reasoning_summary_part.added", **at, "part": {"type": "summary_text", "text": ""}}
            ]
            for batch in text_batches(summary["text"], plan):
                yield [{"type": "response.reasoning_summary_text.delta", **at, "delta": delta} for delta in batch]
            yield [
                {"type": "response.reasoning_summary_text.done", **at, "text": summary["text"]},
                {"type": "response.reasoning_summary_part.done", **at, "part": summary},
            ]
    elif kind == "message":
        yield [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "status": "in_progress", "content": []},
            }
        ]
        for c, part in enumerate(item["content"]):
            at = {**where, "content_index": c}
            if part["type"] == "refusal":
                yield [{"type": "response.content_part.added", **at, "part": {"type": "refusal", "refusal": ""}}]
                for batch in text_batches(part["refusal"], plan):
                    yield [{"type": "response.refusal.delta", **at, "delta": delta} for delta in batch]
                done = {"type": "response.refusal.done", **at, "refusal": part["refusal"]}
            else:
                yield [{"type": "response.content_part.added", **at, "part": {**part, "text": ""}}]
                for batch in text_batches(part["text"], plan):
                    yield [
                        {"type": "response.output_text.delta", **at, "delta": delta, "logprobs": []} for delta in batch
                    ]
                done = {"type": "response.output_text.done", **at, "text": part["text"], "logprobs": []}
            yield [done, {"type": "response.content_part.done", **at, "part": part}]
    else:
        yield [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "status": "in_progress", "arguments": ""},
            }
        ]
        for batch in argument_batches(item["arguments"], _ARGUMENT_PIECE_CHARS, plan):
            yield [{"type": "response.function_call_arguments.delta", **where, "delta": piece} for piece in batch]
        yield [{"type": "response.function_call_arguments.done", **where, "arguments": item["arguments"]}]
    yield [{"type": "response.output_item.done", "output_index": index, "item": item}]


def _error_event(status: int, type: str | None, message: str | None) -> dict[str, Any]:
    """The stream's ``error`` event.

    The API reference documents flat ``code``/``message``/``param``; the live API nests
    them under ``error``, which is what makes the Python SDK raise ``APIError``. Both
    are sent so either kind of client sees the failure.
    """
    error_type, default_code, text = openai_error_fields(status, type, message)
    code = default_code if default_code is not None else error_type
    return {
        "type": "error",
        "code": code,
        "message": text,
        "param": None,
        "error": {"type": error_type, "code": code, "message": text, "param": None},
    }


openai_responses = OpenAIResponsesCodec()
"""The codec instance the engine registers."""
