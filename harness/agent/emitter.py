"""Numbering and routing a run's events (seed 002, "Event Index vs Sequence Number").

Every event gets the run's next ``eventIndex``. Persisted events are written to the
store — which gives them their ``sequenceNumber`` — and published to the queue, in that
order; then every event goes to the listener.
"""

from __future__ import annotations

import inspect
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Any

from harness.agent.store import EventStore, MessageQueue
from harness.events import Event, Persistence

__all__ = ["EventEmitter", "Listener", "PERSISTENCE"]

Listener = Callable[[Event], "None | Awaitable[None]"]

# The persistence state of each event type, as the seed's tables give it.
PERSISTENCE: dict[str, Persistence] = {
    "user_message_sent": Persistence.PERSISTED,
    "thinking_chunk": Persistence.TRANSIENT,
    "thinking_complete": Persistence.TRANSIENT,
    "message_chunk": Persistence.TRANSIENT,
    "thinking": Persistence.PERSISTED,
    "message": Persistence.PERSISTED,
    "tool_use": Persistence.PERSISTED,
    "tool_result": Persistence.PERSISTED,
    "approval_requested": Persistence.PENDING,
    "approval_resolved": Persistence.TRANSIENT,
    "complete": Persistence.TRANSIENT,
    "error": Persistence.PERSISTED,
}


class EventEmitter:
    """Emits one run's events; ``persistence`` maps each event type to its state
    (the agent flows' by default)."""

    def __init__(self, session_id: str, store: EventStore, queue: MessageQueue,
                 listener: Listener | None, persistence: dict[str, Persistence] | None = None) -> None:
        self.session_id = session_id
        self._persistence = PERSISTENCE if persistence is None else persistence
        self._store = store
        self._queue = queue
        self._listener = listener
        self._index = itertools.count()
        self._last_ms = 0
        self.events: list[Event] = []

    def _timestamp(self) -> int:
        # Milliseconds, never going backwards within a run.
        self._last_ms = max(self._last_ms, time.time_ns() // 1_000_000)
        return self._last_ms

    async def emit(self, type: str, **data: Any) -> Event:
        event = Event(type=type, persistence=self._persistence[type], event_index=next(self._index),
                      session_id=self.session_id, timestamp=self._timestamp(), data=data)
        if event.persistence is Persistence.PERSISTED:
            event = self._store.append(event)
            self._queue.publish(event)
        self.events.append(event)
        if self._listener is not None:
            outcome = self._listener(event)
            if inspect.isawaitable(outcome):
                await outcome
        return event
