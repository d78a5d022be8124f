"""The AWS event-stream framing, checked against botocore's own parser: what the mock
writes botocore reads back (headers, payload, both CRCs), and what botocore would refuse
the mock's decoder refuses too."""

from __future__ import annotations

import json
import struct
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mockllm._wire.eventstream import (
    EventStreamError,
    decode_messages,
    encode_headers,
    encode_message,
    event_message,
    exception_message,
    framer,
)

eventstream = pytest.importorskip("botocore.eventstream", reason="botocore is not installed (the test extra)")

header_names = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=20)
header_values = st.text(max_size=60)


def botocore_read(data: bytes, cut: int | None = None) -> list[tuple[dict[str, object], bytes]]:
    """Every message botocore's ``EventStreamBuffer`` parses from ``data`` (fed in pieces
    of ``cut`` bytes, as a socket delivers them)."""
    buffer = eventstream.EventStreamBuffer()
    size = cut or len(data) or 1
    out = []
    for start in range(0, len(data), size):
        buffer.add_data(data[start : start + size])
        out += [(dict(message.headers), message.payload) for message in buffer]
    return out


@given(
    st.lists(st.tuples(st.dictionaries(header_names, header_values, max_size=4), st.binary(max_size=300)), max_size=5),
    st.integers(1, 40),
)
def test_botocore_reads_what_the_mock_writes_whatever_the_pieces(
    messages: list[tuple[dict[str, str], bytes]], cut: int
) -> None:
    data = b"".join(encode_message(encode_headers(list(headers.items())), payload) for headers, payload in messages)
    assert botocore_read(data, cut) == messages
    assert [(m.headers, m.payload) for m in decode_messages(data)] == messages


def test_an_event_and_an_exception_carry_the_headers_botocore_dispatches_on() -> None:
    data = event_message("contentBlockDelta", b'{"x":1}') + exception_message("throttlingException", b'{"message":"m"}')
    assert botocore_read(data) == [
        (
            {":event-type": "contentBlockDelta", ":content-type": "application/json", ":message-type": "event"},
            b'{"x":1}',
        ),
        (
            {
                ":exception-type": "throttlingException",
                ":content-type": "application/json",
                ":message-type": "exception",
            },
            b'{"message":"m"}',
        ),
    ]


def test_the_decoder_reads_every_header_type_as_botocore_does() -> None:
    # botocore has no encoder: a message with each header type, framed by hand.
    def header(name: str, kind: int, value: bytes) -> bytes:
        return bytes([len(name)]) + name.encode() + bytes([kind]) + value

    ident = uuid.UUID(int=7)
    block = b"".join(
        [
            header("t", 0, b""),
            header("f", 1, b""),
            header("b", 2, struct.pack(">b", -3)),
            header("s", 3, struct.pack(">h", 300)),
            header("i", 4, struct.pack(">i", -70000)),
            header("l", 5, struct.pack(">q", 2**40)),
            header("x", 6, struct.pack(">H", 2) + b"\x00\xff"),
            header("u", 9, ident.bytes),
        ]
    )
    data = encode_message(block, b"p")
    expected = {"t": True, "f": False, "b": -3, "s": 300, "i": -70000, "l": 2**40, "x": b"\x00\xff", "u": ident.bytes}
    assert decode_messages(data)[0].headers == expected
    assert dict(botocore_read(data)[0][0]) == expected


@pytest.mark.parametrize("at", [2, 9, 14, -2])
def test_a_flipped_byte_is_refused_by_both_readers(at: int) -> None:
    data = bytearray(event_message("messageStop", b'{"stopReason":"end_turn"}'))
    data[at] ^= 0x40
    with pytest.raises(eventstream.ParserError):
        botocore_read(bytes(data))
    with pytest.raises(EventStreamError, match="message at byte 0"):
        decode_messages(bytes(data))


def test_a_stream_cut_short_names_where() -> None:
    data = event_message("messageStart", b"{}") * 2
    with pytest.raises(EventStreamError, match=f"message at byte {len(data) // 2}"):
        decode_messages(data[:-3])


@given(st.lists(st.binary(max_size=70), max_size=30), st.lists(st.text(max_size=12), max_size=30), st.text(max_size=5))
def test_the_fast_framer_writes_the_same_bytes_as_the_plain_encoder(
    payloads: list[bytes], texts: list[str], head: str
) -> None:
    delta = framer("contentBlockDelta")
    framed = delta.frame(payloads)
    assert framed == [event_message("contentBlockDelta", payload) for payload in payloads]
    assert [payload for _, payload in botocore_read(b"".join(framed))] == payloads
    for _ in range(2):  # framed, then taken from the table
        framed = delta.frame_texts(f'{{"h":{json.dumps(head)},"t":', "}", texts)
        assert [json.loads(payload)["t"] for _, payload in botocore_read(b"".join(framed))] == texts
