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
from harness.golden.records import VolatileRules
from mockllm import MintedIds


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
    # the user's datetime is their data: shown, in ISO form.
    assert lines == [
        '-    tool                     -            call={"args":{"id":"V-9"},"name":"lookup"} '
        'started_at="2026-01-02T03:04:05"'
    ]
    assert table_lines([ToolCall("lookup", {})]) == ['-    ToolCall                 -            args={} name="lookup"']


MINTED = "call_mk0123abcd_t0_0"
RESPONSE = "chatcmpl-" + "a1" * 12


def test_ids_the_mock_minted_are_numbered_wherever_they_are() -> None:
    events = [
        {"type": "call", "id": RESPONSE, "call_id": MINTED, "seq": 0},
        {"type": "result", "call_id": MINTED, "nested": {"ids": [MINTED, "approval-" + MINTED]}, "seq": 1},
        {"type": "call", "id": "chatcmpl-" + "b2" * 12, "note": f"called {MINTED} once", "seq": 2},
    ]
    minted = MintedIds(response_ids=frozenset({"a1" * 12, "b2" * 12}), tool_call_ids=frozenset({MINTED}))
    assert table_lines(events, rules=VolatileRules(minted=minted)) == [
        '0    call                     -            call_id="<call:1>" id="<id:1>"',
        '1    result                   -            call_id="<call:1>" nested={"ids":["<id:2>","<id:3>"]}',
        f'2    call                     -            id="<id:4>" note="called {MINTED} once"',
    ]


USER_ORDER = {"type": "order", "order_id": "A-1", "customer_id": "C-9", "ship_time": "never", "elapsed_ms": 12}


def test_a_users_fields_are_shown_whatever_their_names() -> None:
    changed = {**USER_ORDER, "order_id": "A-2", "customer_id": "C-7", "ship_time": "tomorrow", "elapsed_ms": 99}
    assert table_lines([USER_ORDER]) == [
        '-    order                    -            customer_id="C-9" elapsed_ms=12 order_id="A-1" ship_time="never"'
    ]
    assert golden_text([USER_ORDER]) != golden_text([changed])
    for key in ("order_id", "customer_id", "ship_time", "elapsed_ms"):
        assert golden_text([USER_ORDER]) != golden_text([{**USER_ORDER, key: changed[key]}]), key


def test_a_user_opts_fields_in_as_volatile() -> None:
    from harness import volatile

    matcher = volatile(ids=["order_id"], timestamps=["ship_time"], durations=["elapsed_ms"])
    events = [USER_ORDER, {**USER_ORDER, "order_id": "A-2", "ship_time": "2026-01-01", "elapsed_ms": 3}]
    assert table_lines(events, matcher=matcher) == [
        '-    order                    -            customer_id="C-9" elapsed_ms="<duration>" order_id="<order:1>" '
        'ship_time="<timestamp>"',
        '-    order                    -            customer_id="C-9" elapsed_ms="<duration>" order_id="<order:2>" '
        'ship_time="<timestamp>"',
    ]


def test_harness_events_show_their_data_and_leave_the_envelope_out() -> None:
    event = Event(
        type="message",
        persistence=Persistence.PERSISTED,
        event_index=0,
        sequence_number=3,
        session_id="s",
        timestamp=99,
        data={"content": "x", "messageId": "msg_" + "c3" * 12},
    )
    rules = VolatileRules(minted=MintedIds(response_ids=frozenset({"c3" * 12})))
    assert table_lines([event], rules=rules) == [
        '3    message                  persisted    content="x" messageId="<id:1>"'
    ]


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
