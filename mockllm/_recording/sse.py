"""Server-sent events as a recording keeps them: split as they arrive, kept exactly.

``EventSplitter`` cuts a byte stream into events at blank lines (LF, CRLF or CR line
ends, as the SDKs' decoders accept) however the bytes were chunked. ``event_record``
turns one event's bytes into its readable form — ``{"event": name, "data": {...}}`` when
rendering that form gives back the very same bytes, ``{"text": ...}`` for a plain data
line such as ``[DONE]``, else ``{"raw": ...}`` — and ``event_bytes`` renders it back, so
a replay sends what the provider sent, byte for byte.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["EventSplitter", "event_bytes", "event_record", "parse_events"]

_BLANK_LINE = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)")


class EventSplitter:
    """Feed bytes as they arrive; get back each event that became complete."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        self._buffer += chunk
        return self._cut(final=False)

    def close(self) -> list[bytes]:
        """The events left when the stream ends, an unterminated last one included."""
        events = self._cut(final=True)
        rest, self._buffer = self._buffer, b""
        return [*events, rest] if rest else events

    def _cut(self, *, final: bool) -> list[bytes]:
        events = []
        start = 0
        for found in _BLANK_LINE.finditer(self._buffer):
            # A CR at the very end may be the first half of a CRLF still on its way.
            if not final and found.end() == len(self._buffer) and self._buffer.endswith(b"\r"):
                break
            events.append(self._buffer[start : found.end()])
            start = found.end()
        self._buffer = self._buffer[start:]
        return events


def parse_events(body: bytes) -> list[bytes]:
    """A whole SSE body cut into its events (an unterminated tail is the last one)."""
    splitter = EventSplitter()
    return [*splitter.feed(body), *splitter.close()]


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def event_record(raw: bytes, delay_ms: float) -> dict[str, Any]:
    """The readable record of one event's bytes, exact: rendering it gives ``raw``."""
    record: dict[str, Any] = {"delay_ms": round(delay_ms, 1)}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        record["raw"] = raw.decode("latin-1")
        record["encoding"] = "latin-1"
        return record
    name, data = _canonical(text)
    if data is not None:
        if name is not None:
            record["event"] = name
        try:
            parsed = json.loads(data)
        except ValueError:
            parsed = None
        if isinstance(parsed, (dict, list)) and _compact(parsed) == data:
            record["data"] = parsed
        else:
            record["text"] = data
        return record  # _canonical took the text apart exactly: event_bytes(record) == raw
    record["raw"] = text
    return record


def _canonical(text: str) -> tuple[str | None, str | None]:
    """(event name, data) when ``text`` is ``[event: X\\n]data: Y\\n\\n``, else (None, None)."""
    if not text.endswith("\n\n"):
        return None, None
    lines = text[:-2].split("\n")
    name = None
    if lines and lines[0].startswith("event: "):
        name = lines.pop(0)[len("event: ") :]
    if len(lines) != 1 or not lines[0].startswith("data: "):
        return None, None
    return name, lines[0][len("data: ") :]


def event_bytes(record: dict[str, Any]) -> bytes:
    """The bytes of a recorded event (see ``event_record``)."""
    if "raw" in record:
        raw: str = record["raw"]
        return raw.encode(record.get("encoding", "utf-8"))
    data = _compact(record["data"]) if "data" in record else record["text"]
    head = f"event: {record['event']}\n" if "event" in record else ""
    return f"{head}data: {data}\n\n".encode()
