"""The event record every harness runner emits, and goldens and invariants read.

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
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Event", "Persistence"]


class Persistence(str, Enum):
    TRANSIENT = "transient"
    PENDING = "pending"
    PERSISTED = "persisted"


class Event(BaseModel):
    """One event of a run.

    ``event_index`` orders all events of a run (the frontend's order);
    ``sequence_number`` is set on persisted events only, consecutive from 0 per
    session (the store's order). ``timestamp`` is milliseconds since the epoch.
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
