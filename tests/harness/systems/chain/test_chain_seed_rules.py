"""Seed 000/001 rules of the chain's run loop that mutation testing found unasserted
(docs/mutation.md, the chain area): how each run ends and what the plan records, step
numbering and resuming, the fields of every event, the planning and routing prompts,
and where routing inserts steps within the step limit."""

from __future__ import annotations

import asyncio
import json

import pytest

from harness.systems.chain import (
    ChainEvent,
    ChainPlan,
    PlanExecutionError,
    Policy,
    PromptConfig,
    SQLitePlanStore,
    StepStatus,
    StepType,
)
from mockllm import InstructionChain
from tests.harness.systems.chain.chain_support import DONE, Bench, answers, llm, query, route, step

NEVER = Policy.model_validate(
    {"name": "never", "rules": [{"patterns": [{"type": "expression", "check": "equals", "value": "-"}]}]}
)
TOOL = {"stepType": "TOOL", "toolName": "describeAllModels"}


def echo(text: str) -> str:
    return text


def failing_first_call(prompt: str) -> str:
    """A plan query whose first model call fails (the provider is busy)."""
    script = {"instruction_chain": [{"error": {"status": 529, "type": "overloaded_error", "message": "busy"}}]}
    return InstructionChain.model_validate(script).tagged(prompt)


# -- how a run ends: the event, and the outcome and error the plan records -------------


def test_each_ending_records_its_outcome_and_reason_in_the_stored_plan() -> None:
    store = SQLitePlanStore()

    def ending(plan: ChainPlan, policies: list[Policy] | None = None) -> tuple[str, str | None, str | None, str | None]:
        b = Bench(store=store, policies=policies)
        done = b.run(plan)
        stored = store.load(done.object_id or "", "default")
        assert stored is not None and (stored.outcome, stored.error) == (done.outcome, done.error)
        return b.kinds()[-1], b.events[-1].error_message, done.outcome, done.error

    assert ending(ChainPlan(steps=[step(1, toolName="describeAllModels")])) == (
        "chainComplete",
        None,
        "completed",
        None,
    )
    stopped = "the chain stopped at 1 steps"
    assert ending(ChainPlan(max_steps=1, steps=[step(i, toolName="describeAllModels") for i in (1, 2)])) == (
        "chainMaxSteps",
        stopped,
        "maxSteps",
        stopped,
    )
    halted = "halted: step 2 was gated by policy 'never'"
    assert ending(
        ChainPlan(
            plan_query=answers("q", "draft"), steps=[llm(1), step(2, stepType="POLICY_GATE", policyName="never")]
        ),
        [NEVER],
    ) == ("chainComplete", halted, "gated", halted)
    # Routing wanted more than the limit leaves room for: the run ends at the limit.
    stopped = "the chain stopped at 2 steps"
    assert ending(ChainPlan(max_steps=2, plan_query=query("q", "a", route(TOOL, TOOL)), steps=[llm(1)])) == (
        "chainMaxSteps",
        stopped,
        "maxSteps",
        stopped,
    )


def test_a_failed_step_records_failed_and_the_steps_error() -> None:
    b = Bench(store=SQLitePlanStore())
    with pytest.raises(PlanExecutionError) as caught:
        b.run(ChainPlan(steps=[step(1, toolName="describeAllModels"), step(2, toolName="nope")]))
    failed = caught.value.plan
    assert failed is not None and (failed.outcome, failed.error) == ("failed", str(caught.value))
    assert str(caught.value).startswith("step 2: unknown tool 'nope'")
    assert b.store.load(failed.object_id, "default").outcome == "failed"


def test_a_model_error_while_planning_fails_the_run_and_says_why() -> None:
    b = Bench(store=SQLitePlanStore())
    with pytest.raises(PlanExecutionError) as caught:
        b.run(ChainPlan(plan_query=failing_first_call("Plan something")))
    message = "planning: the model call failed: busy"
    assert str(caught.value) == message
    assert [(e.event_type, e.error_message) for e in b.events] == [("stepError", message)]
    failed = caught.value.plan
    assert failed is not None and (failed.outcome, failed.error) == ("failed", message)
    assert b.store.load(failed.object_id, "default").outcome == "failed"


