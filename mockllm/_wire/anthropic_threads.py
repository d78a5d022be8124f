"""Server-held conversations: Anthropic message threads.

The ``anthropic`` SDK's tool runner keeps the conversation on the server by default:
the first request sends ``"thread": {"type": "create"}`` and the whole history, later
ones ``{"type": "continue", "previous_message_id": …}`` and only the new messages
(``system`` and ``tools`` come from the thread). The mock keeps what it answered under
its own reply id and rebuilds the whole request before anything reads it, so selection,
validation and usage see the same body as if the client had sent the full history.

Bounded in entries and bytes (oldest forgotten first), per mock instance (in its state,
``mockllm._state``: shared by the workers of ``serve --workers``), cleared by
``MockLLM.reset``. An id the mock does not hold is Anthropic's 404 with
``details.error_code = "thread_not_found"``, which the SDK answers by replaying the
whole history under a new thread.
"""

from __future__ import annotations

import json
from typing import Any

from mockllm._held import WHY_NOT_HELD, HeldMemory, HeldNotFound
from mockllm._state import State
from mockllm._wire.encoding import dumps

__all__ = ["ThreadNotFound", "ThreadStore", "on_thread"]


def on_thread(body: Any) -> bool:
    """Whether the request asks for a server-held thread."""
    return isinstance(body, dict) and isinstance(body.get("thread"), dict)


_CREATE_ONLY = ("system", "tools")


class ThreadNotFound(HeldNotFound):
    """A ``previous_message_id`` the mock does not hold."""

    def __init__(self, message_id: str) -> None:
        super().__init__(
            f"thread.previous_message_id: the mock does not hold message {message_id!r}. {WHY_NOT_HELD} "
            'Send the whole history with "thread": {"type": "create"}.',
            status=404,
            type="not_found_error",
        )

    def body(self) -> bytes:
        """Anthropic's error body, with the ``details`` the SDK reads to replay."""
        return dumps(
            {
                "type": "error",
                "error": {"type": self.type, "message": self.message, "details": {"error_code": "thread_not_found"}},
            }
        ).encode()


class ThreadStore:
    """What the mock answered on threads: reply id -> the whole request body that led to
    it, with the reply appended to its messages."""

    def __init__(
        self, max_entries: int = 1000, max_bytes: int = 32 * 1024 * 1024, *, state: State | None = None
    ) -> None:
        self._held: HeldMemory[dict[str, Any]] = HeldMemory(max_entries, max_bytes, state=state, space="threads")

    def expand(self, body: Any) -> tuple[Any, str | None, bool]:
        """(the whole request ``body`` stands for, the held id it was rebuilt from, whether
        to keep the reply); raises ``ThreadNotFound`` for an id it lacks."""
        if not on_thread(body):
            return body, None, False
        thread = body["thread"]
        whole = {k: v for k, v in body.items() if k != "thread"}
        if thread.get("type") != "continue":
            return whole, None, True
        message_id = str(thread.get("previous_message_id"))
        earlier = self._held.get(message_id)
        if earlier is None:
            raise ThreadNotFound(message_id)
        for field in _CREATE_ONLY:
            if field in earlier:
                whole[field] = earlier[field]
        messages = whole.get("messages")
        new: list[Any] = messages if isinstance(messages, list) else []
        whole["messages"] = [*earlier["messages"], *new]
        return whole, message_id, True

    def keep(self, whole_body: dict[str, Any], reply_json: bytes) -> None:
        """Hold ``whole_body`` (what ``expand`` gave) with the reply (a non-streaming
        Messages body) after it."""
        reply = json.loads(reply_json)
        if not isinstance(reply.get("content"), list):
            return  # not a Messages reply: threads are Anthropic's alone
        whole = {k: v for k, v in whole_body.items() if k in (*_CREATE_ONLY, "messages")}
        whole["messages"] = [*whole.get("messages", []), {"role": "assistant", "content": reply["content"]}]
        self._held.put(reply["id"], whole)

    def clear(self) -> None:
        self._held.clear()
