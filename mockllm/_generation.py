"""Deterministic content: words, hex ids and tool-call ids.

Everything is a pure function of a key (seed, chain fingerprint, turn, purpose), hashed
with BLAKE2b — never ``hash()`` (salted per process), the clock or the global RNG — so
the same key gives the same output in any process on any machine.

Tool-call ids encode the chain and the turn that made them::

    <prefix>_mk<fingerprint>_t<turn>_<n>    (the prefix is the codec's: call, toolu)

A client that trims older assistant messages from its history still sends the tool
results, and their ids tell which turn they answer, so the mock can place the request
(see ``mockllm._selection``).
"""

from __future__ import annotations

import hashlib
import re
from operator import itemgetter

__all__ = ["TOOL_CALL_ID", "GeneratedWords", "generate_words", "stable_hex", "tool_call_id", "turn_of_tool_call_id"]

_VOCABULARY = tuple(
    """
    the agent reads a plan and calls tools to gather facts before it answers with care
    data model result value report summary search index table record query response
    first next then after while because so also only each every some many few
    quick quiet bright steady clear simple careful precise gentle solid honest calm
    analyse compare measure check verify collect review update combine explain extract
    river mountain forest harbor meadow valley island desert canyon glacier prairie
    signal vector matrix packet buffer stream socket thread kernel cache ledger archive
    north south east west early late over under between across within around along
    orbit pixel prism cobalt amber silver copper marble velvet linen cedar maple willow
    lantern compass anchor bridge tunnel tower garden market ember harvest summit beacon
    quartz orchard
    """.split()
)
# One digest byte picks one word: the vocabulary is exactly 128 distinct words.
assert len(_VOCABULARY) == 128 and len(set(_VOCABULARY)) == 128

TOOL_CALL_ID = re.compile(r"mk([0-9a-f]{8})_t(\d+)_(\d+)$")


def _digest(key: tuple[object, ...], size: int) -> bytes:
    return hashlib.blake2b(repr(key).encode(), digest_size=size).digest()


def stable_hex(*key: object, length: int = 24) -> str:
    """``length`` hex digits derived from ``key`` (at most 128)."""
    return _digest(key, (length + 1) // 2).hex()[:length]


class GeneratedWords(str):
    """Text ``generate_words`` made: words of its vocabulary (a capital letter at a
    sentence's start, a period at its end) joined by single spaces. Nothing in it is
    escaped in a JSON string, and its deltas of one word each are its cuts at each
    space: a codec may render it whole without checking either
    (``mockllm._wire.deltas``)."""

    __slots__ = ()


# ``generate_words`` picks each word by its digest byte, all at once (``itemgetter``, in
# C): 0-127 is " word", 128-255 ". Word", which starts a sentence after the period
# ending the one before it.
_MASK = bytes(range(128)) * 2
_SPOKEN = tuple([" " + word for word in _VOCABULARY] + [". " + word.capitalize() for word in _VOCABULARY])


def generate_words(count: int, *key: object) -> str:
    """Exactly ``count`` whitespace-separated words, the same for the same key
    (a ``GeneratedWords``).

    Sentences start with a capital and end with a period so the text reads like prose.
    Words and sentence lengths come from a SHAKE-128 stream of the key (one byte per
    word), which keeps generation at C speed on long replies.
    """
    if count <= 0:
        return ""
    stream = hashlib.shake_128(repr(key).encode()).digest(2 * count)
    marks = bytearray(stream[:count].translate(_MASK))  # a word's index in the vocabulary
    lengths = stream[count:]
    start = n = 0
    while start < count:
        marks[start] |= 128  # a sentence starts here: sentences of 6 to 14 words
        start += 6 + lengths[n] % 9
        n += 1
    # The first word's ". " is cut off and the last sentence's period added (one word
    # is not a tuple to itemgetter, but joins the same).
    return GeneratedWords("".join(itemgetter(*marks)(_SPOKEN))[2:] + ".")


def tool_call_id(prefix: str, fingerprint: str, turn: int, n: int) -> str:
    """The id of the ``n``-th tool call of ``turn`` of the chain ``fingerprint``."""
    return f"{prefix}_mk{fingerprint}_t{turn}_{n}"


def turn_of_tool_call_id(call_id: str, fingerprint: str) -> int | None:
    """The turn encoded in a mock-made id of this chain, or None."""
    match = TOOL_CALL_ID.search(call_id)
    if match is None or match.group(1) != fingerprint:
        return None
    return int(match.group(2))