def test_an_unusable_plan_records_failed_with_the_planning_error() -> None:
    b = Bench(store=SQLitePlanStore())
    with pytest.raises(PlanExecutionError) as caught:
        b.run(ChainPlan(plan_query=query("q", "no plan here")))
    failed = caught.value.plan
    assert failed is not None and failed.outcome == "failed"
    assert failed.error == str(caught.value) == b.events[-1].error_message
    assert failed.error.startswith("planning failed: no JSON object in the planning reply")


def test_a_cancelled_run_records_cancelled_and_says_so() -> None:
    b = Bench(store=SQLitePlanStore())
    cancel = asyncio.Event()

    def stop_after_first(event: ChainEvent) -> None:
        if event.event_type == "stepComplete":
            cancel.set()

    plan = ChainPlan(object_id="cancelled", steps=[step(i, toolName="describeAllModels") for i in (1, 2)])
    done = asyncio.run(b.executor.execute_chain(plan, cancel=cancel, listeners=[stop_after_first]))
    assert (done.outcome, done.error) == ("cancelled", "the chain was cancelled")
    assert (b.events[-1].event_type, b.events[-1].error_message) == ("chainCancelled", "the chain was cancelled")
    assert b.store.load("cancelled", "default").outcome == "cancelled"


def test_while_a_step_runs_the_stored_plan_says_running_and_names_the_step() -> None:
    """What the status door (GET /chat/chain/status/{planId}) reads while a chain runs."""
    store = SQLitePlanStore()

    def peek() -> str:
        now = store.load("live", "default")
        assert now is not None
        return f"{now.outcome}: " + ", ".join(s.step_status.value for s in now.steps)

    b = Bench(store=store)
    b.executor.tools["peek"] = peek
    done = b.run(ChainPlan(object_id="live", steps=[step(1, toolName="describeAllModels"), step(2, toolName="peek")]))
    assert done.output == "running: COMPLETED, EXECUTING"
    assert (done.outcome, store.load("live", "default").outcome) == ("completed", "completed")


# -- step order and numbering ---------------------------------------------------------


def test_steps_run_in_number_order_and_keep_their_numbers() -> None:
    b = Bench()
    b.executor.tools["echo"] = echo
    done = b.run(ChainPlan(steps=[step(n, toolName="echo", inputs={"text": f"s{n}"}) for n in (5, 1, 3)]))
    assert [(s.step_number, s.output) for s in done.steps] == [(1, "s1"), (3, "s3"), (5, "s5")]
    assert [e.step_number for e in b.events if e.event_type == "stepStart"] == [1, 3, 5]


@pytest.mark.parametrize("numbers", [(0, 0, 0), (2, 2, 7), (0, 4, 9)], ids=["unnumbered", "repeated", "below-one"])
def test_steps_written_without_usable_numbers_run_as_written_numbered_from_one(numbers: tuple[int, ...]) -> None:
    b = Bench()
    b.executor.tools["echo"] = echo
    done = b.run(
        ChainPlan(steps=[step(n, toolName="echo", inputs={"text": f"s{i}"}) for i, n in enumerate(numbers, start=1)])
    )
    assert [(s.step_number, s.output) for s in done.steps] == [(1, "s1"), (2, "s2"), (3, "s3")]
    assert [e.step_number for e in b.events if e.event_type == "stepComplete"] == [1, 2, 3]


def test_a_resumed_plan_runs_every_step_not_completed_yet() -> None:
    b = Bench()
    b.executor.tools["echo"] = echo
    done = b.run(
        ChainPlan(
            steps=[
                step(1, toolName="echo", inputs={"text": "before"}, stepStatus="COMPLETED", output="before"),
                step(2, toolName="echo", inputs={"text": "second"}),
                step(3, toolName="echo", inputs={"text": "third"}),
            ]
        )
    )
    assert [(s.step_status, s.output) for s in done.steps] == [
        (StepStatus.COMPLETED, "before"),
        (StepStatus.COMPLETED, "second"),
        (StepStatus.COMPLETED, "third"),
    ]
    assert done.total_executed_steps == 2
    assert [e.step_number for e in b.events if e.event_type == "stepStart"] == [2, 3]


