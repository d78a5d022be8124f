"""A long stream is rendered as it is delivered (issue 16): ``MockLLM.handle`` makes its
first events, the rest is made while the server or a transport sends it, in writes of
about ``STREAM_WRITE_BYTES``; the bytes are those of the whole reply either way. A short
stream stays complete, sent in one write with a Content-Length.

(Every door delivering the same bytes, long streams included, is checked in
``test_server_faults.py``; the server's peak memory in ``test_memory.py``.)
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest

from mockllm import Limits, MockLLM
from mockllm._generation import generate_words
from mockllm._limits import STREAM_HEAD_EVENTS, STREAM_WRITE_BYTES
from mockllm._plan import ReplyPlan, TextPart, ToolCallPart, Usage
from mockllm._wire import deltas
from mockllm._wire.registry import codec_named
from tests.mockllm.server_support import PATHS, PROTOCOLS, script, sse_events, text, user_body

MIB = 1024 * 1024
# Words making a stream of about 8 MB in each protocol (an Anthropic delta is smaller).
WORDS_8MB = {"openai-chat": 32_000, "anthropic-messages": 66_000, "openai-responses": 34_000}
CODEC_MODULES = {
    "openai-chat": "mockllm._wire.openai_chat_chunks",
    "anthropic-messages": "mockllm._wire.anthropic_messages",
    "openai-responses": "mockllm._wire.openai_responses",
}


def ask(mock: MockLLM, protocol: str, instruction: dict[str, Any], *, stream: bool = True) -> Any:
    body = user_body(protocol, script(instruction), stream=stream)
    return mock.handle("POST", PATHS[protocol], {}, json.dumps(body).encode())


def event_data(event: bytes) -> dict[str, Any]:
    data = event.decode().rstrip("\n").rpartition("data: ")[2]
    return json.loads(data)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_short_stream_is_complete_and_goes_in_one_write_with_a_content_length(protocol: str) -> None:
    reply = ask(MockLLM(), protocol, text(200))
    chunks = list(reply.paced_chunks())
    assert reply.streaming and len(reply.events) <= STREAM_HEAD_EVENTS
    assert chunks == [(0.0, reply.body)]
    assert reply.length == len(reply.body) == sum(len(event) for event in reply.events)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_long_stream_goes_in_writes_made_as_they_are_sent_with_the_same_bytes(protocol: str) -> None:
    instruction = {
        "id": "long",
        "reasoning": {"length": 900},
        "chunk_words": 3,
        "messages": [
            {"text_message": {"length": 20_000}},
            {"tool_call": [{"name": "lookup", "args": {"q": "ü" * 5000}}]},
        ],
    }
    reply = ask(MockLLM(), protocol, instruction)
    assert reply.streaming and reply.length is None  # no Content-Length: sent in pieces
    chunks = [chunk for wait, chunk in reply.paced_chunks() if wait == 0.0]
    assert len(chunks) > 10
    # The first write is what handle() made (a little over STREAM_HEAD_EVENTS events);
    # after it, writes of about STREAM_WRITE_BYTES (in Responses, the "done" events
    # repeating a whole text make a few longer ones).
    assert STREAM_HEAD_EVENTS < chunks[0].count(b"\n\n") < 2 * STREAM_HEAD_EVENTS
    if protocol != "openai-responses":
        assert all(len(chunk) < 2 * STREAM_WRITE_BYTES for chunk in chunks[1:])
    assert all(len(chunk) >= STREAM_WRITE_BYTES for chunk in chunks[:-1])
    delivered = b"".join(chunks)
    # The whole reply is still there for whoever asks, rendered again: the same bytes,
    # the same as a fresh mock's.
    assert reply.body == delivered == b"".join(reply.events)
    assert ask(MockLLM(), protocol, instruction).body == delivered
    assert len(reply.events) == len(sse_events(delivered))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_delivering_a_long_stream_holds_a_small_part_of_it(protocol: str) -> None:
    mock = MockLLM(limits=Limits(max_output_bytes=64 * MIB))
    reply = ask(mock, protocol, {"id": "big", "messages": [{"text_message": {"length": WORDS_8MB[protocol]}}]})
    tracemalloc.start()
    try:
        size = sum(len(chunk) for _, chunk in reply.paced_chunks())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size > 7 * MIB
    # The reply's text (about 250 KB, in the plan already) is repeated whole in a few of
    # the Responses "done" events; everything else is a batch or a write at a time.
    assert peak < 2 * MIB, f"peak {peak / MIB:.1f} MiB delivering {size / MIB:.1f} MiB"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_paced_long_stream_still_sends_each_event_after_its_delay(protocol: str) -> None:
    reply = ask(MockLLM(), protocol, text(1000, timing={"first_chunk_ms": 40, "chunk_ms": 2}))
    assert reply.length is None
    paced = list(reply.paced_chunks())
    assert [wait for wait, _ in paced[:3]] == [0.04, 0.002, 0.002]
    assert {wait for wait, _ in paced[1:]} == {0.002}
    assert [chunk for _, chunk in paced] == reply.events and len(paced) > STREAM_HEAD_EVENTS


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_scripted_error_past_the_first_writes_cuts_a_long_stream_there(protocol: str) -> None:
    reply = ask(MockLLM(), protocol, text(3000, error={"status": 503, "after_chunks": 1500}))
    assert reply.status == 200 and reply.length is None
    events = sse_events(b"".join(chunk for _, chunk in reply.paced_chunks()))
    assert len(events) == 1501
    last = event_data(events[-1])
    assert "error" in last
    if protocol == "openai-responses":
        assert last["sequence_number"] == 1500


def _failing_after(batches: int) -> Any:
    """A stand-in for ``text_batches`` (the codecs' cut of text) that makes ``batches`` batches, then fails."""

    def word_batches(text: str, words_per_chunk: int, *args: Any) -> Iterator[list[str]]:
        for _ in range(batches):
            yield ["word "] * 300
        raise KeyError("boom")

    return word_batches


def _break_text_batches(protocol: str, batches: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the codec's cut of text fail after ``batches`` batches (where the codec cuts
    it, or ``mockllm._wire.deltas`` for it); a stream made whole at once without cutting
    its text (``DeltaRun.spaced``) is made to cut it event by event."""
    failing = _failing_after(batches)
    for module in (sys.modules[CODEC_MODULES[protocol]], deltas):
        if hasattr(module, "text_batches"):
            monkeypatch.setattr(module, "text_batches", failing)
    monkeypatch.setattr(deltas.DeltaRun, "spaced", lambda self, plan: None)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_bug_mid_stream_ends_the_stream_with_the_protocols_error_event_and_request_id(
    protocol: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _break_text_batches(protocol, 5, monkeypatch)
    reply = ask(MockLLM(), protocol, text(50))
    assert reply.status == 200 and reply.length is None  # the head went fine: headers are sent
    request_id = dict(reply.headers)["request-id" if protocol == "anthropic-messages" else "x-request-id"]
    events = sse_events(b"".join(chunk for _, chunk in reply.paced_chunks()))
    failure = event_data(events[-1])
    message = failure["error"]["message"]
    assert "bug in mockllm" in message and request_id in message and "KeyError" in message
    assert len(events) > 5 * 300
    if protocol == "openai-responses":
        assert failure["sequence_number"] == len(events) - 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_bug_rendering_the_start_of_a_stream_is_a_json_500(protocol: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _break_text_batches(protocol, 0, monkeypatch)
    mock = MockLLM()
    reply = ask(mock, protocol, text(50))
    assert reply.status == 500 and not reply.streaming
    assert "bug in mockllm" in json.loads(reply.body)["error"]["message"]
    assert mock.journal[-1].status == 500


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_codec_renders_a_long_reply_in_small_batches_taken_one_at_a_time(protocol: str) -> None:
    words = generate_words(60_000, "lazy")
    plan = ReplyPlan(
        reasoning=words[:20_000],
        parts=(TextPart(words), ToolCallPart("call_1", "f", '{"q":"' + "x" * 30_000 + '"}')),
        stop_reason="end_turn",
        usage=Usage(1, 1),
        response_id="r",
        created=0,
        chunk_words=2,
    )
    codec = codec_named(protocol)
    batches = codec.render_stream(plan, {"model": "m"})
    first = next(batches)  # the first batch comes before the rest is made
    rest = list(batches)  # kept to compare below: one rendering, not two
    sizes = [sum(map(len, first))] + [
        sum(map(len, batch)) for batch in rest if len(batch) > 3
    ]  # not a few "done" events repeating a text
    assert len(sizes) > 20
    assert max(sizes) < 256 * 1024
    assert b"".join(codec.render_events(plan, {"model": "m"})) == b"".join(b"".join(batch) for batch in [first, *rest])
