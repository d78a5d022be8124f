"""The CalculatorAgent's evaluator on hostile expressions: the plan comes from model output,
so every expression either computes quickly or fails as a step error that runs the fallback plan."""

from __future__ import annotations

import asyncio
import json

import pytest

from harness.systems.llm import model_client
from harness.systems.planner import CalculationError, TaskExecutor, calculate
from harness.systems.planner.calculator import MAX_INT_BITS
from mockllm import InstructionChain, MockLLM
from tests.http_support import sdk_http_client

HOSTILE = {
    "((9**99)**99)**99": "too large",  # a short nested power: minutes of CPU unbounded
    "99**99*99**99*99**99*99**99": "too large",  # products grow the same way
    "0**-1": "division by zero",
    "0.0**-2": "division by zero",
    "10.0**99*10.0**99*10.0**99*10.0**99": "floating-point",
    "1e999": "floating-point",  # the literal itself is infinite
    "(-8)**0.5": "not a real number",
    "2.0**99*(2**99)**9*2**99": "floating-point",
    "1e300*1e300": "floating-point",
    "1 + 1e308 * 1e308 - 1": "floating-point",
}


@pytest.mark.parametrize("expression", list(HOSTILE))
def test_hostile_expressions_fail_as_calculation_errors(expression: str) -> None:
    with pytest.raises(CalculationError, match=HOSTILE[expression]):
        calculate(expression)


def test_results_up_to_the_bound_are_computed_exactly() -> None:
    assert calculate("2**99 * 2**99") == 2**198
    assert calculate("(2**10)**99") == 2**990
    assert calculate("-" * 2 + "7 // 2") == 3
    assert calculate("-" * 198 + "1") == 1 and calculate("(" * 99 + "1" + ")" * 99) == 1
    assert abs(calculate("1.5**100")) == 1.5**100
    with pytest.raises(CalculationError, match=f"over {MAX_INT_BITS} bits"):
        calculate("(2**10)**100 * 2")


@pytest.mark.parametrize("expression", ["((9**99)**99)**99", "0**-1", "10.0**99*10.0**99*10.0**99*10.0**99"])
def test_a_failing_calculation_is_a_step_error_and_the_fallback_plan_answers(expression: str) -> None:
    mock = MockLLM()
    http = sdk_http_client("anthropic-messages", mock)
    executor = TaskExecutor(model_client("anthropic-messages", http_client=http))
    plan = {
        "thought": "compute",
        "steps": [{"agent": "CalculatorAgent", "action": "calculate", "args": {"expression": expression}}],
    }
    steps = [
        {"messages": [{"text_message": {"text": json.dumps(plan)}}]},
        {"messages": [{"text_message": {"text": "That number cannot be computed."}}]},
    ]
    query = InstructionChain.model_validate({"instruction_chain": steps}).tagged("Compute it")
    try:
        result = asyncio.run(executor.run(query))
    finally:
        executor.close()
    assert result.success and result.final_text == "That number cannot be computed."
    assert result.fallback_reason is not None
    assert result.fallback_reason.startswith(f"step failed: CalculatorAgent could not calculate {expression!r}: ")
    error = next(e for e in result.events if e.type == "step_error")
    assert error.data["step"] == 1 and expression in error.data["error"]
