"""Event sequences as a readable table — the golden file format.

Close to the seed's own tables::

    SEQ  EVENT TYPE             PERSISTENCE  KEY FIELDS
    ───  ─────────────────────  ───────────  ──────────────────────────────
    0    user_message_sent      persisted    content="Hello"
    *    message_chunk ×12      transient    blockIndex=0 content="Twelve words of text…"
    1    message                persisted    content="Twelve words…" messageId=<id:1> stopReason="end_turn"
    -    complete               transient    reason="success"

``SEQ`` is the sequenceNumber of persisted events, ``*`` for streamed chunks and ``-``
for other events without one. A run of consecutive chunks of the same type and block
is folded into one line with its count and joined text, so a golden does not churn
when the chunk size changes. Volatile values are normalised: timestamps and session
ids are left out, and ids (message ids, tool-call ids, approval ids…) are replaced by
``<kind:n>`` in order of first appearance, so the same behaviour gives the same table
whatever ids the provider or the clock produced.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.events import Event
from mockllm.instructions import INSTRUCTION_BLOCK, INSTRUCTION_END, INSTRUCTION_START

__all__ = ["CHUNK_TYPES", "normalise_events", "render_event_table"]

CHUNK_TYPES = frozenset({"message_chunk", "thinking_chunk"})
"""Streamed, transient events folded into one line per run."""

# Keys whose values are volatile identifiers, and the label they are normalised to.
_ID_KEYS = {
    "messageId": "id",
    "toolUseId": "tool",
    "approvalId": "approval",
    "runId": "run",
    "planId": "plan",
    "fileId": "file",
}
_LEADING_KEYS = ("content",)
_SEQ_WIDTH = 4
_TYPE_WIDTH = 24
_PERSISTENCE_WIDTH = 12


class _IdNames:
    """Gives each distinct id a stable name in order of first appearance."""

    def __init__(self) -> None:
        self._names: dict[tuple[str, str], str] = {}
        self._counts: dict[str, int] = {}

    def __call__(self, label: str, value: Any) -> str:
        key = (label, str(value))
        if key not in self._names:
            self._counts[label] = self._counts.get(label, 0) + 1
            self._names[key] = f"<{label}:{self._counts[label]}>"
        return self._names[key]


def _normalise_value(key: str, value: Any, names: _IdNames) -> Any:
    label = _ID_KEYS.get(key)
    if label is not None and value is not None:
        return names(label, value)
    return value


def normalise_events(events: Iterable[Event | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Events as plain dicts with volatile fields removed or renamed (see module doc)."""
    names = _IdNames()
    out = []
    for event in events:
        record = event.to_json_dict() if isinstance(event, Event) else dict(event)
        data = record.get("data") or {}
        out.append({
            "type": record.get("type"),
            "persistence": record.get("persistence"),
            "sequenceNumber": record.get("sequenceNumber"),
            "data": {k: _normalise_value(k, v, names) for k, v in data.items()},
        })
    return out


def _abbreviate_script(text: str) -> str:
    """The instruction block a prompt carries, shown as its step count: the script's
    effect is what the rest of the table shows."""
    def steps(match: re.Match[str]) -> str:
        try:
            chain = json.loads(match.group(0)[len(INSTRUCTION_START):-len(INSTRUCTION_END)])
            count = len(chain["instruction_chain"])
        except (ValueError, KeyError, TypeError):
            return "<instruction block>"
        return f"<instruction chain: {count} steps>"
    return INSTRUCTION_BLOCK.sub(steps, text)


def _abbreviate_all(value: Any) -> Any:
    if isinstance(value, str):
        return _abbreviate_script(value)
    if isinstance(value, list):
        return [_abbreviate_all(v) for v in value]
    if isinstance(value, dict):
        return {k: _abbreviate_all(v) for k, v in value.items()}
    return value


def _format_value(value: Any) -> str:
    value = _abbreviate_all(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _key_fields(data: Mapping[str, Any]) -> str:
    keys = [k for k in _LEADING_KEYS if k in data] + sorted(k for k in data if k not in _LEADING_KEYS)
    return " ".join(f"{k}={_format_value(data[k])}" for k in keys)


def _seq(record: Mapping[str, Any]) -> str:
    if record.get("sequenceNumber") is not None:
        return str(record["sequenceNumber"])
    return "*" if record.get("type") in CHUNK_TYPES else "-"


Row = tuple[str, str, str, str, range]
"""(SEQ, EVENT TYPE, PERSISTENCE, KEY FIELDS, positions of the events on the row)."""


def _fold(records: Sequence[dict[str, Any]]) -> list[Row]:
    rows: list[Row] = []
    i = 0
    while i < len(records):
        record = records[i]
        kind = record.get("type")
        if kind in CHUNK_TYPES and record.get("sequenceNumber") is None:
            block = record["data"].get("blockIndex")
            j = i
            while (j < len(records) and records[j].get("type") == kind
                   and records[j].get("sequenceNumber") is None
                   and records[j]["data"].get("blockIndex") == block):
                j += 1
            run = records[i:j]
            text = "".join(str(r["data"].get("content", "")) for r in run)
            data = {k: v for k, v in record["data"].items() if k != "content"}
            data["content"] = text
            rows.append((_seq(record), f"{kind} ×{len(run)}", str(record.get("persistence")),
                         _key_fields(data), range(i, j)))
            i = j
            continue
        rows.append((_seq(record), str(kind), str(record.get("persistence")), _key_fields(record["data"]),
                     range(i, i + 1)))
        i += 1
    return rows


def render_event_table(events: Iterable[Event | Mapping[str, Any]], *, title: str | None = None,
                       marks: Mapping[int, str] | None = None) -> str:
    """The table of ``events`` (normalised and folded), ending with a newline.

    ``marks`` maps an event's position in ``events`` to a note shown at the end of
    its row; invariants use it to point at the offending events.
    """
    rows = _fold(normalise_events(events))
    lines = []
    if title:
        lines.append(f"# {title}")
    header = ("SEQ".ljust(_SEQ_WIDTH) + " " + "EVENT TYPE".ljust(_TYPE_WIDTH) + " "
              + "PERSISTENCE".ljust(_PERSISTENCE_WIDTH) + " KEY FIELDS")
    rule = ("─" * (_SEQ_WIDTH - 1)).ljust(_SEQ_WIDTH) + " " + "─" * (_TYPE_WIDTH - 1) + "  " \
        + "─" * (_PERSISTENCE_WIDTH - 1) + "  " + "─" * 30
    lines += [header, rule]
    for seq, kind, persistence, fields, positions in rows:
        line = f"{seq.ljust(_SEQ_WIDTH)} {kind.ljust(_TYPE_WIDTH)} {persistence.ljust(_PERSISTENCE_WIDTH)} {fields}"
        notes = [marks[p] for p in positions if p in marks] if marks else []
        if notes:
            line += "   <-- " + "; ".join(dict.fromkeys(notes))
        lines.append(line.rstrip())
    return "\n".join(lines) + "\n"
