"""The AWS event-stream binary framing (``application/vnd.amazon.eventstream``).

What Bedrock's ``ConverseStream`` and ``InvokeModelWithResponseStream`` send, and what
``botocore.eventstream`` reads. One message is::

    total length (4 bytes) | headers length (4) | prelude CRC32 (4)
    headers                | payload           | message CRC32 (4)

all integers big-endian, both CRCs CRC-32 (the prelude's over its first 8 bytes, the
message's over everything before it). A header is its name's length (1 byte), the name,
a type byte and the value; the mock only writes strings (type 7: 2-byte length, UTF-8).
Events carry ``:event-type``, ``:content-type`` and ``:message-type: event``;
exceptions ``:exception-type`` and ``:message-type: exception``.

``decode_messages`` reads a whole stream back, checking both CRCs: tests and the
recording tools read the mock's (or a provider's) streams with it.
"""

from __future__ import annotations

import functools
import struct
import zlib
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring as encode_string
from operator import itemgetter
from typing import Any, cast

from mockllm._cutting import text_batches
from mockllm._exceptions import MockLLMError
from mockllm._generation import DELTAS, GeneratedWords, delta_codes
from mockllm._plan import ReplyPlan
from mockllm._wire.deltas import DeltaRun

__all__ = [
    "EVENT_STREAM_MEDIA_TYPE",
    "EventFramer",
    "EventMessage",
    "EventStreamError",
    "FramedRun",
    "decode_messages",
    "encode_headers",
    "encode_message",
    "event_headers",
    "event_message",
    "exception_message",
    "kept_event_message",
    "framer",
]

EVENT_STREAM_MEDIA_TYPE = "application/vnd.amazon.eventstream"

_PRELUDE = struct.Struct(">III")
_LENGTHS = struct.Struct(">II")
_CRC = struct.Struct(">I")
_STRING = 7


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return bytes([len(raw_name)]) + raw_name + bytes([_STRING]) + struct.pack(">H", len(raw_value)) + raw_value


def encode_headers(headers: Sequence[tuple[str, str]]) -> bytes:
    """The encoded header block of string-valued ``headers``, in order."""
    return b"".join(_header(name, value) for name, value in headers)


def encode_message(headers: bytes, payload: bytes) -> bytes:
    """One framed message of an encoded header block (``encode_headers``) and ``payload``."""
    lengths = _LENGTHS.pack(16 + len(headers) + len(payload), len(headers))
    message = lengths + _CRC.pack(zlib.crc32(lengths)) + headers + payload
    return message + _CRC.pack(zlib.crc32(message))


