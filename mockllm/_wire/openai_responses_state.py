"""Server-held conversations: OpenAI Responses ``previous_response_id`` and ``conversation``.

With ``store`` on (the API's default) the mock keeps, under each response id it
answered, the whole ``input`` that led to it followed by the response's ``output``
items. A request naming ``previous_response_id`` is rebuilt into that history followed
by its own ``input`` before anything reads it, so selection, validation and usage see
the same body as if the client had sent the whole history. As in the real API,
``instructions`` and ``tools`` are not carried over: each request sends its own.

Conversations (``POST /v1/conversations``, then ``"conversation": "conv_…"`` or
``{"id": …}`` on ``responses.create``) work the same way, the conversation's items
growing by each response's input and output; the mock accepts only the conversation ids
it handed out itself.

Bounded in entries and bytes, per mock instance (in its state: shared by the workers of
``serve --workers``), cleared by ``MockLLM.reset`` (``mockllm._held``). ``store: false`` responses are not kept. An id the mock does not
hold is OpenAI's own error: 400 ``previous_response_not_found`` for a response, 404 for
a conversation, with a message that says why the mock may lack it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from mockllm._held import WHY_NOT_HELD, HeldMemory, HeldNotFound
from mockllm._state import MemoryState, State
from mockllm._wire.encoding import dumps

__all__ = ["ResponseStore"]


class ResponsesStateError(HeldNotFound):
    """A held-state problem, in OpenAI's error shape with its ``code``."""

    def __init__(self, message: str, *, status: int, param: str, code: str | None) -> None:
        super().__init__(message, status=status, type="invalid_request_error", param=param)
        self.code = code

    def body(self) -> bytes:
        return dumps(
            {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}
        ).encode()


def _items(value: Any) -> list[Any] | None:
    """A request's ``input`` as a list of items (a string is one user message)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return list(value) if isinstance(value, list) else None


def _conversation_id(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("id")
    return value if isinstance(value, str) else None


class ResponseStore:
    """Response id -> whole history (input then output items); conversation id -> items."""

    def __init__(
        self, max_entries: int = 1000, max_bytes: int = 32 * 1024 * 1024, *, state: State | None = None
    ) -> None:
        where = state if state is not None else MemoryState()
        self._responses: HeldMemory[list[Any]] = HeldMemory(max_entries, max_bytes, state=where, space="responses")
        self._conversations: HeldMemory[list[Any]] = HeldMemory(
            max_entries, max_bytes, state=where, space="conversations"
        )
        self._created = where.counters("responses")

    def expand(self, body: Any) -> tuple[Any, str | None, bool]:
        """(the whole request ``body`` stands for, the held id it was rebuilt from, whether
        to keep the reply); raises ``ResponsesStateError`` for an id it lacks."""
        if not isinstance(body, dict):
            return body, None, False
        hold = body.get("store", True) is not False or body.get("conversation") is not None
        previous, conversation = body.get("previous_response_id"), body.get("conversation")
        if previous is None and conversation is None:
            return body, None, hold
        if previous is not None and conversation is not None:
            raise ResponsesStateError(
                "Mutually exclusive parameters: Ensure you are only providing one of: "
                "'previous_response_id' or 'conversation'.",
                status=400,
                param="previous_response_id",
                code=None,
            )
        new = _items(body.get("input"))
        if new is None:
            return body, None, hold  # the codec rejects the input's type
        held_id: str | None
        if previous is not None:
            if not isinstance(previous, str):
                raise ResponsesStateError(
                    "Invalid type for 'previous_response_id': expected a string.",
                    status=400,
                    param="previous_response_id",
                    code=None,
                )
            held, held_id = self._responses.get(previous), previous
            if held is None:
                raise ResponsesStateError(
                    f"Previous response with id {previous!r} not found. {WHY_NOT_HELD} "
                    "Responses created with store: false are never kept. Send the whole conversation in 'input' instead.",
                    status=400,
                    param="previous_response_id",
                    code="previous_response_not_found",
                )
        else:
            held_id = _conversation_id(conversation)
            held = None if held_id is None else self._conversations.get(held_id)
            if held is None:
                raise ResponsesStateError(
                    f"Conversation with id {held_id!r} not found. {WHY_NOT_HELD} The mock accepts only "
                    "the conversation ids its own POST /v1/conversations handed out.",
                    status=404,
                    param="conversation",
                    code=None,
                )
        return {**body, "input": [*held, *new]}, held_id, hold

    def keep(self, whole_body: dict[str, Any], reply_json: bytes) -> None:
        """Hold ``whole_body`` (what ``expand`` gave) with the response's output after it."""
        reply = json.loads(reply_json)
        if not isinstance(reply.get("output"), list):
            return
        history = [*(_items(whole_body.get("input")) or []), *reply["output"]]
        if whole_body.get("store", True) is not False:
            self._responses.put(reply["id"], history)
        conversation = _conversation_id(whole_body.get("conversation"))
        if conversation is not None:
            self._conversations.put(conversation, history)

    def create_conversation(self, body: bytes) -> tuple[int, bytes]:
        """``POST /v1/conversations``: (status, body) in OpenAI's shape."""
        try:
            parsed = json.loads(body) if body.strip() else {}
        except ValueError as exc:
            return 400, _error(f"The request body is not valid JSON: {exc}.", None)
        if not isinstance(parsed, dict):
            return 400, _error("Invalid type for the request body: expected a JSON object.", None)
        items = parsed.get("items") or []
        if not isinstance(items, list):
            return 400, _error("Invalid type for 'items': expected an array of input items.", "items")
        metadata = parsed.get("metadata") or {}
        number = self._created.incr("conversations") - 1
        digest = hashlib.blake2b(body + str(number).encode(), digest_size=12).hexdigest()
        conversation_id = f"conv_{number:04d}{digest}"
        self._conversations.put(conversation_id, items)
        return 200, dumps(
            {"id": conversation_id, "object": "conversation", "created_at": 1_700_000_000, "metadata": metadata}
        ).encode()

    def clear(self) -> None:
        self._responses.clear()
        self._conversations.clear()
        self._created.clear()


def _error(message: str, param: str | None) -> bytes:
    return dumps(
        {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}
    ).encode()
