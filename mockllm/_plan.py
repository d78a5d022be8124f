"""The reply plan: what one assistant turn will say, independent of any protocol.

The core turns a selected instruction into a ``ReplyPlan``; each wire codec renders a
plan into its provider's exact bytes. Everything here is already decided — words, ids,
timestamps — so that rendering is a pure function and the same plan gives the same
bytes through every door.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Union

from mockllm._shapes import StreamFaults, StreamShape

__all__ = [
    "single_spaced",
    "ErrorPlan",
    "Pacing",
    "ReplyPlan",
    "TextPart",
    "ToolCallPart",
    "Usage",
    "count_words",
    "slice_batches",
    "split_words",
    "word_batches",
]


@dataclass(frozen=True)
class TextPart:
    """Assistant text, already generated."""

    text: str


@dataclass(frozen=True)
class ToolCallPart:
    """One tool call. ``arguments`` is the compact JSON text of the arguments object."""

    id: str
    name: str
    arguments: str


ReplyPart = Union[TextPart, ToolCallPart]


@dataclass(frozen=True)
class ErrorPlan:
    """A fault to render instead of (``after_chunks is None``) or inside the reply.

    ``type`` and ``message`` may be None: the codec then uses its provider's usual
    error type and message for ``status``.
    """

    status: int
    type: str | None
    message: str | None
    retry_after_ms: int | None
    after_chunks: int | None


@dataclass(frozen=True)
class Pacing:
    """Streaming delays in seconds. ``None`` on a plan means: never sleep."""

    first_chunk_s: float
    chunk_s: float

    def delays(self) -> Generator[float, None, None]:
        """The wait before each event: ``first_chunk_s``, then ``chunk_s`` for every
        later one (``mockllm._latency.SampledPacing`` draws them instead)."""
        yield self.first_chunk_s
        while True:
            yield self.chunk_s


@dataclass(frozen=True)
class Usage:
    input_tokens: int
    output_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, init=False)
class ReplyPlan:
    """One assistant turn, fully decided.

    ``parts`` keeps the scripted order of text and tool calls. ``stop_reason`` is
    neutral (``end_turn``, ``tool_use``, ``max_tokens``, ``stop_sequence``,
    ``content_filter``, ``refusal``); codecs map it. ``response_id`` is a stable
    hex string from which codecs derive their ids (``chatcmpl-…``, ``msg_…``,
    ``resp_…``); ``created`` is a stable unix timestamp, never the clock.
    """

    reasoning: str | None
    parts: tuple[ReplyPart, ...]
    stop_reason: str
    usage: Usage
    response_id: str
    created: int
    chunk_words: int = 1
    pacing: Pacing | None = None
    error: ErrorPlan | None = None
    # Signature for thinking blocks (Anthropic requires a non-empty one).
    reasoning_signature: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    """``x-mockllm-*`` headers describing the selection; adapters add them to the reply."""
    stream: StreamShape | None = None
    """How the reply is cut and delivered (``mockllm._shapes``); None: the default shape."""
    stream_faults: StreamFaults | None = None
    """Faults to break the stream with; None: none."""

    def __init__(
        self,
        reasoning: str | None,
        parts: tuple[ReplyPart, ...],
        stop_reason: str,
        usage: Usage,
        response_id: str,
        created: int,
        chunk_words: int = 1,
        pacing: Pacing | None = None,
        error: ErrorPlan | None = None,
        reasoning_signature: str = "",
        headers: dict[str, str] | None = None,
        stream: StreamShape | None = None,
        stream_faults: StreamFaults | None = None,
    ) -> None:
        # Filled at once: a frozen dataclass's own ``__init__`` sets each field through
        # ``object.__setattr__``, about 1,500 instructions a field, on every request.
        # A test holds this signature to the fields' (tests/mockllm/test_plan.py).
        self.__dict__.update(
            {
                "reasoning": reasoning,
                "parts": parts,
                "stop_reason": stop_reason,
                "usage": usage,
                "response_id": response_id,
                "created": created,
                "chunk_words": chunk_words,
                "pacing": pacing,
                "error": error,
                "reasoning_signature": reasoning_signature,
                "headers": {} if headers is None else headers,
                "stream": stream,
                "stream_faults": stream_faults,
            }
        )

    @property
    def text(self) -> str:
        """All text parts joined (what OpenAI Chat Completions puts in ``content``): one
        part's own text when there is one (generated words stay ``GeneratedWords``)."""
        texts = [p.text for p in self.parts if isinstance(p, TextPart)]
        return texts[0] if len(texts) == 1 else "".join(texts)

    @property
    def tool_calls(self) -> tuple[ToolCallPart, ...]:
        return tuple([p for p in self.parts if isinstance(p, ToolCallPart)])


