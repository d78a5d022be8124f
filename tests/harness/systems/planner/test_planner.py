"""The planner and task executor against the mock: the four validation cases of ADR-002."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from harness import invariants
from harness.systems.agent.store import SQLiteEventStore
from harness.systems.llm import model_client
from harness.systems.planner import (
    CalculationError,
    PlanningResult,
    PlanValidationError,
    StepError,
    TaskExecutor,
    calculate,
    interpolate,
    parse_plan,
)
from harness.systems.planner.prompts import fallback_planner_prompt, planner_prompt
from mockllm import InstructionChain, MockLLM
from tests.http_support import sdk_http_client


def reply(value: Any) -> dict[str, Any]:
    text = value if isinstance(value, str) else json.dumps(value)
    return {"messages": [{"text_message": {"text": text}}]}


class Bench:
    """A task executor on an in-process mock, recording every request body the model gets."""

    def __init__(self, protocol: str = "anthropic-messages") -> None:
        self.requests: list[dict[str, Any]] = []

        async def record(request: Any) -> None:
            self.requests.append(json.loads(request.content))

        self.mock = MockLLM()
        http = sdk_http_client(protocol, self.mock, event_hooks={"request": [record]})
        self.executor = TaskExecutor(model_client(protocol, http_client=http))

    def run(self, question: str, *steps: dict[str, Any]) -> PlanningResult:
        query = InstructionChain.model_validate({"instruction_chain": list(steps)}).tagged(question)
        return asyncio.run(self.executor.run(query))

    def last_user_text(self) -> str:
        return self.requests[-1]["messages"][-1]["content"]


@pytest.fixture
def bench() -> Iterator[Any]:
    made: list[Bench] = []

    def build(protocol: str = "anthropic-messages") -> Bench:
        made.append(Bench(protocol))
        return made[-1]

    yield build
    for b in made:
        b.executor.close()


SIMPLE_PLAN = {
    "thought": "This is a simple greeting, no tools needed.",
    "steps": [{"agent": "MainLLMAgent", "action": "generateResponse", "args": {}, "prompt": "Hello, how are you?"}],
}
CALC_PLAN = {
    "thought": "User wants to calculate 15 * 3, then get a natural response.",
    "steps": [
        {"agent": "CalculatorAgent", "action": "calculate", "args": {"expression": "15 * 3"}},
        {
            "agent": "MainLLMAgent",
            "action": "generateResponse",
            "args": {},
            "prompt": "The result of 15 * 3 is {{step1_result}}. Provide a friendly response.",
        },
    ],
}


@pytest.mark.parametrize("protocol", ["anthropic-messages", "openai-chat"])
def test_case1_simple_chat_is_one_main_llm_step_with_its_prompt(bench: Any, protocol: str) -> None:
    b = bench(protocol)
    result = b.run("Hello, how are you?", reply(SIMPLE_PLAN), reply("I'm well, thank you!"))
    assert result.success and result.fallback_reason is None
    assert [s.model_dump() for s in result.plan.steps] == SIMPLE_PLAN["steps"]
    assert result.final_text == "I'm well, thank you!"
    assert b.last_user_text() == "Hello, how are you?"  # the step's prompt, not args


def test_case2_calculator_result_is_interpolated_into_the_prompt(bench: Any) -> None:
    b = bench()
    result = b.run("What is 15 * 3?", reply(CALC_PLAN), reply("15 times 3 is 45!"))
    assert result.success and result.results == ["45", "15 times 3 is 45!"]
    assert b.last_user_text() == "The result of 15 * 3 is 45. Provide a friendly response."
    assert [e.type for e in result.events if e.type != "message_chunk"] == [
        "plan_requested",
        "plan_created",
        "step_start",
        "step_complete",
        "step_start",
        "step_complete",
        "plan_complete",
    ]


def test_case3_division_by_zero_runs_the_fallback_plan(bench: Any) -> None:
    b = bench()
    plan = {
        "thought": "divide",
        "steps": [
            {"agent": "CalculatorAgent", "action": "calculate", "args": {"expression": "10 / 0"}},
            {"agent": "MainLLMAgent", "action": "generateResponse", "args": {}, "prompt": "It is {{step1_result}}."},
        ],
    }
    result = b.run("What is 10 / 0?", reply(plan), reply("Dividing by zero is undefined."))
    assert result.success
    assert result.fallback_reason == "step failed: CalculatorAgent could not calculate '10 / 0': division by zero"
    assert [s.model_dump() for s in result.plan.steps] == [
        {
            "agent": "MainLLMAgent",
            "action": "generateResponse",
            "args": {},
            "prompt": b.requests[0]["messages"][0]["content"],
        }
    ]
    error = next(e for e in result.events if e.type == "step_error")
    assert error.data == {"step": 1, "error": "CalculatorAgent could not calculate '10 / 0': division by zero"}
    assert result.final_text == "Dividing by zero is undefined."


@pytest.mark.parametrize(
    ("planner_reply", "reason"),
    [
        (reply("not json at all"), "the plan is not valid JSON"),
        (
            reply(
                {"thought": "old schema", "steps": [{"agent": "CalculatorAgent", "method": "calculate", "args": {}}]}
            ),
            "invalid plan: steps[0]: the step uses 'method' ('calculate'); the contract names it 'action'",
        ),
        (reply('```json\n{"steps": []}\n```'), "invalid plan: steps: List should have at least 1 item"),
        (
            reply(
                {
                    "steps": [
                        {"agent": "MainLLMAgent", "action": "generateResponse", "args": {"prompt": "A joke, please"}}
                    ]
                }
            ),
            "invalid plan: steps[0]: the MainLLMAgent step carries its text in 'args.prompt'; the contract (ADR-002)",
        ),
    ],
    ids=["invalid-json", "method-instead-of-action", "empty-steps", "main-llm-prompt-in-args"],
)
def test_case4_a_planning_failure_gives_the_fallback_plan(
    bench: Any, planner_reply: dict[str, Any], reason: str
) -> None:
    b = bench()
    # By default a failed plan is asked for once more, with the fallback planner prompt.
    result = b.run("Tell me a joke", planner_reply, planner_reply, reply("Why did the ledger balance? It had to."))
    assert result.success and (result.fallback_reason or "").startswith(reason)
    assert [r["system"].split("\n")[0] for r in b.requests[:2]] == [
        planner_prompt(b.executor.agents).split("\n")[0],
        fallback_planner_prompt(b.executor.agents).split("\n")[0],
    ]
    assert result.final_text == "Why did the ledger balance? It had to."
    (step,) = result.plan.steps
    query = b.requests[0]["messages"][0]["content"]
    assert (step.agent, step.action, step.args, step.prompt) == ("MainLLMAgent", "generateResponse", {}, query)
    created = next(e for e in result.events if e.type == "plan_created")
    assert created.data["fallback"] is True and created.data["reason"] == result.fallback_reason


def test_case4_a_model_error_while_planning_gives_the_fallback_plan(bench: Any) -> None:
    b = bench()
    result = b.run("Anything", {"error": {"status": 500, "message": "planner down"}})
    assert result.fallback_reason == "the planner's model call failed: planner down"
    # Asked again with the fallback planner prompt, the same conversation (no reply to correct).
    assert b.requests[1]["system"] == fallback_planner_prompt(b.executor.agents)
    assert b.requests[1]["messages"] == b.requests[0]["messages"]
    assert result.plan.steps[0].prompt == b.requests[0]["messages"][0]["content"]
    # The fallback's own call is the same first turn, so the scripted outage hits it too.
    assert not result.success and result.error == "MainLLMAgent's model call failed: planner down"
    assert result.events[-1].type == "error"


def test_a_fenced_plan_is_accepted(bench: Any) -> None:
    b = bench()
    result = b.run("Hi", reply("```json\n" + json.dumps(SIMPLE_PLAN) + "\n```"), reply("Hello!"))
    assert result.success and result.fallback_reason is None


def test_unknown_agent_and_missing_placeholder_are_step_errors_naming_them(bench: Any) -> None:
    b = bench()
    plan = {"steps": [{"agent": "WeatherAgent", "action": "forecast", "args": {}}]}
    result = b.run("Weather?", reply(plan), reply("I can't check the weather."))
    assert "no agent action WeatherAgent.forecast" in (result.fallback_reason or "")
    with pytest.raises(StepError, match=r"refers to \{\{step2_result\}\}, but only 1 earlier step result"):
        interpolate("x {{step2_result}}", ["a"])


def test_events_number_like_the_golden_model(bench: Any) -> None:
    b = bench()
    result = b.run("What is 15 * 3?", reply(CALC_PLAN), reply("45!"))
    invariants.check_event_indexes(result.events)
    invariants.check_persistence_states(result.events)
    invariants.check_sequence_numbers(result.events)
    assert b.executor.store.events("planner") == [e for e in result.events if e.sequence_number is not None]


def test_prompts_use_action_wording_and_the_prompt_field() -> None:
    agents = {"CalculatorAgent": ["calculate"], "MainLLMAgent": ["generateResponse"]}
    for prompt in (planner_prompt(agents), fallback_planner_prompt(agents)):
        assert "- CalculatorAgent: Actions: calculate" in prompt
        assert '"action": "generateResponse"' in prompt and '"method":' not in prompt
        assert 'puts its text in "prompt" and leaves "args" empty' in prompt
    assert '"prompt": "The result of 15 * 3 is {{step1_result}}' in planner_prompt(agents)


def test_plan_models_reject_method_and_name_step_and_field() -> None:
    with pytest.raises(PlanValidationError, match=r"steps\[1\]: the step uses 'method'"):
        parse_plan({"steps": [SIMPLE_PLAN["steps"][0], {"agent": "A", "method": "m"}]})
    with pytest.raises(PlanValidationError, match=r"steps\[0\]\.agent: Field required"):
        parse_plan({"steps": [{"action": "x"}]})
    with pytest.raises(
        PlanValidationError, match=r"steps\[1\]: the MainLLMAgent step carries its text in 'args.prompt'"
    ):
        parse_plan(
            {
                "steps": [
                    SIMPLE_PLAN["steps"][0],
                    {"agent": "MainLLMAgent", "action": "generateResponse", "args": {"prompt": "x"}},
                ]
            }
        )


@pytest.mark.parametrize(
    ("expression", "value"),
    [("15 * 3", 45), ("(2 + 3) ** 2 / 5", 5), ("-7 // 2", -4), ("7 % 4", 3), ("1.5 * 2", 3), ("2 / 4", 0.5)],
)
def test_safe_calculator_computes_arithmetic(expression: str, value: float) -> None:
    assert calculate(expression) == value


@pytest.mark.parametrize(
    "expression",
    ["10 / 0", "1 % 0", "__import__('os')", "x + 1", "(1).real", "2 ** 1000", "[1, 2]", "", "1 +", "9" * 300],
)
def test_safe_calculator_refuses_anything_else(expression: str) -> None:
    with pytest.raises(CalculationError):
        calculate(expression)


def test_a_retry_uses_the_fallback_planner_prompt(bench: Any) -> None:
    b = bench()
    assert b.executor.planner_retries == 1  # seed 004: re-asked by default
    result = b.run("What is 15 * 3?", reply("oops"), reply(CALC_PLAN), reply("45!"))
    assert result.success and result.fallback_reason is None and result.results == ["45", "45!"]
    first, retry = b.requests[0], b.requests[1]
    assert first["system"].startswith("You are a planner.")
    assert retry["system"].startswith("Plan the user's request as JSON.")
    assert retry["messages"][-1]["content"].startswith("That plan could not be used (the plan is not valid JSON")


def test_without_retries_a_failed_plan_goes_straight_to_the_fallback_plan(bench: Any) -> None:
    b = bench()
    b.executor.planner_retries = 0
    result = b.run("Tell me a joke", reply("not json"), reply("A joke."))
    assert result.success and result.final_text == "A joke." and len(b.requests) == 2
    with pytest.raises(ValueError, match=r"planner_retries must be >= 0, got -1"):
        TaskExecutor(b.executor.client, planner_retries=-1)


def test_a_main_llm_step_without_prompt_answers_the_original_query(bench: Any) -> None:
    b = bench()
    plan = {"thought": "t", "steps": [{"agent": "MainLLMAgent", "action": "generateResponse", "args": {}}]}
    result = b.run("What's new?", reply(plan), reply("Nothing much."))
    assert result.success and result.final_text == "Nothing much."
    # The query went again, without its instruction block (it would restart the script).
    assert b.last_user_text() == "What's new?"


# -- rules found untested by mutation testing (docs/mutation.md) -----------------------


def test_each_placeholder_takes_its_own_steps_result() -> None:
    assert interpolate("{{step1_result}} then {{ step2_result }}", ["45", "ninety"]) == "45 then ninety"
    assert interpolate("no placeholder", []) == "no placeholder"


def test_a_model_error_while_planning_and_answering_fails_the_run_with_an_error_event(bench: Any) -> None:
    b = bench()
    result = b.run("Anything", {"error": {"status": 500, "message": "planner down"}})
    assert result.success is False and result.results == [] and result.final_text is None
    assert result.events[-1].data == {"error": "MainLLMAgent's model call failed: planner down"}
    assert result.events[-1].sequence_number is not None  # the error is persisted
    # The re-asked planning call and the fallback's call are the planning call again: the query once, nothing added.
    assert b.requests[1]["messages"] == b.requests[2]["messages"] == b.requests[0]["messages"]


def test_when_the_fallback_after_a_failed_step_fails_too_the_run_fails(bench: Any) -> None:
    b = bench()
    plan = {
        "thought": "divide",
        "steps": [{"agent": "CalculatorAgent", "action": "calculate", "args": {"expression": "10 / 0"}}],
    }
    result = b.run("What is 10 / 0?", reply(plan), {"error": {"status": 500, "message": "model down"}})
    assert result.success is False and result.final_text is None and result.results == []
    assert result.fallback_reason == "step failed: CalculatorAgent could not calculate '10 / 0': division by zero"
    assert result.error == "MainLLMAgent's model call failed: model down"
    assert [s.agent for s in result.plan.steps] == ["MainLLMAgent"]  # the fallback plan
    assert [e.type for e in result.events if e.type != "message_chunk"] == [
        "plan_requested",
        "plan_created",
        "step_start",
        "step_error",
        "plan_created",
        "step_start",
        "step_error",
        "error",
    ]
    fallback = [e for e in result.events if e.type == "plan_created"][1]
    assert fallback.data == {
        "thought": "Planning failed; answer the request directly.",
        "steps": [s.model_dump() for s in result.plan.steps],
        "fallback": True,
        "reason": result.fallback_reason,
    }
    assert result.events[-1].data == {"error": result.error}


def test_the_plan_and_each_step_are_reported_in_their_events(bench: Any) -> None:
    b = bench()
    heard: list[str] = []
    query = InstructionChain.model_validate({"instruction_chain": [reply(CALC_PLAN), reply("45!")]}).tagged("15*3?")
    result = asyncio.run(b.executor.run(query, "s-report", lambda e: heard.append(e.type)))
    assert heard == [e.type for e in result.events]
    data = {e.type: e.data for e in result.events if e.type != "message_chunk"}
    assert data["plan_requested"] == {"query": query}
    steps = [{"prompt": None, **step} for step in CALC_PLAN["steps"]]
    assert data["plan_created"] == {"thought": CALC_PLAN["thought"], "steps": steps, "fallback": False}
    starts = [e.data for e in result.events if e.type == "step_start"]
    assert starts == [
        {"step": 1, "agent": "CalculatorAgent", "action": "calculate"},
        {"step": 2, "agent": "MainLLMAgent", "action": "generateResponse"},
    ]
    assert [e.data for e in result.events if e.type == "step_complete"] == [
        {"step": 1, "result": "45"},
        {"step": 2, "result": "45!"},
    ]
    chunks = [e for e in result.events if e.type == "message_chunk"]  # the answer streams; the plan does not
    assert "".join(c.data["content"] for c in chunks) == "45!" and {c.data["blockIndex"] for c in chunks} == {0}
    assert data["plan_complete"] == {"reason": "success"}


@pytest.mark.parametrize("expression", [None, 42, "   "])
def test_the_calculator_refuses_what_is_not_an_expression(expression: Any) -> None:
    with pytest.raises(CalculationError, match="an expression must be a non-empty string"):
        calculate(expression)


def test_a_whole_quotient_is_an_integer_and_zero_to_the_zero_is_one() -> None:
    assert calculate("10 / 2") == 5 and isinstance(calculate("10 / 2"), int)
    assert calculate("0 ** 0") == 1


def test_the_fallback_answers_a_query_that_looks_like_a_placeholder(bench: Any) -> None:
    b = bench()
    result = b.run(
        "What does {{step1_result}} mean?",
        reply("no plan"),
        reply("no plan"),
        reply("It names the first step's result."),
    )
    assert result.success and result.fallback_reason is not None
    assert result.final_text == "It names the first step's result."  # the query itself, never interpolated


def test_a_store_given_to_the_executor_gets_the_persisted_events() -> None:
    store = SQLiteEventStore()
    http = sdk_http_client("anthropic-messages", MockLLM())
    executor = TaskExecutor(model_client("anthropic-messages", http_client=http), store=store)
    query = InstructionChain.model_validate({"instruction_chain": [reply(SIMPLE_PLAN), reply("Fine.")]}).tagged("Hi")
    result = asyncio.run(executor.run(query, "s-store"))
    executor.close()  # closes only a store it made
    assert store.events("s-store") == [e for e in result.events if e.sequence_number is not None]
    assert [e.type for e in store.events("s-store")] == ["plan_created", "step_complete"]
    store.close()
