"""The event record every harness runner emits, and the one way events travel.

One model for all runners (agent runner, chain executor, planner) so that any run can
be checked by the same invariants and stored as the same kind of golden file. Field
names are the seed's (``eventIndex``, ``sequenceNumber``) in JSON; Python attributes
use snake_case. ``data`` holds the event's key fields, also in the seed's spelling
(``content``, ``blockIndex``, ``toolUseId``, ``stopReason``…).

Persistence states (seed 002):

| state       | meaning                          | sequenceNumber |
|-------------|----------------------------------|----------------|
| transient   | streaming only, never stored     | none           |
| pending     | will be stored asynchronously    | none (pending) |
| persisted   | written to the store and queue   | yes            |

A pending event is emitted without a number and stored right after its listeners have
heard it (``harness.systems.agent.emitter``); the stored copy is persisted and takes the
session's next sequence number. Chain executor events are all transient: they go to
listeners only and are never stored.

One pipeline for every runner: an ``EventClock`` stamps a run's events, ``notify``
hands each to the run's listeners, and a runner whose events have a shape of their own
(the chain executor's ``ChainEvent``, the seeds' wire form) derives that shape from
``EventRecord``, whose ``as_event`` is the one way such an event becomes an ``Event``.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable, Iterable
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Event", "EventClock", "EventRecord", "Listener", "Persistence", "notify", "settled"]

E = TypeVar("E")
T = TypeVar("T")

Listener = Callable[[E], "None | Awaitable[None]"]
"""Hears a run's events: a plain function or a coroutine function."""


class Persistence(str, Enum):
    TRANSIENT = "transient"
    PENDING = "pending"
    PERSISTED = "persisted"


class Event(BaseModel):
    """One event of a run.

    ``event_index`` orders all events of a run (the frontend's order);
    ``sequence_number`` is set on persisted events only, consecutive per session
    from 0 and continuing across the session's runs (the store's order). ``timestamp`` is milliseconds since the epoch.
    The rules between these fields are checked by ``harness.invariants``, not here,
    so that a broken run can be recorded and shown.
    """

    model_config = ConfigDict(populate_by_name=True, frozen=True, extra="forbid")

    type: str
    persistence: Persistence
    event_index: int = Field(alias="eventIndex", ge=0)
    sequence_number: int | None = Field(default=None, alias="sequenceNumber", ge=0)
    session_id: str = Field(alias="sessionId")
    timestamp: int = Field(ge=0)
    data: dict[str, Any] = Field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        """The event as JSON-ready data, in the seed's spelling."""
        return self.model_dump(mode="json", by_alias=True)


class EventRecord(BaseModel):
    """Base of an event shape of a runner's own: a subclass has ``event_type`` and
    ``timestamp`` fields, and names in ``RUN_FIELDS`` the fields that say which run the
    event belongs to (an ``Event`` says that with its session id)."""

    RUN_FIELDS: ClassVar[frozenset[str]] = frozenset()

    if TYPE_CHECKING:
        event_type: str
        timestamp: int

    def as_event(self, event_index: int, session_id: str, persistence: Persistence = Persistence.TRANSIENT) -> Event:
        """This event as an ``Event`` of session ``session_id``: its set fields, but the
        type, the timestamp and the run's, are the data (in their JSON spelling)."""
        data = self.model_dump(
            mode="json", by_alias=True, exclude_none=True, exclude={"event_type", "timestamp", *self.RUN_FIELDS}
        )
        return Event(
            type=self.event_type,
            persistence=persistence,
            event_index=event_index,
            session_id=session_id,
            timestamp=self.timestamp,
            data=data,
        )


class EventClock:
    """The timestamps of one run's events: milliseconds since the epoch, strictly
    increasing, so a run's events are ordered by their time alone (a burst of events
    within one millisecond runs ahead of the wall clock by a millisecond each)."""

    def __init__(self) -> None:
        self._last_ms = 0

    def now(self) -> int:
        self._last_ms = max(self._last_ms + 1, time.time_ns() // 1_000_000)
        return self._last_ms


async def settled(outcome: T | Awaitable[T]) -> T:
    """``outcome`` itself, or what it resolves to when it is awaitable: how the harness
    calls user code (listeners, tools, runners, vector stores, deciders) that may be
    sync or async."""
    if inspect.isawaitable(outcome):
        return await outcome
    return outcome


async def notify(listeners: Iterable[Listener[E]], event: E) -> None:
    """Hand ``event`` to each listener in order, awaiting those that are async."""
    for listener in listeners:
        await settled(listener(event))
