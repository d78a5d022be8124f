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
import sys
from operator import itemgetter

__all__ = [
    "DELTAS",
    "TOOL_CALL_ID",
    "GeneratedWords",
    "delta_codes",
    "generate_words",
    "stable_hex",
    "tool_call_id",
    "turn_of_tool_call_id",
]

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


def stable_hex(*key: object, length: int = 24) -> str:
    """``length`` hex digits derived from ``key`` (at most 128)."""
    return hashlib.blake2b(repr(key).encode(), digest_size=(length + 1) // 2).hexdigest()[:length]


class GeneratedWords(str):
    """Text ``generate_words`` made: words of its vocabulary (a capital letter at a
    sentence's start, a period at its end) joined by single spaces. Nothing in it is
    escaped in a JSON string, and its deltas of one word each are its cuts at each
    space: a codec may render it whole without checking either
    (``mockllm._wire.deltas``). ``marks`` is its words as drawn, one byte each: the
    word's index in the vocabulary, plus 128 where a sentence starts
    (``delta_codes`` reads it)."""

    marks: bytes


# ``generate_words`` picks each word by its mark, all at once (``itemgetter``, in C):
# 0-127 is " word", 128-255 ". Word", which starts a sentence after the period ending
# the one before it.
_MASK = bytes(range(128)) * 2
_SPOKEN = tuple([" " + word for word in _VOCABULARY] + [". " + word.capitalize() for word in _VOCABULARY])
# A sentence's length (6 to 14 words) by its byte, and the flags of a sentence of each
# length (128 on its first word): a text's flags are its sentences' joined.
_SENTENCE_LENGTH = bytes(6 + byte % 9 for byte in range(256))
_SENTENCE_FLAGS = (b"",) + tuple(b"\x80" + bytes(length - 1) for length in range(1, 15))


def generate_words(count: int, *key: object) -> str:
    """Exactly ``count`` whitespace-separated words, the same for the same key
    (a ``GeneratedWords``).

    Sentences start with a capital and end with a period so the text reads like prose.
    Words and sentence lengths come from a SHAKE-128 stream of the key (one byte per
    word), which keeps generation at C speed on long replies.
    """
    if count <= 0:
        return ""
    # One byte a word, then one a sentence: a sentence is at least 6 words. (SHAKE's
    # output is a stream: these bytes are the start of any longer digest's.)
    stream = hashlib.shake_128(repr(key).encode()).digest(count + (count + 5) // 6)
    # A word's mark: its index in the vocabulary (its byte's low 7 bits), plus 128 where
    # a sentence starts (the flags, one byte a word, or'ed in as one integer). The 0
    # added picks b"": itemgetter of one index returns an item, not a tuple.
    flags = b"".join(itemgetter(*stream[count:].translate(_SENTENCE_LENGTH), 0)(_SENTENCE_FLAGS))
    words_only = int.from_bytes(stream[:count].translate(_MASK), "big")
    marks = (words_only | int.from_bytes(flags[:count], "big")).to_bytes(count, "big")
    # The first word's ". " is cut off and the last sentence's period added (one word
    # is not a tuple to itemgetter, but joins the same).
    words = GeneratedWords("".join(itemgetter(*marks)(_SPOKEN))[2:] + ".")
    words.marks = marks
    return words


DELTAS = tuple(
    (word.capitalize() if code & 128 else word) + ("." if code & 256 else "") + " "
    for code, word in ((code, _VOCABULARY[code & 127]) for code in range(512))
)
"""Every delta of one word a ``GeneratedWords`` can have but its last, by its code
(``delta_codes``): its word, capitalized (128) or not, with a period (256) or not,
then a space."""
_STARTS = bytes(b >> 7 for b in range(256))
_LOW, _HIGH = (0, 1) if sys.byteorder == "little" else (1, 0)


def delta_codes(words: GeneratedWords) -> memoryview:
    """The codes in ``DELTAS`` of the deltas of ``words`` cut a word a delta, but the
    last: a word's mark, plus 256 when the next word starts a sentence (a period ends
    this one). Made at once: a code is two bytes, the mark and that flag."""
    marks = words.marks
    pairs = bytearray(2 * len(marks) - 2)
    pairs[_LOW::2] = marks[:-1]
    pairs[_HIGH::2] = marks[1:].translate(_STARTS)
    return memoryview(pairs).cast("H")


def tool_call_id(prefix: str, fingerprint: str, turn: int, n: int) -> str:
    """The id of the ``n``-th tool call of ``turn`` of the chain ``fingerprint``."""
    return f"{prefix}_mk{fingerprint}_t{turn}_{n}"


def turn_of_tool_call_id(call_id: str, fingerprint: str) -> int | None:
    """The turn encoded in a mock-made id of this chain, or None."""
    match = TOOL_CALL_ID.search(call_id)
    if match is None or match.group(1) != fingerprint:
        return None
    return int(match.group(2))
