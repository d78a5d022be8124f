"""The embedded event store (SQLite) and the message queue persisted events go to.

The store hands out sequence numbers: per session, consecutive from 0, taken under one
lock in the same transaction that writes the event, so concurrent sessions never share
or skip a number and a crash never leaves a gap. Nothing to start: ``":memory:"`` or a
file path.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from pathlib import Path
from typing import Protocol

from harness.events import Event
from harness.systems.sqlite_store import SQLiteStore

__all__ = ["EventStore", "InMemoryMessageQueue", "MessageQueue", "SQLiteEventStore"]


class EventStore(Protocol):
    """Where persisted events go. ``append`` assigns the sequence number."""

    def append(self, event: Event) -> Event: ...

    def events(self, session_id: str) -> list[Event]: ...


class MessageQueue(Protocol):
    """Where persisted events are also published (a broker in production)."""

    def publish(self, event: Event) -> None: ...


_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    session_id TEXT NOT NULL, sequence_number INTEGER NOT NULL,
    event_index INTEGER NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (session_id, sequence_number));
CREATE TABLE IF NOT EXISTS counters (
    session_id TEXT PRIMARY KEY, next INTEGER NOT NULL);
"""


class SQLiteEventStore(SQLiteStore):
    """Events in SQLite, numbered per session by an atomic counter."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        super().__init__(path, _SCHEMA)

    def append(self, event: Event) -> Event:
        """Store ``event`` with the session's next sequence number, and return it so numbered."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT next FROM counters WHERE session_id = ?", (event.session_id,)).fetchone()
                number = row[0] if row else 0
                stored = event.model_copy(update={"sequence_number": number})
                self._db.execute("INSERT OR REPLACE INTO counters VALUES (?, ?)", (event.session_id, number + 1))
                self._db.execute(
                    "INSERT INTO events VALUES (?, ?, ?, ?, ?)",
                    (event.session_id, number, event.event_index, event.type, json.dumps(stored.to_json_dict())),
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return stored

    def events(self, session_id: str) -> list[Event]:
        """The session's persisted events in sequence order."""
        rows = self._rows("SELECT body FROM events WHERE session_id = ? ORDER BY sequence_number", (session_id,))
        return [Event.model_validate(json.loads(body)) for (body,) in rows]


class InMemoryMessageQueue:
    """The embedded queue: published events kept per session, in order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._published: dict[str, list[Event]] = defaultdict(list)

    def publish(self, event: Event) -> None:
        with self._lock:
            self._published[event.session_id].append(event)

    def events(self, session_id: str) -> list[Event]:
        with self._lock:
            return list(self._published[session_id])
