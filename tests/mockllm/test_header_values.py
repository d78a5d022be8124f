"""A value the mock puts in a reply header (an instruction id, a fallback reason) is
always sendable: h11 refuses non-ASCII, control characters and edge whitespace, and the
client would get no response at all."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mockllm._limits import HEADER_VALUE_MAX, header_value
from mockllm._response_headers import with_headers

_VALUES = st.text(alphabet=st.sampled_from(list(" a~\t\n\x00\x1f\x7fé\u2028")), max_size=HEADER_VALUE_MAX + 10)


@settings(max_examples=500, deadline=None)
@given(_VALUES)
def test_a_header_value_is_sendable_and_keeps_what_was_already(value: str) -> None:
    sent = header_value(value)
    assert sent.isascii() and sent.isprintable() and sent == sent.strip()
    assert len(sent) <= HEADER_VALUE_MAX
    if value.isascii() and value.isprintable() and value == value.strip() and len(value) <= HEADER_VALUE_MAX:
        assert sent == value
    else:
        # Escaped as Python escapes it, then clipped: what a reader can trace back.
        escaped = value.encode("ascii", "backslashreplace").decode("ascii")
        escaped = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in escaped).strip()
        assert sent == (escaped if len(escaped) <= HEADER_VALUE_MAX else escaped[: HEADER_VALUE_MAX - 3] + "...")


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["x-a", "x-b", "x-c", "x-d"]), _VALUES | st.sampled_from(["| a", "a |", "|", ""]))
)
def test_a_reply_s_headers_are_each_value_made_sendable(values: dict[str, str]) -> None:
    # ``with_headers`` tests every value at once when all are already sendable: the
    # same headers as each value through ``header_value``.
    expected = [("content-type", "application/json"), *((k, header_value(v)) for k, v in values.items())]
    assert with_headers(values, content_type="application/json") == expected
