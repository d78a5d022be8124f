"""Server-held conversations: Anthropic message threads.

The ``anthropic`` SDK's tool runner keeps the conversation on the server by default:
the first request sends ``"thread": {"type": "create"}`` and the whole history, later
ones ``{"type": "continue", "previous_message_id": …}`` and only the new messages
(``system`` and ``tools`` come from the thread). The mock keeps what it answered under
its own reply id and rebuilds the whole request before anything reads it, so selection,
validation and usage see the same body as if the client had sent the full history.

Bounded in entries and bytes (oldest forgotten first), per mock instance, cleared by
``MockLLM.reset``. An id the mock does not hold is Anthropic's 404 with
``details.error_code = "thread_not_found"``, which the SDK answers by replaying the
whole history under a new thread.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from mockllm.wire.base import RequestRejected, dumps

__all__ = ["ThreadNotFound", "ThreadStore", "on_thread"]


def on_thread(body: Any) -> bool:
    """Whether the request asks for a server-held thread."""
    return isinstance(body, dict) and isinstance(body.get("thread"), dict)

_CREATE_ONLY = ("system", "tools")


class ThreadNotFound(RequestRejected):
    """A ``previous_message_id`` the mock does not hold."""

    def __init__(self, message_id: str) -> None:
        super().__init__(
            f"thread.previous_message_id: the mock does not hold message {message_id!r}. It keeps "
            "the conversations it answered in memory, per process, until reset or until newer ones "
            "evict them; this id was never answered here, or the mock was reset, or it was evicted, "
            "or another mock process answered it. Send the whole history with "
            '"thread": {"type": "create"}.',
            status=404, type="not_found_error")

    def body(self) -> bytes:
        """Anthropic's error body, with the ``details`` the SDK reads to replay."""
        return dumps({"type": "error", "error": {"type": self.type, "message": self.message,
                                                 "details": {"error_code": "thread_not_found"}}}).encode()


class ThreadStore:
    """What the mock answered on threads: reply id -> the whole request body that led to
    it, with the reply appended to its messages."""

    def __init__(self, max_entries: int = 1000, max_bytes: int = 32 * 1024 * 1024) -> None:
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._held: OrderedDict[str, tuple[dict[str, Any], int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def expand(self, body: Any) -> Any:
        """The whole request ``body`` stands for; raises ``ThreadNotFound`` for an id it lacks."""
        if not on_thread(body):
            return body
        thread = body["thread"]
        whole = {k: v for k, v in body.items() if k != "thread"}
        if thread.get("type") != "continue":
            return whole
        message_id = str(thread.get("previous_message_id"))
        with self._lock:
            held = self._held.get(message_id)
            if held is not None:
                self._held.move_to_end(message_id)
        if held is None:
            raise ThreadNotFound(message_id)
        earlier, _ = held
        for field in _CREATE_ONLY:
            if field in earlier:
                whole[field] = earlier[field]
        new = whole.get("messages") if isinstance(whole.get("messages"), list) else []
        whole["messages"] = [*earlier["messages"], *new]
        return whole

    def keep(self, whole_body: dict[str, Any], reply_json: bytes) -> None:
        """Hold ``whole_body`` (what ``expand`` gave) with the reply (a non-streaming
        Messages body) after it."""
        reply = json.loads(reply_json)
        if not isinstance(reply.get("content"), list):
            return  # not a Messages reply: threads are Anthropic's alone
        whole = {k: v for k, v in whole_body.items() if k in (*_CREATE_ONLY, "messages")}
        whole["messages"] = [*whole.get("messages", []), {"role": "assistant", "content": reply["content"]}]
        size = len(json.dumps(whole))
        with self._lock:
            old = self._held.pop(reply["id"], None)
            if old is not None:
                self._bytes -= old[1]
            self._held[reply["id"]] = (whole, size)
            self._bytes += size
            while self._held and (len(self._held) > self._max_entries or self._bytes > self._max_bytes):
                _, (_, dropped) = self._held.popitem(last=False)
                self._bytes -= dropped

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._bytes = 0