_WORD_WITH_SPACE = re.compile(r"\s*\S+\s*")
"""A word with the whitespace after it (and, for the first word, before it)."""


def split_words(text: str, words_per_chunk: int) -> list[str]:
    """Split ``text`` into streamed deltas of ``words_per_chunk`` words each.

    Whitespace stays attached to the word before it (leading whitespace to the first
    word), so joining the deltas gives back ``text`` exactly.
    """
    if not text:
        return []
    words = _spaced_words(text)
    if words is None:
        words = _WORD_WITH_SPACE.findall(text)
    if not words:
        return [text]  # whitespace only
    if words_per_chunk == 1:
        return words
    return ["".join(words[i : i + words_per_chunk]) for i in range(0, len(words), words_per_chunk)]


def single_spaced(text: str) -> bool:
    """Whether the only whitespace in ``text`` (not empty) is single spaces between
    words, as in generated text: then its deltas of one word are its cuts at each space.
    ``isprintable`` is False for every whitespace character but the space (they are all
    Unicode separators or controls)."""
    return text.isprintable() and text[0] != " " and text[-1] != " " and "  " not in text


def _spaced_words(text: str) -> list[str] | None:
    """``_WORD_WITH_SPACE.findall(text)`` made by ``str.split`` for a ``single_spaced``
    text; None for any other."""
    if not single_spaced(text):
        return None
    words = text.split(" ")
    last = words.pop()
    words = [word + " " for word in words]
    words.append(last)
    return words


# A batch of ``word_batches`` covers about this many characters of text: its events
# are then a few tens of KiB, whatever the reply's length.
BATCH_CHARS = 2048

_CUT = re.compile(r"\S\s+(?=\S)")
"""The end of a word, the whitespace after it, up to the next word: a cut there falls
where ``split_words`` starts a word."""


def word_batches(text: str, words_per_chunk: int, batch_chars: int = BATCH_CHARS) -> Iterable[list[str]]:
    """``split_words(text, words_per_chunk)`` made as it is consumed: lists of deltas
    covering about ``batch_chars`` characters each (at least one whole delta), which
    joined give exactly ``split_words``'s list. Memory stays one batch, however long
    ``text`` is; a short text is one list, made at once."""
    if len(text) <= batch_chars:
        pieces = split_words(text, words_per_chunk)
        return [pieces] if pieces else []
    return _word_batches(text, words_per_chunk, batch_chars)


def _word_batches(text: str, words_per_chunk: int, batch_chars: int) -> Iterator[list[str]]:
    carry: list[str] = []
    position, size, found = 0, len(text), False
    while position < size:
        cut = _CUT.search(text, position + batch_chars) if position + batch_chars < size else None
        end = cut.end() if cut is not None else size
        words = _WORD_WITH_SPACE.findall(text, position, end)
        position = end
        found = found or bool(words)
        if words_per_chunk == 1:
            if words:
                yield words
            continue
        words = carry + words
        whole = len(words) - len(words) % words_per_chunk
        carry = words[whole:]
        if whole:
            yield ["".join(words[i : i + words_per_chunk]) for i in range(0, whole, words_per_chunk)]
    if carry:
        yield ["".join(carry)]
    elif not found:
        yield [text]  # whitespace only


def slice_batches(text: str, size: int, batch_chars: int = BATCH_CHARS) -> Iterable[list[str]]:
    """``text`` cut every ``size`` characters (tool-call arguments stream so, cut
    mid-token as the real APIs do), in lists covering about ``batch_chars`` characters."""
    if len(text) <= batch_chars:
        return [[text[i : i + size] for i in range(0, len(text), size)]] if text else []
    step = max(size, batch_chars // size * size)
    return (
        [text[i : i + size] for i in range(start, min(start + step, len(text)), size)]
        for start in range(0, len(text), step)
    )


def count_words(text: str) -> int:
    """How many deltas ``split_words(text, 1)`` makes, without making them all at once."""
    return sum(len(batch) for batch in word_batches(text, 1))
