"""examples/stream_shapes: the strategy catches each naive client's bug, which the default
shape hides, within its default budget; the fixed clients pass every shape."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

import mockllm.strategies
from harness.plugin.fixtures import MockLLMFixture
from mockllm import MockLLM
from tests.examples.example_support import pytest_in_folder

EXAMPLE = Path(__file__).parents[2] / "examples" / "stream_shapes"
sys.path.insert(0, str(EXAMPLE))
from text_stream import collect_text, collect_text_naive  # noqa: E402
from tool_stream import collect_tool_calls, collect_tool_calls_naive  # noqa: E402

sys.path.remove(str(EXAMPLE))

CALLS = [
    {"name": "get_weather", "args": {"city": "Oslo", "unit": "celsius"}},
    {"name": "get_time", "args": {"tz": "CET"}},
]
SCRIPT = [{"messages": [{"tool_call": CALLS}]}]
REPLY = "Oslo is sunny today, 21 degrees."
TEXT_SCRIPT = [{"messages": [{"text_message": {"text": REPLY}}]}]


def _property(client: object, script: object = SCRIPT, expected: object = CALLS) -> object:
    # The default budget (100 examples), derandomised: the same examples on every run. The
    # same minimal shape, without hypothesis's explain phase: once an example fails it traces
    # every later run of the test line by line (here 3 to 10 times slower a run, on 3.11)
    # to add notes on which lines only failing examples ran, which this test does not read.
    @settings(
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
        phases=[phase for phase in Phase if phase is not Phase.explain],
    )
    @given(shape=mockllm.strategies.stream_shapes(protocol="openai-chat"))
    def every_shape(shape: mockllm.StreamShape) -> None:
        mock = MockLLM()
        mock.script(script, stream=shape)
        fixture = MockLLMFixture(mock)
        try:
            assert client(fixture.openai(), "Weather and time in Oslo?") == expected  # type: ignore[operator]
        finally:
            fixture.close()

    return every_shape


def _failure_report(property_test: object) -> str:
    """The notes of the failure hypothesis raises for ``property_test``."""
    with pytest.raises(Exception) as failure:  # noqa: B017 (whatever the bug raises)
        property_test()  # type: ignore[operator]
    report = "\n".join(getattr(failure.value, "__notes__", []))
    if isinstance(failure.value, BaseExceptionGroup):
        report += "\n".join(note for exc in failure.value.exceptions for note in getattr(exc, "__notes__", []))
    return report


def test_the_strategy_catches_the_naive_client_and_prints_the_minimal_shape() -> None:
    report = _failure_report(_property(collect_tool_calls_naive))
    assert "StreamShape(id_with_arguments=True)" in report
    assert '"stream": {"id_with_arguments": true}' in report


def test_the_fixed_client_passes_every_shape() -> None:
    _property(collect_tool_calls)()  # type: ignore[operator]


def test_the_strategy_catches_the_text_client_that_stops_at_the_finish_reason() -> None:
    """It passes on the default shape (the finish in a chunk of its own); the strategy finds
    the shape that sends the last words with the finish reason, and shrinks to it alone."""
    fixture = MockLLMFixture(MockLLM())
    try:
        fixture.script(TEXT_SCRIPT)
        assert collect_text_naive(fixture.openai(), "Weather in Oslo?") == REPLY
    finally:
        fixture.close()
    report = _failure_report(_property(collect_text_naive, TEXT_SCRIPT, REPLY))
    assert "StreamShape(finish_with_last_delta=True)" in report
    assert '"stream": {"finish_with_last_delta": true}' in report


def test_the_fixed_text_client_passes_every_shape() -> None:
    _property(collect_text, TEXT_SCRIPT, REPLY)()  # type: ignore[operator]


def test_the_example_projects_tests_pass_run_by_pytest_in_its_folder(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without LangSmith's plugin, which this environment brings and the example does not use
    # (it imports its client at every pytest start: ~1 s of CPU).
    result = pytest_in_folder(
        EXAMPLE, pytester, monkeypatch, "-q", "-p", "no:cacheprovider", without="-p no:langsmith_plugin"
    )
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert "4 passed" in result.stdout.str()