def test_steps_the_model_plans_are_numbered_from_one() -> None:
    planned = json.dumps({"steps": [dict(TOOL, stepNumber=7), dict(TOOL, stepNumber=3)]})
    done = Bench().run(ChainPlan(plan_query=query("q", planned)))
    assert [(s.step_number, s.step_status) for s in done.steps] == [
        (1, StepStatus.COMPLETED),
        (2, StepStatus.COMPLETED),
    ]


# -- the fields of the events ---------------------------------------------------------


def test_step_events_name_the_plan_the_tool_the_summary_and_a_preview() -> None:
    b = Bench()
    b.executor.tools["echo"] = echo
    b.run(ChainPlan(name="my-plan", steps=[step(1, toolName="echo", inputs={"text": "hello"})]))
    start, complete, end = b.events
    assert {e.plan_name for e in b.events} == {"my-plan"}
    assert (start.event_type, start.tool_name, start.step_status, start.step_summary) == (
        "stepStart",
        "echo",
        StepStatus.EXECUTING,
        None,
    )
    assert (
        complete.event_type,
        complete.tool_name,
        complete.step_status,
        complete.step_summary,
        complete.output_preview,
    ) == ("stepComplete", "echo", StepStatus.COMPLETED, "echo returned hello", "hello")
    assert end.event_type == "chainComplete"


def test_an_llm_steps_summary_is_its_answer() -> None:
    b = Bench()
    done = b.run(ChainPlan(plan_query=answers("q", "Four."), steps=[llm(1, "2+2?")]))
    assert done.steps[0].summary_text == "Four."
    complete = next(e for e in b.events if e.event_type == "stepComplete")
    assert (complete.step_summary, complete.output_preview, complete.step_type) == ("Four.", "Four.", StepType.LLM)


@pytest.mark.parametrize(
    ("output", "preview"),
    [
        ("x" * 100, "x" * 100),
        ("y" * 101, "y" * 99 + "…"),
        (["a", "b"], "['a', 'b']"),
    ],
    ids=["100-characters-whole", "101-characters-cut", "not-text"],
)
def test_the_output_preview_is_at_most_100_characters(output: object, preview: str) -> None:
    b = Bench()
    b.executor.tools["give"] = lambda: output
    b.run(ChainPlan(steps=[step(1, toolName="give")]))
    complete = next(e for e in b.events if e.event_type == "stepComplete")
    assert complete.output_preview == preview
    assert complete.step_summary == f"give returned {preview}"


def test_a_gated_step_is_reported_complete_with_its_fields_and_preview() -> None:
    b = Bench(policies=[NEVER])
    b.run(
        ChainPlan(
            plan_query=answers("q", "draft text"), steps=[llm(1), step(2, stepType="POLICY_GATE", policyName="never")]
        )
    )
    gated = [e for e in b.events if e.event_type == "stepComplete"][-1]
    assert (gated.step_number, gated.step_type, gated.step_status, gated.output_preview) == (
        2,
        StepType.POLICY_GATE,
        StepStatus.GATED,
        "draft text",
    )
    assert gated.step_summary is not None and gated.step_summary.startswith("DENY by policy never")


def test_a_planned_plan_is_announced_as_steps_inserted_before_step_one() -> None:
    planned = json.dumps({"steps": [TOOL, TOOL]})
    b = Bench()
    b.run(ChainPlan(plan_query=query("q", planned)))
    first = b.events[0]
    assert (first.event_type, first.step_number, first.step_summary, first.total_steps) == (
        "stepsInserted",
        0,
        "2 step(s) planned for the query",
        2,
    )


def test_routing_events_name_the_llm_step_they_follow() -> None:
    b = Bench()
    b.run(ChainPlan(plan_query=query("q", "a", route(TOOL)), steps=[llm(1)]))
    inserted = next(e for e in b.events if e.event_type == "stepsInserted")
    assert (inserted.step_number, inserted.step_type, inserted.step_summary) == (
        1,
        StepType.LLM,
        "1 step(s) inserted after step 1: more to do",
    )
    b = Bench()
    b.run(ChainPlan(plan_query=query("q", "a", "{not json"), steps=[llm(1)]))
    error = next(e for e in b.events if e.event_type == "routingError")
    assert (error.step_number, error.step_type) == (1, StepType.LLM)


