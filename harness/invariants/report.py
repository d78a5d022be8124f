"""How a broken invariant is reported: ``InvariantError``, whose message names the rule and
shows the whole event sequence in the golden-table form with the offending events marked."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.events import Event
from harness.exceptions import HarnessError
from harness.golden.table import render_event_table

__all__ = ["Events", "InvariantError", "data_of", "fail", "records_of"]

Events = Sequence[Event | Mapping[str, Any]]


class InvariantError(HarnessError, AssertionError):
    """An invariant broke; the message shows the offending events."""


def records_of(events: Iterable[Event | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The events as their JSON dicts, whichever form they came in."""
    return [e.to_json_dict() if isinstance(e, Event) else dict(e) for e in events]


def fail(rule: str, records: list[dict[str, Any]], marks: Mapping[int, str]) -> None:
    """Raise ``InvariantError`` naming ``rule``, the sequence shown with ``marks`` beside its events."""
    raise InvariantError(f"invariant broken: {rule}\n" + render_event_table(records, marks=marks))


def data_of(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """An event's ``data`` object, or an empty one where it has none."""
    data = record.get("data")
    return data if isinstance(data, Mapping) else {}
