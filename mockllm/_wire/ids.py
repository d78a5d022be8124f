"""The ids the wire codecs mint, and ``MintedIds``: which of them one mock minted.

Every reply's ids derive from its plan's ``response_id`` (24 hex digits, a pure function
of the seed and the request): OpenAI Chat's ``chatcmpl-<id>``, Anthropic's ``msg_<id>``,
the Responses API's ``resp_<id>`` and its output items ``rs_<id>_<n>``, ``msg_<id>_<n>``,
``fc_<id>_<n>``, Gemini's bare ``<id>``. The codecs make them with the prefixes below, and
``MintedIds`` reads them back with the same prefixes: one place knows the forms.

Tool calls a script leaves unnamed get ids ``<prefix>_mk<chain>_t<turn>_<n>``
(``mockllm._generation.tool_call_id``); the journal keeps each reply's tool calls and its
``response_id``, so ``MintedIds.of(journal)`` is exactly what this mock minted — a
golden normalises those, never a user's value that merely looks like one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mockllm._generation import TOOL_CALL_ID

if TYPE_CHECKING:
    from mockllm._journal import JournalEntry

__all__ = [
    "CHAT_COMPLETION_PREFIX",
    "MESSAGE_PREFIX",
    "MintedIds",
    "RESPONSE_PREFIX",
    "output_item_id",
]

CHAT_COMPLETION_PREFIX = "chatcmpl-"
"""OpenAI Chat's completion id: ``chatcmpl-<response_id>``."""
MESSAGE_PREFIX = "msg_"
"""Anthropic's message id (``msg_<response_id>``); a Responses message item's too."""
RESPONSE_PREFIX = "resp_"
"""The Responses API's response id: ``resp_<response_id>``."""
_ITEM_PREFIXES = {"reasoning": "rs_", "message": MESSAGE_PREFIX, "function_call": "fc_"}


def output_item_id(kind: str, response_id: str, index: int) -> str:
    """The id of a Responses output item of ``kind`` (``reasoning``, ``message``,
    ``function_call``) at ``index``: ``rs_<id>_<n>``, ``msg_<id>_<n>``, ``fc_<id>_<n>``."""
    return f"{_ITEM_PREFIXES[kind]}{response_id}_{index}"


_PREFIXES = sorted({CHAT_COMPLETION_PREFIX, MESSAGE_PREFIX, RESPONSE_PREFIX, *_ITEM_PREFIXES.values()})
_WIRE_ID = re.compile(
    rf"(?:{'|'.join(map(re.escape, _PREFIXES))})(?P<response>[0-9a-f]{{24}})(?:_\d+)?"
    rf"|(?P<call>[A-Za-z]+_{TOOL_CALL_ID.pattern.rstrip('$')})"
)
"""A candidate: a response id in one of the codecs' forms, or a generated tool-call id."""
_TOKEN = re.compile(r"[\w.:-]+")
"""One token (no space): an id, or an id made from one (``approval-toolu_mk…``)."""


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
        if not (self.response_ids or self.tool_call_ids) or not _TOKEN.fullmatch(value):
            return None
        for found in _WIRE_ID.finditer(value):
            response, call = found.group("response", "call")
            if response in self.response_ids or call in self.tool_call_ids:
                return found.group()
        return None
