"""The writes a stream shape cuts are the same bytes at the same boundaries as they were
before the writes were sliced straight from the events (issue 29): users' property tests
and the stream-shape goldens replay a seed's writes, so a faster cutter must not move one.

``reference_writes`` is the cutter as it was (a byte buffer filled piece by piece), kept
here as the specification the module is checked against.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm import _delivery
from mockllm._cutting import piece_sizes
from mockllm._delivery import _RESET, StreamReset, _rewritten
from mockllm._shapes import Cuts

WRITE_BYTES = 48  # the uncut writes' size, small here (64 KiB in the module) so examples cross it

Pieces = list[tuple[float, bytes]]


def reference_writes(pieces: Pieces, writes: Cuts | None, split_utf8: bool, unpaced: bool) -> Pieces:
    sizes = reference_sizes(writes) if writes is not None else None
    room = next(sizes) if sizes is not None else None
    buffer = bytearray()
    waited = 0.0
    out: Pieces = []

    def flush() -> None:
        nonlocal waited
        if buffer:
            out.extend(reference_split(waited, bytes(buffer)) if split_utf8 else [(waited, bytes(buffer))])
            buffer.clear()
            waited = 0.0

    for wait, data in pieces:
        if data is _RESET:
            flush()
            out.append((0.0, _RESET))
            return out
        if wait or (writes is None and not unpaced):
            flush()
        waited += wait
        view = memoryview(data)
        while view:
            if room is None:
                buffer += view
                if len(buffer) >= WRITE_BYTES:
                    flush()
                break
            taken = view[:room]
            buffer += taken
            view = view[len(taken) :]
            room -= len(taken)
            if room == 0:
                flush()
                assert sizes is not None
                room = next(sizes)
    flush()
    return out


def reference_sizes(cuts: Cuts) -> Iterator[int | None]:
    if cuts.size is not None:
        yield from itertools.repeat(cuts.size)
    elif cuts.at is not None:
        yield from (b - a for a, b in zip([0, *cuts.at], cuts.at, strict=False))
        yield from itertools.repeat(None)
    else:
        rng = random.Random(cuts.seed)
        while True:
            yield rng.randint(1, cuts.max_size)


def reference_split(wait: float, data: bytes) -> Pieces:
    out, start = [], 0
    for i, byte in enumerate(data):
        if byte >= 0xC0 and i + 1 < len(data):
            out.append((wait, data[start : i + 1]))
            wait, start = 0.0, i + 1
    out.append((wait, data[start:]))
    return out


def delivered(pieces: Pieces, writes: Cuts | None, split_utf8: bool, unpaced: bool) -> Pieces:
    out: Pieces = []
    default, _delivery.STREAM_WRITE_BYTES = _delivery.STREAM_WRITE_BYTES, WRITE_BYTES
    try:
        out.extend(_rewritten(iter(pieces), writes, split_utf8, unpaced))
    except StreamReset:
        out.append((0.0, _RESET))
    finally:
        _delivery.STREAM_WRITE_BYTES = default
    return out


events = st.lists(
    st.tuples(
        st.sampled_from([0.0, 0.0, 0.0, 0.25]),
        st.one_of(
            st.text(max_size=40).map(str.encode),
            st.binary(max_size=40),
            st.sampled_from([WRITE_BYTES // 3, WRITE_BYTES // 2, WRITE_BYTES - 1, WRITE_BYTES, 2 * WRITE_BYTES]).map(
                b"x".__mul__
            ),
        ),
    ),
    max_size=12,
)
writes = st.one_of(
    st.none(),
    st.builds(Cuts, size=st.integers(1, 9)),
    st.builds(Cuts, seed=st.integers(0, 2**32), max_size=st.integers(1, 40)),
    st.lists(st.integers(1, WRITE_BYTES * 2), min_size=1, max_size=6, unique=True).map(
        lambda points: Cuts(at=sorted(points))
    ),
)


@settings(max_examples=150, deadline=None)
@given(events=events, writes=writes, split_utf8=st.booleans(), unpaced=st.booleans(), reset=st.booleans())
def test_writes_are_the_bytes_and_boundaries_they_were(
    events: Pieces, writes: Cuts | None, split_utf8: bool, unpaced: bool, reset: bool
) -> None:
    pieces = [*events, (0.0, _RESET)] if reset else events
    assert delivered(pieces, writes, split_utf8, unpaced) == reference_writes(pieces, writes, split_utf8, unpaced)


@pytest.mark.parametrize("max_size", [1, 2, 7, 8, 9, 64, 1000])
def test_seeded_piece_sizes_are_the_seeds_randint_draws(max_size: int) -> None:
    for seed in range(50):
        drawn = list(itertools.islice(piece_sizes(Cuts(seed=seed, max_size=max_size)), 500))
        assert drawn == list(itertools.islice(reference_sizes(Cuts(seed=seed, max_size=max_size)), 500))
