"""Events of any shape as plain records, with volatile values normalised.

A golden holds a sequence of events: dicts, pydantic models, dataclasses or the
harness's ``Event``. Each becomes a plain record — every field, nested values
included — by one walk that also applies syrupy's own property filters and matchers
(``exclude``, ``include``, ``matcher``: ``props``, ``paths``, ``path_type``,
``path_value``) at every level, with the path syrupy users know: ``"0.data.messageId"``
is the ``messageId`` key of the first event's ``data``.

After the user's matcher, the values the test's mock minted are normalised by
``VolatileRules``, wherever they are: an id that mock generated for this test (its
``MintedIds``, read from its journal: a response id such as ``chatcmpl-…``, ``msg_…``,
``resp_…``, ``fc_…``; a tool-call id ``call_mk…``/``toolu_mk…``), or an id made from one
(``approval-toolu_mk…``), becomes ``<label:n>``, the label from
its key (``messageId`` → ``id``, ``toolUseId`` → ``tool``, ``call_id`` → ``call``),
numbered in order of first appearance across the whole golden, so a tool_use and its
tool_result show the same ``<tool:1>`` and every protocol gives the same table. The
envelope the harness stamps on its ``Event`` (``timestamp``, ``sessionId``) is left out
by the table (``harness.golden.table``).

Whether a value was minted is decided by what the mock recorded, never by its form: a
user's own value of the same form (a database's 24-hex object id under ``messageId``, an
id ``msg_<24 hex>`` of the user's) is shown as it is, and a golden with no mock minted
nothing. Nothing else is normalised: a field of the user's is shown as it is whatever its name
(``order_id``, ``shipped_time``, ``elapsed_ms``); a ``datetime`` is shown in ISO form. A
value that varies from run to run is opted in per field, with syrupy's ``exclude`` /
``matcher`` or with ``volatile(ids=…, timestamps=…, durations=…)``, a matcher that shows
those keys as ``<label:n>``, ``<timestamp>``, ``<duration>``.

Nothing is dropped silently: a value with no stable text form (an object whose repr
is its memory address) is a ``TypeError`` naming where it is.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from harness.events import Event
from mockllm import MintedIds

__all__ = ["Shown", "Volatile", "VolatileRules", "plain_records", "volatile"]

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
_RESPONSE_ID_KEYS = frozenset({"messageId", "responseId", "response_id"})
"""Gemini's ``responseId`` is the bare ``response_id``, with no prefix: normalised only
under a response-id key, where the user's events carry the reply's id."""


@dataclass(frozen=True)
class Volatile:
    """A value a matcher marks as volatile: shown as ``<label:n>`` (kind ``id``, numbered
    with the golden's other ids), ``<timestamp>`` or ``<duration>``."""

    kind: Literal["id", "timestamp", "duration"]
    key: str
    value: Any


@dataclass
class VolatileRules:
    """Which values the test's mock minted (``minted``, from its journal; empty: none),
    and the ids seen so far in one golden.

    Subclass and override ``is_minted``/``id_label`` (or set
    ``GoldenExtension.volatile_rules``) to change what counts as minted.
    """

    minted: MintedIds = field(default_factory=MintedIds)
    _names: dict[tuple[str, str], str] = field(default_factory=dict)
    _counts: dict[str, int] = field(default_factory=dict)

    def is_minted(self, value: str) -> bool:
        """Whether ``value`` is an id the test's mock minted, or one token made from one."""
        return self.minted.made_from(value) is not None

    def id_label(self, key: str) -> str:
        """The label ids under ``key`` are numbered with."""
        if key in _ID_LABELS:
            return _ID_LABELS[key]
        for suffix in ("_id", "Id", "ID"):
            if key.endswith(suffix) and len(key) > len(suffix):
                return key[: -len(suffix)]
        return "id"

    def number(self, key: str, value: Any) -> str:
        """``value``'s place among the golden's ids of ``key``'s label: ``<label:n>``."""
        label = self.id_label(key)
        name = (label, str(value))
        if name not in self._names:
            self._counts[label] = self._counts.get(label, 0) + 1
            self._names[name] = f"<{label}:{self._counts[label]}>"
        return self._names[name]

    def normalise(self, key: str, value: Any) -> Any:
        """``value`` (under ``key``) as the golden shows it (see the module docstring)."""
        if isinstance(value, Volatile):
            return self.number(value.key, value.value) if value.kind == "id" else f"<{value.kind}>"
        if isinstance(value, str) and (
            self.is_minted(value) or (key in _RESPONSE_ID_KEYS and value in self.minted.response_ids)
        ):
            return self.number(key, value)
        return value


def volatile(*, ids: Iterable[str] = (), timestamps: Iterable[str] = (), durations: Iterable[str] = ()) -> Matcher:
    """A syrupy matcher that opts fields in as volatile, by key, at any level: ``ids`` are
    shown as ``<label:n>`` (numbered with the golden's other ids), ``timestamps`` as
    ``<timestamp>``, ``durations`` as ``<duration>``::

        assert events == golden(matcher=volatile(ids=["order_id"], timestamps=["shipped_time"]))
    """
    kinds: dict[str, Literal["id", "timestamp", "duration"]] = {
        **dict.fromkeys(durations, "duration"),
        **dict.fromkeys(timestamps, "timestamp"),
        **dict.fromkeys(ids, "id"),
    }

    def matcher(*, data: Any, path: PropertyPath) -> Any:
        key = path[-1][0] if path else None
        if isinstance(key, str) and key in kinds and data is not None:
            return Volatile(kinds[key], key, data)
        return data

    return matcher


def _nearest_key(path: PropertyPath) -> str:
    """The innermost key naming a value (a list item is named by its list's key)."""
    return next((str(p) for p, _ in reversed(path) if isinstance(p, str)), "id")


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
        if isinstance(data, Volatile):
            return self.rules.normalise(_nearest_key(path), data)
        if isinstance(data, Event):
            data = data.to_json_dict()
        elif isinstance(data, BaseModel):
            data = data.model_dump(mode="python", by_alias=True)
        elif dataclasses.is_dataclass(data) and not isinstance(data, type):
            data = {f.name: getattr(data, f.name) for f in dataclasses.fields(data)}
        if isinstance(data, Mapping):
            return {
                str(key): self.value(item, (*path, (key, type(item))))
                for key, item in data.items()
                if self.keep(key, path)
            }
        if isinstance(data, (list, tuple)):
            return [self.value(item, (*path, (i, type(item)))) for i, item in enumerate(data) if self.keep(i, path)]
        if isinstance(data, (set, frozenset)):
            items = [self.value(item, path) for item in data]
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str))
        return self.scalar(data, path)

    def scalar(self, data: Any, path: PropertyPath) -> Any:
        if isinstance(data, enum.Enum):
            data = data.value
        if isinstance(data, str):
            return self.rules.normalise(_nearest_key(path), str(data))
        if data is None or isinstance(data, (int, float, bool)):
            return data
        if isinstance(data, (datetime.datetime, datetime.date, datetime.time)):
            return data.isoformat()
        if isinstance(data, datetime.timedelta):
            return str(data)
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