# -- what the model is asked ----------------------------------------------------------


def test_the_planning_prompt_names_the_step_limit_tools_prompt_configs_and_policies() -> None:
    b = Bench(policies=[NEVER])
    b.run(ChainPlan(max_steps=5, plan_query=query("q", json.dumps({"steps": [TOOL]}))))
    prompt = b.prompts()[0]
    assert "at most 5." in prompt
    assert "toolName (one of: describeAllModels, findPersons, newQueryField)" in prompt
    assert "promptConfigName (one of: brief, casual, formal)" in prompt
    assert "policyName (one of: never)" in prompt


def test_a_planning_prompt_with_nothing_to_offer_says_none() -> None:
    b = Bench()
    b.executor.tools.clear()
    b.executor.prompt_configs.clear()
    b.run(
        ChainPlan(
            plan_query=query(
                "q", json.dumps({"steps": [{"stepType": "LLM", "inputs": {"prompt": "hi"}}]}), "hello", DONE
            )
        )
    )
    prompt = b.prompts()[0]
    assert "toolName (one of: none)" in prompt and "promptConfigName (one of: none)" in prompt
    assert "policyName (one of: none)" in prompt and "data sources named for this query: none named" in prompt


def test_the_routing_prompt_gives_the_query_the_steps_output_and_the_context_names() -> None:
    b = Bench()
    b.run(
        ChainPlan(
            plan_query=answers("Find the bakers", "Cy bakes."),
            steps=[
                step(1, toolName="describeAllModels", outputName="models"),
                llm(2, "Who bakes?", outputName="answer"),
            ],
        )
    )
    routing = b.prompts()[1].splitlines()
    assert routing[:4] == [
        "Decide what the chain should do next.",
        "Plan query: Find the bakers",
        "Output of step 2: Cy bakes.",
        "Context available: answer, models",
    ]
    b = Bench()
    b.run(ChainPlan(plan_query=answers("q", "x"), steps=[llm(1)]))
    assert "Context available: none" in b.prompts()[1].splitlines()


def test_a_prompt_configs_token_limit_goes_to_the_model() -> None:
    b = Bench()
    b.executor.prompt_configs["short"] = PromptConfig("Be short.", max_tokens=77)
    b.run(ChainPlan(plan_query=answers("q", "ok"), steps=[llm(1, promptConfigName="short")]))
    assert [body["max_tokens"] for body in b.bodies] == [77, 1024]  # the step, then its routing call
    assert b.bodies[0]["system"] == "Be short."


# -- routing: what is inserted, and where ---------------------------------------------


def test_a_routing_answer_that_is_complete_inserts_nothing_even_with_next_steps() -> None:
    b = Bench()
    complete = json.dumps({"complete": True, "reason": "enough", "nextSteps": [TOOL]})
    done = b.run(ChainPlan(plan_query=query("q", "a", complete), steps=[llm(1)]))
    assert len(done.steps) == 1 and "stepsInserted" not in b.kinds()
    assert (b.kinds()[-1], done.outcome) == ("chainComplete", "completed")


def test_steps_that_exactly_fill_the_room_left_complete_the_chain() -> None:
    b = Bench()
    done = b.run(ChainPlan(max_steps=3, plan_query=query("q", "a", route(TOOL, TOOL)), steps=[llm(1)]))
    assert [s.step_status for s in done.steps] == [StepStatus.COMPLETED] * 3
    assert (b.kinds()[-1], done.outcome) == ("chainComplete", "completed")


