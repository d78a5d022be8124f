"""Hypothesis strategies over the legal ways a provider streams (and, apart, over faults).

Most streaming bugs in client code are about chunk boundaries, not content: arguments
cut mid-token, an id and its arguments in one delta, an empty first delta, a usage-only
chunk, a keep-alive comment, a UTF-8 character split across reads. Search them all
around your own streaming code::

    from hypothesis import HealthCheck, given, settings
    import mockllm.strategies

    @settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(shape=mockllm.strategies.stream_shapes(protocol="openai-chat"))
    def test_my_client_reassembles_every_shape(mockllm, shape):
        mockllm.script(CHAIN, stream=shape)     # or MockLLM().script(...)
        assert my_client(mockllm.openai()) == EXPECTED

A failure shrinks to the smallest shape that breaks your code, printed as the Python
that makes it (``StreamShape(id_with_arguments=True)``) and, in the notes, as the
instruction's JSON block (``"stream": {"id_with_arguments": true}``) to paste into a
script. Everything is drawn from hypothesis's own data: the same hypothesis seed, the
same shapes, the same bytes. Needs ``hypothesis`` (the ``hypothesis`` extra).
"""

from __future__ import annotations

from typing import Any

from mockllm._optional import require
from mockllm._shapes import Cuts, StreamFaults, StreamShape
from mockllm._wire.registry import CODECS, codec_named

require("hypothesis", extra="hypothesis", feature="mockllm.strategies")

from hypothesis import note  # noqa: E402  (after the check that names the extra)
from hypothesis import strategies as st  # noqa: E402

__all__ = ["cuts", "stream_faults", "stream_shapes"]

_PROTOCOL_KNOBS = (
    "arguments",
    "id_with_arguments",
    "usage_chunk",
    "ping_every",
    "keep_alive_every",
    "finish_with_last_delta",
)
"""Knobs only some protocols express (a codec lists those it honours in ``shape_knobs``):
``arguments`` where calls stream in pieces, ``keep_alive_every`` where the stream is SSE,
``finish_with_last_delta`` where a chunk can carry a delta and the finish. Every other
knob applies to every protocol."""


def cuts(max_size: int = 8) -> st.SearchStrategy[Cuts | None]:
    """No cut (the default), a fixed size, or a seeded random cutter of pieces up to
    ``max_size`` (shrinking goes in that order, then to smaller sizes)."""
    return st.one_of(
        st.none(),
        st.builds(Cuts, size=st.integers(1, max_size)),
        st.builds(Cuts, seed=st.integers(0, 2**16), max_size=st.integers(1, max_size)),
    )


def _knobs(protocol: str | None) -> set[str]:
    if protocol is None:
        return {knob for codec in CODECS for knob in getattr(codec, "shape_knobs", ())}
    return set(getattr(codec_named(protocol), "shape_knobs", ()))


def stream_shapes(protocol: str | None = None, *, server: bool = False) -> st.SearchStrategy[StreamShape]:
    """Legal stream shapes; ``protocol`` narrows to the knobs that protocol expresses
    (any name or alias of ``mockllm.PROTOCOLS``), ``server=True`` adds gzip (which only
    the server can send)."""
    # (field, strategy) in the order they are drawn: built once, not on every draw (a
    # strategy is checked the first time it is drawn from: most of a draw's cost).
    knobs = _knobs(protocol)
    small_cuts, booleans, every_few = cuts(), st.booleans(), st.none() | st.integers(1, 5)
    drawn: list[tuple[str, st.SearchStrategy[Any]]] = [
        ("text", small_cuts),
        ("empty_first_delta", booleans),
        ("writes", cuts(max_size=64)),
        ("split_utf8", booleans),
    ]
    drawn += [
        (knob, strategy)
        for knob, strategy in (
            ("arguments", small_cuts),
            ("keep_alive_every", every_few),
            ("id_with_arguments", booleans),
            ("usage_chunk", booleans),
            ("ping_every", every_few),
            ("finish_with_last_delta", booleans),
        )
        if knob in knobs
    ]
    if server:
        drawn.append(("gzip", booleans))

    @st.composite
    def shapes(draw: Any) -> StreamShape:
        fields = {name: draw(strategy) for name, strategy in drawn}
        shape = StreamShape(**{name: value for name, value in fields.items() if value not in (None, False)})
        note(f"stream shape, as a script: {shape.snippet()}")
        return shape

    return shapes()


def stream_faults(protocol: str | None = None) -> st.SearchStrategy[StreamFaults]:
    """One fault at a time: the terminal event dropped, the last event truncated, a
    reset in event 0..20 (past the end: the last), or a stall of up to 50 ms before the
    first byte. Every protocol can suffer each (``protocol`` is checked, for symmetry)."""
    if protocol is not None:
        codec_named(protocol)

    def noted(faults: StreamFaults) -> StreamFaults:
        note(f"stream faults, as a script: {faults.snippet()}")
        return faults

    return st.one_of(
        st.just(StreamFaults(drop_terminal=True)),
        st.just(StreamFaults(truncate_last=True)),
        st.builds(StreamFaults, reset_at_event=st.integers(0, 20)),
        st.builds(StreamFaults, stall_ms=st.integers(1, 50).map(float)),
    ).map(noted)