class EventFramer:
    """Frames the JSON payloads of one event type, fast: a long reply is hundreds of
    ``contentBlockDelta`` events, each needing its two CRCs.

    A message's prelude and headers, and the CRC over them, depend only on the payload's
    length, so they are kept per length; each message then hashes its payload once.
    ``frame_texts`` goes further: a delta's message depends only on its text (the
    generated words come from a small vocabulary), so whole messages are kept per text.
    Both tables are bounded; past the bound a message is framed afresh.
    """

    _KEPT = 1024
    _KEPT_HEADS = 32

    def __init__(self, event_type: str) -> None:
        self.headers = event_headers(event_type)
        self._prefixes: dict[int, tuple[bytes, int]] = {}
        self._texts: dict[Hashable, dict[str, bytes]] = {}
        self._coded: dict[Hashable, list[bytes | None]] = {}

    def _prefix(self, length: int) -> tuple[bytes, int]:
        lengths = _LENGTHS.pack(16 + len(self.headers) + length, len(self.headers))
        prefix = lengths + _CRC.pack(zlib.crc32(lengths)) + self.headers
        found = (prefix, zlib.crc32(prefix))
        if len(self._prefixes) < self._KEPT:
            self._prefixes[length] = found
        return found

    def frame(self, payloads: list[bytes]) -> list[bytes]:
        """One message per payload, in order (``encode_message``'s bytes)."""
        known, pack, crc32 = self._prefixes.get, _CRC.pack, zlib.crc32
        out: list[bytes] = []
        append = out.append
        for payload in payloads:
            prefix, start = known(len(payload)) or self._prefix(len(payload))
            append(prefix + payload + pack(crc32(payload, start)))
        return out

    def frame_texts(self, head: str, tail: str, texts: list[str]) -> list[bytes]:
        """One message per text, whose payload is ``head``, the text as a JSON string,
        then ``tail``."""
        return self.frame_kept((head, tail), texts, lambda text: (head + encode_string(text) + tail).encode())

    def text_run(self, head: str, tail: str, text: str) -> FramedRun:
        """The messages of ``text``'s deltas, each payload ``head``, the piece as a JSON
        string, then ``tail`` (``frame_texts``'s), as a run (``FramedRun``)."""
        return FramedRun(self, (head, tail), lambda piece: (head + encode_string(piece) + tail).encode(), text)

    def frame_kept(self, key: Hashable, texts: list[str], payload_of: Callable[[str], bytes]) -> list[bytes]:
        """One message per text, its payload ``payload_of(text)``: the same function for
        the same ``key``, so each text's message is kept under ``key`` and framed once."""
        kept = self._kept(key)
        out = []
        for text in texts:
            message = kept.get(text)
            if message is None:
                message = self._kept_message(kept, text, payload_of(text))
            out.append(message)
        return out

    def frame_words(self, key: Hashable, text: str, payload_of: Callable[[str], bytes]) -> list[bytes]:
        """``frame_kept(key, pieces, payload_of)`` of a text cut a word a piece, each
        word with the space after it, for a text whose only whitespace is single spaces
        between words: its words looked up at once (kept by the word, its space apart)."""
        if type(text) is GeneratedWords:
            return self._frame_generated(key, text, payload_of)
        words = text.split(" ")
        last = words.pop()
        kept = self._kept((key, " "))
        found = list(map(kept.get, words))
        if None in found:
            for at, message in enumerate(found):
                if message is None:
                    found[at] = self._kept_message(kept, words[at], payload_of(words[at] + " "))
        out = cast("list[bytes]", found)
        out += self.frame_kept(key, [last], payload_of)
        return out

    def _frame_generated(self, key: Hashable, text: GeneratedWords, payload_of: Callable[[str], bytes]) -> list[bytes]:
        """``frame_words`` of generated words, joined: each delta but the last by its
        code (``delta_codes``), its message kept in a table of every code, all found and
        joined at once (a code not framed yet fails the join: framed, then joined again)."""
        codes = delta_codes(text)
        last = self.frame_kept(key, [text[text.rfind(" ") + 1 :]], payload_of)
        if not codes:
            return last
        table: list[bytes | None] | None = self._coded.get(key)
        if table is None:
            table = [None] * len(DELTAS)
            if len(self._coded) < self._KEPT_HEADS:
                self._coded[key] = table
        found = itemgetter(*codes) if len(codes) > 1 else lambda table: (table[codes[0]],)
        try:
            return [b"".join(found(table)), *last]
        except TypeError:
            for code in set(codes):
                if table[code] is None:
                    table[code] = self._message(payload_of(DELTAS[code]))
            return [b"".join(found(table)), *last]

    def _kept(self, key: Hashable) -> dict[str, bytes]:
        kept = self._texts.get(key)
        if kept is None:
            kept = {}
            if len(self._texts) < self._KEPT_HEADS:
                self._texts[key] = kept
        return kept

    def message(self, payload: bytes) -> bytes:
        """One message of ``payload`` (``frame``'s, for one)."""
        return self._message(payload)

    def _message(self, payload: bytes) -> bytes:
        prefix, start = self._prefixes.get(len(payload)) or self._prefix(len(payload))
        return prefix + payload + _CRC.pack(zlib.crc32(payload, start))

    def _kept_message(self, kept: dict[str, bytes], text: str, payload: bytes) -> bytes:
        message = self._message(payload)
        if len(kept) < self._KEPT:
            kept[text] = message
        return message


class FramedRun(DeltaRun):
    """The delta events of ``text`` as ``framer``'s messages, each piece's payload
    ``payload_of(piece)`` (kept under ``key``: ``EventFramer.frame_kept``): made event
    by event, or whole at once by ``EventFramer.frame_words`` (``mockllm._wire.deltas``)."""

    __slots__ = ("_framer", "_key", "_payload_of")

    def __init__(self, framer: EventFramer, key: Hashable, payload_of: Callable[[str], bytes], text: str) -> None:
        super().__init__("", "", text)
        self._framer, self._key, self._payload_of = framer, key, payload_of

    def events(self, plan: ReplyPlan) -> Iterator[list[bytes]]:
        for pieces in text_batches(self.text, plan):
            yield self._framer.frame_kept(self._key, pieces, self._payload_of)

    def spaced_bytes(self, space: bytes | None = None) -> list[bytes]:
        # A framed message carries its length and checksums: ``joined`` never marks one.
        return self._framer.frame_words(self._key, self.text, self._payload_of) if self.text else []


