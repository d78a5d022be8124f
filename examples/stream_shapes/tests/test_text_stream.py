"""The text client against the mock: the default shape, then every legal shape."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from text_stream import collect_text, collect_text_naive

import mockllm.strategies

REPLY = "Oslo is sunny today, 21 degrees."
SCRIPT = [{"messages": [{"text_message": {"text": REPLY}}]}]


def test_both_clients_pass_on_the_default_shape(mockllm):
    mockllm.script(SCRIPT)
    assert collect_text_naive(mockllm.openai(), "Weather in Oslo?") == REPLY
    mockllm.script(SCRIPT)
    assert collect_text(mockllm.openai(), "Weather in Oslo?") == REPLY


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=mockllm.strategies.stream_shapes(protocol="openai-chat"))
def test_the_client_collects_the_text_from_every_legal_shape(mockllm, shape):
    mockllm.script(SCRIPT, stream=shape)  # the same chain again: this example's shape replaces the last one's
    assert collect_text(mockllm.openai(), "Weather in Oslo?") == REPLY