def test_the_room_for_inserted_steps_counts_the_steps_still_pending() -> None:
    b = Bench()
    done = b.run(
        ChainPlan(
            max_steps=4,
            plan_query=query("q", "a", route(dict(TOOL, description="new"), TOOL)),
            steps=[llm(1), step(2, toolName="describeAllModels"), step(3, toolName="describeAllModels")],
        )
    )
    assert [(s.step_number, s.dynamic, s.description) for s in done.steps] == [
        (1, False, ""),
        (2, True, "new"),
        (3, False, ""),
        (4, False, ""),
    ]
    inserted = next(e for e in b.events if e.event_type == "stepsInserted")
    assert inserted.step_summary == "1 step(s) inserted after step 1: more to do"
    assert (b.kinds()[-1], done.outcome, done.total_executed_steps) == ("chainMaxSteps", "maxSteps", 4)


def test_a_planned_plan_keeps_at_most_the_absolute_ceiling_of_steps() -> None:
    b = Bench()
    planned = json.dumps({"steps": [TOOL] * 55})
    done = b.run(ChainPlan(max_steps=100, plan_query=query("q", planned)))
    assert len(done.steps) == 50 and done.total_executed_steps == 50
    assert b.events[0].step_summary == "50 step(s) planned for the query"


@pytest.mark.parametrize(
    "reply",
    [
        'Here is my decision: {"complete": false, "reason": "more", "nextSteps": [{"toolName": "describeAllModels"}]}. Done.',
        '```json\n{"complete": false, "nextSteps": [{"toolName": "describeAllModels"}]}\n```',
    ],
    ids=["in-prose", "in-a-fence"],
)
def test_a_routing_answer_wrapped_in_prose_or_a_fence_is_read(reply: str) -> None:
    done = Bench().run(ChainPlan(plan_query=query("q", "a", reply), steps=[llm(1)]))
    assert [(s.step_type, s.dynamic) for s in done.steps] == [(StepType.LLM, False), (StepType.TOOL, True)]


def test_a_routing_answer_without_complete_is_taken_as_complete() -> None:
    b = Bench()
    done = b.run(ChainPlan(plan_query=query("q", "a", json.dumps({"nextSteps": [TOOL]})), steps=[llm(1)]))
    assert len(done.steps) == 1 and "stepsInserted" not in b.kinds()


def test_a_corrupt_saved_context_fails_with_the_plan_it_came_with() -> None:
    with pytest.raises(
        PlanExecutionError, match="plan 'broken': chainContextJson holds no <mcp:context> block"
    ) as caught:
        Bench().run(
            ChainPlan(name="broken", context_blocks="not blocks", steps=[step(1, toolName="describeAllModels")])
        )
    assert caught.value.plan is not None and caught.value.plan.name == "broken"


def test_a_run_cancelled_while_it_is_planned_ends_cancelled() -> None:
    slow_plan = InstructionChain.model_validate(
        {
            "instruction_chain": [
                {
                    "messages": [{"text_message": {"text": json.dumps({"steps": [TOOL]})}}],
                    "timing": {"first_chunk_ms": 5000},
                }
            ]
        }
    ).tagged("q")
    b = Bench(store=SQLitePlanStore())

    async def cancelled_while_planning() -> ChainPlan:
        cancel, planning = asyncio.Event(), asyncio.Event()
        b.on_request = planning.set
        run = asyncio.ensure_future(
            b.executor.execute_chain(ChainPlan(object_id="early", plan_query=slow_plan), cancel=cancel)
        )
        await asyncio.wait_for(planning.wait(), 15)  # the planning reply then takes 5 s to start
        cancel.set()
        return await run

    done = asyncio.run(cancelled_while_planning())
    assert (done.outcome, done.steps, b.kinds()) == ("cancelled", [], ["chainCancelled"])
    assert b.store.load("early", "default").outcome == "cancelled"


def test_a_run_cancelled_before_it_starts_ends_cancelled_without_asking_the_model() -> None:
    b = Bench(store=SQLitePlanStore())
    cancel = asyncio.Event()
    cancel.set()
    done = asyncio.run(
        b.executor.execute_chain(ChainPlan(object_id="never", plan_query=query("q", "a")), cancel=cancel)
    )
    assert (done.outcome, done.steps, b.kinds()) == ("cancelled", [], ["chainCancelled"])
    assert b.bodies == []  # the planning call was never made
