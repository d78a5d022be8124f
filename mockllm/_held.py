"""What the mock holds between requests for server-held conversations.

``HeldMemory`` is the one bounded map behind Anthropic message threads
(``mockllm._wire.anthropic_threads``) and OpenAI Responses state (``mockllm._wire.openai_responses_state``): id ->
value, bounded in entries and bytes (least recently used forgotten first), per mock
instance (in its state: shared by the workers of ``serve --workers``), cleared by
``MockLLM.reset``. ``HeldNotFound`` is the rejection of an id the
mock does not hold, which each provider shapes its own way (``body``).
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

from mockllm._exceptions import RequestRejected
from mockllm._generation import stable_hex
from mockllm._state import KeyValues, MemoryState, State

__all__ = ["WHY_NOT_HELD", "HeldConversations", "HeldMemory", "HeldNotFound", "held_reply_id"]

T = TypeVar("T")

WHY_NOT_HELD = (
    "The mock keeps the conversations it answered (in memory, or in the state its workers "
    "share: serve --state) until reset or until newer ones evict them; this id was never "
    "answered here, or the mock was reset, or it was evicted, or a mock process that shares "
    "no state with this one answered it."
)
"""Why an id may be unknown to the mock: every not-found message says so."""


def held_reply_id(plan_id: str, prompt: str) -> str:
    """The id of a reply the mock holds: ``plan_id`` (from seed, chain and turn) mixed with
    the conversation it answers (``prompt``: the rebuilt body's prompt JSON, the text its
    input tokens are counted over, ``mockllm._usage.prompt_json``).

    A later request continues from this id, so two conversations one script answers at
    the same turn must not share it; the same conversation still gets the same id.
    """
    return stable_hex(plan_id, prompt, length=len(plan_id))


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
    """id -> value, bounded in entries and in bytes (of the value's JSON), the least
    recently used forgotten first; kept in ``state`` (``mockllm._state``: this process's
    memory unless the server shares its state between workers) under ``space``."""

    def __init__(
        self,
        max_entries: int = 1000,
        max_bytes: int = 32 * 1024 * 1024,
        *,
        state: State | None = None,
        space: str = "held",
    ) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        where = state if state is not None else MemoryState()
        self._held: KeyValues[T] = where.map(space, max_entries=max_entries, max_bytes=max_bytes, lru=True)

    def get(self, key: str) -> T | None:
        return self._held.get(key)

    def put(self, key: str, value: T) -> None:
        self._held.put(key, value)

    def __len__(self) -> int:
        return len(self._held)

    def clear(self) -> None:
        self._held.clear()
