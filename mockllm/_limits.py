"""The mock's limits: what bounds one request's memory and time, and the scans that
turn hostile input into a clear 4xx instead of a crash.

- ``Limits``: the output cap of one reply (bytes, estimated before any word is
  generated), the longest scripted delay, the journal's byte budget, the largest
  request body, and how many registered scripts and server sessions one mock keeps.
  ``serve`` flags and ``MockLLM`` arguments set them (see docs/reliability.md).
- ``estimated_output_bytes``: an upper estimate of what an instruction makes, streamed
  or not, computed from the script alone (a 3 KB script may ask for gigabytes).
- ``surrogate_path`` / ``non_finite_path``: where in a JSON value a lone UTF-16
  surrogate or a non-finite number sits, to name the field in the rejection.
- ``header_value``: any text made safe for an HTTP header value.
- ``ByteBoundedLog``: a deque bounded by count and by bytes (the journal).
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from mockllm._instructions import Instruction, TextMessage

__all__ = [
    "ByteBoundedLog",
    "Limits",
    "clip_text",
    "estimated_output_bytes",
    "header_value",
    "nested_deeper_than",
    "non_finite_path",
    "surrogate_path",
]

MIB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What one mock lets a request (and its clients) make it hold.

    - ``max_output_bytes``: the largest reply one request may script; past it the reply
      is a fallback saying so.
    - ``max_delay_ms``: the longest any one scripted streaming delay may be (longer ones
      are shortened, with a warning).
    - ``journal_bytes``: the journal's budget (oldest entries go first).
    - ``max_body_bytes``: the largest request body; past it the reply is a 413 in the
      protocol's error shape (the server stops reading at the cap). Parsed JSON takes up
      to ~27 times its text, so this bounds one request's memory too.
    - ``max_scripts`` / ``scripts_bytes``: how many registered scripts (``MockLLM.script``,
      ``POST /_mockllm/scripts``) and how many bytes of their JSON one mock keeps; one
      more raises ``ScriptLimitReached`` (a 409 from the server).
    - ``max_sessions``: how many server sessions (``POST /_mockllm/sessions``) may be
      open at once; one more is a 409.
    """

    max_output_bytes: int = 8 * MIB
    max_delay_ms: float = 30_000
    journal_bytes: int = 8 * MIB
    max_body_bytes: int = 4 * MIB
    max_scripts: int = 1000
    scripts_bytes: int = 8 * MIB
    max_sessions: int = 256


# The longest word of the generator's vocabulary, plus a space and a period.
_WORD_BYTES = 12
# What one streamed event costs beyond its delta (ids, model name echoed, framing).
_EVENT_OVERHEAD = 400
_ARGUMENT_SLICE = 8


def _text_size(spec: Any) -> tuple[int, int]:
    """(bytes, words) of one ContentSpec."""
    if spec.text is not None:
        return len(spec.text) * 4, len(spec.text) // 2 + 1
    return (spec.length or 0) * _WORD_BYTES, spec.length or 0


def estimated_output_bytes(instruction: Instruction, *, stream: bool, echo_bytes: int = 0) -> int:
    """An upper estimate of the bytes ``instruction``'s reply takes, before generating it.

    ``echo_bytes`` is what every streamed event repeats from the request (the model
    name). JSON escaping is counted at four bytes a character for verbatim text.
    """
    size = chunks = 0
    for spec in [instruction.reasoning] if instruction.reasoning else []:
        size, chunks = _text_size(spec)
    for message in instruction.messages or ():
        if isinstance(message, TextMessage):
            more, words = _text_size(message.text_message)
            size, chunks = size + more, chunks + words
            continue
        for call in message.tool_call:
            # args are already in the request; their JSON text is bounded by it.
            arguments = len(repr(call.args)) * 2 + len(call.name) + 64
            size += arguments
            chunks += arguments // _ARGUMENT_SLICE + 2
    if stream:
        chunk_words = instruction.chunk_words or 1
        size += (chunks // chunk_words + 8) * (_EVENT_OVERHEAD + 2 * echo_bytes)
    return size + 1024


def _walk(value: Any, found: Callable[[Any], bool]) -> str | None:
    """The path (``a.b[2]``) of the first value in ``value`` for which ``found`` holds."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                if found(key):
                    return f"{path}.{clip_text(key, 40)}" if path else clip_text(key, 40)
                stack.append((sub, f"{path}.{key}" if path else str(key)))
        elif isinstance(item, list):
            stack.extend((sub, f"{path}[{i}]") for i, sub in enumerate(item))
        elif found(item):
            return path or "(the whole value)"
    return None


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects more than ``limit`` levels deep
    (checked without recursion, so any depth the JSON parser accepted is safe)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            stack.extend((sub, depth + 1) for sub in (item.values() if isinstance(item, dict) else item))
    return False


_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogate(value: Any) -> bool:
    return isinstance(value, str) and _SURROGATE.search(value) is not None


def surrogate_path(value: Any) -> str | None:
    """Where ``value`` holds a string with a lone UTF-16 surrogate (not encodable as UTF-8)."""
    return _walk(value, _has_surrogate)


def _non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def non_finite_path(value: Any) -> str | None:
    """Where ``value`` holds ``Infinity``, ``-Infinity``, ``NaN`` or an overflowing number."""
    return _walk(value, _non_finite)


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
HEADER_VALUE_MAX = 400


def header_value(value: str) -> str:
    """``value`` as a valid HTTP header value: ASCII, control characters escaped, no
    edge whitespace (h11 refuses either, and the client would get no response at all),
    at most ``HEADER_VALUE_MAX`` characters."""
    # Printable ASCII has no control character and no whitespace but the space: most
    # values (the mock's own ids) are already sendable.
    if value.isascii() and value.isprintable() and len(value) <= HEADER_VALUE_MAX and value[:1] != " " != value[-1:]:
        return value
    value = value.encode("ascii", "backslashreplace").decode("ascii")
    value = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", value).strip()
    return value if len(value) <= HEADER_VALUE_MAX else value[: HEADER_VALUE_MAX - 3] + "..."


def clip_text(value: Any, limit: int = 1000) -> str:
    """``value`` as text that encodes as UTF-8 (surrogates escaped), at most ``limit``
    characters: what the journal keeps of anything a request sent."""
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    if _SURROGATE.search(text):
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


T = TypeVar("T")


class ByteBoundedLog(Generic[T]):
    """Items newest last, at most ``count`` of them and at most ``budget`` bytes (as
    ``size`` measures each); the oldest go first. Not thread-safe: the owner locks."""

    def __init__(self, count: int, budget: int, size: Callable[[T], int]) -> None:
        self._items: deque[tuple[T, int]] = deque()
        self._count = count
        self._budget = budget
        self._size = size
        self.bytes = 0

    def append(self, item: T) -> None:
        cost = self._size(item)
        self._items.append((item, cost))
        self.bytes += cost
        while self._items and (len(self._items) > self._count or self.bytes > self._budget):
            self.bytes -= self._items.popleft()[1]

    def clear(self) -> None:
        self._items.clear()
        self.bytes = 0

    def __iter__(self) -> Iterator[T]:
        return (item for item, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)


# -- lazy streaming (``mockllm._mock_response``) ----------------------------------------------

STREAM_HEAD_EVENTS = 512
"""A streamed reply of at most this many events is rendered whole inside ``handle`` and
goes out in one write with a Content-Length; a longer one is rendered as it is sent."""

STREAM_WRITE_BYTES = 64 * 1024
"""A stream rendered as it is sent goes out in writes of about this many bytes (a paced
one, event by event)."""
