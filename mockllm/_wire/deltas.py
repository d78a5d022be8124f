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

    def spaced_bytes(self) -> list[bytes]:
        """Every event joined, in three pieces: one escape, one replace of the spaces."""
        text, before, after = self.text, self.before, self.after
        if not text:
            return []
        # Generated words hold nothing a JSON string escapes.
        quoted = f'"{text}"' if type(text) is GeneratedWords else encode_string(text)
        between = f' "{after}{before}"'.encode()  # a delta keeps the space after its word
        return [before.encode(), quoted.encode().replace(b" ", between), after.encode()]


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
    events (it is then rendered as it is sent), found before its text is rendered."""
    parts: list[bytes] = []
    count = 0
    for item in items:
        if isinstance(item, DeltaRun):
            spaced = item.spaced(plan)
            if spaced is not None:
                count += spaced
                if count > STREAM_HEAD_EVENTS:
                    return None
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
    return b"".join(parts)
