"""``MintedIds``: which ids one mock minted, read from its journal.

The journal keeps each reply's ``response_id`` and its tool calls, so
``MintedIds.of(journal)`` is exactly what this mock minted: the response ids, in the
codecs' forms (``mockllm._wire.ids``), and the tool-call ids it generated
(``<prefix>_mk<chain>_t<turn>_<n>``, ``mockllm._generation.tool_call_id``). A golden
normalises those, never a user's value that merely looks like one. Kept apart from the
codecs: a server that renders replies never loads it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mockllm._generation import TOOL_CALL_ID
from mockllm._wire.ids import CHAT_COMPLETION_PREFIX, ITEM_PREFIXES, MESSAGE_PREFIX, RESPONSE_PREFIX

if TYPE_CHECKING:
    from mockllm._journal import JournalEntry

__all__ = ["MintedIds"]


@functools.cache
def _wire_id() -> re.Pattern[str]:
    """A candidate: a response id in one of the codecs' forms, or a generated tool-call id.
    Compiled on first use: a server that renders replies never needs it."""
    prefixes = sorted({CHAT_COMPLETION_PREFIX, MESSAGE_PREFIX, RESPONSE_PREFIX, *ITEM_PREFIXES.values()})
    return re.compile(
        rf"(?:{'|'.join(map(re.escape, prefixes))})(?P<response>[0-9a-f]{{24}})(?:_\d+)?"
        rf"|(?P<call>[A-Za-z]+_{TOOL_CALL_ID.pattern.rstrip('$')})"
    )


def _is_token(value: str) -> bool:
    """One token (no space): an id, or an id made from one (``approval-toolu_mk…``)."""
    return re.fullmatch(r"[\w.:-]+", value) is not None  # re caches the compiled pattern


@dataclass(frozen=True)
class MintedIds:
    """The ids one mock minted: its replies' ``response_ids`` and the ``tool_call_ids``
    it generated (those a script named are the script's, not minted). Built from its
    journal with ``MintedIds.of``; empty, nothing is minted."""

    response_ids: frozenset[str] = frozenset()
    tool_call_ids: frozenset[str] = frozenset()

    @classmethod
    def of(cls, journal: Iterable[JournalEntry]) -> MintedIds:
        """What the replies in ``journal`` minted."""
        responses: set[str] = set()
        calls: set[str] = set()
        for entry in journal:
            if entry.response_id is not None:
                responses.add(entry.response_id)
            if entry.reply is not None:
                calls.update(c.id for c in entry.reply.tool_calls if TOOL_CALL_ID.search(c.id))
        return cls(frozenset(responses), frozenset(calls))

    def made_from(self, value: str) -> str | None:
        """The minted id ``value`` is, or is one token made from (``approval-<id>``), in
        its wire form (not a bare response id: see ``response_ids``); None if none is."""
        if not (self.response_ids or self.tool_call_ids) or not _is_token(value):
            return None
        for found in _wire_id().finditer(value):
            response, call = found.group("response", "call")
            if response in self.response_ids or call in self.tool_call_ids:
                return found.group()
        return None
