"""Events of any shape as plain records, with volatile values normalised.

A golden holds a sequence of events: dicts, pydantic models, dataclasses or the
harness's ``Event``. Each becomes a plain record — every field, nested values
included — by one walk that also applies syrupy's own property filters and matchers
(``exclude``, ``include``, ``matcher``: ``props``, ``paths``, ``path_type``,
``path_value``) at every level, with the path syrupy users know: ``"0.data.messageId"``
is the ``messageId`` key of the first event's ``data``.

After the user's matcher, volatile values are normalised by ``VolatileRules``:

- at an event's own level (its fields, and an ``Event``'s ``data``; nested values such
  as tool arguments are the agent's data and stay as they are):
  ids (``id``, ``*Id``, ``*_id``) become ``<label:n>``, numbered in order of first
  appearance across the whole golden, so a tool_use and its tool_result show the
  same ``<tool:1>``; timestamps (``timestamp``, ``created``, ``*_at``, ``*At``) become
  ``<timestamp>``; durations (``duration*``, ``elapsed*``, ``latency*``, ``*_ms``,
  ``*Ms``) become ``<duration>``;
- anywhere: a ``datetime``/``date``/``time`` is ``<timestamp>``, a ``timedelta``
  ``<duration>``.

Nothing is dropped silently: a value with no stable text form (an object whose repr
is its memory address) is a ``TypeError`` naming where it is.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import re
import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from harness.events import Event

__all__ = ["Shown", "VolatileRules", "plain_records"]

PropertyPath = tuple[tuple[Hashable, type], ...]
Matcher = Callable[..., Any]
Filter = Callable[..., bool]


@dataclass(frozen=True)
class Shown:
    """A value shown by its text, unquoted (a syrupy ``Repr`` or an object's own repr)."""

    text: str


_ID_LABELS = {
    "messageId": "id",
    "toolUseId": "tool",
    "approvalId": "approval",
    "runId": "run",
    "planId": "plan",
    "fileId": "file",
}
_TIMESTAMP_KEY = re.compile(r"^(timestamp|created|updated|time|ts)$|(_at|At|_time|Time|timestamp|Timestamp)$")
_DURATION_KEY = re.compile(
    r"^(duration|elapsed|latency)|(Duration|Elapsed|Latency|_duration|_elapsed|_latency)|(_ms|Ms|_seconds|Seconds)$"
)


@dataclass
class VolatileRules:
    """Which keys hold volatile values, and the ids seen so far in one golden.

    Subclass and override ``id_label``/``is_timestamp``/``is_duration`` (or set
    ``GoldenExtension.volatile_rules``) to change what counts as volatile.
    """

    _names: dict[tuple[str, str], str] = field(default_factory=dict)
    _counts: dict[str, int] = field(default_factory=dict)

    def id_label(self, key: str) -> str | None:
        """The label ids under ``key`` are numbered with, or None if ``key`` holds no id."""
        if key in _ID_LABELS:
            return _ID_LABELS[key]
        if key in ("id", "ID"):
            return "id"
        for suffix in ("_id", "Id", "ID"):
            if key.endswith(suffix) and len(key) > len(suffix):
                return key[: -len(suffix)]
        return None

    def is_timestamp(self, key: str) -> bool:
        return bool(_TIMESTAMP_KEY.search(key))

    def is_duration(self, key: str) -> bool:
        return bool(_DURATION_KEY.search(key))

    def normalise(self, key: str, value: Any) -> Any:
        """``value`` of ``key`` with its volatile part replaced (see module doc)."""
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return value
        label = self.id_label(key)
        if label is not None and not isinstance(value, float):
            name = (label, str(value))
            if name not in self._names:
                self._counts[label] = self._counts.get(label, 0) + 1
                self._names[name] = f"<{label}:{self._counts[label]}>"
            return self._names[name]
        if self.is_duration(key):
            return "<duration>"
        if self.is_timestamp(key):
            return "<timestamp>"
        return value


def _path_text(path: PropertyPath) -> str:
    return ".".join(str(p) for p, _ in path) or "(top level)"


class _Walk:
    """One walk over a golden's data: user filters and matcher, then plain values."""

    def __init__(
        self, rules: VolatileRules, *, matcher: Matcher | None, exclude: Filter | None, include: Filter | None
    ) -> None:
        self.rules = rules
        self.matcher = matcher
        self.exclude = exclude
        self.include = include

    def keep(self, prop: Hashable, path: PropertyPath) -> bool:
        if self.exclude is not None and self.exclude(prop=prop, path=path):
            return False
        return self.include is None or bool(self.include(prop=prop, path=path))

    def value(self, data: Any, path: PropertyPath) -> Any:
        if self.matcher is not None:
            data = self.matcher(data=data, path=path)
        if isinstance(data, Event):
            data = data.to_json_dict()
        elif isinstance(data, BaseModel):
            data = data.model_dump(mode="python", by_alias=True)
        elif dataclasses.is_dataclass(data) and not isinstance(data, type):
            data = {f.name: getattr(data, f.name) for f in dataclasses.fields(data)}
        if isinstance(data, Mapping):
            # Key rules apply to an event's own fields (and an Event's data), not to
            # nested values such as tool arguments: those are the agent's data.
            record_level = len(path) == 1 or (len(path) == 2 and path[1][0] == "data")
            out = {}
            for key, item in data.items():
                if self.keep(key, path):
                    value = self.value(item, (*path, (key, type(item))))
                    out[str(key)] = self.rules.normalise(str(key), value) if record_level else value
            return out
        if isinstance(data, (list, tuple)):
            return [self.value(item, (*path, (i, type(item)))) for i, item in enumerate(data) if self.keep(i, path)]
        if isinstance(data, (set, frozenset)):
            items = [self.value(item, path) for item in data]
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str))
        return self.scalar(data, path)

    def scalar(self, data: Any, path: PropertyPath) -> Any:
        if isinstance(data, enum.Enum):
            return data.value
        if data is None or isinstance(data, (str, int, float, bool)):
            return data
        if isinstance(data, (datetime.datetime, datetime.date, datetime.time)):
            return "<timestamp>"
        if isinstance(data, datetime.timedelta):
            return "<duration>"
        if isinstance(data, uuid.UUID):
            return str(data)
        if isinstance(data, bytes):
            return Shown(repr(data))
        if type(data).__repr__ is not object.__repr__:
            return Shown(repr(data))  # syrupy's Repr (path_type) lands here too
        raise TypeError(
            f"a golden cannot show the {type(data).__name__} at {_path_text(path)}: it has no stable text "
            "form (its repr is a memory address). Convert it to a dict, a pydantic model or a dataclass, "
            "give it a __repr__, or replace it with a syrupy matcher, e.g. golden(matcher=path_type("
            f"{{{_path_text(path)!r}: ({type(data).__name__},)}}))."
        )


def plain_records(
    events: Iterable[Any],
    *,
    rules: VolatileRules | None = None,
    matcher: Matcher | None = None,
    exclude: Filter | None = None,
    include: Filter | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """Each event as (its class name, its plain record); see the module docstring."""
    walk = _Walk(rules or VolatileRules(), matcher=matcher, exclude=exclude, include=include)
    if matcher is not None:
        events = matcher(data=events, path=())
    out = []
    for index, event in enumerate(events):
        if not walk.keep(index, ()):
            continue
        record = walk.value(event, ((index, type(event)),))
        if not isinstance(record, dict):
            raise TypeError(
                f"event {index} of the golden is a {type(event).__name__}; a golden holds a sequence of events "
                "(dicts, pydantic models, dataclasses or harness Events), or a string."
            )
        out.append((type(event).__name__, record))
    return out
