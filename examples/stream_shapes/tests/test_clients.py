"""The clients against the mock: the default shape, then every legal shape."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from text_stream import collect_text, collect_text_naive
from tool_stream import collect_tool_calls, collect_tool_calls_naive

import mockllm.strategies

CALLS = [
    {"name": "get_weather", "args": {"city": "Oslo", "unit": "celsius"}},
    {"name": "get_time", "args": {"tz": "CET"}},
]
REPLY = "Oslo is sunny today, 21 degrees."
# Each client with its bug, then fixed: the script it reads and what it should return.
CASES = {
    "tool calls": (collect_tool_calls_naive, collect_tool_calls, [{"messages": [{"tool_call": CALLS}]}], CALLS),
    "text": (collect_text_naive, collect_text, [{"messages": [{"text_message": {"text": REPLY}}]}], REPLY),
}


@pytest.mark.parametrize("case", CASES)
def test_both_clients_pass_on_the_default_shape(mockllm, case):
    naive, fixed, script, expected = CASES[case]
    for collect in (naive, fixed):
        mockllm.script(script)  # one request each
        assert collect(mockllm.openai(), "Weather and time in Oslo?") == expected


@pytest.mark.parametrize("case", CASES)
@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=mockllm.strategies.stream_shapes(protocol="openai-chat"))
def test_the_fixed_client_reads_the_same_reply_from_every_legal_shape(mockllm, case, shape):
    _, fixed, script, expected = CASES[case]
    mockllm.script(script, stream=shape)  # the same chain again: this example's shape replaces the last one's
    assert fixed(mockllm.openai(), "Weather and time in Oslo?") == expected
