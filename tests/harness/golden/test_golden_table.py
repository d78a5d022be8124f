"""The golden table of events of any shape: every field shown, volatile values
normalised, chunk runs folded only when nothing would be hidden."""

from __future__ import annotations

import dataclasses
import datetime

import pytest
from pydantic import BaseModel
from syrupy.filters import props
from syrupy.matchers import path_type

from harness.events import Event, Persistence
from harness.golden.extension import golden_text


@dataclasses.dataclass
class ToolCall:
    name: str
    args: dict[str, object]


class Step(BaseModel):
    type: str
    call: ToolCall | None = None
    started_at: datetime.datetime | None = None


def table_lines(events: object, **options: object) -> list[str]:
    return golden_text(events, **options).splitlines()[2:]


def test_a_plain_dict_shows_every_field_nested_values_with_sorted_keys() -> None:
    lines = table_lines([{"type": "message", "content": "hi", "meta": {"b": 1, "a": [True, None]}}])
    assert lines == ['-    message                  -            content="hi" meta={"a":[true,null],"b":1}']


def test_models_and_dataclasses_are_walked_nested_values_included() -> None:
    when = datetime.datetime(2026, 1, 2, 3, 4, 5)
    lines = table_lines([Step(type="tool", call=ToolCall("lookup", {"id": "V-9"}), started_at=when)])
    # the tool's own argument named id is data, not a volatile id; the datetime is.
    assert lines == [
        '-    tool                     -            call={"args":{"id":"V-9"},"name":"lookup"} started_at="<timestamp>"'
    ]
    assert table_lines([ToolCall("lookup", {})]) == ['-    ToolCall                 -            args={} name="lookup"']


def test_ids_timestamps_and_durations_are_normalised_at_the_event_level() -> None:
    events = [
        {"type": "call", "id": "c-81", "created": 1700000001, "duration_ms": 12, "seq": 0},
        {"type": "result", "call_id": "c-81", "updatedAt": "2026-01-01", "latency": 3.5, "seq": 1},
        {"type": "call", "id": "c-99", "elapsedSeconds": 1, "seq": 2},
    ]
    assert table_lines(events) == [
        '0    call                     -            created="<timestamp>" duration_ms="<duration>" id="<id:1>"',
        '1    result                   -            call_id="<call:1>" latency="<duration>" updatedAt="<timestamp>"',
        '2    call                     -            elapsedSeconds="<duration>" id="<id:2>"',
    ]


def test_harness_events_show_their_data_and_leave_the_envelope_out() -> None:
    event = Event(
        type="message",
        persistence=Persistence.PERSISTED,
        event_index=0,
        sequence_number=3,
        session_id="s",
        timestamp=99,
        data={"content": "x", "messageId": "m-1"},
    )
    assert table_lines([event]) == ['3    message                  persisted    content="x" messageId="<id:1>"']


def test_chunk_runs_fold_only_when_their_other_fields_agree() -> None:
    chunks = [
        {"type": "message_chunk", "persistence": "transient", "data": {"content": c, "blockIndex": b}}
        for c, b in (("a", 0), ("b", 0), ("c", 1))
    ]
    deltas = [{"type": "response.output_text.delta", "delta": d} for d in ("Hel", "lo")]
    assert table_lines(chunks + deltas) == [
        '*    message_chunk ×2         transient    content="ab" blockIndex=0',
        '*    message_chunk ×1         transient    content="c" blockIndex=1',
        '*    response.output_text.delta ×2 -            delta="Hello"',
    ]


def test_syrupy_matchers_and_filters_apply_with_syrupy_paths() -> None:
    events = [{"type": "reply", "token": "t-123", "trace": {"host": "a"}}]
    lines = table_lines(events, exclude=props("trace"), matcher=path_type({"0.token": (str,)}))
    assert lines == ["-    reply                    -            token=str"]


def test_a_value_without_a_stable_text_form_is_an_error_naming_where() -> None:
    class Opaque:
        pass

    with pytest.raises(TypeError, match=r"cannot show the Opaque at 0\.data\.handle: .*path_type"):
        golden_text([{"type": "x", "data": {"handle": Opaque()}}])
    with pytest.raises(TypeError, match="event 0 of the golden is a str"):
        golden_text(["just text"])
