"""The client against the mock: the default shape, then every legal shape."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from tool_stream import collect_tool_calls, collect_tool_calls_naive

import mockllm.strategies

CALLS = [
    {"name": "get_weather", "args": {"city": "Oslo", "unit": "celsius"}},
    {"name": "get_time", "args": {"tz": "CET"}},
]
SCRIPT = [{"messages": [{"tool_call": CALLS}]}]


def test_both_clients_pass_on_the_default_shape(mockllm):
    mockllm.script(SCRIPT)
    assert collect_tool_calls_naive(mockllm.openai(), "Weather and time in Oslo?") == CALLS
    mockllm.script(SCRIPT)
    assert collect_tool_calls(mockllm.openai(), "Weather and time in Oslo?") == CALLS


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=mockllm.strategies.stream_shapes(protocol="openai-chat"))
def test_the_client_collects_the_calls_from_every_legal_shape(mockllm, shape):
    mockllm.script(SCRIPT, stream=shape)  # the same chain again: this example's shape replaces the last one's
    assert collect_tool_calls(mockllm.openai(), "Weather and time in Oslo?") == CALLS