@functools.cache
def framer(event_type: str) -> EventFramer:
    """The shared framer of ``event_type`` events."""
    return EventFramer(event_type)


@functools.cache
def event_headers(event_type: str) -> bytes:
    """The header block of an ``event_type`` event with a JSON payload (built once)."""
    return encode_headers(
        [(":event-type", event_type), (":content-type", "application/json"), (":message-type", "event")]
    )


def event_message(event_type: str, payload: bytes) -> bytes:
    """An event of ``event_type`` carrying the JSON ``payload``."""
    return encode_message(event_headers(event_type), payload)


@functools.lru_cache(maxsize=256)
def kept_event_message(event_type: str, payload: bytes) -> bytes:
    """``event_message``, framed once for an event that repeats from reply to reply (a
    stream's start, a block's stop, a stop reason)."""
    return event_message(event_type, payload)


def exception_message(exception_type: str, payload: bytes) -> bytes:
    """An exception (``:exception-type``, e.g. ``throttlingException``) carrying the JSON
    ``payload`` (``{"message": ...}``): what botocore raises ``EventStreamError`` for."""
    headers = encode_headers(
        [(":exception-type", exception_type), (":content-type", "application/json"), (":message-type", "exception")]
    )
    return encode_message(headers, payload)


@dataclass(frozen=True)
class EventMessage:
    """One decoded message: its headers by name, and its payload."""

    headers: dict[str, Any]
    payload: bytes


class EventStreamError(MockLLMError, ValueError):
    """Bytes that are not a well-formed event stream (bad length, bad CRC, cut short)."""


def decode_messages(data: bytes) -> list[EventMessage]:
    """Every message of a complete stream, in order; ``EventStreamError`` naming the
    offset of the first malformed one."""
    return list(_messages(memoryview(data)))


def _messages(data: memoryview) -> Iterator[EventMessage]:
    offset = 0
    while offset < len(data):
        if len(data) - offset < 16:
            raise EventStreamError(f"message at byte {offset}: {len(data) - offset} bytes left, a message has 16+")
        total, headers_length, prelude_crc = _PRELUDE.unpack_from(data, offset)
        if zlib.crc32(data[offset : offset + 8]) != prelude_crc:
            raise EventStreamError(f"message at byte {offset}: prelude CRC mismatch")
        if total < 16 + headers_length or offset + total > len(data):
            raise EventStreamError(f"message at byte {offset}: length {total} does not fit the stream")
        end = offset + total
        (message_crc,) = _CRC.unpack_from(data, end - 4)
        if zlib.crc32(data[offset : end - 4]) != message_crc:
            raise EventStreamError(f"message at byte {offset}: message CRC mismatch")
        start = offset + 12
        headers = _decode_headers(bytes(data[start : start + headers_length]))
        yield EventMessage(headers, bytes(data[start + headers_length : end - 4]))
        offset = end


# type byte -> (size, struct format) of the fixed-size header values.
_FIXED = {2: (1, ">b"), 3: (2, ">h"), 4: (4, ">i"), 5: (8, ">q"), 8: (8, ">q")}


def _decode_headers(raw: bytes) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    at = 0
    while at < len(raw):
        name_length = raw[at]
        name = raw[at + 1 : at + 1 + name_length].decode()
        kind = raw[at + 1 + name_length]
        at += 2 + name_length
        value: Any
        if kind in (0, 1):
            value = kind == 0
        elif kind in _FIXED:
            size, fmt = _FIXED[kind]
            (value,) = struct.unpack_from(fmt, raw, at)
            at += size
        elif kind in (6, 7):
            (length,) = struct.unpack_from(">H", raw, at)
            value = raw[at + 2 : at + 2 + length]
            value = value.decode() if kind == _STRING else value
            at += 2 + length
        elif kind == 9:  # a UUID, kept as its 16 bytes (as botocore does)
            value = raw[at : at + 16]
            at += 16
        else:
            raise EventStreamError(f"header {name!r}: unknown value type {kind}")
        headers[name] = value
    return headers
