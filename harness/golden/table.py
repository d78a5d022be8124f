"""Event sequences as a readable table — the golden file format (docs/goldens.md).

Close to the seed's own tables::

    SEQ  EVENT TYPE               PERSISTENCE  KEY FIELDS
    ───  ───────────────────────  ───────────  ──────────────────────────────
    0    user_message_sent        persisted    content="Hello"
    *    message_chunk ×12        transient    content="Twelve words of text…" blockIndex=0
    1    message                  persisted    content="Twelve words…" messageId="<id:1>" stopReason="end_turn"
    -    complete                 transient    reason="success"

Each event is first made a plain record (``harness.golden.records``: every field,
volatile values normalised). ``SEQ`` is its sequence number (``sequenceNumber``,
``sequence_number`` or ``seq``), ``*`` for a streamed chunk and ``-`` for other events
without one; ``EVENT TYPE`` its ``type`` (or ``event_type``, ``eventType``, ``kind``;
else its class name); ``PERSISTENCE`` its ``persistence`` (``-`` if none). Every other
field is a key field, ``content`` first, then by name. A harness ``Event`` (or its JSON
form) shows its ``data`` as the key fields; its envelope (``eventIndex``, the row's
position; ``sessionId``; ``timestamp``) is left out.

A run of consecutive chunks of one type (``message_chunk``, ``thinking_chunk``, or any
type ending in ``_chunk``/``.delta``) whose other fields agree is folded into one row
with its count and joined text, so a golden does not churn when the chunk size
changes. An instruction block in any text is shown as its step count.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.golden.records import Shown, VolatileRules, plain_records
from mockllm import INSTRUCTION_END, INSTRUCTION_START
from mockllm.testing import INSTRUCTION_BLOCK

__all__ = ["CHUNK_TYPES", "Row", "event_rows", "render_event_table", "render_rows"]

CHUNK_TYPES = frozenset({"message_chunk", "thinking_chunk"})
"""The harness's streamed, transient events (folded into one row per run)."""

_CHUNK_SUFFIXES = ("_chunk", "Chunk", ".delta", "_delta")
_TEXT_KEYS = ("content", "delta", "text")
_EVENT_KEYS = frozenset({"type", "persistence", "eventIndex", "sequenceNumber", "sessionId", "timestamp", "data"})
_TYPE_KEYS = ("type", "event_type", "eventType", "kind")
_SEQ_KEYS = ("sequenceNumber", "sequence_number", "seq")
_LEADING_KEYS = ("content",)
_SEQ_WIDTH = 4
_TYPE_WIDTH = 24
_PERSISTENCE_WIDTH = 12
_PLAIN_TOKEN = re.compile(r'[^\s"]+')  # no space, no quote (and printable: _column_text)
_NUMBER = re.compile(r"-?\d+(?:\.\d*)?")


def _abbreviate_script(text: str) -> str:
    """The instruction block a prompt carries, shown as its step count: the script's
    effect is what the rest of the table shows."""

    def steps(match: re.Match[str]) -> str:
        try:
            chain = json.loads(match.group(0)[len(INSTRUCTION_START) : -len(INSTRUCTION_END)])
            count = len(chain["instruction_chain"])
        except (ValueError, KeyError, TypeError):
            return "<instruction block>"
        return f"<instruction chain: {count} steps>"

    return INSTRUCTION_BLOCK.sub(steps, text)


def _quoted(text: str) -> str:
    """``text`` as a JSON string, with every character a reader cannot see escaped (a
    zero-width space, a no-break space, a bidi override: what ``str.isprintable`` refuses
    and JSON leaves as it is), so that a change in one shows in the golden's diff and in
    review instead of two lines that look the same."""
    quoted = json.dumps(text, ensure_ascii=False)
    if quoted.isprintable():
        return quoted
    return "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in quoted)


def _column(value: Any) -> str:
    """A SEQ, EVENT TYPE or PERSISTENCE value. A string that could be read as something
    else is quoted: one with spaces or invisible characters (the column's padding would
    hide them), one that spells a number (a string sequence number would look like an
    integer), and the table's own ``-`` and ``*``."""
    return _column_text(value) if isinstance(value, str) else str(value)


@functools.lru_cache(maxsize=256)
def _column_text(text: str) -> str:
    # Cached: a table repeats a few types and persistences on every row.
    if not (_PLAIN_TOKEN.fullmatch(text) and text.isprintable()) or text in ("-", "*") or _NUMBER.fullmatch(text):
        return _quoted(text)
    return text


