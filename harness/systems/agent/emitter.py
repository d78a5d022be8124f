"""Numbering and routing a run's events (seed 002, "Event Index vs Sequence Number").

Every event gets the run's next ``eventIndex``. Persisted events are written to the
store — which gives them their ``sequenceNumber`` — and published to the queue, in that
order; then every event goes to the listener. A pending event (``approval_requested``)
goes to the listener first, without a number, and is then stored and published as
persisted, taking the session's next number: what the user must answer reaches them
before the write, and the record of the request is never lost. Timestamps come from the run's
``EventClock``; the listener is called through ``harness.events.notify``.
"""

from __future__ import annotations

import itertools
from typing import Any

from harness.events import Event, EventClock, Listener, Persistence, notify
from harness.systems.agent.store import EventStore, MessageQueue

__all__ = ["EventEmitter", "PERSISTENCE"]

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

    def __init__(
        self,
        session_id: str,
        store: EventStore,
        queue: MessageQueue,
        listener: Listener[Event] | None,
        persistence: dict[str, Persistence] | None = None,
    ) -> None:
        self.session_id = session_id
        self._persistence = PERSISTENCE if persistence is None else persistence
        self._store = store
        self._queue = queue
        self._listener = listener
        self._index = itertools.count()
        self._clock = EventClock()
        self.events: list[Event] = []

    async def emit(self, type: str, **data: Any) -> Event:
        event = Event(
            type=type,
            persistence=self._persistence[type],
            event_index=next(self._index),
            session_id=self.session_id,
            timestamp=self._clock.now(),
            data=data,
        )
        if event.persistence is Persistence.PERSISTED:
            event = self._store.append(event)
            self._queue.publish(event)
        self.events.append(event)
        if self._listener is not None:
            await notify((self._listener,), event)
        if event.persistence is Persistence.PENDING:
            self._queue.publish(self._store.append(event.model_copy(update={"persistence": Persistence.PERSISTED})))
        return event
