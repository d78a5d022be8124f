"""Cutting a reply's text and tool-call arguments into deltas, as the plan's shape says.

The codecs call ``text_batches`` and ``argument_batches`` where they cut deltas. With
no shape (or a shape that leaves that sequence alone) these are exactly the default
cuts of ``mockllm._plan`` (words; fixed argument slices), so the default bytes never
change. ``cut_problem`` finds a cut no text can take (a cut point past it), which the
plan builder turns into a fallback reply naming the field.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Iterator

from mockllm._plan import ReplyPlan, TextPart, slice_batches, word_batches
from mockllm._shapes import Cuts

__all__ = ["argument_batches", "cut_problem", "piece_sizes", "text_batches"]

_PIECES_PER_BATCH = 256


def piece_sizes(cuts: Cuts) -> Iterator[int | None]:
    """The sizes of successive pieces (None: the rest, in one piece)."""
    if cuts.size is not None:
        return itertools.repeat(cuts.size)
    if cuts.at is not None:
        steps = [point - previous for previous, point in zip([0, *cuts.at], cuts.at, strict=False)]
        return itertools.chain(steps, itertools.repeat(None))
    return _seeded_sizes(random.Random(cuts.seed), cuts.max_size)  # a generator of its own: same seed, same cuts


def _seeded_sizes(rng: random.Random, max_size: int) -> Iterator[int | None]:
    """``rng.randint(1, max_size)`` again and again, drawn as ``randint`` draws (rejection
    sampling on ``getrandbits``, the same bits taken) without its three calls a piece:
    a one-byte stream draws one size per byte."""
    getrandbits = rng.getrandbits
    bits = max_size.bit_length()
    while True:
        drawn = getrandbits(bits)
        while drawn >= max_size:
            drawn = getrandbits(bits)
        yield drawn + 1


def _cut(text: str, cuts: Cuts) -> Iterator[list[str]]:
    sizes = piece_sizes(cuts)
    position, batch = 0, []
    while position < len(text):
        size = next(sizes)
        end = len(text) if size is None else position + size
        batch.append(text[position:end])
        position = end
        if len(batch) >= _PIECES_PER_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _with_empty_first(batches: Iterable[list[str]]) -> Iterator[list[str]]:
    first = True
    for batch in batches:
        yield [""] + batch if first else batch
        first = False


def text_batches(text: str, plan: ReplyPlan) -> Iterable[list[str]]:
    """The deltas of ``text`` (reasoning or reply text), in batches."""
    shape = plan.stream
    if shape is None or not shape.cuts_content:
        return word_batches(text, plan.chunk_words)
    batches = _cut(text, shape.text) if shape.text is not None else word_batches(text, plan.chunk_words)
    return _with_empty_first(batches) if shape.empty_first_delta and text else batches


def argument_batches(arguments: str, default_size: int, plan: ReplyPlan) -> Iterable[list[str]]:
    """The deltas of a tool call's ``arguments`` (the protocol slices them every
    ``default_size`` characters by default), in batches."""
    shape = plan.stream
    if shape is None or not shape.cuts_content:
        return slice_batches(arguments, default_size)
    batches = (
        _cut(arguments, shape.arguments) if shape.arguments is not None else slice_batches(arguments, default_size)
    )
    return _with_empty_first(batches) if shape.empty_first_delta else batches


def cut_problem(plan: ReplyPlan) -> str | None:
    """What in the plan's shape no protocol can do with its texts (a cut point past the
    end of one), naming the field; None when every cut fits."""
    shape = plan.stream
    if shape is None:
        return None
    checks = (
        (
            "text",
            shape.text,
            [("reasoning", plan.reasoning or "")] + [("text", p.text) for p in plan.parts if isinstance(p, TextPart)],
        ),
        ("arguments", shape.arguments, [(f"arguments of {c.name!r}", c.arguments) for c in plan.tool_calls]),
    )
    for field, cuts, texts in checks:
        if cuts is None or cuts.at is None:
            continue
        for what, text in texts:
            if text and cuts.at[-1] >= len(text):
                return (
                    f"stream.{field}.at: cut point {cuts.at[-1]} is past the end of the {what} "
                    f"({len(text)} characters); cut points must be less than the length of every "
                    f"{field} they cut"
                )
    return None