def _compact(value: Any) -> str:
    """Compact JSON with sorted keys; ``Shown`` values as their text."""
    if isinstance(value, Shown):
        return value.text
    if isinstance(value, str):
        return _quoted(_abbreviate_script(value))
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{_quoted(k)}:{_compact(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_compact(v) for v in value) + "]"
    return json.dumps(value)


def _key_fields(data: Mapping[str, Any]) -> str:
    keys = [k for k in _LEADING_KEYS if k in data] + sorted(k for k in data if k not in _LEADING_KEYS)
    return " ".join(f"{k}={_compact(data[k])}" for k in keys)


class _Record:
    """One event's columns: sequence number, type, persistence and key fields."""

    def __init__(self, class_name: str, record: dict[str, Any]) -> None:
        fields = dict(record)
        if set(fields) <= _EVENT_KEYS and isinstance(fields.get("data"), dict):
            self.kind = _column(fields.get("type"))
            persistence = fields.get("persistence")
            self.persistence = _column(persistence) if persistence else "-"
            self.seq = fields.get("sequenceNumber")
            self.fields: dict[str, Any] = fields["data"]
            return
        type_key = next((k for k in _TYPE_KEYS if k in fields), None)
        self.kind = _column(fields.pop(type_key)) if type_key else (class_name if class_name != "dict" else "-")
        persistence = fields.pop("persistence", None)
        self.persistence = _column(persistence) if persistence is not None else "-"
        seq_key = next((k for k in _SEQ_KEYS if k in fields), None)
        self.seq = fields.pop(seq_key) if seq_key else None
        self.fields = fields

    @property
    def is_chunk(self) -> bool:
        return self.seq is None and (self.kind in CHUNK_TYPES or self.kind.endswith(_CHUNK_SUFFIXES))

    def text_key(self) -> str | None:
        return next((k for k in _TEXT_KEYS if isinstance(self.fields.get(k), str)), None)

    def folds_with(self, other: _Record) -> bool:
        """Whether ``other`` continues this chunk run: same type, same text key, and
        every other field equal (so folding never hides a difference)."""
        key = self.text_key()
        if not (other.is_chunk and other.kind == self.kind and key is not None and other.text_key() == key):
            return False
        return {k: v for k, v in self.fields.items() if k != key} == {k: v for k, v in other.fields.items() if k != key}

    @property
    def seq_text(self) -> str:
        if self.seq is not None:
            return _column(self.seq)
        return "*" if self.is_chunk else "-"


Row = tuple[str, str, str, str, range]
"""(SEQ, EVENT TYPE, PERSISTENCE, KEY FIELDS, positions of the events on the row)."""


def _fold(records: Sequence[_Record]) -> list[Row]:
    rows: list[Row] = []
    i = 0
    while i < len(records):
        record = records[i]
        j = i + 1
        if record.is_chunk and record.text_key() is not None:
            while j < len(records) and record.folds_with(records[j]):
                j += 1
            key = record.text_key()
            assert key is not None
            fields = dict(record.fields)
            fields[key] = "".join(r.fields[key] for r in records[i:j])
            rows.append(
                (record.seq_text, f"{record.kind} ×{j - i}", record.persistence, _key_fields(fields), range(i, j))
            )
        else:
            rows.append((record.seq_text, record.kind, record.persistence, _key_fields(record.fields), range(i, j)))
        i = j
    return rows


def event_rows(events: Iterable[Any], **options: Any) -> list[Row]:
    """The table's rows for ``events``; ``options`` are ``plain_records``'s (syrupy's
    ``matcher``/``exclude``/``include`` and the ``rules``)."""
    return _fold([_Record(name, record) for name, record in plain_records(events, **options)])


def render_rows(rows: Iterable[Row], *, title: str | None = None, marks: Mapping[int, str] | None = None) -> str:
    """The table text of ``rows``, ending with a newline; ``marks`` maps an event's
    position to a note shown at the end of its row."""
    lines = [f"# {title}"] if title else []
    header = (
        "SEQ".ljust(_SEQ_WIDTH)
        + " "
        + "EVENT TYPE".ljust(_TYPE_WIDTH)
        + " "
        + "PERSISTENCE".ljust(_PERSISTENCE_WIDTH)
        + " KEY FIELDS"
    )
    rule = (
        ("─" * (_SEQ_WIDTH - 1)).ljust(_SEQ_WIDTH)
        + " "
        + "─" * (_TYPE_WIDTH - 1)
        + "  "
        + "─" * (_PERSISTENCE_WIDTH - 1)
        + "  "
        + "─" * 30
    )
    lines += [header, rule]
    for seq, kind, persistence, fields, positions in rows:
        line = f"{seq.ljust(_SEQ_WIDTH)} {kind.ljust(_TYPE_WIDTH)} {persistence.ljust(_PERSISTENCE_WIDTH)} {fields}"
        notes = [marks[p] for p in positions if p in marks] if marks else []
        if notes:
            line += "   <-- " + "; ".join(dict.fromkeys(notes))
        lines.append(line.rstrip())
    return "\n".join(lines) + "\n"


def render_event_table(
    events: Iterable[Any],
    *,
    title: str | None = None,
    marks: Mapping[int, str] | None = None,
    rules: VolatileRules | None = None,
) -> str:
    """The table of ``events`` (normalised and folded), ending with a newline.

    ``marks`` maps an event's position in ``events`` to a note shown at the end of
    its row; invariants use it to point at the offending events.
    """
    return render_rows(event_rows(events, rules=rules), title=title, marks=marks)
