"""What the mock holds between requests for server-held conversations.

``HeldMemory`` is the one bounded map behind Anthropic message threads
(``mockllm._threads``) and OpenAI Responses state (``mockllm._responses_state``): id ->
value, bounded in entries and bytes (least recently used forgotten first), per mock
instance, cleared by ``MockLLM.reset``. ``HeldNotFound`` is the rejection of an id the
mock does not hold, which each provider shapes its own way (``body``).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any, Generic, Protocol, TypeVar

from mockllm._exceptions import RequestRejected

__all__ = ["WHY_NOT_HELD", "HeldConversations", "HeldMemory", "HeldNotFound"]

T = TypeVar("T")

WHY_NOT_HELD = (
    "The mock keeps the conversations it answered in memory, per process, until reset or "
    "until newer ones evict them; this id was never answered here, or the mock was reset, "
    "or it was evicted, or another mock process answered it."
)
"""Why an id may be unknown to the mock: every not-found message says so."""


class HeldNotFound(RequestRejected):
    """A held id the request names and the mock lacks; ``body`` is the provider's error body."""

    def body(self) -> bytes:
        raise NotImplementedError


class HeldConversations(Protocol):
    """What the engine asks of a protocol's server-held conversations (threads, Responses
    state): rebuild a request from what is held, then keep its reply. The codec of the
    protocol makes the store (``WireCodec.held_conversations``); the engine keeps one
    per mock and names no protocol."""

    def expand(self, body: Any) -> tuple[Any, str | None, bool]:
        """(the whole request ``body`` stands for, the held id it was rebuilt from, whether
        to keep the reply); raises a ``HeldNotFound`` for an id it lacks."""
        ...

    def keep(self, whole_body: dict[str, Any], reply_json: bytes) -> None:
        """Hold ``whole_body`` (what ``expand`` gave) with the reply after it."""
        ...

    def clear(self) -> None:
        """Forget everything held (``MockLLM.reset``)."""
        ...


class HeldMemory(Generic[T]):
    """id -> value, bounded in entries and in bytes (of the value's JSON)."""

    def __init__(self, max_entries: int = 1000, max_bytes: int = 32 * 1024 * 1024) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._held: OrderedDict[str, tuple[T, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> T | None:
        with self._lock:
            held = self._held.get(key)
            if held is None:
                return None
            self._held.move_to_end(key)
            return held[0]

    def put(self, key: str, value: T) -> None:
        size = len(json.dumps(value))
        with self._lock:
            old = self._held.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._held[key] = (value, size)
            self._bytes += size
            while self._held and (len(self._held) > self.max_entries or self._bytes > self.max_bytes):
                _, (_, dropped) = self._held.popitem(last=False)
                self._bytes -= dropped

    def __len__(self) -> int:
        with self._lock:
            return len(self._held)

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._bytes = 0
