"""A streamed text's deltas, one event each: made event by event, or joined at once.

Every SSE and NDJSON codec streams a text as one event per delta, each event the same
text around a different delta as a JSON string: ``before + encode_string(delta) +
after``. A codec's stream yields a ``DeltaRun`` for such a text among its batches of
events (its ``StreamItems``); ``expanded`` makes the run's events in batches as the
stream is taken (cut by ``mockllm._cutting.text_batches``), and ``joined`` makes a
whole stream's bytes at once. There, a text cut a word a delta whose only whitespace is
single spaces between words (generated words always are) is one JSON escape of the
whole text and one replace of its spaces: each space is where an event ends and the
next begins, and an escape neither makes nor removes a space. The bytes are the same
either way; a property test holds them so.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring as encode_string
from typing import Union

from mockllm._cutting import text_batches
from mockllm._generation import GeneratedWords
from mockllm._limits import STREAM_HEAD_EVENTS
from mockllm._plan import ReplyPlan, single_spaced

__all__ = ["DeltaRun", "StreamItems", "expanded", "joined"]

# Marks a space of a run's quoted text while the stream is joined: JSON escapes every
# control character, so a NUL is never in an SSE or NDJSON event (``joined`` checks).
_MARK = b"\0"


class DeltaRun:
    """The delta events of ``text``: ``before``, the delta as a JSON string, ``after``."""

    __slots__ = ("after", "before", "text")

    def __init__(self, before: str, after: str, text: str) -> None:
        self.before, self.after, self.text = before, after, text

    def events(self, plan: ReplyPlan) -> Iterator[list[bytes]]:
        """The events, in batches, as ``plan`` cuts the text."""
        before, after = self.before, self.after
        for pieces in text_batches(self.text, plan):
            yield [(before + encode_string(piece) + after).encode() for piece in pieces]

    def spaced(self, plan: ReplyPlan) -> int | None:
        """How many events, when they can be made by ``spaced_bytes`` (one word a delta,
        cut as by default, the text single-spaced); else None."""
        text = self.text
        if plan.chunk_words != 1 or (plan.stream is not None and plan.stream.cuts_content):
            return None
        if not text:
            return 0
        if type(text) is GeneratedWords:
            return len(text.marks)
        return text.count(" ") + 1 if single_spaced(text) else None

    def spaced_bytes(self, space: bytes | None = None) -> list[bytes]:
        """Every event joined, in three pieces: one escape, one replace of the spaces
        (by ``space`` where given: ``joined`` then replaces that mark once, in the whole
        stream)."""
        text, before, after = self.text, self.before, self.after
        if not text:
            return []
        # Generated words hold nothing a JSON string escapes.
        quoted = f'"{text}"' if type(text) is GeneratedWords else encode_string(text)
        return [before.encode(), quoted.encode().replace(b" ", space or self.between()), after.encode()]

    def between(self) -> bytes:
        """What replaces a space of the quoted text: the end of one event and the start
        of the next (a delta keeps the space after its word)."""
        return f' "{self.after}{self.before}"'.encode()


StreamItems = Iterable[Union[list[bytes], DeltaRun]]
"""A codec's stream before its runs are made: batches of events, and runs of deltas."""


def expanded(items: StreamItems, plan: ReplyPlan) -> Iterator[list[bytes]]:
    """The stream's events in batches, each run's made as it is reached."""
    for item in items:
        if isinstance(item, DeltaRun):
            yield from item.events(plan)
        else:
            yield item


def joined(items: StreamItems, plan: ReplyPlan) -> bytes | None:
    """Every event of the stream joined, each run made at once where it can be
    (``DeltaRun.spaced``); None when the stream has more than ``STREAM_HEAD_EVENTS``
    events (it is then rendered as it is sent), found before its text is rendered.

    The first run of several words is joined with its spaces marked by ``_MARK``, and
    the whole stream's marks replaced at once: the reply is written once, not made by
    the replace and copied again by the join."""
    parts: list[bytes] = []
    count = 0
    marked, marks, between = -1, 0, b""
    for item in items:
        if isinstance(item, DeltaRun):
            spaced = item.spaced(plan)
            if spaced is not None:
                count += spaced
                if count > STREAM_HEAD_EVENTS:
                    return None
                if marked < 0 and spaced > 1 and type(item) is DeltaRun:
                    marked, marks, between = len(parts) + 1, spaced - 1, item.between()
                    parts += item.spaced_bytes(_MARK)
                else:
                    parts += item.spaced_bytes()
                continue
            batches: Iterable[list[bytes]] = item.events(plan)
        else:
            batches = (item,)
        for batch in batches:
            count += len(batch)
            if count > STREAM_HEAD_EVENTS:
                return None
            parts += batch
    whole = b"".join(parts)
    if marked < 0:
        return whole
    if whole.count(_MARK) != marks:  # a mark elsewhere in the stream: the run replaced alone
        parts[marked] = parts[marked].replace(_MARK, between)
        return b"".join(parts)
    return whole.replace(_MARK, between)
